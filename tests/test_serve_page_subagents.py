"""The page's task rows, in Debian's chromium against the real `ink serve`: each `task`
call's sub-agent under its own row (never in the main transcript), its live state, its
transcript unfolded by mouse or keys, Stop and Steer on the row, and the rows again
after a reload. The scripted server answers each sub-agent by its prompt (their
requests arrive in any order) and records what each was sent."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scripted_server import Gate, Reply, ScriptedServer, text_reply, tool_reply
from tests.serve_page_helpers import Served, chromium, ink_serve, skip_reason

_WHY_NOT = skip_reason()
pytestmark = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")

if _WHY_NOT is None:
    from playwright.sync_api import Locator, Page, Route, expect

    expect.set_options(timeout=10_000)
else:  # pragma: no cover - only the skip reason is used then
    Locator = Page = Route = Any  # type: ignore[misc,assignment]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def served(server: ScriptedServer, tmp_path: Path) -> Iterator[Served]:
    with ink_serve(server.base_url, tmp_path) as running:
        yield running


@pytest.fixture
def page(browser: Any, served: Served) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    try:
        yield opened
    finally:
        context.close()


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def first_user(body: dict[str, Any]) -> str:
    texts = user_texts(body)
    return texts[0] if texts else ""


def answer_subagents(server: ScriptedServer, replies: dict[str, list[Reply]]) -> None:
    """Answer each sub-agent's requests, in its own order, by the prompt it was given."""
    queues = {prompt: deque(list_) for prompt, list_ in replies.items()}

    def respond(body: dict[str, Any]) -> Reply | None:
        queue = queues.get(first_user(body))
        return queue.popleft() if queue else None

    server.responders.append(respond)


def task(description: str, prompt: str, call_id: str) -> tuple[str, dict[str, Any], str]:
    return ("task", {"description": description, "prompt": prompt}, call_id)


def requests_of(server: ScriptedServer, prompt: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if first_user(r) == prompt]


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def wait_gate(gate: Gate, within: float = 15.0) -> None:
    assert gate.reached.wait(within), "the model request never reached the gate"


def start_session(page: Page, url: str) -> None:
    page.goto(url)
    page.get_by_role("button", name="+ New session").click()
    expect(page.locator("#state")).to_have_text("idle")


def send(page: Page, text: str) -> None:
    page.locator("#input").fill(text)
    page.locator("#input").press("Enter")


def row(page: Page, call_id: str) -> Locator:
    return page.locator(f'#transcript > .tool.task[data-call-id="{call_id}"]')


def head(task_row: Locator) -> Locator:
    """The row's own line (its transcript below holds rows of its own)."""
    return task_row.locator(":scope > .task-head")


def live(task_row: Locator) -> Locator:
    return head(task_row).locator(".detail")


def main_answers(page: Page) -> Locator:
    """The top-level agent's answers: the main transcript's own, not a row's."""
    return page.locator("#transcript > .msg-assistant")


