"""Reading sessions back: torn tails, damaged lines, headers, unknown entries, repairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from ink_tui.session.history_repair import NO_RESULT
from ink_tui.session.session_reader import SessionFileError, load_session, read_header
from ink_tui.session.session_writer import SessionWriter


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def two_calls() -> AssistantMessage:
    return AssistantMessage(
        text="",
        tool_calls=[
            ToolCall(id="a", name="read", arguments={"path": "x"}),
            ToolCall(id="b", name="bash", arguments={"command": "sleep 99"}),
        ],
        finish_reason="tool_calls",
    )


def saved(workspace: Path) -> Path:
    with SessionWriter.create(workspace, "m") as writer:
        writer.record_user(UserMessage("first"))
        writer.record_assistant(AssistantMessage(text="answer one"))
        writer.record_user(UserMessage("second"))
        writer.record_assistant(AssistantMessage(text="answer two"))
    return writer.path


def replace_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[number - 1] = text + "\n"
    path.write_text("".join(lines))


def test_torn_last_line_is_skipped_with_a_warning(workspace: Path) -> None:
    path = saved(workspace)
    with open(path, "ab") as file:
        file.write(b'{"type":"user","kind":"prompt","content":"never fini')
    loaded = load_session(path)
    assert loaded.warnings == [
        f"the last line of {path} was cut off (the app was probably killed while writing); "
        "skipped it"
    ]
    assert [getattr(m, "content", getattr(m, "text", None)) for m in loaded.history] == [
        "first",
        "answer one",
        "second",
        "answer two",
    ]


def texts(loaded_history: list) -> list[str]:
    return [getattr(m, "content", getattr(m, "text", None)) for m in loaded_history]


def test_damaged_middle_line_is_skipped_named_and_the_rest_is_read(workspace: Path) -> None:
    path = saved(workspace)
    replace_line(path, 3, '{"type":"assistant","text":"answer one"')
    loaded = load_session(path)
    # Reading goes on past the damage: everything readable is kept.
    assert texts(loaded.history) == ["first", "second", "answer two"]
    assert loaded.skipped_lines == [3]
    [warning] = loaded.warnings
    assert warning.startswith(f"line 3 of {path} is damaged (not valid JSON")
    assert "read the rest of the session" in warning


def test_valid_json_with_a_wrong_field_is_a_damaged_line(workspace: Path) -> None:
    path = saved(workspace)
    replace_line(path, 4, json.dumps({"type": "user", "kind": "prompt", "content": 42}))
    loaded = load_session(path)
    assert loaded.skipped_lines == [4]
    assert "'content' of the wrong type" in loaded.warnings[0]
    replace_line(path, 4, json.dumps({"type": "user", "kind": "shout", "content": "x"}))
    assert "kind='shout'" in load_session(path).warnings[0]


def test_several_damaged_lines_make_one_warning(workspace: Path) -> None:
    path = saved(workspace)
    replace_line(path, 2, "{oops")
    replace_line(path, 4, "also not json")
    loaded = load_session(path)
    assert loaded.skipped_lines == [2, 4]
    assert texts(loaded.history) == ["answer one", "answer two"]
    [warning] = loaded.warnings
    assert warning.startswith(f"2 damaged lines of {path} were skipped (lines 2, 4; line 2: ")


def test_a_complete_last_line_without_newline_and_a_damaged_newline_ended_one(
    workspace: Path,
) -> None:
    path = saved(workspace)
    with open(path, "ab") as file:
        file.write(b'{"type":"interrupt"}')
    assert load_session(path).warnings == []
    # With its newline, a broken last line was written completely: damage, not a tear.
    with open(path, "ab") as file:
        file.write(b'\n{"type":"interrupt"\n')
    loaded = load_session(path)
    assert loaded.skipped_lines == [7]
    assert "line 7" in loaded.warnings[0] and "cut off" not in loaded.warnings[0]


def test_invalid_utf8_is_a_damaged_line(workspace: Path) -> None:
    path = saved(workspace)
    data = path.read_bytes().split(b"\n")
    data[1] = data[1].replace(b"first", b"fi\xffrst")
    path.write_bytes(b"\n".join(data))
    loaded = load_session(path)
    assert loaded.skipped_lines == [2]
    assert "line 2 of" in loaded.warnings[0] and "not valid UTF-8" in loaded.warnings[0]


def test_results_whose_call_was_on_a_damaged_line_leave_the_history(workspace: Path) -> None:
    with SessionWriter.create(workspace, "m") as writer:
        writer.record_user(UserMessage("go"))
        writer.record_assistant(two_calls())
        writer.record_tool_result(ToolResultMessage("a", "read", "x text"))
        writer.record_tool_result(ToolResultMessage("b", "bash", "slept"))
        writer.record_assistant(AssistantMessage(text="done"))
    replace_line(writer.path, 3, "{damaged")
    loaded = load_session(writer.path)
    # A result without its call would make the provider refuse the whole request.
    assert [m.role for m in loaded.history] == ["user", "assistant"]
    assert loaded.history[-1].text == "done"  # type: ignore[union-attr]
    assert any("2 tool results" in w and "lost their call" in w for w in loaded.warnings)


def test_a_call_whose_result_was_on_a_damaged_line_gets_an_error_result(
    workspace: Path,
) -> None:
    with SessionWriter.create(workspace, "m") as writer:
        writer.record_user(UserMessage("go"))
        writer.record_assistant(two_calls())
        writer.record_tool_result(ToolResultMessage("a", "read", "x text"))
        writer.record_tool_result(ToolResultMessage("b", "bash", "slept"))
    replace_line(writer.path, 4, "{damaged")
    loaded = load_session(writer.path)
    assert [getattr(m, "call_id", None) for m in loaded.history[2:]] == ["b", "a"]
    assert loaded.history[3].content == NO_RESULT  # type: ignore[union-attr]
    assert any("lost to a damaged line" in w for w in loaded.warnings)


def test_blank_lines_are_ignored(workspace: Path) -> None:
    path = saved(workspace)
    lines = path.read_text().splitlines()
    lines.insert(2, "   ")
    path.write_text("\n".join(lines) + "\n\n")
    loaded = load_session(path)
    assert loaded.warnings == []
    assert len(loaded.history) == 4


def test_unknown_entry_types_are_skipped_with_a_warning(workspace: Path) -> None:
    path = saved(workspace)
    lines = path.read_text().splitlines()
    lines.insert(2, json.dumps({"type": "bookmark", "label": "from the future"}))
    path.write_text("\n".join(lines) + "\n")
    loaded = load_session(path)
    assert len(loaded.history) == 4
    assert len(loaded.warnings) == 1
    assert "line 3" in loaded.warnings[0] and "'bookmark'" in loaded.warnings[0]


@pytest.mark.parametrize(
    ("first_line", "complaint"),
    [
        ('{"type":"user","kind":"prompt","content":"hi"}', "expected the session header"),
        ('{"type":"header","version":1,"id":"x","workspace":"/w","model":"m"}', "'started'"),
        (
            '{"type":"header","version":2,"id":"x","started":"2024-01-01T00:00:00Z",'
            '"workspace":"/w","model":"m"}',
            "newer ink",
        ),
        ("[1, 2]", "not a JSON object"),
        ("garbage", "not valid JSON"),
    ],
)
def test_a_wrong_header_is_an_error(tmp_path: Path, first_line: str, complaint: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(first_line + "\n" + '{"type":"interrupt"}\n')
    with pytest.raises(SessionFileError, match="line 1") as caught:
        load_session(path)
    assert complaint in str(caught.value)
    with pytest.raises(SessionFileError, match=complaint.replace("(", r"\(")):
        read_header(path)


def test_empty_missing_and_header_only_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(SessionFileError, match="empty"):
        load_session(empty)
    with pytest.raises(SessionFileError, match="cannot be read"):
        load_session(tmp_path / "missing.jsonl")
    torn_header = tmp_path / "torn.jsonl"
    torn_header.write_bytes(b'{"type":"header","vers')
    with pytest.raises(SessionFileError, match="header was cut off"):
        load_session(torn_header)


def test_calls_without_results_get_synthetic_error_results(workspace: Path) -> None:
    with SessionWriter.create(workspace, "m") as writer:
        writer.record_user(UserMessage("do two things"))
        writer.record_assistant(two_calls())
        writer.record_tool_result(ToolResultMessage("a", "read", "x contents"), {}, 0.1)
        # Killed while `b` was running: no result for it.
    loaded = load_session(writer.path)
    assert loaded.history == [
        UserMessage("do two things"),
        two_calls(),
        ToolResultMessage("a", "read", "x contents"),
        ToolResultMessage("b", "bash", NO_RESULT, is_error=True),
    ]
    assert NO_RESULT == "no result: the session ended before this call finished"
    assert len(loaded.warnings) == 1 and "1 tool call has no result" in loaded.warnings[0]
    # The file itself is untouched; entries are what is in it.
    assert len(loaded.entries) == 3


def test_synthetic_results_go_right_after_the_calls_when_the_session_went_on(
    workspace: Path,
) -> None:
    # Killed mid-tool, then resumed: the resumed run sent the synthetic results, which
    # were never written, then more messages followed. Loading must rebuild that order.
    with SessionWriter.create(workspace, "m") as writer:
        writer.record_user(UserMessage("do two things"))
        writer.record_assistant(two_calls())
        writer.record_user(UserMessage("resumed"))
        writer.record_assistant(AssistantMessage(text="ok"))
    loaded = load_session(writer.path)
    assert loaded.history == [
        UserMessage("do two things"),
        two_calls(),
        ToolResultMessage("a", "read", NO_RESULT, is_error=True),
        ToolResultMessage("b", "bash", NO_RESULT, is_error=True),
        UserMessage("resumed"),
        AssistantMessage(text="ok"),
    ]
    assert "2 tool calls have no result" in loaded.warnings[0]


def test_summary_properties(workspace: Path) -> None:
    loaded = load_session(saved(workspace))
    assert loaded.first_prompt == "first"
    assert loaded.message_count == 4
    assert loaded.model == "m"
    assert loaded.id == loaded.header.id


def test_a_big_session_is_never_held_whole_beside_its_entries(workspace: Path) -> None:
    import tracemalloc

    with SessionWriter.create(workspace, "m") as writer:
        for turn in range(100):
            call = ToolCall(id=f"c{turn}", name="read", arguments={"path": "x"})
            writer.record_user(UserMessage(f"turn {turn}"))
            writer.record_assistant(
                AssistantMessage(text="", tool_calls=[call], finish_reason="tool_calls")
            )
            writer.record_tool_result(ToolResultMessage(call.id, "read", f"{turn} " * 20_000), {})
    size = writer.path.stat().st_size
    tracemalloc.start()
    try:
        loaded = load_session(writer.path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded.history) == 300
    # The entries themselves are about the file's size; reading the file whole (its bytes,
    # then its lines) had the peak at three times that.
    assert held > size * 0.8
    assert peak < held + size * 0.25
