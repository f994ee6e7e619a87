"""The transcript's scrollbar, with its rows kept while its bar looks the same, draws
what Textual's own scrollbar draws: after every change of content, position, hover
and theme, its rows equal a fresh render the stock way."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

from ink_tui import fastpaths
from ink_tui.control.bus import EventBus
from ink_tui.ui.widgets.transcript import Transcript

pytestmark = pytest.mark.skipif(
    not fastpaths.enabled("scrollbar_rows"), reason="the fast path is off"
)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(EventBus())


def stock(bar: ScrollBar) -> list[Strip]:
    bar.refresh()  # every row drawn again, from what the bar is now
    return Widget.render_lines(bar, bar.size.region)


async def test_kept_rows_are_what_a_fresh_render_draws() -> None:
    app = Host()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        checked = kept = partly = 0
        last: list[Strip] = []
        for n in range(120):
            transcript.add_user(f"Question {n}")
            transcript.flush_now()
            await pilot.pause()
            if not transcript.show_vertical_scrollbar:
                continue
            bar = transcript.vertical_scrollbar
            assert getattr(bar, "_ink_scrollbar_rows", False)
            if n % 7 == 0:
                transcript.scroll_to(y=n % 13, animate=False, immediate=True)
                await pilot.pause()
            if n == 60:
                bar.mouse_over = True
                await pilot.pause()
            if n == 90:
                app.theme = "textual-light"
                await pilot.pause()
            first = bar.render_lines(bar.size.region)
            same = [a is b for a, b in zip(first, last, strict=False)]
            # A thumb moved by a little: the rows it did not cross are the ones kept.
            partly += any(same) and not all(same) and len(first) == len(last)
            last = first
            again = bar.render_lines(bar.size.region)
            kept += first is not again and all(a is b for a, b in zip(first, again, strict=True))
            assert first == stock(bar), f"after question {n}"
            checked += 1
        assert checked > 80
        assert kept > 40  # the rows were handed out again, not drawn again
        assert partly > 20  # a bar that moved drew again only its changed rows
