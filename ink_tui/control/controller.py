"""The run controller: the one object a front end talks to.

It owns the run state (idle, running, exited), the input queue, the abort controller of
the current run and the conversation history, and publishes everything on the bus.

- `submit(text, mode)`: idle, a line starts a run (a `!` line runs in the shell); while
  running, it is queued as a steer (Enter) or a follow-up (Alt+Enter). Nothing is refused.
- `interrupt()`: running, the first aborts and the state stays `running` until the run
  has settled; a second before it settles exits with status 130.
- Settling: a completed run (or `max_iterations`) runs what is still queued, in order;
  a failed run runs nothing more, and every queued entry goes back to the editor
  (`InputRestored`) with a notice saying how many. An aborted run does the same by
  default; `interrupt_queue` may instead keep the queue, paused until `resume_queue()`
  or the next submitted line, or send it on as if the run had completed.
- `send_message(...)`: a message a program part (an extension) injects, marked as its
  own: running, a steer or follow-up joins the queue (with its source as the badge) and
  `next_turn` waits for the next run's prompt; idle, `trigger_turn` starts a run with it,
  else it is only recorded in the history for the next model call to see. Restoring the
  queue to the editor hands back the user's entries only: an extension's words must not
  become the user's by being sent from the editor.
- Sub-agents (control/subagents.py): `abort_agent(id)` stops one, `steer`/`follow_up`
  with `agent_id` queue input for one; an interrupt stops the tree, and a run settles
  only after every sub-agent has ended.
- `before_tool`: checks run before each model-requested call (see `core/scheduler.py`);
  `approvals` is the last of them, so a call an extension blocks is never asked about.
  `answer_approval(request_id, decision)` answers an open question, once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ink_tui.control.agent_setup import tool_context
from ink_tui.control.approvals import AnswerError, Approvals
from ink_tui.control.bus import EventBus
from ink_tui.control.checkpointing import Checkpoints
from ink_tui.control.input_queue import InputQueue, QueueEntry, TakeMode, is_shell_line
from ink_tui.control.queue_commands import QueueCommands
from ink_tui.control.run_inputs import Compact, DeliverAs, RunInput, as_input, message_of
from ink_tui.control.run_settings import RunSettings
from ink_tui.control.settling import Outcome, Settling, describe_error
from ink_tui.control.shell_run import run_shell_line
from ink_tui.control.subagents import AgentGone, RunningAgent, Subagents
from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.compaction import CompactionBackoff
from ink_tui.core.context_window import context_tokens, fixed_tokens, window_of
from ink_tui.core.events import (
    ContextUsage,
    Event,
    Notice,
    Rewound,
    RunStart,
    RunState,
    RunStopReason,
    StateChange,
    UserMessageEvent,
)
from ink_tui.core.loop import AgentLoop, LoopResult
from ink_tui.core.messages import Message, QueueMode, UserMessage, new_entry_id
from ink_tui.core.provider_api import Provider
from ink_tui.core.sentence import sentence
from ink_tui.core.tool_api import BeforeTool, Tool, spec_of

if TYPE_CHECKING:
    from ink_tui.control.jobs import JobsWatcher

# Where the pieces live: `settling` ends runs and restores or keeps the queue,
# `run_inputs` turns queued entries and injected messages into what a run starts from,
# `shell_run` runs a `!` line, `approvals` asks the user before a model's call,
# `agent_setup` builds a loop's tool gate (sub-agents' too), `queue_commands` edits the
# queue for front ends.
__all__ = [
    "EXIT_INTERRUPTED",
    "AgentGone",
    "DeliverAs",
    "InterruptOutcome",
    "Outcome",
    "RunController",
    "Spawn",
    "describe_error",
]

log = logging.getLogger(__name__)

InterruptOutcome = Literal["aborting", "exit", "idle"]
Spawn = Callable[[Coroutine[Any, Any, None]], object]

EXIT_INTERRUPTED = 130


class RunController(QueueCommands):
    def __init__(
        self,
        *,
        provider: Provider,
        tools: Sequence[Tool],
        workspace: Path,
        system_prompt: str,
        bus: EventBus | None = None,
        settings: RunSettings | None = None,
        history: list[Message] | None = None,
        spawn: Spawn | None = None,
    ) -> None:
        self.provider = provider
        # This session's commands and what they left running: the bash tool's table and
        # its watcher (set by assemble_controller; None for a bare controller).
        self.jobs: JobsWatcher | None = None
        self.tools = list(tools)
        self.workspace = workspace
        self.system_prompt = system_prompt
        self.bus = bus or EventBus()
        self.settings = settings or RunSettings()
        self.history: list[Message] = history if history is not None else []
        # Outlives each run's loop: a refused compaction is not tried again every run.
        self.compaction_backoff = CompactionBackoff()
        self.queue = InputQueue(self._publish_queue)
        self.state: RunState = "idle"
        self.interrupts = 0
        self.exit_code: int | None = None
        self.queue_paused = False
        self.spawn = spawn
        # Run synchronously by `exit()` before front ends are told: e.g. killing the
        # process groups of commands still running, since exiting does not wait for them.
        self.exit_hooks: list[Callable[[], object]] = []
        # Checks before each call the model asks for (extensions' guards, approvals).
        self.before_tool: list[BeforeTool] = []
        # Injected messages waiting for the next run's prompt (deliver_as="next_turn").
        self.next_turn: list[UserMessage] = []
        # The user's yes or no before bash, write and edit (policy and rules in settings).
        self.approvals = Approvals(
            workspace,
            self._emit,
            policy=self.settings.approval,
            rules=self.settings.approval_allow,
        )
        # Ends each run: its RunEnd, then the queue run on, kept or restored.
        self._settling = Settling(self.queue, self._emit, self._set_paused)
        # What `task` calls start (binds the `task` tools among `tools`).
        self.subagents = Subagents(self, self._emit)
        # The files' checkpoint before each batch that may change them (a store is bound
        # when the session is recorded: checkpoints/binding.py).
        self.checkpoints = Checkpoints(self._emit)
        self.subagents.max_parallel = self.settings.subagents_max_parallel
        self.subagents.max_depth = self.settings.subagents_max_depth
        self.subagents.bind(self.tools)
        self._abort: AbortController | None = None
        self._run_id: str | None = None
        self._runs = 0
        self._driver: asyncio.Future[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def runs_started(self) -> int:
        """How many runs this controller has begun (each run's id is `run-<count>`)."""
        return self._runs

    # -- what front ends call -----------------------------------------------------

    def submit(self, text: str, mode: QueueMode = "steer") -> None:
        """Idle: start a run (or a shell line). Running: queue it with `mode`."""
        if self.state == "exited" or not text.strip():
            return
        if self.state == "running":
            self.queue.add(text, mode)
            return
        self._start(text)

    def send_message(
        self,
        text: str,
        *,
        source: str,
        custom_type: str | None = None,
        deliver_as: DeliverAs = "steer",
        trigger_turn: bool = False,
    ) -> QueueEntry | None:
        """Inject a message from `source` (an extension), marked as its own.

        Returns the queue entry when it was queued. `next_turn` always waits for the next
        run's prompt (`trigger_turn` does not apply to it)."""
        if self.state == "exited" or not text.strip():
            return None
        message = UserMessage(text, "prompt", source=source, custom_type=custom_type)
        if deliver_as == "next_turn":
            self.next_turn.append(message)
            return None
        if self.state == "running":
            return self.queue.add(text, deliver_as, source=source, custom_type=custom_type)
        if trigger_turn:
            self._start(message)
            return None
        # Idle, no turn wanted: into the history only, so the next model call sees it.
        message.kind = deliver_as
        message.entry_id = new_entry_id()
        self.history.append(message)
        self._emit(
            UserMessageEvent(
                text=text,
                kind=deliver_as,
                source=source,
                custom_type=custom_type,
                entry_id=message.entry_id,
            )
        )
        return None

    def answer_approval(self, request_id: str, decision: str, reason: str | None = None) -> bool:
        """Answer an open approval question ("allow", "session", "always", "deny" with an
        optional reason the model reads). An answer arrives once: a second one, or one
        for a question an interrupt closed, is ignored with a notice; False then."""
        try:
            self.approvals.answer(request_id, decision, reason)
        except AnswerError as error:
            message = str(error)
            self._emit(Notice(text=sentence(message[:1].upper() + message[1:]), kind="approval"))
            return False
        return True

    def steer(self, text: str, *, agent_id: str | None = None) -> QueueEntry | None:
        """For sub-agent `agent_id` (its next model call; `AgentGone` if it is not running),
        else as `submit` (idle, it starts a run: None then). `follow_up` alike."""
        return self._deliver(text, "steer", agent_id)

    def follow_up(self, text: str, *, agent_id: str | None = None) -> QueueEntry | None:
        return self._deliver(text, "follow_up", agent_id)

    def _deliver(self, text: str, mode: QueueMode, agent_id: str | None) -> QueueEntry | None:
        if agent_id is not None:
            return self.subagents.deliver(agent_id, text, mode)
        if self.state == "running" and text.strip():
            return self.queue.add(text, mode)
        self.submit(text, mode)
        return None

    def abort_agent(self, agent_id: str) -> RunningAgent:
        """Stop one sub-agent (and those under it); the parent goes on. `AgentGone` if it is
        not running. Its `ended` future resolves with its `SubagentEnd`."""
        return self.subagents.stop(agent_id)

    def resume_queue(self) -> bool:
        """Run what an interrupt left queued (interrupt_queue = "keep"); False if nothing."""
        if self.state != "idle":
            return False
        entry = self.queue.take_first()
        if entry is None:
            self._set_paused(False)
            return False
        self._start(as_input(entry))
        return True

    def compact(self, instructions: str = "") -> bool:
        """Compact the conversation now (/compact); False unless idle."""
        if self.state != "idle":
            return False
        self._start(Compact(instructions.strip()))
        return True

    def _start(self, first: RunInput) -> None:
        self._set_paused(False)
        self._set_state("running")
        self._idle.clear()
        coro = self._drive(first)
        if self.spawn is not None:
            self.spawn(coro)
        else:
            self._driver = asyncio.ensure_future(coro)

    def replace_history(self, history: list[Message], rewound: Rewound) -> None:
        """A rewind (session/rewind.py): the history becomes `history`, and front ends
        hear of it. Idle only (`RuntimeError` otherwise); the queue is not touched."""
        if self.state != "idle":
            raise RuntimeError("a run is in progress: stop it first (Esc), then rewind")
        self.history[:] = history
        self._emit(rewound)
        # The context gauge goes back too: an estimate until the next request reports.
        fixed = fixed_tokens(self.system_prompt, [spec_of(tool) for tool in self.tools])
        self._emit(
            ContextUsage(
                tokens=context_tokens(self.history, fixed), context_window=window_of(self.provider)
            )
        )

    def interrupt(self) -> InterruptOutcome:
        """Ctrl+C / Escape. Idle is left to the front end (clear editor, quit hint)."""
        if self.state != "running":
            return "idle"
        self.interrupts += 1
        if self.interrupts == 1:
            if self._abort is not None:
                self._abort.abort("interrupted by the user")
            self._publish_state()
            self._emit(Notice(text="Interrupting… (Ctrl+C again to quit)", kind="interrupting"))
            return "aborting"
        self.exit(EXIT_INTERRUPTED)
        return "exit"

    def exit(self, code: int = 0) -> None:
        """Leave for good: abort anything running and tell front ends to exit."""
        if self._abort is not None:
            self._abort.abort("the app is exiting")
        self.subagents.close(None)  # ended before front ends hear of the exit
        for hook in self.exit_hooks:
            try:
                hook()
            except Exception:
                log.exception("exit hook failed")
        self.exit_code = code
        self._set_state("exited")
        self._idle.set()

    def abort(self) -> bool:
        """A program's abort: the first interrupt's effect, never an exit however often it
        is called. False when nothing is running."""
        if self.state != "running":
            return False
        if self.interrupts == 0:
            self.interrupt()
        return True

    async def wait_idle(self) -> None:
        """Wait until no run is in progress (idle or exited)."""
        await self._idle.wait()

    async def aclose(self) -> None:
        if self._abort is not None:
            self._abort.abort("the app is exiting")
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()
        await self.provider.aclose()

    # -- running ------------------------------------------------------------------

    async def _drive(self, first: RunInput) -> None:
        """Run `first`, then whatever is queued, until the queue is empty or a run stops."""
        item: RunInput | None = first
        try:
            while item is not None and self.state == "running":
                if isinstance(item, Compact):
                    outcome = await self._run_compact(item.instructions)
                elif isinstance(item, str) and is_shell_line(item):
                    outcome = await self._run_shell(item)
                else:
                    outcome = await self._run_agent(item)
                if outcome != "completed":
                    break
                entry = self.queue.take_first()
                item = as_input(entry) if entry is not None else None
        finally:
            self._abort = None
            self._run_id = None
            if self.state != "exited":
                self._set_state("idle")
            self._idle.set()

    def _begin_run(self) -> AbortController:
        self._runs += 1
        self._run_id = f"run-{self._runs}"
        self._abort = AbortController()
        self.interrupts = 0
        self._publish_state()
        return self._abort

    async def _run_agent(self, prompt: str | UserMessage) -> Outcome:
        abort = self._begin_run()
        text = prompt.content if isinstance(prompt, UserMessage) else prompt
        self._emit(RunStart(kind="agent", prompt=text))
        steering_mode = self.settings.steering_mode
        follow_up_mode = self.settings.follow_up_mode
        lead, self.next_turn = self.next_turn, []

        def take(mode: QueueMode, how: TakeMode) -> list[UserMessage]:
            return [message_of(e) for e in self.queue.take(mode, how)]

        loop = self._loop(
            abort,
            lambda: take("steer", steering_mode),
            lambda: take("follow_up", follow_up_mode),
        )
        started = time.monotonic()
        try:
            result = await loop.run(prompt, lead)
        except Exception as error:
            log.debug("run failed", exc_info=True)
            self.subagents.close(None)
            return self._settling.settle_failure(error, started)
        self.subagents.close(None)  # those the tool step gave up on end before the run
        return self._settle(result, started)

    def _loop(
        self,
        abort: AbortController,
        take_steering: Callable[[], list[UserMessage]],
        take_follow_up: Callable[[], list[UserMessage]],
    ) -> AgentLoop:
        return AgentLoop(
            provider=self.provider,
            tools=self.tools,
            system_prompt=self.system_prompt,
            history=self.history,
            ctx=tool_context(self, abort.signal),
            emit=self._emit,
            take_steering=take_steering,
            take_follow_up=take_follow_up,
            config=self.settings.loop,
            backoff=self.compaction_backoff,
        )

    async def _run_compact(self, instructions: str) -> Outcome:
        """/compact: summarise the older part now. It takes no queued input."""
        abort = self._begin_run()
        self._emit(RunStart(kind="compact", prompt=f"/compact {instructions}".strip()))
        loop = self._loop(abort, list, list)
        started = time.monotonic()
        try:
            done = await loop.compact("manual", instructions)
        except AbortError:
            return self._settle(LoopResult("aborted", usage=loop.usage), started)
        except Exception as error:
            log.debug("compaction failed", exc_info=True)
            return self._settling.settle_failure(error, started)
        if not done:
            self._emit(
                Notice(
                    text="Nothing to compact yet: the conversation is only its latest turn.",
                    kind="hint",
                )
            )
        return self._settle(LoopResult("completed", usage=loop.usage), started)

    async def _run_shell(self, line: str) -> Outcome:
        """A `!` line: run locally in the workspace shell, never sent to the model."""
        abort = self._begin_run()
        self._emit(RunStart(kind="shell", prompt=line))
        started = time.monotonic()
        try:
            await run_shell_line(
                line,
                f"shell-{self._runs}",
                self.tools,
                tool_context(self, abort.signal, checked=False),
                self._emit,
            )
        except Exception as error:
            return self._settling.settle_failure(error, started)
        stop: RunStopReason = "aborted" if abort.signal.aborted else "completed"
        return self._settle(LoopResult(stop), started)

    def _settle(self, result: LoopResult, started: float) -> Outcome:
        return self._settling.settle(result, started, self.settings)

    # -- publishing ---------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        event.run_id = self._run_id
        self.bus.publish(event)

    def _set_state(self, state: RunState) -> None:
        self.state = state
        if state != "running":
            self.interrupts = 0
        self._publish_state()

    def _publish_state(self) -> None:
        self._emit(
            StateChange(state=self.state, interrupts=self.interrupts, exit_code=self.exit_code)
        )
