"""Sessions as a tree: ids and parents on every line, the leaf, branches after a rewind,
old files (no ids) read as one branch, and damage that never cuts a conversation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.session.entries import CompactionEntry, RewindEntry, UserEntry
from ink_tui.session.session_reader import load_session
from ink_tui.session.session_writer import SessionWriter


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def users(path: Path) -> list[str]:
    return [m.content for m in load_session(path).history if isinstance(m, UserMessage)]


def test_a_rewind_line_starts_a_branch_and_both_stay_in_the_file(tmp_path: Path) -> None:
    with SessionWriter.create(tmp_path, "m") as writer:
        first = writer.append(UserEntry(UserMessage("one")))
        reply = writer.append(UserEntry(UserMessage("x")))  # stands for any node
        second = writer.append(UserEntry(UserMessage("two")))
        writer.append(RewindEntry(leaf_id=reply, restore="conversation", entry_id=second))
        third = writer.append(UserEntry(UserMessage("three")))
        path = writer.path
    loaded = load_session(path)
    tree = loaded.tree
    assert tree.node(second).parent_id == tree.node(third).parent_id == reply
    assert [n.id for n in tree.branch] == [first, reply, third]
    assert users(path) == ["one", "x", "three"]
    assert {n.id for n in tree.tips} == {second, third}
    assert loaded.leaf_id == third
    assert all(node.time is not None for node in tree.nodes)
    # The history's messages carry their ids: what a rewind names.
    assert [getattr(m, "entry_id", None) for m in loaded.history] == [first, reply, third]


def test_reopened_the_writer_goes_on_from_the_leaf(tmp_path: Path) -> None:
    with SessionWriter.create(tmp_path, "m") as writer:
        writer.append(UserEntry(UserMessage("one")))
        kept = writer.append(UserEntry(UserMessage("two")))
        writer.append(UserEntry(UserMessage("dropped")))
        writer.append(RewindEntry(leaf_id=kept, restore="conversation"))
        path = writer.path
    loaded = load_session(path)
    assert loaded.leaf_id == kept
    with SessionWriter.open_existing(path, leaf_id=loaded.leaf_id) as writer:
        added = writer.append(UserEntry(UserMessage("after")))
    # Without the leaf given, open_existing reads the file for it.
    with SessionWriter.open_existing(path) as writer:
        assert writer.leaf_id == added
    assert load_session(path).tree.node(added).parent_id == kept
    assert users(path) == ["one", "two", "after"]


def test_a_rewind_to_before_the_first_entry_leaves_an_empty_conversation(
    tmp_path: Path,
) -> None:
    with SessionWriter.create(tmp_path, "m") as writer:
        first = writer.append(UserEntry(UserMessage("one")))
        writer.append(RewindEntry(leaf_id=None, restore="conversation", entry_id=first))
        second = writer.append(UserEntry(UserMessage("again")))
        path = writer.path
    tree = load_session(path).tree
    assert tree.node(second).parent_id is None and tree.node(first).parent_id is None
    assert users(path) == ["again"]


def old_file(tmp_path: Path, lines: list[dict[str, object]]) -> Path:
    path = tmp_path / "old.jsonl"
    header = {
        "type": "header",
        "version": 1,
        "id": "0123456789ab",
        "started": "2024-05-01T10:15:30.123Z",
        "workspace": str(tmp_path),
        "model": "m",
    }
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *lines]))
    return path


def test_a_file_from_before_the_tree_reads_as_one_branch(tmp_path: Path) -> None:
    path = old_file(
        tmp_path,
        [
            {"type": "user", "kind": "prompt", "content": "a"},
            {"type": "assistant", "text": "b", "finish_reason": "stop"},
            {"type": "user", "kind": "prompt", "content": "c"},
        ],
    )
    loaded = load_session(path)
    assert [n.id for n in loaded.tree.branch] == ["L2", "L3", "L4"]
    assert [n.parent_id for n in loaded.tree.branch] == [None, "L2", "L3"]
    assert loaded.leaf_id == "L4"
    # Resumed, new lines hang from the old ones; read again, the ids are the same.
    with SessionWriter.open_existing(path, leaf_id=loaded.leaf_id) as writer:
        writer.append(UserEntry(UserMessage("d")))
    assert users(path) == ["a", "c", "d"]
    assert load_session(path).tree.branch[2].id == "L4"


def test_a_damaged_line_does_not_cut_the_branch(tmp_path: Path) -> None:
    with SessionWriter.create(tmp_path, "m") as writer:
        writer.append(UserEntry(UserMessage("one")))
        writer.append(UserEntry(UserMessage("two")))
        writer.append(UserEntry(UserMessage("three")))
        path = writer.path
    lines = path.read_text().splitlines()
    lines[2] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    loaded = load_session(path)
    # "three" names the lost line as its parent: it hangs from the node before instead.
    assert users(path) == ["one", "three"]
    assert loaded.skipped_lines == [3]


def test_a_compaction_counts_the_messages_of_its_own_branch(tmp_path: Path) -> None:
    with SessionWriter.create(tmp_path, "m") as writer:
        writer.append(UserEntry(UserMessage("old branch")))
        writer.append(RewindEntry(leaf_id=None, restore="conversation"))
        writer.record_user(UserMessage("one"))
        writer.record_assistant(AssistantMessage(text="r1"))
        writer.record_compaction(CompactionEntry(summary="S", first=0, end=2))
        writer.record_user(UserMessage("two"))
        path = writer.path
    history = load_session(path).history
    assert isinstance(history[0], UserMessage) and "S" in history[0].content
    assert [m.content for m in history[1:] if isinstance(m, UserMessage)] == ["two"]


def test_a_move_to_a_lost_entry_stays_where_the_file_was(tmp_path: Path) -> None:
    with SessionWriter.create(tmp_path, "m") as writer:
        writer.append(UserEntry(UserMessage("one")))
        last = writer.append(UserEntry(UserMessage("two")))
        writer.append(RewindEntry(leaf_id="gone00000000", restore="tree"))
        path = writer.path
    assert load_session(path).leaf_id == last


def test_the_resume_preview_shows_the_current_branch_only(tmp_path: Path) -> None:
    from ink_tui.ui.session_tail import read_tail

    with SessionWriter.create(tmp_path, "m") as writer:
        writer.append(UserEntry(UserMessage("one")))
        kept = writer.append(UserEntry(UserMessage("two")))
        writer.record_checkpoint("0" * 40)
        writer.append(UserEntry(UserMessage("abandoned")))
        writer.append(RewindEntry(leaf_id=kept, restore="conversation"))
        writer.append(UserEntry(UserMessage("three")))
        path = writer.path
    texts = [e.message.content for e in read_tail(path) if isinstance(e, UserEntry)]
    assert texts == ["one", "two", "three"]
    # Rewound to before the first entry, with nothing after: an empty preview.
    with SessionWriter.open_existing(path) as writer:
        writer.append(RewindEntry(leaf_id=None, restore="conversation"))
    assert read_tail(path) == []


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "rewind", "reopen"]), st.integers(0, 50)), max_size=30
    )
)
def test_any_mix_of_entries_rewinds_and_reopens_reads_back_as_written(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int]]
) -> None:
    folder = tmp_path_factory.mktemp("tree")
    parents: dict[str, str | None] = {}
    order: list[str] = []
    leaf: str | None = None
    writer = SessionWriter.create(folder, "m", root=folder)
    try:
        for number, (step, pick) in enumerate(steps):
            if step == "add":
                new = writer.append(UserEntry(UserMessage(f"m{number}")))
                parents[new], leaf = leaf, new
                order.append(new)
            elif step == "rewind":
                target = order[pick % len(order)] if order and pick % 4 else None
                writer.append(RewindEntry(leaf_id=target, restore="tree"))
                leaf = target
            else:
                writer.close()
                writer = SessionWriter.open_existing(writer.path)
                assert writer.leaf_id == leaf
    finally:
        writer.close()
    loaded = load_session(writer.path)
    expected: list[str] = []
    walk = leaf
    while walk is not None:
        expected.insert(0, walk)
        walk = parents[walk]
    assert [node.id for node in loaded.tree.branch] == expected
    assert {n.id: n.parent_id for n in loaded.tree.nodes} == parents
    assert loaded.leaf_id == leaf
