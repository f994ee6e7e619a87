"""A secret the model streams in pieces does not leave `ink serve` in pieces.

Masking works on whole strings; a model's answer comes as deltas of a few characters.
The projection holds back the end of a delta that may begin a secret and sends it with
the next (`control/held_text.py`, `serve/straddle.py`). Held to it here:

- for any text of words and known secrets cut anywhere into deltas, the deltas sent,
  joined as a client joins them, are the masked whole text: no secret, nothing lost
  (Hypothesis);
- a PEM private key streamed in small deltas goes out as its BEGIN and END lines around
  the mask, and the text after it streams on at once;
- a Bearer token and an Authorization header's value, cut anywhere, are masked;
- a held end goes out before the event that follows it (a tool call's start);
- through `ink serve` (uvicorn on loopback, the model a real HTTP server that holds its
  stream between pieces): the configured key and an env secret, each cut in two by the
  network, reach no SSE client and no logged event, and the joined deltas equal the
  final text.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink_tui.control.held_text import HeldText
from ink_tui.control.public_events import PublicProjection
from ink_tui.core.events import MessageEnd, RunStart, TextDelta, ToolStart
from ink_tui.core.messages import AssistantMessage, ToolCall
from ink_tui.serve.redact import Redactor
from ink_tui.serve.straddle import straddling
from tests.scripted_server import Gate, Reply, ScriptedServer, chunk, usage_chunk
from tests.serve_helpers import isolated_store, read_sse, serve, settled

SECRETS = ["sk-proj-abc123XYZ", "sk-pro", "hunter2hunter2", "abcabcab"]
WORDS = ["sk", "-", "proj", "abc", "123", "hunter", "2", "the", " ", "\n", "x", "s", "a"]


def stream(redactor: Redactor, pieces: list[str]) -> list[str]:
    """What goes out for each piece, then what the stream's end releases."""
    held = HeldText(redactor.text, redactor.straddling)
    sent = [held.take((None, "text"), piece) for piece in pieces]
    sent += [text for _, text in held.release(None)]
    return sent


def cut(text: str, points: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=400, deadline=None)
@given(
    parts=st.lists(st.sampled_from(WORDS + SECRETS), min_size=1, max_size=30),
    points=st.lists(st.integers(min_value=0, max_value=400), max_size=40),
)
def test_streamed_text_cut_anywhere_goes_out_masked_and_whole(
    parts: list[str], points: list[int]
) -> None:
    redactor = Redactor(SECRETS)
    text = "".join(parts)
    sent = stream(redactor, cut(text, points))
    joined = "".join(sent)
    assert joined == redactor.text(text)
    for secret in SECRETS:
        assert secret not in joined


def test_only_an_end_that_may_begin_a_secret_is_held() -> None:
    text = "The parser reads each line once, and keeps only what it cannot finish: sk-proj"
    for n in range(len(text) + 1):
        held = straddling(text[:n], SECRETS)
        end = text[n - held : n]
        assert held == 0 or any(s.startswith(end) and s != end for s in SECRETS), end
    assert straddling("The parser read", SECRETS) == 0
    assert straddling("The parser reads", SECRETS) == 1  # the "s" of "sk-pro"
    assert straddling("and keeps only what it cannot finish: sk-pr", SECRETS) == len("sk-pr")


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMgh"
    "\n-----END RSA PRIVATE KEY-----"
)


def test_a_private_key_streamed_in_small_deltas_is_masked_and_what_follows_streams_on() -> None:
    redactor = Redactor([])
    after = "\nKeep it out of the repository, and rotate it now."
    pieces = cut(f"Here it is:\n{PEM}{after}", list(range(0, 400, 3)))
    held = HeldText(redactor.text, redactor.straddling)
    sent = [held.take((None, "text"), piece) for piece in pieces]
    joined = "".join(sent)
    assert "MIIEow" not in joined and "gizskuemMgh" not in joined
    assert "-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----" in joined
    # The text after the key went out as it came, not at the stream's end.
    assert joined.endswith("rotate it now.")
    assert held.release(None) == []


