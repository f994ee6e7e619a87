"""One writer per session file, across processes: `SessionWriter` takes the session's
lock, a second opener (another process, or a second writer in this one) is refused at
once with a message naming the holder, and the lock goes with the holder however it
ends (closed, or killed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ink_tui.session.session_lock import SessionLocked, check_unlocked, lock_path
from ink_tui.session.session_writer import SessionWriter

HOLD = """
import sys, time
from pathlib import Path
from ink_tui.session.session_lock import set_front_end
from ink_tui.session.session_writer import SessionWriter
set_front_end("ink test-holder")
writer = SessionWriter.open_existing(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(60)
"""


def new_session(tmp_path: Path) -> Path:
    with SessionWriter.create(tmp_path / "ws", "m", root=tmp_path / "data") as writer:
        return writer.path


def hold_in_another_process(path: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_a_session_held_by_another_process_is_refused_with_who_holds_it(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    path = new_session(tmp_path)
    before = path.read_bytes()
    holder = hold_in_another_process(path)
    try:
        with pytest.raises(SessionLocked) as refused:
            SessionWriter.open_existing(path)
        message = str(refused.value)
        assert f"is open in another process (ink test-holder, pid {holder.pid})" in message
        assert "close it there first" in message
        with pytest.raises(SessionLocked):
            check_unlocked(path)
        assert path.read_bytes() == before  # nothing appended, nothing trimmed
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # Killed, it holds nothing: the kernel let go with the process.
    with SessionWriter.open_existing(path) as writer:
        assert writer.path == path
    assert not lock_path(path).exists()


def test_a_second_writer_in_the_same_process_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    path = new_session(tmp_path)
    first = SessionWriter.open_existing(path)
    try:
        with pytest.raises(SessionLocked) as refused:
            SessionWriter.open_existing(path)
        assert f"pid {os.getpid()}" in str(refused.value)
    finally:
        first.close()
    second = SessionWriter.open_existing(path)
    second.close()


def test_a_new_session_is_locked_from_its_creation(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    writer = SessionWriter.create(tmp_path / "ws", "m", root=tmp_path / "data")
    try:
        assert lock_path(writer.path).exists()
        with pytest.raises(SessionLocked):
            check_unlocked(writer.path)
    finally:
        writer.close()
    assert not lock_path(writer.path).exists()
    check_unlocked(writer.path)


def test_a_lock_file_left_by_a_killed_process_blocks_no_one(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    path = new_session(tmp_path)
    holder = hold_in_another_process(path)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert lock_path(path).exists()  # the file stays; the lock does not
    deadline = time.monotonic() + 5
    while True:
        try:
            check_unlocked(path)
            break
        except SessionLocked:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    with SessionWriter.open_existing(path):
        pass


async def test_the_app_resumes_the_session_it_is_writing(tmp_path: Path) -> None:
    from ink_tui.control.bus import EventBus
    from ink_tui.session.session_reader import load_session
    from ink_tui.ui.session_binding import SessionBinding

    (tmp_path / "ws").mkdir()
    binding = SessionBinding(EventBus(), tmp_path / "ws", root=tmp_path / "data")
    binding.start_new("m")
    path = binding.path
    assert path is not None and binding.writer is not None
    binding.writer.drain()
    # `/resume` with its own id: the binding lets go of its lock before reopening.
    binding.resume(load_session(path))
    assert binding.path == path
    await binding.aclose()
    assert not lock_path(path).exists()


def test_ink_resume_of_a_held_session_is_refused_before_the_app_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ink_tui.session.session_reader import load_session
    from ink_tui.ui.startup import plan_session

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with SessionWriter.create(workspace, "m") as writer:
        path = writer.path
    session_id = load_session(path).id
    holder = hold_in_another_process(path)
    try:
        plan = plan_session(workspace, continue_=False, resume=session_id[:6], enabled=True)
        assert isinstance(plan, str)
        assert f"session {session_id} is open in another process (ink test-holder" in plan
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    plan = plan_session(workspace, continue_=False, resume=session_id[:6], enabled=True)
    assert not isinstance(plan, str) and plan.path == path
