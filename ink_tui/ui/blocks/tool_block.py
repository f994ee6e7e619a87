"""One tool call: a state line, and its result as a fold under it.

The state line reads `⠹ bash make test  3.2s` while running (the transcript redraws the
spinner at 10 fps only then), `✓`/`✗` with the duration once done (none when it was
not measured: a resumed session's call that never ended), `◌ … queued` while a
concurrent call waits for a slot, `? … waiting for your answer` while an approval
question about it is open (its time counts from `tool_running`, after the answer). A
long result is folded to the lines that matter for its kind (`fold_view.py`): a
command's last lines under "… N lines above", a diff's changed lines, the first lines
of anything else; a short one is shown whole. A click, or Enter with the transcript's
cursor on it, expands it. An `edit`/`write` result that carries `details["diff"]` shows
the coloured diff instead (from its first hunk).

The result is kept as the tool's own string; styled lines are only built when drawn, so
a thousand folded results of 200 lines cost their text, not 200,000 styled lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ink_tui.core.tool_summary import call_label
from ink_tui.ui import clock
from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments
from ink_tui.ui.blocks.diff_lines import diff_line_style, diff_lines
from ink_tui.ui.blocks.fold_view import FoldKind, FoldView, fold_view

if TYPE_CHECKING:
    from ink_tui.core.messages import ToolCall
    from ink_tui.core.tool_api import ToolResult

ToolState = Literal["queued", "asking", "running", "done", "failed"]

BODY_INDENT = 2


def _result_source(result: ToolResult) -> tuple[str, bool]:
    """The result's text as shown, and whether it is a diff."""
    diff = result.details.get("diff")
    if isinstance(diff, str) and diff and not result.is_error:
        lines = diff.rstrip("\n").split("\n")
        # The state line already names the file: the fold starts at the first hunk.
        skip = 0
        while skip < len(lines) and lines[skip].startswith(("--- ", "+++ ")):
            skip += 1
        return "\n".join(lines[skip:]), True
    return result.content.rstrip("\n"), False


def _count_lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def _fold(call: ToolCall, result: ToolResult, text: str, is_diff: bool) -> FoldView | None:
    """The collapsed view of a result's text, or None when it is short enough to show."""
    lines = text.split("\n") if text else []
    kind: FoldKind = "head"
    notes = 0
    shown = result.details.get("shown")
    if is_diff:
        kind = "diff"
    elif call.name == "bash" and isinstance(shown, int) and 0 <= shown < len(lines):
        # The output comes first ("(no output)" when there is none), then the notes:
        # a blank line, the exit code, an "[output cut …]" line.
        kind = "tail"
        notes = len(lines) - max(shown, 1)
    return fold_view(lines, kind, notes)


class ToolBlock(Block):
    def __init__(self, call: ToolCall, concurrent: bool = False) -> None:
        super().__init__()
        self.call = call
        self.label = call_label(call)
        self.state: ToolState = "queued" if concurrent else "running"
        self.started = clock.now()
        self.duration_s: float | None = None
        self.result: ToolResult | None = None
        # The result as one string: split into lines only when drawn.
        self.text = ""
        self.line_count = 0
        self._is_diff = False
        self._fold: FoldView | None = None
        self.expanded = False

    @property
    def foldable(self) -> bool:
        return self._fold is not None

    @property
    def collapsed(self) -> bool:
        return self.foldable and not self.expanded

    @property
    def running(self) -> bool:
        return self.state == "running"

    def set_asking(self) -> bool:
        """An approval question about the call is open: nothing runs until it is answered."""
        if self.state not in ("queued", "running"):
            return False
        self.state = "asking"
        self.changed()
        return True

    def set_running(self) -> bool:
        """The call runs now (its slot, its approval): its time counts from now. True when
        the state line changed (a lone call is drawn running from the start)."""
        if self.state == "running":
            self.started = clock.now()
            return False
        if self.state not in ("queued", "asking"):
            return False
        self.state = "running"
        self.started = clock.now()
        self.changed()
        return True

    def finish(self, result: ToolResult, duration_s: float | None) -> bool:
        """Show the result; False (and nothing changes) if one is already shown.

        `duration_s` None: the call's time is unknown (a resumed session's call that never
        ended), and the state line shows none."""
        if self.result is not None:
            return False
        self.result = result
        self.duration_s = duration_s
        self.state = "failed" if result.is_error else "done"
        self.text, self._is_diff = _result_source(result)
        self.line_count = _count_lines(self.text)
        self._fold = _fold(self.call, result, self.text, self._is_diff)
        self.changed()
        return True

    def set_expanded(self, expanded: bool) -> None:
        if self.foldable and expanded != self.expanded:
            self.expanded = expanded
            self.changed()

    def toggle_fold(self) -> None:
        self.set_expanded(not self.expanded)

    def header_text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.state == "queued":
            text.append("◌ ", style="dim")
            text.append(self.label, style="dim")
            text.append("  queued", style="dim italic")
            return text
        if self.state == "asking":
            text.append("? ", style="bold yellow")
            text.append(self.label, style="bold")
            text.append("  waiting for your answer", style="yellow")
            return text
        elapsed: float | None
        if self.state == "running":
            text.append(f"{clock.spinner(self.started)} ", style="bold cyan")
            elapsed = clock.now() - self.started
        else:
            ok = self.state == "done"
            text.append("✓ " if ok else "✗ ", style="bold green" if ok else "bold red")
            elapsed = None if self.duration_s is None else clock.shown_duration(self.duration_s)
        text.append(self.label, style="bold")
        if elapsed is not None:
            text.append(f"  {clock.format_elapsed(elapsed)}", style="dim")
        return text

    def body_text(self) -> Text:
        fold = self._fold if self.collapsed else None
        if fold is not None:
            return self._folded_text(fold)
        if self._is_diff:
            return Text("\n").join(diff_lines(self.text, file_header=False))
        if self.text:
            # Text, never markup: tool output may hold [brackets] of its own.
            return Text(self.text)
        return Text("(no output)", style="dim")

    def _folded_text(self, fold: FoldView) -> Text:
        rows: list[Text] = []
        if fold.above:
            rows.append(Text(f"… {fold.above} {_noun(fold.above)} above", style="dim italic"))
        for line in fold.lines:
            rows.append(Text(line, style=diff_line_style(line) if self._is_diff else ""))
        if fold.more:
            rows.append(Text(f"+{fold.more} more {_noun(fold.more)}", style="dim italic"))
        body = Text("\n").join(rows)
        # Collapsed lines are cropped, not wrapped, so the fold is exactly its lines high.
        body.no_wrap = True
        body.overflow = "ellipsis"
        return body

    def plain_text(self) -> str:
        header = self.header_text().plain
        return header if self.result is None else f"{header}\n{self.body_text().plain}"

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        base = look.style("tool-cursor") if self.highlighted else Style()
        inner = inner_width(width, left=1, right=1)
        lines: list[Iterable[Segment]] = [*render_segments(self.header_text(), inner, look, base)]
        if self.result is not None:
            body_style = base + look.style("tool-failed" if self.result.is_error else "tool-body")
            body = render_segments(self.body_text(), inner - BODY_INDENT, look, body_style)
            lines.extend(framed(body, inner, left=BODY_INDENT, style=base))
        return [*framed(lines, width, left=1, right=1, style=base), *blank_lines(1, width)]


def _noun(count: int) -> str:
    return "line" if count == 1 else "lines"
