"""Writing a session file: append-only JSONL, one line per thing that happened.

File format (version 1). UTF-8, one JSON object per line, each line ending in "\\n":

    {"type": "header", "version": 1, "id": "3f9c2a7be01d",
     "started": "2024-05-01T10:15:30.123Z", "workspace": "/abs/path", "model": "gpt-x"}

Every line after the header also has its place in the session's tree (`session_tree`):
`"id"` (12 hex digits), `"parent_id"` (the entry it follows; null for a first one) and
`"ts"` (when it was written, as the header's `started`). A `rewind` line has an id and
no parent: it moves the leaf. Lines from before the tree have none of the three.

    {"type": "user", "kind": "prompt" | "steer" | "follow_up", "content": "...",
     "source": "name", "custom_type": "task" | null}   (source: an extension's message)
    {"type": "assistant", "text": "...", "thinking": "...",
     "tool_calls": [{"id", "name", "arguments": {...}, "raw_arguments": "...",
                     "arguments_error": null | "..."}],
     "finish_reason": "stop" | "tool_calls" | "length" | "content_filter" | "aborted"
                      | "unknown",
     "usage": {"input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens"},
     "model": "..."}
    {"type": "tool_result", "call_id", "tool_name", "content", "is_error",
     "details": {...display only...}, "duration_s": 1.25}
    {"type": "model_change", "model": "..."}
    {"type": "interrupt"}
    {"type": "error", "text": "..."}
    {"type": "compaction", "summary": "...", "first": 0, "end": 12,
     "reason": "threshold" | "manual" | "overflow", "tokens_before", "tokens_after"}
    {"type": "subagent", "agent_id": "agent-1", "parent_call_id": "call_1",
     "description": "...", "stop_reason": "completed" | "stopped" | ...,
     "entries": [user, assistant and tool_result objects as above]}
       (a `task` call's sub-agent, written when it ended; not part of the history)
    {"type": "checkpoint", "commit": "<40 hex>"}
       (the workspace's files before a tool batch that may change them, ink_tui/checkpoints)
    {"type": "rewind", "leaf_id": "..." | null, "restore": "conversation" | "files" |
     "both" | "undo" | "tree", "entry_id": "..." | null, "files_from": null | "<commit>",
     "files_to": null | "<commit>", "files": ["path", ...]}
       (the user went back; the next entry hangs from `leaf_id`; session_tree)

- Every line is strict JSON (RFC 8259): a float that is not finite (a model's `NaN` in
  tool arguments) is written as the string `"NaN"`, `"Infinity"` or `"-Infinity"`, so
  the entry is kept and any parser reads the line; the reader takes bare ones in older
  files the same way.
- Line 1 is always the header. The rest is in the order things happened; the `user`,
  `assistant` and `tool_result` lines of the branch (root to leaf, in file order), are
  the history exactly as the model had it (until a `compaction` line: from there the
  model had its summary in place of the messages before `end`; they stay in the file,
  and the reader builds the compacted history). `details` and `duration_s` only rebuild
  the UI and are never sent back.
- Lines are only ever appended, each with one write and a flush, so a killed process
  leaves at worst a cut-off last line (the reader skips it; `open_existing` trims it
  before appending).
- Where and when the disk is touched: each recording call encodes its entry at once
  (the line holds the entry as it was at that call, whatever later happens to the
  objects it came from) and queues the bytes for the writer's own thread
  (`background_writer`), which writes them in call order. `sync` queues an fsync the
  same way; the recorder asks for one at the end of each turn and run. So nothing of
  it runs on the caller's event loop: a slow fsync never stalls the UI. What is still
  queued when the process is killed is lost, usually a few milliseconds' worth.
- `drain` waits until everything queued is in the file (for code that reads the file
  back at once); `close` waits until it is in the file and fsynced. Only they, and
  `open_existing` when it trims a torn last line, make the caller wait for the disk
  (`create` makes the file there, but its header and fsyncs go to the thread).
- A failed write or fsync (disk full, I/O error) stops the writer: it is logged from the
  thread when it happens, and the next call on the writer (record, sync, drain or
  close) raises it once as `SessionWriteError`, an `OSError`. Raised in the recorder,
  the bus logs it, as it did when writes ran in the callback itself.
- Shell (`!`) runs are not part of the conversation and are not recorded.
- The public events' seq is kept beside the file, not in it (`event_seqs`): it changes
  with every event a program is sent, which is no part of the conversation.
- No credentials: the writer is never given an API key, only the model name.
- One writer per file across processes: `create` and `open_existing` take the session's
  lock (`session_lock`) and `close` lets it go; a session open elsewhere raises
  `SessionLocked` (an `OSError` naming the holder) and nothing is touched.

The store layout (where files live, how they are named) is in `store_paths`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

from ink_tui.core.messages import AssistantMessage, ToolResultMessage, UserMessage, new_entry_id
from ink_tui.session.atomic_file import fsync_dir
from ink_tui.session.background_writer import WriterThread
from ink_tui.session.entries import (
    AssistantEntry,
    CheckpointEntry,
    CompactionEntry,
    Entry,
    ErrorEntry,
    InterruptEntry,
    ModelChangeEntry,
    RewindEntry,
    SessionHeader,
    SubagentEntry,
    ToolResultEntry,
    UserEntry,
    encode_entry,
    encode_header,
    format_timestamp,
)
from ink_tui.session.event_seqs import EventSeqs
from ink_tui.session.json_safe import json_safe_dict, to_json_bytes
from ink_tui.session.session_lock import SessionLock, SessionLocked, acquire
from ink_tui.session.session_reader import SessionFileError, load_session, read_header
from ink_tui.session.store_errors import SessionStoreError
from ink_tui.session.store_paths import (
    canonical_workspace,
    new_session_id,
    session_file_name,
    utc_now,
    workspace_dir,
)
from ink_tui.session.store_paths import utc_now as entry_time

__all__ = [
    "SessionLocked",
    "SessionStoreError",
    "SessionWriteError",
    "SessionWriter",
]

# Conversations can hold secrets from the user's files: keep them private to the user.
_FILE_MODE = 0o600
_DIR_MODE = 0o700
_TAIL_CHUNK = 64 * 1024
_CREATE_ATTEMPTS = 5
# `open_existing` without a leaf: read the file for it.
_READ_LEAF = object()


class SessionWriteError(OSError):
    """Writing the session file failed on the writer's thread; `__cause__` says why."""

    def __init__(self, path: Path, error: BaseException) -> None:
        super().__init__(f"could not save session {path}: {error}; later entries are not saved")
        self.path = path


