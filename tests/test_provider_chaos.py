"""Replies that are not a valid stream, and servers that go quiet: each is a failure that says
what arrived, never an answer.

Every case is served by the loopback scripted server and checked three ways: what
`ink -p` (a real process) prints and exits with, what the run controller does with input
queued meanwhile (it comes back: `input_restored`, the run ends failed), and, for a cut
answer, what the session file records. The timeout cases use short limits.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.events import RunEnd, ServerWaiting
from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    RetryScheduled,
    StreamEvent,
    StreamTimeouts,
    TextChunk,
    Waiting,
)
from ink_tui.modes.print_mode import PrintRenderer
from ink_tui.providers.openai_compat import OpenAICompatProvider
from ink_tui.providers.retry import RetryPolicy
from tests.run_helpers import make_controller
from tests.scripted_server import (
    Drop,
    Gate,
    Pause,
    Reply,
    ScriptedServer,
    chunk,
    error_reply,
    sse,
    text_reply,
)

DONE = "data: [DONE]\n\n"
JSON = {"Content-Type": "application/json"}
ROLE = chunk({"role": "assistant", "content": ""})
PORTAL = (
    "<!DOCTYPE html><html><head><title>Hotel Wi-Fi: sign in</title>"
    "<style>body { font: 14px sans-serif }</style><script>if (a < b) go();</script></head>"
    "<body><h1>Welcome</h1><p>Accept the terms to get online.</p></body></html>"
)
NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n"
    "</body>\r\n</html>\r\n"
)
ATTEMPTS = RetryPolicy().max_attempts  # what `ink -p` tries before it gives up


@dataclass(frozen=True)
class Case:
    reply: Callable[[], Reply]
    error: str  # what the failure must say
    retried: bool  # nothing could have been shown, so every attempt is made
    partial: str = ""  # the text shown before the failure, which stays


CASES: dict[str, Case] = {
    "html-page": Case(
        lambda: Reply([PORTAL], headers={"Content-Type": "text/html; charset=utf-8"}),
        "the server answered with an HTML page titled 'Hotel Wi-Fi: sign in'",
        retried=False,
    ),
    "html-page-as-event-stream": Case(
        lambda: Reply([NGINX_502]),
        "the server answered with an HTML page titled '502 Bad Gateway': nginx/1.25.3",
        retried=False,
    ),
    "json-that-is-not-a-chunk": Case(
        lambda: Reply(['{"foo": 1}'], headers=JSON),
        'a JSON object that is not a chat completion chunk: {"foo": 1}',
        retried=False,
    ),
    "event-that-is-not-a-chunk": Case(
        lambda: Reply([sse({"foo": 1}), DONE]),
        'a JSON object that is not a chat completion chunk: {"foo": 1}',
        retried=False,
    ),
    "json-detail-with-200": Case(
        lambda: Reply([json.dumps({"detail": "Model is still loading"})], headers=JSON),
        'not a chat completion chunk: {"detail": "Model is still loading"}; '
        "it says: Model is still loading",
        retried=False,
    ),
    "error-object-with-200": Case(
        lambda: Reply([json.dumps({"error": {"message": "Quota exceeded"}})], headers=JSON),
        "Quota exceeded",
        retried=False,
    ),
    "bare-json-error-as-event-stream": Case(
        lambda: Reply([json.dumps({"error": {"message": "Invalid model 'm'"}})]),
        "the server answered 200 with an error instead of a reply stream: Invalid model 'm'",
        retried=False,
    ),
    "plain-text-with-200": Case(
        lambda: Reply(["Service temporarily unavailable"], headers={"Content-Type": "text/plain"}),
        "something that is not an event stream: 'Service temporarily unavailable'",
        retried=False,
    ),
    "empty-body": Case(
        lambda: Reply([]), "the server answered 200 with an empty body", retried=True
    ),
    "empty-json-body": Case(
        lambda: Reply([], headers=JSON), "the server answered 200 with an empty body", retried=True
    ),
    "done-only": Case(
        lambda: Reply([DONE]),
        "the server ended the stream ([DONE]) without sending any reply",
        retried=True,
    ),
    "dropped-before-any-content": Case(
        lambda: Reply([ROLE, Pause(0.05), Drop()]),
        "the stream ended before the model finished",
        retried=True,
    ),
    "dropped-after-text": Case(
        lambda: Reply([ROLE, chunk({"content": "Half an ans"}), Pause(0.05), Drop()]),
        "the stream ended before the model finished",
        retried=False,
        partial="Half an ans",
    ),
    "ended-after-text-without-finish": Case(
        lambda: Reply([ROLE, chunk({"content": "Half an ans"})]),
        "the stream ended before the model finished: the server closed the stream without "
        "a finish reason or [DONE]",
        retried=False,
        partial="Half an ans",
    ),
}


def push_case(server: ScriptedServer, case: Case) -> int:
    """Script the case for every attempt the provider will make; returns that count."""
    attempts = ATTEMPTS if case.retried else 1
    server.push(*[case.reply() for _ in range(attempts)])
    return attempts


# -- print mode: a real `ink -p` process ------------------------------------------------

_HOME = tempfile.mkdtemp(prefix="ink-chaos-tests-")
MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}


def ink_command() -> list[str]:
    # The installed `ink` script of this interpreter; `python -m ink_tui` where there is none.
    script = shutil.which("ink", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "ink_tui"]


def ink_env(data_home: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES and "TIMEOUT" not in k}
    env["XDG_DATA_HOME"] = data_home or os.path.join(_HOME, "data")
    env["XDG_CONFIG_HOME"] = os.path.join(_HOME, "config")
    env.update(extra)
    return env


def ink_print(
    server: ScriptedServer, workspace: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ink_command(), "-p", "hello", "--base-url", server.base_url, "--model", "m", *extra],
        cwd=workspace,
        env=env or ink_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", list(CASES))
def test_print_mode_fails_and_says_what_arrived(
    name: str, server: ScriptedServer, workspace: Path
) -> None:
    case = CASES[name]
    attempts = push_case(server, case)
    done = ink_print(server, workspace, "--no-session")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert case.error in done.stderr
    assert done.stdout == (case.partial + "\n" if case.partial else "")
    assert len(server.requests) == attempts
    if case.retried:
        assert f"gave up after {attempts} attempts" in done.stderr
    elif case.partial:
        assert "not retried" in done.stderr


def test_no_markup_reaches_the_user(server: ScriptedServer, workspace: Path) -> None:
    server.push(Reply([PORTAL], headers={"Content-Type": "text/html"}))
    server.push(*[Reply([NGINX_502], status=502, headers={"Content-Type": "text/html"})] * 3)
    for _ in range(2):
        done = ink_print(server, workspace, "--no-session")
        assert done.returncode == 1
        for markup in ("<html", "<title", "<h1", "<script", "<style", "</", "font:", "go()"):
            assert markup not in done.stderr, done.stderr
    assert "HTTP 502" in done.stderr and "'502 Bad Gateway': nginx/1.25.3" in done.stderr


@pytest.mark.parametrize("name", ["dropped-after-text", "ended-after-text-without-finish"])
def test_a_cut_answer_is_recorded_as_cut_in_the_session_file(
    name: str, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    push_case(server, CASES[name])
    data_home = tmp_path / "data"
    done = ink_print(server, workspace, env=ink_env(str(data_home)))
    assert done.returncode == 1, done.stderr
    [session] = list((data_home / "ink" / "sessions").glob("*/*.jsonl"))
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    [answer] = [e for e in entries if e["type"] == "assistant"]
    assert answer["text"] == "Half an ans"
    assert answer["finish_reason"] not in ("stop", "length", "tool_calls")
    [error] = [e for e in entries if e["type"] == "error"]
    assert "the stream ended before the model finished" in error["text"]


async def test_the_api_key_is_masked_in_what_the_server_sent(server: ScriptedServer) -> None:
    echo = {"error": {"message": "Incorrect API key provided: sk-test"}}
    server.push(
        Reply([json.dumps(echo)]),
        Reply(["key sk-test is not allowed here"], headers={"Content-Type": "text/plain"}),
        Reply(["<html><title>Denied sk-test</title>sk-test</html>"]),
        Reply([json.dumps({"foo": "sk-test"})], headers=JSON),
    )
    provider = fast_provider(server)
    try:
        for _ in range(4):
            _, error = await collect(provider)
            assert isinstance(error, ProviderError)
            assert "sk-test" not in str(error) and "***" in str(error), str(error)
    finally:
        await provider.aclose()


# -- the run controller: queued input comes back ----------------------------------------


@pytest.mark.parametrize("name", list(CASES))
async def test_run_fails_and_queued_input_is_restored(
    name: str, server: ScriptedServer, workspace: Path
) -> None:
    case = CASES[name]
    push_case(server, case)
    controller, recorder = make_controller(server, workspace)
    try:
        controller.submit("hello")
        controller.submit("then this", "follow_up")
        end: RunEnd = await recorder.wait_type("run_end")
        restored = await recorder.wait_type("input_restored")
        await controller.wait_idle()
    finally:
        await controller.aclose()
    assert end.stop_reason is None
    assert end.error is not None and case.error in end.error
    assert (restored.text, restored.count) == ("then this", 1)
    assert len(controller.queue) == 0
    replies = [m for m in controller.history if isinstance(m, AssistantMessage)]
    if case.partial:
        # What was shown stays, marked as cut: never as a whole answer.
        assert [(m.text, m.finish_reason) for m in replies] == [(case.partial, "unknown")]
    else:
        assert replies == []


# -- Retry-After longer than ink will wait ----------------------------------------------


def fast_provider(server: ScriptedServer, **timeouts: float) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        server.base_url,
        "m",
        "sk-test",
        base_delay=0.001,
        max_delay=0.005,
        timeouts=StreamTimeouts(**timeouts) if timeouts else None,
    )


async def collect(provider: OpenAICompatProvider) -> tuple[list[StreamEvent], Exception | None]:
    events: list[StreamEvent] = []
    try:
        async for event in provider.stream(
            ModelRequest("sys", [UserMessage("hi")]), AbortController().signal
        ):
            events.append(event)
    except ProviderError as exc:
        return events, exc
    return events, None


@pytest.fixture
async def provider(server: ScriptedServer) -> AsyncIterator[OpenAICompatProvider]:
    client = fast_provider(server)
    yield client
    await client.aclose()


@pytest.mark.parametrize("header", ["retry-after", "retry-after-ms"])
async def test_a_retry_after_beyond_the_cap_fails_at_once_with_the_servers_wait(
    header: str, server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    value = "3600" if header == "retry-after" else "3600000"
    server.push(error_reply(429, "Daily quota used up", {header: value}), text_reply("late"))
    started = time.monotonic()
    events, error = await collect(provider)
    assert time.monotonic() - started < 1
    assert events == []  # no retry notice: nothing will be retried
    assert isinstance(error, ProviderError)
    assert "the server asked to wait 3600 s; not retrying" in str(error)
    assert "Daily quota used up" in str(error)
    assert len(server.requests) == 1


async def test_a_retry_after_within_the_cap_is_still_waited_for(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(error_reply(429, "slow down", {"retry-after": "0.2"}), text_reply("fine"))
    events, error = await collect(provider)
    assert error is None
    assert isinstance(events[0], RetryScheduled) and events[0].delay == pytest.approx(0.2)
    assert isinstance(events[-1], ReplyDone) and events[-1].message.text == "fine"


def test_print_mode_says_the_servers_wait_and_exits_1(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(error_reply(429, "Daily quota used up", {"Retry-After": "3600"}))
    started = time.monotonic()
    done = ink_print(server, workspace, "--no-session")
    assert done.returncode == 1
    assert "the server asked to wait 3600 s; not retrying" in done.stderr
    assert time.monotonic() - started < 15
    assert len(server.requests) == 1


# -- silence: waiting, and giving up --------------------------------------------------------

SHORT = {"notice_after_s": 0.1, "notice_every_s": 0.1}


def waits(events: list[StreamEvent]) -> list[Waiting]:
    return [e for e in events if isinstance(e, Waiting)]


async def test_headers_then_nothing_is_reported_then_given_up(server: ScriptedServer) -> None:
    server.push(Reply([Gate()]), text_reply("never asked for"))
    provider = fast_provider(server, first_byte_s=0.6, idle_s=0.2, **SHORT)
    started = time.monotonic()
    try:
        events, error = await collect(provider)
    finally:
        await provider.aclose()
    assert 0.55 < time.monotonic() - started < 2
    assert isinstance(error, ProviderError)
    assert "sent nothing for 0.6 s after the request (first_token_timeout_s = 0.6" in str(error)
    seen = waits(events)
    assert len(seen) >= 3 and all(not w.over for w in seen)
    assert seen[0].seconds >= 0.1
    assert all(a.seconds < b.seconds for a, b in itertools.pairwise(seen))
    assert all(w.limit == pytest.approx(0.6, abs=0.05) for w in seen)
    # Not retried: the limit is the patience the user chose.
    assert len(server.requests) == 1
    assert await asyncio.to_thread(server.disconnected.wait, 2)


async def test_no_headers_at_all_is_given_up_the_same_way(server: ScriptedServer) -> None:
    server.push(Reply([chunk({}, finish="stop")], before_headers=Gate()))
    provider = fast_provider(server, first_byte_s=0.4, **SHORT)
    try:
        events, error = await collect(provider)
    finally:
        await provider.aclose()
    assert isinstance(error, ProviderError) and "sent nothing for 0.4 s" in str(error)
    assert waits(events)
    assert await asyncio.to_thread(server.disconnected.wait, 2)


async def test_a_stall_mid_answer_keeps_the_text_and_is_not_retried(
    server: ScriptedServer,
) -> None:
    server.push(Reply([ROLE, chunk({"content": "Half"}), Gate()]))
    provider = fast_provider(server, first_byte_s=5, idle_s=0.3, **SHORT)
    try:
        events, error = await collect(provider)
    finally:
        await provider.aclose()
    assert events[0] == TextChunk("Half")
    assert isinstance(error, ProviderError)
    message = str(error)
    assert "the stream stalled" in message and "nothing for 0.3 s" in message
    assert "stream_idle_timeout_s = 0.3" in message
    assert len(server.requests) == 1


async def test_a_slow_first_token_within_its_allowance_is_waited_for(
    server: ScriptedServer,
) -> None:
    # Longer than the idle limit, shorter than the first-byte allowance: a model loading.
    server.push(Reply([Pause(0.5), ROLE, chunk({"content": "Ready."}), chunk({}, "stop")]))
    provider = fast_provider(server, first_byte_s=3, idle_s=0.2, **SHORT)
    try:
        events, error = await collect(provider)
    finally:
        await provider.aclose()
    assert error is None
    seen = waits(events)
    assert seen and not seen[0].over and seen[-1].over  # the wait is shown, then ended
    assert seen[0].limit == pytest.approx(3, abs=0.05)
    assert events.index(seen[-1]) < events.index(TextChunk("Ready."))
    assert isinstance(events[-1], ReplyDone) and events[-1].message.finish_reason == "stop"


async def test_keep_alives_forever_hit_the_request_limit(server: ScriptedServer) -> None:
    server.push(Reply([step for _ in range(100) for step in (": ping\n\n", Pause(0.05))]))
    provider = fast_provider(server, first_byte_s=5, idle_s=1, attempt_s=0.5, **SHORT)
    started = time.monotonic()
    try:
        _, error = await collect(provider)
    finally:
        await provider.aclose()
    assert time.monotonic() - started < 1.5
    assert isinstance(error, ProviderError)
    assert "took longer than 0.5 s (request_timeout_s = 0.5)" in str(error)


def test_print_mode_gives_up_on_a_silent_server_as_configured(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(Reply([Gate()]))
    started = time.monotonic()
    env = ink_env(INK_FIRST_TOKEN_TIMEOUT_S="1.5")
    done = ink_print(server, workspace, "--no-session", env=env)
    assert done.returncode == 1
    assert time.monotonic() - started < 10
    assert "sent nothing for 1.5 s after the request (first_token_timeout_s = 1.5" in done.stderr
    assert done.stdout == ""


def test_the_timeouts_are_read_from_the_config_file(
    server: ScriptedServer, workspace: Path
) -> None:
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text(
        "first_token_timeout_s = 5\nstream_idle_timeout_s = 0.5\nrequest_timeout_s = 30\n"
    )
    server.push(Reply([ROLE, chunk({"content": "Half"}), Gate()]))
    done = ink_print(server, workspace, "--no-session")
    assert done.returncode == 1
    assert "stream_idle_timeout_s = 0.5" in done.stderr
    assert done.stdout == "Half\n"


async def test_print_mode_says_it_is_waiting_on_stderr_only(
    server: ScriptedServer, workspace: Path
) -> None:
    # The renderer `ink -p` uses, on the events of a real run; its thresholds shortened.
    server.push(
        Reply([ROLE, chunk({"content": "Hel"}), Pause(0.9), chunk({"content": "lo"}), DONE])
    )
    controller, _ = make_controller(server, workspace)
    controller.provider = fast_provider(server, first_byte_s=5, idle_s=5, **SHORT)
    out, err = io.StringIO(), io.StringIO()
    controller.bus.subscribe(PrintRenderer(out, err, waiting_first_s=0.3, waiting_every_s=0.4))
    try:
        controller.submit("hello")
        await controller.wait_idle()
    finally:
        await controller.aclose()
    lines = [line for line in err.getvalue().splitlines() if "waiting" in line]
    assert len(lines) == 2  # at 0.3 s into the silence, then 0.4 s later
    assert all(
        re.fullmatch(r"ink: waiting for the server \(\d s; gives up at 5 s\)", x) for x in lines
    )
    assert out.getvalue() == "Hello\n"  # the answer's text untouched by the notices


async def test_the_waiting_events_reach_the_bus(server: ScriptedServer, workspace: Path) -> None:
    server.push(Reply([Pause(0.4), ROLE, chunk({"content": "ok"}), chunk({}, "stop")]))
    controller, recorder = make_controller(server, workspace)
    controller.provider = fast_provider(server, **SHORT)
    try:
        controller.submit("hello")
        await controller.wait_idle()
    finally:
        await controller.aclose()
    seen: list[ServerWaiting] = recorder.of("server_waiting")
    assert len(seen) >= 2 and seen[-1].over and not seen[0].over
    assert all(event.run_id == "run-1" for event in seen)
    assert recorder.of("run_end")[0].stop_reason == "completed"


async def test_an_interrupt_while_the_server_has_not_answered_is_immediate(
    server: ScriptedServer,
) -> None:
    gate = Gate()
    server.push(Reply([chunk({}, finish="stop")], before_headers=gate))
    provider = fast_provider(server, **SHORT)
    abort = AbortController()

    async def consume() -> list[StreamEvent]:
        request = ModelRequest("sys", [UserMessage("hi")])
        return [event async for event in provider.stream(request, abort.signal)]

    task = asyncio.create_task(consume())
    try:
        assert await asyncio.to_thread(gate.reached.wait, 5)
        await asyncio.sleep(0.3)  # a few `Waiting`s have gone out
        abort.abort()
        started = time.monotonic()
        with pytest.raises(AbortError):
            await task
        assert time.monotonic() - started < 0.1
        assert await asyncio.to_thread(server.disconnected.wait, 2)
    finally:
        await provider.aclose()
