"""The lines of a session file as typed values, and their JSON form.

`encode_*` turn values into JSON objects (dicts); `decode_header` / `decode_entry` turn
parsed JSON back, checking every field so that a damaged file is reported as such
(`EntryError` says what is wrong) instead of surfacing later as an odd crash. The file
layout itself (one object per line, header first) is documented in `session_writer`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from ink_tui.core.messages import (
    AssistantMessage,
    StopReason,
    ThinkingBlock,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserKind,
    UserMessage,
)

FORMAT_VERSION = 1


class EntryError(ValueError):
    """A line that is valid JSON but not a valid entry; the text says what is wrong."""


class UnknownEntryType(EntryError):
    """An entry type this version does not know (written by a newer one, perhaps)."""


@dataclass(frozen=True, slots=True)
class SessionHeader:
    id: str
    started: dt.datetime
    workspace: str
    model: str
    version: int = FORMAT_VERSION


@dataclass(slots=True)
class UserEntry:
    message: UserMessage


@dataclass(slots=True)
class AssistantEntry:
    message: AssistantMessage


@dataclass(slots=True)
class ToolResultEntry:
    # Exactly what entered the history.
    message: ToolResultMessage
    # Display only (the UI's tool fold): never sent to the model.
    details: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0


@dataclass(slots=True)
class ModelChangeEntry:
    model: str


@dataclass(slots=True)
class InterruptEntry:
    pass


@dataclass(slots=True)
class ErrorEntry:
    text: str


@dataclass(slots=True)
class CompactionEntry:
    """The conversation was compacted: from here on the model had `summary` in place of
    the messages before `end` (counting the session's messages, user, assistant and tool
    result entries, from 0). `first`..`end` is what this compaction summarised afresh;
    what came before `first` was in an earlier summary, which this one folds in. The
    messages themselves stay in the file."""

    summary: str
    first: int
    end: int
    reason: str = "threshold"
    tokens_before: int = 0
    tokens_after: int = 0


@dataclass(slots=True)
class SubagentEntry:
    """A sub-agent's whole conversation (a `task` call's), written when it ended. Not part
    of the parent's history: the parent has the call and its result; this is for the
    transcript (shown folded under the task row)."""

    agent_id: str
    parent_call_id: str
    description: str
    stop_reason: str
    entries: list[UserEntry | AssistantEntry | ToolResultEntry] = field(default_factory=list)


@dataclass(slots=True)
class CheckpointEntry:
    """The workspace's files were checkpointed (`commit`, in the checkpoint store, see
    ink_tui/checkpoints) before a tool batch that may change them: rewinding files to a
    message restores the first checkpoint after it."""

    commit: str


RewindRestore = Literal["conversation", "files", "both", "undo", "tree"]
REWIND_RESTORES: tuple[str, ...] = get_args(RewindRestore)


@dataclass(slots=True)
class RewindEntry:
    """The user went back. Not a node of the tree: it moves the leaf, which the next
    entry hangs from, to `leaf_id` (None: before the first entry); the entries after it
    stay in the file, a branch that can be returned to.

    `restore` says what went back: "conversation", "files" or "both" to `entry_id` (a
    user message); "undo" the last file restore; "tree" a move to another branch.
    `files_from` is the checkpoint of the files just before they were restored (the
    undo point), `files_to` the one they were restored to, `files` the paths changed."""

    leaf_id: str | None
    restore: RewindRestore
    entry_id: str | None = None
    files_from: str | None = None
    files_to: str | None = None
    files: list[str] = field(default_factory=list)


Entry = (
    UserEntry
    | AssistantEntry
    | ToolResultEntry
    | ModelChangeEntry
    | InterruptEntry
    | ErrorEntry
    | CompactionEntry
    | SubagentEntry
    | CheckpointEntry
    | RewindEntry
)

_USER_KINDS: tuple[str, ...] = get_args(UserKind)
_STOP_REASONS: tuple[str, ...] = get_args(StopReason)


# -- encoding ---------------------------------------------------------------------------


def format_timestamp(moment: dt.datetime) -> str:
    """ISO 8601 in UTC with a `Z`, to the millisecond."""
    utc = moment.astimezone(dt.UTC)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode_header(header: SessionHeader) -> dict[str, Any]:
    return {
        "type": "header",
        "version": header.version,
        "id": header.id,
        "started": format_timestamp(header.started),
        "workspace": header.workspace,
        "model": header.model,
    }


def encode_entry(entry: Entry) -> dict[str, Any]:
    match entry:
        case UserEntry(message=message):
            encoded: dict[str, Any] = {
                "type": "user",
                "kind": message.kind,
                "content": message.content,
            }
            if message.source is not None:
                # Injected by an extension: resuming must keep it marked as such.
                encoded["source"] = message.source
                encoded["custom_type"] = message.custom_type
            return encoded
        case AssistantEntry(message=message):
            return _encode_assistant(message)
        case ToolResultEntry(message=message, details=details, duration_s=duration_s):
            return {
                "type": "tool_result",
                "call_id": message.call_id,
                "tool_name": message.tool_name,
                "content": message.content,
                "is_error": message.is_error,
                "details": details,
                "duration_s": duration_s,
            }
        case ModelChangeEntry(model=model):
            return {"type": "model_change", "model": model}
        case InterruptEntry():
            return {"type": "interrupt"}
        case ErrorEntry(text=text):
            return {"type": "error", "text": text}
        case SubagentEntry():
            return {
                "type": "subagent",
                "agent_id": entry.agent_id,
                "parent_call_id": entry.parent_call_id,
                "description": entry.description,
                "stop_reason": entry.stop_reason,
                "entries": [encode_entry(e) for e in entry.entries],
            }
        case CheckpointEntry(commit=commit):
            return {"type": "checkpoint", "commit": commit}
        case RewindEntry():
            return {
                "type": "rewind",
                "leaf_id": entry.leaf_id,
                "restore": entry.restore,
                "entry_id": entry.entry_id,
                "files_from": entry.files_from,
                "files_to": entry.files_to,
                "files": list(entry.files),
            }
        case CompactionEntry():
            return {
                "type": "compaction",
                "summary": entry.summary,
                "first": entry.first,
                "end": entry.end,
                "reason": entry.reason,
                "tokens_before": entry.tokens_before,
                "tokens_after": entry.tokens_after,
            }
    raise TypeError(f"not a session entry: {entry!r}")


def _encode_assistant(message: AssistantMessage) -> dict[str, Any]:
    usage = message.usage
    encoded: dict[str, Any] = {
        "type": "assistant",
        "text": message.text,
        "thinking": message.thinking,
        "tool_calls": [
            {
                "id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "raw_arguments": call.raw_arguments,
                "arguments_error": call.arguments_error,
            }
            for call in message.tool_calls
        ],
        "finish_reason": message.finish_reason,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "cached_tokens": usage.cached_tokens,
        },
        "model": message.model,
    }
    if message.thinking_blocks:
        # Only where a provider signs its thinking (Anthropic): `ink -c` sends it back.
        encoded["thinking_blocks"] = [
            {"text": block.text, "signature": block.signature, "redacted": block.redacted}
            for block in message.thinking_blocks
        ]
    return encoded


# -- decoding ---------------------------------------------------------------------------


def decode_header(obj: Any) -> SessionHeader:
    fields = _Fields(obj, "the header")
    kind = fields.get("type", str)
    if kind != "header":
        raise EntryError(f"expected the session header first, found a {kind!r} entry")
    version = fields.get("version", int)
    if version > FORMAT_VERSION:
        raise EntryError(
            f"format version {version} was written by a newer ink; this one reads "
            f"version {FORMAT_VERSION}"
        )
    if version < 1:
        raise EntryError(f"format version {version} is not valid")
    started_text = fields.get("started", str)
    try:
        started = dt.datetime.fromisoformat(started_text)
    except ValueError:
        raise EntryError(f"'started' is not an ISO 8601 time: {started_text!r}") from None
    if started.tzinfo is None:
        # The writer always stores UTC; a naive time can only mean UTC too.
        started = started.replace(tzinfo=dt.UTC)
    return SessionHeader(
        id=fields.get("id", str),
        started=started,
        workspace=fields.get("workspace", str),
        model=fields.get("model", str),
        version=version,
    )


def decode_entry(obj: Any) -> Entry:
    kind = _Fields(obj, "the entry").get("type", str)
    fields = _Fields(obj, f"the {kind!r} entry")
    match kind:
        case "user":
            user_kind = cast(UserKind, fields.choice("kind", _USER_KINDS))
            return UserEntry(
                UserMessage(
                    content=fields.get("content", str),
                    kind=user_kind,
                    source=fields.optional("source", str, None),
                    custom_type=fields.optional("custom_type", (str, type(None)), None),
                )
            )
        case "assistant":
            return AssistantEntry(_decode_assistant(fields))
        case "tool_result":
            message = ToolResultMessage(
                call_id=fields.get("call_id", str),
                tool_name=fields.get("tool_name", str),
                content=fields.get("content", str),
                is_error=fields.get("is_error", bool),
            )
            return ToolResultEntry(
                message=message,
                details=fields.optional("details", dict, {}),
                duration_s=float(fields.optional("duration_s", (int, float), 0.0)),
            )
        case "model_change":
            return ModelChangeEntry(fields.get("model", str))
        case "interrupt":
            return InterruptEntry()
        case "error":
            return ErrorEntry(fields.get("text", str))
        case "compaction":
            return _decode_compaction(fields)
        case "subagent":
            return _decode_subagent(fields)
        case "checkpoint":
            return CheckpointEntry(fields.get("commit", str))
        case "rewind":
            return _decode_rewind(fields)
        case "header":
            raise EntryError("a second header in the middle of the session")
    raise UnknownEntryType(f"unknown entry type {kind!r}")


def _decode_assistant(fields: _Fields) -> AssistantMessage:
    calls_raw = fields.optional("tool_calls", list, [])
    calls = [_decode_call(raw, index) for index, raw in enumerate(calls_raw)]
    usage = _Fields(fields.optional("usage", dict, {}), "'usage'")
    return AssistantMessage(
        text=fields.get("text", str),
        thinking=fields.optional("thinking", str, ""),
        tool_calls=calls,
        finish_reason=cast(StopReason, fields.choice("finish_reason", _STOP_REASONS)),
        usage=Usage(
            input_tokens=usage.optional("input_tokens", int, 0),
            output_tokens=usage.optional("output_tokens", int, 0),
            reasoning_tokens=usage.optional("reasoning_tokens", int, 0),
            cached_tokens=usage.optional("cached_tokens", int, 0),
        ),
        model=fields.optional("model", str, ""),
        thinking_blocks=[
            _decode_thinking_block(raw, index)
            for index, raw in enumerate(fields.optional("thinking_blocks", list, []))
        ],
    )


def _decode_thinking_block(raw: Any, index: int) -> ThinkingBlock:
    fields = _Fields(raw, f"thinking block {index + 1}")
    return ThinkingBlock(
        text=fields.get("text", str),
        signature=fields.optional("signature", str, ""),
        redacted=fields.optional("redacted", bool, False),
    )


def _decode_subagent(fields: _Fields) -> SubagentEntry:
    entries: list[UserEntry | AssistantEntry | ToolResultEntry] = []
    for index, raw in enumerate(fields.get("entries", list)):
        entry = decode_entry(raw)
        if not isinstance(entry, UserEntry | AssistantEntry | ToolResultEntry):
            raise EntryError(f"the 'subagent' entry's entries[{index}] is not a message")
        entries.append(entry)
    return SubagentEntry(
        agent_id=fields.get("agent_id", str),
        parent_call_id=fields.get("parent_call_id", str),
        description=fields.get("description", str),
        stop_reason=fields.get("stop_reason", str),
        entries=entries,
    )


def _decode_rewind(fields: _Fields) -> RewindEntry:
    files = fields.optional("files", list, [])
    if not all(isinstance(path, str) for path in files):
        raise EntryError("the 'rewind' entry has a 'files' item that is not a string")
    optional_text = (str, type(None))
    return RewindEntry(
        leaf_id=fields.get("leaf_id", optional_text),
        restore=cast(RewindRestore, fields.choice("restore", REWIND_RESTORES)),
        entry_id=fields.optional("entry_id", optional_text, None),
        files_from=fields.optional("files_from", optional_text, None),
        files_to=fields.optional("files_to", optional_text, None),
        files=files,
    )


def _decode_compaction(fields: _Fields) -> CompactionEntry:
    first = fields.get("first", int)
    end = fields.get("end", int)
    if not 0 <= first <= end:
        raise EntryError(f"the 'compaction' entry has first={first}, end={end}: not a range")
    return CompactionEntry(
        summary=fields.get("summary", str),
        first=first,
        end=end,
        reason=fields.optional("reason", str, "threshold"),
        tokens_before=fields.optional("tokens_before", int, 0),
        tokens_after=fields.optional("tokens_after", int, 0),
    )


def _decode_call(raw: Any, index: int) -> ToolCall:
    fields = _Fields(raw, f"tool call {index + 1}")
    error = fields.optional("arguments_error", (str, type(None)), None)
    return ToolCall(
        id=fields.get("id", str),
        name=fields.get("name", str),
        arguments=fields.get("arguments", dict),
        raw_arguments=fields.optional("raw_arguments", str, ""),
        arguments_error=error,
    )


class _Fields:
    """Typed access to one JSON object, with errors that name the field and the object."""

    def __init__(self, obj: Any, what: str) -> None:
        if not isinstance(obj, dict):
            raise EntryError(f"{what} is not a JSON object")
        self._obj: dict[str, Any] = obj
        self._what = what

    def get(self, name: str, kind: type | tuple[type, ...]) -> Any:
        if name not in self._obj:
            raise EntryError(f"{self._what} has no {name!r}")
        return self._check(name, self._obj[name], kind)

    def optional(self, name: str, kind: type | tuple[type, ...], default: Any) -> Any:
        # Optional fields let older or hand-written files omit empty parts.
        if name not in self._obj:
            return default
        return self._check(name, self._obj[name], kind)

    def choice(self, name: str, allowed: tuple[str, ...]) -> str:
        value: str = self.get(name, str)
        if value not in allowed:
            raise EntryError(f"{self._what} has {name}={value!r}; expected one of {allowed}")
        return value

    def _check(self, name: str, value: Any, kind: type | tuple[type, ...]) -> Any:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # JSON true/false parse as bool, which is an int in Python: not a number here.
        is_bool_for_number = isinstance(value, bool) and bool not in kinds
        if not isinstance(value, kinds) or is_bool_for_number:
            wanted = " or ".join(_JSON_NAMES.get(k, k.__name__) for k in kinds)
            raise EntryError(f"{self._what} has {name!r} of the wrong type (expected {wanted})")
        return value


_JSON_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    dict: "an object",
    list: "a list",
    type(None): "null",
}
