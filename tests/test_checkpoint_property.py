"""Checked against the files themselves: for any two workspace states, a restore gives
back the first state exactly, undoing it gives back the second, and `diff` names
exactly the paths that differ. Real files, real git, random states (Hypothesis)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink_tui.checkpoints import CheckpointStore
from tests.test_checkpoint_store import State, tree_state

# Few names, so that states share paths, and files, folders and links trade places.
PATHS = ["a", "b", "d", "d/a", "d/b", "d/e/f", "e/f"]
LINK_TARGETS = ["a", "d", "d/e/f", "../outside", "missing"]

entries = st.one_of(
    st.tuples(st.just("file"), st.booleans(), st.binary(max_size=40)),
    st.tuples(st.just("link"), st.just(False), st.sampled_from(LINK_TARGETS).map(str.encode)),
)
states = st.dictionaries(st.sampled_from(PATHS), entries).map(
    lambda raw: {
        path: entry
        for path, entry in raw.items()
        # A file or link at "d" leaves no room for "d/...".
        if not any(path.startswith(other + "/") for other in raw)
    }
)


def build(root: Path, state: State) -> None:
    """Make `root`'s files exactly `state` (everything else removed)."""
    for entry in os.listdir(root):
        full = root / entry
        if full.is_dir() and not full.is_symlink():
            shutil.rmtree(full)
        else:
            full.unlink()
    for path, (kind, executable, data) in state.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if kind == "link":
            os.symlink(data, full)
        else:
            full.write_bytes(data)
            full.chmod(0o755 if executable else 0o644)


def changed_paths(one: State, two: State) -> set[str]:
    return {path for path in one.keys() | two.keys() if one.get(path) != two.get(path)}


async def round_trip(root: Path, first: State, second: State) -> None:
    workspace = root / "ws"
    workspace.mkdir()
    build(workspace, first)
    store = CheckpointStore(workspace, root / "store.git", session_id="p")
    one = await store.snapshot()
    assert tree_state(workspace) == first
    build(workspace, second)
    two = await store.snapshot()
    assert {c.path for c in await store.diff(one, two)} == changed_paths(first, second)
    assert (one == two) == (first == second)

    restored = await store.restore(one)
    assert tree_state(workspace) == first
    assert restored.before == two
    assert {c.path for c in restored.changes} == changed_paths(second, first)
    await store.restore(restored.before)
    assert tree_state(workspace) == second


@pytest.mark.timeout(300)
@settings(max_examples=40)
@given(first=states, second=states)
def test_restore_gives_back_any_state_and_undo_the_other(first: State, second: State) -> None:
    with tempfile.TemporaryDirectory(prefix="ink-checkpoint-property-") as tmp:
        asyncio.run(round_trip(Path(tmp), first, second))
