"""Guard: stop the model from writing outside the workspace.

Copy to ~/.config/ink/extensions/ (every workspace) or <workspace>/.ink/extensions/.

It checks every `write` and `edit` (their `path`) and every `bash` command before it
runs: the targets of output redirections (`>`, `>>`, `&>`, `2>`) and the paths given
to commands that change files (rm, mv, cp, touch, mkdir, tee, ln, sed -i, dd of=, ...).
Each path is resolved against the workspace with symlinks followed, so
`link-to-home/x` or `../x` count as outside. A blocked call never runs; the model is
told why and can do it inside the workspace instead.

A shell command can write in more ways than any parser sees (a script, `python -c`,
`$(...)`): this is a guard against mistakes, not a sandbox.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ink_tui.extensions import Ink, ToolCallInfo, block

# Always fine to write to.
ALLOWED = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
# Commands whose every path argument is written (or removed).
WRITES_ALL = {
    "rm",
    "rmdir",
    "touch",
    "mkdir",
    "tee",
    "chmod",
    "chown",
    "truncate",
    "shred",
    "unlink",
}
# Commands that write only their last path argument (the destination).
WRITES_LAST = {"cp", "mv", "ln", "install", "rsync"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "\n"}


def outside(path: str, workspace: Path) -> bool:
    """Whether `path` (relative to the workspace) lands outside it, symlinks followed."""
    expanded = os.path.expandvars(os.path.expanduser(path))
    if expanded in ALLOWED:
        return False
    real = Path(os.path.realpath(workspace / expanded))
    return not real.is_relative_to(Path(os.path.realpath(workspace)))


def _words(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: the shell would refuse it too
        return command.split()


def bash_targets(command: str) -> list[str]:
    """The paths a shell command would write to, as far as its words show."""
    targets: list[str] = []
    segment: list[str] = []
    words = _words(command)
    index = 0
    while index < len(words):
        word = words[index]
        if ">" in word and set(word) <= set("<>&|0123456789"):
            if index + 1 < len(words):
                targets.append(words[index + 1])
            index += 2
            continue
        if word in SEPARATORS or set(word) <= set(";&|()"):
            targets.extend(_command_targets(segment))
            segment = []
        else:
            segment.append(word)
        index += 1
    targets.extend(_command_targets(segment))
    return targets


def _command_targets(words: list[str]) -> list[str]:
    # Leading VAR=value assignments and wrappers do not name the command.
    while words and ("=" in words[0].split("/")[0] or words[0] in ("sudo", "env", "command")):
        words = words[1:]
    if not words:
        return []
    name = os.path.basename(words[0])
    args = [w for w in words[1:] if not w.startswith("-")]
    if name in WRITES_ALL:
        return args
    if name in WRITES_LAST:
        return args[-1:]
    if name == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
        return args[1:]  # the first is the script
    if name == "dd":
        return [w[3:] for w in words[1:] if w.startswith("of=")]
    return []


def check(call: ToolCallInfo, workspace: Path) -> str | None:
    """Why the call must not run, or None."""
    if call.name in ("write", "edit"):
        paths = [str(call.arguments.get("path", ""))]
    elif call.name == "bash":
        paths = bash_targets(str(call.arguments.get("command", "")))
    else:
        return None
    for path in paths:
        if path and outside(path, workspace):
            return (
                f"{path} is outside the workspace ({workspace}); this project only allows "
                "writes inside it. Write inside the workspace instead, or ask the user."
            )
    return None


def setup(ink: Ink) -> None:
    workspace = ink.workspace

    def on_tool_call(call: ToolCallInfo) -> object:
        reason = check(call, workspace)
        return block(reason) if reason else None

    ink.on("tool_call", on_tool_call)
