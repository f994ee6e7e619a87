"""A `task` call's row: the sub-agent it started, live, and its whole transcript as a fold.

The state line reads `⠹ Find the config loader  bash rg config · 12s · 3.4k tokens`
while the sub-agent runs: what it does now (its tool, "thinking", "writing"), its time
and the tokens of its replies so far, with a spinner only then. It ends as one of
`✓ completed`, `■ stopped by the user`, `✗ failed`, `✗ interrupted`, `! round limit`.
While it runs the line ends in two chips, `■ stop` and `✎ steer` (a click on one asks
the app, `transcript_tasks.py`); with the transcript's cursor on the row it also names
their keys, `x stop · s steer`.

Folded, the row is that one line (and the result's first line once ended). Unfolded,
the sub-agent's own blocks (`children`: its prompt's answer as markdown, its tool calls
with their folds, its reasoning, the steers it took) are drawn under it, indented
behind a guide. Children are drawn once per version and width and kept: a frame of a
streaming sub-agent draws its changed block, not its whole transcript.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ink_tui.core.tool_summary import call_label, result_line
from ink_tui.ui import clock
from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments
from ink_tui.ui.blocks.tool_block import ToolBlock

if TYPE_CHECKING:
    from ink_tui.core.events import Event
    from ink_tui.core.messages import ToolCall
    from ink_tui.core.tool_api import ToolResult

Chip = Literal["stop", "steer"]

# The children's guide: two cells in, a bar, a space.
GUIDE = "  │ "
# How each ending reads on the state line: icon, its style, the words.
_ENDINGS: dict[str, tuple[str, str, str]] = {
    "completed": ("✓", "bold green", "completed"),
    "stopped": ("■", "bold yellow", "stopped by the user"),
    "failed": ("✗", "bold red", "failed"),
    "aborted": ("✗", "bold red", "interrupted"),
    "max_iterations": ("!", "bold yellow", "stopped at its round limit"),
}
# Drawn as the activity panel draws its own: underlined, like links.
_CHIPS: tuple[tuple[Chip, str, str], ...] = (
    ("stop", "■ stop", "bold underline"),
    ("steer", "✎ steer", "bold underline"),
)
_HINT = "x stop · s steer   "
# How a stopped sub-agent's result (control/subagents.py) brings what it had written;
# without it the folded row shows the result's first line.
_SO_FAR = "What it had so far:\n"
# Narrower than this the state line keeps its words and drops the chips.
_CHIPS_MIN_WIDTH = 48


def is_task_call(call: ToolCall) -> bool:
    return call.name == "task"


def format_tokens(tokens: int) -> str:
    if tokens < 1000:
        return f"{tokens} tokens"
    return f"{tokens / 1000:.1f}k tokens"


class TaskBlock(ToolBlock):
    def __init__(self, call: ToolCall, concurrent: bool = False) -> None:
        super().__init__(call, concurrent)
        self.description = " ".join(str(call.arguments.get("description", "")).split())
        self.agent_id: str | None = None
        # "starting", "thinking", "writing" or the label of the tool it runs.
        self.doing = "starting"
        self.tokens = 0
        self.agent_started: float | None = None
        self.agent_duration_s: float | None = None
        self.stop_reason: str | None = None
        self.children: list[Block] = []
        # child -> (version, width, look, lines drawn indented)
        self._drawn: dict[Block, tuple[int, int, Look, list[Strip]]] = {}
        self._running_calls: dict[str, ToolCall] = {}

    # -- the sub-agent's state, folded from its events ----------------------------------

    @property
    def agent_running(self) -> bool:
        """Its sub-agent started and has not ended: it can be stopped or steered."""
        return self.agent_id is not None and self.stop_reason is None and self.result is None

    def note(self, event: Event) -> bool:
        """One event of its sub-agent (its blocks are the inner view's business); True
        when the state line changed (most deltas change nothing there)."""
        # Imported at the first event, as the transcript's event mapping is (after the
        # first frame: see transcript_subscriber.py).
        from ink_tui.core.events import (
            ApprovalRequest,
            MessageEnd,
            SubagentEnd,
            SubagentStart,
            TextDelta,
            ThinkingDelta,
            ToolEnd,
            ToolStart,
            TurnStart,
        )

        before = (self.doing, self.tokens, self.agent_id, self.stop_reason)
        match event:
            case SubagentStart():
                self.agent_id = event.agent_id
                self.agent_started = clock.now()
                self.doing = "starting"
            case TurnStart() | ThinkingDelta():
                self.doing = "thinking"
            case TextDelta():
                self.doing = "writing"
            case MessageEnd():
                usage = event.message.usage
                self.tokens += usage.input_tokens + usage.output_tokens
            case ToolStart():
                self._running_calls[event.call.id] = event.call
                self.doing = call_label(event.call, 40)
            case ApprovalRequest():
                self.doing = f"asks about {call_label(event.call, 40)}"
            case ToolEnd():
                self._running_calls.pop(event.call.id, None)
                calls = list(self._running_calls.values())
                self.doing = call_label(calls[0], 40) if calls else "thinking"
            case SubagentEnd():
                self.stop_reason = event.stop_reason
                self.agent_duration_s = event.duration_s
                self._running_calls.clear()
            case _:
                return False
        if before == (self.doing, self.tokens, self.agent_id, self.stop_reason):
            return False
        self.changed()
        return True

    def finish(self, result: ToolResult, duration_s: float | None) -> bool:
        reason = result.details.get("stop_reason")
        if self.stop_reason is None and isinstance(reason, str):
            self.stop_reason = reason  # a resumed session: no SubagentEnd came
        agent_id = result.details.get("agent_id")
        if self.agent_id is None and isinstance(agent_id, str):
            self.agent_id = agent_id
        return super().finish(result, duration_s)

    # -- folds -------------------------------------------------------------------------

    @property
    def foldable(self) -> bool:
        # Its transcript unfolds from its sub-agent's start, running or not.
        return self.agent_id is not None or bool(self.children) or self.result is not None

    def child_changed(self) -> None:
        """A block of its transcript changed: drawn again at the next frame, if shown."""
        self.changed()

    # -- drawing -----------------------------------------------------------------------

    def header_text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        label = self.description or "task"
        if self.state == "queued":
            text.append("◌ ", style="dim")
            text.append(label, style="dim")
            text.append("  queued", style="dim italic")
            return text
        if self.state == "asking":
            return super().header_text()
        ending = _ENDINGS.get(self.stop_reason or "")
        elapsed: float | None
        if self.result is None and ending is None:
            started = self.agent_started if self.agent_started is not None else self.started
            text.append(f"{clock.spinner(started)} ", style="bold cyan")
            text.append(label, style="bold")
            text.append(f"  {self.doing}", style="cyan italic")
            elapsed = clock.now() - started
        else:
            if ending is None:
                ending = _ENDINGS["failed" if self.state == "failed" else "completed"]
            icon, style, words = ending
            text.append(f"{icon} ", style=style)
            text.append(label, style="bold")
            text.append(f"  {words}", style=style.replace("bold ", ""))
            measured = self.agent_duration_s if self.duration_s is None else self.duration_s
            # None: a resumed session's call that never ended has no time to show.
            elapsed = None if measured is None else clock.shown_duration(measured)
        if elapsed is not None:
            text.append(f" · {clock.format_elapsed(elapsed)}", style="dim")
        if self.tokens:
            text.append(f" · {format_tokens(self.tokens)}", style="dim")
        return text

    def chips_text(self) -> Text | None:
        """The stop and steer chips (and their keys under the cursor), while it runs."""
        if not self.agent_running:
            return None
        text = Text(no_wrap=True)
        if self.highlighted:
            text.append(_HINT, style="dim")
        for index, (_, label, style) in enumerate(_CHIPS):
            if index:
                text.append("  ")
            text.append(label, style=style)
        return text

    def chip_at(self, x: int, width: int) -> Chip | None:
        """The chip at column `x` of the state line drawn `width` wide, if any."""
        chips = self.chips_text()
        inner = inner_width(width, left=1, right=1)
        if chips is None or inner < _CHIPS_MIN_WIDTH:
            return None
        start = 1 + inner - chips.cell_len
        if self.highlighted:
            start += len(_HINT)
        for name, label, _ in _CHIPS:
            if start <= x < start + len(label):
                return name
            start += len(label) + 2
        return None

    def plain_text(self) -> str:
        lines = [self.header_text().plain]
        if self.expanded:
            lines.extend(child.plain_text() for child in self.children)
            if not self.children and self.result is not None:
                lines.append(self.body_text().plain)
        elif self.result is not None:
            lines.append(self._result_line(80))
        return "\n".join(line for line in lines if line)

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        base = look.style("tool-cursor") if self.highlighted else Style()
        inner = inner_width(width, left=1, right=1)
        lines: list[Iterable[Segment]] = [self._state_line(inner, look, base)]
        body: list[Strip] = []
        if self.expanded and self.children:
            body = self._children_lines(width, look)
        elif self.result is not None:
            if self.expanded:
                text = self.body_text()
            else:
                text = Text(f"└ {self._result_line(inner)}", no_wrap=True, overflow="ellipsis")
            style = base + look.style("tool-failed" if self.result.is_error else "tool-body")
            rows = render_segments(text, inner - 2, look, style)
            lines.extend(framed(rows, inner, left=2, style=base))
        head = framed(lines, width, left=1, right=1, style=base)
        return [*head, *body, *blank_lines(1, width)]

    def _result_line(self, width: int) -> str:
        """The result's first line; for one stopped or interrupted (which the state line
        already says), the first line of what it had written by then."""
        assert self.result is not None
        _, had, so_far = self.result.content.partition(_SO_FAR)
        lines = [line for line in so_far.splitlines() if line.strip()]
        if had and lines and self.stop_reason in ("stopped", "aborted"):
            return f"had so far: {lines[0]}"
        return result_line(self.result, width)

    def _state_line(self, inner: int, look: Look, base: Style) -> list[Segment]:
        chips = self.chips_text()
        if chips is None or inner < _CHIPS_MIN_WIDTH:
            return render_segments(self.header_text(), inner, look, base)[0]
        width = chips.cell_len
        head = render_segments(self.header_text(), inner - width, look, base)[0]
        return [*head, *render_segments(chips, width, look, base)[0]]

    def _children_lines(self, width: int, look: Look) -> list[Strip]:
        guide = Segment(GUIDE, look.style("tool-body"))
        child_width = max(1, width - len(GUIDE))
        lines: list[Strip] = []
        for child in self.children:
            kept = self._drawn.get(child)
            # A running tool's spinner turns with the clock, not with its version.
            live = isinstance(child, ToolBlock) and child.running
            if (
                kept is None
                or live
                or kept[0] != child.version
                or kept[1] != width
                or kept[2] is not look
            ):
                drawn = [
                    Strip([guide, *strip], width) for strip in child.render_lines(child_width, look)
                ]
                kept = self._drawn[child] = (child.version, width, look, drawn)
            lines.extend(kept[3])
        # The last child's own blank line is the row's end: no second one.
        if lines and not lines[-1].text.strip(" │"):
            lines.pop()
        return lines

    def child_at(self, line: int) -> Block | None:
        """The block of its transcript drawn on the row's `line` (as last drawn)."""
        if not self.expanded:
            return None
        start = 1
        for child in self.children:
            kept = self._drawn.get(child)
            if kept is None:
                return None
            if start <= line < start + len(kept[3]):
                return child
            start += len(kept[3])
        return None

    def drop_cache(self) -> None:
        self._drawn.clear()
        for child in self.children:
            child.drop_cache()
