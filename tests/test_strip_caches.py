"""Textual's strip caches no longer keep one-off entries (ink_tui/fastpaths/textual_strips.py)."""

from __future__ import annotations

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ink_tui.fastpaths import textual_strips as strip_caches

CONSOLE = Console(color_system="truecolor", force_terminal=True, width=80)


def line(*words: str) -> Strip:
    return Strip(
        [Segment(word, Style(color="red", bold=n % 2 == 0)) for n, word in enumerate(words)]
    )


def test_styles_with_offsets_are_drawn_the_same_without_filling_the_shared_cache() -> None:
    strip = line("one ", "two ", "three")
    before_install = strip.apply_offsets(0, 1).render(CONSOLE)
    strip_caches.install()
    strip_caches.install()  # idempotent
    cached = Strip.render_ansi.cached  # type: ignore[attr-defined]
    size = cached.cache_info().currsize
    drawn = [strip.apply_offsets(0, y).render(CONSOLE) for y in range(2, 200)]
    assert cached.cache_info().currsize == size
    assert set(drawn) == {before_install}
    # Plain styles still share the cache.
    Strip.render_ansi(Style(color="#123456"), CONSOLE._color_system)
    assert cached.cache_info().currsize == size + 1


def test_a_strip_cut_only_at_its_end_does_not_refer_to_itself() -> None:
    strip_caches.install()
    strip = line("one ", "two")
    assert strip.divide([7]) == [strip]
    assert strip.divide(iter([7, 9])) == [strip]
    assert not strip._divide_cache  # nothing holds the strip but its owner
    pieces = strip.divide([2, 7])
    assert [piece.text for piece in pieces] == ["on", "e two"]
    assert strip.divide([2, 7]) is pieces  # real cuts are still cached
