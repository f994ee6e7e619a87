"""The demo's sub-agent: the `task` call of the tour, and the sub-agent's own part.

After its search, when the `task` tool is offered, the tour hands one side job to a
sub-agent: "Survey the tests", whose prompt (`SURVEY_PROMPT`) asks to list the test files
and count them. The sub-agent runs on the same demo provider with a fresh history: its
first request holds only that prompt, which is how the demo knows to play the sub-agent
(`is_survey`) and not the tour. Its part, one reply per step, read-only:

1. `find` every path with "test" in it (`*test*`: files named like tests, and whatever
   lies under a test folder);
2. `grep` those files for test definitions (`def test…`, `func Test…`, `it(`, `test(`),
   skipped when `find` found nothing;
3. its final answer: how many test files (named like tests) and other files with "test"
   in their path, how many test definitions in how many files, a few paths.

Each reply thinks a few seconds first (`demo.py` paces it), so the sub-agent runs long
enough to be stopped or steered by hand. A steer is quoted in its next reply
("stop"/"skip" goes straight to the answer, with what it has); input after its answer
gets the answer again. Everything it says comes from the tool results in its history.
The parent reads the answer (the `task` call's result) in its next reply:
`survey_report` quotes it and states the count, which `demo_findings.stated_test_files`
reads back for the notes and the summary.

Pure functions, like the rest of the script: `demo_script` passes the history it read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ink_tui.core.messages import Message, ToolCall, ToolResultMessage, UserMessage
from ink_tui.providers.demo_findings import Findings, stated_test_files
from ink_tui.providers.demo_replies import (
    DemoReply,
    PlannedCall,
    acknowledge_failures,
    acknowledge_input,
    block_quote,
    counted,
    listed,
    wants_stop,
    worded,
)

__all__ = [
    "SURVEY_DESCRIPTION",
    "SURVEY_PROMPT",
    "TEST_DEFINITIONS",
    "TEST_GLOB",
    "SurveyHistory",
    "is_survey",
    "is_test_name",
    "survey_reply",
    "survey_report",
    "task_reply",
]

SURVEY_DESCRIPTION = "Survey the tests"
SURVEY_PROMPT = (
    "List the test files of this workspace and count them. Find every path with "
    '"test" in it, tell the files named like tests from the other files under test '
    "folders, and count the test definitions in them. Only read: change nothing. "
    "Answer with the counts and a few of the paths."
)
TEST_GLOB = "*test*"
# Test definitions in the common languages (ripgrep's syntax and Python's alike).
TEST_DEFINITIONS = r"^\s*((async\s+)?def\s+test|func\s+Test|(it|test)\s*\()"

# test_x.py, x_test.go, a.test.ts, a.spec.js, FooTest.java, tests.py; not latest.py.
_TEST_NAME = re.compile(
    r"^(tests?|test[_-].+|.+[_-]tests?|.+\.(test|spec)|.*[a-z0-9]Tests?)\.[A-Za-z0-9]+$"
)
_SHOWING = re.compile(r"\[showing (\d+) of (\d+) files")
_HIT = re.compile(r"^(.+?):(\d+):")


def is_test_name(path: str) -> bool:
    """Whether the file's name says it holds tests."""
    return _TEST_NAME.match(PurePosixPath(path).name) is not None


def is_survey(messages: Sequence[Message]) -> bool:
    """A request of the demo's own sub-agent: its history starts with the survey's prompt."""
    first = messages[0] if messages else None
    return (
        isinstance(first, UserMessage) and first.kind == "prompt" and first.content == SURVEY_PROMPT
    )


# --- the parent's side --------------------------------------------------------------------


def task_reply(found: Findings) -> DemoReply:
    """The tour's step that starts the sub-agent (after the search, before the changes)."""
    text = ""
    if found.search is not None:
        pattern, hits = found.search
        text = f"Found {counted(hits, 'match', 'matches')} for `{pattern}`.\n\n"
    text += (
        f"Next, a side job for a **sub-agent**: *{SURVEY_DESCRIPTION}*, to list the test "
        "files and count them. It starts with a fresh history (it sees the prompt I write "
        "for it, not our conversation), works with the same tools, and only its final "
        "answer comes back to me, as the result of this `task` call. "
        + worded(
            "Its row in the transcript shows what it is doing. Press **Tab** to move to the "
            "transcript and **Up**/**Down** to its row: **Enter** unfolds its whole "
            "transcript, **x** stops it and **s** steers it (what you send next goes to it "
            "alone); or click its **■ stop** and **✎ steer**, there or in the activity "
            "panel. **Ctrl+C** still stops everything, sub-agents included.",
            "Its row shows what it is doing: click it to unfold its whole transcript. Its "
            "**Stop** button stops it alone and **Steer** sends it a message of its own; "
            "**■ Stop** still stops everything, sub-agents included.",
        )
    )
    call = PlannedCall("task", {"description": SURVEY_DESCRIPTION, "prompt": SURVEY_PROMPT})
    return DemoReply(text, "A self-contained side job: hand it to a sub-agent.", [call])


def survey_report(fresh: Sequence[ToolResultMessage]) -> str:
    """The parent's word on its sub-agent's answer, when one just came back ("" if not)."""
    answers = [r.content for r in fresh if r.tool_name == "task" and not r.is_error]
    if not answers:
        return ""
    answer = answers[-1]
    count = stated_test_files(answer)
    quoted = block_quote(answer, 700)
    text = f"My sub-agent is back. Its answer, the `task` call's result:\n\n{quoted}"
    if count is not None:
        text += f"\n\nSo this workspace has {counted(count, 'test file')}."
    return text


