"""A sub-agent's events stay out of the main transcript (the seed's rule), while the
parent's own go on showing, interleaved with them on the same bus."""

from __future__ import annotations

from ink_tui.core.events import MessageEnd, TextDelta, ToolStart
from ink_tui.core.messages import AssistantMessage, ToolCall
from ink_tui.ui.blocks.tool_block import ToolBlock
from tests.test_ui_transcript import running


async def test_sub_agent_deltas_and_tools_never_reach_the_main_transcript() -> None:
    async with running() as (pilot, transcript, bus):
        task = ToolCall("call_task", "task", {"description": "scan", "prompt": "look"})
        bus.publish(MessageEnd(message=AssistantMessage(tool_calls=[task])))
        bus.publish(ToolStart(call=task))
        inner = ToolCall("call_inner", "read", {"path": "a.py"})
        for piece in ("The parent ", "goes on."):
            bus.publish(
                TextDelta(text="SUB-AGENT TEXT ", agent_id="a1", parent_call_id="call_task")
            )
            bus.publish(TextDelta(text=piece))
        bus.publish(ToolStart(call=inner, agent_id="a1", parent_call_id="call_task"))
        transcript.flush_now()
        await pilot.pause()
        text = transcript.plain_text()
        assert "The parent goes on." in text
        assert "SUB-AGENT" not in text
        assert [b.call.name for b in transcript.blocks_of(ToolBlock)] == ["task"]
