"""A partial frame rendered row by row writes exactly what Textual's own would.

Every partial frame of a busy screen (a streaming transcript with its scrollbar, a
docked panel that changes, a toast drawn over the transcript's rows, a widget with a
border and padding) is rendered twice from the same dirty regions: by
`compositor_rows.render_partial_update` and by Textual's stock method. What each would
write to the terminal must be the same text, byte for byte, but for the cursor moves
Textual's makes to write nothing.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Static

from ink_tui import fastpaths
from ink_tui.control.bus import EventBus
from ink_tui.fastpaths import compositor_rows
from ink_tui.ui.widgets.transcript import Transcript

pytestmark = pytest.mark.skipif(
    not fastpaths.enabled("compositor_rows"), reason="the fast path is off"
)

TEXT = (
    "A paragraph that wraps across the transcript's width, then a list:\n\n"
    "- one item\n- another, long enough to wrap at the width of this little screen\n\n"
    "```python\nfor n in range(3):\n    print(n)\n```\n\n"
)


# A cursor move with nothing written after it: Textual's own frame moves to a chop that
# starts where a span ends and writes it cropped to nothing.
_IDLE_MOVE = re.compile(r"\x1b\[\d+;\d+H(?=\x1b\[\d+;\d+H|\n|$)")


def written(frame: str) -> str:
    """What a frame puts on the screen: its text less the moves that write nothing."""
    return _IDLE_MOVE.sub("", frame)


class Host(App[None]):
    CSS = """
    #panel { dock: bottom; height: 3; border: round $primary; padding: 0 1; }
    #side { dock: right; width: 12; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.bus = EventBus()
        self.compared = 0

    def compose(self) -> ComposeResult:
        yield Static("side", id="side")
        yield Static("panel", id="panel")
        yield Transcript(self.bus)

    def on_mount(self) -> None:
        compositor = self.screen._compositor
        stock = type(compositor).render_partial_update

        def both(*_: Any) -> Any:
            regions = set(compositor._dirty_regions)
            ours = compositor_rows.render_partial_update(compositor)
            compositor._dirty_regions.update(regions)
            theirs = stock(compositor)
            if ours is None or theirs is None:
                assert ours is None and theirs is None
                return theirs
            console: Console = self.console
            assert ours.spans == theirs.spans
            assert written(ours.render_segments(console)) == written(
                theirs.render_segments(console)
            )
            self.compared += 1
            return ours

        compositor.render_partial_update = both  # type: ignore[method-assign]


async def test_partial_frames_write_what_textuals_own_would() -> None:
    app = Host()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        panel = app.query_one("#panel", Static)
        app.notify("A toast over the transcript's rows", timeout=60)
        for n in range(3):
            transcript.add_user(f"Question {n}")
        transcript.begin_answer()
        for step, start in enumerate(range(0, len(TEXT) * 3, 11)):
            transcript.append_answer((TEXT * 3)[start : start + 11])
            transcript.flush_now()
            panel.update(f"panel, step {step}")
            if step % 5 == 0:
                app.query_one("#side", Static).update(f"side {step}")
            await pilot.pause()
        transcript.end_answer()
        transcript.flush_now()
        await pilot.pause()
        transcript.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
    assert app.compared > 20