# --- the sub-agent's side -----------------------------------------------------------------


@dataclass(slots=True)
class _Survey:
    """What the sub-agent's own tool results showed."""

    files: list[str] | None = None  # from `find`; None before it ran
    total: int = 0  # paths that matched (more than `files` when the listing was cut)
    hits: Counter[str] | None = None  # test definitions per file, from `grep`
    capped: bool = False  # `grep` stopped at its limit: there are more

    @property
    def named(self) -> list[str]:
        return [path for path in self.files or [] if is_test_name(path)]


def _read(calls: Sequence[ToolCall], results: Mapping[str, ToolResultMessage]) -> _Survey:
    survey = _Survey()
    for call in calls:
        result = results.get(call.id)
        if result is None or result.is_error:
            continue
        lines = [line.strip() for line in result.content.splitlines() if line.strip()]
        if call.name == "find":
            nothing = not lines or lines[0].startswith("no files match")
            survey.files = [] if nothing else [ln for ln in lines if not ln.startswith("[")]
            showing = _SHOWING.search(result.content)
            survey.total = int(showing.group(2)) if showing else len(survey.files)
        elif call.name == "grep":
            survey.hits = Counter(m.group(1) for ln in lines if (m := _HIT.match(ln)))
            survey.capped = "more exist" in result.content
    return survey


@dataclass(slots=True)
class SurveyHistory:
    """The sub-agent's history as `demo_script` read it."""

    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, ToolResultMessage] = field(default_factory=dict)
    pending: list[UserMessage] = field(default_factory=list)  # since its last reply
    fresh: list[ToolResultMessage] = field(default_factory=list)  # its last calls' results


def survey_reply(history: SurveyHistory) -> DemoReply:
    """The sub-agent's next reply: `find`, then `grep`, then its answer."""
    stop = any(m.kind == "steer" and wants_stop(m.content) for m in history.pending)
    done = {call.name for call in history.calls}
    survey = _read(history.calls, history.results)
    if stop:
        step = _answer(survey)
    elif "find" not in done:
        step = _find_step()
    elif "grep" not in done and survey.files:
        step = _grep_step(survey)
    else:
        step = _answer(survey)
    note = "Understood: I'll answer with what I have." if stop else ""
    acks = (acknowledge_input(history.pending, note), acknowledge_failures(history.fresh))
    step.text = "\n\n".join([*(part for part in acks if part), step.text])
    return step


def _find_step() -> DemoReply:
    text = (
        "I'm a sub-agent: all I know is the prompt I was given, none of the conversation "
        'that started me. First, every path with "test" in it.'
    )
    call = PlannedCall("find", {"pattern": TEST_GLOB})
    thinking = (
        "The prompt asks for the test files and their count. Start with every path that "
        'has "test" in it, then tell the test files from the rest.'
    )
    return DemoReply(text, thinking, [call])


def _grep_step(survey: _Survey) -> DemoReply:
    paths, named = survey.files or [], survey.named
    text = (
        f"`find` listed {counted(len(paths), 'path')}, {len(named)} of them named like "
        "tests. Now I'll count the test definitions in them."
    )
    call = PlannedCall("grep", {"pattern": TEST_DEFINITIONS, "glob": TEST_GLOB})
    thinking = (
        "Those are the candidates. Count the tests defined in them: lines with "
        "`def test`, `func Test`, `it(` or `test(`."
    )
    return DemoReply(text, thinking, [call])


def _answer(survey: _Survey) -> DemoReply:
    thinking = "What I found is in my history: report the counts, with a few of the paths."
    if survey.files is None:
        return DemoReply("I stopped before I looked at anything, so I have no counts.", thinking)
    if not survey.files:
        text = f"No path in the workspace matches `{TEST_GLOB}`: there are **0 test files** here."
        return DemoReply(text, thinking)
    named = survey.named
    others = len(survey.files) - len(named)
    lines = [f"- **{counted(len(named), 'test file')}** (named like tests)"]
    if named:
        lines[0] += f": {listed(named, 4)}"
    if others:
        others_line = f'- {counted(others, "other file")} whose path has "test" in it'
        lines.append(others_line + " (helpers, fixtures, data)")
    if survey.hits is not None:
        lines.append(_definitions(survey.hits, survey.capped))
    how = f"`find {TEST_GLOB}`, then `grep`; read only"
    text = f"Surveyed the tests ({how}):\n\n" + "\n".join(lines)
    if survey.total > len(survey.files):
        text += (
            f"\n\nThe listing stopped at {len(survey.files)} of {survey.total} paths: these "
            "counts cover the ones it showed."
        )
    return DemoReply(text, thinking)


def _definitions(hits: Counter[str], capped: bool) -> str:
    kinds = "(`def test…`, `func Test…`, `it(`, `test(`)"
    if not hits:
        return f"- no test definitions {kinds} in them"
    total = sum(hits.values())
    at_least = "at least " if capped else ""
    where = f"in {counted(len(hits), 'file')}"
    if len(hits) > 1:
        top, most = hits.most_common(1)[0]
        where += f"; the most in `{top}` ({most})"
    return f"- {at_least}{counted(total, 'test definition')} {kinds} {where}"
