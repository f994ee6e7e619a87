"""The demo model's script: what it says next and which tools it calls, as pure functions.

`plan_reply(messages)` reads the history since the last prompt and decides the next reply.
Nothing here sleeps, streams or touches the file system: the model only knows the
workspace through the tool results in the history. `demo.py` streams what this decides.

The plan for a prompt, one reply per step:

1. say it is the offline demo, quote the prompt back, call `ls`;
2. two `read`s at once on files picked from the listing (skipped when there are none);
3. `grep` for a word from the prompt (or "TODO");
4. a harmless, slow `bash` command, so there is time to steer or interrupt;
5. a markdown summary of what it saw, with a code block and run-control tips.

Which step comes next is decided by the tools already called since the prompt, not by
counting replies, so results of calls it did not make are simply ignored. Steering
messages are quoted at the start of the next reply ("stop"/"skip" jumps to the summary);
a follow-up (or a steer) after a finished reply starts a mini-plan: `find`, then an answer.
A failed call is acknowledged and the plan moves on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "BASH_COMMAND",
    "DemoReply",
    "Findings",
    "PlannedCall",
    "count_matches",
    "count_read_lines",
    "find_pattern_for",
    "gather_findings",
    "is_greeting",
    "last_number",
    "parse_listing",
    "pick_files",
    "pick_search_word",
    "plan_reply",
    "wants_stop",
]

BASH_COMMAND = "echo \"counting files...\"; sleep 2; find . -type f -not -path './.git/*' | wc -l"
READ_LIMIT = 40
MAX_READS = 2

CONNECT = (
    "To talk to a real model, start ink with `--base-url`, `--model` and `--api-key`, "
    "or set the `INK_API_KEY` (or `OPENAI_API_KEY`) environment variable."
)
TRY_THIS = """\
- Press **Enter** while I'm working to **steer** me: your message reaches me before my next step.
- Press **Alt+Enter** to queue a **follow-up**: it waits until I have finished, then runs.
- Press **Ctrl+C** to **interrupt**: the run stops and anything still queued comes back \
to the editor.
- Start a line with `!` (like `!ls -la`) to run it in the shell without asking the model."""


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


@dataclass(slots=True)
class Findings:
    """What the tool results of one episode told the model about the workspace."""

    entries: list[str] | None = None  # names from `ls` (directories end with "/")
    reads: list[tuple[str, int, int | None]] = field(default_factory=list)  # path, shown, total
    search: tuple[str, int] | None = None  # grep pattern, matching lines
    file_count: int | None = None  # the number the bash command printed
    found: tuple[str, list[str]] | None = None  # find pattern, paths
    failed: list[str] = field(default_factory=list)  # tool names whose call failed


# --- reading tool output ---------------------------------------------------------------

_NOTE = re.compile(r"^(\[.*\s.*\]|\(.*\))$")
_NO_MATCH = re.compile(r"^(no (matches|files|results)|nothing found)\b", re.IGNORECASE)


def _is_note(line: str) -> bool:
    """A tool's remark rather than data: "[Showing lines 1-40 of 90 ...]", "(empty)"."""
    return bool(_NOTE.match(line.strip()))


def _data_lines(content: str) -> list[str]:
    return [line for line in content.splitlines() if line.strip() and not _is_note(line)]


def parse_listing(content: str) -> list[str]:
    """Entry names from an `ls` result, in order; directories keep their trailing "/"."""
    names: list[str] = []
    for line in _data_lines(content):
        name = re.split(r"\t|\s{2,}", line.strip())[0].removeprefix("./")
        if name and not _NO_MATCH.match(name):
            names.append(name)
    return names


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_BINARY = _words(
    "png jpg jpeg gif bmp ico webp svgz pdf zip gz tgz bz2 xz 7z tar whl egg so dylib dll "
    "exe bin o a obj class jar pyc pyo pyd wasm woff woff2 ttf otf eot mp3 mp4 wav ogg mov "
    "avi sqlite sqlite3 db pkl pickle npy npz parquet"
)
_LOCKFILES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock"})
_MANIFESTS = frozenset(
    {"pyproject.toml", "package.json", "cargo.toml", "go.mod", "setup.py", "setup.cfg"}
)
_MAIN_SOURCES = _words(
    "main.py __main__.py app.py cli.py server.py index.js index.ts main.js main.ts main.go "
    "main.rs lib.rs main.c main.cpp"
)
_SOURCE_EXT = _words("py js ts tsx jsx go rs rb java kt c h cpp hpp cs swift sh")
_TEXT_EXT = _words("md rst txt toml yaml yml json cfg ini")
_PLAIN_FILES = frozenset({"makefile", "dockerfile", "license", "justfile", "procfile"})


