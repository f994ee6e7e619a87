"""Running git against a checkpoint store: isolated from every other git setting, abortable.

The store is a git object store outside the workspace (`GIT_DIR`), the workspace is its
work tree (`GIT_WORK_TREE`), and each session has an index file of its own in the store
(`GIT_INDEX_FILE`). What keeps git from reading or running anything that is not ours:

1. The environment is this process's minus every `GIT_*` variable (a `GIT_DIR`,
   `GIT_INDEX_FILE` or `GIT_CONFIG_PARAMETERS` of the user's shell would point git at the
   user's repository or inject config), plus ours. `os.environ` itself is never changed.
2. No system or global config (`GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=/dev/null`, no
   system attributes; `HOME` and `XDG_CONFIG_HOME` point into the store, for gits older
   than 2.32). The only config file read is the store's own, which ink writes.
   The workspace's `.git/config` is never read: git does not look for a repository when
   `GIT_DIR` is set. That file is untrusted (a cloned repository's).
3. `-c` options on every command turn off everything that could run a program or change
   bytes: hooks, fsmonitor, automatic gc and maintenance, signing, external diff and
   textconv drivers, end-of-line conversion, the user's attributes and excludes files.
   Filters named by a workspace `.gitattributes` have no driver in our config, so none
   runs; the store's `info/attributes` (store.py) also unsets them for every path.
4. A fixed identity ("ink" <ink@localhost>), so commits need no user config.

Every git runs in a process group of its own (`start_new_session`). An abort of the
caller's signal, or a cancellation of the awaiting task, SIGKILLs that group and waits
for the leader to be reaped, so no git outlives the call. git itself starts no helper
processes for the commands we use (no gc, no hooks, no filters), so the group is a
belt for the braces. A killed git may leave a `*.lock` file; the store removes its own
session's locks (it holds the session's lock file, store.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ink_tui.checkpoints.errors import CheckpointError

AUTHOR_NAME = "ink"
AUTHOR_EMAIL = "ink@localhost"

# Why each: see the module doc (point 3). Passed before the subcommand, so they win over
# the store's config file.
ISOLATION_CONFIG: tuple[str, ...] = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.eol=lf",
    "core.quotepath=off",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.bare=false",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "core.logAllRefUpdates=false",
    "core.pager=cat",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "gpg.program=/bin/false",
    "protocol.allow=never",
    "credential.helper=",
    "init.defaultBranch=ink",
    "init.templateDir=",
)


class GitFailed(Exception):
    """A git command exited with an error; `stderr` is git's own message."""

    def __init__(self, args: Iterable[str], returncode: int, stderr: bytes) -> None:
        self.command = list(args)
        self.returncode = returncode
        self.stderr = stderr.decode("utf-8", "replace").strip()
        super().__init__(f"git {' '.join(self.command)} exited with {returncode}: {self.stderr}")


def find_git() -> str:
    """The git executable on PATH; CheckpointError when there is none."""
    found = shutil.which("git")
    if found is None:
        raise CheckpointError(
            "Checkpoints need the git command, and it was not found on PATH. "
            "Install git to rewind files; everything else works without it."
        )
    return found


