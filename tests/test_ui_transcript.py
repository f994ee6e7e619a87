"""The transcript, driven by real events on a real bus inside a tiny host app."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import TypeVar

import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.pilot import Pilot

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
from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.blocks.block import Block
from ink_tui.ui.blocks.notice_block import NoticeBlock
from ink_tui.ui.blocks.thinking_block import ThinkingBlock
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.blocks.user_block import UserBlock
from ink_tui.ui.widgets import transcript_pacing as pacing
from ink_tui.ui.widgets.transcript import Transcript
from ink_tui.ui.widgets.transcript_rows import MARKER_X

BlockT = TypeVar("BlockT", bound=Block)


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


def rendered(transcript: Transcript, block: Block) -> str:
    """The block's lines as the transcript draws them, without margins and padding."""
    lines = transcript.block_lines(block)
    return "\n".join(line.text.strip() for line in lines).strip("\n")


def body(transcript: Transcript, block: ToolBlock) -> str:
    """A tool block's result as drawn: its lines under the state line."""
    return rendered(transcript, block).split("\n", 1)[1]


def header(transcript: Transcript, block: ToolBlock) -> str:
    return rendered(transcript, block).split("\n", 1)[0]


def styles_of(transcript: Transcript, block: Block, text: str) -> list[Style]:
    """The styles of the drawn segments of `block` that hold `text`."""
    return [
        segment.style
        for line in transcript.block_lines(block)
        for segment in line
        if text in segment.text and segment.style is not None
    ]


def one(transcript: Transcript, kind: type[BlockT]) -> BlockT:
    (block,) = transcript.blocks_of(kind)
    return block


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
        await settle_view(pilot, transcript)
        answer = one(transcript, AnswerBlock)
        assert answer.tail_source == "Hello **there**, streaming world"
        assert rendered(transcript, answer) == "Hello there, streaming world"
        bus.publish(MessageEnd(message=AssistantMessage(text="...")))
        await settle_view(pilot, transcript)
        assert [g.source for g in answer.groups] == ["Hello **there**, streaming world"]
        assert answer.tail_source == ""
        assert rendered(transcript, answer) == "Hello there, streaming world"


async def test_finished_blocks_are_not_rendered_again_as_text_streams_in() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, *deltas("# Title\n\nFirst paragraph.\n\nSecond "))
        await pilot.pause()
        # What the next frame would take in, taken now: a loaded machine may not have
        # drawn that frame yet (CI saw the answer without its first group).
        transcript.flush_now()
        answer = one(transcript, AnswerBlock)
        first = list(answer.groups)
        assert [g.source for g in first] == ["# Title\n\nFirst paragraph."]
        assert [g.renders for g in first] == [1]
        tail_updates = answer.tail_updates
        for piece in ("para", "graph goes ", "on and on", " and on."):
            bus.publish(TextDelta(text=piece))
            await pilot.pause()
            transcript.flush_now()
        assert len(answer.groups) == 1 and answer.groups[0] is first[0]
        assert first[0].renders == 1
        assert answer.tail_updates > tail_updates
        assert "Second paragraph goes on and on and on." in rendered(transcript, answer)


async def test_a_burst_of_deltas_redraws_the_tail_once_per_frame() -> None:
    async with running() as (pilot, transcript, bus):
        text = "word " * 2000
        publish_all(bus, *deltas(text))
        await settle_view(pilot, transcript)
        answer = one(transcript, AnswerBlock)
        assert answer.tail_source == text
        assert answer.tail_updates <= 2