def _rank(name: str) -> int | None:
    """Lower is more worth reading; None for what is not a readable file."""
    lower = name.lower()
    ext = lower.rsplit(".", 1)[1] if "." in lower.lstrip(".") else ""
    if name.endswith("/") or ext in _BINARY or lower in _LOCKFILES or lower.endswith(".lock"):
        return None
    if lower.startswith("readme"):
        return 0
    if lower in _MANIFESTS:
        return 1
    if lower in _MAIN_SOURCES:
        return 2
    if ext in _SOURCE_EXT:
        return 3
    if ext in _TEXT_EXT or lower in _PLAIN_FILES:
        return 4
    # No extension and not a known file: quite likely a directory the listing did not mark.
    return 5 if ext else 6


def pick_files(entries: Sequence[str], limit: int = MAX_READS) -> list[str]:
    """The `limit` entries most worth reading: README, manifest, main sources, others."""
    ranked = [
        (rank, i, name) for i, name in enumerate(entries) if (rank := _rank(name)) is not None
    ]
    return [name for _, _, name in sorted(ranked)[:limit]]


_TOTAL = re.compile(r"\bof (\d+)\b")


def count_read_lines(content: str) -> tuple[int, int | None]:
    """Lines shown by a `read` result, and the file's total when the tool's note says it."""
    total: int | None = None
    for line in content.splitlines():
        if _is_note(line) and (match := _TOTAL.search(line)):
            total = int(match.group(1))
    return len([line for line in content.splitlines() if not _is_note(line)]), total


def count_matches(content: str) -> int:
    """Matching lines in a `grep` (or paths in a `find`) result."""
    lines = _data_lines(content)
    if not lines or _NO_MATCH.match(lines[0].strip()):
        return 0
    # grep with context prints "path-12-text" lines too; count only "path:12:text" then.
    hits = [line for line in lines if re.search(r":\d+:", line)]
    return len(hits) if hits else len(lines)


def last_number(content: str) -> int | None:
    """The last number a command printed: alone on its line if possible (`wc -l`)."""
    alone = re.findall(r"^\s*(\d+)\s*$", content, re.MULTILINE)
    if alone:
        return int(alone[-1])
    anywhere = re.findall(r"\d+", content)
    return int(anywhere[-1]) if anywhere else None


# --- reading the prompt -------------------------------------------------------------------

_GREETINGS = frozenset({"hello", "hi", "hey", "hallo", "hello there", "hi there"})
_STOPWORDS = _words(
    """about above after again also could does doing done from have here into just know
    like look make more most much need only other over please really same should show
    some such tell than that their them then there these they thing things this those
    very want what when where which while will with would your yours code file files
    folder project repo repository workspace explain describe summarize summarise give
    help find search check read write edit change list print using used work works"""
)


def is_greeting(text: str) -> bool:
    """True for a bare greeting: "hello", "Hi!", "hey there." (case and punctuation ignored)."""
    words = re.sub(r"[^\w\s]", " ", text.lower()).split()
    return " ".join(words) in _GREETINGS


def pick_search_word(text: str) -> str:
    """The longest meaningful word of the prompt (first wins a tie), or "TODO"."""
    best = ""
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        if len(word) >= 4 and word.lower() not in _STOPWORDS and len(word) > len(best):
            best = word
    return best or "TODO"


