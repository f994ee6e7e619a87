"""The session side of extensions: one host per controller.

- Events: each extension's handlers are called with the public events, never inside a
  bus publish (they run soon after, in order, on the loop) so that a handler may act on
  the session. In a session that programs drive (`AgentSession`: RPC, `ink serve`, the
  Python API) they are the session's own events (`public_events`), with the seqs its
  clients see; elsewhere (the TUI, `-p`) the host projects the bus itself.
- `tool_call`: one check in the controller's `before_tool` list asks every extension's
  handlers in load order; the first `block(reason)` stops the call.
- Failures: an extension that cannot load, or a handler or command that raises, becomes
  a notice of kind "extension_error" (the public `extension_error` event and a line for
  the user); ink goes on. That holds for `SystemExit` and `KeyboardInterrupt` too (an
  extension's `sys.exit()` or argparse error must not end ink): every boundary catches
  BaseException, all but a real cancellation. A `tool_call` handler that raises blocks
  that call: a broken guard must not wave everything through.
- Budgets (`budget.py`): what an extension sets off on its own is bounded; one over
  budget is stopped until the next user input, with an `extension_error` saying why.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import importlib.util
import inspect
import logging
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ink_tui.control.public_events import PublicEvent, PublicProjection
from ink_tui.core.abort import AbortSignal
from ink_tui.core.events import Event, Notice, NoticeLevel, RunEnd, UserMessageEvent
from ink_tui.core.messages import ToolCall
from ink_tui.extensions.api import TOOL_CALL, Block, DeliverAs, Handler, Ink, ToolCallInfo
from ink_tui.extensions.budget import Budget, ExtensionStopped
from ink_tui.extensions.containment import HandlerEscaped, checked, contained, describe
from ink_tui.session.config_files import display_path

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController

log = logging.getLogger(__name__)

# Subscribes a callback to a session's public events; returns the unsubscribe.
SubscribePublic = Callable[[Callable[[PublicEvent], object]], Callable[[], None]]

ERROR_KIND = "extension_error"

# What the extension's code is running for ("agent_settled", "/name", "setup"): the
# `event` of an extension_error raised by a call it makes. Tasks copy it when made.
_calling: contextvars.ContextVar[str] = contextvars.ContextVar("ink_extension_calling")


@dataclass(frozen=True, slots=True)
class LoadFailure:
    extension: str
    path: Path
    error: str


@dataclass(frozen=True, slots=True)
class ExtensionCommand:
    name: str
    """Without the slash."""
    description: str
    extension: str
    handler: Handler


class ExtensionHost:
    def __init__(
        self,
        controller: RunController,
        *,
        session_id: str = "",
        reserved_commands: Iterable[str] = (),
        public_events: SubscribePublic | None = None,
    ) -> None:
        self.controller = controller
        self.workspace = controller.workspace
        # Loaded extensions, by name, in load order.
        self.loaded: dict[str, Path] = {}
        # Files that did not load, in order (RPC get_state, the API's warnings).
        self.failed: list[LoadFailure] = []
        self.budget = Budget()
        self.commands: dict[str, ExtensionCommand] = {}
        # Names a front end keeps for itself (its built-in commands).
        self.reserved_commands = set(reserved_commands)
        self._handlers: dict[str, list[tuple[str, Handler]]] = {}
        # None: the session's events come through `public_events`.
        self._projection = PublicProjection(session_id) if public_events is None else None
        self._run_id: str | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        unsubscribe_bus = controller.bus.subscribe(self._on_event)
        untap = public_events(self._on_public) if public_events is not None else None

        def unsubscribe() -> None:
            unsubscribe_bus()
            if untap is not None:
                untap()

        self._unsubscribe = unsubscribe
        controller.before_tool.append(self._before_tool)

    @property
    def is_busy(self) -> bool:
        return self.controller.state == "running"

    # -- loading ---------------------------------------------------------------------

    def load_all(self, paths: Iterable[Path]) -> list[str]:
        """Load each file; the names of those that loaded."""
        return [name for path in paths if (name := self.load(path)) is not None]

    def load(self, path: Path) -> str | None:
        """Import `path` and call its `setup(ink)`; None (and a notice) if that fails."""
        name = path.stem
        if name in self.loaded:
            taken = f"another extension is already called {name!r}"
            self.failed.append(LoadFailure(name, path, taken))
            self._failed(name, "setup", taken, path)
            return None
        token = _calling.set("setup")
        try:
            module = import_file(path)
            setup = getattr(module, "setup", None)
            if not callable(setup):
                raise AttributeError("it has no setup(ink) function")
            result = setup(Ink(self, name, path))
            if inspect.isawaitable(result):
                self._track(asyncio.ensure_future(contained(result)), name, "setup")
        except BaseException as error:  # KeyboardInterrupt at import must not stop ink
            self._setup_failed(name, path, error)
            return None
        finally:
            _calling.reset(token)
        self.loaded[name] = path
        return name

    def _setup_failed(self, name: str, path: Path, error: BaseException) -> None:
        self._forget(name)
        self.loaded.pop(name, None)
        self.failed.append(LoadFailure(name, path, describe(error)))
        self._failed(name, "setup", describe(error), path)

    def report(self) -> dict[str, Any]:
        """Which extensions loaded, which did not and why, which are stopped (RPC
        get_state's `extensions`)."""
        return {
            "loaded": list(self.loaded),
            "failed": [
                {"extension": f.extension, "file": display_path(f.path), "error": f.error}
                for f in self.failed
            ],
            "stopped": [
                {"extension": name, "reason": reason}
                for name, reason in self.budget.stopped.items()
            ],
        }

    def load_warnings(self) -> list[str]:
        return [f"extension {display_path(f.path)} was not loaded: {f.error}" for f in self.failed]

    def _forget(self, name: str) -> None:
        """Undo what a failed setup registered halfway."""
        for handlers in self._handlers.values():
            handlers[:] = [h for h in handlers if h[0] != name]
        for command in [c for c in self.commands.values() if c.extension == name]:
            del self.commands[command.name]

    def close(self) -> None:
        self._unsubscribe()
        if self._before_tool in self.controller.before_tool:
            self.controller.before_tool.remove(self._before_tool)
        for task in tuple(self._tasks):
            task.cancel()

    # -- what `Ink` calls ------------------------------------------------------------

    def add_handler(self, extension: str, event_name: str, handler: Handler) -> None:
        self._handlers.setdefault(event_name, []).append((extension, handler))

    def add_command(self, extension: str, name: str, handler: Handler, description: str) -> None:
        taken = self.commands.get(name)
        if name in self.reserved_commands or taken is not None:
            owner = f"extension {taken.extension!r}" if taken else "ink itself"
            self._notice(
                f"Extension {extension!r}: /{name} is taken by {owner}; not registered.",
                "warning",
                kind="extension",
            )
            return
        self.commands[name] = ExtensionCommand(name, description, extension, handler)

    def send_message(
        self,
        extension: str,
        content: str,
        custom_type: str,
        deliver_as: DeliverAs,
        trigger_turn: bool,
    ) -> int | None:
        running = self.controller.state == "running"
        # Whether it makes the model work: start a run, or extend the running one.
        trigger = deliver_as != "next_turn" and (running or trigger_turn)
        self._spend(extension, trigger=trigger)
        entry = self.controller.send_message(
            content,
            source=extension,
            custom_type=custom_type,
            deliver_as=deliver_as,
            trigger_turn=trigger_turn,
        )
        return entry.id if entry is not None else None

    def notify(self, extension: str, text: str, level: NoticeLevel) -> None:
        self._spend(extension, trigger=False)
        self._notice(
            f"[{extension}] {text}", level, kind="extension", data={"extension": extension}
        )

    def _spend(self, extension: str, *, trigger: bool) -> None:
        """Count a call against the extension's budget; raise into it when it is over."""
        was_stopped = extension in self.budget.stopped
        reason = self.budget.spend(extension, trigger=trigger)
        if reason is None:
            return
        if not was_stopped:
            self._stopped(extension, reason)
        raise ExtensionStopped(f"extension {extension!r} is stopped: {reason}")

    def _stopped(self, extension: str, reason: str) -> None:
        error = f"stopped: {reason}; its notices and messages are refused until the next user input"
        self._notice(
            f"Extension {extension!r} was stopped: {reason}. Its notices and messages are "
            "refused until the next user input.",
            "error",
            kind=ERROR_KIND,
            data={"extension": extension, "event": _calling.get("budget"), "error": error},
        )

    # -- commands --------------------------------------------------------------------

    def run_command(self, name: str, argument: str = "") -> bool:
        """Run `/name argument`; False when no extension registered that name."""
        command = self.commands.get(name.removeprefix("/").lower())
        if command is None:
            return False
        # The user ran it: user input, as a prompt is (it may start a turn again).
        self.budget.user_input()
        self._call(command.extension, f"/{command.name}", command.handler, argument, False)
        return True

    # -- events ----------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        self._run_id = event.run_id
        if isinstance(event, UserMessageEvent) and event.source is None:
            self.budget.user_input()
        elif isinstance(event, RunEnd) and event.stop_reason == "aborted":
            # Before any handler of this run's end runs: none of them starts the next.
            self.budget.aborted()
        if self._projection is None or not any(
            handlers for kind, handlers in self._handlers.items() if kind != TOOL_CALL
        ):
            return
        for public in self._projection.project(event):
            self._on_public(public)

    def _on_public(self, public: PublicEvent) -> None:
        kind = public["type"]
        # A failing handler of the error's own events is only logged: no error loops.
        quiet = kind == ERROR_KIND or (public["type"] == "notice" and public["kind"] == ERROR_KIND)
        for extension, handler in tuple(self._handlers.get(kind, ())):
            self._soon(extension, kind, handler, public.copy(), quiet)

    def _soon(
        self, extension: str, what: str, handler: Handler, arg: PublicEvent, quiet: bool
    ) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._call(extension, what, handler, arg, quiet)
            return
        loop.call_soon(self._call, extension, what, handler, arg, quiet)

    def _call(self, extension: str, what: str, handler: Handler, arg: Any, quiet: bool) -> None:
        if extension in self.budget.stopped and not what.startswith("/"):
            return  # stopped until the next user input: its handlers rest too
        token = _calling.set(what)
        try:
            result = handler(arg)
            if inspect.isawaitable(result):
                self._track(asyncio.ensure_future(contained(result)), extension, what, quiet)
        except BaseException as error:  # sys.exit() in a handler must not end ink
            self._handler_failed(extension, what, error, quiet)
        finally:
            _calling.reset(token)

    def _track(
        self, task: asyncio.Future[Any], extension: str, what: str, quiet: bool = False
    ) -> None:
        self._tasks.add(task)

        def done(finished: asyncio.Future[Any]) -> None:
            self._tasks.discard(finished)
            if finished.cancelled():
                return
            error = finished.exception()
            if error is None:
                return
            if what == "setup" and extension in self.loaded:
                self._setup_failed(extension, self.loaded[extension], error)
            else:
                self._handler_failed(extension, what, error, quiet)

        task.add_done_callback(done)

    def _handler_failed(self, extension: str, what: str, error: BaseException, quiet: bool) -> None:
        if isinstance(error, HandlerEscaped):
            error = error.error
        if isinstance(error, ExtensionStopped):
            return  # its refusal, reported once when it was stopped
        if quiet:
            log.error("extension %s failed in %s", extension, what, exc_info=error)
            return
        # Failures count too: a handler that raises on every delta is stopped, not a flood.
        was_stopped = extension in self.budget.stopped
        reason = self.budget.spend(extension, trigger=False)
        if reason is not None:
            if not was_stopped:
                self._stopped(extension, reason)
            log.warning("extension %s failed in %s: %s", extension, what, describe(error))
            return
        self._failed(extension, what, describe(error))

    # -- the tool gate ---------------------------------------------------------------

    async def _before_tool(self, call: ToolCall, signal: AbortSignal) -> str | None:
        handlers = self._handlers.get(TOOL_CALL)
        if not handlers:
            return None
        info = ToolCallInfo(call.name, dict(call.arguments), call.id)
        for extension, handler in tuple(handlers):
            token = _calling.set(TOOL_CALL)
            try:
                verdict = await checked(handler, info)
            except asyncio.CancelledError:
                raise  # a real cancellation (an abort): the scheduler does not run the call
            except GeneratorExit as error:
                # Its own, or this check being closed (then it must not go on): either
                # way the scheduler refuses the call.
                self._handler_failed(extension, TOOL_CALL, error, False)
                raise
            except BaseException as error:  # SystemExit too: fail closed, never through
                self._handler_failed(extension, TOOL_CALL, error, False)
                return (
                    f"Blocked by extension {extension!r}: its check of this call failed "
                    f"({describe(error)}), so the call was not run."
                )
            finally:
                _calling.reset(token)
            if isinstance(verdict, Block):
                return f"Blocked by extension {extension!r}: {verdict.reason}"
            if verdict is not None:
                self._failed(
                    extension,
                    TOOL_CALL,
                    f"the handler returned {type(verdict).__name__}; return block(reason) or None",
                )
        return None

    # -- notices ---------------------------------------------------------------------

    def _failed(self, extension: str, what: str, error: str, path: Path | None = None) -> None:
        if what == "setup":
            where = display_path(path) if path is not None else repr(extension)
            text = f"Extension {where} was not loaded: {error}"
        else:
            text = f"Extension {extension!r} failed in {what}: {error}"
        self._notice(
            text,
            "error",
            kind=ERROR_KIND,
            data={"extension": extension, "event": what, "error": error},
        )

    def _notice(
        self, text: str, level: NoticeLevel, *, kind: str, data: dict[str, Any] | None = None
    ) -> None:
        notice = Notice(text=text, level=level, kind=kind, data=data or {})
        notice.run_id = self._run_id
        self.controller.bus.publish(notice)


_UNSAFE = re.compile(r"\W")


def import_file(path: Path) -> ModuleType:
    """Import a file as a module of its own (a unique name per path, so two folders'
    `guard.py` do not collide)."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"ink_extension_{digest}_{_UNSAFE.sub('_', path.stem)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered first: dataclasses and pickling look a module up by name.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module
