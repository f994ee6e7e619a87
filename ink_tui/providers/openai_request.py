"""The request body sent to an OpenAI-compatible `/chat/completions` endpoint.

`build_body` turns a `ModelRequest` into the JSON body of a streamed request, and
`encode_messages` turns the conversation history into the wire format's messages.
"""

from __future__ import annotations

from typing import Any

from ink_tui.core.messages import ToolResultMessage, UserMessage
from ink_tui.core.provider_api import ModelRequest
from ink_tui.providers.tool_arguments import wire_arguments


def build_body(model: str, request: ModelRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": encode_messages(request),
        "stream": True,
        # Without this most servers send no token counts at all when streaming.
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.parameters,
                },
            }
            for spec in request.tools
        ]
    if request.max_output_tokens is not None:
        body["max_tokens"] = request.max_output_tokens
    return body


def encode_messages(request: ModelRequest) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    if request.system_prompt:
        wire.append({"role": "system", "content": request.system_prompt})
    for message in request.messages:
        if isinstance(message, UserMessage):
            # An extension's message says whose it is (never passed off as the user's).
            wire.append({"role": "user", "content": message.model_text()})
        elif isinstance(message, ToolResultMessage):
            wire.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
            )
        else:
            # Thinking is not sent back: several servers reject `reasoning_content` in
            # the history, and the model does not need its own past reasoning. A call
            # without text goes with `""`, never `null`: OpenAI takes both, but
            # llama-cpp-python's server refuses `null` (HTTP 500), and chat templates
            # that join the content fail on a missing one.
            entry: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": wire_arguments(
                                call.raw_arguments, call.arguments, call.arguments_error
                            ),
                        },
                    }
                    for call in message.tool_calls
                ]
            wire.append(entry)
    return wire
