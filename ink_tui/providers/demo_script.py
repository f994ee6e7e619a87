"""The demo model's script: what it says next and which tools it calls, as pure functions.

`plan_reply(messages)` reads the history since the last prompt and decides the next reply.
Nothing here sleeps, streams or touches the file system: the model only knows the
workspace through the tool results in the history. `demo.py` streams what this decides.

The plan for a prompt, one reply per step:

1. say it is the offline demo, quote the prompt back, call `ls`;
2. two `read`s at once on files picked from the listing (skipped when there are none);
3. `grep` for a word from the prompt (or "TODO");
3a. when the `task` tool is offered: a sub-agent surveys the tests (`demo_subagent`), and
   the next reply says what it found;
4. changes, each asked about first (`demo_changes`): a `write` of a notes file of its
   own, an `edit` of it (both with their diffs), a plain command (`ls -la`) whose
   question offers "this session" and "always";
5. a harmless, slow `bash` command, so there is time to steer or interrupt;
6. a markdown summary of what it saw, with a code block and run-control tips.

Which step comes next is decided by the tools already called since the prompt, not by
counting replies, so results of calls it did not make are simply ignored. Steering
messages are quoted at the start of the next reply ("stop"/"skip" jumps to the summary);
a follow-up (or a steer) after a finished reply starts a mini-plan: `find`, then an answer.
A failed call is acknowledged and the plan moves on. A request whose history starts with
the survey's prompt is the demo's own sub-agent: it gets the sub-agent's part instead.

This module reads the prompt and the history and picks the step; the tool results are
parsed in `demo_findings` and each step's text and calls are written in `demo_replies`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ink_tui.providers.demo_changes import change_step
from ink_tui.providers.demo_findings import (
    Findings,
    count_matches,
    count_read_lines,
    gather_findings,
    last_number,
    parse_listing,
    pick_files,
)
from ink_tui.providers.demo_replies import (
    BASH_COMMAND,
    DemoReply,
    PlannedCall,
    acknowledge_failures,
    acknowledge_input,
    answer_reply,
    bash_reply,
    done_reply,
    find_reply,
    greeting_reply,
    grep_reply,
    intro_reply,
    nothing_to_stop_reply,
    reads_reply,
    stop_note,
    summary_reply,
    wants_stop,
)
from ink_tui.providers.demo_subagent import (
    SurveyHistory,
    is_survey,
    survey_reply,
    survey_report,
    task_reply,
)

# The tool-output and reply names are re-exported so callers can keep importing them here.
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


# --- reading the prompt -------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


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


# --- choosing the next step ---------------------------------------------------------------


def _request_text(episode: _Episode) -> str:
    """What the user asked for in a mini-plan: its messages joined into one line."""
    return " ".join(m.content.strip() for m in episode.users)


def _survey_history(run: _Run) -> SurveyHistory:
    """The sub-agent's whole history (its answer and input after it are one task)."""
    history = SurveyHistory(pending=run.pending, fresh=run.fresh)
    for episode in run.episodes:
        history.calls.extend(episode.calls.values())
        history.results.update(episode.results)
    return history


def plan_reply(
    messages: Sequence[Message], workspace: str = "workspace", tools: Collection[str] = ()
) -> DemoReply:
    """The demo's next reply to `messages`; `workspace` is only a name to show, `tools`
    the names of the tools offered (it calls `task` only when that is one of them)."""
    run = _read_run(messages)
    if run is None:
        return greeting_reply()
    if is_survey(messages):
        return survey_reply(_survey_history(run))
    episode = run.episodes[-1]
    stop = any(m.kind == "steer" and wants_stop(m.content) for m in run.pending)
    if episode.finished:  # called again with nothing new: just say so
        return done_reply()
    prompt = run.episodes[0].users[0].content
    calls = list(episode.calls.values())
    done = {call.name for call in calls}
    found = gather_findings(calls, episode.results)
    if episode.kind != "prompt":
        request = _request_text(episode)
        if "find" in done or stop:
            step = answer_reply(request, episode.kind, found)
        else:
            step = find_reply(find_pattern_for(request), episode.kind)
        if stop and episode.kind == "steer" and not done:
            step = nothing_to_stop_reply()
    elif is_greeting(prompt) and not done:
        step = greeting_reply()
    elif stop or any(call.arguments.get("command") == BASH_COMMAND for call in calls):
        step = summary_reply(found, workspace)
    elif "grep" in done and "task" in tools and "task" not in done:
        step = task_reply(found)
    elif "grep" in done:
        # The changes, then the slow command (whose text needs no search result again).
        step = change_step(calls, episode.results, found) or bash_reply(replace(found, search=None))
    elif "read" in done:
        step = grep_reply(found, pick_search_word(prompt))
    elif "ls" in done:
        files = pick_files(found.entries or [])
        step = reads_reply(found, files) if files else grep_reply(found, pick_search_word(prompt))
    else:
        step = intro_reply(prompt, workspace)
    note = stop_note(episode.kind, bool(done)) if stop else ""
    acks = (
        acknowledge_input(run.pending, note),
        acknowledge_failures(run.fresh),
        survey_report(run.fresh),
    )
    preface = [part for part in acks if part]
    step.text = "\n\n".join([*preface, step.text])
    return step
