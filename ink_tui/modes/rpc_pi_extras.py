"""pi's RPC dialect, ink's additions: what ink has and pi's protocol does not, named as
ink names it, with pi-style camelCase fields (docs/rpc.md, "ink's additions").

Queue editing by entry id, approvals, sub-agents, going back. Each handler is over
`AgentSession`, as in `rpc_pi_commands`, which puts `EXTRAS` in its table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ink_tui.core.choices import Choice, one_of
from ink_tui.core.messages import QueueMode
from ink_tui.modes.rpc_commands import Command, CommandError, SessionHost
from ink_tui.modes.rpc_pi_events import queue_entry

if TYPE_CHECKING:
    from ink_tui.api.session import AgentSession


def _text(command: Mapping[str, Any], field: str) -> str:
    value = command.get(field)
    if not isinstance(value, str) or not value.strip():
        raise CommandError(f"`{field}` must be a non-empty string")
    return value.strip()


def _optional_text(command: Mapping[str, Any], field: str) -> str | None:
    value = command.get(field)
    if value is not None and not isinstance(value, str):
        raise CommandError(f"`{field}` must be a string")
    return value


def _mode(command: Mapping[str, Any], field: str, allowed: tuple[Choice, ...]) -> Choice:
    value = one_of(command.get(field), allowed)
    if value is None:
        raise CommandError(f"`{field}` must be " + " or ".join(repr(a) for a in allowed))
    return value


def _queue_mode(value: Any) -> QueueMode:
    if value in ("steer", "followUp"):
        return "steer" if value == "steer" else "follow_up"
    raise CommandError("`mode` must be 'steer' or 'followUp'")


def _entry_id(command: Mapping[str, Any]) -> int:
    value = command.get("entryId")
    if not isinstance(value, int) or isinstance(value, bool):
        raise CommandError("`entryId` must be a queue entry's id (an integer)")
    return value


def _queue_now(session: AgentSession) -> dict[str, Any]:
    shown = [{**_entry_dict(e), "shell": e.text.startswith("!")} for e in session.queue]
    return {"entries": [queue_entry(e) for e in shown]}


def _entry_dict(entry: Any) -> dict[str, Any]:
    return {"id": entry.id, "text": entry.text, "mode": entry.mode, "source": entry.source}


async def get_queue(host: SessionHost, command: dict[str, Any]) -> Any:
    return _queue_now(host.session)


async def edit_queue_entry(host: SessionHost, command: dict[str, Any]) -> Any:
    entry_id = _entry_id(command)
    text = _optional_text(command, "text")
    mode = command.get("mode")
    if text is None and mode is None:
        raise CommandError("give `text`, `mode` ('steer' | 'followUp') or both")
    if text is not None:
        host.session.edit(entry_id, text)
    if mode is not None:
        host.session.set_mode(entry_id, _queue_mode(mode))
    return _queue_now(host.session)


async def move_queue_entry(host: SessionHost, command: dict[str, Any]) -> Any:
    to = command.get("to")
    if not isinstance(to, int) or isinstance(to, bool):
        raise CommandError("`to` must be an integer position (0 is first)")
    host.session.move(_entry_id(command), to)
    return _queue_now(host.session)


async def remove_queue_entry(host: SessionHost, command: dict[str, Any]) -> Any:
    host.session.remove(_entry_id(command))
    return _queue_now(host.session)


async def approve(host: SessionHost, command: dict[str, Any]) -> Any:
    request_id = _text(command, "requestId")
    decision = _mode(command, "decision", ("allow", "session", "always", "deny"))
    host.session.answer_approval(request_id, decision, _optional_text(command, "reason"))
    return {"requestId": request_id, "decision": decision}


async def set_approval(host: SessionHost, command: dict[str, Any]) -> Any:
    host.session.set_approval(_mode(command, "policy", ("ask", "edits", "auto")))
    return None


async def get_agents(host: SessionHost, command: dict[str, Any]) -> Any:
    return {
        "agents": [
            {
                "agentId": a["agent_id"],
                "description": a["description"],
                "parentToolCallId": a["parent_call_id"],
                "parentAgentId": a["parent_agent_id"],
                "depth": a["depth"],
                "elapsedS": a["elapsed_s"],
            }
            for a in host.session.agents
        ]
    }


async def abort_agent(host: SessionHost, command: dict[str, Any]) -> Any:
    stopped = await host.session.abort_agent(_text(command, "agentId"))
    return {
        "agentId": stopped.agent_id,
        "stopReason": stopped.stop_reason,
        "result": stopped.result,
    }


async def rewind(host: SessionHost, command: dict[str, Any]) -> Any:
    restore = _mode(command, "restore", ("conversation", "files", "both"))
    result = await host.session.rewind(_text(command, "entryId"), restore)
    return {"text": result["text"], "restoredFiles": result["restored_files"]}


async def undo_rewind(host: SessionHost, command: dict[str, Any]) -> Any:
    result = await host.session.undo_rewind()
    return {"restoredFiles": result["restored_files"]}


async def navigate_tree(host: SessionHost, command: dict[str, Any]) -> Any:
    result = await host.session.navigate_tree(_text(command, "entryId"))
    return {"text": result["text"], "leafId": result["leaf_id"]}


EXTRAS = (
    Command("get_queue", "the queued entries with their ids", get_queue),
    Command("edit_queue_entry", "entryId, text and/or mode", edit_queue_entry),
    Command("move_queue_entry", "entryId to a position", move_queue_entry),
    Command("remove_queue_entry", "entryId", remove_queue_entry),
    Command("approve", "answer an approval_request: requestId, decision", approve),
    Command("set_approval", "the approval policy: ask | edits | auto", set_approval),
    Command("get_agents", "the running sub-agents", get_agents),
    Command("abort_agent", "stop one sub-agent: agentId", abort_agent),
    Command("rewind", "back to a user message: entryId, restore", rewind),
    Command("undo_rewind", "undo the last file restore", undo_rewind),
    Command("navigate_tree", "go on from any entry: entryId", navigate_tree),
)
