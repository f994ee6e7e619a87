"""What a first-time user of the `ink serve` page meets, driven in Debian's chromium
against the real server: the text box works before any session is open (the first send
opens one), Send is only enabled when sending can happen, the top bar names the
connection and the demo model apart, the "new output" button stays inside the
transcript, a load-open-send leaves nothing failed in the console or the network, and
the demo model's tour names the page's buttons rather than the terminal's keys.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.providers import demo_replies
from tests.scripted_server import Gate, Reply, ScriptedServer, chunk, text_reply, usage_chunk
from tests.serve_page_helpers import Served, chromium, ink_serve, skip_reason

_WHY_NOT = skip_reason()
browser_test = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")

if _WHY_NOT is None:
    from playwright.sync_api import Page, expect

    expect.set_options(timeout=15_000)
else:  # pragma: no cover - only the skip reason is used then
    Page = Any  # type: ignore[misc,assignment]

# Where the pictures the layout test takes go (to be looked at), besides tmp_path.
SHOTS = Path("/tmp/ink-serve-page-shots")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if _WHY_NOT is not None:
        pytest.skip(_WHY_NOT)
    with chromium() as launched:
        yield launched


@pytest.fixture
def served(server: ScriptedServer, tmp_path: Path) -> Iterator[Served]:
    with ink_serve(server.base_url, tmp_path) as running:
        yield running


@pytest.fixture
def demo_served(tmp_path: Path) -> Iterator[Served]:
    """`ink serve` with no model configured: the built-in demo model."""
    with ink_serve(None, tmp_path) as running:
        yield running


def new_page(browser: Any, width: int = 1280, height: int = 800) -> tuple[Any, Page]:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(15_000)
    return context, page


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    context, opened = new_page(browser)
    try:
        yield opened
    finally:
        context.close()


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


# -- the text box and Send -----------------------------------------------------------


@browser_test
def test_the_box_takes_text_before_any_session_and_the_first_send_opens_one(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    server.push(text_reply("Opened and answered."), text_reply("A second answer."))
    page.goto(served.url)
    box, send = page.locator("#input"), page.locator("#send")
    expect(page.locator("#state")).to_have_text("no session")
    expect(box).to_be_enabled()
    # Nothing typed: Send cannot send, and says so.
    expect(send).to_be_disabled()
    box.fill("   ")
    expect(send).to_be_disabled()
    box.fill("explain the cart")
    expect(send).to_be_enabled()
    box.press("Enter")

    expect(page.locator(".msg-user")).to_have_text("explain the cart")
    expect(page.locator(".msg-assistant")).to_have_text("Opened and answered.")
    expect(page.locator("#state")).to_have_text("settled · completed")
    assert page.evaluate("window.inkPage.state.id")
    expect(page.locator("#session-list .session.current")).to_have_count(1)
    assert user_texts(server.requests[0])[-1] == "explain the cart"
    expect(box).to_have_value("")
    expect(send).to_be_disabled()

    # Send (the button) sends too, in the session now open.
    box.fill("and the tests?")
    send.click()
    expect(page.locator(".msg-assistant").nth(1)).to_have_text("A second answer.")
    expect(page.locator("#session-list .session")).to_have_count(1)


@browser_test
def test_a_disabled_send_does_not_look_like_the_active_one(page: Page, served: Served) -> None:
    page.goto(served.url)
    send = page.locator("#send")
    expect(send).to_be_disabled()
    look = "el => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]"
    disabled = send.evaluate(look)
    page.locator("#input").fill("something")
    expect(send).to_be_enabled()
    enabled = send.evaluate(look)
    assert disabled[0] != enabled[0], f"the same background, enabled or not: {disabled[0]}"
    assert disabled[1] != enabled[1], f"the same text colour, enabled or not: {disabled[1]}"


# -- the top bar: connection and model -------------------------------------------------


@browser_test
def test_the_pill_names_the_connection_and_the_demo_model_is_named_apart(
    page: Page, demo_served: Served
) -> None:
    connection, model = page.locator("#connection"), page.locator("#model")
    page.goto(demo_served.url)
    expect(connection).to_have_attribute("data-status", "live")
    expect(connection).to_have_text("connected")
    page.locator("#input").fill("hi")
    page.locator("#input").press("Enter")
    expect(page.locator(".msg-assistant")).to_contain_text("demo model")
    expect(model).to_have_text("demo model")
    assert "demo model" in (model.get_attribute("title") or "")
    expect(connection).to_have_text("connected")
    for shown in (connection, model):
        assert "offline" not in (shown.text_content() or "")

    # The server goes away: the pill says so (not the model's state).
    demo_served.process.terminate()
    demo_served.process.wait(10)
    expect(connection).to_have_attribute("data-status", "unreachable")
    expect(connection).to_have_text("server unreachable")
    expect(model).to_have_text("demo model")


# -- the "new output" button -----------------------------------------------------------


def _overlap(a: Any, b: Any) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


@browser_test
@pytest.mark.parametrize("width", [420, 1280])
def test_the_new_output_button_stays_inside_the_transcript(
    browser: Any, served: Served, server: ScriptedServer, tmp_path: Path, width: int
) -> None:
    long_answer = "\n\n".join(f"Paragraph {n}: the cart sums the prices." for n in range(40))
    # The second answer: a first piece, then (once the reader has scrolled up) a second,
    # then held until the test is done, so the queue stays up meanwhile.
    first, held = Gate(), Gate()
    second = Reply(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Going on. "}),
            first,
            chunk({"content": "More output, written while you read above."}),
            held,
            chunk({}, finish="stop"),
            usage_chunk(),
            "data: [DONE]\n\n",
        ]
    )
    server.push(text_reply(long_answer, pieces=4), second, text_reply("Changelog entry added."))
    context, page = new_page(browser, width, 800)
    try:
        page.goto(served.url)
        box = page.locator("#input")
        box.fill("explain the cart")
        box.press("Enter")
        expect(page.locator("#state")).to_have_text("settled · completed")
        box.fill("go on")
        box.press("Enter")
        assert first.reached.wait(15), "the second request never reached the gate"
        box.fill("then add a changelog entry")
        box.press("Alt+Enter")
        expect(page.locator("#queue-list .q-entry")).to_have_count(1)
        page.locator("#transcript").evaluate("el => { el.scrollTop = 0; }")
        first.open()
        jump = page.locator("#jump")
        expect(jump).to_be_visible()
        expect(page.locator("#queue")).to_be_visible()

        shot = tmp_path / f"jump-{width}.png"
        page.screenshot(path=str(shot), animations="disabled", caret="initial")
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / shot.name).write_bytes(shot.read_bytes())

        # Every box from one layout: the run goes on meanwhile (the activity line grows
        # to two rows, the queue changes), and reads one by one can straddle a change.
        others = ("#queue", ".queue-head", "#composer", "#activity", "#question", "#hints")
        boxes = page.evaluate(
            """(selectors) => selectors.map((sel) => {
                const el = document.querySelector(sel);
                if (!el || el.hidden || !el.getClientRects().length) return null;
                const r = el.getBoundingClientRect();
                if (!r.width || !r.height) return null;
                return {x: r.x, y: r.y, width: r.width, height: r.height};
            })""",
            ["#jump", "#transcript", *others],
        )
        button, transcript = boxes[0], boxes[1]
        assert button and transcript
        assert transcript["y"] <= button["y"]
        assert button["y"] + button["height"] <= transcript["y"] + transcript["height"]
        assert transcript["x"] <= button["x"]
        assert button["x"] + button["width"] <= transcript["x"] + transcript["width"]
        for other, found in zip(others, boxes[2:], strict=True):
            assert found is None or not _overlap(button, found), f"the button covers {other}"
        # It still does its job: a click goes to the end and it goes away.
        jump.click()
        expect(jump).to_be_hidden()
        assert page.locator("#transcript").evaluate(
            "el => el.scrollHeight - el.scrollTop - el.clientHeight < 48"
        )
    finally:
        for each in (first, held):
            each.open()
        context.close()


# -- nothing failed on the way ----------------------------------------------------------


@browser_test
def test_loading_opening_a_session_and_sending_logs_no_error_and_no_failed_request(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    server.push(text_reply("All quiet."))
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on(
        "response",
        lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    # A navigation (the reload below) ends the open event stream: that abort is the
    # browser's, not a failure.
    page.on(
        "requestfailed",
        lambda r: (
            None
            # Aborted by the page itself: its event stream, and a request still on its
            # way when `page.reload()` leaves (the session list's refresh).
            if r.failure == "net::ERR_ABORTED" and ("/events" in r.url or r.method == "GET")
            else problems.append(f"failed {r.url}: {r.failure}")
        ),
    )

    page.goto(served.url)
    expect(page.locator("#connection")).to_have_text("connected")
    page.get_by_role("button", name="+ New session").click()
    expect(page.locator("#state")).to_have_text("idle")
    page.locator("#input").fill("hello")
    page.locator("#input").press("Enter")
    expect(page.locator("#state")).to_have_text("settled · completed")
    page.reload()
    expect(page.locator(".msg-assistant")).to_have_text("All quiet.")

    # The icon the page names, and the one browsers ask for anyway, are both there.
    href = page.locator("link[rel=icon]").get_attribute("href")
    assert href
    for path in (href, "/favicon.ico"):
        answer = page.request.get(served.base + path)
        assert answer.status == 200, f"{path}: {answer.status}"
        assert answer.headers["content-type"].startswith("image/svg+xml")
    assert problems == []


# -- the demo's words --------------------------------------------------------------------


@browser_test
def test_the_demo_tour_on_the_page_names_its_buttons_not_the_terminal_keys(
    page: Page, demo_served: Served
) -> None:
    page.goto(demo_served.url)
    page.locator("#input").fill("what is in this project?")
    page.locator("#input").press("Enter")
    # The tour asks before each change and command: each question is answered with the
    # page's button, until the run settles.
    asked = 0
    state, question = page.locator("#state"), page.locator("#question")
    deadline = time.monotonic() + 120
    while "settled" not in (state.text_content() or ""):
        assert time.monotonic() < deadline, "the tour never settled"
        if question.is_visible() and not page.locator("#answer-allow").is_disabled():
            request_id = page.evaluate("[...window.inkPage.state.approvals.keys()][0]")
            asked += 1
            page.get_by_role("button", name="Allow once").click()
            page.wait_for_function("id => !window.inkPage.state.approvals.has(id)", arg=request_id)
        page.wait_for_timeout(100)
    assert asked >= 1, "the tour asked nothing"
    text = " ".join(page.locator("#transcript .msg-assistant").all_inner_texts())
    assert "click Allow once" in text, text
    assert "Click ■ Stop to interrupt" in text, text
    for terminal_only in ("Ctrl+", "y allows", "n denies", "back to the editor"):
        assert terminal_only not in text, f"{terminal_only!r} on the page: {text}"


def test_the_demo_words_follow_the_front_end() -> None:
    try:
        terminal = demo_replies.greeting_reply().text + demo_replies.bash_reply(_found()).text
        demo_replies.set_front_end("page")
        on_page = demo_replies.greeting_reply().text + demo_replies.bash_reply(_found()).text
    finally:
        demo_replies.set_front_end("terminal")
    assert "Ctrl+C" in terminal and "Ctrl+G" in terminal and "**y**" in terminal
    assert "Ctrl+" not in on_page and "**y**" not in on_page
    assert "**■ Stop**" in on_page and "**Allow once**" in on_page
    with pytest.raises(ValueError):
        demo_replies.set_front_end("fax")


def _found() -> Any:
    from ink_tui.providers.demo_findings import Findings

    return Findings()
