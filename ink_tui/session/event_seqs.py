"""A session's event `seq`, never handed out twice: across reopen and process restart.

Programs resume a stream by the last seq they saw (SSE `Last-Event-ID`), so a seq that
starts again at 1 when a session is reopened would make them skip the new events as
already seen. The seq is therefore kept with the session, in `<session>.seq.json`
beside `<session>.jsonl`:

    {"version": 1, "last_seq": 2000}

- `last_seq` is the highest seq that may have been handed out. A reopened session goes
  on from the one after it.
- Seqs are reserved a block (`BLOCK`) at a time: the file is rewritten before the
  first seq of a block is handed out, so a killed process can only leave seqs unused,
  never used twice. Closing the session writes the exact last one, so a clean reopen
  goes on without a hole (a client that had everything sees no gap).
- The write is a small file replaced with a rename, on the caller's thread once per
  block; no fsync (it survives a killed process; like the session file's last lines,
  a power loss may take it back).
- A missing file starts at 0 (a session no program has listened to yet, or one from a
  version that did not keep it); so does a damaged one, with a warning in the log. A
  failed write is logged once and the seqs go on in memory: the session is never
  stopped over this.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from pathlib import Path

from ink_tui.session.store_paths import SESSION_SUFFIX

log = logging.getLogger(__name__)

SEQ_SUFFIX = ".seq.json"
SEQ_VERSION = 1
BLOCK = 1000


def seq_path(session_path: Path) -> Path:
    """`<session>.seq.json` beside the session; never matches `*.jsonl` listings."""
    name = session_path.name
    stem = name[: -len(SESSION_SUFFIX)] if name.endswith(SESSION_SUFFIX) else name
    return session_path.with_name(stem + SEQ_SUFFIX)


def read_last_seq(path: Path) -> int:
    """The `last_seq` kept in `path` (a `.seq.json`), 0 when there is none."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return 0
    except OSError as error:
        log.warning("cannot read %s (%s): event seqs start again at 1", path, error)
        return 0
    try:
        value = json.loads(raw)["last_seq"]
    except (ValueError, TypeError, KeyError):
        value = None
    if type(value) is not int or value < 0:
        log.warning("%s is damaged: event seqs start again at 1", path)
        return 0
    return value


class EventSeqs:
    """Hands out one session's seqs (see the module). One thread at a time."""

    def __init__(self, path: Path, last: int = 0, block: int = BLOCK) -> None:
        self.path = path
        self._last = last
        # Seqs up to here are on disk as possibly used.
        self._reserved = last
        self._block = max(1, block)
        self._failed = False

    @classmethod
    def load(cls, session_path: Path, block: int = BLOCK) -> EventSeqs:
        path = seq_path(session_path)
        return cls(path, read_last_seq(path), block)

    @property
    def last(self) -> int:
        """The last seq handed out (or kept from before): the next is one more."""
        return self._last

    def next(self) -> int:
        self._last += 1
        if self._last > self._reserved:
            self._write(self._last + self._block - 1)
        return self._last

    def close(self) -> None:
        """Keep exactly the last seq: a clean reopen goes on right after it."""
        if self._reserved != self._last:
            self._write(self._last)

    def _write(self, last_seq: int) -> None:
        # Counted as reserved even if the write fails: not retried on every event.
        self._reserved = last_seq
        data = json.dumps({"version": SEQ_VERSION, "last_seq": last_seq}).encode()
        try:
            fd, temp = tempfile.mkstemp(
                dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
            )
        except OSError as error:
            self._warn(error)
            return
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temp, self.path)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            self._warn(error)

    def _warn(self, error: OSError) -> None:
        if not self._failed:
            self._failed = True
            log.warning(
                "cannot keep the event seq in %s (%s): after a restart seqs may repeat",
                self.path,
                error,
            )
