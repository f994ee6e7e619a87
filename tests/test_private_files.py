"""The files ink writes about you are yours alone: no group or other bits, whatever the
umask says. Sessions (and their lock), the input history and the extension trust store;
docs/security.md names these tests for its promises about other users on the machine."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink_tui.extensions.trust import TrustStore
from ink_tui.session.input_history_store import InputHistoryStore
from ink_tui.session.session_lock import lock_path
from ink_tui.session.session_writer import SessionWriter

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes")


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that takes nothing away: what ink asks for is what the file gets."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_session_files_their_lock_and_their_folder_are_private(
    tmp_path: Path, open_umask: None
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with SessionWriter.create(workspace, "m", root=tmp_path / "data") as writer:
        assert mode(lock_path(writer.path)) == 0o600
    assert mode(writer.path) == 0o600
    assert mode(writer.path.parent) == 0o700


def test_the_input_history_and_the_trust_store_are_private(
    tmp_path: Path, open_umask: None
) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".ink" / "extensions").mkdir(parents=True)
    history = InputHistoryStore(workspace, root=tmp_path / "data")
    history.append("my secret plan")
    assert mode(history.path) == 0o600

    store = TrustStore(tmp_path / "data" / "trusted-extensions.json")
    store.trust(workspace / ".ink" / "extensions")
    assert mode(store.path) == 0o600
    store.trust(workspace)  # rewritten: still private
    assert mode(store.path) == 0o600
