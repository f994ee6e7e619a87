"""The transcript, driven by real events on a real bus inside a tiny host app."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from ink_tui.control.bus import EventBus, Subscriber
from ink_tui.core.events import (
    Event,
    MessageEnd,
    Notice,
    RunEnd,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
    UserMessageEvent,
)
from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage
from ink_tui.core.tool_api import ToolResult
from ink_tui.ui import clock
from ink_tui.ui.widgets.answer_block import AnswerBlock
from ink_tui.ui.widgets.notice_block import NoticeBlock
from ink_tui.ui.widgets.thinking_block import ThinkingBlock
from ink_tui.ui.widgets.tool_block import ToolBlock
from ink_tui.ui.widgets.transcript import Transcript
from ink_tui.ui.widgets.user_block import UserBlock


class CountingBus(EventBus):
    def __init__(self) -> None:
        super().__init__()
        self.subscribers = 0

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self.subscribers += 1
        unsubscribe = super().subscribe(subscriber)

        def counted() -> None:
            self.subscribers -= 1
            unsubscribe()

        return counted


class Host(App[None]):
    def __init__(self, bus: EventBus) -> None:
        super().__init__()
        self.bus = bus

    def compose(self) -> ComposeResult:
        yield Transcript(self.bus)


@asynccontextmanager
async def running(
    bus: EventBus | None = None,
) -> AsyncIterator[tuple[Pilot[None], Transcript, EventBus]]:
    bus = bus or EventBus()
    async with Host(bus).run_test(size=(80, 24)) as pilot:
        yield pilot, pilot.app.query_one(Transcript), bus


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    clock.freeze(100.0)
    yield
    clock.freeze(None)


def rendered(widget: Widget) -> str:
    """The widget's own rendered lines, as on screen."""
    width, height = widget.region.size
    lines = widget.render_lines(Region(0, 0, width, height))
    return "\n".join(line.text.strip() for line in lines).strip("\n")


def call(call_id: str, name: str = "bash", **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments or {"command": "ls"})


def tool_end(tc: ToolCall, result: ToolResult, duration_s: float = 0.5) -> ToolEnd:
    message = ToolResultMessage(tc.id, tc.name, result.content, result.is_error)
    return ToolEnd(call=tc, result=result, duration_s=duration_s, message=message)


def publish_all(bus: EventBus, *events: Event) -> None:
    for event in events:
        bus.publish(event)


def deltas(text: str, size: int = 4) -> list[TextDelta]:
    return [TextDelta(text=text[i : i + size]) for i in range(0, len(text), size)]


LINES_10 = "\n".join(f"line {n}" for n in range(10))


async def test_streamed_text_shows_before_message_end() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, *deltas("Hello **there**, streaming world"))
        await pilot.pause(0.05)
        answer = transcript.query_one(AnswerBlock)
        assert "Hello there, streaming world" in rendered(answer.tail)
        bus.publish(MessageEnd(message=AssistantMessage(text="...")))
        await pilot.pause(0.05)
        assert [rendered(b) for b in answer.blocks] == ["Hello there, streaming world"]


async def test_finished_blocks_are_not_rendered_again_as_text_streams_in() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, *deltas("# Title\n\nFirst paragraph.\n\nSecond "))
        await pilot.pause(0.05)
        answer = transcript.query_one(AnswerBlock)
        first = answer.blocks
        assert [b.source for b in first] == ["# Title\n\nFirst paragraph."]
        renders = [b.renders for b in first]
        tail_updates = answer.tail.updates
        for piece in ("para", "graph goes ", "on and on", " and on."):
            bus.publish(TextDelta(text=piece))
            await pilot.pause(0.03)
        assert answer.blocks == first
        assert [b.renders for b in first] == renders
        assert answer.tail.updates > tail_updates
        assert "Second paragraph goes on and on and on." in rendered(answer.tail)


async def test_a_burst_of_deltas_redraws_the_tail_once_per_frame() -> None:
    async with running() as (pilot, transcript, bus):
        text = "word " * 2000
        publish_all(bus, *deltas(text))
        await pilot.pause(0.05)
        answer = transcript.query_one(AnswerBlock)
        assert answer.tail.source == text
        assert answer.tail.updates <= 2