async def test_text_after_a_pause_is_drawn_as_it_comes_and_frames_stay_apart() -> None:
    """One batch of the model's stream a frame: text is drawn when it comes, unless
    the last frame was less than a streaming frame ago (then at that frame's end)."""
    async with running() as (pilot, transcript, bus):
        delays: list[float] = []
        schedule = transcript._schedule_frame

        def recording(force: bool = False, delay: float = pacing.FRAME_S) -> None:
            if not transcript._frame.armed:
                delays.append(delay)
            schedule(force, delay)

        transcript._schedule_frame = recording  # type: ignore[method-assign]
        bus.publish(TextDelta(text="first "))  # (a new answer is drawn at the next frame)
        await settle_view(pilot, transcript)
        delays.clear()
        transcript._drawn_at = time.monotonic() - 10  # the last frame long ago
        bus.publish(TextDelta(text="second "))
        await pilot.pause()
        assert delays[0] == 0  # at once
        await settle_view(pilot, transcript)
        assert one(transcript, AnswerBlock).tail_source == "first second "
        delays.clear()
        drawn = transcript._drawn_at = time.monotonic()  # a frame just drawn
        bus.publish(TextDelta(text="third"))
        await pilot.pause()
        # It waits for the rest of the streaming frame (however long this took).
        elapsed = time.monotonic() - drawn
        assert max(0.0, pacing.STREAM_FRAME_S - elapsed) <= delays[0] <= pacing.STREAM_FRAME_S


async def test_50_kb_in_4_byte_deltas_is_taken_in_whole_with_few_redraws() -> None:
    chunk = "## Step\n\nSome **text** here.\n\n```python\ndef f():\n\n    return [1]\n```\n\n"
    text = chunk * (50 * 1024 // len(chunk))
    async with running() as (pilot, transcript, _):
        for n in range(0, len(text), 4):
            transcript.append_answer(text[n : n + 4])
            if n % 256 == 0:
                await asyncio.sleep(0)  # let frames happen while text streams in
        transcript.end_answer()
        answer = one(transcript, AnswerBlock)
        # Each frame takes in what fits its drawing budget: on a busy machine the last
        # blocks are taken in some frames after the end. `waiting` alone is not the end:
        # between two frames it is empty while the last text is not yet flushed (CI's
        # floor run read the answer there, its last block missing).
        deadline = time.monotonic() + 45
        while not answer.taken_in and time.monotonic() < deadline:
            await pilot.pause(0.01)
        await pilot.pause()
        assert answer.taken_in
        assert answer.text == text
        assert "\n\n".join(g.source for g in answer.groups) == text.strip()
        assert answer.tail_updates < len(text) // 4 // 50
        assert len(answer.groups) < len(text) // len(chunk)
        assert rendered(transcript, answer).count("return [1]") == text.count("return [1]")


async def test_a_code_block_with_a_blank_line_inside_stays_one_block() -> None:
    async with running() as (pilot, transcript, bus):
        code = "```python\ndef f():\n\n    return 1\n```"
        publish_all(bus, *deltas(f"Before:\n\n{code}\n\nafter", size=1))
        bus.publish(MessageEnd(message=AssistantMessage(text="")))
        await settle_view(pilot, transcript)
        answer = one(transcript, AnswerBlock)
        sources = [g.source for g in answer.groups]
        assert "\n\n".join(sources) == f"Before:\n\n{code}\n\nafter"
        code_group = next(g for g in answer.groups if "def f" in g.source)
        assert "return 1" in code_group.source
        shown = rendered(transcript, answer)
        assert "def f():" in shown and "return 1" in shown and "```" not in shown


async def test_a_reply_of_only_tool_calls_shows_no_empty_answer() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("c1")
        publish_all(bus, TextDelta(text="\n"), TextDelta(text="  "))
        bus.publish(MessageEnd(message=AssistantMessage(tool_calls=[tc])))
        publish_all(bus, ToolStart(call=tc), tool_end(tc, ToolResult("ok")))
        await settle_view(pilot, transcript)
        assert not transcript.blocks_of(AnswerBlock)
        assert len(transcript.blocks_of(ToolBlock)) == 1


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
        users = transcript.blocks_of(UserBlock)
        # The left border comes first on screen; the words and tags follow it.
        shown = [rendered(transcript, block).lstrip("▌ ") for block in users]
        assert shown == ["fix it", "steer  use [red] sparingly", "follow-up  then test", "!ls -la"]
        assert [b.kind for b in users] == ["prompt", "steer", "follow_up", "shell"]
        # Injections and shell lines have their own border colour.
        borders = [styles_of(transcript, block, "▌")[0].color for block in users]
        assert borders[1] == borders[2] and len({borders[0], borders[1], borders[3]}) == 3
        assert all(style.bold for style in styles_of(transcript, users[0], "fix it"))


async def test_thinking_goes_above_the_answer_dim_and_can_be_hidden() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, TextDelta(text="The answer."), ThinkingDelta(text="Let me [think]."))
        await settle_view(pilot, transcript)
        thinking = one(transcript, ThinkingBlock)
        answer = one(transcript, AnswerBlock)
        blocks = transcript.blocks
        assert blocks.index(thinking) < blocks.index(answer)
        assert rendered(transcript, thinking) == "Let me [think]."
        assert all(s.italic for s in styles_of(transcript, thinking, "Let me"))
        transcript.toggle_thinking()
        await pilot.pause()
        assert transcript.block_lines(thinking) == []
        assert transcript.block_region(thinking) is None
        assert "Let me" not in transcript.plain_text()
        transcript.toggle_thinking()
        await pilot.pause()
        assert transcript.block_region(thinking) is not None


