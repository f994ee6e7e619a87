"""The offline demo model shows a compaction: its window is small, so a few prompts into
the tour the conversation is summarised, offline, like a real model's would be."""

from __future__ import annotations

from pathlib import Path

from ink_tui.control.controller import RunController
from ink_tui.core.messages import SummaryMessage
from ink_tui.providers.demo import DemoProvider
from ink_tui.session.system_prompt import build_system_prompt
from ink_tui.tools import default_tools
from tests.run_helpers import Recorder

PROMPTS = [
    "what does this project do?",
    "find the TODO comments",
    "where is tokenize defined?",
    "what does this project do?",
    "find the TODO comments",
    "hello",
]


async def test_the_demo_tour_compacts_within_a_few_prompts(workspace: Path) -> None:
    # Without bash: the tour's shell step sleeps 2 s on purpose (something to steer).
    tools = [tool for tool in default_tools() if tool.name != "bash"]
    controller = RunController(
        provider=DemoProvider(workspace, chars_per_second=0),
        tools=tools,
        workspace=workspace,
        system_prompt=build_system_prompt(workspace, tools, []),
    )
    recorder = Recorder()
    controller.bus.subscribe(recorder)
    for prompt in PROMPTS:
        controller.submit(prompt)
        await controller.wait_idle()
    end = recorder.of("compaction_end")[0]
    assert end.done and end.reason == "threshold"
    assert end.tokens_after < end.tokens_before
    for section in ("## Goal", "## Decisions", "## Files", "## Open work"):
        assert section in end.summary
    assert "- what does this project do?" in end.summary
    assert isinstance(controller.history[0], SummaryMessage)
    fills = [u.tokens / u.context_window for u in recorder.of("context_usage")]
    assert fills and all(0 < fill < 1 for fill in fills)
    await controller.aclose()
