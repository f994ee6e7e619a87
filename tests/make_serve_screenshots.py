"""Pictures of the `ink serve` page: `python -m tests.make_serve_screenshots [name ...]`.

Each scene drives the real `ink serve` (model: the loopback scripted server) in Debian's
chromium and saves `assets/serve-<name>.png`.
"""

from __future__ import annotations

import sys
import tempfile
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.scripted_server import Gate, Reply, ScriptedServer, text_reply, tool_reply
from tests.serve_page_helpers import chromium, ink_serve

ASSETS = Path(__file__).resolve().parent.parent / "assets"

ANSWER = (
    "## What this project does\n\n"
    "**acme-shop** is a small order service:\n\n"
    "- `cart.py` holds the cart and its `total()`\n"
    "- `README.md` describes the HTTP API\n\n"
    "```python\ndef total(items):\n    return sum(items)\n```\n\n"
    "Run `pytest -q` to check it; see [the docs](https://example.com/acme) for more."
)


def send(page: Page, text: str, key: str = "Enter") -> None:
    page.locator("#input").fill(text)
    page.locator("#input").press(key)


def new_session(page: Page) -> None:
    toggle = page.get_by_role("button", name="Sessions")
    if toggle.is_visible():
        toggle.click()
    page.get_by_role("button", name="+ New session").click()
    expect(page.locator("#state")).to_have_text("idle")


def settled(page: Page) -> None:
    expect(page.locator("#state")).to_contain_text("settled")


def allow_once(page: Page) -> None:
    """`ink serve` asks before a command (its default policy): say yes."""
    page.get_by_role("button", name="Allow once").click()


