"""Figure 13, rewind: workspace checkpoints of a 10,000-file workspace (issue #22).

Each run is a fresh process with a workspace of its own (small text files in nested
folders) and a checkpoint store of its own (`ink_tui.checkpoints.CheckpointStore`):

1. first_snapshot_ms: the first snapshot, every file hashed into an empty store (no
   target: it is paid once per workspace; later sessions start from its index);
2. change 5 files and add 1 in a new folder, then snapshot_ms: the incremental snapshot
   taken before a tool batch. Target <= 200 ms;
3. restore_ms: restore the first checkpoint (which snapshots first, then writes the 5
   files back and deletes the new one and its folder). Target <= 1000 ms.

The restore is checked (the 6 changes, the files' contents). Each run is made twice:
with a plain folder (the value) and with the workspace a git repository of the user's,
every file committed (the baseline column): the user's repository costs nothing extra.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Sample, median, run_child, write_json
from ink_tui.checkpoints import CheckpointStore

FILES = 10_000
QUICK_FILES = 500
CHANGED = 5
# Folders: FOLDERS top-level ones, each with SUBFOLDERS: 100 files a folder at full size.
FOLDERS = 10
SUBFOLDERS = 10


def make_workspace(root: Path, files: int) -> list[Path]:
    """`files` small text files in nested folders; returns their paths."""
    paths: list[Path] = []
    for i in range(files):
        folder = root / f"pkg{i % FOLDERS}" / f"mod{(i // FOLDERS) % SUBFOLDERS}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file{i}.py"
        path.write_text(f'"""Module {i}."""\n\n\ndef f{i}() -> int:\n    return {i}\n')
        paths.append(path)
    return paths


def make_repo(root: Path) -> None:
    """Commit every file in a git repository of the user's (no user config)."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@localhost",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@localhost",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "all"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


async def measure_once(files: int, repo: bool) -> Sample:
    with tempfile.TemporaryDirectory(prefix="ink-bench-rewind-") as tmp:
        workspace = Path(tmp) / "workspace"
        paths = make_workspace(workspace, files)
        if repo:
            make_repo(workspace)
        store = CheckpointStore(workspace, Path(tmp) / "store.git", session_id="bench")

        started = time.perf_counter()
        first = await store.snapshot()
        first_ms = (time.perf_counter() - started) * 1000

        step = len(paths) // CHANGED
        changed = paths[::step][:CHANGED]
        originals = [path.read_bytes() for path in changed]
        for path in changed:
            path.write_text(path.read_text() + "# changed by the agent\n")
        added = workspace / "new_pkg" / "new_module.py"
        added.parent.mkdir()
        added.write_text("print('new')\n")

        started = time.perf_counter()
        second = await store.snapshot()
        snapshot_ms = (time.perf_counter() - started) * 1000

        started = time.perf_counter()
        restored = await store.restore(first)
        restore_ms = (time.perf_counter() - started) * 1000

        if second == first or len(restored.changes) != CHANGED + 1:
            raise RuntimeError(f"the restore did {restored.changes}, not {CHANGED + 1} changes")
        if added.parent.exists() or [p.read_bytes() for p in changed] != originals:
            raise RuntimeError("the restore did not bring the first checkpoint back")
    return {
        "files": files,
        "repo": repo,
        "first_snapshot_ms": first_ms,
        "snapshot_ms": snapshot_ms,
        "restore_ms": restore_ms,
    }


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    files = QUICK_FILES if quick else FILES
    args = ["--files", str(files)]
    return {
        "plain": [run_child("fig13_rewind", args) for _ in range(runs)],
        "repo": [run_child("fig13_rewind", [*args, "--repo"]) for _ in range(runs)],
    }


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    summary: dict[str, float] = {"files": samples["plain"][0]["files"]}
    for key in ("first_snapshot_ms", "snapshot_ms", "restore_ms"):
        summary[key] = median([run[key] for run in samples["plain"]])
        summary[f"repo_{key}"] = median([run[key] for run in samples["repo"]])
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=int, default=FILES)
    parser.add_argument("--repo", action="store_true", help="make the workspace a git repo")
    args = parser.parse_args(argv)
    write_json(args.out, asyncio.run(measure_once(args.files, args.repo)))


if __name__ == "__main__":
    main()
