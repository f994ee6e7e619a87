"""Context compaction against the loopback scripted server: when it happens, what the
summarisation request and the request after it hold, what the session file keeps, and
that run control holds (abort, failure, queued input untouched)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

from ink_tui.core.compaction_prompt import SUMMARY_HEADER, SUMMARY_SYSTEM_PROMPT
from ink_tui.core.events import CompactionEnd
from ink_tui.core.messages import SummaryMessage, UserMessage
from ink_tui.session.entries import CompactionEntry
from ink_tui.session.session_reader import load_session
from ink_tui.session.session_recorder import SessionRecorder
from ink_tui.session.session_writer import SessionWriter
from tests.run_helpers import make_controller, wait_gate, wait_requests
from tests.scripted_server import (
    Gate,
    Reply,
    ScriptedServer,
    Step,
    chunk,
    error_reply,
    usage_chunk,
)

OVERFLOW = (
    "This model's maximum context length is 1000 tokens. However, your messages resulted "
    "in 1500 tokens. Please reduce the length of the messages."
)


def reply(text: str, prompt_tokens: int = 10, gate: Gate | None = None) -> Reply:
    """A plain answer whose usage says the request held `prompt_tokens`."""
    steps: list[Step] = [chunk({"role": "assistant", "content": ""})]
    if gate is not None:
        steps.append(gate)
    steps += [
        chunk({"content": text}),
        chunk({}, finish="stop"),
        usage_chunk(prompt_tokens, 10),
        "data: [DONE]\n\n",
    ]
    return Reply(steps)


def roles_and_texts(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m.get("content") or "") for m in request["messages"]]


async def finish(controller: Any) -> None:
    await asyncio.wait_for(controller.wait_idle(), 10)


def setup(server: ScriptedServer, workspace: Path, window: int = 1000):
    controller, recorder = make_controller(server, workspace, tools=[])
    controller.provider.context_window = window
    return controller, recorder


async def test_passing_the_threshold_summarises_the_older_part_and_keeps_the_recent(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    controller, recorder = setup(server, workspace)
    writer = SessionWriter.create(workspace, "scripted-model", root=tmp_path / "store")
    controller.bus.subscribe(SessionRecorder(writer))
    # The first answer's usage fills 86 % of the 1000-token window.
    server.push(reply("Widgets are parsed in tokenizer.py.", prompt_tokens=850))
    controller.submit("first task: explain the tokenizer")
    await finish(controller)

    server.push(reply("## Goal\nexplain the tokenizer"), reply("Second answer."))
    controller.submit("second task: add a test")
    await finish(controller)

    summary_request, after = server.requests[1], server.requests[2]
    # The summarisation request: its own system prompt, no tools, one user message with
    # the older part as a transcript.
    assert summary_request["messages"][0] == {"role": "system", "content": SUMMARY_SYSTEM_PROMPT}
    assert "tools" not in summary_request
    [(role, text)] = roles_and_texts(summary_request)[1:]
    assert role == "user"
    assert "[user]\nfirst task: explain the tokenizer" in text
    assert "[assistant]\nWidgets are parsed in tokenizer.py." in text
    assert "second task" not in text
    # The next request: the summary, then the recent turn, unchanged.
    messages = roles_and_texts(after)[1:]
    assert messages == [
        ("user", f"{SUMMARY_HEADER}\n\n## Goal\nexplain the tokenizer"),
        ("user", "second task: add a test"),
    ]
    [end] = recorder.of("compaction_end")
    assert end.done and (end.first, end.end) == (0, 2)
    assert end.tokens_before >= 800 and end.tokens_after < end.tokens_before
    assert recorder.of("compaction_start")[0].reason == "threshold"

    # The file keeps every message and says what the summary replaced.
    writer.close()
    loaded = load_session(writer.path)
    [entry] = [e for e in loaded.entries if isinstance(e, CompactionEntry)]
    assert (entry.first, entry.end, entry.summary) == (0, 2, "## Goal\nexplain the tokenizer")
    assert loaded.message_count == 4  # both prompts and both answers: all of them
    assert isinstance(loaded.history[0], SummaryMessage)
    assert [m.content for m in loaded.history[1:2]] == ["second task: add a test"]
    assert len(loaded.history) == len(controller.history)
    await controller.aclose()


async def test_abort_during_compaction_restores_the_queue_and_leaves_the_history(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, recorder = setup(server, workspace)
    server.push(reply("First answer.", prompt_tokens=900))
    controller.submit("first task")
    await finish(controller)
    before = copy.deepcopy(controller.history)

    gate = Gate()
    server.push(reply("never finished", gate=gate))
    controller.submit("second task")
    await wait_gate(gate)
    await recorder.wait_type("compaction_start")
    controller.submit("a steer typed while compacting")
    controller.submit("a follow-up", "follow_up")
    controller.interrupt()
    await finish(controller)

    [end] = recorder.of("compaction_end")
    assert end.aborted and not end.done
    restored = recorder.of("input_restored")
    assert restored[-1].text == "a steer typed while compacting\n\na follow-up"
    assert len(controller.queue) == 0
    # The history is the one before, plus the prompt that started the aborted run.
    assert controller.history[:-1] == before
    assert controller.history[-1] == UserMessage("second task")
    assert server.disconnected.wait(5)
    await controller.aclose()


async def test_a_failed_summary_fails_the_run_with_its_cause_and_keeps_the_history(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, recorder = setup(server, workspace)
    server.push(reply("First answer.", prompt_tokens=900))
    controller.submit("first task")
    await finish(controller)
    server.push(error_reply(400, "summaries are switched off here"))
    controller.submit("second task")
    await finish(controller)

    [end] = recorder.of("compaction_end")
    assert end.error is not None and "summaries are switched off here" in end.error
    errors = [n.text for n in recorder.of("notice") if n.level == "error"]
    assert any("compaction failed" in e and "summaries are switched off here" in e for e in errors)
    assert not any(isinstance(m, SummaryMessage) for m in controller.history)
    assert [m.content for m in controller.history if isinstance(m, UserMessage)] == [
        "first task",
        "second task",
    ]
    await controller.aclose()


async def test_context_overflow_compacts_and_retries_once(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, recorder = setup(server, workspace, window=100_000)
    server.push(reply("First answer."))
    controller.submit("first task")
    await finish(controller)

    server.push(error_reply(400, OVERFLOW), reply("the summary"), reply("Answer after."))
    controller.submit("second task")
    await finish(controller)

    assert len(server.requests) == 4
    assert server.requests[2]["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT
    assert roles_and_texts(server.requests[3])[1:] == [
        ("user", f"{SUMMARY_HEADER}\n\nthe summary"),
        ("user", "second task"),
    ]
    assert recorder.of("compaction_start")[0].reason == "overflow"
    assert recorder.of("run_end")[-1].stop_reason == "completed"
    await controller.aclose()


async def test_a_second_overflow_after_compacting_fails_with_the_cause(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, recorder = setup(server, workspace, window=100_000)
    server.push(reply("First answer."))
    controller.submit("first task")
    await finish(controller)
    server.push(error_reply(400, OVERFLOW), reply("the summary"), error_reply(400, OVERFLOW))
    controller.submit("second task")
    await finish(controller)

    assert len(server.requests) == 4  # no second compaction, no third try
    [failed] = [n.text for n in recorder.of("notice") if n.level == "error"]
    assert "still too long for the model after compacting" in failed
    assert "maximum context length is 1000 tokens" in failed
    await controller.aclose()


async def test_input_queued_during_compaction_is_neither_taken_nor_reordered(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, recorder = setup(server, workspace)
    server.push(reply("First answer.", prompt_tokens=900))
    controller.submit("first task")
    await finish(controller)

    gate = Gate()
    server.push(reply("the summary", gate=gate), reply("Answer 2."), reply("Answer 3."))
    controller.submit("second task")
    await wait_gate(gate)
    controller.submit("F1", "follow_up")
    controller.submit("S2")
    controller.submit("F3", "follow_up")
    queued = [(e.text, e.mode) for e in controller.queue.entries]
    await recorder.wait_type("compaction_start")
    assert [(e.text, e.mode) for e in controller.queue.entries] == queued
    gate.open()
    await wait_requests(server, 3)
    # The steer typed during the compaction reaches the request right after it.
    assert roles_and_texts(server.requests[2])[-2:] == [("user", "second task"), ("user", "S2")]
    server.push(reply("Answer 4."))
    await finish(controller)
    # The follow-ups run after, one at a time, in their order.
    assert roles_and_texts(server.requests[3])[-1] == ("user", "F1")
    assert roles_and_texts(server.requests[4])[-1] == ("user", "F3")
    assert len(recorder.of("compaction_end")) == 1
    await controller.aclose()


async def test_compact_by_hand_runs_while_idle_and_is_refused_while_running(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, recorder = setup(server, workspace, window=100_000)
    server.push(reply("First answer."), reply("Second answer."))
    controller.submit("first task")
    await finish(controller)
    controller.submit("second task")
    await finish(controller)

    server.push(reply("the summary"))
    assert controller.compact("keep the file names")
    assert not controller.compact()  # already running
    await finish(controller)
    text = roles_and_texts(server.requests[2])[1][1]
    assert "keep the file names" in text
    assert [type(m).__name__ for m in controller.history] == [
        "SummaryMessage",
        "UserMessage",
        "AssistantMessage",
    ]
    [start] = recorder.of("compaction_start")
    assert start.reason == "manual"
    assert recorder.of("run_start")[-1].kind == "compact"
    await controller.aclose()


async def test_usage_is_reported_as_context_fill(server: ScriptedServer, workspace: Path) -> None:
    controller, recorder = setup(server, workspace)
    server.push(reply("Answer.", prompt_tokens=300))
    controller.submit("task")
    await finish(controller)
    [usage] = recorder.of("context_usage")
    assert (usage.tokens, usage.context_window) == (310, 1000)
    assert not recorder.of("compaction_start")
    assert not [e for e in recorder.events if isinstance(e, CompactionEnd)]
    await controller.aclose()


async def test_programs_see_compaction_start_and_end(
    server: ScriptedServer, workspace: Path
) -> None:
    from ink_tui.control.public_events import PublicProjection, history_dict

    controller, _ = setup(server, workspace)
    projection = PublicProjection("s1")
    public: list[dict[str, Any]] = []
    controller.bus.subscribe(lambda event: public.extend(projection.project(event)))
    server.push(reply("First answer.", prompt_tokens=900))
    controller.submit("first task")
    await finish(controller)
    server.push(reply("the summary"), reply("Second answer."))
    controller.submit("second task")
    await finish(controller)

    [start] = [e for e in public if e["type"] == "compaction_start"]
    [end] = [e for e in public if e["type"] == "compaction_end"]
    assert (start["reason"], start["context_window"]) == ("threshold", 1000)
    assert end["done"] and end["summary"] == "the summary" and (end["first"], end["end"]) == (0, 2)
    assert history_dict(controller.history[0])["kind"] == "summary"
    await controller.aclose()
