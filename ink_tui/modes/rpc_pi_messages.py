"""pi's message shapes (its docs/message-types.md), built from ink's public values.

The pi dialect's events (`rpc_pi_events`) and commands (`rpc_pi_commands`) both hand
messages out, so the shapes live here once: `user_message`, `assistant_message`,
`tool_result_message`, and `agent_messages` for a whole history (`get_messages`).

What does not carry over, and why (docs/rpc.md, "pi's dialect"):

- ink keeps no per-message time: `timestamp` is when the message was handed out.
- ink's usage has no cache writes and no cost: those are 0. `input` counts the tokens
  not read from the cache (as pi's own OpenAI provider counts them).
- `api` is the wire protocol ink spoke ("openai-completions", "anthropic-messages"),
  `provider` is "ink" (ink has one configured endpoint, not pi's provider registry).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

PiMessage = dict[str, Any]

# ink's finish reasons as pi's `stopReason`.
_STOP_REASONS = {
    "stop": "stop",
    "tool_calls": "toolUse",
    "length": "length",
    "aborted": "aborted",
    "content_filter": "error",
    "unknown": "stop",
}


def now_ms() -> int:
    return int(time.time() * 1000)


def pi_usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """ink's `UsageInfo` as pi's `Usage`."""
    usage = usage or {}
    prompt = int(usage.get("input_tokens", 0))
    cached = int(usage.get("cached_tokens", 0))
    output = int(usage.get("output_tokens", 0))
    return {
        "input": max(prompt - cached, 0),
        "output": output,
        "cacheRead": cached,
        "cacheWrite": 0,
        "reasoning": int(usage.get("reasoning_tokens", 0)),
        "totalTokens": prompt + output,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def user_message(text: str, *, source: str = "user", custom_type: str | None = None) -> PiMessage:
    """A user's message; one an extension injected is pi's `custom` message, so that
    it is never passed off as the user's words (pi's `CustomMessage` is the same idea)."""
    if source != "user":
        return {
            "role": "custom",
            "customType": custom_type or source,
            "content": text,
            "display": True,
            "details": {"source": source},
            "timestamp": now_ms(),
        }
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": now_ms()}


def tool_call_block(call: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "toolCall",
        "id": call["id"],
        "name": call["name"],
        "arguments": call.get("arguments") or {},
    }


def assistant_message(
    message: Mapping[str, Any],
    *,
    api: str,
    content: list[dict[str, Any]] | None = None,
    error: str | None = None,
) -> PiMessage:
    """ink's `AssistantMessageInfo` as pi's `AssistantMessage`; `content` is the blocks
    as they streamed (thinking and text in their order), else built from the message."""
    if content is None:
        content = []
        if message.get("thinking"):
            content.append({"type": "thinking", "thinking": message["thinking"]})
        if message.get("text"):
            content.append({"type": "text", "text": message["text"]})
        content.extend(tool_call_block(c) for c in message.get("tool_calls") or [])
    pi: PiMessage = {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": "ink",
        "model": message.get("model", ""),
        "usage": pi_usage(message.get("usage")),
        "stopReason": "error"
        if error
        else _STOP_REASONS.get(message.get("finish_reason", ""), "stop"),
        "timestamp": now_ms(),
    }
    if error:
        pi["errorMessage"] = error
    return pi


def tool_result(content: str) -> dict[str, Any]:
    """A tool's result as pi's tools return one (`AgentToolResult`)."""
    return {"content": [{"type": "text", "text": content}], "details": {}}


def tool_result_message(call_id: str, tool_name: str, content: str, is_error: bool) -> PiMessage:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool_name,
        "content": [{"type": "text", "text": content}],
        "isError": is_error,
        "timestamp": now_ms(),
    }


def tool_call_json(call: Mapping[str, Any]) -> str:
    """The arguments as the serialized text pi's `toolcall_delta` carries."""
    return json.dumps(call.get("arguments") or {}, ensure_ascii=False)


def agent_messages(history: list[Mapping[str, Any]], *, api: str) -> list[PiMessage]:
    """A whole conversation (`AgentSession.messages`) as pi's `AgentMessage` list; a
    compaction's summary is pi's `compactionSummary`."""
    out: list[PiMessage] = []
    for message in history:
        role = message.get("role")
        if role == "user":
            if message.get("kind") == "summary":
                out.append(
                    {
                        "role": "compactionSummary",
                        "summary": message.get("content", ""),
                        "tokensBefore": 0,
                        "timestamp": now_ms(),
                    }
                )
                continue
            pi = user_message(
                str(message.get("content", "")),
                source=str(message.get("source") or "user"),
                custom_type=message.get("custom_type"),
            )
            if message.get("entry_id"):
                pi["entryId"] = message["entry_id"]  # ink's addition: what fork takes
            out.append(pi)
        elif role == "assistant":
            out.append(assistant_message(message, api=api))
        elif role == "tool":
            out.append(
                tool_result_message(
                    str(message.get("call_id", "")),
                    str(message.get("tool_name", "")),
                    str(message.get("content", "")),
                    bool(message.get("is_error")),
                )
            )
    return out


def provider_api(provider: object) -> str:
    """The wire protocol a provider speaks, in pi's names for it."""
    from ink_tui.providers.anthropic import AnthropicProvider

    return "anthropic-messages" if isinstance(provider, AnthropicProvider) else "openai-completions"
