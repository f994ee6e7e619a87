"""Two of Textual's per-line caches, kept from filling the heap with one-off entries.

Every line Textual draws ends up as a `Strip`, and two of its caches grow with lines that
are never drawn again. While a model streams that is most of the heap the garbage
collector walks on each full pass (measured with a 384 KB answer at 32 KB/s: 63,000
objects, 15 full passes of 40-60 ms each, the longest waits a key press had):

- `Strip.render_ansi` keeps the escape codes of every style in an LRU cache of 16,384
  entries. Every drawn cell carries its screen offset in its style's meta (text
  selection needs it), so nearly every style is new: the cache holds 16,384 styles and
  their keys, some 33,000 objects, and churns. The codes do not depend on the meta, and
  a style keeps its own codes once worked out (`Style._ansi`), so styles with a meta
  skip the shared cache.
- `Strip.divide` caches its result on the strip; cut once at its end, the result is the
  strip itself, so the strip refers to itself and only the cycle collector frees it
  (about 4,000 objects per full pass). That result is now returned uncached.

Touches: `Strip.render_ansi`'s `lru_cache` (through `__wrapped__`), `Strip.divide`,
rich's private `Style._meta` and `Style._ansi`. `check()` looks for each as it was
written for; refused, `install()` is not called and Textual's own methods stay.
`install()` is idempotent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.style import Style
from textual.strip import Strip

_installed = False


def check() -> str | None:
    import inspect

    if _installed:
        return None  # what it finds now is this module's own replacement
    descriptor = Strip.__dict__.get("render_ansi")
    cached = getattr(descriptor, "__func__", None)
    compute = getattr(cached, "__wrapped__", None)
    if not isinstance(descriptor, classmethod) or compute is None:
        return "Strip.render_ansi is not a classmethod over an lru_cache"
    if not hasattr(cached, "cache_info"):
        return "Strip.render_ansi's cache has no cache_info()"
    if tuple(inspect.signature(compute).parameters) != ("cls", "style", "color_system"):
        return f"Strip.render_ansi takes {tuple(inspect.signature(compute).parameters)}"
    # The codes must be remembered on the style itself for a style with a meta.
    if "_ansi" not in compute.__code__.co_names:
        return "Strip.render_ansi no longer sets Style._ansi"
    if not {"_meta", "_ansi"} <= set(Style.__slots__):
        return "rich Style has no _meta/_ansi slots"
    divide = Strip.__dict__.get("divide")
    if divide is None or tuple(inspect.signature(divide).parameters) != ("self", "cuts"):
        return "Strip.divide is not divide(self, cuts)"
    return None


def install() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    _skip_meta_in_ansi_cache()
    _divide_without_self_cycle()


def _skip_meta_in_ansi_cache() -> None:
    descriptor = Strip.__dict__.get("render_ansi")
    cached: Any = getattr(descriptor, "__func__", None)
    compute: Callable[..., str] | None = getattr(cached, "__wrapped__", None)
    if cached is None or compute is None:
        return

    def render_ansi(cls: type[Strip], style: Style, color_system: Any) -> str:
        if style._meta is not None:
            # Sets `style._ansi` too, so the style itself remembers its codes.
            return compute(cls, style, color_system)
        return str(cached(cls, style, color_system))

    # Marks the replacement, for tests and for a second install (an attribute set on a
    # function, which the checker does not know of).
    render_ansi.cached = cached  # type: ignore[attr-defined]
    setattr(Strip, "render_ansi", classmethod(render_ansi))  # noqa: B010


def _divide_without_self_cycle() -> None:
    divide = Strip.__dict__.get("divide")
    if divide is None:
        return

    def divide_once(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        length = self.cell_length
        cuts = [cut for cut in cuts if cut <= length]
        if cuts == [length]:
            return [self]
        result: Sequence[Strip] = divide(self, cuts)
        return result

    setattr(Strip, "divide", divide_once)  # noqa: B010
