"""Live rows while a run works: the phase, and one row per tool call in flight.

It takes no space when idle. Rows come from tool events: a concurrent call is "queued"
until it gets a slot (`tool_running`), and leaves the panel when it settles. While the
model server sends nothing (`server_waiting`), the phase says so and counts the seconds,
so a stuck server is never mistaken for a slow answer.

While an approval question is open the phase is "waiting for your answer", without a
spinner or a count, and so is the row of the call it asks about: nothing runs there.
The call's time counts from `tool_running`, once the answer let it through; other calls
that really run keep their spinners.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

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

WAITING_FOR_ANSWER = "waiting for your answer"


@dataclass(slots=True)
class _Row:
    label: str
    queued: bool
    started: float
    # An approval question about this call is open.
    asking: bool = False


class ActivityPanel(Static):
    DEFAULT_CSS = """
    ActivityPanel {
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

    def __init__(self, bus: EventBus) -> None:
        super().__init__()
        self._bus = bus
        self.phase = ""
        self.phase_started = 0.0
        self.retry_until: float | None = None
        # When the server's current silence began, and the silence it gives up at.
        self.waiting_since: float | None = None
        self.waiting_limit = 0.0
        self.rows: dict[str, _Row] = {}
        # Open approval questions: request id -> the call it asks about.
        self.asking: dict[str, str] = {}
        # Lines last painted: only a change in their number moves the widgets below.
        self._painted_lines = -1
        self._unsubscribe = lambda: None

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self._ticker = self.set_interval(0.1, self._tick, pause=True)

    def on_unmount(self) -> None:
        self._unsubscribe()

    def _set_phase(self, phase: str) -> None:
        if phase != self.phase:
            self.phase = phase
            self.phase_started = clock.now()
            self.retry_until = None
        self.waiting_since = None

    def _on_event(self, event: Event) -> None:
        if event.agent_id is not None:
            return  # a sub-agent's tools are its task's, not rows of the parent's run
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
        self._paint()

    @property
    def full_rows(self) -> int:
        """Rows the panel takes in full: its border, the phase and a row per call."""
        return min(self.MAX_ROWS, 2 + len(self.rows)) if self.phase else 0

    def set_compact(self, compact: bool) -> None:
        if compact != self.has_class("-compact"):
            self.set_class(compact, "-compact")
            self._paint()

    def _tick(self) -> None:
        # While only a question waits nothing on the panel moves: no need to draw it.
        if self.asking and all(row.asking or row.queued for row in self.rows.values()):
            return
        self._paint()

    def _paint(self) -> None:
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
        if self.has_class("-compact"):
            if self.rows:
                count = len(self.rows)
                text.append(f" · {count} call{'s' if count != 1 else ''}", style="dim")
            self._show(text, 1)
            return
        for row in self.rows.values():
            text.append("\n")
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
        self._show(text, 1 + len(self.rows))

    def _show(self, content: Text | str, lines: int) -> None:
        # The ticker repaints ten times a second while a model streams; a layout of the
        # whole screen each time would redraw every widget, and keys wait behind that.
        self.update(content, layout=lines != self._painted_lines)
        self._painted_lines = lines
