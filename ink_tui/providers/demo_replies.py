"""The demo model's canned replies: the text, thinking and tool calls of each plan step.

Each `*_reply` function builds one step's `DemoReply` from what the plan decided and what
the tools showed (`Findings`); `acknowledge_input` and `acknowledge_failures` write the
preface that quotes new user messages and failed calls. Which step comes next is decided
in `demo_script`; nothing here reads the history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ink_tui.core.messages import ToolResultMessage, UserKind, UserMessage
from ink_tui.core.sentence import sentence
from ink_tui.providers.demo_findings import Findings

__all__ = [
    "BASH_COMMAND",
    "READ_LIMIT",
    "DemoReply",
    "PlannedCall",
    "acknowledge_failures",
    "acknowledge_input",
    "answer_reply",
    "bash_reply",
    "block_quote",
    "counted",
    "done_reply",
    "find_reply",
    "greeting_reply",
    "grep_reply",
    "intro_reply",
    "listed",
    "nothing_to_stop_reply",
    "reads_reply",
    "set_front_end",
    "stop_note",
    "summary_reply",
    "wants_stop",
    "worded",
]

BASH_COMMAND = "echo \"counting files...\"; sleep 2; find . -type f -not -path './.git/*' | wc -l"
READ_LIMIT = 40

CONNECT = (
    "To talk to a real model, start ink with `--base-url`, `--model` and `--api-key`, "
    "or set `INK_API_KEY` (or `OPENAI_API_KEY`, or `ANTHROPIC_API_KEY` for Claude)."
)
TRY_THIS = """\
- Press **Enter** while I'm working to **steer** me: your message reaches me before my next step.
- Press **Alt+Enter** to queue a **follow-up**: it waits until I have finished, then runs.
- {interrupt}
- Start a line with `!` (like `!ls -la`) to run it in the shell without asking the model."""

# The keys and buttons the text names are the front end's: the terminal's (`ink`) or the
# browser page's (`ink serve` calls `set_front_end("page")`).
_WORDS = {
    "terminal": {
        "interrupt": "Press **Ctrl+C** to **interrupt**: the run stops and anything still "
        "queued comes back to the editor.",
        "answer": "press **Ctrl+G** (or click a choice) to answer, then **y** allows it once "
        "and **n** denies it",
        "stop": "**Ctrl+C** interrupts",
    },
    "page": {
        "interrupt": "Click **■ Stop** to **interrupt**: the run stops and anything still "
        "queued comes back to the text box.",
        "answer": "click **Allow once** to run it, or **Deny**",
        "stop": "**■ Stop** interrupts",
    },
}
_front_end = "terminal"


def set_front_end(name: str) -> None:
    """Word the demo for `name`'s keys and buttons: "terminal" or "page"."""
    global _front_end
    if name not in _WORDS:
        raise ValueError(f"unknown front end {name!r}")
    _front_end = name


def worded(terminal: str, page: str) -> str:
    """`terminal` or `page`, whichever front end the demo talks to (see `set_front_end`):
    for text that names keys or buttons."""
    return page if _front_end == "page" else terminal


def _words(key: str) -> str:
    return _WORDS[_front_end][key]


def _try_this() -> str:
    return TRY_THIS.format(interrupt=_words("interrupt"))


@dataclass(slots=True)
class PlannedCall:
    """A tool call the demo wants to make; the provider gives it an id."""

    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class DemoReply:
    text: str
    thinking: str = ""
    calls: list[PlannedCall] = field(default_factory=list)


# --- small text helpers (the sub-agent's replies use them too) -------------------------


def block_quote(text: str, limit: int = 400) -> str:
    text = text.strip()
    if len(text) > limit:
        text = text[:limit].rstrip() + "…"
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""])