async def test_a_long_result_folds_to_four_lines_and_click_or_enter_toggles_it() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("c1", command="seq 10")
        publish_all(bus, ToolStart(call=tc), tool_end(tc, ToolResult(LINES_10), 1.25))
        await pilot.pause()
        block = one(transcript, ToolBlock)
        assert header(transcript, block) == "✓ bash seq 10  1.2s"
        assert body(transcript, block).splitlines() == [*LINES_10.splitlines()[:4], "+6 more lines"]
        region = transcript.block_region(block)
        assert region is not None
        await pilot.click(transcript, offset=region.offset)
        await pilot.pause()
        assert body(transcript, block).splitlines() == LINES_10.splitlines()
        assert transcript.has_focus and transcript.cursor is block
        # The cursor shows on the block it is on.
        assert block.highlighted
        await pilot.press("enter")
        await pilot.pause()
        assert body(transcript, block).endswith("+6 more lines")


async def test_up_and_down_move_the_cursor_over_tool_calls_only() -> None:
    async with running() as (pilot, transcript, bus):
        bus.publish(Notice(text="before"))
        for n in range(3):
            tc = call(f"c{n}")
            publish_all(bus, ToolStart(call=tc), tool_end(tc, ToolResult(LINES_10)))
        await pilot.pause()
        a, b, c = transcript.blocks_of(ToolBlock)
        # The host focused the transcript when it was empty: focus it again, as Tab would.
        transcript.blur()
        await pilot.pause()
        transcript.focus()
        await pilot.pause()
        assert transcript.cursor is c and c.highlighted
        await pilot.press("up", "up", "up")
        assert transcript.cursor is a and a.highlighted and not c.highlighted
        await pilot.press("down", "enter")
        assert b.expanded and not a.expanded
        transcript.blur()
        await pilot.pause()
        assert not b.highlighted


async def test_toggle_all_folds_expands_if_any_is_collapsed_else_collapses_all() -> None:
    async with running() as (pilot, transcript, bus):
        for n, content in enumerate([LINES_10, LINES_10, "short"]):
            tc = call(f"c{n}")
            publish_all(bus, ToolStart(call=tc), tool_end(tc, ToolResult(content)))
        await pilot.pause()
        a, b, short = transcript.blocks_of(ToolBlock)
        transcript.toggle_fold(a)
        assert (a.collapsed, b.collapsed) == (False, True)
        transcript.toggle_all_folds()
        assert (a.collapsed, b.collapsed, short.expanded) == (False, False, False)
        await pilot.pause()
        assert body(transcript, b).splitlines() == LINES_10.splitlines()
        transcript.toggle_all_folds()
        assert (a.collapsed, b.collapsed) == (True, True)
        await pilot.pause()
        assert body(transcript, b).endswith("+6 more lines")


