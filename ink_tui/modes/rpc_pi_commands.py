"""pi's RPC dialect, commands: pi's `RpcCommand`s, each over `AgentSession`.

What it promises a pi client (docs/rpc.md, "pi's dialect"; pi's rpc-types.ts):

- pi's names and fields, and pi's response data: `prompt` (with `streamingBehavior`
  "steer" | "followUp") answers `{disposition}`, `get_state` pi's `RpcSessionState`,
  `bash` a `BashResult`, `clear_queue` `{steering, followUp}`, `fork` `{text,
  cancelled}`, and so on. The response envelope is ink's, which is pi's: `{type:
  "response", id, command, success, data | error}`.
- The run-control rules are ink's, which are pi's: a busy session refuses a prompt
  that does not say how to queue it; `steer` and `follow_up` queue, also while idle (the
  next prompt's run takes them, as in pi); `abort` answers once the run has settled.
- Where ink differs it says so in the answer or in docs/rpc.md: `bash` runs only while
  idle (ink runs shell lines between runs), `set_model` names a model of the one
  configured endpoint, there are no thinking levels, HTML export or session names.
- ink's extras are pi-style additions, camelCase: queue editing by entry id, approvals,
  sub-agents, rewind (`rpc_pi_extras`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ink_tui.api.session import QueueEntryGone, SessionBusy
from ink_tui.control.input_queue import TAKE_MODES
from ink_tui.core.choices import Choice, one_of
from ink_tui.core.messages import QueueMode
from ink_tui.modes.rpc_commands import (  # the same field checks
    Command,
    CommandError,
    SessionHost,
    _optional_text,
    _text,
)
from ink_tui.modes.rpc_pi_bash import run_bash, run_compaction
from ink_tui.modes.rpc_pi_events import queue_entry
from ink_tui.modes.rpc_pi_extras import EXTRAS
from ink_tui.modes.rpc_pi_messages import agent_messages, pi_usage, provider_api
from ink_tui.session.rewind import RewindRefused
from ink_tui.session.store_paths import session_id_from_name

if TYPE_CHECKING:
    from ink_tui.api.session import AgentSession

# Commands answered beside the stdin reader: they wait for a run to end, and the
# client may send others meanwhile (an abort for a bash, say).
BESIDE = frozenset({"abort", "bash", "abort_bash", "compact"})


def _mode(command: Mapping[str, Any], field: str, allowed: tuple[Choice, ...]) -> Choice:
    value = one_of(command.get(field), allowed)
    if value is None:
        raise CommandError(f"`{field}` must be " + " or ".join(repr(a) for a in allowed))
    return value


def _no_images(command: Mapping[str, Any]) -> None:
    if command.get("images"):
        raise CommandError("images are not supported: ink sends text only")


def _queue_mode(value: Any) -> QueueMode:
    if value == "followUp":
        return "follow_up"
    if value == "steer":
        return "steer"
    raise CommandError("`streamingBehavior` must be 'steer' or 'followUp'")


# -- prompting ---------------------------------------------------------------------------


async def prompt(host: SessionHost, command: dict[str, Any]) -> Any:
    text = _text(command, "message")
    _no_images(command)
    session = host.session
    extension = _extension_command(session, text)
    if extension is not None:
        session.run_command(*extension)
        return {"disposition": "handled"}
    behavior = command.get("streamingBehavior")
    if session.is_busy:
        if behavior is None:
            raise CommandError(
                "Agent is already processing. Specify streamingBehavior ('steer' or "
                "'followUp') to queue the message."
            )
        _queue(session, text, _queue_mode(behavior))
        return {"disposition": "queued"}
    session.start(text)
    if text.startswith("!"):
        # A shell line, run without the model: no prompt's run, so no agent_settled to
        # wait for ("handled", as pi says of input it consumed); its output comes as a
        # bash_execution_update.
        return {"disposition": "handled"}
    return {"disposition": "started"}


async def steer(host: SessionHost, command: dict[str, Any]) -> Any:
    return _queued(host, command, "steer")


async def follow_up(host: SessionHost, command: dict[str, Any]) -> Any:
    return _queued(host, command, "follow_up")


def _queued(host: SessionHost, command: dict[str, Any], mode: QueueMode) -> dict[str, Any]:
    """Queued, busy or idle, as pi queues: an idle session's next run takes it (steer:
    at its first model call; follow-up: when it would stop). With `agentId` (ink's
    addition): for that running sub-agent."""
    text = _text(command, "message")
    _no_images(command)
    if _extension_command(host.session, text) is not None:
        raise CommandError("extension commands cannot be queued: send them with prompt")
    agent_id = _optional_text(command, "agentId")
    if agent_id is not None:
        deliver = host.session.steer if mode == "steer" else host.session.follow_up
        entry = deliver(text, agent_id)
        assert entry is not None
        return {"disposition": "queued", "entryId": entry.id, "agentId": agent_id}
    entry_id = _queue(host.session, text, mode)
    return {"disposition": "queued", "entryId": entry_id}


def _queue(session: AgentSession, text: str, mode: QueueMode) -> int:
    # The queue itself, busy or idle: `AgentSession.steer` would start a run when idle,
    # which pi's steer never does.
    return session.controller.queue.add(text, mode).id


async def abort(host: SessionHost, command: dict[str, Any]) -> Any:
    host.aborts += 1
    result = await host.session.abort()
    if result is None:
        return {"aborted": False}
    # ink's additions: how it settled, and what the settle handed back (pi keeps queued
    # input queued after an abort; ink hands it back, as its TUI does to the editor).
    return {
        "aborted": True,
        "stopReason": result.stop_reason,
        "restoredText": result.restored_text,
        "restoredCount": result.restored_count,
    }


async def clear_queue(host: SessionHost, command: dict[str, Any]) -> Any:
    removed = host.session.clear_queue()
    return {
        "steering": [e.text for e in removed if e.mode == "steer"],
        "followUp": [e.text for e in removed if e.mode == "follow_up"],
    }


# -- state -------------------------------------------------------------------------------


def model_info(session: AgentSession) -> dict[str, Any]:
    """pi's `Model` for the one model ink talks to."""
    provider = session.controller.provider
    window = getattr(provider, "context_window", None)
    return {
        "id": session.model,
        "name": session.model,
        "api": provider_api(provider),
        "provider": "ink",
        "baseUrl": getattr(provider, "base_url", ""),
        "reasoning": False,
        "input": ["text"],
        "contextWindow": window or 0,
        "maxTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }


async def get_state(host: SessionHost, command: dict[str, Any]) -> Any:
    session = host.session
    snapshot = session.snapshot()
    state: dict[str, Any] = {
        "model": model_info(session),
        "thinkingLevel": "off",
        "isStreaming": session.is_busy,
        "isCompacting": False,
        "steeringMode": snapshot["steering_mode"],
        "followUpMode": snapshot["follow_up_mode"],
        "sessionId": session.session_id,
        "autoCompactionEnabled": True,
        "messageCount": snapshot["message_count"],
        "pendingMessageCount": len(snapshot["queue"]),
        # ink's additions.
        "queue": [
            queue_entry({**e, "shell": e["text"].startswith("!")}) for e in snapshot["queue"]
        ],
        "queuePaused": snapshot["queue_paused"],
        "approval": snapshot["approval"],
        "approvalsOpen": snapshot["approvals_open"],
        "demo": snapshot["demo"],
    }
    if snapshot["session_file"]:
        state["sessionFile"] = snapshot["session_file"]
    return state


async def get_messages(host: SessionHost, command: dict[str, Any]) -> Any:
    api = provider_api(host.session.controller.provider)
    return {"messages": agent_messages(list(host.session.messages), api=api)}


async def get_last_assistant_text(host: SessionHost, command: dict[str, Any]) -> Any:
    """As pi: a reply without text that did not end normally (aborted, only calling
    tools) is skipped."""
    for message in reversed(host.session.messages):
        if message["role"] != "assistant":
            continue
        text = message["text"].strip()
        if not text and message["finish_reason"] != "stop":
            continue
        return {"text": text or None}
    return {"text": None}


async def get_session_stats(host: SessionHost, command: dict[str, Any]) -> Any:
    """Counted over the conversation as the model has it: what a compaction summarised
    is no longer counted (ink keeps no separate usage log)."""
    session = host.session
    messages = session.messages
    totals = {"input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0, "cached_tokens": 0}
    calls = 0
    for message in messages:
        if message["role"] == "assistant":
            calls += len(message["tool_calls"])
            for key in totals:
                totals[key] += message["usage"][key]  # type: ignore[literal-required]
    usage = pi_usage(totals)
    stats: dict[str, Any] = {
        "sessionId": session.session_id,
        "userMessages": sum(1 for m in messages if m["role"] == "user"),
        "assistantMessages": sum(1 for m in messages if m["role"] == "assistant"),
        "toolCalls": calls,
        "toolResults": sum(1 for m in messages if m["role"] == "tool"),
        "totalMessages": len(messages),
        "tokens": {
            "input": usage["input"],
            "output": usage["output"],
            "cacheRead": usage["cacheRead"],
            "cacheWrite": 0,
            "total": usage["totalTokens"],
        },
        "cost": 0,
    }
    if session.session_file is not None:
        stats["sessionFile"] = str(session.session_file)
    return stats


async def get_commands(host: SessionHost, command: dict[str, Any]) -> Any:
    """The slash commands extensions registered (run one with prompt "/name args")."""
    return {
        "commands": [
            {
                "name": c["name"].lstrip("/"),
                "description": c["description"],
                "source": "extension",
                "sourceInfo": {
                    "path": c["extension"],
                    "source": "local",
                    "scope": "user",
                    "origin": "top-level",
                },
            }
            for c in host.session.commands
        ]
    }


# -- modes and model ---------------------------------------------------------------------


async def set_steering_mode(host: SessionHost, command: dict[str, Any]) -> Any:
    host.session.set_steering_mode(_mode(command, "mode", TAKE_MODES))
    return None


async def set_follow_up_mode(host: SessionHost, command: dict[str, Any]) -> Any:
    host.session.set_follow_up_mode(_mode(command, "mode", TAKE_MODES))
    return None


async def set_model(host: SessionHost, command: dict[str, Any]) -> Any:
    """ink talks to one configured endpoint (provider "ink"): this names which of its
    models to ask for, from the next request on."""
    provider = _text(command, "provider")
    model_id = _text(command, "modelId")
    if provider != "ink":
        raise CommandError(f"Model not found: {provider}/{model_id} (ink's provider is 'ink')")
    session = host.session
    backend = session.controller.provider
    if model_id != backend.model:
        backend.model = model_id
        # A window learned for the old model says nothing of the new one.
        if hasattr(backend, "context_window"):
            backend.context_window = None
    return model_info(session)


async def get_available_models(host: SessionHost, command: dict[str, Any]) -> Any:
    return {"models": [model_info(host.session)]}


async def cycle_model(host: SessionHost, command: dict[str, Any]) -> Any:
    return None  # one model: nothing to cycle to


async def get_available_thinking_levels(host: SessionHost, command: dict[str, Any]) -> Any:
    return {"levels": ["off"]}


async def set_thinking_level(host: SessionHost, command: dict[str, Any]) -> Any:
    if command.get("level") != "off":
        raise CommandError("thinking levels are not supported: ink sends none ('off' only)")
    return None


async def cycle_thinking_level(host: SessionHost, command: dict[str, Any]) -> Any:
    return None


# -- bash and compaction -----------------------------------------------------------------


async def bash(host: SessionHost, command: dict[str, Any]) -> Any:
    """One at a time, in order (as ink's `bash`); idle only: ink runs a shell line
    between runs, never beside one (queue it with prompt "!command" instead)."""
    line = _text(command, "command")
    aborts = host.aborts
    async with host.bash_turn:
        if host.aborts != aborts:
            return {"output": "", "cancelled": True, "truncated": False}
        if host.session.is_busy:
            raise CommandError(
                "busy: ink runs shell commands between runs; wait for agent_settled, or "
                "queue it with prompt '!command' and a streamingBehavior"
            )
        try:
            return await run_bash(host.session, line)
        except RuntimeError as error:  # the session closed while this one waited
            raise CommandError(str(error)) from error


async def abort_bash(host: SessionHost, command: dict[str, Any]) -> Any:
    host.aborts += 1
    await host.session.abort()
    return None


async def compact(host: SessionHost, command: dict[str, Any]) -> Any:
    instructions = _optional_text(command, "customInstructions") or ""
    try:
        result = await run_compaction(host.session, instructions)
    except RuntimeError as error:
        raise CommandError(str(error)) from error
    if isinstance(result, str):
        raise CommandError(result)
    return result


# -- sessions ----------------------------------------------------------------------------


def _idle(host: SessionHost) -> None:
    if host.session.is_busy:
        raise CommandError("busy: abort the run or wait for agent_settled first")


async def _replace(host: SessionHost, resume: str | None) -> AgentSession:
    try:
        return await host.replace(resume=resume)
    except OSError as error:
        raise CommandError(str(error)) from error


async def new_session(host: SessionHost, command: dict[str, Any]) -> Any:
    _idle(host)
    session = await _replace(host, None)
    return {"cancelled": False, "sessionId": session.session_id}


async def switch_session(host: SessionHost, command: dict[str, Any]) -> Any:
    """`sessionPath`: a session file (`get_state`'s `sessionFile`), or an id."""
    wanted = _text(command, "sessionPath")
    session_id = session_id_from_name(Path(wanted).name) if wanted.endswith(".jsonl") else wanted
    if session_id == host.session.session_id:
        return {"cancelled": False, "sessionId": session_id}
    _idle(host)
    session = await _replace(host, session_id)
    return {"cancelled": False, "sessionId": session.session_id}


async def fork(host: SessionHost, command: dict[str, Any]) -> Any:
    """A new session holding the branch up to just before the user message `entryId`;
    it becomes the open one (as pi's fork does)."""
    _idle(host)
    forked = await host.session.fork(_text(command, "entryId").strip())
    session = await _replace(host, forked["session_id"])
    return {"text": forked["text"], "cancelled": False, "sessionId": session.session_id}


async def get_fork_messages(host: SessionHost, command: dict[str, Any]) -> Any:
    turns = await host.session.user_messages()
    return {"messages": [{"entryId": t["entry_id"], "text": t["text"]} for t in turns]}


async def get_tree(host: SessionHost, command: dict[str, Any]) -> Any:
    """pi's nested `{entry, children}` nodes from ink's flat tree."""
    tree = await host.session.tree()
    nodes: dict[str, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    for item in tree["tree"]:
        entry = {
            "type": "message",
            "id": item["id"],
            "parentId": item["parent_id"],
            "timestamp": item["time"],
            "message": {"role": _pi_role(item["role"]), "content": item["text"]},
        }
        nodes[item["id"]] = {"entry": entry, "children": []}
    for item in tree["tree"]:
        parent = nodes.get(item["parent_id"] or "")
        (parent["children"] if parent is not None else roots).append(nodes[item["id"]])
    return {"tree": roots, "leafId": tree["leaf_id"]}


def _pi_role(role: str) -> str:
    return {"tool": "toolResult"}.get(role, role)


def _unsupported(what: str) -> Any:
    async def handler(host: SessionHost, command: dict[str, Any]) -> Any:
        raise CommandError(f"not supported by ink: {what}")

    return handler


def _extension_command(session: AgentSession, text: str) -> tuple[str, str] | None:
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    known = {c["name"] for c in session.commands}
    return (name.lower(), argument.strip()) if f"/{name.lower()}" in known else None


PI_COMMANDS = (
    Command("prompt", "start a run; busy: queue it with streamingBehavior", prompt),
    Command("steer", "queue a correction for the next model call", steer),
    Command("follow_up", "queue a task for when the run would stop", follow_up),
    Command("abort", "abort the run; answers once it has settled", abort),
    Command("clear_queue", "remove every queued message", clear_queue),
    Command("new_session", "start a new session (idle only)", new_session),
    Command("get_state", "pi's session state", get_state),
    Command("get_messages", "the conversation, as pi's messages", get_messages),
    Command("set_model", "a model of the configured endpoint (provider 'ink')", set_model),
    Command("cycle_model", "one model: null", cycle_model),
    Command("get_available_models", "the configured model", get_available_models),
    Command("set_thinking_level", "'off' only", set_thinking_level),
    Command("cycle_thinking_level", "null: no thinking levels", cycle_thinking_level),
    Command("get_available_thinking_levels", "['off']", get_available_thinking_levels),
    Command("set_steering_mode", "all | one-at-a-time", set_steering_mode),
    Command("set_follow_up_mode", "all | one-at-a-time", set_follow_up_mode),
    Command("compact", "compact the conversation now (idle only)", compact),
    Command("set_auto_compaction", "", _unsupported("set_auto_compaction (see compact_at)")),
    Command("set_auto_retry", "", _unsupported("set_auto_retry (see the retry settings)")),
    Command("abort_retry", "", _unsupported("abort_retry (abort stops a retry too)")),
    Command("bash", "run a shell command (idle only)", bash),
    Command("abort_bash", "stop the running shell command", abort_bash),
    Command("get_session_stats", "counts and tokens of the conversation", get_session_stats),
    Command("export_html", "", _unsupported("export_html")),
    Command("switch_session", "open a saved session by file or id (idle only)", switch_session),
    Command("fork", "a new session from before a user message (idle only)", fork),
    Command("clone", "", _unsupported("clone (fork from a user message instead)")),
    Command("get_fork_messages", "the user's messages fork can go back to", get_fork_messages),
    Command("get_entries", "", _unsupported("get_entries (get_tree holds every entry)")),
    Command("get_tree", "every entry of every branch", get_tree),
    Command("get_last_assistant_text", "the last reply's text", get_last_assistant_text),
    Command("set_session_name", "", _unsupported("set_session_name")),
    Command("get_commands", "the extensions' slash commands", get_commands),
)
HANDLERS = {c.name: c.handler for c in (*PI_COMMANDS, *EXTRAS)}


async def dispatch(host: SessionHost, command: dict[str, Any]) -> Any:
    """Run one command; raises `CommandError` with the message for the response."""
    handler = HANDLERS.get(str(command.get("type")))
    if handler is None:
        raise CommandError(f"Unknown command: {command.get('type')}")
    try:
        return await handler(host, command)
    except (SessionBusy, QueueEntryGone, RewindRefused, ValueError, LookupError) as error:
        raise CommandError(str(error).strip("'\"")) from error
