"""RPC commands: one handler per `type`, each checking its fields before acting.

A handler returns the response's `data` (or None) or raises `CommandError`, whose text
goes back as the response's `error`. Handlers never write to stdout themselves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ink_tui.api.session import QueueEntryGone, SessionBusy
from ink_tui.control.input_queue import TAKE_MODES
from ink_tui.core.choices import Choice, one_of
from ink_tui.core.messages import QUEUE_MODES
from ink_tui.modes.rpc_bash import run_bash_line
from ink_tui.session.catalog import find_session_path
from ink_tui.session.rewind import RewindRefused
from ink_tui.session.store_paths import SESSION_SUFFIX, session_id_from_name

if TYPE_CHECKING:
    from ink_tui.api.session import AgentSession


class CommandError(Exception):
    """A command that cannot be carried out; `str()` is the response's error."""


class SessionHost:
    """What commands act on: the current session, which `new_session` and
    `switch_session` replace."""

    session: AgentSession
    # `bash` commands take turns (see `bash`); `abort` counts, so that one waiting for
    # its turn knows it was called off.
    aborts: int = 0
    _bash_turn: asyncio.Lock | None = None

    @property
    def bash_turn(self) -> asyncio.Lock:
        if self._bash_turn is None:
            self._bash_turn = asyncio.Lock()
        return self._bash_turn

    async def replace(self, *, resume: str | None) -> AgentSession:
        raise NotImplementedError