async def test_50_kb_in_4_byte_deltas_is_taken_in_whole_with_few_redraws() -> None:
    chunk = "## Step\n\nSome **text** here.\n\n```python\ndef f():\n\n    return [1]\n```\n\n"
    text = chunk * (50 * 1024 // len(chunk))
    async with running() as (pilot, transcript, _):
        for n in range(0, len(text), 4):
            transcript.append_answer(text[n : n + 4])
            if n % 256 == 0:
                await asyncio.sleep(0)  # let frames happen while text streams in
        transcript.end_answer()
        await pilot.pause(0.05)
        answer = transcript.query_one(AnswerBlock)
        assert answer.text == text
        assert "\n\n".join(b.source for b in answer.blocks) == text.strip()
        assert answer.tail.updates < len(text) // 4 // 50
        assert len(answer.blocks) < len(text) // len(chunk)


async def test_a_code_block_with_a_blank_line_inside_stays_one_block() -> None:
    async with running() as (pilot, transcript, bus):
        code = "```python\ndef f():\n\n    return 1\n```"
        publish_all(bus, *deltas(f"Before:\n\n{code}\n\nafter", size=1))
        bus.publish(MessageEnd(message=AssistantMessage(text="")))
        await pilot.pause(0.05)
        blocks = transcript.query_one(AnswerBlock).blocks
        sources = [b.source for b in blocks]
        assert "\n\n".join(sources) == f"Before:\n\n{code}\n\nafter"
        code_block = next(b for b in blocks if "def f" in b.source)
        assert "return 1" in code_block.source
        shown = rendered(code_block)
        assert "def f():" in shown and "return 1" in shown


async def test_a_reply_of_only_tool_calls_shows_no_empty_answer() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("c1")
        publish_all(bus, TextDelta(text="\n"), TextDelta(text="  "))
        bus.publish(MessageEnd(message=AssistantMessage(tool_calls=[tc])))
        publish_all(bus, ToolStart(call=tc), tool_end(tc, ToolResult("ok")))
        await pilot.pause(0.05)
        assert not transcript.query(AnswerBlock)
        assert len(transcript.query(ToolBlock)) == 1


async def test_user_messages_label_steer_and_follow_up() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(
            bus,
            RunStart(kind="agent", prompt="fix it"),
            UserMessageEvent(text="fix it", kind="prompt"),
            UserMessageEvent(text="use [red] sparingly", kind="steer"),
            UserMessageEvent(text="then test", kind="follow_up"),
            RunStart(kind="shell", prompt="!ls -la"),
        )
        await pilot.pause()
        # The left border comes first on screen; the words and tags follow it.
        shown = [rendered(block).lstrip("▌ ") for block in transcript.query(UserBlock)]
        assert shown == ["fix it", "steer  use [red] sparingly", "follow-up  then test", "!ls -la"]
        assert [b.kind for b in transcript.query(UserBlock)] == [
            "prompt",
            "steer",
            "follow_up",
            "shell",
        ]


async def test_thinking_goes_above_the_answer_dim_and_can_be_hidden() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, TextDelta(text="The answer."), ThinkingDelta(text="Let me [think]."))
        await pilot.pause(0.05)
        thinking = transcript.query_one(ThinkingBlock)
        answer = transcript.query_one(AnswerBlock)
        children = list(transcript.children)
        assert children.index(thinking) < children.index(answer)
        assert rendered(thinking) == "Let me [think]."
        assert thinking.styles.text_style.italic
        transcript.toggle_thinking()
        await pilot.pause()
        assert not thinking.display and thinking.region.height == 0
        transcript.toggle_thinking()
        await pilot.pause()
        assert thinking.display and thinking.region.height > 0


async def test_a_long_result_folds_to_four_lines_and_click_or_enter_toggles_it() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("c1", command="seq 10")
        publish_all(bus, ToolStart(call=tc), tool_end(tc, ToolResult(LINES_10), 1.25))
        await pilot.pause()
        block = transcript.query_one(ToolBlock)
        assert rendered(block.header) == "✓ bash seq 10  1.2s"
        assert rendered(block.body).splitlines() == [*LINES_10.splitlines()[:4], "+6 more lines"]
        await pilot.click(block)
        await pilot.pause()
        assert rendered(block.body).splitlines() == LINES_10.splitlines()
        assert block.has_focus
        await pilot.press("enter")
        await pilot.pause()
        assert rendered(block.body).endswith("+6 more lines")


async def test_toggle_all_folds_expands_if_any_is_collapsed_else_collapses_all() -> None:
    async with running() as (pilot, transcript, bus):
        for n, content in enumerate([LINES_10, LINES_10, "short"]):
            tc = call(f"c{n}")
            publish_all(bus, ToolStart(call=tc), tool_end(tc, ToolResult(content)))
        await pilot.pause()
        a, b, short = transcript.query(ToolBlock)
        a.toggle_fold()
        assert (a.collapsed, b.collapsed) == (False, True)
        transcript.toggle_all_folds()
        assert (a.collapsed, b.collapsed, short.expanded) == (False, False, False)
        transcript.toggle_all_folds()
        assert (a.collapsed, b.collapsed) == (True, True)
        await pilot.pause()
        assert rendered(b.body).endswith("+6 more lines")


