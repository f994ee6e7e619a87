from __future__ import annotations

import pytest

from ink_tui.ui.slash_commands import (
    COMMANDS,
    CommandToken,
    closest_commands,
    command_token,
    complete_command,
    find_command,
    literal_text,
    parse_slash,
    unknown_message,
)

REQUIRED = [
    "help",
    "new",
    "resume",
    "sessions",
    "rewind",
    "tree",
    "fork",
    "model",
    "modes",
    "thinking",
    "approval",
    "context",
    "status",
    "compact",
    "copy",
    "clear",
    "jobs",
    "quit",
]


def test_the_table_holds_every_required_command_in_display_order() -> None:
    assert [command.name for command in COMMANDS] == REQUIRED
    for command in COMMANDS:
        assert command.summary
        assert command.usage.startswith(f"/{command.name}")
    assert {c.name for c in COMMANDS if c.takes_argument} == {
        "resume",
        "model",
        "jobs",
        "approval",
        "thinking",
        "compact",
    }


# -- parse_slash ---------------------------------------------------------------------


def test_a_known_command_with_and_without_argument() -> None:
    plain = parse_slash("/help")
    assert plain is not None
    assert (plain.name, plain.argument, plain.command) == ("help", "", find_command("help"))
    with_argument = parse_slash("/model   gpt-4o mini \n")
    assert with_argument is not None
    assert with_argument.name == "model"
    assert with_argument.argument == "gpt-4o mini"
    assert with_argument.command is find_command("model")


def test_completion_leaves_a_trailing_space_that_still_parses() -> None:
    invocation = parse_slash("/modes ")
    assert invocation is not None
    assert invocation.command is find_command("modes")
    assert invocation.argument == ""


def test_command_names_ignore_case() -> None:
    invocation = parse_slash("/Help")
    assert invocation is not None and invocation.command is find_command("help")


@pytest.mark.parametrize("text", ["hello", "", "  ", "a /b", "\n/help", "@README.md"])
def test_text_without_a_leading_slash_is_not_a_command(text: str) -> None:
    assert parse_slash(text) is None


def test_a_leading_space_sends_a_literal_slash() -> None:
    text = " /etc/hosts is empty, why?"
    assert parse_slash(text) is None
    assert literal_text(text) == "/etc/hosts is empty, why?"
    assert literal_text("\t /tmp") == "/tmp"


def test_literal_text_leaves_other_text_alone() -> None:
    assert literal_text("fix the bug") == "fix the bug"
    # Leading blanks are only dropped when they guard a slash.
    assert literal_text("  indented code") == "  indented code"
    assert literal_text("/help") == "/help"


def test_an_unknown_command_is_still_an_invocation() -> None:
    invocation = parse_slash("/etc/hosts is empty")
    assert invocation is not None
    assert invocation.command is None
    assert invocation.name == "etc/hosts"
    assert invocation.argument == "is empty"


def test_a_lone_slash_is_an_unknown_command_without_a_name() -> None:
    invocation = parse_slash("/")
    assert invocation is not None and invocation.name == "" and invocation.command is None
    assert "command name" in unknown_message("")


def test_unknown_message_suggests_the_closest_commands() -> None:
    message = unknown_message("modle")
    assert message.startswith("Unknown command /modle.")
    assert "/model" in message
    assert "/quit" not in message
    # It also says how to send the text as it is.
    assert "space" in message


def test_unknown_message_for_a_prefix_suggests_its_completions() -> None:
    assert [c.name for c in closest_commands("mo")] == ["model", "modes"]
    message = unknown_message("se")
    assert "/sessions" in message


def test_unknown_message_without_a_close_command() -> None:
    message = unknown_message("zzzzzz")
    assert "Did you mean" not in message
    assert "/help" in message


# -- completion ----------------------------------------------------------------------


def test_complete_command_by_prefix() -> None:
    assert [c.name for c in complete_command("")] == REQUIRED
    assert [c.name for c in complete_command("mo")] == ["model", "modes"]
    assert [c.name for c in complete_command("/mo")] == ["model", "modes"]
    assert [c.name for c in complete_command("C")] == ["context", "compact", "copy", "clear"]
    assert complete_command("x") == []


def test_command_token_only_at_the_start() -> None:
    assert command_token("/mo", 3) == CommandToken(end=3, prefix="mo")
    assert command_token("/", 1) == CommandToken(end=1, prefix="")
    # Cursor inside the name: the prefix is what lies before it; the token runs on.
    assert command_token("/model x", 3) == CommandToken(end=6, prefix="mo")
    assert command_token("/model x", 7) is None  # in the argument
    assert command_token("/mo", 0) is None  # before the slash
    assert command_token(" /mo", 4) is None
    assert command_token("a /mo", 5) is None