def listed(items: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(f"`{item}`" for item in items[:limit])
    more = len(items) - limit
    return f"{shown} and {more} more" if more > 0 else shown


def counted(count: int, word: str, plural: str = "") -> str:
    return f"{count} {word}" if count == 1 else f"{count} {plural or word + 's'}"


def _entries(entries: Sequence[str]) -> str:
    return counted(len(entries), "entry", "entries")


# --- acknowledging what came in ---------------------------------------------------------


def wants_stop(text: str) -> bool:
    """A steer that asks to stop or skip the rest: go straight to the summary (or, for
    the sub-agent, to its answer)."""
    return re.search(r"\b(stop|skip)", text, re.IGNORECASE) is not None


def acknowledge_input(pending: Sequence[UserMessage], stop_note: str) -> str:
    """Quote the new user messages; `stop_note` (if any) replaces the usual "I'll adjust"."""
    parts: list[str] = []
    steers = [m.content for m in pending if m.kind == "steer"]
    follow_ups = [m.content for m in pending if m.kind == "follow_up"]
    if steers:
        quoted = "\n\n".join(block_quote(text) for text in steers)
        adjust = stop_note or "Got it, I'll adjust and take that into account from here on."
        parts.append(f"You steered me:\n\n{quoted}\n\n{adjust}")
    if follow_ups:
        quoted = "\n\n".join(block_quote(text) for text in follow_ups)
        parts.append(f"Your follow-up:\n\n{quoted}")
    return "\n\n".join(parts)


def acknowledge_failures(fresh: Sequence[ToolResultMessage]) -> str:
    """A line for each failed call among the latest results, or "" when none failed."""
    lines = []
    for result in fresh:
        if result.is_error:
            first = next((ln.strip() for ln in result.content.splitlines() if ln.strip()), "")
            lines.append(
                sentence(f"That call failed: `{result.tool_name}`: {first or 'no details'}")
            )
    return "\n".join(lines) + ("\n\nNo harm done; moving on." if lines else "")


def stop_note(kind: UserKind, anything_done: bool) -> str:
    """What to say to a steer that asks to stop, in an episode of `kind`."""
    if kind == "prompt":
        return "Understood: I'll skip the rest of the plan and go straight to the summary."
    return "Understood." if kind == "steer" and not anything_done else "Understood: I'll wrap up."


# --- the steps of the prompt's plan -----------------------------------------------------


def greeting_reply() -> DemoReply:
    text = (
        "Hi! I'm **ink's built-in demo model**. I run offline and my replies are scripted, "
        "because no API key or base URL is configured.\n\n"
        f"{CONNECT}\n\n"
        "Things to try:\n\n"
        "- Ask a real question, like *what is in this project?*, and watch me use tools.\n"
        f"{_try_this()}\n"
    )
    return DemoReply(text, "A greeting. Say what I am and what to try; no tools needed.")


def intro_reply(prompt: str, workspace: str) -> DemoReply:
    text = (
        "**This is ink's offline demo model.** No API key or base URL is configured, so "
        "nothing leaves this machine and my replies are scripted.\n\n"
        f"{CONNECT}\n\n"
        f"You asked:\n\n{block_quote(prompt)}\n\n"
        "I can't really answer that, but I can show you how ink works. "
        f"I'll take a look around the workspace (`{workspace}`) first."
    )
    thinking = "No model is configured, so I'm the demo. Start by listing the workspace."
    return DemoReply(text, thinking, [PlannedCall("ls", {})])


def reads_reply(found: Findings, files: list[str]) -> DemoReply:
    entries = found.entries or []
    dirs = [name for name in entries if name.endswith("/")]
    subdirs = f" ({counted(len(dirs), 'directory', 'directories')})" if dirs else ""
    text = f"The workspace holds {_entries(entries)}{subdirs}: {listed(entries)}.\n\n"
    named = " and ".join(f"`{path}`" for path in files)
    together = ", both at once: reading is safe to run concurrently" if len(files) > 1 else ""
    text += f"I'll read {named}{together}."
    calls = [PlannedCall("read", {"path": path, "limit": READ_LIMIT}) for path in files]
    return DemoReply(text, "Pick the files most worth reading and read them together.", calls)


def grep_reply(found: Findings, word: str) -> DemoReply:
    if found.reads:
        seen = ", ".join(f"`{path}` ({counted(shown, 'line')})" for path, shown, _ in found.reads)
        text = f"Read {seen}.\n\n"
    elif found.entries is not None:
        text = "There is nothing here worth reading, so I'll search instead.\n\n"
    else:
        text = ""
    if word == "TODO":
        text += "Your prompt has no good search word, so I'll look for `TODO` notes instead."
    else:
        text += f"Now I'll search the workspace for `{word}`, a word from your prompt."
    call = PlannedCall("grep", {"pattern": word, "path": ".", "ignore_case": True})
    return DemoReply(text, f"Search the workspace for `{word}`.", [call])


def bash_reply(found: Findings) -> DemoReply:
    text = ""
    if found.search is not None:
        pattern, hits = found.search
        text = f"Found {counted(hits, 'match', 'matches')} for `{pattern}`.\n\n"
    text += (
        "Last, a shell command that counts the files. ink asks you before any command runs "
        f"(approval policy `ask`): {_words('answer')}. What you type meanwhile steers me: "
        "type a message and press **Enter**. The command sleeps for 2 seconds on purpose; "
        f"{_words('stop')}."
    )
    call = PlannedCall("bash", {"command": BASH_COMMAND, "timeout": 30})
    return DemoReply(text, "Count the files with a slow, harmless command.", [call])


def summary_reply(found: Findings, workspace: str) -> DemoReply:
    bullets: list[str] = []
    if found.entries is not None:
        bullets.append(f"**Listing:** {_entries(found.entries)}: {listed(found.entries)}")
    if found.reads:
        read = ", ".join(
            f"`{path}` ({shown} of {total} lines)"
            if total
            else f"`{path}` ({counted(shown, 'line')})"
            for path, shown, total in found.reads
        )
        bullets.append(f"**Read:** {read}")
    if found.search is not None:
        pattern, hits = found.search
        bullets.append(f"**Search:** {counted(hits, 'match', 'matches')} for `{pattern}`")
    if found.file_count is not None:
        bullets.append(f"**Shell:** `find … | wc -l` counted {counted(found.file_count, 'file')}")
    if found.test_files is not None:
        counted_files = counted(found.test_files, "test file")
        bullets.append(f"**Sub-agent:** surveyed the tests and counted {counted_files}")
    if found.failed:
        bullets.append(f"**Failed calls:** {', '.join(f'`{name}`' for name in found.failed)}")
    if not bullets:
        bullets.append("Nothing yet: we stopped before I looked at anything.")
    example = found.reads[0][0] if found.reads else "README.md"
    text = (
        f"## What I saw in `{workspace}`\n\n"
        + "\n".join(f"- {bullet}" for bullet in bullets)
        + "\n\nA real model would now answer your question. Code comes out highlighted:\n\n"
        "```python\n"
        "from pathlib import Path\n\n\n"
        "def count_lines(path: Path) -> int:\n"
        '    """Count the lines of a text file."""\n'
        '    with path.open(encoding="utf-8") as handle:\n'
        "        return sum(1 for _ in handle)\n\n\n"
        f'print(count_lines(Path("{example}")))\n'
        "```\n\n"
        f"### Try this\n\n{_try_this()}\n\n{CONNECT}\n"
    )
    return DemoReply(text, "Sum up what the tools showed and point at the run-control keys.")


def done_reply() -> DemoReply:
    """Called again after a finished reply with nothing new."""
    return DemoReply("I'm done here. Ask me something else, or try `!ls` to run a command.")


# --- the mini-plan for input after a finished reply -------------------------------------


def find_reply(pattern: str, kind: UserKind) -> DemoReply:
    intro = "I had already finished, so I'll treat this as a new request. " * (kind == "steer")
    text = f"{intro}Let me look for files matching `{pattern}` for that."
    return DemoReply(
        text, "A new request: a quick find.", [PlannedCall("find", {"pattern": pattern})]
    )


def answer_reply(request: str, kind: UserKind, found: Findings) -> DemoReply:
    short = request if len(request) <= 60 else request[:60].rstrip() + "…"
    if found.found is not None:
        pattern, paths = found.found
        seen = f": {listed(paths)}" if paths else ""
        lines = f"I found {counted(len(paths), 'file')} matching `{pattern}`{seen}."
    else:
        lines = "I didn't get to look for files."
    label = "follow-up" if kind == "follow_up" else "request"
    text = (
        f"### Follow-up: {short}\n\n{lines}\n\n"
        f'As the demo I can\'t really answer "{request}", but that is how a {label} works: it '
        "waited until I had finished, then continued the same run, with the same history."
    )
    return DemoReply(text, "Answer the follow-up briefly.")


def nothing_to_stop_reply() -> DemoReply:
    """A steer asking to stop arrived after the reply had already finished."""
    return DemoReply("I had already finished, so there was nothing left to stop.")
