"""Going back in the app: Esc Esc and /rewind, /tree, /fork, glued to `SessionRewind`.

What each does, in order (the session's own work runs in workers, off the keys):

1. Only while idle, in a recorded session: a run in progress, or a session that is not
   saved, gets a notice and nothing opens. `SessionRewind` checks again before it
   changes anything (a run may start while a picker is open).
2. /rewind (or Esc twice on an empty idle input): the picker of the branch's user
   messages, then the confirm with what a code restore would change, then the rewind.
   The picker offers "Undo the last code restore" when the session has one.
3. After the conversation moved (a rewind of it, a /tree move): the transcript is drawn
   again from the new branch, as a resume draws it, and the message's text goes into
   the editor: in place of an empty editor, below what is typed there otherwise (never
   over it). A notice says what was restored. The queue is never touched.
4. /fork: the same picker, then a new session holding the branch before the message,
   opened as /resume opens one, with the message's text in the editor.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Literal

from ink_tui.checkpoints import CheckpointError
from ink_tui.core.events import NoticeLevel
from ink_tui.core.sentence import sentence
from ink_tui.session.entries import RewindEntry, UserEntry
from ink_tui.session.rewind import RewindPreview, RewindRefused, RewindResult, SessionRewind
from ink_tui.ui.screens.rewind_confirm import RewindConfirm
from ink_tui.ui.screens.rewind_picker import UNDO_KEY, RewindPicker
from ink_tui.ui.screens.session_picker import first_line
from ink_tui.ui.screens.tree_view import TreeView
from ink_tui.ui.session_replay import replay
from ink_tui.ui.widgets.hint_row import HintRow
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from ink_tui.session.rewind import UserTurn
    from ink_tui.session.session_reader import LoadedSession
    from ink_tui.session.session_tree import SessionTree
    from ink_tui.ui.app_host import AppHost

# The second Escape opens the picker when it comes this soon after the first.
DOUBLE_ESCAPE_S = 0.8
ESCAPE_HINT = "Esc again to rewind"
NOT_SAVED = "This session is not saved: nothing to rewind."
# A message as notices quote it.
QUOTE_WIDTH = 40

Purpose = Literal["rewind", "fork"]


class RewindActions:
    def __init__(self, app: AppHost) -> None:
        self.app = app
        # How soon the second Escape must come, and how long the hint says so (tests on
        # a slow machine widen them).
        self.double_escape_s = DOUBLE_ESCAPE_S
        self.hint_s = DOUBLE_ESCAPE_S
        self._last_escape: float | None = None

    # -- the way in ---------------------------------------------------------------------

    def escape(self) -> None:
        """An Escape while nothing runs (the app interrupts a run itself): on an empty
        input, the first says "Esc again to rewind" and a second soon after opens the
        picker."""
        controller = self.app.controller
        if controller is None or controller.state != "idle" or self.app.prompt.text:
            self._last_escape = None
            return
        now = time.monotonic()
        last, self._last_escape = self._last_escape, now
        if last is not None and now - last <= self.double_escape_s:
            self._last_escape = None
            self.open_picker()
            return
        for hints in self.app.screen.query(HintRow):
            hints.flash(ESCAPE_HINT, self.hint_s)

    def open_picker(self, purpose: Purpose = "rewind") -> None:
        """/rewind (Esc Esc), or /fork: the picker of the branch's user messages."""
        rewind = self._ready(f"/{purpose}")
        if rewind is not None:
            self._work(self._pick(rewind, purpose))

    def open_tree(self) -> None:
        rewind = self._ready("/tree")
        if rewind is not None:
            self._work(self._tree(rewind))

    # -- the steps ----------------------------------------------------------------------

    async def _pick(self, rewind: SessionRewind, purpose: Purpose) -> None:
        turns = await rewind.user_turns()
        undo = _last_file_restore(await rewind.load()) if purpose == "rewind" else None
        can_undo = undo is not None
        if not turns and not can_undo:
            self.say(f"There is no message to {purpose} from yet.")
            return
        if self._running(f"/{purpose}"):
            return
        by_id = {turn.entry_id: turn for turn in turns}

        def chosen(key: str | None) -> None:
            if key == UNDO_KEY:
                self._work(self._undo(rewind))
            elif key is not None and purpose == "fork":
                self._work(self._fork(rewind, by_id[key]))
            elif key is not None:
                self._work(self._confirm(rewind, by_id[key]))

        title = "Rewind to before a message" if purpose == "rewind" else "Fork from a message"
        files = len(undo.files) if undo is not None else 0
        picker = RewindPicker(turns, title=title, can_undo=can_undo, undo_files=files)
        self.app.push_screen(picker, chosen)

    async def _confirm(self, rewind: SessionRewind, turn: UserTurn) -> None:
        note = None
        try:
            preview = await rewind.preview(turn.entry_id)
        except (RewindRefused, CheckpointError) as error:
            # The files cannot be compared (checkpoints off, git gone): the conversation
            # can still go back.
            preview, note = RewindPreview(turn.entry_id, turn.text, None), sentence(str(error))
        if self._running("/rewind"):
            return

        def chosen(restore: str | None) -> None:
            if restore is not None:
                self._work(self._rewind(rewind, turn.entry_id, restore))

        self.app.push_screen(RewindConfirm(preview, note=note), chosen)

    async def _rewind(self, rewind: SessionRewind, entry_id: str, restore: str) -> None:
        result = await rewind.rewind(entry_id, restore)
        if restore != "files":
            await self._redraw(rewind)
            self.put_in_editor(result.text)
        self.say(rewound_notice(restore, result))

    async def _undo(self, rewind: SessionRewind) -> None:
        result = await rewind.undo_files()
        count = len(result.restored_files)
        if count:
            self.say(f"Undid the last code restore: {_files(count)} as they were before it.")
        else:
            self.say("Undid the last code restore: no file had changed since.")

    async def _tree(self, rewind: SessionRewind) -> None:
        loaded = await rewind.load()
        tree = loaded.tree
        if not tree.nodes:
            self.say("This session has nothing to show as a tree yet.")
            return
        if self._running("/tree"):
            return

        def chosen(entry_id: str | None) -> None:
            if entry_id is None:
                return
            if entry_id == tree.leaf_id:
                self.say("The conversation already goes on from there.")
                return
            self._work(self._move(rewind, tree, entry_id))

        self.app.push_screen(TreeView(tree), chosen)

    async def _move(self, rewind: SessionRewind, tree: SessionTree, entry_id: str) -> None:
        result = await rewind.move(entry_id)
        await self._redraw(rewind)
        self.put_in_editor(result.text)
        node = tree.get(entry_id)
        if node is not None and isinstance(node.entry, UserEntry):
            self.say(
                f"Moved to before {quote(result.text)}; its text is in the editor. The "
                "files stay as they are (/rewind restores them)."
            )
        else:
            self.say(
                "Moved to the end of that branch: the conversation goes on from there. "
                "The files stay as they are (/rewind restores them)."
            )

    async def _fork(self, rewind: SessionRewind, turn: UserTurn) -> None:
        if self._running("/fork"):
            return
        binding = self.app.binding
        old_id = binding.writer.id if binding is not None and binding.writer else None
        forked = await rewind.fork(turn.entry_id)
        from ink_tui.ui.startup import read_session

        read = await asyncio.to_thread(read_session, forked.path)
        sessions = self.app.sessions
        if sessions is None or not sessions.open(forked.path, read):
            return
        self.put_in_editor(forked.text)
        kept = f" (/resume {old_id})" if old_id else ""
        self.say(
            f"Forked into the new session {forked.session_id} from before "
            f"{quote(forked.text)}; its text is in the editor. The old session is kept "
            f"as it was{kept}."
        )

    # -- parts --------------------------------------------------------------------------

    async def _redraw(self, rewind: SessionRewind) -> None:
        """The transcript drawn again from the branch the conversation is on now."""
        loaded = await rewind.load()
        transcript = self.transcript
        transcript.clear_view()
        replay(transcript, loaded.entries)
        for warning in loaded.warnings:
            transcript.add_notice(warning, "warning")

    def put_in_editor(self, text: str) -> None:
        """`text` into an empty editor, or below what is typed there: never over it."""
        if not text:
            return
        prompt = self.app.prompt
        if not prompt.text:
            prompt.restore(text)
        else:
            prompt.insert("\n\n" + text, prompt.document.end, maintain_selection_offset=False)
            prompt.move_cursor(prompt.document.end)
        prompt.focus()

    def _ready(self, what: str) -> SessionRewind | None:
        """The session's `SessionRewind` when going back is possible now; else a notice."""
        if self.app.controller is None or self._running(what):
            return None
        binding = self.app.binding
        rewind = binding.rewind if binding is not None else None
        if rewind is None:
            self.say(NOT_SAVED)
        return rewind

    def _running(self, what: str) -> bool:
        controller = self.app.controller
        if controller is not None and controller.state == "running":
            self.say(
                f"{what} waits for an idle moment: interrupt the run (Esc) or let it finish.",
                "warning",
            )
            return True
        return False

    def _work(self, step: Coroutine[Any, Any, None]) -> None:
        async def guarded() -> None:
            try:
                await step
            except (RewindRefused, CheckpointError) as error:
                self.say(f"Could not go back: {sentence(str(error))}", "warning")
            except OSError as error:  # the session file or the workspace's files
                self.say(f"Could not go back: {error}", "error")

        self.app.run_worker(guarded(), group="rewind", exclusive=True, exit_on_error=False)

    @property
    def transcript(self) -> Transcript:
        return self.app.query_one(Transcript)

    def say(self, text: str, level: NoticeLevel = "info") -> None:
        self.transcript.add_notice(text, level)


