"""Paging back to rows drawn lately makes no new strips, and draws them the same."""

from __future__ import annotations

from textual._styles_cache import StylesCache
from textual.geometry import Region
from textual.pilot import Pilot

from ink_tui import fastpaths
from ink_tui.ui.widgets.transcript import Transcript
from tests.test_ui_transcript import running


def screen_rows(transcript: Transcript) -> list[object]:
    return list(transcript.render_lines(Region(0, 0, *transcript.size)))


async def settled_rows(pilot: Pilot[None], transcript: Transcript) -> list[object]:
    """The rows once two draws in a row agree: on a busy machine the answers' Markdown
    may still be arriving when the first page is looked at."""
    rows = screen_rows(transcript)
    for _ in range(200):
        await pilot.pause()
        again = screen_rows(transcript)
        if again == rows:
            return again
        rows = again
    raise AssertionError("the transcript kept changing")


async def test_a_page_scrolled_back_to_is_the_same_strips() -> None:
    async with running() as (pilot, transcript, _bus):
        for n in range(40):
            transcript.add_user(f"Question {n}: how long is a piece of string?")
            transcript.append_answer(f"Answer {n}: **twice** half its length, `n = {n}`.")
            transcript.end_answer()
        transcript.flush_now()
        await pilot.pause()
        transcript.scroll_page_up(animate=False)
        first = await settled_rows(pilot, transcript)
        transcript.scroll_page_down(animate=False)
        await settled_rows(pilot, transcript)
        transcript.scroll_page_up(animate=False)
        await pilot.pause()
        again = screen_rows(transcript)
        if fastpaths.enabled("styles_cache") and fastpaths.enabled("placed_rows"):
            # The very strips: nothing new made for a page drawn lately.
            assert all(a is b for a, b in zip(first, again, strict=True))
        # What Textual's own cache frames from the same content.
        plain = StylesCache().render_widget(transcript, Region(0, 0, *transcript.size))
        assert again == plain
        assert any("Question" in row.text for row in again)  # type: ignore[attr-defined]


async def test_a_style_change_frames_the_rows_again() -> None:
    async with running() as (pilot, transcript, _bus):
        for n in range(10):
            transcript.add_user(f"Question {n}")
        transcript.flush_now()
        await pilot.pause()
        before = screen_rows(transcript)
        transcript.styles.background = "red"
        await pilot.pause()
        after = screen_rows(transcript)
        assert [row.text for row in after] == [row.text for row in before]  # type: ignore[attr-defined]
        assert after != before
        assert after == StylesCache().render_widget(transcript, Region(0, 0, *transcript.size))
