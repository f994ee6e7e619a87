"""Live rows while a run works: the phase, and one row per tool call in flight.

It takes no space when idle. Rows come from tool events: a concurrent call is "queued"
until it gets a slot (`tool_running`), and leaves the panel when it settles. While the
model server sends nothing (`server_waiting`), the phase says so and counts the seconds,
so a stuck server is never mistaken for a slow answer.

While an approval question is open the phase is "waiting for your answer", without a
spinner or a count, and so is the row of the call it asks about: nothing runs there.
The call's time counts from `tool_running`, once the answer let it through; other calls
that really run keep their spinners.

A `task` call's row is its sub-agent's while that runs (`AgentActivity` folds its
events): its description, what it does now (its tool, "thinking", "writing", or
waiting for an answer to its question), its time and tokens, and two clickable parts,
"■ stop" and "✎ steer", which post `StopAgentRequested` / `SteerAgentRequested` (the
app carries them out). The row goes when the sub-agent ends. A sub-agent's own tool
calls are not rows of the panel: they are its task row's, in the transcript.

The panel paints ten times a second while a run works (its spinners turn), so it draws
itself: each row is a Rich line cut to the width and kept as a strip, and a paint marks
only the rows whose text changed; the border and the other rows stay as drawn. Drawn as
a `Static` (the text through Textual's content layer, every row and the border again at
each paint), the panel cost as much a frame as the transcript's new text (figure 10).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from ink_tui.control.agent_activity import AgentActivity, AgentState
from ink_tui.control.bus import EventBus
from ink_tui.core.events import (
    ApprovalRequest,
    ApprovalResolved,
    CompactionEnd,
    CompactionStart,
    Event,
    Notice,
    RunEnd,
    RunStart,
    ServerWaiting,
    SubagentEnd,
    SubagentStart,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
    TurnStart,
)
from ink_tui.core.tool_summary import call_label
from ink_tui.ui import clock
from ink_tui.ui.agent_requests import SteerAgentRequested, StopAgentRequested
from ink_tui.ui.fit_text import Part, fit_parts
from ink_tui.ui.frame_beat import BeatTicker, FrameBeat

WAITING_FOR_ANSWER = "waiting for your answer"
STOP_LABEL = "■ stop"
STEER_LABEL = "✎ steer"


@dataclass(slots=True)
class _Row:
    label: str
    queued: bool
    started: float
    # An approval question about this call is open.
    asking: bool = False


class ActivityPanel(Widget):
    DEFAULT_CSS = """
    ActivityPanel {
        width: 1fr;
        height: auto;
        max-height: 8;
        padding: 0 1;
        display: none;
        color: $text-muted;
        border-top: hkey $panel;
    }
    ActivityPanel.-active {
        display: block;
    }
    /* A short terminal (ui/compact_layout.py): the phase on one line, with a count. */
    ActivityPanel.-compact {
        max-height: 1;
        border-top: none;
    }
    """
    MAX_ROWS = 8
    TICK_S = 0.1

    def __init__(self, bus: EventBus, beat: FrameBeat | None = None) -> None:
        super().__init__()
        self._bus = bus
        # Ten paints a second while a run works, in the transcript's frames while it draws.
        self._ticker = BeatTicker(beat or FrameBeat(), self.TICK_S, self._tick)
        self.phase = ""
        self.phase_started = 0.0
        self.retry_until: float | None = None
        # When the server's current silence began, and the silence it gives up at.
        self.waiting_since: float | None = None
        self.waiting_limit = 0.0
        self.rows: dict[str, _Row] = {}
        # Open approval questions: request id -> the call it asks about.
        self.asking: dict[str, str] = {}
        # The sub-agents running now (ended ones are forgotten at once), when each
        # started on this clock, and their open questions (request id -> agent id).
        self.agents = AgentActivity()
        self._agent_started: dict[str, float] = {}
        self._agent_asking: dict[str, str] = {}
        # Task calls whose sub-agent has ended: their rows go before the call settles.
        self._ended_calls: set[str] = set()
        # Lines last painted: only a change in their number moves the widgets below.
        self._painted_lines = -1
        # What is shown, a Rich line a row, and the rows drawn from it (by row) for
        # `_drawn_for` (the width and the base style).
        self._text = Text()
        self._rows: list[Text] = []
        self._drawn: dict[int, Strip] = {}
        self._drawn_for: tuple[int, Style] | None = None
        self._paint_pending = False
        self._unsubscribe = lambda: None

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self._ticker.start(self)

    def on_unmount(self) -> None:
        self._unsubscribe()
        self._ticker.stop()

    def _set_phase(self, phase: str) -> None:
        if phase != self.phase:
            self.phase = phase
            self.phase_started = clock.now()
            self.retry_until = None
        self.waiting_since = None

    def _on_event(self, event: Event) -> None:
        if event.agent_id is not None:
            self._on_agent_event(event.agent_id, event)
            return
        if isinstance(event, RunStart | RunEnd):
            self._forget_agents()
        if isinstance(event, RunStart):
            self.rows.clear()
            self.asking.clear()
            self._set_phase("running the shell command" if event.kind == "shell" else "starting")
            self.add_class("-active")
            self._ticker.resume()
        elif isinstance(event, RunEnd):
            self.rows.clear()
            self.asking.clear()
            self.phase = ""
            self.remove_class("-active")
            self._ticker.pause()
        elif isinstance(event, TurnStart):
            self._set_phase("waiting for the model")
        elif isinstance(event, CompactionStart):
            self._set_phase("compacting the conversation…")
        elif isinstance(event, CompactionEnd):
            self._set_phase("waiting for the model" if event.done else self.phase)
        elif isinstance(event, ThinkingDelta | TextDelta):
            # Deltas come by the thousand: repaint only when the phase changes; the
            # ticker keeps the elapsed time moving.
            phase = "thinking" if isinstance(event, ThinkingDelta) else "streaming the answer"
            if phase == self.phase and self.waiting_since is None:
                return
            self._set_phase(phase)
        elif isinstance(event, ToolStart):
            self._set_phase("running tools")
            self.rows[event.call.id] = _Row(call_label(event.call), event.concurrent, clock.now())
        elif isinstance(event, ToolRunning):
            row = self.rows.get(event.call_id)
            if row is not None:
                row.queued = row.asking = False
                row.started = clock.now()
        elif isinstance(event, ApprovalRequest):
            self.asking[event.request_id] = event.call.id
            row = self.rows.get(event.call.id)
            if row is not None:
                row.asking = True
        elif isinstance(event, ApprovalResolved):
            call_id = self.asking.pop(event.request_id, None)
            row = self.rows.get(call_id) if call_id is not None else None
            if row is not None:
                row.asking = False
                row.started = clock.now()
            if not self.asking and self.phase == "running tools":
                # The tools' time counts from the answer, not from the question.
                self.phase_started = clock.now()
        elif isinstance(event, ToolSettled | ToolEnd):
            call_id = event.call_id if isinstance(event, ToolSettled) else event.call.id
            self.rows.pop(call_id, None)
            self._ended_calls.discard(call_id)
        elif isinstance(event, ServerWaiting):
            if event.over:
                self.waiting_since = None
            elif self.waiting_since is None:
                # Later reports of the same silence change nothing the ticker does not.
                self.waiting_since = clock.now() - event.seconds
                self.waiting_limit = event.limit_s
            else:
                return
        elif isinstance(event, Notice) and event.kind == "retry":
            self._set_phase("retrying")
            self.retry_until = clock.now() + float(event.data.get("delay", 0))
        else:
            return
        self._paint_soon()

    def _on_agent_event(self, agent_id: str, event: Event) -> None:
        """A sub-agent's event: its row's state. Only its start, end and questions
        repaint at once; the ticker shows the rest (deltas come by the thousand)."""
        self.agents(event)
        if isinstance(event, SubagentStart):
            self._agent_started[agent_id] = clock.now()
        elif isinstance(event, ApprovalRequest):
            self._agent_asking[event.request_id] = agent_id
        elif isinstance(event, ApprovalResolved):
            self._agent_asking.pop(event.request_id, None)
        elif isinstance(event, SubagentEnd):
            if event.parent_call_id in self.rows:
                self._ended_calls.add(event.parent_call_id)
            self.agents.forget(agent_id)
            self._agent_started.pop(agent_id, None)
            for request_id, asker in list(self._agent_asking.items()):
                if asker == agent_id:
                    del self._agent_asking[request_id]
        else:
            return
        self._paint_soon()

    def _forget_agents(self) -> None:
        self.agents = AgentActivity()
        self._agent_started.clear()
        self._agent_asking.clear()
        self._ended_calls.clear()

    def entries(self) -> list[_Row | AgentState]:
        """What the rows under the phase show, in order: each call in flight, a task
        call as its running sub-agent (and those under it, after it)."""
        entries: list[_Row | AgentState] = []
        placed: set[str] = set()
        for call_id, row in self.rows.items():
            if call_id in self._ended_calls:
                continue
            agent = self.agents.by_call.get(call_id)
            if agent is None:
                entries.append(row)
            else:
                self._add_agent(entries, agent, placed)
        # Those whose task row is not here (the panel came after their call).
        for agent in self.agents.running:
            if agent.agent_id not in placed and agent.parent_agent_id not in self.agents.agents:
                self._add_agent(entries, agent, placed)
        return entries

    def _add_agent(
        self, entries: list[_Row | AgentState], agent: AgentState, placed: set[str]
    ) -> None:
        entries.append(agent)
        placed.add(agent.agent_id)
        for child in self.agents.running:
            if child.parent_agent_id == agent.agent_id and child.agent_id not in placed:
                self._add_agent(entries, child, placed)

    @property
    def full_rows(self) -> int:
        """Rows the panel takes in full: its border, the phase and a row per call."""
        return min(self.MAX_ROWS, 2 + len(self.entries())) if self.phase else 0

    # -- what a sub-agent's row's parts do (their "@click" actions) --------------------

    def action_stop_agent(self, agent_id: str) -> None:
        self.post_message(StopAgentRequested(agent_id, self._description(agent_id)))

    def action_steer_agent(self, agent_id: str) -> None:
        self.post_message(SteerAgentRequested(agent_id, self._description(agent_id)))

    def _description(self, agent_id: str) -> str:
        agent = self.agents.agents.get(agent_id)
        return agent.description if agent is not None else agent_id

    def set_compact(self, compact: bool) -> None:
        if compact != self.has_class("-compact"):
            self.set_class(compact, "-compact")
            self._paint()

    def _tick(self) -> None:
        # While only a question waits nothing on the panel moves: no need to draw it.
        if self.asking and all(row.asking or row.queued for row in self.rows.values()):
            return
        self._paint()

    def _paint_soon(self) -> None:
        """Paint once for every event that came in one go: a tree of sub-agents ending
        on Ctrl+C sends dozens at once, and a paint (with a layout when the rows change)
        each held up the stopping of their commands."""
        if not self._paint_pending:
            self._paint_pending = True
            self.call_later(self._paint_pending_now)

    def _paint_pending_now(self) -> None:
        if self._paint_pending:
            self._paint()

    def _paint(self) -> None:
        self._paint_pending = False
        if not self.phase:
            self._show("", 0)
            return
        now = clock.now()
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.asking:
            # Nothing runs while the user decides: no spinner, no count.
            text.append(f"? {WAITING_FOR_ANSWER}", style="bold yellow")
        else:
            text.append(clock.spinner(self.phase_started) + " ", style="bold cyan")
            if self.retry_until is not None:
                left = max(0.0, self.retry_until - now)
                text.append(f"retrying in {left:.0f} s", style="yellow")
            elif self.waiting_since is not None:
                waited = now - self.waiting_since
                text.append(f"waiting for the server ({waited:.0f} s)", style="yellow")
                text.append(f" · gives up at {self.waiting_limit:.0f} s", style="dim")
            else:
                text.append(self.phase)
                text.append(f" {clock.format_elapsed(now - self.phase_started)}", style="dim")
        entries = self.entries()
        if self.has_class("-compact"):
            agents = sum(isinstance(entry, AgentState) for entry in entries)
            calls = len(entries) - agents
            if calls:
                text.append(f" · {calls} call{'s' if calls != 1 else ''}", style="dim")
            if agents:
                running = f"{agents} sub-agent{'s' if agents != 1 else ''} running"
                text.append(f" · {running}", style="dim")
            self._show(text, 1)
            return
        room = self.MAX_ROWS - 2
        shown = entries if len(entries) <= room else entries[: room - 1]
        width = self.content_size.width or max(20, self.app.size.width - 2)
        for entry in shown:
            text.append("\n")
            if isinstance(entry, AgentState):
                text.append_text(self._agent_line(entry, now, width))
                continue
            row = entry
            if row.asking:
                text.append("  ? ", style="yellow")
                text.append(row.label)
                text.append(f"  {WAITING_FOR_ANSWER}", style="yellow")
            elif row.queued:
                text.append("  ◌ ", style="dim")
                text.append(row.label, style="dim")
                text.append("  queued", style="dim italic")
            else:
                text.append(f"  {clock.spinner(row.started)} ", style="cyan")
                text.append(row.label)
                text.append(f"  {clock.format_elapsed(now - row.started)}", style="dim")
        if len(shown) < len(entries):
            text.append(f"\n  … {len(entries) - len(shown)} more", style="dim")
        self._show(text, 1 + min(len(entries), room))

    def _agent_line(self, agent: AgentState, now: float, width: int) -> Text:
        """`  ⠋ scan the tests · bash pytest -q · 12s · 3.4k tokens  ■ stop  ✎ steer`:
        the parts before the two controls give way first (tokens, then what it does),
        so the controls always show."""
        started = self._agent_started.get(agent.agent_id, now)
        asking = agent.agent_id in self._agent_asking.values()
        line = Text("  " * agent.depth)
        if asking:
            line.append("? ", style="yellow")
        else:
            line.append(f"{clock.spinner(started)} ", style="magenta")
        doing = Text(WAITING_FOR_ANSWER, style="yellow") if asking else Text(agent.doing)
        tokens = f"{agent.tokens / 1000:.1f}k" if agent.tokens >= 1000 else str(agent.tokens)
        parts = [
            Part(Text(" ".join(agent.description.split()), style="bold"), 3),
            Part(doing, 1),
            Part(Text(clock.format_elapsed(now - started), style="dim"), 2),
            Part(Text(f"{tokens} tokens", style="dim"), 0),
        ]
        controls = Text("  ")
        for label, action in ((STOP_LABEL, "stop_agent"), (STEER_LABEL, "steer_agent")):
            click = {"@click": f"{action}({agent.agent_id!r})"}
            controls.append(label, style=Style(bold=True, meta=click))
            controls.append("  ")
        controls.rstrip()
        room = max(1, width - line.cell_len - controls.cell_len)
        line.append_text(fit_parts(parts, room, separator=" · "))
        line.append_text(controls)
        return line

    @property
    def content(self) -> Text:
        """What the panel shows, as one Rich text (a line a row)."""
        return self._text

    def render(self) -> Text:
        return self._text

    def _show(self, content: Text | str, lines: int) -> None:
        text = Text(content) if isinstance(content, str) else content
        rows = list(text.split("\n", allow_blank=True)) if lines else []
        self._text = text
        if lines != self._painted_lines:
            # The widgets below move: a layout of the screen, every row drawn again.
            self._rows, self._drawn = rows, {}
            self._painted_lines = lines
            self.refresh(layout=True)
            return
        width = self.size.width
        for y, row in enumerate(rows):
            if y >= len(self._rows) or row != self._rows[y]:
                self._drawn.pop(y, None)
                self.refresh(Region(0, y, width, 1))  # (in the content's coordinates)
        self._rows = rows

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.visual_style.rich_style
        if self._drawn_for != (width, base):
            self._drawn, self._drawn_for = {}, (width, base)
        strip = self._drawn.get(y)
        if strip is None:
            row = self._rows[y].copy() if y < len(self._rows) else Text()
            row.truncate(width, overflow="ellipsis")
            link = self.link_style
            # Clickable parts in the link style, as Textual draws them in any widget.
            segments = [
                Segment(text, style + link)
                if style is not None and style.link_id and "@click" in style.meta
                else Segment(text, style)
                for text, style, _ in row.render(self.app.console)
            ]
            strip = Strip(segments).apply_style(base)
            # The rest of the row blank, in the background only (as Textual pads it).
            strip = strip.extend_cell_length(width, Style(bgcolor=base.bgcolor))
            self._drawn[y] = strip
        return strip