def test_two_subagents_run_under_their_own_rows_unfold_and_come_back_after_a_reload(
    page: Page, served: Served, server: ScriptedServer, tmp_path: Path
) -> None:
    gate_a, gate_b = Gate(), Gate()
    answer_subagents(
        server,
        {
            "PROMPT-A": [
                tool_reply([("read", {"path": "README.md"})], text="Reading the README."),
                text_reply("alpha finds **the cart** in cart.py", pieces=1, gate=gate_a),
            ],
            "PROMPT-B": [text_reply("beta says the tests pass", gate=gate_b)],
        },
    )
    server.push(
        tool_reply(
            [task("map the cart", "PROMPT-A", "call_a"), task("run tests", "PROMPT-B", "call_b")]
        ),
        text_reply("Both are done: the cart is in cart.py."),
    )
    start_session(page, served.url)
    try:
        send(page, "look at both")
        wait_gate(gate_a)
        wait_gate(gate_b)
        a, b = row(page, "call_a"), row(page, "call_b")
        expect(head(a).locator(".name")).to_have_text("task map the cart")
        expect(head(b).locator(".name")).to_have_text("task run tests")
        # Each row's live line is its own sub-agent's: both are writing, A has used tokens.
        expect(live(a)).to_contain_text("writing")
        expect(live(a)).to_contain_text("tokens")
        expect(live(b)).to_contain_text("writing")
        expect(head(a).locator(".state-word")).to_have_text("running")
        expect(a.get_by_role("button", name="Stop", exact=True)).to_be_visible()
        expect(b.get_by_role("button", name="Steer", exact=True)).to_be_visible()
        # Folded: nothing of theirs shows, and none of it is in the main transcript.
        expect(a.locator(".task-transcript")).to_be_hidden()
        expect(main_answers(page)).to_have_count(0)
        expect(page.locator("#transcript > .tool")).to_have_count(2)

        # A click unfolds A: its own transcript, drawn like the main one.
        head(a).locator(".tool-row").click()
        sub_a = a.locator(".task-transcript")
        expect(sub_a).to_be_visible()
        expect(sub_a.locator(".msg-assistant").first).to_have_text("Reading the README.")
        expect(sub_a.locator(".tool .name")).to_have_text("read README.md")
        expect(sub_a.locator(".msg-assistant strong")).to_have_text("the cart")
        expect(sub_a).not_to_contain_text("beta")
        # Enter on B's focused row unfolds B; its transcript holds only B's text.
        head(b).locator(".tool-row").focus()
        page.keyboard.press("Enter")
        sub_b = b.locator(".task-transcript")
        expect(sub_b).to_be_visible()
        expect(sub_b.locator(".msg-assistant")).to_contain_text("beta")
        expect(sub_b).not_to_contain_text("alpha")
        expect(head(b).locator(".tool-row")).to_have_attribute("aria-expanded", "true")
        shot = tmp_path / "subagents-unfolded.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 0

        # A reload draws both rows again, A's transcript so far (its answer mid-stream)
        # included, and the live state goes on from there.
        page.reload()
        a, b = row(page, "call_a"), row(page, "call_b")
        expect(head(a).locator(".name")).to_have_text("task map the cart")
        expect(live(a)).to_contain_text("writing")
        expect(b.get_by_role("button", name="Stop", exact=True)).to_be_visible()
        expect(main_answers(page)).to_have_count(0)
        head(a).locator(".tool-row").click()
        expect(a.locator(".task-transcript .tool .name")).to_have_text("read README.md")
        expect(a.locator(".task-transcript")).to_contain_text("alpha")
        gate_b.open()
        expect(head(b).locator(".state-word")).to_have_text("done")
        expect(b.get_by_role("button", name="Stop", exact=True)).to_be_hidden()
        expect(live(a)).to_contain_text("writing")
        gate_a.open()
        expect(page.locator("#state")).to_contain_text("settled")
    finally:
        gate_a.open()
        gate_b.open()
    expect(main_answers(page)).to_have_text(["Both are done: the cart is in cart.py."])
    expect(head(a).locator(".state-word")).to_have_text("done")
    expect(live(a)).to_contain_text("2 turns · 30 tokens")
    expect(a.locator(".task-transcript")).to_contain_text("alpha finds the cart in cart.py")
    expect(a.locator(".task-result")).to_have_text("alpha finds **the cart** in cart.py")
    # And once more after the run: the rows come back from the session and its log.
    page.reload()
    expect(live(row(page, "call_a"))).to_contain_text("2 turns")
    expect(head(row(page, "call_a")).locator(".state-word")).to_have_text("done")
    expect(live(row(page, "call_b"))).to_have_text("1 turn · 15 tokens")
    expect(row(page, "call_b").locator(".task-transcript")).to_contain_text(
        "beta says the tests pass"
    )
    expect(main_answers(page)).to_have_count(1)