async def test_concurrent_results_show_in_completion_order_and_once() -> None:
    async with running() as (pilot, transcript, bus):
        a, b = call("a", "read", path="a.txt"), call("b", "read", path="b.txt")
        publish_all(bus, ToolStart(call=a, concurrent=True), ToolStart(call=b, concurrent=True))
        await pilot.pause()
        block_a, block_b = transcript.query(ToolBlock)
        assert rendered(block_b.header) == "◌ read b.txt  queued"
        publish_all(bus, ToolRunning(call_id="a"), ToolRunning(call_id="b"))
        bus.publish(ToolSettled(call_id="b", result=ToolResult("bee"), duration_s=0.2))
        await pilot.pause()
        assert rendered(block_b.header) == "✓ read b.txt  0.2s"
        assert rendered(block_b.body) == "bee"
        assert block_a.state == "running"
        assert rendered(block_a.header) == f"{clock.SPINNER_FRAMES[0]} read a.txt  0.0s"
        clock.freeze(100.35)
        await pilot.pause(0.15)
        assert rendered(block_a.header) == f"{clock.SPINNER_FRAMES[3]} read a.txt  0.3s"
        bus.publish(ToolSettled(call_id="a", result=ToolResult("ay"), duration_s=0.4))
        publish_all(bus, tool_end(a, ToolResult("ay"), 0.4), tool_end(b, ToolResult("bee"), 0.2))
        await pilot.pause()
        assert list(transcript.query(ToolBlock)) == [block_a, block_b]
        assert [rendered(x.body) for x in (block_a, block_b)] == ["ay", "bee"]
        assert rendered(block_a.header) == "✓ read a.txt  0.4s"


async def test_a_tool_end_without_tool_start_still_shows_the_call() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("x")
        bus.publish(tool_end(tc, ToolResult.error("not run: aborted"), 0.0))
        await pilot.pause()
        block = transcript.query_one(ToolBlock)
        assert rendered(block.header) == "✗ bash ls  0.0s"


DIFF = (
    "--- a/x.py\n+++ b/x.py\n@@ -1,4 +1,4 @@\n def f():\n-    return [1]\n+    return [2]\n"
    " x = 1\n@@ -9 +9 @@\n-old\n+new\n"
)


async def test_an_edit_result_is_a_coloured_diff_and_the_fold_counts_its_lines() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("e", "edit", path="x.py", edits=[])
        result = ToolResult("applied 1 edit to x.py", details={"path": "x.py", "diff": DIFF})
        publish_all(bus, ToolStart(call=tc), tool_end(tc, result, 0.05))
        await pilot.pause()
        block = transcript.query_one(ToolBlock)
        styles = {line.plain: str(line.style) for line in block.lines}
        assert styles["@@ -1,4 +1,4 @@"] == "cyan"
        assert styles["-    return [1]"] == "red"
        assert styles["+    return [2]"] == "green"
        assert styles[" def f():"] == ""
        assert "--- a/x.py" not in styles
        assert rendered(block.body).splitlines()[-1] == "+4 more lines"
        block.toggle_fold()
        await pilot.pause()
        assert "+    return [2]" in rendered(block.body).splitlines()


async def test_results_are_plain_text_and_errors_use_the_error_colour() -> None:
    async with running() as (pilot, transcript, bus):
        ok, bad = call("ok"), call("bad", command="false")
        publish_all(bus, ToolStart(call=ok), tool_end(ok, ToolResult("[red]x[/red] [link=a]")))
        failed = ToolResult.error("exit code 1 [/]", exit_code=1)
        publish_all(bus, ToolStart(call=bad), tool_end(bad, failed))
        await pilot.pause()
        done_block, failed_block = transcript.query(ToolBlock)
        assert rendered(done_block.body) == "[red]x[/red] [link=a]"
        assert rendered(failed_block.header).startswith("✗ bash false")
        assert rendered(failed_block.body) == "exit code 1 [/]"
        assert failed_block.body.styles.color != done_block.body.styles.color
        error_colour = Color.parse(pilot.app.theme_variables["text-error"])
        assert failed_block.body.styles.color == error_colour


