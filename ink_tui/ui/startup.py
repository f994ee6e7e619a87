"""Which session the app opens, and switching sessions while it runs.

`plan_session` decides from the flags before the app starts (`-c`, `-r ID`, `-r`,
`--no-session`), so a bad id is a plain error on the command line. `AppSessions` carries
the plan out after the first frame and serves `/new` and `/resume` later: it loads the
file, gives the controller the same history the model had, redraws the transcript and
puts back queued input that a crash left behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ink_tui.control.controller import RunController
    from ink_tui.core.messages import AssistantMessage
    from ink_tui.session.entries import Entry
    from ink_tui.session.session_reader import LoadedSession
    from ink_tui.session.session_writer import SessionWriter
    from ink_tui.ui.session_binding import SessionBinding
    from ink_tui.ui.widgets.prompt_input import PromptInput
    from ink_tui.ui.widgets.transcript import Transcript


@dataclass(frozen=True, slots=True)
class SessionPlan:
    # new: a fresh session; resume: `path`; pick: ask with the picker; off: --no-session.
    mode: Literal["new", "resume", "pick", "off"]
    path: Path | None = None
    note: str | None = None


def plan_session(
    workspace: Path, *, continue_: bool, resume: str | None, enabled: bool
) -> SessionPlan | str:
    """The plan, or an error message for the command line."""
    if not enabled:
        return SessionPlan("off", note="--no-session: nothing of this session is saved.")
    if resume == "" and not continue_:
        return SessionPlan("pick")
    if not continue_ and resume is None:
        return SessionPlan("new")
    # Only a resume reads the store (headers only: `catalog.find_session_path`); a plain
    # start does not pay for it before the first frame.
    from ink_tui.session.session_choice import SessionLookupError, choose_session

    try:
        choice = choose_session(workspace, continue_=continue_, resume=resume)
    except SessionLookupError as error:
        return str(error)
    if choice.path is None:
        return SessionPlan("new", note=choice.note)
    path, note = choice.path, choice.note
    from ink_tui.session.session_lock import SessionLocked, check_unlocked

    try:
        # Refused before the app starts, rather than shown and then not saved.
        check_unlocked(path)
    except SessionLocked as error:
        return str(error)
    return SessionPlan("resume", path, note=note)


def read_planned_session(plan: SessionPlan) -> LoadedSession | Exception | None:
    """The session `ink -c`/`-r` resumes (a big one takes a while to parse: on a thread)."""
    if plan.mode != "resume" or plan.path is None:
        return None
    return read_session(plan.path)


def read_planned_tail(plan: SessionPlan, screen: tuple[int, int] | None = None) -> list[Entry]:
    """The last entries of the session `ink -c`/`-r` resumes, to show while the rest is
    read (on a thread), as many as fill `screen` (width, height); none when there is no
    such session or its end does not read."""
    if plan.mode != "resume" or plan.path is None:
        return []
    from ink_tui.ui.session_tail import read_tail

    try:
        return read_tail(plan.path, screen=screen)
    except OSError:
        return []  # the full read says why


def read_input_history(
    plan: SessionPlan, workspace: Path, root: Path | None
) -> tuple[list[str], str | None]:
    """The saved input history, and why it could not be read (if so); on a thread."""
    if plan.mode == "off":
        return [], None
    from ink_tui.session.input_history_store import InputHistoryStore

    store = InputHistoryStore(workspace, root=root)
    return store.load(), store.warning


def read_session(path: Path, writing: SessionWriter | None = None) -> LoadedSession | Exception:
    """`path` read (on a worker thread), or the error that kept it from being read.

    `writing` is the session being written, which may be `path` itself (`/resume` with
    its own id): its last entries may still wait on its thread, so it is drained first.
    """
    from ink_tui.session.session_reader import SessionFileError, load_session

    try:
        if writing is not None:
            writing.drain()
        return load_session(path)
    except (SessionFileError, OSError) as error:
        return error


class AppSessions:
    """Opens and switches sessions for the app; the app only calls it."""

    def __init__(
        self,
        binding: SessionBinding | None,
        controller: RunController,
        transcript: Transcript,
        prompt: PromptInput,
        on_usage: Callable[[Sequence[AssistantMessage]], None] | None = None,
    ) -> None:
        self.binding = binding
        self.controller = controller
        self.transcript = transcript
        self.prompt = prompt
        # Told the session's recorded replies whenever the session changes: its token
        # and cost counters start again from them (none for a new session).
        self.on_usage = on_usage

    @property
    def path(self) -> Path | None:
        return self.binding.path if self.binding is not None else None

    def start(
        self,
        plan: SessionPlan,
        read: LoadedSession | Exception | None = None,
        *,
        shown: bool = False,
    ) -> None:
        """Carry the plan out; `read` is the planned session, already read on a thread,
        and `shown` says it is already drawn (`show_session`, before the controller)."""
        if plan.note:
            self.transcript.add_notice(plan.note)
        if plan.mode == "resume" and plan.path is not None:
            loaded = read if read is not None else read_session(plan.path)
            if shown and not isinstance(loaded, Exception):
                self._continue(loaded)
            else:
                self.open(plan.path, loaded)
        else:
            self._start_file()

    def _start_file(self) -> None:
        """A new session file; if the store cannot be written, say so and go on unsaved."""
        if self.binding is None:
            return
        try:
            self.binding.start_new(self.controller.provider.model)
        except OSError as error:
            self._not_saved(error)

    def _not_saved(self, error: OSError) -> None:
        # The conversation goes on; only its record on disk is missing, and the user must
        # know before relying on `ink -c` or /resume to get it back.
        self.transcript.add_notice(
            f"This session is not being saved: {error}. "
            "It works as usual, but /resume and ink -c will not find it.",
            "warning",
        )

    def new(self) -> None:
        """A fresh conversation: empty history, empty screen, a new file."""
        self.controller.history.clear()
        if self.on_usage is not None:
            self.on_usage(())
        self.transcript.clear_view()
        self._start_file()
        self.transcript.add_notice("New session.")

    def open(self, path: Path, read: LoadedSession | Exception) -> bool:
        """Show the session in `path`, read off the UI loop by `read_session`; False (with
        a notice saying why) if it could not be read."""
        if isinstance(read, Exception):
            self.transcript.add_notice(f"Could not resume {path}: {read}", "error")
            if self.binding is not None and self.binding.writer is None:
                self._start_file()
            return False
        from ink_tui.ui.session_replay import show_session

        show_session(self.transcript, read)
        self._continue(read)
        return True

    def _continue(self, loaded: LoadedSession) -> None:
        """The model's history, and the file (with its queued input) to go on writing."""
        self.controller.history[:] = loaded.history
        if self.on_usage is not None:
            self.on_usage(loaded.replies)
        if self.binding is None:
            return
        try:
            pending = self.binding.resume(loaded)
        except OSError as error:
            self._not_saved(error)
            return
        if pending.warning:
            self.transcript.add_notice(pending.warning, "warning")
        if not pending.empty:
            text, _ = pending.restore_text()
            # The saved draft is part of `text`; what is in the box now goes below it.
            self.prompt.restore(text)
            queued = sum(1 for entry in pending.entries if entry.text.strip())
            self.transcript.add_notice(restored_notice(queued, bool(pending.draft.strip())))


def restored_notice(queued: int, draft: bool) -> str:
    """What a resume says it put back into the editor: `queued` (non-blank) queued
    inputs and, with `draft`, the text that was being typed."""
    parts = [f"{queued} queued {'input' if queued == 1 else 'inputs'}"] if queued else []
    if draft or not parts:
        parts.append("the unsent text")
    return f"Restored {' and '.join(parts)} from when the app last stopped."