def wants_stop(text: str) -> bool:
    """A steer that asks to stop or skip the rest: go straight to the summary."""
    return re.search(r"\b(stop|skip)", text, re.IGNORECASE) is not None


_FIND_PATTERNS = (
    (r"\bpython\b|\.py\b", "**/*.py"),
    (r"\btests?\b", "**/test*"),
    (r"\btypescript\b|\.ts\b", "**/*.ts"),
    (r"\bjavascript\b|\.js\b", "**/*.js"),
    (r"\brust\b|\.rs\b", "**/*.rs"),
    (r"\b(config|settings|toml|yaml|json)\b", "**/*.{toml,yaml,yml,json}"),
)


def find_pattern_for(text: str) -> str:
    """The glob a follow-up's `find` uses: Markdown files unless the text hints otherwise."""
    for regex, pattern in _FIND_PATTERNS:
        if re.search(regex, text, re.IGNORECASE):
            return pattern
    return "**/*.md"


# --- reading the history ------------------------------------------------------------------


@dataclass(slots=True)
class _Episode:
    """The prompt's plan, or a mini-plan started by input after a finished reply."""

    kind: Literal["prompt", "steer", "follow_up"]
    users: list[UserMessage]
    calls: dict[str, ToolCall] = field(default_factory=dict)
    results: dict[str, ToolResultMessage] = field(default_factory=dict)
    finished: bool = False


@dataclass(slots=True)
class _Run:
    episodes: list[_Episode]
    pending: list[UserMessage]  # user messages after the last assistant reply
    fresh: list[ToolResultMessage]  # results of the last reply's calls


def _read_run(messages: Sequence[Message]) -> _Run | None:
    starts = [
        i for i, m in enumerate(messages) if isinstance(m, UserMessage) and m.kind == "prompt"
    ]
    if not starts:
        return None
    prompt = messages[starts[-1]]
    assert isinstance(prompt, UserMessage)
    run = _Run([_Episode("prompt", [prompt])], [], [])
    last_calls: set[str] = set()
    for message in messages[starts[-1] + 1 :]:
        episode = run.episodes[-1]
        if isinstance(message, AssistantMessage):
            run.pending, run.fresh = [], []
            last_calls = {call.id for call in message.tool_calls}
            episode.calls.update((call.id, call) for call in message.tool_calls)
            episode.finished = not message.tool_calls
        elif isinstance(message, ToolResultMessage):
            if message.call_id in episode.calls:
                episode.results[message.call_id] = message
            if message.call_id in last_calls:
                run.fresh.append(message)
        else:
            if episode.finished:
                episode = _Episode(message.kind, [])
                run.episodes.append(episode)
            episode.users.append(message)
            run.pending.append(message)
    return run


def gather_findings(calls: Sequence[ToolCall], results: dict[str, ToolResultMessage]) -> Findings:
    """Fold the results of the demo's own calls (in call order) into `Findings`."""
    found = Findings()
    for call in calls:
        result = results.get(call.id)
        if result is None:
            continue
        if result.is_error:
            found.failed.append(call.name)
        elif call.name == "ls":
            found.entries = parse_listing(result.content)
        elif call.name == "read":
            shown, total = count_read_lines(result.content)
            found.reads.append((str(call.arguments.get("path", "?")), shown, total))
        elif call.name == "grep":
            found.search = (str(call.arguments.get("pattern", "")), count_matches(result.content))
        elif call.name == "bash":
            found.file_count = last_number(result.content)
        elif call.name == "find":
            paths = [line.strip() for line in _data_lines(result.content)]
            if count_matches(result.content) == 0:
                paths = []
            found.found = (str(call.arguments.get("pattern", "")), paths)
    return found


# --- what to say ----------------------------------------------------------------------------


def _quote(text: str, limit: int = 400) -> str:
    text = text.strip()
    if len(text) > limit:
        text = text[:limit].rstrip() + "…"
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""])