async def test_notices_by_level_and_a_failed_run_shows_its_error_once() -> None:
    async with running() as (pilot, transcript, bus):
        cause = "Run failed: HTTP 500 from the provider: " + "a long [cause] " * 8 + "END"
        publish_all(
            bus,
            Notice(text="Restored 2 queued inputs to the editor.", kind="restored"),
            Notice(text="The answer was cut off.", level="warning"),
            Notice(text="Interrupting… (Ctrl+C again to quit)", kind="interrupting"),
            RunEnd(stop_reason=None, error=cause[12:]),
            Notice(text=cause, level="error", kind="error"),
        )
        await pilot.pause()
        notices = list(transcript.query(NoticeBlock))
        assert [n.level for n in notices] == ["info", "warning", "error"]
        assert rendered(notices[0]) == "Restored 2 queued inputs to the editor."
        error = rendered(notices[2])
        assert error.count("\n") >= 1  # wrapped, not cut
        assert " ".join(line.lstrip("█ ") for line in error.splitlines()) == cause
        assert notices[2].styles.border_left[0] == "thick"


async def test_follows_at_the_bottom_and_stays_put_with_a_marker_when_scrolled_up() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, *(Notice(text=f"line {n}") for n in range(20)))
        publish_all(bus, *deltas("streamed " * 40 + "\n\nmore " * 5))
        await pilot.pause(0.05)
        assert transcript.max_scroll_y > 0
        assert transcript.is_vertical_scroll_end and not transcript.marker.display
        transcript.scroll_home(animate=False)
        await pilot.pause()
        publish_all(bus, *deltas("\n\nfresh text " * 30))
        await pilot.pause(0.05)
        assert transcript.scroll_y == 0
        assert transcript.marker.display and transcript.marker.region.height == 1
        await pilot.click(transcript.marker)
        await pilot.pause()
        assert transcript.is_vertical_scroll_end and not transcript.marker.display
        # Scrolling back to the bottom by hand clears the marker too.
        transcript.scroll_home(animate=False)
        await pilot.pause()
        bus.publish(Notice(text="one more"))
        await pilot.pause()
        assert transcript.marker.display and transcript.scroll_y == 0
        transcript.scroll_end(animate=False)
        await pilot.pause()
        assert not transcript.marker.display and transcript.following
        bus.publish(Notice(text="and it follows again"))
        await pilot.pause()
        assert transcript.is_vertical_scroll_end


async def test_subscribes_on_mount_and_unsubscribes_on_unmount() -> None:
    bus = CountingBus()
    async with running(bus) as (_, transcript, _):
        assert bus.subscribers == 1
        await transcript.remove()
        assert bus.subscribers == 0


async def settle_view(pilot, transcript) -> None:
    # Under load a frame can be late: draw what is buffered, twice (blocks mounted in
    # one frame are drawn in the next), rather than trusting a fixed pause.
    for _ in range(2):
        await pilot.pause(0.05)
        transcript.flush_now()
    await pilot.pause()


async def test_plain_methods_rebuild_the_same_view_without_events() -> None:
    tc = call("c1")
    result = ToolResult("ok")
    async with running() as (pilot, transcript, bus):
        publish_all(
            bus,
            UserMessageEvent(text="go", kind="prompt"),
            ThinkingDelta(text="hmm"),
            *deltas("Answer\n\ndone"),
            MessageEnd(message=AssistantMessage(text="Answer\n\ndone", tool_calls=[tc])),
            ToolStart(call=tc),
            tool_end(tc, result),
            UserMessageEvent(text="more", kind="steer"),
            Notice(text="note", level="warning"),
        )
        await settle_view(pilot, transcript)
        expected = [type(w).__name__ for w in transcript.children]
        expected_text = transcript.query_one(AnswerBlock).text
        expected_plain = transcript.plain_text()
    async with running() as (pilot, transcript, _):
        transcript.add_user("go", "prompt")
        transcript.begin_answer()
        transcript.append_thinking("hmm")
        transcript.append_answer("Answer\n\ndone")
        transcript.end_answer()
        transcript.add_tool(tc, concurrent=False)
        transcript.tool_finished(tc.id, result, 0.5)
        transcript.add_user("more", "steer")
        transcript.add_notice("note", "warning")
        await settle_view(pilot, transcript)
        assert [type(w).__name__ for w in transcript.children] == expected
        assert transcript.query_one(AnswerBlock).text == expected_text
        assert transcript.plain_text() == expected_plain
        assert expected_plain.startswith("go\n\nhmm\n\nAnswer\n\ndone\n\n✓ bash ls  0.5s\nok")
        assert expected_plain.endswith("steer  more\n\nnote")
        # One flush took the whole answer in: its finished blocks share one widget.
        assert [b.source for b in transcript.query_one(AnswerBlock).blocks] == ["Answer\n\ndone"]
