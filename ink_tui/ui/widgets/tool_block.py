"""One tool call: a state line, and its result as a fold under it.

The state line reads `⠹ bash make test  3.2s` while running (the spinner is redrawn at
10 fps only then), `✓`/`✗` with the duration once done, `◌ … queued` while a concurrent
call waits for a slot. The result shows its first `FOLD_LINES` lines and "+N more lines";
a click or Enter (the block is focusable) expands it. An `edit`/`write` result that
carries `details["diff"]` shows the coloured diff instead (from its first hunk), and the
fold counts its lines.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Click
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from ink_tui.core.messages import ToolCall
from ink_tui.core.tool_api import ToolResult
from ink_tui.core.tool_summary import call_label
from ink_tui.ui import clock
from ink_tui.ui.widgets.diff_view import diff_lines

ToolState = Literal["queued", "running", "done", "failed"]

FOLD_LINES = 4
SPINNER_INTERVAL_S = 0.1


def result_lines(result: ToolResult) -> list[Text]:
    """The result as display lines; plain `Text`, so `[brackets]` are never markup."""
    diff = result.details.get("diff")
    if isinstance(diff, str) and diff and not result.is_error:
        # The state line already names the file: the fold starts at the first hunk.
        return diff_lines(diff, file_header=False)
    lines = result.content.rstrip("\n").splitlines()
    return [Text(line) for line in lines] if lines else [Text("(no output)", style="dim")]


class ToolBlock(Widget, can_focus=True):
    DEFAULT_CSS = """
    ToolBlock {
        height: auto;
        padding: 0 1;
        margin-bottom: 1;
    }
    ToolBlock:focus {
        background: $boost;
    }
    ToolBlock > .tool-header {
        height: 1;
    }
    ToolBlock > .tool-body {
        height: auto;
        padding-left: 2;
        color: $text-muted;
        display: none;
    }
    ToolBlock.-finished > .tool-body {
        display: block;
    }
    ToolBlock.-failed > .tool-body {
        color: $text-error;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_fold", "Expand/collapse", show=False)
    ]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, call: ToolCall, concurrent: bool = False) -> None:
        super().__init__()
        self.call = call
        self.label = call_label(call)
        self.state: ToolState = "queued" if concurrent else "running"
        self.started = clock.now()
        self.duration_s: float | None = None
        self.result: ToolResult | None = None
        self.lines: list[Text] = []
        self.header = Static(classes="tool-header")
        self.body = Static(classes="tool-body")
        self._ticker: Timer | None = None

    @property
    def foldable(self) -> bool:
        return len(self.lines) > FOLD_LINES

    @property
    def collapsed(self) -> bool:
        return self.foldable and not self.expanded

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.body

    def on_mount(self) -> None:
        self._ticker = self.set_interval(
            SPINNER_INTERVAL_S, self._paint_header, pause=self.state != "running"
        )
        self._paint_header()
        self._paint_body()

    def on_unmount(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()

    def set_running(self) -> None:
        """A concurrent call got its slot: its time counts from now."""
        if self.state != "queued":
            return
        self.state = "running"
        self.started = clock.now()
        if self._ticker is not None:
            self._ticker.resume()
        self._paint_header()

    def finish(self, result: ToolResult, duration_s: float) -> bool:
        """Show the result; False (and nothing changes) if one is already shown."""
        if self.result is not None:
            return False
        self.result = result
        self.duration_s = duration_s
        self.state = "failed" if result.is_error else "done"
        self.lines = result_lines(result)
        if self._ticker is not None:
            self._ticker.stop()
        self.add_class("-finished")
        self.set_class(result.is_error, "-failed")
        self._paint_header()
        self._paint_body()
        return True

    def toggle_fold(self) -> None:
        if self.foldable:
            self.expanded = not self.expanded

    def action_toggle_fold(self) -> None:
        self.toggle_fold()

    def on_click(self, event: Click) -> None:
        event.stop()
        self.toggle_fold()

    def watch_expanded(self) -> None:
        self._paint_body()

    def header_text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.state == "queued":
            text.append("◌ ", style="dim")
            text.append(self.label, style="dim")
            text.append("  queued", style="dim italic")
            return text
        if self.state == "running":
            text.append(f"{clock.spinner(self.started)} ", style="bold cyan")
            elapsed = clock.now() - self.started
        elif self.state == "done":
            text.append("✓ ", style="bold green")
            elapsed = clock.shown_duration(self.duration_s or 0.0)
        else:
            text.append("✗ ", style="bold red")
            elapsed = clock.shown_duration(self.duration_s or 0.0)
        text.append(self.label, style="bold")
        text.append(f"  {clock.format_elapsed(elapsed)}", style="dim")
        return text

    def body_text(self) -> Text:
        if not self.collapsed:
            return Text("\n").join(self.lines)
        # Collapsed lines are cropped, not wrapped, so the fold is exactly its lines high.
        body = Text("\n").join(self.lines[:FOLD_LINES])
        body.no_wrap = True
        body.overflow = "ellipsis"
        hidden = len(self.lines) - FOLD_LINES
        body.append(f"\n+{hidden} more line{'s' if hidden != 1 else ''}", style="dim italic")
        return body

    def plain_text(self) -> str:
        header = self.header_text().plain
        return header if self.result is None else f"{header}\n{self.body_text().plain}"

    def _paint_header(self) -> None:
        self.header.update(self.header_text())

    def _paint_body(self) -> None:
        if self.result is not None:
            self.body.update(self.body_text())