def _names(items: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(f"`{item}`" for item in items[:limit])
    more = len(items) - limit
    return f"{shown} and {more} more" if more > 0 else shown


def _plural(count: int, word: str, plural: str = "") -> str:
    return f"{count} {word}" if count == 1 else f"{count} {plural or word + 's'}"


def _entries(entries: Sequence[str]) -> str:
    return _plural(len(entries), "entry", "entries")


def _acknowledge(pending: Sequence[UserMessage], stop_note: str) -> str:
    """Quote the new user messages; `stop_note` (if any) replaces the usual "I'll adjust"."""
    parts: list[str] = []
    steers = [m.content for m in pending if m.kind == "steer"]
    follow_ups = [m.content for m in pending if m.kind == "follow_up"]
    if steers:
        quoted = "\n\n".join(_quote(text) for text in steers)
        adjust = stop_note or "Got it, I'll adjust and take that into account from here on."
        parts.append(f"You steered me:\n\n{quoted}\n\n{adjust}")
    if follow_ups:
        quoted = "\n\n".join(_quote(text) for text in follow_ups)
        parts.append(f"Your follow-up:\n\n{quoted}")
    return "\n\n".join(parts)


def _acknowledge_errors(fresh: Sequence[ToolResultMessage]) -> str:
    lines = []
    for result in fresh:
        if result.is_error:
            first = next((ln.strip() for ln in result.content.splitlines() if ln.strip()), "")
            lines.append(f"That call failed: `{result.tool_name}`: {first or 'no details'}.")
    return "\n".join(lines) + ("\n\nNo harm done; moving on." if lines else "")


def _greeting() -> DemoReply:
    text = (
        "Hi! I'm **ink's built-in demo model**. I run offline and my replies are scripted, "
        "because no API key or base URL is configured.\n\n"
        f"{CONNECT}\n\n"
        "Things to try:\n\n"
        "- Ask a real question, like *what is in this project?*, and watch me use tools.\n"
        f"{TRY_THIS}\n"
    )
    return DemoReply(text, "A greeting. Say what I am and what to try; no tools needed.")


def _intro(prompt: str, workspace: str) -> DemoReply:
    text = (
        "**This is ink's offline demo model.** No API key or base URL is configured, so "
        "nothing leaves this machine and my replies are scripted.\n\n"
        f"{CONNECT}\n\n"
        f"You asked:\n\n{_quote(prompt)}\n\n"
        "I can't really answer that, but I can show you how ink works. "
        f"I'll take a look around the workspace (`{workspace}`) first."
    )
    thinking = "No model is configured, so I'm the demo. Start by listing the workspace."
    return DemoReply(text, thinking, [PlannedCall("ls", {})])


def _reads(found: Findings, files: list[str]) -> DemoReply:
    entries = found.entries or []
    dirs = [name for name in entries if name.endswith("/")]
    subdirs = f" ({_plural(len(dirs), 'directory', 'directories')})" if dirs else ""
    text = f"The workspace holds {_entries(entries)}{subdirs}: {_names(entries)}.\n\n"
    named = " and ".join(f"`{path}`" for path in files)
    together = ", both at once: reading is safe to run concurrently" if len(files) > 1 else ""
    text += f"I'll read {named}{together}."
    calls = [PlannedCall("read", {"path": path, "limit": READ_LIMIT}) for path in files]
    return DemoReply(text, "Pick the files most worth reading and read them together.", calls)


def _grep(found: Findings, word: str) -> DemoReply:
    if found.reads:
        seen = ", ".join(f"`{path}` ({_plural(shown, 'line')})" for path, shown, _ in found.reads)
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


def _bash(found: Findings) -> DemoReply:
    text = ""
    if found.search is not None:
        pattern, hits = found.search
        text = f"Found {_plural(hits, 'match', 'matches')} for `{pattern}`.\n\n"
    text += (
        "Last, a shell command that counts the files. It sleeps for 2 seconds on purpose: "
        "type a message and press **Enter** now to steer me, or press **Ctrl+C** to interrupt."
    )
    call = PlannedCall("bash", {"command": BASH_COMMAND, "timeout": 30})
    return DemoReply(text, "Count the files with a slow, harmless command.", [call])


def _summary(found: Findings, workspace: str) -> DemoReply:
    bullets: list[str] = []
    if found.entries is not None:
        bullets.append(f"**Listing:** {_entries(found.entries)}: {_names(found.entries)}")
    if found.reads:
        read = ", ".join(
            f"`{path}` ({shown} of {total} lines)"
            if total
            else f"`{path}` ({_plural(shown, 'line')})"
            for path, shown, total in found.reads
        )
        bullets.append(f"**Read:** {read}")
    if found.search is not None:
        pattern, hits = found.search
        bullets.append(f"**Search:** {_plural(hits, 'match', 'matches')} for `{pattern}`")
    if found.file_count is not None:
        bullets.append(f"**Shell:** `find … | wc -l` counted {_plural(found.file_count, 'file')}")
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
        f"### Try this\n\n{TRY_THIS}\n\n{CONNECT}\n"
    )
    return DemoReply(text, "Sum up what the tools showed and point at the run-control keys.")


