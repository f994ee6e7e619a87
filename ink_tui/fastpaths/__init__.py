"""Every trick into a library's internals, in one place, each checked before it is used.

ink is faster than the stock path of its libraries in a few places, and each of those
places leans on something a library does not promise: a private class, a private
attribute, a signature, a cache's shape. Each lives in a module of this package, which
says what it touches and what it buys, and has a `check()` that looks, before the first
use, at exactly what the trick needs (signatures, attributes, versions) and returns why
not, or None. A refused check means the stock path, which draws (or reads) the same.

`FAST_PATHS` below lists them with what each touches; `ink --version` says which are on
and why the others are off. `INK_NO_FAST_PATHS=1` turns every speed trick off, and the
suite passes so too (CI runs it): what each buys is in benchmarks/README.md.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen
    from textual.scrollbar import ScrollBar

DISABLE_VAR = "INK_NO_FAST_PATHS"
"""`INK_NO_FAST_PATHS=1` turns every speed trick off; a comma-separated list of names
turns off just those (and may name `alt_enter` too, which `1` leaves on: see below)."""

Kind = Literal["speed", "fix"]


@dataclass(frozen=True, slots=True)
class FastPath:
    name: str
    module: str
    """Under `ink_tui`: the module with the trick and its `check() -> str | None`."""
    touches: str
    kind: Kind = "speed"
    """`fix`: not a speed trick but a behaviour the library lacks (`INK_NO_FAST_PATHS=1`
    leaves it on; name it to turn it off)."""


FAST_PATHS: tuple[FastPath, ...] = (
    FastPath(
        "styles_cache",
        "fastpaths.textual_styles_cache",
        "textual._styles_cache.StylesCache.render_line (its 13 arguments)",
    ),
    FastPath(
        "strip_caches",
        "fastpaths.textual_strips",
        "textual.strip.Strip.render_ansi's lru_cache, Strip.divide; rich Style._meta",
    ),
    FastPath(
        "placed_rows",
        "fastpaths.rich_style_sum",
        "rich.style.Style._add's lru_cache (__wrapped__), Strip._segments",
    ),
    FastPath(
        "terminal_scroll",
        "fastpaths.terminal_scroll",
        "App._display (wrapped on ink's App), CompositorUpdate.render_segments, "
        "Compositor.visible_widgets, Widget._repaint_regions and _styles_cache.clear()",
    ),
    FastPath(
        "frame_diff",
        "fastpaths.frame_diff",
        "nothing more than terminal_scroll's wrapped App._display: pieces of rows "
        "compared with what was written there",
    ),
    FastPath(
        "compositor_rows",
        "fastpaths.compositor_rows",
        "Compositor.render_partial_update (replaced on ink's main screen's compositor), "
        "its _dirty_regions, _regions_to_spans, cuts and visible_widgets; ChopsUpdate",
    ),
    FastPath(
        "scrollbar_rows",
        "fastpaths.scrollbar_rows",
        "ScrollBar.render_lines and Widget._exchange_repaint_regions (replaced on the "
        "transcript's scrollbar), ScrollBarRender.render_bar and the renderer's attributes",
    ),
    FastPath(
        "answer_syntax",
        "fastpaths.rich_syntax",
        "rich.syntax.Syntax's private attributes and methods (_get_base_style, "
        "_process_code, _stylized_ranges, _theme, _get_syntax)",
    ),
    FastPath(
        "markdown_parser",
        "fastpaths.rich_markdown",
        "the attributes rich.markdown.Markdown.__init__ sets, copied to skip it",
    ),
    FastPath(
        "combined_lexer",
        "fastpaths.pygments_lexers",
        "pygments RegexLexer's processed rules (_tokens) and its tokenizing loop",
    ),
    FastPath(
        "bulk_chunks",
        "fastpaths.h11_chunks",
        "h11._readers.ChunkedReader, h11._receivebuffer, h11._util; httpcore's pooled "
        "response stream and HTTP/1.1 connection attributes",
    ),
    FastPath(
        "pushed_body",
        "fastpaths.pushed_body",
        "bulk_chunks' direct body, decoded in the lean transport's data_received and "
        "handed to the provider's body reader without a reading task",
    ),
    FastPath(
        "lean_transport",
        "providers.lean_transport",
        "httpx.AsyncHTTPTransport built around its _pool without its __init__; httpcore's "
        "network-backend interface on an asyncio protocol",
    ),
    FastPath(
        "chunk_template",
        "providers.chunk_template",
        "nothing private: an OpenAI stream's chunks decoded by a learned template",
    ),
    FastPath(
        "json_events",
        "fastpaths.json_encoder",
        "json.encoder.c_make_encoder (undocumented): the C encoder of `ink serve`'s "
        "events made once, not once an event",
    ),
    FastPath(
        "gc_policy",
        "fastpaths.gc_policy",
        "the garbage collector: paused while `ink` starts, start-up heap frozen",
    ),
    FastPath(
        "alt_enter",
        "fastpaths.textual_keys",
        "textual._ansi_sequences.ANSI_SEQUENCES_KEYS (one entry: ESC CR)",
        kind="fix",
    ),
)

_BY_NAME = {entry.name: entry for entry in FAST_PATHS}
# name -> None (on) or why it is off; worked out once a process (`reset` for tests).
_verdicts: dict[str, str | None] = {}


def _switched_off(entry: FastPath) -> bool:
    value = os.environ.get(DISABLE_VAR, "").strip()
    if not value or value == "0":
        return False
    names = {part.strip() for part in value.split(",")}
    if entry.name in names:
        return True
    return entry.kind == "speed" and bool(names & {"1", "all", "true", "yes"})


def why_off(name: str) -> str | None:
    """None when the fast path `name` is in use; else why not (switched off, or what its
    check found unlike what it was written for)."""
    if name in _verdicts:
        return _verdicts[name]
    entry = _BY_NAME[name]
    verdict: str | None
    if _switched_off(entry):
        verdict = f"switched off ({DISABLE_VAR})"
    else:
        try:
            module = importlib.import_module(f"ink_tui.{entry.module}")
            verdict = module.check()
        except Exception as exc:  # an import or attribute the library no longer has
            verdict = f"{type(exc).__name__}: {exc}"
    _verdicts[name] = verdict
    return verdict


def enabled(name: str) -> bool:
    return why_off(name) is None


def report() -> list[tuple[FastPath, str | None]]:
    """Every fast path with None (on) or why it is off."""
    return [(entry, why_off(entry.name)) for entry in FAST_PATHS]


def report_lines() -> list[str]:
    width = max(len(entry.name) for entry in FAST_PATHS)
    lines = [f"fast paths ({DISABLE_VAR}=1 turns the speed ones off):"]
    for entry, reason in report():
        state = "on " if reason is None else "off"
        detail = entry.touches if reason is None else reason
        lines.append(f"  {entry.name:<{width}}  {state}  {detail}")
    return lines


def install_key_fixes() -> None:
    """The keys Textual's parser lacks (Alt+Enter sent as ESC CR); idempotent."""
    if enabled("alt_enter"):
        from ink_tui.fastpaths.textual_keys import install_alt_enter

        install_alt_enter()


def install_app_patches(app_class: type[App[Any]] | None = None) -> None:
    """What a Textual app of ink's installs once: the key fixes, the strip caches, and
    on `app_class` (ink's own App, not Textual's) the terminal's scrolling."""
    install_key_fixes()
    if enabled("strip_caches"):
        from ink_tui.fastpaths import textual_strips

        textual_strips.install()
    if app_class is not None and (enabled("terminal_scroll") or enabled("frame_diff")):
        from ink_tui.fastpaths import terminal_scroll

        terminal_scroll.install(app_class, remember=enabled("frame_diff"))


def adopt_screen(screen: Screen[object]) -> None:
    """A screen of ink's whose partial frames render only the rows they write."""
    if enabled("compositor_rows"):
        from ink_tui.fastpaths import compositor_rows

        compositor_rows.adopt(screen)


def adopt_scrollbar(scrollbar: ScrollBar) -> None:
    """A scrollbar of ink's whose rows are kept while its bar looks the same."""
    if enabled("scrollbar_rows"):
        from ink_tui.fastpaths import scrollbar_rows

        scrollbar_rows.adopt(scrollbar)


def reset() -> None:
    """Forget the verdicts (tests change the environment or a library between them)."""
    _verdicts.clear()
