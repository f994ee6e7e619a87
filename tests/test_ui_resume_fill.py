"""A resumed session's preview draws what fills the screen, and waits for typing to pause.

`read_tail` given the transcript's size stops at the entries that surely fill it (their
rows counted low: `tail_rows`), the oldest cut to its end; the whole file is read once
the user has stopped typing for `QUIET_S`.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from ink_tui.session.entries import AssistantEntry, ToolResultEntry, UserEntry
from ink_tui.session.session_writer import SessionWriter
from ink_tui.ui import app_start
from ink_tui.ui.session_tail import read_tail
from ink_tui.ui.startup import SessionPlan
from ink_tui.ui.tail_rows import chunks, ending, text_rows
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer
from tests.ui_helpers import make_app, wait_until

PROSE = "The cache drops the oldest key only after the insert, so one entry too many stays. "
CODE = "```python\ndef put(self, key):\n\n    self.items[key] = 1\n```"


def answer(i: int) -> str:
    items = "\n".join(f"- item {k} of answer {i}" for k in range(3))
    return f"Answer {i}. {PROSE * 3}\n\n{items}\n\n{CODE}\n\nRunning the tests for {i} now."


def write_session(workspace: Path, root: Path, turns: int) -> Path:
    with SessionWriter.create(workspace, "m", root) as writer:
        for i in range(1, turns + 1):
            writer.record_user(UserMessage(f"prompt {i}"))
            call = ToolCall(id=f"c{i}", name="bash", arguments={"command": f"make test {i}"})
            writer.record_assistant(AssistantMessage(text=answer(i), tool_calls=[call]))
            output = "\n".join(f"test {k} of {i} passed" for k in range(30))
            writer.record_tool_result(ToolResultMessage(call.id, "bash", output))
            writer.record_assistant(AssistantMessage(text=f"done {i}"))
    return writer.path


def test_fences_are_not_parted_at_their_blank_lines() -> None:
    text = f"One.\n\n{CODE}\n\nTwo."
    assert chunks(text) == ["One.", CODE, "Two."]
    # A code line a row (its fence lines are not drawn), a paragraph its length / width.
    assert text_rows(CODE, 80) == 3  # its blank line is a row too
    assert text_rows("x" * 170, 80) == 3
    assert ending(text, 1, 80) == "Two."
    assert ending(text, 2, 80) == f"{CODE}\n\nTwo."
    assert ending(text, 0, 80) == ""


def test_the_tail_stops_once_the_screen_is_surely_full(tmp_path: Path) -> None:
    path = write_session(tmp_path, tmp_path / "data", turns=40)
    whole = read_tail(path, entries=16)
    tail = read_tail(path, entries=16, screen=(100, 27))
    assert len(tail) < len(whole)
    # The newest entries are whole and in order; the last is the session's last word.
    assert isinstance(tail[-1], AssistantEntry) and tail[-1].message.text == "done 40"
    assert [type(entry) for entry in tail[-4:]] == [
        UserEntry,
        AssistantEntry,
        ToolResultEntry,
        AssistantEntry,
    ]
    assert tail[-3].message.text == answer(40)  # type: ignore[union-attr]
    # The oldest is cut to its end: what shows of it at the top of the screen.
    oldest = tail[0]
    assert isinstance(oldest, AssistantEntry)
    assert answer(39).endswith(oldest.message.text)
    assert len(oldest.message.text) < len(answer(39))
    assert oldest.message.tool_calls[0].id == "c39"


@pytest.mark.parametrize("size", [(100, 32), (80, 24), (140, 60)])
async def test_the_preview_fills_the_transcript(
    server: ScriptedServer, workspace: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    root = tmp_path / "data"
    path = write_session(workspace, root, turns=40)
    app, _ = make_app(server, workspace, plan=SessionPlan("resume", path), session_root=root)
    async with app.run_test(size=size) as pilot:

        def preview() -> Transcript | None:
            found = app.query(f"#{app_start.PREVIEW_ID}")
            return found.first(Transcript) if found else None

        def drawn() -> bool:
            shown = preview()
            return shown is not None and "done 40" in shown.plain_text()

        await wait_until(pilot, drawn, what="the end")
        shown = preview()
        assert shown is not None
        assert shown.virtual_size.height >= shown.scrollable_content_region.height


async def test_the_whole_file_is_read_once_typing_pauses(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "data"
    path = write_session(workspace, root, turns=10)
    # Pauses far longer than a busy machine takes between two pilot steps: the read must
    # wait for typing to pause, not for the cap.
    monkeypatch.setattr(app_start, "QUIET_S", 3.0)
    monkeypatch.setattr(app_start, "QUIET_MAX_S", 60.0)
    read_at: list[float] = []
    real_read = app_start.read_planned_session
    done = threading.Event()

    def timed_read(plan: SessionPlan):  # type: ignore[no-untyped-def]
        read_at.append(time.monotonic())
        try:
            return real_read(plan)
        finally:
            done.set()

    monkeypatch.setattr(app_start, "read_planned_session", timed_read)
    app, _ = make_app(server, workspace, plan=SessionPlan("resume", path), session_root=root)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(
            pilot, lambda: bool(app.query(f"#{app_start.PREVIEW_ID}")), what="the preview"
        )
        await pilot.pause(0.1)
        await pilot.press("h")
        typed = time.monotonic()
        await pilot.pause(0.2)
        await pilot.press("i")
        typed = time.monotonic()
        assert not read_at
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        assert read_at and read_at[0] - typed >= 0.3
        assert app.prompt.text == "hi"