async def test_concurrent_results_show_in_completion_order_and_once() -> None:
    async with running() as (pilot, transcript, bus):
        a, b = call("a", "read", path="a.txt"), call("b", "read", path="b.txt")
        publish_all(bus, ToolStart(call=a, concurrent=True), ToolStart(call=b, concurrent=True))
        await pilot.pause()
        block_a, block_b = transcript.blocks_of(ToolBlock)
        assert header(transcript, block_b) == "◌ read b.txt  queued"
        publish_all(bus, ToolRunning(call_id="a"), ToolRunning(call_id="b"))
        bus.publish(ToolSettled(call_id="b", result=ToolResult("bee"), duration_s=0.2))
        await pilot.pause()
        assert header(transcript, block_b) == "✓ read b.txt  0.2s"
        assert body(transcript, block_b) == "bee"
        assert block_a.state == "running"
        assert rendered(transcript, block_a) == f"{clock.SPINNER_FRAMES[0]} read a.txt  0.0s"
        clock.freeze(100.35)
        await pilot.pause(0.15)
        assert rendered(transcript, block_a) == f"{clock.SPINNER_FRAMES[3]} read a.txt  0.3s"
        bus.publish(ToolSettled(call_id="a", result=ToolResult("ay"), duration_s=0.4))
        publish_all(bus, tool_end(a, ToolResult("ay"), 0.4), tool_end(b, ToolResult("bee"), 0.2))
        await pilot.pause()
        assert transcript.blocks_of(ToolBlock) == [block_a, block_b]
        assert [body(transcript, x) for x in (block_a, block_b)] == ["ay", "bee"]
        assert header(transcript, block_a) == "✓ read a.txt  0.4s"


async def test_a_tool_end_without_tool_start_still_shows_the_call() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("x")
        bus.publish(tool_end(tc, ToolResult.error("not run: aborted"), 0.0))
        await pilot.pause()
        block = one(transcript, ToolBlock)
        assert header(transcript, block) == "✗ bash ls  0.0s"


DIFF = (
    "--- a/x.py\n+++ b/x.py\n@@ -1,8 +1,8 @@\n def f():\n     a = 1\n     b = 2\n"
    "-    return [1]\n+    return [2]\n x = 1\n y = 2\n z = 3\n@@ -19 +19 @@\n-old\n+new\n"
)


async def test_an_edit_result_is_a_coloured_diff_and_the_fold_counts_its_lines() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("e", "edit", path="x.py", edits=[])
        result = ToolResult("applied 1 edit to x.py", details={"path": "x.py", "diff": DIFF})
        publish_all(bus, ToolStart(call=tc), tool_end(tc, result, 0.05))
        await pilot.pause()
        block = one(transcript, ToolBlock)
        transcript.toggle_fold(block)
        await pilot.pause()

        def colour(text: str) -> str | None:
            (style,) = styles_of(transcript, block, text)
            return style.color.name if style.color else None

        assert colour("@@ -1,8 +1,8 @@") == "cyan"
        assert colour("-    return [1]") == "red"
        assert colour("+    return [2]") == "green"
        assert colour("-old") == "red"
        assert "--- a/x.py" not in rendered(transcript, block)
        assert "+    return [2]" in body(transcript, block).splitlines()
        transcript.toggle_fold(block)
        await pilot.pause()
        # Folded: each hunk's header and changes, a context line around them, the count.
        assert body(transcript, block).splitlines() == [
            "@@ -1,8 +1,8 @@",
            "b = 2",
            "-    return [1]",
            "+    return [2]",
            "x = 1",
            "@@ -19 +19 @@",
            "-old",
            "+new",
            "+4 more lines",
        ]


