"""Recording a session: the recorder on the bus, the files' checkpoints, going back.

Every front end that records a session (the TUI, print mode, the Python API and with it
RPC and `ink serve`) calls `record_session` once it has the session's writer, so each
records the same entries, takes the same checkpoints before tool batches, and goes back
through the same `SessionRewind`.

Checkpoints need a recorded session (a rewind names its messages) and git; without git
the store reports it at the first batch, which the run survives (control/checkpointing.py).
`checkpoints=False` takes none (`--no-checkpoints`, `checkpoints.enabled = "off"`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ink_tui.session.rewind import SessionRewind
from ink_tui.session.session_recorder import SessionRecorder
from ink_tui.session.session_writer import SessionWriter

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController


@dataclass(slots=True)
class Recording:
    rewind: SessionRewind
    stop: Callable[[], None]


def record_session(
    controller: RunController,
    writer: SessionWriter,
    *,
    root: Path | None = None,
    checkpoints: bool = True,
) -> Recording:
    """Record `controller`'s events into `writer`, with checkpoints unless told not to;
    `stop()` ends both (the writer is the caller's to close)."""
    unsubscribe = controller.bus.subscribe(SessionRecorder(writer))
    store = None
    if checkpoints:
        from ink_tui.checkpoints import CheckpointStore

        store = CheckpointStore.for_workspace(controller.workspace, session_id=writer.id, root=root)
    controller.checkpoints.store = store

    def stop() -> None:
        unsubscribe()
        if controller.checkpoints.store is store:
            controller.checkpoints.store = None

    return Recording(SessionRewind(controller, writer, store, root=root), stop)
