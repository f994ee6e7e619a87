"""pi's RPC dialect, events: ink's public events as pi's `RpcClient` reads them.

What it promises a pi client (`ink --mode rpc --rpc-dialect pi`; docs/rpc.md, "pi's
dialect"):

1. One path. These events are projected from the public events
   (`control/public_events.py`), which every front end receives; nothing here listens
   to the run itself. One `PiEventProjection` per open session, fed in order.
2. The run, as pi tells it: `agent_start`, `turn_start`, `message_start` /
   `message_end` for each message (the user's, the model's, each tool result),
   `message_update` with `assistantMessageEvent` (`text_start` / `text_delta` /
   `text_end`, the same for thinking, and `toolcall_start` / `toolcall_delta` /
   `toolcall_end` once the reply is complete: ink streams no tool-call deltas to front
   ends), `tool_execution_start` / `tool_execution_end` (`toolCallId`, `toolName`,
   `args`, `result`, `isError`, `durationMs`), `turn_end {message, toolResults}`,
   `agent_end {messages, willRetry}` once per attempt, and `agent_settled {aborted}`
   exactly once per prompt: the one "done", as in ink.
3. `queue_update {steering, followUp}`: the whole queue, texts by mode.
4. `auto_retry_start/end` and `compaction_start/end` in pi's fields.
5. Runs pi does not have are not runs here: a shell line (the `bash` command, or a
   `!` line) and a manual compaction emit no `agent_*`/`turn_*` events and no
   `agent_settled` of their own (pi's `bash` and `compact` answer in their response);
   a shell line's output comes as pi's `bash_execution_update`, whole, at its end.
6. ink's extras keep ink's event names with pi-style camelCase fields, so a pi client
   that does not know them skips them: `approval_request` / `approval_resolved`,
   `subagent_start` / `subagent_end`, `input_restored`, `rewound`, `notice`, `error`,
   `server_waiting`, `jobs_update`. A sub-agent's own text and turns are not sent (pi
   would take them for the main agent's); its tool calls are, with pi's
   `parentToolCallId` naming the `task` call they run under.
7. Not sent: `state_change` (`get_state` has `isStreaming`), `tool_execution_running` /
   `_settled` (display hints), `tool_execution_update` (ink's tools report no partial
   results).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ink_tui.modes.rpc_pi_bash import shown_output
from ink_tui.modes.rpc_pi_messages import (
    PiMessage,
    assistant_message,
    now_ms,
    pi_usage,
    tool_call_block,
    tool_call_json,
    tool_result,
    tool_result_message,
    user_message,
)

PiEvent = dict[str, Any]

# Runs that are no run in pi's terms (5. above).
_SIDE_RUNS = frozenset({"shell", "compact"})


class PiEventProjection:
    """Public events in, pi's events out (`project`); `api()` names the wire protocol
    for the assistant messages (it changes with `set_model`)."""

    def __init__(self, api: Callable[[], str]) -> None:
        self._api = api
        # The run now: a side run (shell line, compaction) shows nothing of itself.
        self._side_run = False
        self._shell_run = False
        # Whether an agent run took part in this busy stretch (for agent_settled).
        self._agent_ran = False
        self._aborted = False
        # The reply being streamed: its blocks, whether the last one has ended, and
        # whether message_start went out.
        self._blocks: list[dict[str, Any]] = []
        self._block_open = False
        self._started = False
        # This turn's reply and tool results (turn_end), this attempt's messages (agent_end).
        self._turn_message: PiMessage | None = None
        self._turn_results: list[PiMessage] = []
        self._run_messages: list[PiMessage] = []
        # Within an agent run, between turns: ink tells of the user's message (the
        # prompt, a steer taken) before the turn it opens, pi within it; held till then.
        self._in_run = False
        self._in_turn = False
        self._held: list[PiEvent] = []

    def project(self, event: Mapping[str, Any]) -> list[PiEvent]:
        if "agent_id" in event:
            return self._subagent(event)
        kind = event["type"]
        if kind == "agent_start":
            self._side_run = event.get("kind") in _SIDE_RUNS
            self._shell_run = event.get("kind") == "shell"
            if self._side_run:
                return []
            self._agent_ran = True
            self._run_messages = []
            self._in_run, self._in_turn = True, False
            return [{"type": "agent_start"}]
        if kind == "agent_settled":
            return self._settled(event)
        if kind in ("compaction_start", "compaction_end"):
            return [self._compaction(event)]
        if kind == "queue_update":
            return [_queue_update(event)]
        if self._side_run and kind in _RUN_EVENTS:
            if self._shell_run and kind == "tool_execution_end":
                # pi's event for a direct shell command's output: here whole, at its end.
                output = shown_output(event["content"], truncated=True)
                return [{"type": "bash_execution_update", "delta": output}]
            return []
        handler = _HANDLERS.get(kind)
        return handler(self, event) if handler is not None else []

    # -- the run ---------------------------------------------------------------------

    def _turn_start(self, event: Mapping[str, Any]) -> list[PiEvent]:
        self._turn_message = None
        self._turn_results = []
        self._in_turn = True
        held, self._held = self._held, []
        return [{"type": "turn_start"}, *held]

    def _user_message(self, event: Mapping[str, Any]) -> list[PiEvent]:
        message = user_message(
            event["text"],
            source=event.get("source") or "user",
            custom_type=event.get("custom_type"),
        )
        if event.get("entry_id"):
            message["entryId"] = event["entry_id"]
        self._run_messages.append(message)
        out: list[PiEvent] = [
            {"type": "message_start", "message": message},
            {"type": "message_end", "message": message},
        ]
        if self._in_run and not self._in_turn:
            self._held.extend(out)
            return []
        return out

    def _delta(self, event: Mapping[str, Any]) -> list[PiEvent]:
        out = self._open_reply()
        delta = event["delta"]
        kind, text = delta["type"], delta["text"]
        block = self._blocks[-1] if self._blocks else None
        if block is None or block["type"] != kind:
            out.extend(self._close_block())
            block = (
                {"type": "text", "text": ""}
                if kind == "text"
                else {"type": "thinking", "thinking": ""}
            )
            self._blocks.append(block)
            self._block_open = True
            out.append(self._update({"type": f"{kind}_start"}))
        block["text" if kind == "text" else "thinking"] += text
        out.append(self._update({"type": f"{kind}_delta", "delta": text}))
        return out

    def _message_end(self, event: Mapping[str, Any]) -> list[PiEvent]:
        out = self._open_reply()
        out.extend(self._close_block())
        info = event["message"]
        content: list[dict[str, Any]] | None = None
        # What streamed, unless it is not the message's text (cannot happen today: ink
        # retries only before anything streamed): then it is rebuilt whole.
        if "".join(b.get("text", "") for b in self._blocks) == info.get("text", ""):
            content = list(self._blocks)
            for call in info.get("tool_calls") or []:
                content.append(tool_call_block(call))
                out.extend(self._tool_call_updates(call, len(content) - 1))
        message = assistant_message(info, api=self._api(), content=content)
        self._finish_reply()
        self._turn_message = message
        self._run_messages.append(message)
        out.append({"type": "message_end", "message": message})
        return out

    def _tool_call_updates(self, call: Mapping[str, Any], index: int) -> list[PiEvent]:
        start = {"type": "toolcall_start", "id": call["id"], "toolName": call["name"]}
        delta = {"type": "toolcall_delta", "delta": tool_call_json(call)}
        end = {"type": "toolcall_end", "toolCall": tool_call_block(call)}
        return [self._update(start, index), self._update(delta, index), self._update(end, index)]

    def _tool_start(self, event: Mapping[str, Any]) -> list[PiEvent]:
        return [
            {
                "type": "tool_execution_start",
                "toolCallId": event["call_id"],
                "toolName": event["tool_name"],
                "args": event["arguments"],
            }
        ]

    def _tool_end(self, event: Mapping[str, Any]) -> list[PiEvent]:
        call_id, name = event["call_id"], event["tool_name"]
        message = tool_result_message(call_id, name, event["content"], event["is_error"])
        self._turn_results.append(message)
        self._run_messages.append(message)
        return [
            self._tool_end_event(event),
            {"type": "message_start", "message": message},
            {"type": "message_end", "message": message},
        ]

    def _tool_end_event(self, event: Mapping[str, Any]) -> PiEvent:
        end: PiEvent = {
            "type": "tool_execution_end",
            "toolCallId": event["call_id"],
            "toolName": event["tool_name"],
            "result": tool_result(event["content"]),
            "isError": event["is_error"],
        }
        if event.get("duration_s"):
            end["durationMs"] = round(event["duration_s"] * 1000)
        return end

    def _turn_end(self, event: Mapping[str, Any]) -> list[PiEvent]:
        out = self._cut_reply(None)
        self._in_turn = False
        message = self._turn_message or _empty_reply(self._api())
        return [*out, {"type": "turn_end", "message": message, "toolResults": self._turn_results}]

    def _agent_end(self, event: Mapping[str, Any]) -> list[PiEvent]:
        error = event.get("error")
        out = self._cut_reply(error)
        # A message held for a turn that never came (the run ended first) goes out now.
        out.extend(self._held)
        self._held = []
        stop = event.get("stop_reason")
        if not event["will_retry"]:
            self._in_run = False
            self._aborted = stop == "aborted"
        end: PiEvent = {
            "type": "agent_end",
            "messages": self._run_messages,
            "willRetry": event["will_retry"],
            # ink's additions: how the attempt ended, in its words.
            "stopReason": stop,
        }
        if error:
            end["errorMessage"] = error
        if "usage" in event:
            end["usage"] = pi_usage(event["usage"])
        self._run_messages = []
        return [*out, end]

    def _settled(self, event: Mapping[str, Any]) -> list[PiEvent]:
        ran, self._agent_ran = self._agent_ran, False
        self._side_run = False
        if not ran:
            return []  # a shell line's or a compaction's settling: no prompt ended
        settled: PiEvent = {
            "type": "agent_settled",
            "aborted": self._aborted or event.get("stop_reason") == "aborted",
        }
        # ink's additions: what the settle handed back (queued input, after an abort).
        if event.get("restored_count"):
            settled["restoredText"] = event.get("restored_text")
            settled["restoredCount"] = event["restored_count"]
        if event.get("error"):
            settled["errorMessage"] = event["error"]
        self._aborted = False
        return [settled]

    def _retry_start(self, event: Mapping[str, Any]) -> list[PiEvent]:
        # pi counts retries (1 = the first), ink counts attempts (2 = the first retry).
        return [
            {
                "type": "auto_retry_start",
                "attempt": event["attempt"] - 1,
                "maxAttempts": max(event["max_attempts"] - 1, 0),
                "delayMs": round(event["delay_s"] * 1000),
                "errorMessage": event["reason"],
            }
        ]

    def _retry_end(self, event: Mapping[str, Any]) -> list[PiEvent]:
        end: PiEvent = {
            "type": "auto_retry_end",
            "success": event["success"],
            "attempt": max(event["attempt"] - 1, 0),
        }
        if not event["success"]:
            end["finalError"] = "the retries did not succeed"
        return [end]

    def _compaction(self, event: Mapping[str, Any]) -> PiEvent:
        if event["type"] == "compaction_start":
            return {
                "type": "compaction_start",
                "reason": event["reason"],
                "tokensBefore": event["tokens_before"],
                "contextWindow": event["context_window"],
            }
        end: PiEvent = {
            "type": "compaction_end",
            "reason": event["reason"],
            "result": compaction_result(event) if event["done"] else None,
            "aborted": event["aborted"],
            "willRetry": event["reason"] == "overflow" and event["done"],
        }
        if event.get("error"):
            end["errorMessage"] = event["error"]
        return end

    # -- the reply being streamed --------------------------------------------------------

    def _update(self, inner: dict[str, Any], index: int | None = None) -> PiEvent:
        if index is None:
            index = max(len(self._blocks) - 1, 0)
        return {
            "type": "message_update",
            # ink reports usage with the whole reply only (message_end).
            "usage": pi_usage(None),
            "assistantMessageEvent": {"type": inner.pop("type"), "contentIndex": index, **inner},
        }

    def _open_reply(self) -> list[PiEvent]:
        if self._started:
            return []
        self._started = True
        self._blocks = []
        partial = {
            "role": "assistant",
            "content": [],
            "api": self._api(),
            "provider": "ink",
            "model": "",
            "usage": pi_usage(None),
            "stopReason": "pending",
            "timestamp": now_ms(),
        }
        return [{"type": "message_start", "message": partial}]

    def _close_block(self) -> list[PiEvent]:
        if not self._block_open:
            return []
        self._block_open = False
        block = self._blocks[-1]
        kind = block["type"]
        text = block["text"] if kind == "text" else block["thinking"]
        return [self._update({"type": f"{kind}_end", "content": text})]

    def _finish_reply(self) -> None:
        self._blocks = []
        self._block_open = False
        self._started = False

    def _cut_reply(self, error: str | None) -> list[PiEvent]:
        """A reply that began and never ended (an abort, a failure mid-stream): its end,
        with what had streamed, so that every message_start has its message_end."""
        if not self._started:
            return []
        out = self._close_block()
        content = list(self._blocks)
        info = {"text": "".join(b.get("text", "") for b in content), "finish_reason": "aborted"}
        message = assistant_message(info, api=self._api(), content=content, error=error)
        self._finish_reply()
        self._turn_message = message
        self._run_messages.append(message)
        out.append({"type": "message_end", "message": message})
        return out

    # -- sub-agents (6. above) ------------------------------------------------------------

    def _subagent(self, event: Mapping[str, Any]) -> list[PiEvent]:
        kind = event["type"]
        parent = {"parentToolCallId": event.get("parent_call_id", "")}
        if kind == "tool_execution_start":
            return [{**e, **parent} for e in self._tool_start(event)]
        if kind == "tool_execution_end":
            # Its result message is the sub-agent's conversation's, not this one's.
            return [{**self._tool_end_event(event), **parent}]
        if kind in ("subagent_start", "subagent_end", "approval_request", "approval_resolved"):
            return [{**_camel(event), "agentId": event["agent_id"], **parent}]
        return []


def compaction_result(event: Mapping[str, Any]) -> dict[str, Any]:
    """pi's `CompactionResult` from ink's `compaction_end`."""
    return {
        "summary": event["summary"],
        # ink names no entry: the summary stands for messages first..end of the whole.
        "firstKeptEntryId": None,
        "tokensBefore": event["tokens_before"],
        "estimatedTokensAfter": event["tokens_after"],
        "details": {"first": event["first"], "end": event["end"]},
    }


def _queue_update(event: Mapping[str, Any]) -> PiEvent:
    entries = event["entries"]
    return {
        "type": "queue_update",
        "steering": [e["text"] for e in entries if e["mode"] == "steer"],
        "followUp": [e["text"] for e in entries if e["mode"] == "follow_up"],
        # ink's additions: the entries themselves, for queue editing by id.
        "entries": [queue_entry(e) for e in entries],
        "paused": event["paused"],
    }


def queue_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": entry["id"],
        "text": entry["text"],
        "mode": "followUp" if entry["mode"] == "follow_up" else "steer",
        "shell": entry.get("shell", False),
        "source": entry.get("source", "user"),
    }


def _empty_reply(api: str) -> PiMessage:
    return assistant_message({"text": "", "finish_reason": "unknown"}, api=api, content=[])


# ink's envelope, which pi's events do not have.
_ENVELOPE = frozenset({"v", "session_id", "seq", "run_id", "agent_id", "parent_call_id"})
# Renamed where pi has a name for the same thing.
_RENAMES = {"call_id": "toolCallId", "arguments": "args", "message": "errorMessage"}


def _camel(event: Mapping[str, Any]) -> PiEvent:
    """An ink event as an ink extension in pi's style: no envelope, camelCase keys."""
    out: PiEvent = {"type": event["type"]}
    for key, value in event.items():
        if key in _ENVELOPE or key == "type":
            continue
        name = _RENAMES.get(key) or _camel_name(key)
        out[name] = value
    return out


