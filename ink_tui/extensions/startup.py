"""Starting a session's extensions, the same way in every front end.

`start_extensions` loads the user's extensions and the project's when its folder is
trusted (or `--trust-extensions` says so for this run). What it could not load for lack
of trust comes back as `pending`: the app asks the user (`allow_project`), print and RPC
modes never ask and say on stderr what they skipped (`skipped_message`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ink_tui.extensions.discovery import find_extensions
from ink_tui.extensions.host import ExtensionHost, SubscribePublic
from ink_tui.extensions.trust import TrustStore
from ink_tui.session.config_files import display_path

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController


@dataclass(frozen=True, slots=True)
class ExtensionOptions:
    enabled: bool = True
    # Load the project's extensions without asking, for this run only (nothing is stored).
    trust_project: bool = False
    # Where the user's extensions are (`<dir>/extensions`); None: the user config dir.
    config_dir: Path | None = None
    # The trust store's file; None: the user data dir.
    trust_file: Path | None = None


@dataclass(slots=True)
class Started:
    host: ExtensionHost | None = None
    # Project extensions waiting for the user's trust, and their folder.
    pending: list[Path] = field(default_factory=list)
    pending_dir: Path | None = None


def start_extensions(
    controller: RunController,
    options: ExtensionOptions,
    *,
    session_id: str = "",
    reserved_commands: Iterable[str] = (),
    public_events: SubscribePublic | None = None,
) -> Started:
    if not options.enabled:
        return Started()
    found = find_extensions(controller.workspace, options.config_dir)
    if not found.any:
        return Started()
    host = ExtensionHost(
        controller,
        session_id=session_id,
        reserved_commands=reserved_commands,
        public_events=public_events,
    )
    host.load_all(found.user)
    started = Started(host)
    if found.project and found.project_dir is not None:
        store = TrustStore(options.trust_file)
        if options.trust_project or store.is_trusted(found.project_dir):
            host.load_all(found.project)
        else:
            started.pending = found.project
            started.pending_dir = found.project_dir
    return started


def allow_project(started: Started, options: ExtensionOptions) -> str | None:
    """The user trusts the pending folder: remember it and load its extensions. Returns
    a warning when the answer could not be stored (they load all the same)."""
    if started.host is None or started.pending_dir is None:
        return None
    warning = None
    try:
        TrustStore(options.trust_file).trust(started.pending_dir)
    except OSError as error:
        warning = f"Could not remember trusting {display_path(started.pending_dir)}: {error}"
    started.host.load_all(started.pending)
    started.pending, started.pending_dir = [], None
    return warning


def pending_names(started: Started) -> str:
    return ", ".join(path.name for path in started.pending)


def skipped_message(started: Started) -> str | None:
    """What a front end that never asks says about the project extensions it skipped."""
    if not started.pending or started.pending_dir is None:
        return None
    count = len(started.pending)
    return (
        f"skipped {count} project {'extension' if count == 1 else 'extensions'} in "
        f"{display_path(started.pending_dir)} ({pending_names(started)}): that folder is "
        "not trusted. Start `ink` there once to allow them, or pass --trust-extensions."
    )
