"""The sub-agent scenes of `screen_states.py`: task rows folded, unfolded, two running at
once, one stopped, one steered. Each sub-agent is answered by its own prompt (its first
user message), so two running side by side get their own replies whatever the order of
their requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from ink_tui.tools import default_tools
from ink_tui.tools.task import TaskTool
from ink_tui.ui.app import InkApp
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, Reply, ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import type_text, wait_until

TOTAL_PROMPT = (
    "Find where the cart's total is computed under src/ and say whether it rounds. "
    "Report the file, the function and one line on how it works."
)
TESTS_PROMPT = "List the tests that cover the cart, with what each one checks."
TOTAL_ANSWER = (
    "`total()` is in `src/shop/cart.py`: it sums `price * qty` over the items as a "
    "`Decimal`, starting from `Decimal(0)`. **It never rounds.**"
)
TESTS_ANSWER = (
    "One test: `tests/test_cart.py::test_total`, which only asserts `True`, so the "
    "total is **not tested** at all."
)
SUMMARY = (
    "The total is computed in `src/shop/cart.py` and never rounded, and its one test "
    "checks nothing. Next step: a real test for `total()`."
)
STEER = "Also say whether add() returns the cart"


def _by_prompt(server: ScriptedServer, prompt: str, *replies: Reply) -> None:
    queue = list(replies)

    def respond(body: dict[str, Any]) -> Reply | None:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        return queue.pop(0) if users and users[0] == prompt and queue else None

    server.responders.append(respond)


def _two_tasks() -> Reply:
    return tool_reply(
        [
            ("task", {"description": "Find the cart total", "prompt": TOTAL_PROMPT}, "call_1"),
            ("task", {"description": "List the cart's tests", "prompt": TESTS_PROMPT}, "call_2"),
        ],
        text="Two independent questions: one sub-agent each.",
    )


def task_tools(_: list[Any]) -> list[Any]:
    return [*default_tools(), TaskTool()]


def _app(pilot: Pilot) -> InkApp:
    assert isinstance(pilot.app, InkApp)
    return pilot.app


def _rows(pilot: Pilot) -> list[TaskBlock]:
    return pilot.app.query_one(Transcript).blocks_of(TaskBlock)


async def _start(pilot: Pilot, prompt: str) -> None:
    await type_text(pilot, prompt)
    await pilot.press("enter")
    await pilot.pause()


async def _settle(pilot: Pilot) -> None:
    controller = _app(pilot).controller
    assert controller is not None
    await controller.wait_idle()
    await pilot.pause(0.1)


def _done_script(server: ScriptedServer) -> list[Any]:
    _by_prompt(
        server,
        TOTAL_PROMPT,
        tool_reply([("grep", {"pattern": "def total", "path": "src"})]),
        text_reply(TOTAL_ANSWER),
    )
    _by_prompt(
        server,
        TESTS_PROMPT,
        tool_reply([("read", {"path": "tests/test_cart.py"})]),
        text_reply(TESTS_ANSWER),
    )
    server.push(_two_tasks(), text_reply(SUMMARY))
    return []


async def folded(pilot: Pilot, _: list[Any]) -> None:
    await _start(pilot, "where is the cart total computed, and is it tested?")
    await _settle(pilot)


async def unfolded(pilot: Pilot, held: list[Any]) -> None:
    await folded(pilot, held)
    # Tab to the transcript (the cursor on the last row), up to the first, Enter.
    await pilot.press("tab", "up", "enter")
    first = _rows(pilot)[0]
    await wait_until(pilot, lambda: first.expanded and len(first.children) >= 3)
    await pilot.pause(0.1)


def _running_script(server: ScriptedServer) -> list[Any]:
    one, two = Gate(), Gate()
    _by_prompt(server, TOTAL_PROMPT, text_reply(TOTAL_ANSWER, pieces=3, gate=one))
    _by_prompt(
        server,
        TESTS_PROMPT,
        tool_reply([("read", {"path": "tests/test_cart.py"})]),
        text_reply(TESTS_ANSWER, pieces=2, gate=two),
    )
    server.push(_two_tasks(), text_reply(SUMMARY))
    return [one, two]


async def parallel(pilot: Pilot, held: list[Any]) -> None:
    await _start(pilot, "where is the cart total computed, and is it tested?")
    for gate in held:
        await wait_gate(gate)
    rows = _rows(pilot)
    await wait_until(pilot, lambda: len(rows) == 2 and all(r.doing == "writing" for r in rows))
    # Tab to the transcript: the row under the cursor names its keys.
    await pilot.press("tab")
    await pilot.pause(0.1)


async def stopped(pilot: Pilot, held: list[Any]) -> None:
    await _start(pilot, "where is the cart total computed, and is it tested?")
    for gate in held:
        await wait_gate(gate)
    controller = _app(pilot).controller
    assert controller is not None
    first = _rows(pilot)[0]
    await wait_until(pilot, lambda: first.doing == "writing")
    assert first.agent_id is not None
    controller.abort_agent(first.agent_id)
    held[1].open()
    await _settle(pilot)


def _steered_script(server: ScriptedServer) -> list[Any]:
    gate = Gate()
    _by_prompt(
        server,
        TOTAL_PROMPT,
        text_reply("Looking at `src/shop/cart.py`.", pieces=2, gate=gate),
        text_reply(TOTAL_ANSWER + " `add()` appends the item and returns the cart."),
    )
    server.push(
        tool_reply(
            [("task", {"description": "Find the cart total", "prompt": TOTAL_PROMPT}, "call_1")]
        ),
        text_reply(SUMMARY),
    )
    return [gate]


async def steered(pilot: Pilot, held: list[Any]) -> None:
    await _start(pilot, "where is the cart total computed?")
    await wait_gate(held[0])
    controller = _app(pilot).controller
    assert controller is not None
    (row,) = _rows(pilot)
    assert row.agent_id is not None
    controller.steer(STEER, agent_id=row.agent_id)
    held[0].open()
    await _settle(pilot)
    await pilot.press("tab", "enter")
    await wait_until(pilot, lambda: row.expanded)
    await pilot.pause(0.1)


# (name, title, script, run) of each scene; `screen_states.SCENES` makes them scenes.
TASK_SCENES: list[tuple[str, str, Callable[..., Any], Callable[..., Any]]] = [
    ("task-rows", "Two sub-agents done: their task rows, folded", _done_script, folded),
    (
        "task-row-unfolded",
        "A task row unfolded: the sub-agent's own transcript under it",
        _done_script,
        unfolded,
    ),
    (
        "task-rows-running",
        "Two sub-agents running at once; the cursor's row names its keys",
        _running_script,
        parallel,
    ),
    (
        "task-row-stopped",
        "One sub-agent stopped by the user; the other finished, the parent went on",
        _running_script,
        stopped,
    ),
    (
        "task-row-steered",
        "A steered sub-agent: the steer in its transcript, where it took it",
        _steered_script,
        steered,
    ),
]