def welcome(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    """The page as first met: no session yet, the box takes text and Enter opens one."""
    expect(page.locator("#connection")).to_have_text("connected")
    page.locator("#input").fill("what is in this project?")
    expect(page.locator("#send")).to_be_enabled()


def idle(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    server.push(text_reply("The tests pass: 12 passed in 0.4s."))
    server.push(
        tool_reply(
            [("read", {"path": "README.md"}), ("read", {"path": "cart.py"}), ("ls", {})],
            text="Let me look at the project first.",
        ),
        text_reply(ANSWER, pieces=6),
    )
    new_session(page)
    send(page, "run the tests")
    settled(page)
    new_session(page)
    send(page, "explain what this project does")
    settled(page)
    page.reload()
    expect(page.locator("#state")).to_have_text("idle")
    page.locator(".tool-row").nth(1).click()


def streaming(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    server.push(
        tool_reply(
            [("read", {"path": "cart.py"}), ("grep", {"pattern": "total", "path": "."})],
            text="I'll look at the cart first.",
        ),
        tool_reply(
            [("bash", {"command": "sleep 30"})],
            text="`total()` sums the item prices; it ignores **quantities**. Running the tests:",
        ),
    )
    new_session(page)
    send(page, "why is the cart total wrong for two of the same item?")
    allow_once(page)
    expect(page.locator(".tool[data-state='running']")).to_have_count(1)
    page.wait_for_timeout(1300)


def queue(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    gate = Gate()
    gates.append(gate)
    server.push(text_reply(ANSWER, pieces=3, gate=gate))
    new_session(page)
    send(page, "explain the cart")
    assert gate.reached.wait(10)
    send(page, "keep the public API of cart.py unchanged")
    send(page, "then add a changelog entry", "Alt+Enter")
    send(page, "and run the tests when you are done", "Control+Enter")
    expect(page.locator("#queue-list .q-entry")).to_have_count(3)
    page.locator("#input").fill("also check the")
    page.locator("#queue-list .q-entry").nth(1).hover()


def stopped(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    gate = Gate()
    gates.append(gate)
    server.push(text_reply("Refactoring the cart: first I will split", pieces=2, gate=gate))
    new_session(page)
    send(page, "refactor the cart module")
    assert gate.reached.wait(10)
    send(page, "keep the public API of cart.py unchanged")
    send(page, "then add a changelog entry", "Alt+Enter")
    expect(page.locator("#queue-list .q-entry")).to_have_count(2)
    page.locator("#input").fill("and explain why")
    page.get_by_role("button", name="■ Stop").click()
    expect(page.locator("#state")).to_have_text("settled · aborted")


def narrow(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    server.push(
        tool_reply([("read", {"path": "cart.py"})], text="Looking at the cart."),
        tool_reply(
            [("bash", {"command": "sleep 30"})],
            text="**acme-shop** is a small order service; `total()` sums the prices. Tests:",
        ),
    )
    new_session(page)
    send(page, "explain the cart")
    allow_once(page)
    expect(page.locator(".tool[data-state='running']")).to_have_count(1)
    send(page, "keep the public API unchanged")
    send(page, "then add a changelog entry", "Alt+Enter")
    expect(page.locator("#queue-list .q-entry")).to_have_count(2)
    page.wait_for_timeout(800)


def approval(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    server.push(
        tool_reply(
            [("read", {"path": "cart.py"}), ("read", {"path": "README.md"})],
            text="I'll read the cart and the README first.",
        ),
        tool_reply(
            [("bash", {"command": "pytest -q tests/test_cart.py"})],
            text="`total()` sums the prices and ignores **quantities**. Let me run its tests:",
        ),
    )
    new_session(page)
    send(page, "why is the cart total wrong for two of the same item?")
    expect(page.locator("#question")).to_be_visible()
    expect(page.locator("#state")).to_have_text("waiting for your answer")


def subagents(page: Page, server: ScriptedServer, gates: list[Gate]) -> None:
    """Three sub-agents: one unfolded while it writes, one stopped, one being steered."""
    writing, steered, stopped_gate = Gate(), Gate(), Gate()
    gates.extend([writing, steered, stopped_gate])
    replies: dict[str, deque[Reply]] = {
        "Find where the cart total is computed.": deque(
            [
                tool_reply(
                    [("read", {"path": "cart.py"})], text="I'll read the cart module first."
                ),
                text_reply(
                    "`total()` in **cart.py** sums the prices and ignores each item's "
                    "quantity, so two of the same item count once.",
                    pieces=4,
                    gate=writing,
                ),
            ]
        ),
        "Check the README for the pricing rules.": deque(
            [text_reply("The README says prices are per item; nothing", pieces=2, gate=steered)]
        ),
        "Run the whole test suite.": deque(
            [text_reply("Starting the suite", pieces=2, gate=stopped_gate)]
        ),
    }

    def respond(body: dict[str, Any]) -> Reply | None:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        queue = replies.get(users[0]) if users else None
        return queue.popleft() if queue else None

    server.responders.append(respond)
    server.push(
        tool_reply(
            [
                (
                    "task",
                    {
                        "description": "find the total",
                        "prompt": "Find where the cart total is computed.",
                    },
                    "call_1",
                ),
                (
                    "task",
                    {
                        "description": "read the pricing rules",
                        "prompt": "Check the README for the pricing rules.",
                    },
                    "call_2",
                ),
                (
                    "task",
                    {"description": "run the tests", "prompt": "Run the whole test suite."},
                    "call_3",
                ),
            ],
            text="I'll split this into three tasks.",
        )
    )
    new_session(page)
    send(page, "why is the cart total wrong for two of the same item?")
    for gate in (writing, steered, stopped_gate):
        assert gate.reached.wait(15)
    rows = page.locator("#transcript > .tool.task")
    rows.nth(2).get_by_role("button", name="Stop").click()
    expect(rows.nth(2).locator(".state-word")).to_have_text("stopped")
    rows.nth(0).locator(".tool-row").first.click()
    expect(rows.nth(0).locator(".task-transcript .tool")).to_have_count(1)
    rows.nth(1).get_by_role("button", name="Steer").click()
    rows.nth(1).locator(".task-steer-box textarea").fill("Also look for a discount rule")
    page.wait_for_timeout(1200)


SCENES: dict[str, tuple[Callable[[Page, ScriptedServer, list[Gate]], None], dict[str, int]]] = {
    "welcome": (welcome, {"width": 1280, "height": 800}),
    "idle": (idle, {"width": 1280, "height": 800}),
    "streaming": (streaming, {"width": 1280, "height": 800}),
    "queue": (queue, {"width": 1280, "height": 800}),
    "stopped": (stopped, {"width": 1280, "height": 800}),
    "approval": (approval, {"width": 1280, "height": 800}),
    "subagents": (subagents, {"width": 1280, "height": 800}),
    "narrow": (narrow, {"width": 390, "height": 800}),
}


def shoot(browser: Any, name: str) -> Path:
    scene, viewport = SCENES[name]
    server = ScriptedServer()
    gates: list[Gate] = []
    with tempfile.TemporaryDirectory(prefix="ink-serve-shot-") as root:
        try:
            with ink_serve(server.base_url, Path(root)) as served:
                context = browser.new_context(viewport=viewport)
                page = context.new_page()
                page.set_default_timeout(15_000)
                page.goto(served.url)
                scene(page, server, gates)
                path = ASSETS / f"serve-{name}.png"
                page.screenshot(path=str(path), animations="disabled", caret="initial")
                context.close()
        finally:
            for gate in gates:
                gate.open()
            server.close()
    return path


def main(names: list[str]) -> None:
    ASSETS.mkdir(exist_ok=True)
    with chromium() as browser:
        for name in names or list(SCENES):
            print(shoot(browser, name).relative_to(ASSETS.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
