"""Workspace checkpoints in a git object store of their own, outside the workspace.

One store per workspace (`for_workspace`: `<data>/checkpoints/<workspace-slug>.git`),
shared by every session of that workspace; each session has its own index file
(`index-<session_id>`) and its own ref (`refs/ink/<session_id>`). The workspace is only
ever the store's work tree: the user's repository, its index, branches, stash and config
are never read or written (git_command.py says how git is kept away from them).

A snapshot, in order:

1. Create the store on first use (`git init`, then `info/attributes` that turn off every
   conversion and filter, so files are stored and restored byte for byte).
2. A session without an index file starts from a copy of the newest other session's
   index: its stat data makes the first snapshot incremental too.
3. `git ls-files -o -m -d --exclude-standard` lists what is new, changed or gone since
   the index (a `lstat` per indexed file, a walk that honours `.gitignore`; the
   workspace's own `.git` is never entered).
4. limits.py sorts that list: too big or unreadable (named in `skipped`), special files
   and nested repositories left out, and the whole snapshot refused past the limits.
5. `git update-index` hashes only the listed paths (and takes gone or left-out ones out);
   when a `.gitignore` changed, files it now ignores are taken out too.
6. `git write-tree`. The same tree as the session's newest checkpoint returns that
   commit; otherwise a new commit whose parent is it, and `refs/ink/<session_id>` moves
   to it, so every checkpoint stays reachable.

A restore snapshots first (`Restored.before`, the undo point: restoring it undoes the
restore), then applies `diff(before, target)`: deletions first (and the directories they
leave empty), then writes of files and symbolic links with their modes
(workspace_files.py). Left as they are: files over `max_file_bytes`, ignored files, and
anything a checkpoint does not capture (empty directories, nested repositories). A path
whose parent directory is a symbolic link that the restore does not itself remove is
refused: CheckpointError before any file is touched, naming the path and the link.

Operations of one store are serialized (an asyncio lock), and across processes per
session (a `flock`): holding it, a git `*.lock` of this session's index or ref is known
to be stale (a killed git's) and removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import secrets
import shutil
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path

from ink_tui.checkpoints.errors import CheckpointError
from ink_tui.checkpoints.git_command import GitCommand, GitFailed
from ink_tui.checkpoints.limits import CheckpointLimits, plan_snapshot
from ink_tui.checkpoints.tree_diff import (
    DIFF_ARGS,
    MODE_EXECUTABLE,
    MODE_SYMLINK,
    FileChange,
    TreeChange,
    parse_diff,
)
from ink_tui.checkpoints.workspace_files import UnsafePath, WorkspaceFiles
from ink_tui.core.abort import AbortSignal
from ink_tui.session.store_paths import data_root, workspace_slug

_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COMMIT_ID = re.compile(r"[0-9a-f]{4,64}")
REF_PREFIX = "refs/ink/"

# Highest precedence of all attribute files: whatever a workspace `.gitattributes` says,
# no end-of-line conversion, no ident expansion, no filter, no re-encoding.
ATTRIBUTES = (
    b"# Written by ink: checkpoints keep files byte for byte.\n"
    b"* -text !eol -ident -filter !working-tree-encoding\n"
)
# Restored files arrive in batches of about this many bytes, each written in one thread
# hop (a hop per file would cost more than the write).
_WRITE_BATCH_BYTES = 4 * 1024 * 1024
_WRITE_BATCH_FILES = 512
# From this many files to hash, a snapshot writes them as one pack (see `_snapshot`).
_BULK_FILES = 100


@dataclass(frozen=True, slots=True)
class Restored:
    before: str  # the checkpoint taken of the workspace just before restoring (undo point)
    changes: list[FileChange]  # what the restore did, as diff(before, target)


@dataclass(frozen=True, slots=True)
class _Head:
    commit: str
    tree: str


class CheckpointStore:
    def __init__(
        self,
        workspace: Path,
        store_dir: Path,
        *,
        session_id: str,
        limits: CheckpointLimits = CheckpointLimits(),  # noqa: B008 (frozen: shared safely)
    ) -> None:
        if not _SESSION_ID.fullmatch(session_id):
            raise ValueError(f"session id {session_id!r}: letters, digits, '_' and '-' only")
        self.workspace = Path(os.path.realpath(workspace))
        self.store_dir = Path(os.path.abspath(store_dir))
        self.session_id = session_id
        self.limits = limits
        self._index = self.store_dir / f"index-{session_id}"
        self._ref = REF_PREFIX + session_id
        self._git = GitCommand(self.store_dir, self.workspace, self._index)
        self._files = WorkspaceFiles(self.workspace)
        self._lock = asyncio.Lock()
        self._ready = False
        self._head: _Head | None = None
        self._head_read = False
        self._skipped: list[str] = []

    @classmethod
    def for_workspace(
        cls,
        workspace: Path,
        *,
        session_id: str,
        root: Path | None = None,
        limits: CheckpointLimits = CheckpointLimits(),  # noqa: B008 (frozen: shared safely)
    ) -> CheckpointStore:
        """store_dir = ink_tui.session.store_paths.data_root(root) / "checkpoints" /
        (workspace_slug(workspace) + ".git")"""
        store_dir = data_root(root) / "checkpoints" / (workspace_slug(workspace) + ".git")
        return cls(workspace, store_dir, session_id=session_id, limits=limits)

    @property
    def skipped(self) -> list[str]:
        """Paths the last snapshot left out: over `max_file_bytes`, or unreadable."""
        return list(self._skipped)

    async def snapshot(self, signal: AbortSignal | None = None) -> str:
        """Checkpoint the workspace now; returns the commit id (module doc, steps 1-6).

        An abort of `signal` kills git and raises AbortError; CheckpointError when git is
        missing, the store is not writable or a limit is passed (the message says which).
        """
        if signal is None:
            return await self._exclusive_snapshot()
        async with signal.scope():
            return await self._exclusive_snapshot()

    async def diff(self, from_commit: str, to_commit: str) -> list[FileChange]:
        """What changes going from `from_commit` to `to_commit`, by path."""
        return [item.change for item in await self._tree_diff(from_commit, to_commit)]

    async def restore(self, commit: str) -> Restored:
        """Make the workspace's files as they were at `commit` (module doc)."""
        async with self._exclusive():
            target = await self._resolve(commit)
            before = await self._snapshot()
            changes = parse_diff(await self._run(*DIFF_ARGS, before, target))
            applied = await self._apply(changes)
        return Restored(before, applied)

    # Snapshot.

    async def _exclusive_snapshot(self) -> str:
        async with self._exclusive():
            return await self._snapshot()

    async def _snapshot(self) -> str:
        await asyncio.to_thread(self._seed_index)
        listing = await self._run("ls-files", "-z", "-t", "-o", "-m", "-d", "--exclude-standard")
        listed = _parse_listing(listing)
        plan = await asyncio.to_thread(plan_snapshot, self.workspace, listed, self.limits)
        if plan.drop:
            await self._run("update-index", "-z", "--force-remove", "--stdin", stdin=_z(plan.drop))
        if plan.update:
            # Many new files go into one pack (git's bulk check-in, for files over
            # bigFileThreshold) rather than a loose object file each: the first snapshot
            # of a big workspace is several times faster. Few stay loose, so that
            # incremental snapshots do not pile up tiny packs.
            bulk = ["core.bigFileThreshold=1"] if len(plan.update) >= _BULK_FILES else []
            await self._run(
                "update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                stdin=_z(plan.update), config=bulk,
            )  # fmt: skip
        if any(path.rsplit("/", 1)[-1] == ".gitignore" for path, _ in listed):
            ignored = await self._run("ls-files", "-z", "-c", "-i", "--exclude-standard")
            if ignored:
                await self._run("update-index", "-z", "--force-remove", "--stdin", stdin=ignored)
        self._skipped = plan.skipped
        tree = (await self._run("write-tree")).decode().strip()
        head = await self._read_head()
        if head is not None and head.tree == tree:
            return head.commit
        parent = ["-p", head.commit] if head is not None else []
        message = f"ink checkpoint (session {self.session_id})"
        commit_out = await self._run("commit-tree", "--no-gpg-sign", *parent, "-m", message, tree)
        commit = commit_out.decode().strip()
        await self._run("update-ref", self._ref, commit, head.commit if head else "")
        self._head = _Head(commit, tree)
        return commit

    def _seed_index(self) -> None:
        if self._index.exists():
            return
        others = [
            path
            for path in self.store_dir.glob("index-*")
            if not path.name.endswith(".lock") and path != self._index and path.is_file()
        ]
        if not others:
            return
        newest = max(others, key=lambda path: path.stat().st_mtime_ns)
        temp = self._index.with_name(f".{self._index.name}.seed")
        try:
            shutil.copyfile(newest, temp)
            os.replace(temp, self._index)
        except FileNotFoundError:
            # The other session's index was replaced meanwhile: start empty instead.
            temp.unlink(missing_ok=True)

    async def _read_head(self) -> _Head | None:
        if not self._head_read:
            out = await self._run(
                "for-each-ref", "--format=%(refname) %(objectname) %(tree)", self._ref
            )
            for line in out.decode().splitlines():
                name, commit, tree = line.split()
                if name == self._ref:
                    self._head = _Head(commit, tree)
            self._head_read = True
        return self._head

    # Diff and restore.

    async def _resolve(self, commit: str) -> str:
        if not _COMMIT_ID.fullmatch(commit):
            raise CheckpointError(f"{commit!r} is not a checkpoint id.")
        await self._ensure()
        try:
            out = await self._git.run("rev-parse", "-q", "--verify", f"{commit}^{{commit}}")
        except GitFailed:
            raise CheckpointError(
                f"There is no checkpoint {commit} in the store {self.store_dir}."
            ) from None
        return out.decode().strip()

    async def _tree_diff(self, from_commit: str, to_commit: str) -> list[TreeChange]:
        old, new = await self._resolve(from_commit), await self._resolve(to_commit)
        return parse_diff(await self._run(*DIFF_ARGS, old, new))

    async def _apply(self, changes: list[TreeChange]) -> list[FileChange]:
        deleted = {item.change.path for item in changes if item.change.status == "deleted"}
        refused = await asyncio.to_thread(self._refused, changes, deleted)
        if refused:
            shown = "; ".join(refused[:5])
            more = f" and {len(refused) - 5} more" if len(refused) > 5 else ""
            raise CheckpointError(
                "Nothing restored: writing these paths would go through a symbolic link, "
                f"perhaps out of the workspace: {shown}{more}. Move the link away, or "
                "replace it with a directory, and restore again."
            )
        done: list[FileChange] = []
        try:
            removals = [item for item in changes if item.change.status == "deleted"]
            done += await asyncio.to_thread(self._remove_all, removals)
            writes = [item for item in changes if item.change.status != "deleted"]
            async with contextlib.aclosing(self._write_batches(writes)) as batches:
                async for batch in batches:
                    done += await asyncio.to_thread(self._write_all, batch)
        except (UnsafePath, OSError) as error:
            raise CheckpointError(
                f"The restore stopped part-way, at {_reason(error)}. "
                f"{len(done)} files were restored; "
                "the state before it is the newest checkpoint of this session."
            ) from None
        done.sort(key=lambda change: change.path)
        return done

    def _refused(self, changes: list[TreeChange], deleted: set[str]) -> list[str]:
        """Paths under a symbolic link that the restore does not itself remove."""
        found: list[str] = []
        for item in changes:
            path = item.change.path
            try:
                link = self._files.linked_parent(path)
            except UnsafePath as error:
                found.append(f"{path} ({error.reason})")
                continue
            if link is not None and link not in deleted:
                found.append(f"{path} (under the link {link})")
        return found

    def _too_big(self, path: str) -> bool:
        size = self._files.size(path)
        return size is not None and size > self.limits.max_file_bytes

    def _remove_all(self, removals: list[TreeChange]) -> list[FileChange]:
        done: list[FileChange] = []
        for item in removals:
            path = item.change.path
            if not self._too_big(path) and self._files.remove(path):
                done.append(item.change)
                self._files.prune(path)
        return done

    async def _write_batches(
        self, writes: list[TreeChange]
    ) -> AsyncGenerator[list[tuple[TreeChange, bytes]], None]:
        batch: list[tuple[TreeChange, bytes]] = []
        size = 0
        # Closed on every way out: an early one kills cat-file (git_command.py).
        async with contextlib.aclosing(self._git.blobs([w.new_sha for w in writes])) as blobs:
            pending = iter(writes)
            async for blob in blobs:
                batch.append((next(pending), blob.data))
                size += len(blob.data)
                if size >= _WRITE_BATCH_BYTES or len(batch) >= _WRITE_BATCH_FILES:
                    yield batch
                    batch, size = [], 0
        if batch:
            yield batch

    def _write_all(self, batch: list[tuple[TreeChange, bytes]]) -> list[FileChange]:
        done: list[FileChange] = []
        for item, data in batch:
            path = item.change.path
            kind = self._files.kind(path)
            # Something the snapshot just taken did not capture stands there: an ignored,
            # too big or unreadable file, a nested repository. Left as it is.
            if item.change.status == "added" and kind != "missing":
                continue
            if kind == "file" and self._too_big(path):
                continue
            if item.new_mode == MODE_SYMLINK:
                written = self._files.symlink(path, data)
            else:
                written = self._files.write(path, data, executable=item.new_mode == MODE_EXECUTABLE)
            if written:
                done.append(item.change)
        return done

    # The store itself.

    @contextlib.asynccontextmanager
    async def _exclusive(self) -> AsyncIterator[None]:
        async with self._lock:
            await self._ensure()
            # In this thread, not a worker: a cancellation while a worker held it would
            # leave the lock taken for good. A few quick syscalls, never a wait.
            fd = self._lock_session()
            try:
                yield
            finally:
                os.close(fd)

    def _lock_session(self) -> int:
        locks = self.store_dir / "ink-locks"
        locks.mkdir(exist_ok=True)
        fd = os.open(locks / self.session_id, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise CheckpointError(
                f"Another ink process is using the checkpoints of session {self.session_id} "
                "right now; try again when it is done."
            ) from None
        # Ours alone now: a lock git left behind was a killed git's.
        for stale in (self._index.with_name(self._index.name + ".lock"),
                      self.store_dir / (self._ref + ".lock")):  # fmt: skip
            stale.unlink(missing_ok=True)
        return fd

    async def _ensure(self) -> None:
        if self._ready:
            return
        await asyncio.to_thread(self._prepare_dirs)
        if not (self.store_dir / "HEAD").exists():
            await self._create_store()
        await asyncio.to_thread(self._write_info, self.store_dir)
        self._ready = True

    async def _create_store(self) -> None:
        """`git init` in a folder beside the store, renamed into place when complete: an
        abort or crash half-way leaves no half store behind (just that folder)."""
        temp = self.store_dir.with_name(f".{self.store_dir.name}.{secrets.token_hex(6)}")
        init = GitCommand(temp, self.workspace, temp / "index")
        try:
            try:
                await init.run("init", "--quiet")
            except GitFailed as error:
                raise CheckpointError(
                    f"The checkpoint store {self.store_dir} could not be created: {error.stderr}"
                ) from None
            await asyncio.to_thread(self._write_info, temp)
            await asyncio.to_thread(_move_into_place, temp, self.store_dir)
        finally:
            await asyncio.to_thread(shutil.rmtree, temp, True)

    def _prepare_dirs(self) -> None:
        if not self.workspace.is_dir():
            raise CheckpointError(f"The workspace {self.workspace} is not a directory.")
        try:
            self.store_dir.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CheckpointError(
                f"The checkpoint store {self.store_dir} cannot be created: "
                f"{error.strerror or error}. Make its folder writable to take checkpoints."
            ) from None
        if not os.access(self.store_dir.parent, os.W_OK | os.X_OK) or (
            self.store_dir.exists() and not os.access(self.store_dir, os.W_OK | os.X_OK)
        ):
            raise CheckpointError(
                f"The checkpoint store {self.store_dir} is not writable. "
                "Make it writable (or remove it) to take checkpoints."
            )
        if self.store_dir == self.workspace or self.store_dir.is_relative_to(self.workspace):
            raise CheckpointError(
                f"The checkpoint store {self.store_dir} lies inside the workspace; "
                "it must be outside it."
            )

    def _write_info(self, store_dir: Path) -> None:
        info = store_dir / "info"
        info.mkdir(exist_ok=True)
        attributes = info / "attributes"
        if not attributes.exists() or attributes.read_bytes() != ATTRIBUTES:
            temp = info / f".attributes.{os.getpid()}"
            temp.write_bytes(ATTRIBUTES)
            os.replace(temp, attributes)

    async def _run(
        self, *args: str, stdin: bytes | None = None, config: Iterable[str] = ()
    ) -> bytes:
        try:
            return await self._git.run(*args, stdin=stdin, config=config)
        except GitFailed as error:
            raise CheckpointError(
                f"The checkpoint store {self.store_dir} failed (git {args[0]}): "
                f"{error.stderr or f'exit status {error.returncode}'}"
            ) from None


def _move_into_place(temp: Path, store_dir: Path) -> None:
    try:
        os.rename(temp, store_dir)
    except OSError:
        # Another session created it meanwhile (a non-empty folder is never replaced).
        if not (store_dir / "HEAD").exists():
            raise


def _parse_listing(output: bytes) -> list[tuple[str, bool]]:
    """`ls-files -t -z` lines ("? path", "C path", "R path") as (path, tracked), sorted."""
    tracked: dict[str, bool] = {}
    for entry in output.split(b"\0"):
        if len(entry) < 3:
            continue
        path = os.fsdecode(entry[2:])
        tracked[path] = tracked.get(path, False) or entry[:1] != b"?"
    return sorted(tracked.items())


def _z(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def _reason(error: Exception) -> str:
    if isinstance(error, UnsafePath):
        return f"{error.path}: {error.reason}"
    if isinstance(error, OSError):
        name = os.fsdecode(error.filename) if error.filename is not None else "a file"
        return f"{name}: {error.strerror or error}"
    return str(error)