def isolated_env(
    git_dir: Path, work_tree: Path, index_file: Path, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of every git run on the store (module doc, points 1, 2 and 4)."""
    source = os.environ if base is None else base
    env = {name: value for name, value in source.items() if not name.startswith("GIT_")}
    env.update(
        {
            "GIT_DIR": str(git_dir),
            "GIT_WORK_TREE": str(work_tree),
            "GIT_INDEX_FILE": str(index_file),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            # Before git 2.32 GIT_CONFIG_GLOBAL is not known: the user's config is then
            # looked for here, where there is none.
            "HOME": str(git_dir),
            "XDG_CONFIG_HOME": str(git_dir),
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_PAGER": "cat",
            "GIT_AUTHOR_NAME": AUTHOR_NAME,
            "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
            "GIT_COMMITTER_NAME": AUTHOR_NAME,
            "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL,
            # Messages we may show the user or match on, in one language.
            "LC_ALL": "C",
        }
    )
    return env


@dataclass(frozen=True, slots=True)
class Blob:
    sha: str
    data: bytes


class GitCommand:
    """Runs git on one store, work tree and index file (all fixed at construction)."""

    def __init__(
        self, git_dir: Path, work_tree: Path, index_file: Path, *, executable: str | None = None
    ) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.index_file = index_file
        self._executable = executable
        self._env: dict[str, str] | None = None

    @property
    def env(self) -> dict[str, str]:
        # Built on first use: the environment of the moment the store is first used.
        if self._env is None:
            self._env = isolated_env(self.git_dir, self.work_tree, self.index_file)
        return self._env

    def argv(self, args: Iterable[str], config: Iterable[str] = ()) -> list[str]:
        """The command line of `git ARGS`, with `config` ("name=value") after ours."""
        if self._executable is None:
            self._executable = find_git()
        options = [part for option in (*ISOLATION_CONFIG, *config) for part in ("-c", option)]
        return [self._executable, "--no-pager", "--literal-pathspecs", *options, *args]

    async def run(
        self, *args: str, stdin: bytes | None = None, config: Iterable[str] = ()
    ) -> bytes:
        """Run `git ARGS` with `stdin`; its stdout, or GitFailed.

        Cancelling the caller kills git (module doc) and re-raises.
        """
        async with self._spawned(args, stdin is not None, config) as process:
            stdout, stderr = await process.communicate(stdin)
        if process.returncode != 0:
            raise GitFailed(args, process.returncode or 0, stderr)
        return stdout

    async def blobs(self, shas: list[str]) -> AsyncGenerator[Blob, None]:
        """The contents of `shas`, in order, one at a time, from one `git cat-file --batch`.

        Memory holds one blob at a time, whatever their number.
        """
        if not shas:
            return
        args = ("cat-file", "--batch")
        async with self._spawned(args, True) as process:
            assert process.stdin is not None and process.stdout is not None
            feeder = asyncio.create_task(_feed(process.stdin, "".join(f"{s}\n" for s in shas)))
            try:
                for sha in shas:
                    header = (await process.stdout.readline()).decode("ascii", "replace").split()
                    if len(header) != 3 or header[1] != "blob":
                        raise GitFailed(args, -1, f"no blob {sha}: {' '.join(header)}".encode())
                    data = await process.stdout.readexactly(int(header[2]) + 1)
                    yield Blob(sha, data[:-1])
                await feeder
            finally:
                feeder.cancel()
                with contextlib.suppress(BaseException):
                    await feeder
            await process.wait()

    @contextlib.asynccontextmanager
    async def _spawned(
        self, args: Iterable[str], with_stdin: bool, config: Iterable[str] = ()
    ) -> AsyncIterator[asyncio.subprocess.Process]:
        argv = self.argv(args, config)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.work_tree,
                env=self.env,
                stdin=asyncio.subprocess.PIPE if with_stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError as error:
            if error.filename == argv[0]:
                raise CheckpointError(
                    f"Checkpoints need the git command, and {argv[0]} could not be run. "
                    "Install git to rewind files; everything else works without it."
                ) from None
            raise CheckpointError(f"The workspace {self.work_tree} is missing.") from None
        try:
            yield process
        except BaseException:
            await _kill(process)
            raise


async def _feed(pipe: asyncio.StreamWriter, text: str) -> None:
    pipe.write(text.encode())
    await pipe.drain()
    pipe.close()


async def _kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the process's group and wait until the leader is reaped (shielded: a second
    cancellation must not leave it running)."""
    if process.returncode is None:
        # The group id is the leader's pid, which cannot be reused before asyncio reaps it
        # and sets returncode (barring the moment between the two, which we accept).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(BaseException):
        await asyncio.shield(process.wait())
