"""Building a session's parts from the config, as the `ink` command does.

Runs on a worker thread (it reads config and session files), so nothing here touches
an event loop.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ink_tui.api.subagents import RecordedAgent
    from ink_tui.control.controller import RunController
    from ink_tui.session.rewind import SessionRewind
    from ink_tui.session.session_writer import SessionWriter


class ModelConfigError(ValueError):
    """A model was configured but cannot be used; `str()` says what and where."""


@dataclass(slots=True)
class SessionParts:
    controller: RunController
    session_id: str
    writer: SessionWriter | None
    warnings: list[str] = field(default_factory=list)
    # The user config folder the config came from (its `extensions/` folder).
    config_dir: Path | None = None
    # A resumed session's recorded sub-agents (its file's `subagent` entries).
    subagents: list[RecordedAgent] = field(default_factory=list)
    # Going back in it (None: not recorded).
    rewind: SessionRewind | None = None


def open_parts(
    workspace: Path,
    *,
    flags: dict[str, Any],
    resume: str | None = None,
    continue_: bool = False,
    record: bool = True,
) -> SessionParts:
    """Raises `ModelConfigError` for a configured model that cannot be used,
    `SessionLookupError` for an unknown id, `SessionFileError` for a file that cannot be
    read, `SessionLocked` for a session another process has open, `OSError` (a
    `SessionStoreError` names path and cause) when the session store cannot be written."""
    from ink_tui.api.subagents import recorded_agents
    from ink_tui.assemble import assemble_controller
    from ink_tui.session.config import load_config
    from ink_tui.session.model_errors import render_model_errors
    from ink_tui.session.recording import record_session
    from ink_tui.session.session_choice import choose_session
    from ink_tui.session.session_reader import load_session
    from ink_tui.session.session_writer import SessionWriter

    workspace = workspace.expanduser().resolve()
    if not workspace.is_dir():
        raise NotADirectoryError(f"workspace {workspace} is not a folder")
    config = load_config(workspace, flags={k: v for k, v in flags.items() if v is not None})
    if config.model_errors:
        # Never the demo in its place: its answers would pass for the configured model's.
        raise ModelConfigError("\n".join(render_model_errors(config)))
    warnings = [p for p in config.problems if p not in config.model_errors]

    choice = choose_session(workspace, continue_=continue_, resume=resume)
    if record and choice.path is not None:
        from ink_tui.session.session_lock import check_unlocked

        # Refused before anything is built: a session open in another process (TUI,
        # print, RPC, serve) raises `SessionLocked` naming it.
        check_unlocked(choice.path)
    if choice.note:
        warnings.append(choice.note)
    loaded = load_session(choice.path) if choice.path is not None else None
    if loaded is not None:
        warnings.extend(loaded.warnings)

    settings = config.run_settings()
    if not config.source("approval.policy").startswith("flag"):
        # A program answers questions only if it says so (`approval="ask"`, `--approval`):
        # the config file's policy is the person's, for the TUI and print mode.
        settings.approval = "auto"
    controller = assemble_controller(
        config.model_config(),
        workspace,
        settings=settings,
        history=list(loaded.history) if loaded is not None else None,
        user_config_dir=config.user_config_dir,
    )
    writer: SessionWriter | None = None
    rewind: SessionRewind | None = None
    if record:
        if loaded is not None:
            writer = SessionWriter.open_existing(loaded.path, leaf_id=loaded.leaf_id)
        else:
            writer = SessionWriter.create(workspace, controller.provider.model)
        rewind = record_session(controller, writer, checkpoints=settings.checkpoints).rewind
    if writer is not None:
        session_id = writer.id
    elif loaded is not None:
        session_id = loaded.id
    else:
        session_id = uuid.uuid4().hex[:12]
    return SessionParts(
        controller,
        session_id,
        writer,
        warnings,
        config.user_config_dir,
        recorded_agents(loaded.subagents) if loaded is not None else [],
        rewind,
    )
