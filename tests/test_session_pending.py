"""Unsent input (queue + draft) beside the session, and the per-workspace input history."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ink_tui.control.input_queue import InputQueue
from ink_tui.session import pending_input
from ink_tui.session.input_history_store import HISTORY_LIMIT, InputHistoryStore
from ink_tui.session.pending_input import (
    PendingEntry,
    PendingInput,
    PendingInputStore,
    restore_text,
)
from ink_tui.session.session_writer import SessionWriter

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


@pytest.fixture
def session_path(workspace: Path) -> Path:
    with SessionWriter.create(workspace, "m") as writer:
        return writer.path


def test_save_load_and_delete_when_empty(session_path: Path) -> None:
    store = PendingInputStore(session_path)
    assert store.path == session_path.with_name(
        session_path.name.removesuffix(".jsonl") + ".pending.json"
    )
    assert store.load() == PendingInput()
    queue = InputQueue()
    queue.add("run the tests", "steer")
    queue.add("then commit\nwith a message", "follow_up")
    store.save(queue.entries, "half-typed ✓")
    assert store.path.exists()

    loaded = PendingInputStore(session_path).load()
    assert loaded == PendingInput(
        entries=[
            PendingEntry("run the tests", "steer"),
            PendingEntry("then commit\nwith a message", "follow_up"),
        ],
        draft="half-typed ✓",
    )
    store.save([], "only a draft")
    assert store.load() == PendingInput(draft="only a draft")
    store.save([], "   \n")
    assert not store.path.exists()
    assert store.load().empty
    # No temporary files left behind by the atomic writes.
    assert sorted(p.name for p in session_path.parent.iterdir()) == [session_path.name]


def test_unchanged_state_is_not_rewritten(
    session_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[Path] = []
    real = pending_input.write_atomic

    def counting(path: Path, data: bytes) -> None:
        writes.append(path)
        real(path, data)

    monkeypatch.setattr(pending_input, "write_atomic", counting)
    store = PendingInputStore(session_path)
    entries = [PendingEntry("a")]
    store.save(entries, "d")
    store.save(entries, "d")
    assert len(writes) == 1
    store.save(entries, "d2")
    assert len(writes) == 2
    store.clear()
    assert not store.path.exists()
    store.save(entries, "d2")  # the file is gone: this must write again
    assert len(writes) == 3 and store.path.exists()


@pytest.mark.parametrize(
    "content",
    [
        b'{"version": 1, "entries": [{"text": "a", "mo',
        b"[1, 2]",
        b'{"entries": [{"text": "a", "mode": "shout"}], "draft": ""}',
        b'{"entries": "nope", "draft": ""}',
        b"\xff\xfe",
    ],
)
def test_a_corrupt_file_loads_as_empty_with_a_warning(session_path: Path, content: bytes) -> None:
    store = PendingInputStore(session_path)
    store.path.write_bytes(content)
    loaded = store.load()
    assert loaded.entries == [] and loaded.draft == ""
    assert loaded.warning is not None and str(store.path) in loaded.warning
    # Saving afterwards replaces the damaged file.
    store.save([PendingEntry("fresh")], "")
    assert store.load() == PendingInput(entries=[PendingEntry("fresh")])


def test_restore_text_matches_the_controllers_restore() -> None:
    entries = [PendingEntry("S1 steer"), PendingEntry("F1 follow", "follow_up")]
    assert restore_text(entries, "") == ("S1 steer\n\nF1 follow", 2)
    assert restore_text(entries, "my draft") == ("S1 steer\n\nF1 follow\n\nmy draft", 2)
    assert restore_text([], "my draft") == ("my draft", 0)
    assert restore_text([], " ") == ("", 0)
    assert PendingInput(entries, "d").restore_text() == ("S1 steer\n\nF1 follow\n\nd", 2)


def test_pending_input_survives_the_process_being_killed(session_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from ink_tui.session.pending_input import PendingEntry, PendingInputStore

        store = PendingInputStore(Path({str(session_path)!r}))
        store.save([PendingEntry("first"), PendingEntry("second", "follow_up")], "draft")
        store.save(
            [PendingEntry("first"), PendingEntry("second", "follow_up"), PendingEntry("!ls")],
            "draft, edited",
        )
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    loaded = PendingInputStore(session_path).load()
    assert loaded.warning is None
    assert loaded.entries == [
        PendingEntry("first"),
        PendingEntry("second", "follow_up"),
        PendingEntry("!ls"),
    ]
    assert loaded.draft == "draft, edited"


def test_session_lines_survive_the_process_being_killed(workspace: Path, tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from ink_tui.core.messages import AssistantMessage, UserMessage
        from ink_tui.session.session_writer import SessionWriter

        writer = SessionWriter.create(Path({str(workspace)!r}), "m", Path({str(tmp_path)!r}))
        print(writer.path, flush=True)
        writer.record_user(UserMessage("before the kill"))
        writer.record_assistant(AssistantMessage(text="no fsync yet"))
        # Written by the writer's thread (not fsynced): that is what a kill cannot undo.
        writer.drain()
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    from ink_tui.session.session_reader import load_session

    loaded = load_session(Path(done.stdout.strip()))
    assert [type(m).__name__ for m in loaded.history] == ["UserMessage", "AssistantMessage"]
    assert loaded.warnings == []


def test_input_history_persists_per_workspace(workspace: Path, tmp_path: Path) -> None:
    store = InputHistoryStore(workspace)
    assert store.load() == []
    store.append("first")
    store.append("second")
    store.append("second")  # a repeat of the newest is not stored twice
    # A new app (another store object) sees it; so does a second app appending meanwhile.
    InputHistoryStore(workspace).append("from another window")
    store.append("third")
    assert InputHistoryStore(workspace).load() == [
        "first",
        "second",
        "from another window",
        "third",
    ]
    assert json.loads(store.path.read_text())[-1] == "third"
    other = tmp_path / "other"
    other.mkdir()
    assert InputHistoryStore(other).load() == []
    assert InputHistoryStore(workspace, root=tmp_path / "elsewhere").load() == []


def test_input_history_is_capped_keeping_the_newest(workspace: Path) -> None:
    store = InputHistoryStore(workspace)
    store.save([f"line {i}" for i in range(HISTORY_LIMIT + 50)])
    loaded = store.load()
    assert len(loaded) == HISTORY_LIMIT == 1_000
    assert loaded[0] == "line 50" and loaded[-1] == f"line {HISTORY_LIMIT + 49}"
    assert json.loads(store.path.read_text()) == loaded  # capped in the file, too
    store.append("newest")
    assert len(store.load()) == HISTORY_LIMIT and store.load()[-1] == "newest"


def test_input_history_tolerates_a_damaged_file(workspace: Path) -> None:
    store = InputHistoryStore(workspace)
    store.path.parent.mkdir(parents=True)
    store.path.write_text('["a", "b"')
    assert store.load() == []
    assert store.warning is not None
    store.path.write_text('{"not": "a list"}')
    assert store.load() == [] and store.warning is not None
    store.path.write_text('["a", 3, null, "b"]')
    assert store.load() == ["a", "b"] and store.warning is None
