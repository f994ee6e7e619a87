"""The demo's sub-agent step: once `task` is offered, the tour hands "Survey the tests" to
a sub-agent, which the demo plays with real `find` and `grep` calls, and the parent's
next reply uses what it found. Driven by hand (pure plan) and through a real controller
with the real tools (no bash: the tour's slow command would only cost time here)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ink_tui.control.controller import RunController
from ink_tui.core.abort import AbortController, AbortSignal
from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from ink_tui.core.provider_api import ModelRequest, StreamEvent, TextChunk, ThinkingChunk
from ink_tui.core.tool_api import Tool, ToolContext, ToolResult
from ink_tui.providers import demo_replies
from ink_tui.providers.demo import DemoProvider
from ink_tui.providers.demo_script import plan_reply
from ink_tui.providers.demo_subagent import (
    SURVEY_DESCRIPTION,
    SURVEY_PROMPT,
    is_survey,
    is_test_name,
)
from ink_tui.tools import default_tools
from ink_tui.tools.find import FindTool
from ink_tui.tools.task import TaskTool
from tests.run_helpers import Recorder

TOUR_TOOLS = {"ls", "read", "grep", "find", "write", "edit", "bash", "task"}


def make_tests(root: Path) -> list[str]:
    """A workspace's tests in three languages; returns the files named like tests."""
    files = {
        "tests/test_alpha.py": "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n",
        "tests/test_beta.py": "async def test_three():\n    pass\n",
        "tests/helpers.py": "def make():\n    return 1\n",
        "src/widget_test.go": "package w\n\nfunc TestWidget(t *testing.T) {}\n",
        "web/app.test.js": "it('works', () => {})\ntest('also', () => {})\n",
        "src/latest.py": "VERSION = 2\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return ["src/widget_test.go", "tests/test_alpha.py", "tests/test_beta.py", "web/app.test.js"]


# --- the plan, by hand ----------------------------------------------------------------------


def result(call: ToolCall, content: str, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(call.id, call.name, content, is_error)


def planned(history: list[Any], tools: set[str] = TOUR_TOOLS) -> AssistantMessage:
    """The plan's next reply as the provider would send it (ids by position)."""
    reply = plan_reply(history, "ws", tools)
    turn = sum(isinstance(m, AssistantMessage) for m in history) + 1
    calls = [
        ToolCall(f"c{turn}_{n}", c.name, c.arguments, "") for n, c in enumerate(reply.calls, 1)
    ]
    message = AssistantMessage(text=reply.text, tool_calls=calls)
    history.append(message)
    return message


def tour_to_the_task(tools: set[str] = TOUR_TOOLS) -> tuple[list[Any], AssistantMessage]:
    history: list[Any] = [UserMessage("explain the tokenizer")]
    (ls,) = planned(history, tools).tool_calls
    history.append(result(ls, "README.md\nsrc/"))
    (read,) = planned(history, tools).tool_calls
    history.append(result(read, "     1\t# Widgets"))
    (grep,) = planned(history, tools).tool_calls
    history.append(result(grep, "README.md:3:A tokenizer\nsrc/t.py:1:def tokenize"))
    return history, planned(history, tools)


def test_with_task_offered_the_tour_delegates_after_its_search() -> None:
    _, reply = tour_to_the_task()
    (call,) = reply.tool_calls
    assert call.name == "task"
    assert call.arguments == {"description": SURVEY_DESCRIPTION, "prompt": SURVEY_PROMPT}
    assert reply.text.startswith("Found 2 matches for `tokenizer`.")
    # How to watch, stop and steer it, in the terminal's words.
    for words in ("**Tab**", "**Enter**", "**x** stops", "**s** steers", "■ stop", "✎ steer"):
        assert words in reply.text
    # Without `task` (sub-agents off, or a test's tool set) the tour goes on as before.
    _, without = tour_to_the_task(TOUR_TOOLS - {"task"})
    assert [c.name for c in without.tool_calls] == ["write"]


def test_the_parent_uses_the_answer_then_the_tour_goes_on_as_before() -> None:
    history, reply = tour_to_the_task()
    answer = "Surveyed the tests:\n\n- **7 test files** (named like tests): `a_test.go`"
    history.append(result(reply.tool_calls[0], answer))
    write = planned(history)
    assert [c.name for c in write.tool_calls] == ["write"]
    assert "My sub-agent is back" in write.text and "> - **7 test files**" in write.text
    assert "So this workspace has 7 test files." in write.text
    assert "Found 2 matches" not in write.text  # said before the task already
    assert "- 7 test files, counted by a sub-agent" in write.tool_calls[0].arguments["content"]


def test_a_stopped_sub_agent_is_acknowledged_and_the_tour_goes_on() -> None:
    history, reply = tour_to_the_task()
    stopped = "Stopped by the user before it finished. It had written nothing yet."
    history.append(result(reply.tool_calls[0], stopped, is_error=True))
    write = planned(history)
    assert "That call failed: `task`: Stopped by the user before it finished." in write.text
    assert "My sub-agent is back" not in write.text
    assert [c.name for c in write.tool_calls] == ["write"]


def test_the_page_words_the_controls_for_the_page() -> None:
    try:
        demo_replies.set_front_end("page")
        _, reply = tour_to_the_task()
    finally:
        demo_replies.set_front_end("terminal")
    assert "**Stop**" in reply.text and "**Steer**" in reply.text
    assert "Ctrl+" not in reply.text and "Tab" not in reply.text


def survey(history: list[Any]) -> AssistantMessage:
    assert is_survey(history)
    return planned(history, TOUR_TOOLS - {"task"})


def test_the_sub_agent_finds_greps_and_answers_from_what_they_returned() -> None:
    history: list[Any] = [UserMessage(SURVEY_PROMPT)]
    first = survey(history)
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("find", {"pattern": "*test*"})]
    listing = "src/latest.py\nsrc/x_test.go\ntests/conftest.py\ntests/test_a.py"
    history.append(result(first.tool_calls[0], listing))
    second = survey(history)
    assert [c.name for c in second.tool_calls] == ["grep"]
    assert "4 paths, 2 of them named like tests" in second.text
    hits = "\n".join(
        [
            "tests/test_a.py:1:def test_a():",
            "tests/test_a.py:4:def test_b():",
            "src/x_test.go:3:func TestX(",
        ]
    )
    history.append(result(second.tool_calls[0], hits))
    answer = survey(history)
    assert answer.tool_calls == []
    assert "**2 test files** (named like tests): `src/x_test.go`, `tests/test_a.py`" in answer.text
    assert "2 other files whose path has" in answer.text
    assert "3 test definitions" in answer.text
    assert "the most in `tests/test_a.py` (2)" in answer.text


def test_the_sub_agent_with_no_tests_and_with_a_stop_steer() -> None:
    history: list[Any] = [UserMessage(SURVEY_PROMPT)]
    first = survey(history)
    history.append(result(first.tool_calls[0], "no files match '*test*'"))
    nothing = survey(history)
    assert nothing.tool_calls == [] and "**0 test files**" in nothing.text

    history = [UserMessage(SURVEY_PROMPT)]
    first = survey(history)
    history.append(result(first.tool_calls[0], "tests/test_a.py"))
    history.append(UserMessage("stop here please", kind="steer"))
    stopped = survey(history)
    assert stopped.tool_calls == [] and "> stop here please" in stopped.text
    assert "answer with what I have" in stopped.text and "**1 test file**" in stopped.text


def test_test_names() -> None:
    for name in ("test_a.py", "a_test.go", "a.test.ts", "b.spec.js", "FooTest.java", "tests.py"):
        assert is_test_name(f"src/{name}"), name
    for name in ("latest.py", "contest.py", "conftest.py", "testing.md"):
        assert not is_test_name(name), name


# --- the pace: the sub-agent thinks before each step ---------------------------------------


async def first_text_after(provider: DemoProvider, prompt: str) -> tuple[float, int]:
    """Seconds from the request to the reply's first text, and how many thinking chunks
    came before it."""
    request = ModelRequest("", [UserMessage(prompt)], [])
    start, thoughts = time.monotonic(), 0
    stream = provider.stream(request, AbortController().signal)
    try:
        async for event in stream:
            if isinstance(event, ThinkingChunk):
                thoughts += 1
            elif isinstance(event, TextChunk):
                return time.monotonic() - start, thoughts
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    raise AssertionError("the reply had no text")


async def test_the_sub_agent_thinks_before_it_writes_and_the_tour_does_not(
    workspace: Path,
) -> None:
    # A sub-agent that thinks for 0.3 s a step, at a pace where its words take no time.
    quick = DemoProvider(workspace, chars_per_second=1_000_000, subagent_think_s=0.3)
    waited, thoughts = await first_text_after(quick, SURVEY_PROMPT)
    assert waited >= 0.27 and thoughts > 5  # its thinking trickles in over the pause
    # The tour's replies do not pause (30 s would outlast the bound), nor does any
    # reply at chars_per_second=0, the tests' pace.
    slow = DemoProvider(workspace, chars_per_second=1_000_000, subagent_think_s=30)
    await asyncio.wait_for(first_text_after(slow, "explain the tokenizer"), 10)
    unpaced = DemoProvider(workspace, chars_per_second=0, subagent_think_s=30)
    await asyncio.wait_for(first_text_after(unpaced, SURVEY_PROMPT), 10)


# --- through a controller, with the real tools ---------------------------------------------


class RecordingDemo(DemoProvider):
    """The demo provider, keeping every request it was sent."""

    def __init__(self, workspace: Path) -> None:
        super().__init__(workspace, chars_per_second=0)
        self.requests: list[ModelRequest] = []

    async def stream(
        self, request: ModelRequest, signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        async for event in super().stream(request, signal):
            yield event


class HeldFind(FindTool):
    """`find` that waits for `release` first: a sub-agent caught mid-task."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        async with ctx.signal.scope():
            await self.release.wait()
        return await super().execute(args, ctx)


def demo_controller(workspace: Path, find: Tool | None = None) -> tuple[RunController, Recorder]:
    tools: list[Tool] = [t for t in default_tools() if t.name != "bash"]
    if find is not None:
        tools = [find if t.name == "find" else t for t in tools]
    controller = RunController(
        provider=RecordingDemo(workspace),
        tools=[*tools, TaskTool()],
        workspace=workspace,
        system_prompt="You are ink.",
    )
    recorder = Recorder()
    controller.bus.subscribe(recorder)
    return controller, recorder


def parent_texts(recorder: Recorder) -> list[str]:
    return [e.message.text for e in recorder.of("message_end") if e.agent_id is None]


async def test_the_tour_runs_a_real_sub_agent_and_uses_its_count(workspace: Path) -> None:
    named = make_tests(workspace)
    controller, recorder = demo_controller(workspace)
    controller.submit("explain the tokenizer")
    await asyncio.wait_for(controller.wait_idle(), 30)

    (start,) = recorder.of("subagent_start")
    (end,) = recorder.of("subagent_end")
    assert start.agent_id == end.agent_id is not None
    assert start.description == SURVEY_DESCRIPTION and end.stop_reason == "completed"
    # The sub-agent's first request held its prompt alone, and no `task` tool.
    provider = controller.provider
    assert isinstance(provider, RecordingDemo)
    first = next(r for r in provider.requests if is_survey(r.messages))
    assert first.messages == [UserMessage(SURVEY_PROMPT)]
    assert "task" not in {tool.name for tool in first.tools}
    # Its calls ran for real, read-only, with ids of its own.
    mine = [e for e in recorder.of("tool_end") if e.agent_id == start.agent_id]
    assert [e.call.name for e in mine] == ["find", "grep"]
    assert not any(e.result.is_error for e in mine)
    assert "tests/test_alpha.py" in mine[0].message.content
    assert all(e.call.id.startswith("demo_sub1_") for e in mine)
    # Its answer is the task's result; the parent's next reply uses the count.
    assert f"**{len(named)} test files**" in end.result
    assert "6 test definitions" in end.result  # 2 + 1 in Python, 1 in Go, 2 in JavaScript
    texts = parent_texts(recorder)
    after = next(i for i, t in enumerate(texts) if "My sub-agent is back" in t)
    assert f"So this workspace has {len(named)} test files." in texts[after]
    # The tour's later steps stay as they were: the notes are written, then edited.
    notes = (workspace / "ink-demo-notes.md").read_text()
    assert notes.startswith("# Notes from ink's demo (edited)")
    assert f"- {len(named)} test files, counted by a sub-agent" in notes
    assert "surveyed the tests and counted" in texts[-1]
    # Nothing of the sub-agent's own text reached the parent's history but its answer.
    assert not any("I'm a sub-agent" in str(m) for m in controller.history)

    # Another test file, another prompt: a new sub-agent counts one more.
    (workspace / "tests" / "test_gamma.py").write_text("def test_four():\n    pass\n")
    controller.submit("and again")
    await asyncio.wait_for(controller.wait_idle(), 30)
    second = recorder.of("subagent_end")[-1]
    assert second.agent_id != end.agent_id
    assert f"**{len(named) + 1} test files**" in second.result
    assert any(f"has {len(named) + 1} test files" in t for t in parent_texts(recorder))
    await controller.aclose()


async def test_a_steer_reaches_the_sub_agent_alone(workspace: Path) -> None:
    make_tests(workspace)
    find = HeldFind()
    controller, recorder = demo_controller(workspace, find)
    controller.submit("explain the tokenizer")
    start = await recorder.wait_for(lambda e: e.type == "subagent_start", 30)
    await asyncio.wait_for(find.started.wait(), 30)
    assert start.agent_id is not None
    controller.steer("only count the Python ones", agent_id=start.agent_id)
    find.release.set()
    end = await recorder.wait_for(lambda e: e.type == "subagent_end", 30)
    assert end.stop_reason == "completed"
    quoted = [
        e.message.text
        for e in recorder.of("message_end")
        if e.agent_id == start.agent_id and "> only count the Python ones" in e.message.text
    ]
    assert len(quoted) == 1
    await asyncio.wait_for(controller.wait_idle(), 30)
    assert not any("only count the Python" in t for t in parent_texts(recorder))
    await controller.aclose()


async def test_stopping_the_sub_agent_lets_the_tour_go_on(workspace: Path) -> None:
    make_tests(workspace)
    find = HeldFind()
    controller, recorder = demo_controller(workspace, find)
    controller.submit("explain the tokenizer")
    start = await recorder.wait_for(lambda e: e.type == "subagent_start", 30)
    await asyncio.wait_for(find.started.wait(), 30)
    assert start.agent_id is not None
    controller.abort_agent(start.agent_id)
    await asyncio.wait_for(controller.wait_idle(), 30)
    (end,) = recorder.of("subagent_end")
    assert end.stop_reason == "stopped"
    texts = parent_texts(recorder)
    assert any("That call failed: `task`: Stopped by the user" in t for t in texts)
    assert (workspace / "ink-demo-notes.md").exists()  # the tour went on to its changes
    await controller.aclose()
