"""What the rewind screens say, as plain functions: the picker's rows, the confirm's
excerpt, lines and choices, the tree's rows and indents, and the notices; then the
confirm in the app for a session whose runs changed no file (the conversation only)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from ink_tui.checkpoints import FileChange
from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.session.entries import AssistantEntry, UserEntry
from ink_tui.session.rewind import RewindPreview, RewindResult, UserTurn
from ink_tui.session.session_tree import ReadLine, build_tree
from ink_tui.ui.rewind_actions import quote, rewound_notice
from ink_tui.ui.screens.rewind_confirm import (
    NO_CHANGES,
    RewindConfirm,
    choices_for,
    line_counts,
    message_excerpt,
)
from ink_tui.ui.screens.rewind_picker import UNDO_KEY, picker_rows, shown_time
from ink_tui.ui.screens.tree_view import picker_row, tree_rows
from ink_tui.ui.startup import SessionPlan
from tests.scripted_server import ScriptedServer, text_reply
from tests.test_ui_rewind import SIZE, confirm, picker, settled, shown, wide_double_escape
from tests.ui_helpers import make_app, wait_until


def turn(entry_id: str, text: str, changed: int = 0) -> UserTurn:
    files = [f"f{i}.py" for i in range(changed)]
    return UserTurn(entry_id, text, "prompt", None, files, bool(changed))


def test_picker_rows_newest_first_with_files_changed_and_the_undo_row_on_top() -> None:
    turns = [turn("a", "first\nsecond line"), turn("b", "one file", 1), turn("c", "more", 3)]
    assert picker_rows(turns) == [
        ("c", "more", "3 files changed"),
        ("b", "one file", "1 file changed"),
        ("a", "first", ""),
    ]
    assert picker_rows(turns, can_undo=True, undo_files=2)[0] == (
        UNDO_KEY,
        "↶  Undo the last code restore",
        "2 files back",
    )
    steer = UserTurn("s", "use the tests", "steer", None, ["a.py"], True)
    assert picker_rows([steer]) == [("s", "use the tests", "steer · 1 file changed")]
    long = picker_rows([turn("x", "word " * 40)])[0][1]
    assert len(long) <= 80 and long.endswith("…")


def test_times_are_local_and_say_the_day_when_not_today() -> None:
    moment = dt.datetime(2026, 3, 14, 9, 26, tzinfo=dt.UTC)
    local = moment.astimezone()
    assert shown_time(moment.isoformat(), today=local.date()) == local.strftime("%H:%M")
    other = shown_time(moment.isoformat(), today=local.date() + dt.timedelta(days=1))
    assert other == local.strftime("%b %d %H:%M")
    assert shown_time(None) == "" and shown_time("not a time") == ""


def test_the_confirm_offers_code_only_when_a_restore_changes_it() -> None:
    change = FileChange("a.py", "modified", 2, 1)
    assert choices_for(RewindPreview("e", "t", "c1", [change])) == [
        ("both", "Restore code and conversation"),
        ("conversation", "Restore conversation"),
        ("files", "Restore code"),
    ]
    assert [k for k, _ in choices_for(RewindPreview("e", "t", None))] == ["conversation"]
    assert [k for k, _ in choices_for(RewindPreview("e", "t", "c1", []))] == ["conversation"]
    assert line_counts(change) == "+2 -1"
    assert line_counts(FileChange("b.png", "added", None, None)) == "binary"


def test_the_message_excerpt_keeps_three_lines() -> None:
    assert message_excerpt("one\ntwo\nthree\nfour") == "one\ntwo\nthree…"
    assert message_excerpt("short") == "short"
    assert len(message_excerpt("x" * 1000)) == 300


def _tree(spec: list[tuple[str, str | None, str]], leaf: str | None = None):
    """Nodes (id, parent, text): a text starting "u:" is a user message."""
    lines = []
    for number, (node_id, parent, text) in enumerate(spec, start=2):
        entry: UserEntry | AssistantEntry
        if text.startswith("u:"):
            entry = UserEntry(UserMessage(text[2:]))
        else:
            entry = AssistantEntry(AssistantMessage(text=text))
        lines.append(ReadLine(number, entry, node_id, parent, has_parent=True))
    tree = build_tree(lines)
    if leaf is not None:
        tree.leaf_id = leaf
    return tree


def test_tree_rows_indent_where_branches_split_and_mark_the_current_one() -> None:
    tree = _tree(
        [
            ("u1", None, "u:look"),
            ("a1", "u1", "Looked."),
            ("u2", "a1", "u:old way"),
            ("a2", "u2", "Old."),
            ("u3", "a1", "u:new way"),
            ("a3", "u3", "New."),
        ]
    )
    rows = [picker_row(row) for row in tree_rows(tree)]
    assert [(label, detail) for _, label, detail in rows] == [
        ("● look", ""),
        ("  ○ old way", ""),
        ("  ○ ↳ answer: Old.", ""),
        ("  ● new way", ""),
        ("  ● ↳ answer: New.", "here"),
    ]
    # Rewound to before "new way": the answer it hangs from is where it goes on.
    tree.leaf_id = "a1"
    labels = [(r.text, r.here) for r in tree_rows(tree)]
    assert ("↳ answer: Looked.", True) in labels


def test_quotes_are_cut_at_a_word() -> None:
    assert quote("short\nsecond line") == "“short”"
    long = quote("a long message that goes on and on about rounding totals to cents")
    assert long == "“a long message that goes on and on…”"


def test_notices_say_what_was_restored() -> None:
    both = RewindResult("make the tests pass", ["a.py", "b.py"], "x")
    assert rewound_notice("both", both).startswith(
        "Restored 2 files and the conversation to before “make the tests pass”."
    )
    assert "Its text is in the editor." in rewound_notice("both", both)
    assert "the files stay as they are" in rewound_notice("conversation", both)
    assert rewound_notice("files", RewindResult("t", ["a.py"], "x")).startswith(
        "Restored 1 file to before “t”; the conversation goes on as it was."
    )
    assert "nothing to restore" in rewound_notice("files", RewindResult("t", [], "x"))


async def test_a_session_that_changed_no_file_offers_the_conversation_only(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=tmp_path / "d")
    wide_double_escape(app)
    async with app.run_test(size=SIZE) as pilot:
        server.push(text_reply("One."), text_reply("Two."))
        await settled(pilot, app, "first question")
        await settled(pilot, app, "second question")
        await pilot.press("escape", "escape")
        await picker(pilot, app)
        await pilot.press("enter")
        box = await confirm(pilot, app)
        assert isinstance(box, RewindConfirm)
        assert box.choices == ["conversation"]
        assert box.preview.checkpoint is None
        note = box.query_one("#rewind-note")
        assert str(note.render()) == NO_CHANGES
        await pilot.press("3")  # not offered: nothing happens
        await pilot.pause()
        assert app.screen is box
        await pilot.press("1")
        await wait_until(pilot, lambda: "Restored the conversation" in shown(app))
        assert app.prompt.text == "second question"
        assert "Two." not in shown(app) and "One." in shown(app)


def test_an_answers_excerpt_in_the_tree_shows_its_words_not_its_markdown() -> None:
    from ink_tui.ui.screens.tree_view import plain_markdown

    assert plain_markdown("Hi! I'm **ink's demo**, see [docs](http://x) and `code`") == (
        "Hi! I'm ink's demo, see docs and code"
    )
    assert (
        plain_markdown("## What I saw\n- one\n1. two\n> quoted") == "What I saw\none\ntwo\nquoted"
    )
