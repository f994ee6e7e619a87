"""The request body sent to Anthropic's Messages API (`POST /v1/messages`).

Our history maps onto Anthropic's turns: a user message is a user turn with a text
block; an assistant message is its signed thinking blocks, its text and its `tool_use`
blocks; tool results are `tool_result` blocks in the next user turn. Turns of the same role
that follow each other (the results of a parallel batch, a steer after them) are merged
into one, as the API wants strictly alternating turns.

Prompt caching: `cache_control` marks the system prompt, the last tool and the last two
user turns (at most 4 breakpoints, the API's limit). Each request then reads the prefix the
previous one wrote (its latest user turn is this one's second latest), so a long session
pays full price only for what is new.

Extended thinking: with a budget, `thinking` is enabled and `max_tokens` raised above the
budget. Thinking is left off for a request that continues a tool call whose reply has no
signed thinking (one made by another model, or with thinking off): the API refuses that.
"""

from __future__ import annotations

from typing import Any

from ink_tui.core.messages import AssistantMessage, Message, ToolResultMessage
from ink_tui.core.provider_api import ModelRequest

DEFAULT_MAX_TOKENS = 16_000
# The API's smallest thinking budget; room for the answer is added on top of the budget.
MIN_THINKING_BUDGET = 1024
ANSWER_ROOM = 4096
MAX_CACHE_BREAKPOINTS = 4

_EPHEMERAL = {"type": "ephemeral"}


def build_body(
    model: str, request: ModelRequest, *, thinking_budget: int | None = None
) -> dict[str, Any]:
    max_tokens = request.max_output_tokens or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "stream": True,
        "messages": encode_messages(request.messages),
    }
    breakpoints = 0
    if request.system_prompt:
        body["system"] = [
            {"type": "text", "text": request.system_prompt, "cache_control": dict(_EPHEMERAL)}
        ]
        breakpoints += 1
    if request.tools:
        tools: list[dict[str, Any]] = [
            {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
            for spec in request.tools
        ]
        tools[-1]["cache_control"] = dict(_EPHEMERAL)  # caches every tool before it too
        body["tools"] = tools
        breakpoints += 1
    _mark_latest_turns(body["messages"], MAX_CACHE_BREAKPOINTS - breakpoints)
    if thinking_budget and _thinking_allowed(request.messages):
        budget = max(thinking_budget, MIN_THINKING_BUDGET)
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = max(max_tokens, budget + ANSWER_ROOM)
    return body


def encode_messages(messages: list[Message]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            role, blocks = "assistant", _assistant_blocks(message)
        elif isinstance(message, ToolResultMessage):
            role, blocks = "user", [_tool_result(message)]
        else:
            # An extension's message says whose it is (never passed off as the user's).
            text = message.model_text()
            role, blocks = "user", [{"type": "text", "text": text}] if text.strip() else []
        if not blocks:
            continue  # the API refuses empty turns and empty text blocks
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            # Within a user turn, tool results must come before any text.
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return turns


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.thinking_blocks:
        # Unsigned thinking (a reply cut short) cannot be sent back; the API checks.
        if block.redacted:
            blocks.append({"type": "redacted_thinking", "data": block.text})
        elif block.signature:
            blocks.append(
                {"type": "thinking", "thinking": block.text, "signature": block.signature}
            )
    if message.text.strip():
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                # Arguments that did not parse were refused with an error result; the
                # API only takes an object here.
                "input": call.arguments if call.arguments_error is None else {},
            }
        )
    return blocks


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.call_id}
    if message.content:
        block["content"] = message.content
    if message.is_error:
        block["is_error"] = True
    return block


def _mark_latest_turns(turns: list[dict[str, Any]], room: int) -> None:
    """`cache_control` on the last block of the last (at most two) user turns."""
    marked = 0
    for turn in reversed(turns):
        if marked >= min(room, 2):
            return
        if turn["role"] == "user":
            turn["content"][-1]["cache_control"] = dict(_EPHEMERAL)
            marked += 1


def _thinking_allowed(messages: list[Message]) -> bool:
    """False when the request continues a tool call whose reply carries no signed thinking."""
    answered = False
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            answered = True
        elif isinstance(message, AssistantMessage):
            if not (answered and message.tool_calls):
                return True
            return any(block.signature or block.redacted for block in message.thinking_blocks)
    return True
