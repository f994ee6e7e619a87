"""`ink -p` with its session: which one, the history it brings, and where it is saved.

What a user gets (the app's `-c`/`-r ID` mean the same, see `session_choice`):

- No session flag: a new session, saved like the app's, so a later `ink -c` carries on.
- `-c` / `-r ID`: the prompt continues that session. The model is sent its history,
  exactly as the app would send it, then the prompt; prompt, answer and tool results are
  appended to the same file. Warnings from reading it (a damaged line skipped, a torn
  last line) go to stderr, one line each, naming the file.
- `-r` without an id: an error, since print mode cannot show a picker. Exit 2.
- `-r ID` matching no session (or several): the lookup's message. Exit 2.
- The session store cannot be written (a file where its folder should be, a read-only
  folder): one line naming the path and the cause, and nothing is run, exit 2, unless
  `--no-session` said not to save anything (then the store is never touched).
- `--no-session` with `-c`/`-r ID`: the history is read, nothing is written.

Everything is checked before the model is called, so a refused run costs nothing.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController
    from ink_tui.control.run_settings import RunSettings
    from ink_tui.extensions.startup import ExtensionOptions
    from ink_tui.session.model_config import ModelConfig
    from ink_tui.session.session_reader import LoadedSession

EXIT_USAGE = 2

NO_PICKER = (
    "-r needs a session id in print mode (it cannot show a picker): ink -r ID -p PROMPT; "
    "`ink -r` in the app lists the sessions, or use -c for the newest"
)


def run_print_session(
    model: ModelConfig,
    workspace: Path,
    prompt: str,
    *,
    settings: RunSettings,
    user_config_dir: Path | None,
    continue_: bool,
    resume: str | None,
    record: bool,
    err: TextIO = sys.stderr,
    extensions: ExtensionOptions | None = None,
) -> int:
    """Run `prompt` in the session the flags name; the process's exit status."""

    from ink_tui.session.session_choice import SessionLookupError, choose_session
    from ink_tui.session.session_reader import SessionFileError, load_session
    from ink_tui.tools.job_exit import guard_exit

    # The `ink` command's process-wide guards (subreaper, exit paths): its entry points
    # install them, before any command can run; building the controller never does.
    guard_exit()

    def say(line: str) -> None:
        err.write(f"ink: {line}\n")
        err.flush()

    if resume == "" and not continue_:
        say(NO_PICKER)
        return EXIT_USAGE
    try:
        choice = choose_session(workspace, continue_=continue_, resume=resume)
    except SessionLookupError as error:
        say(str(error))
        return EXIT_USAGE
    if choice.note:
        say(choice.note)
    loaded: LoadedSession | None = None
    if choice.path is not None:
        try:
            loaded = load_session(choice.path)
        except SessionFileError as error:
            say(f"cannot resume {error}")
            return EXIT_USAGE
        for warning in loaded.warnings:
            say(f"warning: {warning}")
    return asyncio.run(
        _run(model, workspace, prompt, settings, user_config_dir, loaded, record, say, extensions)
    )


async def _run(
    model: ModelConfig,
    workspace: Path,
    prompt: str,
    settings: RunSettings,
    user_config_dir: Path | None,
    loaded: LoadedSession | None,
    record: bool,
    say: Callable[[str], None],
    extensions: ExtensionOptions | None = None,
) -> int:
    from ink_tui.assemble import assemble_controller
    from ink_tui.modes.print_mode import run_print
    from ink_tui.session.recording import record_session
    from ink_tui.session.session_reader import SessionFileError
    from ink_tui.session.session_writer import SessionWriter

    controller = assemble_controller(
        model,
        workspace,
        settings=settings,
        user_config_dir=user_config_dir,
        history=list(loaded.history) if loaded is not None else None,
    )
    # Nobody can answer a question here: a call that would ask is refused (the model is
    # told why; its summary line on stderr says so), unless the policy or a rule allows it.
    controller.approvals.can_ask = False

    def start_extensions(ready: RunController) -> None:
        # Print mode never asks: project extensions load only when trusted (or flagged).
        if extensions is None or not extensions.enabled:
            return
        from ink_tui.extensions.startup import skipped_message
        from ink_tui.extensions.startup import start_extensions as start

        skipped = skipped_message(start(ready, extensions))
        if skipped:
            say(skipped)

    if not record:
        return await run_print(controller, prompt, on_ready=start_extensions)
    try:
        if loaded is not None:
            writer = SessionWriter.open_existing(loaded.path, leaf_id=loaded.leaf_id)
        else:
            writer = SessionWriter.create(workspace, controller.provider.model)
    except (SessionFileError, OSError) as error:
        await controller.aclose()
        say(f"{error}; nothing was run (--no-session runs without saving)")
        return EXIT_USAGE
    with writer:
        record_session(controller, writer, checkpoints=controller.settings.checkpoints)
        return await run_print(controller, prompt, on_ready=start_extensions)