def _camel_name(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _extension_error(projection: PiEventProjection, event: Mapping[str, Any]) -> list[PiEvent]:
    # pi's own event: it names the extension by its file, ink by its name.
    return [
        {
            "type": "extension_error",
            "extensionPath": event["extension"],
            "event": event["event"],
            "error": event["error"],
        }
    ]


def _extension(projection: PiEventProjection, event: Mapping[str, Any]) -> list[PiEvent]:
    return [_camel(event)]


# What a side run (a shell line, a compaction) would otherwise show of itself.
_RUN_EVENTS = frozenset(
    {
        "turn_start",
        "user_message",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "turn_end",
        "agent_end",
        "auto_retry_start",
        "auto_retry_end",
    }
)

_HANDLERS: dict[str, Callable[[PiEventProjection, Mapping[str, Any]], list[PiEvent]]] = {
    "turn_start": PiEventProjection._turn_start,
    "user_message": PiEventProjection._user_message,
    "message_update": PiEventProjection._delta,
    "message_end": PiEventProjection._message_end,
    "tool_execution_start": PiEventProjection._tool_start,
    "tool_execution_end": PiEventProjection._tool_end,
    "turn_end": PiEventProjection._turn_end,
    "agent_end": PiEventProjection._agent_end,
    "auto_retry_start": PiEventProjection._retry_start,
    "auto_retry_end": PiEventProjection._retry_end,
    "extension_error": _extension_error,
    **dict.fromkeys(
        (
            "approval_request",
            "approval_resolved",
            "subagent_start",
            "subagent_end",
            "input_restored",
            "rewound",
            "notice",
            "error",
            "server_waiting",
            "jobs_update",
        ),
        _extension,
    ),
}
