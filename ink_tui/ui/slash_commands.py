"""Slash commands: the table, how a submitted text is read as one, and the message that
asks the App to run one.

Pure rules, no widgets, so the completion menu, the command palette and the App share one
vocabulary:

- A text is a command when its very first character is `/` ("/model gpt-4o"). The name
  runs to the first whitespace; the rest, stripped, is the argument.
- A leading space (or tab) means "this is not a command": " /etc/hosts is empty" reaches
  the model as "/etc/hosts is empty" (`literal_text`). Nothing else ever reaches the model
  with a leading `/`, so a mistyped command cannot be sent by accident.
- An unknown name is still an invocation (`command is None`), so the App can say so
  (`unknown_message`) instead of sending the text.
- Extensions add commands of their own at run time: every lookup takes them as `extra`
  (after the built-in ones, which they can never replace).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from textual.message import Message


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    """Without the slash: "model"."""
    summary: str
    """One short line for menus, the palette and /help."""
    usage: str
    """How it is typed, e.g. "/resume [session id]"."""
    takes_argument: bool
    """True when an argument is accepted. It is always optional: without one (always the
    case from the palette) the App asks, e.g. with a picker."""
    extension: str | None = None
    """The extension that registered it; None for ink's own."""


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "Keys and commands", "/help", False),
    SlashCommand("new", "Start a new session", "/new", False),
    SlashCommand("resume", "Resume a saved session", "/resume [session id]", True),
    SlashCommand("sessions", "List the saved sessions of this workspace", "/sessions", False),
    SlashCommand(
        "rewind",
        "Go back to before a message: the conversation, the code or both (Esc Esc)",
        "/rewind",
        False,
    ),
    SlashCommand("tree", "The session's branches: move to another one", "/tree", False),
    SlashCommand("fork", "Start a new session from before one of the messages", "/fork", False),
    SlashCommand("model", "Switch among the configured models", "/model [name]", True),
    SlashCommand("modes", "Choose the steer and follow-up modes", "/modes", False),
    SlashCommand(
        "thinking",
        "Extended thinking budget of an Anthropic model",
        "/thinking [N|off]",
        True,
    ),
    SlashCommand(
        "approval",
        "Ask before bash/write/edit (ask), only bash and outside (edits), never (auto)",
        "/approval [ask|edits|auto]",
        True,
    ),
    SlashCommand("context", "Show what fills the model's context", "/context", False),
    SlashCommand(
        "status",
        "The session's id and file, model, tokens, cost, context and approval",
        "/status",
        False,
    ),
    SlashCommand(
        "compact",
        "Summarise the older conversation to free context (optional: what to keep)",
        "/compact [instructions]",
        True,
    ),
    SlashCommand("copy", "Copy the last answer to the clipboard", "/copy", False),
    SlashCommand("clear", "Clear the screen (the session keeps its history)", "/clear", False),
    SlashCommand(
        "jobs",
        "List what commands left running; /jobs kill [N|pid] stops them",
        "/jobs [kill [N|pid]]",
        True,
    ),
    SlashCommand("quit", "Quit ink", "/quit", False),
)
"""Every command, in display order (menus, palette, /help)."""

_BY_NAME = {command.name: command for command in COMMANDS}
# Spaces and tabs only: a text starting with a newline is not "a line that starts with /".
_LEADING_BLANKS = " \t"


@dataclass(frozen=True, slots=True)
class SlashInvocation:
    name: str
    """As typed, without the slash (may be empty for a lone "/")."""
    argument: str
    """Everything after the name, stripped; "" when there is none."""
    command: SlashCommand | None
    """None: no such command (see `unknown_message`)."""


@dataclass
class RunSlashCommand(Message):
    """Run a slash command. Posted to the App by the command palette; the App posts it to
    itself for a submitted "/name …" text, so both paths meet in one handler.

    `name` is a known command's name; an empty `argument` means "ask" (e.g. a picker).
    """

    name: str
    argument: str = ""


def find_command(name: str, extra: Sequence[SlashCommand] = ()) -> SlashCommand | None:
    """The command called `name` (no slash; case does not matter), or None."""
    wanted = name.lower()
    return _BY_NAME.get(wanted) or next((c for c in extra if c.name == wanted), None)


def parse_slash(text: str, extra: Sequence[SlashCommand] = ()) -> SlashInvocation | None:
    """Read a submitted text as a command; None when it is not one (no `/` first).

    A text that starts with blanks and then `/` is deliberately not a command: that is how
    a literal slash is sent (`literal_text`).
    """
    if not text.startswith("/"):
        return None
    body = text[1:]
    parts = body.split(maxsplit=1)
    if not parts or body[:1].isspace():
        # "/" alone, or "/ something": a slash with no name.
        return SlashInvocation("", body.strip(), None)
    name = parts[0]
    argument = parts[1].strip() if len(parts) > 1 else ""
    return SlashInvocation(name, argument, find_command(name, extra))


def literal_text(text: str) -> str:
    """What to send to the model for a text that `parse_slash` did not take.

    Blanks before a `/` are the user's way to say "not a command", so they are dropped;
    any other text comes back unchanged.
    """
    stripped = text.lstrip(_LEADING_BLANKS)
    if stripped != text and stripped.startswith("/"):
        return stripped
    return text


def all_commands(extra: Sequence[SlashCommand] = ()) -> list[SlashCommand]:
    """ink's commands, then the extensions' (a name ink uses is never an extension's)."""
    return [*COMMANDS, *(c for c in extra if c.name not in _BY_NAME)]


def complete_command(prefix: str, extra: Sequence[SlashCommand] = ()) -> list[SlashCommand]:
    """Commands whose name starts with `prefix` (a leading "/" is ignored), display order."""
    wanted = prefix.removeprefix("/").lower()
    return [command for command in all_commands(extra) if command.name.startswith(wanted)]


def closest_commands(
    name: str, limit: int = 3, extra: Sequence[SlashCommand] = ()
) -> list[SlashCommand]:
    """Commands `name` was probably meant to be: completions first, then near spellings."""
    wanted = name.lower()
    found = complete_command(wanted, extra) if wanted else []
    by_name = {command.name: command for command in all_commands(extra)}
    close = difflib.get_close_matches(wanted, list(by_name), n=limit, cutoff=0.6)
    for candidate in close:
        command = by_name[candidate]
        if command not in found:
            found.append(command)
    return found[:limit]


def unknown_message(name: str, extra: Sequence[SlashCommand] = ()) -> str:
    """What to tell the user about "/name" when there is no such command."""
    if not name:
        head = "Type a command name after /."
    else:
        head = f"Unknown command /{name}."
        suggestions = closest_commands(name, extra=extra)
        if suggestions:
            names = " or ".join(f"/{command.name}" for command in suggestions)
            head += f" Did you mean {names}?"
    return f"{head} /help lists the commands; start with a space to send a literal /."


@dataclass(frozen=True, slots=True)
class CommandToken:
    """The "/name" being typed at the start of the input, for completion."""

    end: int
    """Offset just past the token (the first whitespace after it, or the text's end)."""
    prefix: str
    """The name typed so far, up to the cursor, without the slash."""


def command_token(text: str, cursor_offset: int) -> CommandToken | None:
    """The command name under the cursor, when the text starts with `/` and the cursor is
    inside that first word; None otherwise (commands are only recognised at the start)."""
    if not text.startswith("/") or cursor_offset < 1:
        return None
    end = 1
    while end < len(text) and not text[end].isspace():
        end += 1
    if cursor_offset > end:
        return None
    return CommandToken(end, text[1:cursor_offset])
