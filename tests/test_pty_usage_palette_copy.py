"""The real `ink` on a pty: a resumed session's tokens and cost, /new at zero, the
palette's entries, and what /copy says it did (a clipboard tool, or OSC 52 under tmux)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, Usage, UserMessage
from ink_tui.core.prices import cost_of, format_cost, price_for
from ink_tui.session.session_writer import SessionWriter
from tests.pty_terminal import PtyInk
from tests.scripted_server import ScriptedServer

MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}
CTRL_P = b"\x10"
ESCAPE = b"\x1b"
USAGES = [Usage(1200, 300), Usage(2400, 500, cached_tokens=1000)]

StartInk = Callable[..., PtyInk]


@pytest.fixture
def start_ink(server: ScriptedServer, workspace: Path, tmp_path: Path) -> Iterator[StartInk]:
    started: list[PtyInk] = []
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES | {"TMUX"}}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    env.pop("WAYLAND_DISPLAY", None)
    # A session of earlier work, as the real writer leaves it, for `ink -c`.
    writer = SessionWriter.create(workspace, "gpt-4o", root=tmp_path / "data" / "ink")
    for n, usage in enumerate(USAGES):
        writer.record_user(UserMessage(f"question {n}"))
        writer.record_assistant(AssistantMessage(text=f"answer {n}", usage=usage, model="gpt-4o"))
    writer.close()

    def start(extra_env: Mapping[str, str]) -> PtyInk:
        args = ["-c", "--base-url", server.base_url, "--model", "m"]
        ink = PtyInk(args, cwd=workspace, env={**env, **extra_env}, size=(160, 40))
        started.append(ink)
        # The resumed session is drawn and its tokens counted: the app reads keys now.
        ink.wait_for("answer 1")
        ink.wait_for("↑3.6k ↓800")
        return ink

    yield start
    for ink in started:
        ink.close()


def test_resume_shows_the_files_tokens_and_cost_the_palette_and_osc52_under_tmux(
    start_ink: StartInk, tmp_path: Path
) -> None:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    ink = start_ink({"PATH": f"{empty}{os.pathsep}/usr/bin{os.pathsep}/bin", "TMUX": "/tmp/t,1,0"})
    price = price_for("gpt-4o")
    assert price is not None
    cost = format_cost(sum(cost_of(u, price) for u in USAGES))
    ink.wait_for(f"↑3.6k ↓800 {cost}")

    # The palette: each command once, its arguments in the entry; Textual's Theme too.
    mark = ink.mark()
    ink.send(CTRL_P)
    ink.wait_for("/resume [session id] — Resume a saved session", since=mark)
    ink.wait_for("Theme", since=mark)
    ink.send(ESCAPE)

    mark = ink.mark()
    ink.send(b"/copy\r")
    ink.wait_for("to the terminal's clipboard (OSC 52)", since=mark)
    ink.wait_for("Under tmux, set `set -g set-clipboard on`", since=mark)
    assert "Copied" not in ink.text(mark)

    mark = ink.mark()
    ink.send(b"/new\r")
    ink.wait_for("New session.", since=mark)
    ink.wait_for("↑0 ↓0", since=mark)


def test_copy_goes_through_a_clipboard_tool_on_path(start_ink: StartInk, tmp_path: Path) -> None:
    tools, clip = tmp_path / "bin", tmp_path / "clip.txt"
    tools.mkdir()
    (tools / "xclip").write_text(f"#!/bin/sh\ncat > '{clip}'\n")
    (tools / "xclip").chmod(0o755)
    ink = start_ink({"PATH": f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin"})
    mark = ink.mark()
    ink.send(b"/copy\r")
    ink.wait_for("(8 characters) to the clipboard (via xclip)", since=mark)
    assert clip.read_text() == "answer 1"