def _find(episode: _Episode) -> DemoReply:
    request = " ".join(m.content.strip() for m in episode.users)
    pattern = find_pattern_for(request)
    intro = "I had already finished, so I'll treat this as a new request. " * (
        episode.kind == "steer"
    )
    text = f"{intro}Let me look for files matching `{pattern}` for that."
    return DemoReply(
        text, "A new request: a quick find.", [PlannedCall("find", {"pattern": pattern})]
    )


def _answer(episode: _Episode, found: Findings) -> DemoReply:
    request = " ".join(m.content.strip() for m in episode.users)
    short = request if len(request) <= 60 else request[:60].rstrip() + "…"
    if found.found is not None:
        pattern, paths = found.found
        seen = f": {_names(paths)}" if paths else ""
        lines = f"I found {_plural(len(paths), 'file')} matching `{pattern}`{seen}."
    else:
        lines = "I didn't get to look for files."
    label = "follow-up" if episode.kind == "follow_up" else "request"
    text = (
        f"### Follow-up: {short}\n\n{lines}\n\n"
        f'As the demo I can\'t really answer "{request}", but that is how a {label} works: it '
        "waited until I had finished, then continued the same run, with the same history."
    )
    return DemoReply(text, "Answer the follow-up briefly.")


def plan_reply(messages: Sequence[Message], workspace: str = "workspace") -> DemoReply:
    """The demo's next reply to `messages`; `workspace` is only a name to show."""
    run = _read_run(messages)
    if run is None:
        return _greeting()
    episode = run.episodes[-1]
    stop = any(m.kind == "steer" and wants_stop(m.content) for m in run.pending)
    if episode.finished:  # called again with nothing new: just say so
        return DemoReply("I'm done here. Ask me something else, or try `!ls` to run a command.")
    prompt = run.episodes[0].users[0].content
    calls = list(episode.calls.values())
    done = {call.name for call in calls}
    found = gather_findings(calls, episode.results)
    if episode.kind != "prompt":
        step = _answer(episode, found) if "find" in done or stop else _find(episode)
        if stop and episode.kind == "steer" and not done:
            step = DemoReply("I had already finished, so there was nothing left to stop.")
    elif is_greeting(prompt) and not done:
        step = _greeting()
    elif stop or "bash" in done:
        step = _summary(found, workspace)
    elif "grep" in done:
        step = _bash(found)
    elif "read" in done:
        step = _grep(found, pick_search_word(prompt))
    elif "ls" in done:
        files = pick_files(found.entries or [])
        step = _reads(found, files) if files else _grep(found, pick_search_word(prompt))
    else:
        step = _intro(prompt, workspace)
    stop_note = ""
    if stop and episode.kind == "prompt":
        stop_note = "Understood: I'll skip the rest of the plan and go straight to the summary."
    elif stop:
        stop_note = (
            "Understood." if episode.kind == "steer" and not done else "Understood: I'll wrap up."
        )
    acks = (_acknowledge(run.pending, stop_note), _acknowledge_errors(run.fresh))
    preface = [part for part in acks if part]
    step.text = "\n\n".join([*preface, step.text])
    return step
