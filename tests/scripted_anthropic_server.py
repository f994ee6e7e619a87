"""A loopback server that speaks Anthropic's Messages API stream from a script.

The HTTP plumbing (scripted replies, pauses, gates, drops, recorded requests and headers,
noticing a client's hang-up) is `scripted_server`'s; this module adds the Anthropic event
stream: `message_start`, `content_block_*` with text, thinking (signed) and `tool_use`
blocks whose input arrives as pieces of JSON, `message_delta`, `message_stop`, `ping` and
`error` events, and the API's error bodies.
"""

from __future__ import annotations

import json
from typing import Any

from tests.scripted_server import Gate, Reply, ScriptedServer, Step

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYmzTeStw"


class ScriptedAnthropicServer(ScriptedServer):
    @property
    def base_url(self) -> str:
        # The API's root, as configured for Anthropic; the client adds /v1/messages.
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"


def event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"


def message_start(input_tokens: int = 25, cache_read: int = 0, cache_write: int = 0) -> str:
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }
    message = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "usage": usage,
    }
    return event("message_start", {"message": message})


def block_start(index: int, block: dict[str, Any]) -> str:
    return event("content_block_start", {"index": index, "content_block": block})


def delta(index: int, body: dict[str, Any]) -> str:
    return event("content_block_delta", {"index": index, "delta": body})


def block_stop(index: int) -> str:
    return event("content_block_stop", {"index": index})


def message_end(stop_reason: str = "end_turn", output_tokens: int = 12) -> list[Step]:
    return [
        event(
            "message_delta",
            {
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        event("message_stop", {}),
    ]


def split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def text_blocks(index: int, text: str, pieces: int = 3, gate: Gate | None = None) -> list[Step]:
    steps: list[Step] = [block_start(index, {"type": "text", "text": ""})]
    for number, part in enumerate(split(text, pieces)):
        steps.append(delta(index, {"type": "text_delta", "text": part}))
        if number == 0 and gate is not None:
            steps.append(gate)
    steps.append(block_stop(index))
    return steps


def thinking_blocks(index: int, thinking: str, signature: str = SIGNATURE) -> list[Step]:
    steps: list[Step] = [block_start(index, {"type": "thinking", "thinking": ""})]
    steps += [delta(index, {"type": "thinking_delta", "thinking": p}) for p in split(thinking, 2)]
    half = len(signature) // 2
    steps.append(delta(index, {"type": "signature_delta", "signature": signature[:half]}))
    steps.append(delta(index, {"type": "signature_delta", "signature": signature[half:]}))
    steps.append(block_stop(index))
    return steps


def tool_blocks(index: int, call_id: str, name: str, args: dict[str, Any]) -> list[Step]:
    """A tool_use block whose input JSON arrives in three pieces."""
    steps: list[Step] = [
        block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})
    ]
    for part in split(json.dumps(args), 3):
        steps.append(delta(index, {"type": "input_json_delta", "partial_json": part}))
    steps.append(block_stop(index))
    return steps


def text_reply(
    text: str,
    *,
    thinking: str = "",
    gate: Gate | None = None,
    cache_read: int = 0,
    cache_write: int = 0,
) -> Reply:
    steps: list[Step] = [message_start(cache_read=cache_read, cache_write=cache_write)]
    steps.append(event("ping", {}))
    index = 0
    if thinking:
        steps += thinking_blocks(index, thinking)
        index += 1
    steps += text_blocks(index, text, gate=gate)
    steps += message_end("end_turn")
    return Reply(steps)


def tool_reply(
    calls: list[tuple[str, dict[str, Any], str]], *, text: str = "", thinking: str = ""
) -> Reply:
    """A reply that asks for tools; each call is (name, args, id)."""
    steps: list[Step] = [message_start()]
    index = 0
    if thinking:
        steps += thinking_blocks(index, thinking)
        index += 1
    if text:
        steps += text_blocks(index, text)
        index += 1
    for name, args, call_id in calls:
        steps += tool_blocks(index, call_id, name, args)
        index += 1
    steps += message_end("tool_use")
    return Reply(steps)


def error_body(kind: str, message: str) -> str:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}})


def error_reply(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> Reply:
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return Reply([error_body(kind, message)], status=status, headers=all_headers)


def error_event(kind: str, message: str) -> str:
    return event("error", {"error": {"type": kind, "message": message}})


def unstarted_reply(index: int, body: dict[str, Any], stop_reason: str = "end_turn") -> Reply:
    """A reply whose one delta names a block no `content_block_start` opened (issue 20,
    item 11: a proxy that drops the start events)."""
    steps: list[Step] = [message_start(), delta(index, body), block_stop(index)]
    steps += message_end(stop_reason)
    return Reply(steps)
