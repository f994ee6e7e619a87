"""A model whose summaries are longer than what they replace (issue 20, item 9).

Such a summary is refused (the history stays as it was, the user is told), and the
threshold does not try again every turn: it waits until the context has grown by a tenth
of the window, within one run and across the runs of a conversation. An overflow or a
/compact by hand that gets such a summary fails with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.core.compaction import CompactionBackoff
from ink_tui.core.compaction_prompt import SUMMARY_SYSTEM_PROMPT
from ink_tui.core.messages import SummaryMessage, UserMessage
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.run_helpers import make_controller
from tests.scripted_server import Reply, ScriptedServer, text_reply, tool_reply, usage_chunk
from tests.test_print_mode import clean_env, ink

# Far longer than anything these conversations hold: ~1,500 tokens at 4 characters each.
LONG_SUMMARY = "## Goal\n" + "The user wants the work done, in every detail. " * 128


def is_summary_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return messages[0].get("content") == SUMMARY_SYSTEM_PROMPT


def long_summaries(body: dict[str, Any]) -> Reply | None:
    """The model that writes over-long summaries, whenever it is asked for one."""
    return text_reply(LONG_SUMMARY) if is_summary_request(body) else None


@pytest.fixture
def summarising_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    server.responders.append(long_summaries)
    try:
        yield server
    finally:
        server.close()


def with_usage(reply: Reply, prompt_tokens: int) -> Reply:
    """`reply` whose usage says the request held `prompt_tokens`."""
    default = usage_chunk()
    reply.steps = [usage_chunk(prompt_tokens, 10) if s == default else s for s in reply.steps]
    return reply


def summary_requests(server: ScriptedServer) -> int:
    return sum(1 for body in server.requests if is_summary_request(body))


def test_over_long_summaries_are_refused_and_not_retried_every_turn(
    summarising_server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    server = summarising_server
    config = tmp_path / "config"
    (config / "ink").mkdir(parents=True)
    # Compacts at 80 %: 1,600 tokens; tried again after a refusal at +200.
    (config / "ink" / "config.toml").write_text("[context_windows]\nm = 2000\n")
    ls: list[tuple[str, dict[str, Any]]] = [("ls", {})]
    server.push(
        with_usage(tool_reply(ls), 1700),  # over the threshold: one compaction, refused
        with_usage(tool_reply(ls), 1720),  # grown too little: no compaction
        with_usage(tool_reply(ls), 1760),  # still too little
        with_usage(tool_reply(ls), 1950),  # grown by more than 200: tried again, refused
        with_usage(text_reply("Done."), 1980),
    )
    env = clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m", XDG_CONFIG_HOME=str(config))
    done = ink("-p", "do the work", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    assert server.pending == 0
    # Two attempts in five turns, not one before every turn.
    assert summary_requests(server) == 2
    refused = [line for line in done.stderr.splitlines() if "Compaction refused" in line]
    assert len(refused) == 2, done.stderr
    assert refused[0].startswith("warning: Compaction refused: the model's summary (~1,")
    assert (
        "The conversation is unchanged. It is tried again once the context reaches" in (refused[0])
    )
    assert "compacted:" not in done.stderr
    # The history went on whole: every request after a refusal holds the prompt as sent.
    last = server.requests[-1]["messages"]
    assert last[1] == {"role": "user", "content": "do the work"}


async def test_the_wait_holds_across_runs_and_the_history_is_untouched(
    summarising_server: ScriptedServer, workspace: Path
) -> None:
    server = summarising_server
    controller, recorder = make_controller(server, workspace, tools=[])
    assert isinstance(controller.provider, OpenAICompatProvider)
    controller.provider.context_window = 1000
    for prompt, tokens in (("first", 850), ("second", 870), ("third", 890)):
        server.push(with_usage(text_reply(f"Answer to {prompt}."), tokens))
        controller.submit(prompt)
        await asyncio.wait_for(controller.wait_idle(), 30)
    # The second run compacted (refused); the third had grown by less than 100 tokens.
    assert summary_requests(server) == 1
    [end] = recorder.of("compaction_end")
    assert end.error is not None and "is not shorter than the part" in end.error
    [notice] = [n for n in recorder.of("notice") if n.kind == "compaction_refused"]
    assert notice.level == "warning"
    assert notice.data["retry_at"] == end.tokens_before + 100
    assert notice.data["summary_tokens"] > notice.data["replaced_tokens"]
    assert not any(isinstance(m, SummaryMessage) for m in controller.history)
    assert [m.content for m in controller.history if isinstance(m, UserMessage)] == [
        "first",
        "second",
        "third",
    ]
    assert [e.stop_reason for e in recorder.of("run_end")] == ["completed"] * 3
    await controller.aclose()


async def test_a_refused_summary_on_overflow_or_by_hand_fails_with_the_reason(
    summarising_server: ScriptedServer, workspace: Path
) -> None:
    server = summarising_server
    controller, recorder = make_controller(server, workspace, tools=[])
    server.push(text_reply("Short answer."))
    controller.submit("first")
    await asyncio.wait_for(controller.wait_idle(), 30)
    assert controller.compact()
    await asyncio.wait_for(controller.wait_idle(), 30)
    assert summary_requests(server) == 1
    errors = [n.text for n in recorder.of("notice") if n.level == "error"]
    assert any("is not shorter than the part of the conversation" in e for e in errors), errors
    assert not any(isinstance(m, SummaryMessage) for m in controller.history)

    # An overflow cannot wait: it compacts at once, and the refusal ends the run.
    overflow = Reply(
        [
            '{"error": {"message": "This model\'s maximum context length is 100 tokens. '
            'However, your messages resulted in 900 tokens.", "type": "invalid_request_error"}}'
        ],
        status=400,
        headers={"Content-Type": "application/json"},
    )
    server.push(overflow)
    controller.submit("second")
    await asyncio.wait_for(controller.wait_idle(), 30)
    assert summary_requests(server) == 2
    errors = [n.text for n in recorder.of("notice") if n.level == "error"]
    assert sum("is not shorter than the part" in e for e in errors) == 2, errors
    await controller.aclose()


def test_the_wait_itself() -> None:
    backoff = CompactionBackoff()
    assert backoff.allows(900, 800)
    # Left above the threshold (refused, or done and still too long): wait for +10 %.
    assert backoff.note(900, 800, 1000) == 1000
    assert not backoff.allows(999, 800)
    assert backoff.allows(1000, 800)
    # Left below it: no wait.
    assert backoff.note(500, 800, 1000) is None
    assert backoff.allows(850, 800)
    # Back under the threshold (a /compact, a new conversation) ends a wait.
    backoff.note(900, 800, 1000)
    assert backoff.allows(100, 800)
    assert backoff.retry_at is None
