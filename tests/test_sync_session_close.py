"""`SyncAgentSession` after `close()`: one clear error from every call, and no warning."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ink_tui import SyncAgentSession
from tests.scripted_server import ScriptedServer, text_reply

CALLS: dict[str, Callable[[SyncAgentSession], Any]] = {
    "prompt": lambda s: s.prompt("hi"),
    "start": lambda s: s.start("hi"),
    "steer": lambda s: s.steer("x"),
    "follow_up": lambda s: s.follow_up("x"),
    "abort": lambda s: s.abort(),
    "wait_settled": lambda s: s.wait_settled(),
    "snapshot": lambda s: s.snapshot(),
    "queue": lambda s: s.queue,
    "messages": lambda s: s.messages,
    "clear_queue": lambda s: s.clear_queue(),
    "edit": lambda s: s.edit(1, "x"),
    "set_mode": lambda s: s.set_mode(1, "steer"),
    "move": lambda s: s.move(1, 0),
    "remove": lambda s: s.remove(1),
    "set_steering_mode": lambda s: s.set_steering_mode("all"),
    "set_follow_up_mode": lambda s: s.set_follow_up_mode("all"),
    "subscribe": lambda s: s.subscribe(lambda event: None),
    "events": lambda s: s.events(),
}


@pytest.fixture
def closed(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> SyncAgentSession:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    session = SyncAgentSession.open(workspace, base_url=server.base_url, model="m", api_key="k")
    server.push(text_reply("before closing"))
    assert session.prompt("hi").stop_reason == "completed"  # type: ignore[union-attr]
    unsubscribe = session.subscribe(lambda event: None)
    session.close()
    session.close()  # twice is fine
    unsubscribe()  # nothing left to unsubscribe from: no error either
    return session


@pytest.mark.parametrize("name", list(CALLS))
def test_every_call_after_close_raises_one_clear_error_without_warnings(
    closed: SyncAgentSession, name: str
) -> None:
    # What earlier tests left for the collector (their sockets' ResourceWarnings) is
    # collected before, not counted against this call.
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        message = None
        try:
            CALLS[name](closed)
        except RuntimeError as error:
            message = str(error)
        # A coroutine left never awaited warns when it is collected (the traceback held
        # it until the `except` block ended).
        gc.collect()
    assert message == "this session is closed"
    # This call's own: a coroutine never awaited, a closed loop used.
    assert [str(w.message) for w in caught if not issubclass(w.category, ResourceWarning)] == []
    # What it was stays readable.
    assert closed.session_id and closed.session_file is not None and not closed.is_busy