class SessionWriter:
    """Appends entries to one session file from its own thread.

    Call it from one thread (the event loop); only the writer's thread touches the file.
    """

    def __init__(
        self,
        path: Path,
        header: SessionHeader,
        file: BinaryIO,
        lock: SessionLock | None = None,
        *,
        leaf_id: str | None = None,
    ) -> None:
        self.path = path
        # The entry the next one hangs from (see `session_tree`).
        self.leaf_id = leaf_id
        self._lock = lock
        self.header = header
        # The model new replies come from: the header's, then each model change.
        self.model = header.model
        self._file = file
        self._closed = False
        # Only the writer's thread reads and sets this: whether an fsync has work to do.
        self._unsynced = False
        self._thread = WriterThread(f"session-writer-{header.id}")
        # Read on first use: only front ends for programs number events.
        self._seqs: EventSeqs | None = None

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def event_seqs(self) -> EventSeqs:
        """The session's public event seqs, going on from where it left off (kept in
        `<session>.seq.json`, see `event_seqs`); `close` keeps the last one."""
        if self._seqs is None:
            self._seqs = EventSeqs.load(self.path)
        return self._seqs

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped this writer (see `SessionWriteError`), or None."""
        return self._thread.error

    # -- opening ------------------------------------------------------------------------

    @classmethod
    def create(cls, workspace: Path | str, model: str, root: Path | None = None) -> SessionWriter:
        """Start a new session file for `workspace` in the store (see `store_paths`).

        Raises `SessionStoreError` (an `OSError`) when the store cannot be written.
        """
        folder = workspace_dir(workspace, root)
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=_DIR_MODE)
        except OSError as error:
            # A file where a folder should be, a read-only data folder: say which.
            raise SessionStoreError(folder, error) from error
        started = utc_now()
        for _attempt in range(_CREATE_ATTEMPTS):
            header = SessionHeader(
                id=new_session_id(),
                started=started,
                workspace=str(canonical_workspace(workspace)),
                model=model,
            )
            path = folder / session_file_name(started, header.id)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, _FILE_MODE)
            except FileExistsError:
                continue  # the same millisecond and id: only a new id is needed
            except OSError as error:
                raise SessionStoreError(folder, error) from error
            break
        else:
            raise FileExistsError(f"could not create a new session file in {folder}")
        # Nobody else knows the new id yet, so this cannot be refused in practice.
        try:
            lock = acquire(path)
        except SessionLocked:
            os.close(fd)
            raise
        writer = cls(path, header, os.fdopen(fd, "ab"), lock)
        writer._write(encode_header(header))
        writer.sync()
        # The file's name must survive a crash too, not only its contents.
        writer._submit(partial(fsync_dir, folder))
        return writer

    @classmethod
    def open_existing(
        cls, path: Path, *, leaf_id: str | object | None = _READ_LEAF
    ) -> SessionWriter:
        """Append to a saved session (resuming it). Raises `SessionFileError`, or
        `SessionStoreError` when the file cannot be written.

        `leaf_id` is where the next entry hangs (`LoadedSession.leaf_id`, from the read
        that resuming does anyway); without it the file is read for it.

        A cut-off last line is trimmed first: appending after it would glue the next
        entry onto it and turn a harmless torn tail into a damaged line mid-file.
        """
        header = read_header(path)
        # Before the tail repair: trimming a file another process appends to would cut
        # its last line.
        lock = acquire(path)
        try:
            _repair_tail(path)
            file = open(path, "ab")  # noqa: SIM115 (owned by the writer)
        except OSError as error:
            if lock is not None:
                lock.release()
            raise SessionStoreError(path, error, is_folder=False) from error
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        if leaf_id is _READ_LEAF:
            leaf_id = load_session(path).leaf_id
        return cls(path, header, file, lock, leaf_id=leaf_id if isinstance(leaf_id, str) else None)

    # -- recording ----------------------------------------------------------------------

    def append(self, entry: Entry, *, entry_id: str | None = None) -> str:
        """Queue one entry as a line; the thread writes and flushes it to the OS.

        Returns its id. A node of the tree hangs from the leaf and becomes the leaf; a
        `RewindEntry` moves the leaf to its `leaf_id` (see `session_tree`)."""
        if isinstance(entry, ModelChangeEntry):
            self.model = entry.model
        new_id = entry_id or new_entry_id()
        place: dict[str, Any] = {"id": new_id}
        if isinstance(entry, RewindEntry):
            leaf = entry.leaf_id
        else:
            place["parent_id"] = self.leaf_id
            leaf = new_id
        place["ts"] = format_timestamp(entry_time())
        encoded = encode_entry(entry)
        self._write({"type": encoded.pop("type"), **place, **encoded})
        self.leaf_id = leaf
        return new_id

    def record_user(self, message: UserMessage) -> None:
        self.append(UserEntry(message), entry_id=message.entry_id)

    def record_assistant(self, message: AssistantMessage) -> None:
        self.append(AssistantEntry(message))

    def record_tool_result(
        self,
        message: ToolResultMessage,
        details: dict[str, Any] | None = None,
        duration_s: float = 0.0,
    ) -> None:
        duration = duration_s if math.isfinite(duration_s) else 0.0
        self.append(ToolResultEntry(message, json_safe_dict(details or {}), duration))

    def record_model_change(self, model: str) -> None:
        self.append(ModelChangeEntry(model))

    def record_interrupt(self) -> None:
        self.append(InterruptEntry())

    def record_error(self, text: str) -> None:
        self.append(ErrorEntry(text))

    def record_compaction(self, entry: CompactionEntry) -> None:
        self.append(entry)

    def record_subagent(self, entry: SubagentEntry) -> None:
        self.append(entry)

    def record_checkpoint(self, commit: str) -> None:
        self.append(CheckpointEntry(commit))

    def sync(self) -> None:
        """Queue an fsync of everything recorded so far; returns at once."""
        if self.closed:
            return
        self._submit(self._fsync)

    def drain(self, *, sync: bool = False) -> None:
        """Wait until everything recorded so far is in the file (and fsynced, if `sync`).

        For code that reads the file back right away; raises `SessionWriteError` if the
        thread failed and that was not reported yet.
        """
        if not self.closed:
            if sync:
                self.sync()
            self._thread.drain()
        self._raise_failure()

    def close(self) -> None:
        """Write and fsync everything queued, then close the file."""
        if self.closed:
            return
        self._closed = True
        if self._seqs is not None:
            # Before the lock goes: the next holder reads it.
            self._seqs.close()
        try:
            if self._thread.running:
                self._thread.submit(self._fsync)
                self._thread.stop()
            elif self.failure is None:
                # Stopped by the interpreter's exit hook: no thread left to race with.
                self._fsync()
        finally:
            try:
                self._close_file()
            finally:
                if self._lock is not None:
                    self._lock.release()
        self._raise_failure()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- on the caller's thread -----------------------------------------------------------

    def _write(self, obj: dict[str, Any]) -> None:
        if self.closed:
            raise ValueError(f"session {self.path} is closed")
        # Encoded here, not on the thread: the line must be the entry as it is now.
        self._submit(partial(self._write_line, to_json_bytes(obj) + b"\n"))

    def _submit(self, job: Callable[[], object]) -> None:
        self._raise_failure()
        self._thread.submit(job)

    def _raise_failure(self) -> None:
        error = self._thread.take_error()
        if error is not None:
            raise SessionWriteError(self.path, error) from error

    def _close_file(self) -> None:
        try:
            self._file.close()
        except OSError:
            # A failed write leaves its bytes in the buffer and closing retries them:
            # the same failure, which the thread logged and `close` raises if needed.
            if self.failure is None:
                raise

    # -- on the writer's thread ----------------------------------------------------------

    def _write_line(self, line: bytes) -> None:
        # One write per line: a kill can cut the last line short but never interleave.
        self._file.write(line)
        self._file.flush()
        self._unsynced = True

    def _fsync(self) -> None:
        # Skipped when nothing was written since the last one: a run's end follows its
        # last turn's end, and `close` follows both; each would cost a disk flush.
        if self._unsynced:
            os.fsync(self._file.fileno())
            self._unsynced = False


def _repair_tail(path: Path) -> None:
    """End the file on a complete line: finish a whole last object, drop a torn one."""
    with open(path, "r+b") as file:
        size = file.seek(0, os.SEEK_END)
        if size == 0:
            raise SessionFileError(path, "the file is empty: it has no session header")
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return
        start = _last_line_start(file, size)
        file.seek(start)
        last = file.read(size - start)
        try:
            json.loads(last)
            whole = True
        except ValueError:
            whole = False
        if whole:
            file.seek(size)
            file.write(b"\n")
        else:
            file.truncate(start)
        file.flush()
        os.fsync(file.fileno())


def _last_line_start(file: BinaryIO, size: int) -> int:
    """The offset just after the last "\\n" before `size` (0 when there is none)."""
    end = size
    while end > 0:
        begin = max(0, end - _TAIL_CHUNK)
        file.seek(begin)
        newline = file.read(end - begin).rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0
