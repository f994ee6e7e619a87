"""Every fast path refuses internals unlike those it was written for, and the stock path
then gives the same output (ink_tui/fastpaths/)."""

from __future__ import annotations

import gc
import inspect
import re
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from rich.console import Console
from rich.markdown import Markdown
from rich.style import Style
from rich.syntax import Syntax
from textual._compositor import Compositor
from textual._styles_cache import StylesCache
from textual.strip import Strip
from textual.widget import Widget

from ink_tui import fastpaths
from ink_tui.fastpaths import gc_policy, textual_strips
from ink_tui.providers.lean_transport import LeanHTTPTransport, lean_transport
from ink_tui.providers.openai_compat import OpenAICompatProvider
from ink_tui.ui.blocks import answer_markdown
from tests.scripted_server import ScriptedServer, text_reply
from tests.test_lean_transport import _text

SPEED = [entry.name for entry in fastpaths.FAST_PATHS if entry.kind == "speed"]
ANSWER = (
    "# Title\n\nSome **bold** text, `code` and a [link](https://example.com).\n\n"
    "- one\n- two\n\n```python\ndef f(x: int) -> int:\n    return x  # done\n```\n\n"
    '```bash\nfor i in 1 2; do echo "$i"; done\n```\n'
)


@pytest.fixture(autouse=True)
def fresh_verdicts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The suite may run with the switch on; these tests set it themselves.
    monkeypatch.delenv(fastpaths.DISABLE_VAR, raising=False)
    fastpaths.reset()
    yield
    fastpaths.reset()


def test_every_fast_path_is_on_here_unless_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(fastpaths.DISABLE_VAR, raising=False)
    assert {entry.name: reason for entry, reason in fastpaths.report()} == {
        entry.name: None for entry in fastpaths.FAST_PATHS
    }


def test_the_switch_turns_every_speed_trick_off_and_names_turn_off_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(fastpaths.DISABLE_VAR, "1")
    assert [name for name in SPEED if fastpaths.enabled(name)] == []
    assert fastpaths.why_off("styles_cache") == "switched off (INK_NO_FAST_PATHS)"
    # The Alt+Enter key is behaviour, not speed: only its name turns it off.
    assert fastpaths.enabled("alt_enter")
    fastpaths.reset()
    monkeypatch.setenv(fastpaths.DISABLE_VAR, "bulk_chunks, alt_enter")
    off = {entry.name for entry, reason in fastpaths.report() if reason is not None}
    assert off == {"bulk_chunks", "alt_enter"}


def test_ink_version_lists_each_fast_path_and_why_one_is_off() -> None:
    env = {"PATH": "/usr/bin:/bin", fastpaths.DISABLE_VAR: "combined_lexer"}
    done = subprocess.run(
        [sys.executable, "-m", "ink_tui", "--version"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ink ")
    rows = {line.split()[0]: line.split()[1] for line in lines[2:]}
    assert rows == {
        entry.name: "off" if entry.name == "combined_lexer" else "on"
        for entry in fastpaths.FAST_PATHS
    }


# -- each check refuses what it was not written for ----------------------------------


def _refused(name: str) -> str:
    fastpaths.reset()
    reason = fastpaths.why_off(name)
    assert reason is not None, f"{name} accepted changed internals"
    return reason


def test_styles_cache_refuses_another_render_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def render_line(self: object, styles: object, y: int, size: object) -> None: ...

    monkeypatch.setattr(StylesCache, "render_line", render_line)
    assert "render_line takes" in _refused("styles_cache")


def test_scrollbar_rows_refuse_a_compositor_that_takes_repaints_another_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def update_widgets(self: Compositor, widgets: set[Widget]) -> None: ...

    monkeypatch.setattr(Compositor, "update_widgets", update_widgets)
    assert "_exchange_repaint_regions" in _refused("scrollbar_rows")


def test_strip_caches_refuse_a_render_ansi_without_its_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Strip, "render_ansi", classmethod(lambda cls, style, system: ""))
    # As before the fast path is installed: once it is (any app made earlier in this
    # process installs it), the check reads the replacement as its own and says yes.
    monkeypatch.setattr(textual_strips, "_installed", False)
    assert "lru_cache" in _refused("strip_caches")


def test_placed_rows_refuse_a_style_sum_without_its_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Style, "_add", lambda self, style: self)
    assert "__wrapped__" in _refused("placed_rows")


def test_answer_syntax_refuses_a_changed_rich_method(monkeypatch: pytest.MonkeyPatch) -> None:
    def _get_syntax(self: Syntax, console: Console, options: object) -> Iterator[object]:
        yield from ()

    monkeypatch.setattr(Syntax, "_get_syntax", _get_syntax)
    assert "Syntax._get_syntax changed" in _refused("answer_syntax")


def test_markdown_parser_refuses_a_markdown_with_new_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stock = Markdown.__init__

    def __init__(self: Markdown, markup: str, **options: object) -> None:
        stock(self, markup, **options)  # type: ignore[arg-type]
        self.new_setting = True  # type: ignore[attr-defined]

    monkeypatch.setattr(Markdown, "__init__", __init__)
    assert "new_setting" in _refused("markdown_parser")


def test_combined_lexer_refuses_a_changed_tokenizing_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    from pygments.lexer import RegexLexer

    loop = RegexLexer.get_tokens_unprocessed

    def get_tokens_unprocessed(self: RegexLexer, text: str, stack: tuple[str, ...] = ("root",)):  # type: ignore[no-untyped-def]
        return loop(self, text, stack)

    monkeypatch.setattr(RegexLexer, "get_tokens_unprocessed", get_tokens_unprocessed)
    assert "tokenizing loop changed" in _refused("combined_lexer")