@pytest.mark.parametrize(
    "line",
    [
        "curl -H 'Authorization: Bearer abcdef0123456789xyz' https://api.example",
        "Authorization: token ghp_abcdefghijklmnop0123 was used",
        "send it as bearer abcdefghijklmnop0123456 and go",
    ],
)
def test_a_token_cut_anywhere_is_masked(line: str) -> None:
    redactor = Redactor([])
    for step in (1, 2, 3, 5):
        joined = "".join(stream(redactor, cut(line, list(range(0, len(line), step)))))
        assert joined == redactor.text(line), step
        assert "0123" not in joined


def test_a_held_end_goes_out_before_the_next_event() -> None:
    redactor = Redactor(SECRETS)
    projection = PublicProjection("s1", redact_text=redactor.text, hold_text=redactor.straddling)
    events = projection.project(RunStart(run_id="r1"))
    for piece in ("I will use s", "k-pr", "o"):
        events += projection.project(TextDelta(text=piece, run_id="r1"))
    events += projection.project(
        ToolStart(call=ToolCall(id="c1", name="read", arguments={}), run_id="r1")
    )
    kinds = [e["type"] for e in events]
    deltas = [e["delta"]["text"] for e in events if e["type"] == "message_update"]
    # "sk-pro" is a secret of its own; it could still grow into "sk-proj-…": held.
    assert deltas == ["I will use ", "***"]
    assert kinds.index("tool_execution_start") > max(
        i for i, k in enumerate(kinds) if k == "message_update"
    )
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs)
    end = projection.project(
        MessageEnd(message=AssistantMessage(text="I will use sk-pro"), run_id="r1")
    )
    assert end[-1]["message"]["text"] == "I will use ***"


API_KEY = "sk-configured-abcdef123456"
WITHIN = 30.0
ENV_SECRET = "supersecret123"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
    monkeypatch.setenv("FOO_TOKEN", ENV_SECRET)
    yield home


async def _logged_text(logged: list[dict[str, Any]], expected: str) -> None:
    """Until the deltas the session logged join to `expected`."""
    async with asyncio.timeout(WITHIN):
        while True:
            text = "".join(e["delta"]["text"] for e in logged if e["type"] == "message_update")
            if text == expected:
                return
            assert expected.startswith(text), text
            await asyncio.sleep(0.01)


async def test_secrets_streamed_across_deltas_reach_no_client(
    server: ScriptedServer, workspace: Path, store: Path
) -> None:
    # Each secret cut in two by a network read: the server holds the stream at each gate
    # until the session has logged what came before it.
    pieces = [
        "The key is sk-conf",
        "igured-abc",
        "def123456 and the token super",
        "secret123, both from the .env file.",
    ]
    gates = [Gate() for _ in pieces[1:]]
    steps: list[Any] = [chunk({"role": "assistant", "content": ""})]
    for piece, gate in zip(pieces, [*gates, None], strict=True):
        steps.append(chunk({"content": piece}))
        if gate is not None:
            steps.append(gate)
    server.push(Reply([*steps, chunk({}, finish="stop"), usage_chunk(), "data: [DONE]\n\n"]))
    raw: list[str] = []
    logged: list[dict[str, Any]] = []
    async with serve(server, workspace, api_key=API_KEY) as srv:
        sid = await srv.new_session()
        # Each event as the session logs it, before a stream merges the deltas that wait
        # for a client into one (and masks them again together).
        served = srv.registry.get(sid)
        assert served is not None
        append = served.log.append

        def log(event: dict[str, Any]) -> None:
            logged.append(event)
            append(event)

        served.log.append = log  # type: ignore[method-assign]
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "show me"}
        ) as response:
            reading = asyncio.ensure_future(read_sse(response, settled, raw=raw))
            # "sk-conf" may begin the key: held. Then the key, whole, goes masked, and
            # "super" may begin the env secret: held.
            await _logged_text(logged, "The key is ")
            gates[0].open()
            gates[1].open()
            await _logged_text(logged, "The key is *** and the token ")
            gates[2].open()
            events = [e.data for e in await reading]
    final = next(e for e in events if e["type"] == "message_end")["message"]["text"]
    assert final == "The key is *** and the token ***, both from the .env file."
    for sent_events in (events, logged):
        updates = [e["delta"]["text"] for e in sent_events if e["type"] == "message_update"]
        assert "".join(updates) == final
    sent = "\n".join([*raw, *map(str, logged)])
    for secret in (API_KEY, ENV_SECRET):
        assert secret not in sent
    for fragment in ("sk-conf", "igured", "def123456", "super", "secret123"):
        assert fragment not in sent
