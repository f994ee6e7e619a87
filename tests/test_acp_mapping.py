"""`ink acp`'s pure mappings: tool calls to ACP's kinds, titles, locations and content;
prompts to ink's text and delivery."""

from __future__ import annotations

from pathlib import Path

from acp.helpers import embedded_text_resource, resource_block, resource_link_block, text_block

from ink_tui.modes import acp_tools
from ink_tui.modes.acp_prompt import deliver_as, prompt_text


def test_kinds_and_titles() -> None:
    assert acp_tools.tool_kind("bash") == "execute"
    assert acp_tools.tool_kind("grep") == "search"
    assert acp_tools.tool_kind("edit") == "edit"
    assert acp_tools.tool_kind("task") == "think"
    assert acp_tools.tool_kind("an_extension_tool") == "other"
    assert acp_tools.tool_title("bash", {"command": "pytest -q\necho done"}) == "pytest -q…"
    assert acp_tools.tool_title("grep", {"pattern": "def x", "path": "src"}) == "Grep def x in src"
    assert acp_tools.tool_title("ls", {}) == "List ."
    assert acp_tools.tool_title("an_extension_tool", {}) == "an_extension_tool"


def test_locations_are_absolute(tmp_path: Path) -> None:
    (read,) = acp_tools.tool_locations(tmp_path, "read", {"path": "a.py", "offset": 10})
    assert read.path == str(tmp_path / "a.py") and read.line == 10
    (outside,) = acp_tools.tool_locations(tmp_path, "write", {"path": "/etc/x"})
    assert outside.path == "/etc/x" and outside.line is None
    assert acp_tools.tool_locations(tmp_path, "bash", {"command": "ls"}) == []


def test_an_edit_proposes_its_diff_and_a_bad_one_its_preview(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    before = acp_tools.read_for_diff(tmp_path, {"path": "a.py"})
    edits = [{"old_text": "x = 1", "new_text": "x = 2"}]
    (diff,) = acp_tools.proposed_content(
        tmp_path, "edit", {"path": "a.py", "edits": edits}, before, ""
    )
    assert diff.type == "diff" and diff.old_text == "x = 1\n" and diff.new_text == "x = 2\n"
    bad = [{"old_text": "nowhere", "new_text": "y"}]
    (text,) = acp_tools.proposed_content(
        tmp_path, "edit", {"path": "a.py", "edits": bad}, before, "P"
    )
    assert text.type == "content" and text.content.text == "P"


def test_prompt_blocks_become_text() -> None:
    resource = embedded_text_resource("file:///w/a%20b.py", "print(1)")
    text = prompt_text(
        [
            text_block("look at"),
            resource_link_block("a.py", "file:///w/a.py"),
            resource_block(resource),
        ]
    )
    assert text.startswith("look at @/w/a.py")
    assert "<context ref='/w/a b.py'>\nprint(1)\n</context>" in text
    assert prompt_text([text_block("just this")]) == "just this"


def test_delivery_from_meta() -> None:
    assert deliver_as({}) is None
    assert deliver_as({"ink": {"deliverAs": "steer"}}) == "steer"
    assert deliver_as({"ink": {"deliverAs": "followUp"}}) == "follow_up"
    assert deliver_as({"ink": {"deliverAs": "queue"}}) == "follow_up"
    assert deliver_as({"ink": {"deliverAs": "later"}}) is None
    assert deliver_as({"ink": "steer"}) is None