def test_bulk_chunks_refuse_h11_0_14s_chunk_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    from h11._readers import ChunkedReader

    stock = ChunkedReader.__init__

    def __init__(self: ChunkedReader) -> None:
        stock(self)
        self._bytes_to_discard = 0  # h11 0.14 counted the bytes left of a chunk's footer

    monkeypatch.setattr(ChunkedReader, "__init__", __init__)
    assert "_bytes_to_discard is not bytes" in _refused("bulk_chunks")


def test_lean_transport_refuses_an_httpx_transport_using_more_than_its_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def aclose(self: httpx.AsyncHTTPTransport) -> None:
        await self._pool.aclose()
        self._closed = True  # type: ignore[attr-defined]

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "aclose", aclose)
    assert "_closed" in _refused("lean_transport")
    assert lean_transport("http://127.0.0.1:9/v1") is None


def test_alt_enter_refuses_a_parser_that_reads_another_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from textual import _xterm_parser

    monkeypatch.setattr(_xterm_parser, "ANSI_SEQUENCES_KEYS", {})
    assert "does not look keys up" in _refused("alt_enter")


def test_a_check_that_raises_is_a_refusal_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    from ink_tui.fastpaths import textual_styles_cache

    def check() -> str | None:
        raise AttributeError("no such thing")

    monkeypatch.setattr(textual_styles_cache, "check", check)
    assert _refused("styles_cache") == "AttributeError: no such thing"


# -- the stock path gives the same output ----------------------------------------------


def _answer_lines(monkeypatch: pytest.MonkeyPatch, switch: str) -> list[str]:
    monkeypatch.setenv(fastpaths.DISABLE_VAR, switch)
    fastpaths.reset()
    answer_markdown._markdown_class.cache_clear()
    answer_markdown.code_lexer.cache_clear()
    try:
        console = Console(width=60, color_system="truecolor", force_terminal=True)
        with console.capture() as captured:
            for dark in (True, False):
                console.print(answer_markdown.answer_markdown(ANSWER, dark))
        # A link gets a new id each time it is drawn.
        return re.sub(r"id=\d+;", "id=;", captured.get()).splitlines()
    finally:
        answer_markdown._markdown_class.cache_clear()
        answer_markdown.code_lexer.cache_clear()


@pytest.mark.parametrize("name", ["answer_syntax", "markdown_parser", "combined_lexer", "1"])
def test_an_answer_is_drawn_the_same_with_a_fast_path_off(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    assert _answer_lines(monkeypatch, name) == _answer_lines(monkeypatch, "0")


async def test_a_stream_reads_the_same_with_the_network_fast_paths_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = []
    for switch in ("0", "bulk_chunks", "chunk_template", "1"):
        monkeypatch.setenv(fastpaths.DISABLE_VAR, switch)
        fastpaths.reset()
        server = ScriptedServer()
        server.push(text_reply("a reply in several pieces, " * 20, pieces=40))
        provider = OpenAICompatProvider(server.base_url, "m", None)
        try:
            lean = isinstance(provider._client._transport, LeanHTTPTransport)
            assert lean == (switch != "1")
            texts.append(await _text(provider))
        finally:
            await provider.aclose()
            server.close()
    assert texts == [texts[0]] * 4


# -- the garbage collector's one owner -------------------------------------------------


def test_gc_is_left_alone_unless_the_process_is_inks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_policy, "_owned", False)
    with gc_policy.startup_pause():
        assert gc.isenabled()
    frozen = gc.get_freeze_count()
    gc_policy.freeze_long_lived()
    assert gc.get_freeze_count() == frozen


def test_the_start_up_pause_ends_however_the_block_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_policy, "_owned", True)
    monkeypatch.delenv(fastpaths.DISABLE_VAR, raising=False)
    with pytest.raises(RuntimeError), gc_policy.startup_pause():
        assert not gc.isenabled()
        raise RuntimeError("the app failed to start")
    assert gc.isenabled()
    with gc_policy.startup_pause():
        gc_policy.resume()  # the app's first frame
        assert gc.isenabled()
    assert gc.isenabled()


def test_gc_policy_switched_off_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_policy, "_owned", True)
    monkeypatch.setenv(fastpaths.DISABLE_VAR, "gc_policy")
    with gc_policy.startup_pause():
        assert gc.isenabled()


def test_every_check_names_what_it_looks_at() -> None:
    for entry in fastpaths.FAST_PATHS:
        module = __import__(f"ink_tui.{entry.module}", fromlist=["check"])
        assert inspect.signature(module.check).parameters == {}, entry.name
        assert module.__doc__ and "check()" in module.__doc__, entry.name


def test_ink_serve_makes_full_collections_rarer(monkeypatch: pytest.MonkeyPatch) -> None:
    # A full pass at 100 streaming sessions stopped every stream for 90-165 ms and freed
    # nothing (figure 11); the server asks for one a tenth as often.
    monkeypatch.setattr(gc_policy, "_owned", True)
    monkeypatch.setattr(gc, "freeze", lambda: None)  # the test process's heap stays its own
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    before = gc.get_threshold()
    try:
        gc_policy.freeze_server_heap()
        young, middle, full = gc.get_threshold()
        assert (young, middle) == before[:2]
        assert full == gc_policy.SERVER_FULL_EVERY > before[2]
        gc.set_threshold(*before)
        monkeypatch.setenv(fastpaths.DISABLE_VAR, "gc_policy")
        fastpaths.reset()
        gc_policy.freeze_server_heap()
        assert gc.get_threshold() == before
    finally:
        gc.set_threshold(*before)