def test_stop_on_a_row_stops_that_subagent_alone_and_the_rest_goes_on(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    gate_a, gate_b = Gate(), Gate()
    answer_subagents(
        server,
        {
            "PROMPT-A": [text_reply("alpha had started", gate=gate_a)],
            "PROMPT-B": [text_reply("beta finished", gate=gate_b)],
        },
    )
    server.push(
        tool_reply(
            [task("slow one", "PROMPT-A", "call_a"), task("other one", "PROMPT-B", "call_b")]
        ),
        text_reply("carried on without A"),
    )
    start_session(page, served.url)
    try:
        send(page, "two at once")
        wait_gate(gate_a)
        wait_gate(gate_b)
        a, b = row(page, "call_a"), row(page, "call_b")
        a.get_by_role("button", name="Stop", exact=True).click()
        expect(head(a).locator(".mark")).to_have_text("■")
        expect(head(a).locator(".state-word")).to_have_text("stopped")
        expect(a.get_by_role("button", name="Stop", exact=True)).to_be_hidden()
        # B and the parent run on.
        expect(live(b)).to_contain_text("writing")
        expect(b.get_by_role("button", name="Stop", exact=True)).to_be_visible()
        expect(page.locator("#state")).to_have_text("running")
        gate_b.open()
        expect(page.locator("#state")).to_contain_text("settled · completed")
    finally:
        gate_a.open()
        gate_b.open()
    expect(head(b).locator(".state-word")).to_have_text("done")
    expect(main_answers(page)).to_have_text(["carried on without A"])
    results = tool_results(server.requests[-1])
    assert results["call_a"].startswith("Stopped by the user")
    assert results["call_b"] == "beta finished"
    assert len(requests_of(server, "PROMPT-A")) == 1
    expect(a.locator(".task-result")).to_contain_text("Stopped by the user")


def test_steer_on_a_row_reaches_that_subagents_next_request_and_a_late_one_keeps_its_text(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    gate_a, gate_b = Gate(), Gate()
    answer_subagents(
        server,
        {
            "PROMPT-A": [text_reply("a first look", gate=gate_a), text_reply("a, steered")],
            "PROMPT-B": [text_reply("b holds on", gate=gate_b)],
        },
    )
    server.push(
        tool_reply(
            [task("steer me", "PROMPT-A", "call_a"), task("late one", "PROMPT-B", "call_b")]
        ),
        text_reply("parent done"),
    )
    start_session(page, served.url)
    try:
        send(page, "go")
        wait_gate(gate_a)
        wait_gate(gate_b)
        a, b = row(page, "call_a"), row(page, "call_b")
        a.get_by_role("button", name="Steer", exact=True).click()
        box = a.locator(".task-steer-box")
        expect(box).to_be_visible()
        expect(box.locator(".task-steer-label")).to_have_text("Steering “steer me”")
        area = box.locator("textarea")
        expect(area).to_be_focused()
        area.fill("STEER-FOR-A")
        area.press("Enter")
        expect(box).to_be_hidden()
        expect(live(a)).to_contain_text("1 queued")
        gate_a.open()
        # Taken by A's loop: its own transcript shows it as a steer.
        head(a).locator(".tool-row").click()
        expect(a.locator(".task-transcript .msg-user.kind-steer")).to_contain_text("STEER-FOR-A")
        expect(head(a).locator(".state-word")).to_have_text("done")

        # B ends between the click and the answer (stopped through the API, which
        # answers once it has ended): the server says it is gone, the row says so and
        # the text stays in the box.
        base = f"{served.base}/api/sessions/{page.evaluate('window.inkPage.state.id')}"
        auth = {"Authorization": f"Bearer {served.token}"}

        def end_b_first(route: Route) -> None:
            (agent,) = httpx.get(f"{base}/agents", headers=auth).json()["agents"]
            stopped = httpx.post(f"{base}/agents/{agent['agent_id']}/abort", headers=auth)
            assert stopped.status_code == 200, stopped.text
            route.continue_()

        page.route("**/agents/*/messages", end_b_first)
        b.get_by_role("button", name="Steer", exact=True).click()
        b_area = b.locator(".task-steer-box textarea")
        b_area.fill("LATE-STEER")
        b.get_by_role("button", name="Send steer").click()
        expect(b.locator(".task-error")).to_contain_text("has ended")
        expect(b_area).to_have_value("LATE-STEER")
        expect(b.locator(".task-steer-box")).to_be_visible()
        expect(page.locator("#state")).to_contain_text("settled")
    finally:
        gate_a.open()
        gate_b.open()
    first, second = requests_of(server, "PROMPT-A")
    assert user_texts(second) == ["PROMPT-A", "STEER-FOR-A"]
    assert "STEER-FOR-A" not in str(first["messages"])
    parent = [r for r in server.requests if first_user(r) == "go"]
    assert parent and all("STEER-FOR-A" not in str(r["messages"]) for r in parent)
    assert all("LATE-STEER" not in str(r["messages"]) for r in server.requests)
    results = tool_results(parent[-1])
    assert results["call_a"] == "a, steered"
    assert results["call_b"].startswith("Stopped by the user")


def test_a_subagents_question_names_it_its_row_says_it_asks_and_its_text_is_never_markup(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    marked = '<img src=x onerror="window.pwned=1"><b>bold</b>'
    answer_subagents(
        server,
        {
            "PROMPT-A": [
                tool_reply([("bash", {"command": "echo from-a"})]),
                text_reply(f"ran it {marked}"),
            ]
        },
    )
    server.push(tool_reply([task(f"check {marked}", "PROMPT-A", "call_a")]), text_reply("ok"))
    start_session(page, served.url)
    send(page, "go")
    a = row(page, "call_a")
    expect(page.locator("#question")).to_be_visible()
    expect(page.locator("#question-why")).to_contain_text(
        f"Asked by the sub-agent “check {marked}”"
    )
    expect(live(a)).to_have_text("asks you · 15 tokens")
    # The call that asks is drawn in the sub-agent's transcript, not the main one (its
    # command is left out of events: `ink serve` shows no tool arguments by default).
    expect(a.locator(".task-transcript .tool[data-state='waiting'] .name")).to_have_text("bash")
    expect(page.locator("#transcript > .tool")).to_have_count(1)
    page.get_by_role("button", name="Allow once").click()
    expect(page.locator("#state")).to_contain_text("settled")
    expect(head(a).locator(".name")).to_have_text(f"task check {marked}")
    head(a).locator(".tool-row").click()
    expect(a.locator(".task-transcript .msg-assistant").last).to_contain_text("ran it <img")
    assert page.locator("#transcript img, #transcript b").count() == 0
    assert page.evaluate("window.pwned") is None
    assert "from-a" in str(tool_results(requests_of(server, "PROMPT-A")[-1]))