def _last_file_restore(loaded: LoadedSession) -> RewindEntry | None:
    """The file restore an undo would revert (what `SessionRewind.undo_files` takes)."""
    return next((entry for entry in reversed(loaded.tree.rewinds) if entry.files_from), None)


def quote(text: str) -> str:
    """A message's first line in quotes, cut at a word (with "…") past `QUOTE_WIDTH`."""
    line = first_line(text, 10_000)
    if len(line) > QUOTE_WIDTH:
        cut = line[: QUOTE_WIDTH - 1]
        word_end = cut.rfind(" ")
        line = (cut[:word_end] if word_end > QUOTE_WIDTH // 2 else cut).rstrip() + "…"
    return f"“{line}”"


def _files(count: int) -> str:
    return "1 file" if count == 1 else f"{count} files"


def rewound_notice(restore: str, result: RewindResult) -> str:
    """What a rewind says it did."""
    before = quote(result.text)
    count = len(result.restored_files)
    if restore == "files":
        if not count:
            return f"No file had changed since {before}: nothing to restore."
        return (
            f"Restored {_files(count)} to before {before}; the conversation goes on as it "
            "was. /rewind can undo the code restore."
        )
    editor = " Its text is in the editor." if result.text else ""
    if restore == "conversation":
        return f"Restored the conversation to before {before}; the files stay as they are.{editor}"
    if not count:
        return f"Restored the conversation to before {before}; no file had changed.{editor}"
    return (
        f"Restored {_files(count)} and the conversation to before {before}.{editor} "
        "/rewind can undo the code restore."
    )
