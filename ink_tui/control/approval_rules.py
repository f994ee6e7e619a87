"""Approval rules: what "allow for this session" and "always" allow, as text and as a check.

A rule is written `TOOL` or `bash:PREFIX`:

- `edit`, `write`: every call of that tool;
- `bash`: every command (a broad rule; nothing in ink proposes it);
- `bash:pytest`, `bash:git status`: a command whose first words are these.

A prefix rule only matches a *simple* command: one with none of `; & | < > $ \\` ( ) { }`
or a line break, since `pytest && rm -rf ~` starts with `pytest` too. Anything else asks.
Pure functions, no I/O: the config reader validates rules with `parse_rule`, the gate
matches them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

# Tools that can change something; every other tool is read-only and never asks.
ASKING_TOOLS = ("bash", "write", "edit")

# Characters that make a command more than "a program and its arguments".
_SHELL_SYNTAX = frozenset(";&|<>$`(){}\n\r\\")

# Programs whose second word says what they do ("git status", "npm run"): a session rule
# proposed for them keeps two words, so allowing `git status` does not allow `git push`.
_TWO_WORDS = frozenset(
    {
        "git",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "cargo",
        "go",
        "uv",
        "pip",
        "pip3",
        "poetry",
        "make",
        "docker",
        "kubectl",
        "dotnet",
        "gradle",
        "mvn",
        "bundle",
        "rake",
        "python",
        "python3",
        "node",
        "ruby",
        "perl",
        "bash",
        "sh",
        "zsh",
    }
)
# Interpreters: `python -m pytest` keeps the module too.
_INTERPRETERS = frozenset({"python", "python3"})


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str
    # The command's first words (bash only); None matches every call of the tool.
    prefix: tuple[str, ...] | None = None

    @property
    def text(self) -> str:
        if self.prefix is None:
            return self.tool
        return f"{self.tool}:{shlex.join(self.prefix)}"

    def describe(self) -> str:
        """For a person: "`pytest` commands", "every edit"."""
        if self.prefix is not None:
            return f"`{shlex.join(self.prefix)}` commands"
        return "every command" if self.tool == "bash" else f"every {self.tool}"

    def matches(self, name: str, arguments: dict[str, Any]) -> bool:
        if name != self.tool:
            return False
        if self.prefix is None:
            return True
        command = arguments.get("command")
        words = command_words(command) if isinstance(command, str) else None
        return words is not None and tuple(words[: len(self.prefix)]) == self.prefix


def command_words(command: str) -> list[str] | None:
    """The words of a simple command; None when it has shell syntax or does not split."""
    if any(char in _SHELL_SYNTAX for char in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words or None


def command_prefix(command: str) -> tuple[str, ...] | None:
    """What "allow for this session" proposes for `command`: its first word(s); None when
    no prefix can be offered safely (shell syntax, `VAR=x cmd`, `sh -c ...`)."""
    words = command_words(command)
    if not words or "=" in words[0]:
        return None
    first = words[0]
    if first not in _TWO_WORDS or len(words) == 1:
        return (first,)
    second = words[1]
    if first in _INTERPRETERS and second == "-m" and len(words) > 2:
        return (first, "-m", words[2])
    if second.startswith("-"):
        # `git -C x push`, `bash -c '...'`: the options hide what runs; only once.
        return None
    return (first, second)


def rule_for(name: str, arguments: dict[str, Any]) -> Rule | None:
    """The rule "allow for this session" / "always" would add for this call; None when
    only "allow once" is safe (a bash command with shell syntax)."""
    if name != "bash":
        return Rule(name) if name in ASKING_TOOLS else None
    command = arguments.get("command")
    prefix = command_prefix(command) if isinstance(command, str) else None
    return Rule("bash", prefix) if prefix is not None else None


def parse_rule(text: str) -> Rule:
    """`TOOL` or `bash:PREFIX` as a rule; ValueError says what is wrong."""
    tool, colon, rest = text.strip().partition(":")
    tool = tool.strip()
    if tool not in ASKING_TOOLS:
        raise ValueError(
            f"rule {text!r}: the tool must be one of {', '.join(ASKING_TOOLS)} "
            "(other tools never ask)"
        )
    if not colon:
        return Rule(tool)
    if tool != "bash":
        raise ValueError(f"rule {text!r}: only bash rules take a command prefix (bash:pytest)")
    words = command_words(rest)
    if words is None:
        raise ValueError(
            f"rule {text!r}: the prefix must be plain words, e.g. 'bash:pytest' or "
            "'bash:git status' (no ; & | < > $ or brackets)"
        )
    return Rule("bash", tuple(words))