Handler = Callable[["SessionHost", dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    description: str
    handler: Handler


def _text(command: dict[str, Any], field: str) -> str:
    value = command.get(field)
    if not isinstance(value, str):
        raise CommandError(
            f"`{field}` must be a string" if field in command else f"`{field}` is missing"
        )
    if not value.strip():
        raise CommandError(f"`{field}` is empty")
    return value


def _optional_text(command: dict[str, Any], field: str) -> str | None:
    value = command.get(field)
    if value is not None and not isinstance(value, str):
        raise CommandError(f"`{field}` must be a string")
    return value


def _entry_id(command: dict[str, Any]) -> int:
    value = command.get("entry_id")
    if value is None:
        raise CommandError("`entry_id` is missing")
    if not isinstance(value, int) or isinstance(value, bool):
        raise CommandError("`entry_id` must be an integer")
    return value


def _mode(command: dict[str, Any], field: str, allowed: tuple[Choice, ...]) -> Choice:
    value = one_of(command.get(field), allowed)
    if value is None:
        choices = " or ".join(repr(a) for a in allowed)
        raise CommandError(f"`{field}` must be {choices}")
    return value


# -- prompting ---------------------------------------------------------------------------


async def prompt(host: SessionHost, command: dict[str, Any]) -> Any:
    text = _text(command, "message")
    extension_command = _extension_command(host, text)
    if extension_command is not None:
        # "/name argument" naming an extension's command runs it, as in the app.
        name, argument = extension_command
        host.session.run_command(name, argument)
        return {"command": f"/{name}"}
    deliver_as = command.get("deliver_as")
    if deliver_as is not None:
        deliver_as = _mode(command, "deliver_as", QUEUE_MODES)
    session = host.session
    if session.is_busy:
        if deliver_as is None:
            raise CommandError(
                "busy: a run is in progress; send deliver_as 'steer' or 'follow_up' to "
                "queue the message, or wait for agent_settled"
            )
        entry = session.steer(text) if deliver_as == "steer" else session.follow_up(text)
        return {"queued": asdict(entry) if entry is not None else None}
    session.start(text)
    return {"started": True}


async def steer(host: SessionHost, command: dict[str, Any]) -> Any:
    """With `agent_id`: for that running sub-agent (an error, nothing queued, if it is
    not running: the caller still has its message)."""
    agent_id = _optional_text(command, "agent_id")
    entry = host.session.steer(_text(command, "message"), agent_id)
    return _delivered(entry, agent_id)


async def follow_up(host: SessionHost, command: dict[str, Any]) -> Any:
    agent_id = _optional_text(command, "agent_id")
    entry = host.session.follow_up(_text(command, "message"), agent_id)
    return _delivered(entry, agent_id)


def _delivered(entry: Any, agent_id: str | None) -> dict[str, Any]:
    if entry is None:
        return {"started": True}
    return {"queued": asdict(entry), **({"agent_id": agent_id} if agent_id else {})}


async def abort_agent(host: SessionHost, command: dict[str, Any]) -> Any:
    """Stop one sub-agent; answers once it has ended (the run goes on)."""
    stopped = await host.session.abort_agent(_text(command, "agent_id"))
    return asdict(stopped)


async def get_agents(host: SessionHost, command: dict[str, Any]) -> Any:
    return {"agents": host.session.agents}


async def abort(host: SessionHost, command: dict[str, Any]) -> Any:
    host.aborts += 1
    result = await host.session.abort()
    return {"aborted": result is not None, **(asdict(result) if result is not None else {})}


async def bash(host: SessionHost, command: dict[str, Any]) -> Any:
    """One at a time, in the order they came: a `bash` sent while another runs waits
    for it, then runs, and each answers with its own output and exit code. One sent
    while a model run is in progress is queued as a `!` line (its output comes as
    events); one still waiting for its turn when `abort` comes is called off."""
    line = "!" + _text(command, "command")
    aborts = host.aborts
    async with host.bash_turn:
        if host.aborts != aborts:
            return {
                "output": "",
                "is_error": True,
                "exit_code": None,
                "stop_reason": "aborted",
                "error": "aborted before it ran",
            }
        session = host.session
        if session.is_busy:
            entry = session.steer(line)
            return {"queued": asdict(entry) if entry is not None else None}
        try:
            return await run_bash_line(session, line)
        except RuntimeError as error:  # the session closed while this one waited
            raise CommandError(str(error)) from error


async def approve(host: SessionHost, command: dict[str, Any]) -> Any:
    request_id = _text(command, "request_id")
    decision = _mode(command, "decision", ("allow", "session", "always", "deny"))
    host.session.answer_approval(request_id, decision, _optional_text(command, "reason"))
    return {"request_id": request_id, "decision": decision}


async def set_approval(host: SessionHost, command: dict[str, Any]) -> Any:
    host.session.set_approval(_mode(command, "policy", ("ask", "edits", "auto")))
    return None


# -- state and queue ---------------------------------------------------------------------


async def get_state(host: SessionHost, command: dict[str, Any]) -> Any:
    # Which extensions loaded, which failed and why, which a budget stopped.
    host_ = host.session.extensions
    none: dict[str, Any] = {"loaded": [], "failed": [], "stopped": []}
    return {**host.session.snapshot(), "extensions": host_.report() if host_ else none}


async def get_queue(host: SessionHost, command: dict[str, Any]) -> Any:
    return {"entries": [asdict(e) for e in host.session.queue]}


async def clear_queue(host: SessionHost, command: dict[str, Any]) -> Any:
    return {"removed": [asdict(e) for e in host.session.clear_queue()]}


async def edit_queue_entry(host: SessionHost, command: dict[str, Any]) -> Any:
    entry_id = _entry_id(command)
    text = _optional_text(command, "text")
    mode = None
    if command.get("mode") is not None:
        mode = _mode(command, "mode", QUEUE_MODES)
    if text is None and mode is None:
        raise CommandError("give `text`, `mode` or both")
    session = host.session
    if text is not None:
        session.edit(entry_id, text)
    if mode is not None:
        session.set_mode(entry_id, mode)
    return {"entries": [asdict(e) for e in session.queue]}


async def move_queue_entry(host: SessionHost, command: dict[str, Any]) -> Any:
    entry_id = _entry_id(command)
    to = command.get("to")
    if not isinstance(to, int) or isinstance(to, bool):
        raise CommandError("`to` must be an integer position (0 is first)")
    host.session.move(entry_id, to)
    return {"entries": [asdict(e) for e in host.session.queue]}


async def remove_queue_entry(host: SessionHost, command: dict[str, Any]) -> Any:
    return {"removed": asdict(host.session.remove(_entry_id(command)))}


async def get_messages(host: SessionHost, command: dict[str, Any]) -> Any:
    return {"messages": host.session.messages}


async def set_steering_mode(host: SessionHost, command: dict[str, Any]) -> Any:
    host.session.set_steering_mode(_mode(command, "mode", TAKE_MODES))
    return None


async def set_follow_up_mode(host: SessionHost, command: dict[str, Any]) -> Any:
    host.session.set_follow_up_mode(_mode(command, "mode", TAKE_MODES))
    return None


# -- sessions ----------------------------------------------------------------------------


async def new_session(host: SessionHost, command: dict[str, Any]) -> Any:
    _idle(host)
    session = await _replace(host, resume=None)
    return {"session_id": session.session_id}


async def switch_session(host: SessionHost, command: dict[str, Any]) -> Any:
    """The open session itself is a no-op (`already_open`): opening it again would be
    refused by its own lock. One open in another process is refused with its holder."""
    wanted = command.get("session_id")
    if not isinstance(wanted, str) or not wanted.strip():
        raise CommandError("`session_id` must be a session id (or the start of one)")
    current = host.session
    if await _names_open_session(current, wanted):
        return {
            "session_id": current.session_id,
            "message_count": len(current.messages),
            "already_open": True,
        }
    _idle(host)
    session = await _replace(host, resume=wanted)
    return {"session_id": session.session_id, "message_count": len(session.messages)}


async def _replace(host: SessionHost, *, resume: str | None) -> AgentSession:
    try:
        return await host.replace(resume=resume)
    except OSError as error:
        # A session another process holds (`SessionLocked` names it), a store that
        # cannot be written or read: the message is the answer, the session goes on.
        raise CommandError(str(error)) from error


async def _names_open_session(session: AgentSession, wanted: str) -> bool:
    """Whether `wanted` (an id or the start of one) names `session` alone."""
    prefix = wanted.strip().lower().removesuffix(SESSION_SUFFIX)
    if not session.session_id.lower().startswith(prefix):
        return False
    if prefix == session.session_id.lower():
        return True
    # A prefix: it names the open session only if no other saved session matches it.
    try:
        path = await asyncio.to_thread(find_session_path, session.controller.workspace, prefix)
    except LookupError:
        return False  # several, or none saved: the replace says so as it always did
    return session_id_from_name(path.name) == session.session_id


# -- going back (session/rewind.py) -------------------------------------------------------


def _tree_entry(command: dict[str, Any]) -> str:
    """A tree entry's id (a string, as `get_tree` gives them; the queue's are numbers)."""
    value = command.get("entry_id")
    if not isinstance(value, str) or not value.strip():
        raise CommandError("`entry_id` must be an entry id from get_tree (a string)")
    return value.strip()


async def get_tree(host: SessionHost, command: dict[str, Any]) -> Any:
    return await host.session.tree()


async def get_fork_messages(host: SessionHost, command: dict[str, Any]) -> Any:
    """pi's name: the user's messages a rewind or fork can go back to."""
    return {"messages": await host.session.user_messages()}


async def rewind_preview(host: SessionHost, command: dict[str, Any]) -> Any:
    return await host.session.rewind_preview(_tree_entry(command))


async def rewind(host: SessionHost, command: dict[str, Any]) -> Any:
    restore = _mode(command, "restore", ("conversation", "files", "both"))
    return await host.session.rewind(_tree_entry(command), restore)


async def undo_rewind(host: SessionHost, command: dict[str, Any]) -> Any:
    return await host.session.undo_rewind()


async def navigate_tree(host: SessionHost, command: dict[str, Any]) -> Any:
    return await host.session.navigate_tree(_tree_entry(command))


async def fork(host: SessionHost, command: dict[str, Any]) -> Any:
    """A new session from just before the message; it becomes the open one."""
    _idle(host)
    forked = await host.session.fork(_tree_entry(command))
    session = await _replace(host, resume=forked["session_id"])
    return {"session_id": session.session_id, "text": forked["text"]}


def _idle(host: SessionHost) -> None:
    if host.session.is_busy:
        raise CommandError("busy: abort the run or wait for agent_settled first")


def _extension_command(host: SessionHost, text: str) -> tuple[str, str] | None:
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    known = {c["name"] for c in host.session.commands}
    return (name.lower(), argument.strip()) if f"/{name.lower()}" in known else None


async def get_commands(host: SessionHost, command: dict[str, Any]) -> Any:
    """The protocol's commands, then the slash commands extensions registered (run them
    with `prompt` and the message "/name argument")."""
    protocol = [{"name": c.name, "description": c.description} for c in COMMANDS]
    slash = [{**c, "source": "extension"} for c in host.session.commands]
    return {"commands": protocol + slash}


COMMANDS = (
    Command("prompt", "start a run; busy: queue it with deliver_as, else an error", prompt),
    Command("steer", "queue a correction for the next model call (agent_id: a sub-agent's)", steer),
    Command("follow_up", "queue a task for when the model would stop (agent_id: ...)", follow_up),
    Command("abort", "abort the run (every sub-agent too); answers once it has settled", abort),
    Command("abort_agent", "stop one sub-agent; answers once it has ended", abort_agent),
    Command("get_agents", "the running sub-agents", get_agents),
    Command("bash", "run a shell line without the model (a `!` line)", bash),
    Command("approve", "answer an approval_request: allow | session | always | deny", approve),
    Command("set_approval", "the approval policy: ask | edits | auto", set_approval),
    Command("get_state", "model, busy, modes, session id and file, queue", get_state),
    Command("get_queue", "the queued entries", get_queue),
    Command("clear_queue", "remove every queued entry; returns them", clear_queue),
    Command("edit_queue_entry", "change an entry's text and/or mode", edit_queue_entry),
    Command("move_queue_entry", "move an entry to a position", move_queue_entry),
    Command("remove_queue_entry", "remove one entry", remove_queue_entry),
    Command("get_messages", "the conversation as the model has it", get_messages),
    Command("set_steering_mode", "all | one-at-a-time", set_steering_mode),
    Command("set_follow_up_mode", "all | one-at-a-time", set_follow_up_mode),
    Command("new_session", "start a new session (idle only)", new_session),
    Command("switch_session", "resume a saved session by id (idle only)", switch_session),
    Command("get_tree", "every entry of every branch, and the leaf", get_tree),
    Command("get_fork_messages", "the user's messages a rewind can go back to", get_fork_messages),
    Command("rewind_preview", "what a rewind of files to entry_id would change", rewind_preview),
    Command("rewind", "back to a user message: restore conversation | files | both", rewind),
    Command("undo_rewind", "undo the last file restore", undo_rewind),
    Command("navigate_tree", "go on from any entry of any branch", navigate_tree),
    Command("fork", "a new session from just before a user message (it becomes current)", fork),
    Command("get_commands", "this list", get_commands),
)
HANDLERS = {c.name: c.handler for c in COMMANDS}


async def dispatch(host: SessionHost, command: dict[str, Any]) -> Any:
    """Run one command; raises `CommandError` with the message for the response."""
    handler = HANDLERS.get(str(command.get("type")))
    if handler is None:
        known = ", ".join(HANDLERS)
        raise CommandError(f"unknown command {command.get('type')!r}; known: {known}")
    try:
        return await handler(host, command)
    except (SessionBusy, QueueEntryGone, RewindRefused, ValueError, LookupError) as error:
        raise CommandError(str(error).strip("'\"")) from error
