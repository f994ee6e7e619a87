"""The offline demo model, driven turn by turn by hand with realistic tool results."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserKind,
    UserMessage,
)
from ink_tui.core.provider_api import ModelRequest, ReplyDone, StreamEvent, TextChunk, ThinkingChunk
from ink_tui.providers.demo import DemoProvider, estimate_usage, split_pieces
from ink_tui.providers.demo_changes import PLAIN_COMMAND
from ink_tui.providers.demo_findings import (
    count_matches,
    count_read_lines,
    last_number,
    parse_listing,
    pick_files,
)
from ink_tui.providers.demo_replies import BASH_COMMAND
from ink_tui.providers.demo_script import is_greeting, pick_search_word, plan_reply, wants_stop

READ_ONLY = {"ls", "read", "grep", "find", "bash"}
# The tour's steps, one reply each: ls, reads, grep, write, edit, plain command, the slow
# command, the summary.
TOUR = 8


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("# Widgets\n\nA tokenizer for widgets.\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "widgets"\n')
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tokenizer.py").write_text("def tokenize(text):\n    return text.split()\n")
    return tmp_path


def fake_result(call: ToolCall, workspace: Path) -> ToolResultMessage:
    """What the real tools would plausibly answer (built by hand, not by running them)."""
    args = call.arguments
    if call.name == "ls":
        entries = sorted(p.name + "/" if p.is_dir() else p.name for p in workspace.iterdir())
        content = "\n".join(entries)
    elif call.name == "read":
        lines = (workspace / args["path"]).read_text().splitlines()[: args.get("limit", 2000)]
        content = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))
    elif call.name == "grep":
        content = "README.md:3:A tokenizer for widgets.\nsrc/tokenizer.py:1:def tokenize(text):"
    elif call.name == "bash":
        content = "counting files...\n       4\n"
    elif call.name == "find":
        content = "README.md\ndocs/guide.md"
    elif call.name == "write":
        content = f"wrote 12 lines (300 bytes) to {args['path']} (created a new file)"
    elif call.name == "edit":
        content = f"applied {len(args['edits'])} edits to {args['path']}"
    else:
        raise AssertionError(f"the demo called an unexpected tool: {call.name}")
    return ToolResultMessage(call.id, call.name, content)


class Driver:
    """Plays the agent loop by hand: keeps the history, calls the model, answers its calls."""

    def __init__(self, workspace: Path, prompt: str) -> None:
        self.workspace = workspace
        self.provider = DemoProvider(workspace, chars_per_second=0)
        self.history: list[Message] = [UserMessage(prompt)]

    async def reply(self) -> AssistantMessage:
        events = await collect(self.provider, self.history)
        message = events[-1]
        assert isinstance(message, ReplyDone)
        self.history.append(message.message)
        return message.message

    def answer(
        self,
        message: AssistantMessage,
        result: Callable[[ToolCall, Path], ToolResultMessage] = fake_result,
    ) -> None:
        self.history.extend(result(call, self.workspace) for call in message.tool_calls)

    def inject(self, text: str, kind: UserKind) -> None:
        self.history.append(UserMessage(text, kind=kind))

    async def step(self) -> AssistantMessage:
        message = await self.reply()
        self.answer(message)
        return message


async def collect(provider: DemoProvider, history: list[Message]) -> list[StreamEvent]:
    request = ModelRequest(system_prompt="You are ink.", messages=list(history))
    return [event async for event in provider.stream(request, AbortController().signal)]


def names(message: AssistantMessage) -> list[str]:
    return [call.name for call in message.tool_calls]


async def test_full_plan_ls_reads_grep_bash_summary(workspace: Path) -> None:
    drive = Driver(workspace, "Please explain the tokenizer")

    first = await drive.step()
    assert "demo model" in first.text
    assert "--base-url" in first.text and "INK_API_KEY" in first.text
    assert "> Please explain the tokenizer" in first.text
    assert names(first) == ["ls"] and first.tool_calls[0].arguments == {}
    assert first.finish_reason == "tool_calls"

    second = await drive.step()
    assert names(second) == ["read", "read"]
    listing = set(parse_listing(drive.history[2].content))  # the ls result
    paths = [call.arguments["path"] for call in second.tool_calls]
    assert set(paths) <= listing and (workspace / paths[0]).is_file()
    assert paths == ["README.md", "pyproject.toml"]
    assert all(call.arguments["limit"] == 40 for call in second.tool_calls)

    third = await drive.step()
    assert names(third) == ["grep"]
    assert third.tool_calls[0].arguments["pattern"] == "tokenizer"
    assert "`README.md` (3 lines)" in third.text

    write = await drive.step()
    assert names(write) == ["write"] and "2 matches" in write.text
    notes = write.tool_calls[0].arguments
    assert notes["path"] == "ink-demo-notes.md" and not (workspace / notes["path"]).exists()
    assert "`tokenizer`" in notes["content"] and "Ctrl+G" in write.text

    edit = await drive.step()
    assert names(edit) == ["edit"] and edit.tool_calls[0].arguments["path"] == notes["path"]
    for change in edit.tool_calls[0].arguments["edits"]:
        assert notes["content"].count(change["old_text"]) == 1  # it applies to what it wrote

    plain = await drive.step()
    assert names(plain) == ["bash"] and plain.tool_calls[0].arguments == {"command": "ls -la"}
    assert "**s**" in plain.text and "**a**" in plain.text

    fourth = await drive.step()
    assert names(fourth) == ["bash"]
    assert fourth.tool_calls[0].arguments["command"] == BASH_COMMAND
    assert fourth.text.startswith("Last, a shell command")

    summary = await drive.step()
    assert summary.tool_calls == [] and summary.finish_reason == "stop"
    assert "```python" in summary.text and summary.text.count("```") == 2
    assert "4 files" in summary.text and "2 matches" in summary.text
    for key in ("Enter", "Alt+Enter", "Ctrl+C", "`!"):
        assert key in summary.text

    # Every call but the notes' write and edit was read-only; every id unique and of the
    # documented shape.
    calls = [c for m in drive.history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    changes = [c for c in calls if c.name not in READ_ONLY]
    assert [(c.name, c.arguments["path"]) for c in changes] == [
        ("write", "ink-demo-notes.md"),
        ("edit", "ink-demo-notes.md"),
    ]
    assert [c.id for c in calls] == [
        "demo_1_1",
        "demo_2_1",
        "demo_2_2",
        "demo_3_1",
        "demo_4_1",
        "demo_5_1",
        "demo_6_1",
        "demo_7_1",
    ]
    assert all(json.loads(c.raw_arguments) == c.arguments for c in calls)


async def test_stream_events_and_usage(workspace: Path) -> None:
    provider = DemoProvider(workspace, chars_per_second=0)
    events = await collect(provider, [UserMessage("what is here?")])
    assert isinstance(events[0], ThinkingChunk)
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.message.text == text
    assert sum(isinstance(e, ReplyDone) for e in events) == 1
    assert max(len(e.text) for e in events if isinstance(e, TextChunk)) < 20
    usage = done.message.usage
    assert usage.output_tokens >= len(text) // 4 > 0 and usage.input_tokens > 0
    assert done.message.model == provider.model == "demo model (offline)"
    assert (provider.name, provider.is_demo) == ("demo", True)
    await provider.aclose()


async def test_deterministic(workspace: Path) -> None:
    one, two = Driver(workspace, "explain tokenizer"), Driver(workspace, "explain tokenizer")
    for _ in range(TOUR):
        assert await one.step() == await two.step()


async def test_steer_is_quoted_and_plan_continues(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    await drive.step()  # ls
    drive.inject("focus on the lexer", "steer")
    drive.inject("and be brief", "steer")
    reply = await drive.step()
    assert "> focus on the lexer" in reply.text and "> and be brief" in reply.text
    assert reply.text.index("> focus") < reply.text.index("I'll read")
    assert names(reply) == ["read", "read"]  # the plan goes on
    assert names(await drive.step()) == ["grep"]


async def test_stop_steer_goes_to_summary(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    await drive.step()  # ls
    await drive.step()  # reads
    drive.inject("please stop here", "steer")
    reply = await drive.step()
    assert "> please stop here" in reply.text
    assert reply.tool_calls == [] and "```python" in reply.text
    assert "README.md" in reply.text  # what it had seen so far


async def test_skip_steer_before_the_first_reply(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    drive.inject("skip it", "steer")
    reply = await drive.step()
    assert "> skip it" in reply.text and reply.tool_calls == []


async def test_follow_up_is_quoted_and_runs_find(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    for _ in range(TOUR):
        last = await drive.step()
    assert last.tool_calls == []
    drive.inject("what about the docs?", "follow_up")
    reply = await drive.step()
    assert "> what about the docs?" in reply.text
    assert names(reply) == ["find"] and reply.tool_calls[0].arguments == {"pattern": "**/*.md"}
    answer = await drive.step()
    assert answer.tool_calls == [] and "what about the docs?" in answer.text
    assert "2 files" in answer.text


async def test_steer_after_finish_starts_a_mini_plan(workspace: Path) -> None:
    drive = Driver(workspace, "hello")
    await drive.step()
    drive.inject("list the python files", "steer")
    reply = await drive.step()
    assert "> list the python files" in reply.text
    assert reply.tool_calls[0].arguments == {"pattern": "**/*.py"}


@pytest.mark.parametrize("prompt", ["hello", "Hi!", "  HELLO.  "])
async def test_hello_gets_a_greeting_without_tools(workspace: Path, prompt: str) -> None:
    reply = await Driver(workspace, prompt).reply()
    assert reply.tool_calls == [] and reply.finish_reason == "stop"
    assert "demo model" in reply.text and "Alt+Enter" in reply.text


async def test_empty_history_gets_a_greeting(workspace: Path) -> None:
    events = await collect(DemoProvider(workspace, chars_per_second=0), [])
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.message.tool_calls == []
    assert "demo model" in done.message.text


async def test_failed_call_is_acknowledged_and_plan_moves_on(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    await drive.step()  # ls
    reads = await drive.reply()

    def broken(call: ToolCall, ws: Path) -> ToolResultMessage:
        if call.arguments["path"] == "pyproject.toml":
            return ToolResultMessage(call.id, call.name, "File not found: pyproject.toml", True)
        return fake_result(call, ws)

    drive.answer(reads, broken)
    reply = await drive.step()
    assert "That call failed: `read`: File not found: pyproject.toml" in reply.text
    assert names(reply) == ["grep"]


async def test_failed_ls_skips_the_reads(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    first = await drive.reply()
    drive.history.append(ToolResultMessage(first.tool_calls[0].id, "ls", "Permission denied", True))
    reply = await drive.step()
    assert "failed" in reply.text and names(reply) == ["grep"]


async def test_a_result_it_did_not_ask_for_is_ignored(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    await drive.step()  # ls
    drive.history.append(ToolResultMessage("other_1", "write", "wrote 3 bytes"))
    reply = await drive.step()
    assert names(reply) == ["read", "read"]


async def test_new_prompt_starts_a_new_plan(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    for _ in range(TOUR):
        await drive.step()
    drive.inject("now the widgets", "prompt")
    reply = await drive.step()
    assert names(reply) == ["ls"] and "> now the widgets" in reply.text
    assert reply.tool_calls[0].id == "demo_9_1"


async def test_one_file_workspace_reads_one_and_empty_skips_reading(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("TODO: everything\n")
    drive = Driver(tmp_path, "what?")
    await drive.step()
    reply = await drive.step()
    assert [c.arguments["path"] for c in reply.tool_calls] == ["notes.txt"]

    empty = tmp_path / "empty"
    empty.mkdir()
    drive = Driver(empty, "what?")
    await drive.step()
    reply = await drive.step()
    assert names(reply) == ["grep"] and reply.tool_calls[0].arguments["pattern"] == "TODO"


async def test_pacing(workspace: Path) -> None:
    provider = DemoProvider(workspace, chars_per_second=2000)
    history: list[Message] = [UserMessage("explain the tokenizer")]
    start = time.monotonic()
    events = await collect(provider, history)
    elapsed = time.monotonic() - start
    streamed = sum(len(e.text) for e in events if isinstance(e, TextChunk | ThinkingChunk))
    assert streamed >= 400
    assert elapsed >= 0.9 * streamed / 2000 >= 0.15


async def test_abort_while_streaming_raises_promptly(workspace: Path) -> None:
    provider = DemoProvider(workspace, chars_per_second=100)  # ~5 s for the first reply
    controller = AbortController()
    request = ModelRequest("", [UserMessage("explain the tokenizer")])
    received: list[StreamEvent] = []
    arrived = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(request, controller.signal):
            received.append(event)
            arrived.set()

    task = asyncio.create_task(consume())
    # Streaming: something has arrived, and the rest takes seconds.
    await asyncio.wait_for(arrived.wait(), 10)
    assert received and not task.done()
    controller.abort("interrupted by the user")
    start = time.monotonic()
    with pytest.raises(AbortError, match="interrupted by the user"):
        await asyncio.wait_for(task, 1)
    assert time.monotonic() - start < 0.1
    assert not any(isinstance(e, ReplyDone) for e in received)


async def test_abort_between_chunks_and_before_start(workspace: Path) -> None:
    provider = DemoProvider(workspace, chars_per_second=0)
    controller = AbortController()
    stream = provider.stream(ModelRequest("", [UserMessage("hi")]), controller.signal)
    await anext(stream)
    controller.abort()
    with pytest.raises(AbortError):
        await anext(stream)
    with pytest.raises(AbortError):
        await anext(provider.stream(ModelRequest("", []), controller.signal))


# --- the changes: a notes file of its own, never a user's ---------------------------------


async def steps_to_the_write(drive: Driver) -> AssistantMessage:
    for _ in range(3):  # ls, reads, grep
        await drive.step()
    return await drive.reply()


async def test_the_notes_never_take_the_name_of_a_file_in_the_workspace(
    workspace: Path,
) -> None:
    (workspace / "ink-demo-notes.md").write_text("my own notes\n")
    (workspace / "INK-DEMO-NOTES-2.md").write_text("mine too\n")
    write = await steps_to_the_write(Driver(workspace, "explain the tokenizer"))
    assert write.tool_calls[0].arguments["path"] == "ink-demo-notes-3.md"


async def test_with_a_listing_cut_short_it_writes_nothing(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    first = await drive.reply()
    cut = "README.md\nsrc/\n\n[4000 more entries not shown (4002 in total)]"
    drive.history.append(ToolResultMessage(first.tool_calls[0].id, "ls", cut))
    await drive.step()  # reads
    await drive.step()  # grep
    reply = await drive.step()
    assert names(reply) == ["bash"] and reply.tool_calls[0].arguments["command"] == PLAIN_COMMAND


async def test_a_denied_write_skips_the_edit(workspace: Path) -> None:
    drive = Driver(workspace, "explain the tokenizer")
    write = await steps_to_the_write(drive)
    denied = "not run: the user denied this call"
    drive.history.append(ToolResultMessage(write.tool_calls[0].id, "write", denied, True))
    reply = await drive.step()
    assert "That call failed: `write`" in reply.text
    assert names(reply) == ["bash"] and reply.tool_calls[0].arguments["command"] == PLAIN_COMMAND
    assert names(await drive.step()) == ["bash"]  # the slow command
    summary = await drive.step()
    assert summary.tool_calls == [] and "counted 4 files" in summary.text


# --- the pure helpers -------------------------------------------------------------------


def test_parse_listing_and_pick_files() -> None:
    listing = "src/\nlogo.png\nmain.py\nREADME.md\npackage-lock.json\nnotes.txt\n[2 more entries]"
    entries = parse_listing(listing)
    assert entries == ["src/", "logo.png", "main.py", "README.md", "package-lock.json", "notes.txt"]
    assert pick_files(entries) == ["README.md", "main.py"]
    assert pick_files(["docs/", "a.bin", "b.txt"]) == ["b.txt"]
    assert pick_files(["docs/", "img.jpg"]) == []


def test_counting_tool_output() -> None:
    read = "     1\t[project]\n     2\tname = 'x'\n[Showing lines 1-2 of 90. Use offset=3.]"
    assert count_read_lines(read) == (2, 90)
    assert count_matches("a.py:1:foo\na.py-2-bar\nb.py:7:foo") == 2
    assert count_matches("No matches found") == 0
    assert last_number("counting files...\n      17\n") == 17
    assert last_number("nothing") is None


def test_prompt_helpers() -> None:
    assert is_greeting("Hello!") and is_greeting("hi") and not is_greeting("hi, explain x")
    assert pick_search_word("please explain the tokenizer module") == "tokenizer"
    assert pick_search_word("what is this?") == "TODO"
    assert wants_stop("Stop now") and wants_stop("skip the rest") and not wants_stop("go on")


def test_plan_reply_is_pure_and_pieces_join_back() -> None:
    history: list[Message] = [UserMessage("explain the tokenizer")]
    assert plan_reply(history, "ws") == plan_reply(history, "ws")
    text = plan_reply(history, "ws").text
    assert "".join(split_pieces(text)) == text
    assert "".join(split_pieces("a  b\n\n  c  ")) == "a  b\n\n  c  "


def test_usage_estimate() -> None:
    request = ModelRequest("x" * 40, [UserMessage("y" * 40)])
    usage = estimate_usage(request, AssistantMessage(text="z" * 80, thinking="t" * 8))
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (20, 22, 2)