async def test_results_are_plain_text_and_errors_use_the_error_colour() -> None:
    async with running() as (pilot, transcript, bus):
        ok, bad = call("ok"), call("bad", command="false")
        publish_all(bus, ToolStart(call=ok), tool_end(ok, ToolResult("[red]x[/red] [link=a]")))
        failed = ToolResult.error("exit code 1 [/]", exit_code=1)
        publish_all(bus, ToolStart(call=bad), tool_end(bad, failed))
        await pilot.pause()
        done_block, failed_block = transcript.blocks_of(ToolBlock)
        assert body(transcript, done_block) == "[red]x[/red] [link=a]"
        assert header(transcript, failed_block).startswith("✗ bash false")
        assert body(transcript, failed_block) == "exit code 1 [/]"
        (done_style,) = styles_of(transcript, done_block, "[red]x")
        (failed_style,) = styles_of(transcript, failed_block, "exit code")
        assert failed_style.color != done_style.color
        error = transcript.get_component_rich_style("transcript--tool-failed")
        assert failed_style.color == error.color


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
        notices = transcript.blocks_of(NoticeBlock)
        assert [n.level for n in notices] == ["info", "warning", "error"]
        assert rendered(transcript, notices[0]) == "Restored 2 queued inputs to the editor."
        error = rendered(transcript, notices[2])
        assert error.count("\n") >= 1  # wrapped, not cut
        assert " ".join(line.lstrip("▌ ") for line in error.splitlines()) == cause
        # Every line of an error carries the bar, in the error colour.
        bars = styles_of(transcript, notices[2], "▌")
        assert len(bars) == error.count("\n") + 1
        colours = {
            level: styles_of(transcript, notice, notice.text[:10])[0].color
            for level, notice in zip(("info", "warning", "error"), notices, strict=True)
        }
        assert len(set(colours.values())) == 3


def marker_offset(transcript: Transcript) -> tuple[int, int]:
    content = transcript.scrollable_content_region
    return (content.x - transcript.region.x + MARKER_X + 1, content.height - 1)


async def test_follows_at_the_bottom_and_stays_put_with_a_marker_when_scrolled_up() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, *(Notice(text=f"line {n}") for n in range(20)))
        publish_all(bus, *deltas("streamed " * 40 + "\n\nmore " * 5))
        # Frames come on a timer, which a busy machine delays: draw now.
        transcript.flush_now()
        await pilot.pause()
        assert transcript.max_scroll_y > 0
        assert transcript.is_vertical_scroll_end and not transcript.marker_visible
        transcript.scroll_home(animate=False)
        await pilot.pause()
        publish_all(bus, *deltas("\n\nfresh text " * 30))
        transcript.flush_now()
        await pilot.pause()
        assert transcript.scroll_y == 0
        assert transcript.marker_visible
        last_row = transcript.render_line(transcript.scrollable_content_region.height - 1)
        assert "↓ new output below" in last_row.text
        # The marker's row is its own: no text of a line beside it, half hidden.
        assert last_row.text.strip() == "↓ new output below"
        await pilot.click(transcript, offset=marker_offset(transcript))
        await pilot.pause()
        assert transcript.is_vertical_scroll_end and not transcript.marker_visible
        # Scrolling back to the bottom by hand clears the marker too.
        transcript.scroll_home(animate=False)
        await pilot.pause()
        bus.publish(Notice(text="one more"))
        transcript.flush_now()
        await pilot.pause()
        assert transcript.marker_visible and transcript.scroll_y == 0
        transcript.scroll_end(animate=False)
        await pilot.pause()
        assert not transcript.marker_visible and transcript.following
        bus.publish(Notice(text="and it follows again"))
        transcript.flush_now()
        await pilot.pause()
        assert transcript.is_vertical_scroll_end
        assert (
            "and it follows again"
            in transcript.render_line(transcript.scrollable_content_region.height - 2).text
        )


async def test_subscribes_on_mount_and_unsubscribes_on_unmount() -> None:
    bus = CountingBus()
    async with running(bus) as (_, transcript, _):
        assert bus.subscribers == 1
        await transcript.remove()
        assert bus.subscribers == 0


async def settle_view(pilot, transcript) -> None:
    # Under load a frame can be late: draw what is buffered rather than trusting a
    # fixed pause.
    await pilot.pause()
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
        expected = [type(b).__name__ for b in transcript.blocks]
        expected_text = one(transcript, AnswerBlock).text
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
        assert [type(b).__name__ for b in transcript.blocks] == expected
        assert one(transcript, AnswerBlock).text == expected_text
        assert transcript.plain_text() == expected_plain
        assert expected_plain.startswith("go\n\nhmm\n\nAnswer\n\ndone\n\n✓ bash ls  0.5s\nok")
        assert expected_plain.endswith("steer  more\n\nnote")
        # One flush took the whole answer in: its finished blocks share one render.
        assert [g.source for g in one(transcript, AnswerBlock).groups] == ["Answer\n\ndone"]


