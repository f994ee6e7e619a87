"""Property: nothing the user types is lost, duplicated or reordered by the run controller.

Hypothesis generates sequences of user actions (submit a steer, a follow-up or a `!`
shell line; edit, re-mode, move or remove a queued entry, including one the loop has
already taken; pull the queue back to the editor; interrupt) interleaved with what the
model does (answer, ask for a tool, fail) and tools finishing. The real `RunController`,
`InputQueue`, `AgentLoop`, `ToolScheduler` and bash tool run them; the reference model
in `queue_reference_model.py`, written from the contract, predicts the outcome.

Checked at every quiescent point: the run state and the queue (texts, modes, order)
match the model. Checked at the end: every model request carried exactly the user texts
the model predicts (order and batching: steer `all` / `one-at-a-time`, follow-ups, the
skip flag after a stop-point take), the same for user messages, shell lines, restores
and run endings; and every input the user typed ended exactly once: sent to the model,
run in the shell, restored to the editor, or deleted.

The model is an in-process `Provider` whose every reply the test hands over step by
step, not the loopback HTTP server: the test needs to decide each reply *after* seeing
the request and to act while it is pending, and an HTTP round trip per model call would
cap the run at a few dozen examples. The HTTP path is covered by the other queue tests
and the interrupt storm (`test_interrupt_storm.py`), which uses the scripted server.

Normal runs use a few hundred examples; `pytest --hypothesis-profile=long` (or
HYPOTHESIS_PROFILE=long) runs thousands.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ink_tui.control.controller import RunController
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.abort import AbortSignal
from ink_tui.core.events import Event, InputRestored, RunEnd, RunStart, ToolEnd, UserMessageEvent
from ink_tui.core.loop_config import LoopConfig
from ink_tui.core.messages import AssistantMessage, ToolCall, UserMessage
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    StreamEvent,
    TextChunk,
)
from ink_tui.core.tool_api import ToolContext, ToolResult
from ink_tui.tools.bash import BashTool
from tests.queue_reference_model import Mode, ReferenceModel

# -- a model and a tool the test moves step by step ---------------------------------

Step = Literal["stop", "tools", "tools_wait", "fail", "fail_partial"]


class SteppedProvider:
    """Records each request's user texts, then waits for the test to say how to reply."""

    name = "stepped"
    model = "stepped-model"
    is_demo = False

    def __init__(self) -> None:
        self.requests: list[list[str]] = []
        self._reply: asyncio.Future[Step] | None = None
        self._signal: AbortSignal | None = None
        self._calls = 0

    @property
    def parked(self) -> bool:
        """Waiting for the test's word: neither answered nor aborted yet."""
        return (
            self._reply is not None
            and not self._reply.done()
            and not (self._signal is not None and self._signal.aborted)
        )

    async def stream(
        self, request: ModelRequest, signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append([m.content for m in request.messages if isinstance(m, UserMessage)])
        self._reply = asyncio.get_running_loop().create_future()
        self._signal = signal
        try:
            async with signal.scope():
                step = await self._reply
        finally:
            self._reply = None
        self._calls += 1
        if step in ("fail", "fail_partial"):
            if step == "fail_partial":
                yield TextChunk("half an ans")
            raise ProviderError("scripted failure: 503 Service Unavailable", status=503)
        if step == "stop":
            yield TextChunk("done.")
            yield ReplyDone(AssistantMessage(text="done.", model=self.model))
            return
        call = ToolCall(
            id=f"call-{self._calls}", name="step", arguments={"wait": step == "tools_wait"}
        )
        yield ReplyDone(
            AssistantMessage(tool_calls=[call], finish_reason="tool_calls", model=self.model)
        )

    def reply(self, step: Step) -> None:
        assert self._reply is not None and self.parked
        self._reply.set_result(step)

    async def aclose(self) -> None:
        pass


class StepTool:
    """A tool that finishes at once, or (`wait`) when the test says so or the run aborts."""

    name = "step"
    description = "A test tool."
    parameters: dict[str, Any] = {  # noqa: RUF012 - the Tool protocol's shape
        "type": "object",
        "properties": {"wait": {"type": "boolean"}},
        "required": ["wait"],
        "additionalProperties": False,
    }
    concurrency_safe = False

    def __init__(self) -> None:
        self._done: asyncio.Future[None] | None = None
        self._signal: AbortSignal | None = None

    @property
    def parked(self) -> bool:
        return (
            self._done is not None
            and not self._done.done()
            and not (self._signal is not None and self._signal.aborted)
        )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not args["wait"]:
            return ToolResult("finished at once")
        self._done = asyncio.get_running_loop().create_future()
        self._signal = ctx.signal
        aborted = asyncio.ensure_future(ctx.signal.wait())
        try:
            await asyncio.wait({self._done, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._done = None
            aborted.cancel()
        if ctx.signal.aborted:
            return ToolResult.error("interrupted")
        return ToolResult("finished when told")

    def finish(self) -> None:
        assert self._done is not None and self.parked
        self._done.set_result(None)


# -- the actions ----------------------------------------------------------------------


@dataclass(frozen=True)
class Submit:
    mode: Mode
    shell: bool = False


@dataclass(frozen=True)
class Edit:
    pick: int
    mode: Mode
    shell: bool = False


@dataclass(frozen=True)
class SetMode:
    pick: int
    mode: Mode


@dataclass(frozen=True)
class Toggle:
    pick: int


@dataclass(frozen=True)
class Move:
    pick: int
    offset: int


@dataclass(frozen=True)
class MoveTo:
    pick: int
    index: int


@dataclass(frozen=True)
class Remove:
    pick: int


@dataclass(frozen=True)
class Pull:
    pass


@dataclass(frozen=True)
class Interrupt:
    pass


@dataclass(frozen=True)
class Model:
    step: Step


@dataclass(frozen=True)
class ToolDone:
    pass


Action = (
    Submit | Edit | SetMode | Toggle | Move | MoveTo | Remove | Pull | Interrupt | Model | ToolDone
)

modes = st.sampled_from(["steer", "follow_up"])
picks = st.integers(0, 30)
# (weight, strategy): submits weigh most, so queues build up before the model stops.
_weighted: list[tuple[int, st.SearchStrategy[Action]]] = [
    (10, st.builds(Submit, modes, st.sampled_from([False, False, False, False, True]))),
    (2, st.builds(Edit, picks, modes, st.sampled_from([False, False, False, True]))),
    (1, st.builds(SetMode, picks, modes)),
    (1, st.builds(Toggle, picks)),
    (1, st.builds(Move, picks, st.integers(-3, 3))),
    (1, st.builds(MoveTo, picks, st.integers(0, 6))),
    (2, st.builds(Remove, picks)),
    (1, st.just(Pull())),
    (1, st.just(Interrupt())),
    (3, st.just(Model("stop"))),
    (2, st.just(Model("tools"))),
    (2, st.just(Model("tools_wait"))),
    (1, st.sampled_from([Model("fail"), Model("fail_partial")])),
    (2, st.just(ToolDone())),
]
# (one_of drops repeated strategies, so the weights pick from a list instead.)
actions: st.SearchStrategy[Action] = st.sampled_from(
    [strategy for weight, strategy in _weighted for _ in range(weight)]
).flatmap(lambda strategy: strategy)
# Lists drawn directly are mostly short; a length drawn first gives scripts long enough
# for queues to build up, and still shrinks (the length shrinks towards 0).
scripts = st.integers(0, 60).flatmap(lambda n: st.lists(actions, min_size=n, max_size=n))
run_settings = st.fixed_dictionaries(
    {
        "steering_mode": st.sampled_from(["all", "one-at-a-time"]),
        "follow_up_mode": st.sampled_from(["one-at-a-time", "all"]),
        "max_iterations": st.sampled_from([1, 2, 3, 100]),
    }
)

# -- the driver -----------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@dataclass
class Scenario:
    settings: dict[str, Any]
    workspace: Path
    provider: SteppedProvider = field(default_factory=SteppedProvider)
    tool: StepTool = field(default_factory=StepTool)
    recorder: Recorder = field(default_factory=Recorder)
    # Reference ids of every entry ever queued -> the controller's ids.
    ids: dict[int, int] = field(default_factory=dict)
    typed: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    counter: int = 0

    def __post_init__(self) -> None:
        self.model = ReferenceModel(
            steering_mode=self.settings["steering_mode"],
            follow_up_mode=self.settings["follow_up_mode"],
            max_iterations=self.settings["max_iterations"],
        )
        self.controller = RunController(
            provider=self.provider,
            tools=[BashTool(), self.tool],
            workspace=self.workspace,
            system_prompt="test",
            settings=RunSettings(
                steering_mode=self.settings["steering_mode"],
                follow_up_mode=self.settings["follow_up_mode"],
                loop=LoopConfig(max_iterations=self.settings["max_iterations"], abort_grace_s=5),
            ),
        )
        self.controller.bus.subscribe(self.recorder)

    def new_text(self, shell: bool, mode: Mode) -> str:
        # Unique words, no blank lines (a restore joins entries with one), shell-safe.
        self.counter += 1
        word = f"{'s' if mode == 'steer' else 'f'}{self.counter}"
        text = f"!echo {word}" if shell else f"input {word}"
        self.typed.append(text)
        return text

    def pick(self, pick: int) -> tuple[int, int] | None:
        if not self.ids:
            return None
        ref_id = sorted(self.ids)[pick % len(self.ids)]
        return ref_id, self.ids[ref_id]

    def learn_id(self, ref_id: int | None) -> None:
        """The reference queued a new entry: find its controller id (the queue's last)."""
        if ref_id is None:
            return
        entries = self.controller.queue.entries
        assert entries, "the reference queued an entry, the controller did not"
        self.ids[ref_id] = entries[-1].id

    async def apply(self, action: Action) -> None:
        c, m = self.controller, self.model
        match action:
            case Submit(mode=mode, shell=shell):
                text = self.new_text(shell, mode)
                c.submit(text, mode)
                self.learn_id(m.submit(text, mode))
            case Edit(pick=pick, mode=mode, shell=shell):
                target = self.pick(pick)
                if target is None:
                    return
                live = c.queue.get(target[1])
                text = self.new_text(shell, mode)
                if live is not None:
                    self.replaced.append(live.text)
                else:
                    event(f"an edit of a taken entry, {'running' if m.running else 'idle'}")
                c.edit_entry(target[1], text, mode)
                self.learn_id(m.edit(target[0], text, mode))
            case SetMode(pick=pick, mode=mode):
                if target := self.pick(pick):
                    c.set_entry_mode(target[1], mode)
                    m.set_mode(target[0], mode)
            case Toggle(pick=pick):
                if target := self.pick(pick):
                    c.toggle_entry_mode(target[1])
                    m.toggle_mode(target[0])
            case Move(pick=pick, offset=offset):
                if target := self.pick(pick):
                    c.move_entry(target[1], offset)
                    m.move(target[0], offset)
            case MoveTo(pick=pick, index=index):
                if target := self.pick(pick):
                    c.move_entry_to(target[1], index)
                    m.move_to(target[0], index)
            case Remove(pick=pick):
                if target := self.pick(pick):
                    entry = c.remove_entry(target[1])
                    if entry is not None:
                        self.deleted.append(entry.text)
                    assert (entry.text if entry else None) == m.remove(target[0])
            case Pull():
                c.pull_queue_to_editor()
                m.pull_to_editor()
            case Interrupt():
                c.interrupt()
                m.interrupt()
            case Model(step=step):
                if m.phase != "model":
                    return
                self.provider.reply(step)
                if step == "stop":
                    m.model_stop()
                elif step in ("tools", "tools_wait"):
                    m.model_tools(wait=step == "tools_wait")
                else:
                    m.model_fail()
            case ToolDone():
                if m.phase != "tool":
                    return
                self.tool.finish()
                m.tool_done()
        await self.quiesce()
        self.check_step(action)

    async def quiesce(self) -> None:
        """Let the controller run until it waits on the test (or is idle)."""
        c = self.controller
        for spin in range(20_000):
            if self.provider.parked or self.tool.parked:
                return
            if c.state == "idle" and c._idle.is_set():
                return
            # Spin on the loop first; shell lines need real time.
            await asyncio.sleep(0 if spin < 200 else 0.001)
        raise AssertionError(f"the controller never came to rest (state {c.state})")

    def check_step(self, action: Action) -> None:
        c, m = self.controller, self.model
        where = f"after {action}"
        assert c.state == ("running" if m.running else "idle"), where
        assert self.provider.parked == (m.phase == "model"), where
        assert self.tool.parked == (m.phase == "tool"), where
        actual = [(e.text, e.mode) for e in c.queue.entries]
        assert actual == [(e.text, e.mode) for e in m.queue], where
        assert self.provider.requests == m.requests, where

    async def finish(self) -> None:
        """Let the model answer and tools finish until the controller is idle."""
        for _ in range(500):
            if self.model.phase == "model":
                await self.apply(Model("stop"))
            elif self.model.phase == "tool":
                await self.apply(ToolDone())
            else:
                return
        raise AssertionError("the run never ended")

    def batches(self) -> list[list[str]]:
        """User texts added to the history between one model request and the next."""
        previous: list[str] = []
        out = []
        for request in self.provider.requests:
            out.append(request[len(previous) :])
            previous = request
        return out

    def check_end(self) -> None:
        c, m, events = self.controller, self.model, self.recorder
        assert c.state == "idle" and len(c.queue) == 0
        sent = [(e.kind, e.text) for e in events.of(UserMessageEvent)]
        shell = [e.prompt for e in events.of(RunStart) if e.kind == "shell"]
        restored = [e.text for e in events.of(InputRestored)]
        assert self.provider.requests == m.requests
        assert sent == m.user_messages
        assert shell == m.shell_runs
        assert restored == m.restored
        ends = [e.stop_reason or "failed" for e in events.of(RunEnd)]
        assert ends == m.run_ends
        assert len(events.of(RunStart)) == len(events.of(RunEnd))
        # A shell line really ran: its echo is in the result.
        outputs = [e.result.content for e in events.of(ToolEnd) if e.call.id.startswith("shell-")]
        assert [o.splitlines()[0] for o in outputs] == [
            line.removeprefix("!echo ") for line in shell
        ]

        # The property itself, from what was observed: every input ends exactly once.
        fates: Counter[str] = Counter()
        fates.update(text for _, text in sent)
        fates.update(shell)
        fates.update(part for text in restored for part in text.split("\n\n"))
        fates.update(self.deleted)
        expected = Counter(self.typed)
        expected.subtract(self.replaced)
        assert fates == +expected, (fates, expected)
        sent_to_model = {text for request in self.provider.requests for text in request}
        assert {text for _, text in sent} <= sent_to_model
        # ...and where each ended is where the contract says.
        observed = {text: "sent" for _, text in sent}
        observed.update(dict.fromkeys(shell, "shell"))
        observed.update({p: "restored" for t in restored for p in t.split("\n\n")})
        observed.update(dict.fromkeys(self.deleted, "deleted"))
        assert observed == m.fates
        assert sorted(observed) == sorted(m.inputs)
        # What the example exercised (`pytest --hypothesis-show-statistics`).
        for how in sorted(set(observed.values())):
            event(f"an input was {how}")
        for how in sorted(set(m.run_ends)):
            event(f"a run ended {how}")
        event(f"model requests: {min(len(m.requests), 10)}{'+' if len(m.requests) >= 10 else ''}")
        if any(len(batch) > 1 for batch in self.batches()):
            event("several inputs in one batch")


async def play(config: dict[str, Any], script: list[Action], workspace: Path) -> None:
    scenario = Scenario(config, workspace)
    try:
        for action in script:
            await scenario.apply(action)
        await scenario.finish()
        scenario.check_end()
    finally:
        await scenario.controller.aclose()


# The loaded profile decides the example count (tests/conftest.py); shrinking a failure
# runs many more examples, so the time limit grows with it.
@pytest.mark.timeout(120 + settings().max_examples // 5)
@given(config=run_settings, first=modes, script=scripts)
def test_every_input_ends_exactly_once_where_the_contract_says(
    config: dict[str, Any], first: Mode, script: list[Action]
) -> None:
    # Every script starts with a line typed while idle, so a run is under way.
    with tempfile.TemporaryDirectory() as workspace:
        asyncio.run(play(config, [Submit(first), *script], Path(workspace)))