async def test_dragging_selects_text_to_copy_and_does_not_fold() -> None:
    async with running() as (pilot, transcript, bus):
        tc = call("c1", command="seq 10")
        publish_all(
            bus,
            Notice(text="alpha beta gamma"),
            ToolStart(call=tc),
            tool_end(tc, ToolResult(LINES_10), 1.25),
        )
        await pilot.pause()
        notice = one(transcript, NoticeBlock)
        tool = one(transcript, ToolBlock)
        top = transcript.block_region(notice)
        body_top = transcript.block_region(tool)
        assert top is not None and body_top is not None
        # From "beta" on the notice's line to the end of "line 1" in the fold.
        start = (top.x + 1 + len("alpha "), top.y)
        end = (body_top.x + 3 + len("line 1"), body_top.y + 2)
        await pilot.mouse_down(transcript, offset=start)
        await pilot.hover(transcript, offset=end)
        await pilot.mouse_up(transcript, offset=end)
        await pilot.pause()
        selected = pilot.app.screen.get_selected_text()
        assert selected is not None
        assert selected.startswith("beta gamma")
        assert "✓ bash seq 10" in selected and selected.endswith("line 1")
        assert not tool.expanded
        # The selection shows: its cells carry the selection style.
        row = transcript.render_line(top.y)
        selection_style = pilot.app.screen.get_component_rich_style("screen--selection")
        marked = [
            seg.text for seg in row if seg.style and seg.style.bgcolor == selection_style.bgcolor
        ]
        assert "".join(marked).startswith("beta")


async def test_a_fence_in_an_unknown_language_shows_as_plain_code_and_is_looked_up_once() -> None:
    from pygments.lexers.special import TextLexer

    from ink_tui.ui.blocks.answer_markdown import code_lexer

    code_lexer.cache_clear()
    async with running() as (pilot, transcript, bus):
        publish_all(bus, *deltas("Here:\n\n```nosuchlang\nlet x = <b>1</b>\n"))
        for _ in range(3):  # the open fence is drawn again frame after frame
            await pilot.pause()
            transcript.flush_now()
            bus.publish(TextDelta(text="x\n"))
        publish_all(bus, *deltas("```\n\ndone"))
        bus.publish(MessageEnd(message=AssistantMessage(text="")))
        await settle_view(pilot, transcript)
        shown = rendered(transcript, one(transcript, AnswerBlock))
        assert "let x = <b>1</b>" in shown and "```" not in shown
    info = code_lexer.cache_info()
    assert info.misses == 1 and info.hits >= 2
    assert isinstance(code_lexer("nosuchlang"), TextLexer)


async def test_a_new_theme_redraws_every_block_in_its_colours() -> None:
    async with running() as (pilot, transcript, bus):
        bus.publish(UserMessageEvent(text="colour me", kind="prompt"))
        publish_all(bus, *deltas("Some `code` here."))
        await settle_view(pilot, transcript)
        user = one(transcript, UserBlock)
        before = styles_of(transcript, user, "colour me")[0].bgcolor
        pilot.app.theme = "textual-light"
        await pilot.pause(0.1)
        transcript.flush_now()
        after = styles_of(transcript, user, "colour me")[0].bgcolor
        assert before != after
        expected = transcript.get_component_rich_style("transcript--user").bgcolor
        assert after == expected


async def test_clearing_the_view_leaves_nothing_to_scroll() -> None:
    async with running() as (pilot, transcript, bus):
        publish_all(bus, *(Notice(text=f"line {n}") for n in range(30)))
        await settle_view(pilot, transcript)
        assert transcript.max_scroll_y > 0
        transcript.clear_view()
        await settle_view(pilot, transcript)
        assert transcript.virtual_size.height == 0 and transcript.max_scroll_y == 0
        assert transcript.plain_text() == ""
        bus.publish(Notice(text="after the clear"))
        await settle_view(pilot, transcript)
        assert "after the clear" in transcript.render_line(0).text
