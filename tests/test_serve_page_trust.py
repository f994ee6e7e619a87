"""The page of `ink serve` asks before a command runs, and other pages cannot use it: in
Debian's chromium against the real `ink serve` (its default policy: ask).

- The question shows the command (or the diff) above the text box, with "waiting for
  your answer" in the state line; Allow once runs the command, Deny sends a reason the
  model reads; a reload shows the question again.
- Typed text is never an answer: Enter in the text box queues a steer and the question
  stays open; a button answers (a click, or Enter on a focused button).
- A page served by another loopback port, after the browser got ink's cookie, cannot
  open a session or run a `!` line (its requests are refused with 403), and cannot frame
  the page; the page itself runs under its Content-Security-Policy without a violation.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.serve_page_helpers import Served, chromium, ink_serve, skip_reason

_WHY_NOT = skip_reason()
pytestmark = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")

if _WHY_NOT is None:
    from playwright.sync_api import Page, expect

    expect.set_options(timeout=10_000)
else:  # pragma: no cover - only the skip reason is used then
    Page = Any  # type: ignore[misc,assignment]


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
    """The page, failing the test on a Content-Security-Policy violation or a script error."""
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    problems: list[str] = []
    opened.on(
        "console",
        lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None,
    )
    opened.on("pageerror", lambda error: problems.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert problems == []


def start_session(page: Page, url: str) -> str:
    page.goto(url)
    page.get_by_role("button", name="+ New session").click()
    expect(page.locator("#state")).to_have_text("idle")
    return str(page.evaluate("window.inkPage.state.id"))


def type_and(page: Page, text: str, key: str = "Enter") -> None:
    box = page.locator("#input")
    box.fill(text)
    box.press(key)


def server_state(served: Served, session_id: str) -> dict[str, Any]:
    answer = httpx.get(
        f"{served.base}/api/sessions/{session_id}",
        headers={"Authorization": f"Bearer {served.token}"},
    )
    answer.raise_for_status()
    return dict(answer.json()["session"])


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def shot(page: Page, folder: Path, name: str) -> Path:
    """A picture of the page as the test sees it (in the test's tmp folder)."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    return path


# -- the question ------------------------------------------------------------------------


def test_the_question_shows_the_command_and_allow_once_runs_it(
    page: Page, served: Served, server: ScriptedServer, tmp_path: Path
) -> None:
    command = "echo approved-by-click > made.txt; cat made.txt"
    server.push(tool_reply([("bash", {"command": command})]), text_reply("Made it."))
    start_session(page, served.url)
    type_and(page, "make the file")

    question = page.locator("#question")
    expect(question).to_be_visible()
    expect(page.locator("#question-title")).to_have_text("Run this command?")
    expect(page.locator("#question-body")).to_have_text(command)
    expect(page.locator("#state")).to_have_text("waiting for your answer")
    expect(page.locator("#activity-text")).to_have_text("waiting for your answer")
    expect(page.locator(".tool .state-word")).to_have_text("asks you")
    # Shell syntax (`>`, `;`): no rule can cover it, so only once or not at all.
    expect(page.get_by_role("button", name="Allow once")).to_be_visible()
    expect(page.get_by_role("button", name="Deny")).to_be_visible()
    expect(page.get_by_role("button", name="Allow for this session")).to_be_hidden()
    expect(page.get_by_role("button", name="Always")).to_be_hidden()
    shot(page, tmp_path, "question-command")
    assert not (served.workspace / "made.txt").exists()

    # One click answers, and the buttons are disabled at once: no second answer.
    disabled = page.evaluate(
        """() => {
          document.getElementById("answer-allow").click();
          return [...document.querySelectorAll("#question button")].map((b) => b.disabled);
        }"""
    )
    assert disabled and all(disabled)
    expect(question).to_be_hidden()
    expect(page.locator("#state")).to_have_text("settled · completed")
    row = page.locator(".tool").first
    expect(row).to_have_attribute("data-state", "ok")
    row.locator(".tool-row").click()
    expect(row.locator(".tool-body")).to_contain_text("approved-by-click")
    assert (served.workspace / "made.txt").read_text() == "approved-by-click\n"
    assert server_state(served, str(page.evaluate("window.inkPage.state.id")))["approvals"] == []


def test_deny_with_a_reason_runs_nothing_and_the_model_reads_the_reason(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    (served.workspace / "build").mkdir()
    server.push(tool_reply([("bash", {"command": "rm -rf build"})]), text_reply("Kept it."))
    start_session(page, served.url)
    type_and(page, "clean up")

    expect(page.locator("#question-body")).to_have_text("rm -rf build")
    # A plain command: it can be allowed for the session or always, as a rule.
    expect(page.get_by_role("button", name="Allow for this session")).to_be_visible()
    expect(page.locator("#question-rule")).to_contain_text("bash:rm")
    page.get_by_role("button", name="Deny").click()
    reason = page.locator("#deny-reason")
    expect(reason).to_be_visible()
    expect(reason).to_be_focused()
    reason.fill("keep the build folder")
    page.get_by_role("button", name="Send reason").click()

    expect(page.locator("#question")).to_be_hidden()
    expect(page.locator("#state")).to_have_text("settled · completed")
    expect(page.locator(".tool").first).to_have_attribute("data-state", "error")
    assert (served.workspace / "build").is_dir()
    assert "Their reason: keep the build folder" in tool_results(server.requests[1])[-1]


def test_typed_text_never_answers_and_a_focused_button_does(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    server.push(
        tool_reply([("bash", {"command": "touch typed.txt"})]),
        text_reply("Took the steers."),
        text_reply("And the next."),
    )
    session_id = start_session(page, served.url)
    type_and(page, "touch it")
    question = page.locator("#question")
    expect(question).to_be_visible()

    # "y" and Enter in the text box: a steer, queued; the question stays open.
    type_and(page, "y")
    expect(page.locator("#queue-list .q-text")).to_have_text(["y"])
    page.locator("#input").press_sequentially("now stop")
    page.locator("#input").press("Enter")
    expect(page.locator("#queue-list .q-text")).to_have_text(["y", "now stop"])
    page.locator("#input").press("Space")
    expect(question).to_be_visible()
    expect(page.locator("#state")).to_have_text("waiting for your answer")
    state = server_state(served, session_id)
    assert len(state["approvals"]) == 1 and state["busy"]
    assert [e["text"] for e in state["queue"]] == ["y", "now stop"]
    assert not (served.workspace / "typed.txt").exists()

    # Keyboard focus on a button and Enter: the browser's own click, an answer.
    page.locator("#answer-allow").focus()
    page.keyboard.press("Enter")
    expect(question).to_be_hidden()
    expect(page.locator("#state")).to_have_text("settled · completed")
    assert (served.workspace / "typed.txt").exists()
    # The steers went to the model after the answer, as steers.
    assert "y" in user_texts(server.requests[1])


def test_an_edit_question_shows_the_diff_and_comes_back_after_a_reload(
    page: Page, served: Served, server: ScriptedServer, tmp_path: Path
) -> None:
    edit = {
        "path": "cart.py",
        "edits": [{"old_text": "return sum(items)", "new_text": "return round(sum(items), 2)"}],
    }
    server.push(tool_reply([("edit", edit)], text="Rounding the total."), text_reply("Done."))
    start_session(page, served.url)
    type_and(page, "round the total")

    expect(page.locator("#question-title")).to_have_text("Edit this file?")
    body = page.locator("#question-body")
    expect(body.locator(".diff-path")).to_have_text("cart.py")
    expect(body.locator(".diff-del")).to_have_text("-    return sum(items)")
    expect(body.locator(".diff-add")).to_have_text("+    return round(sum(items), 2)")
    shot(page, tmp_path, "question-edit")

    # A reload (or another tab) shows the same open question.
    page.reload()
    expect(page.locator("#question")).to_be_visible()
    expect(body.locator(".diff-add")).to_have_text("+    return round(sum(items), 2)")
    expect(page.locator("#state")).to_have_text("waiting for your answer")
    page.get_by_role("button", name="Allow for this session").click()
    expect(page.locator("#question")).to_be_hidden()
    expect(page.locator("#state")).to_have_text("settled · completed")
    assert "round(sum(items), 2)" in (served.workspace / "cart.py").read_text()


# -- other pages -----------------------------------------------------------------------


class _AttackPage(http.server.BaseHTTPRequestHandler):
    html = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.html)))
        self.end_headers()
        self.wfile.write(self.html)

    def log_message(self, *args: Any) -> None:
        pass


ATTACK = """<!doctype html><title>cat pictures</title>
<iframe id="framed" src="{base}/"></iframe>
<script>
(async () => {{
  const hit = (path, body) => fetch("{base}" + path, {{
    method: "POST", mode: "no-cors", credentials: "include", body,
  }}).catch(() => null);
  await hit("/api/sessions", "{{}}");
  await hit("/api/sessions/{sid}/messages", JSON.stringify({{text: "!touch pwned.txt"}}));
  await fetch("{base}/api/sessions/{sid}/abort", {{
    method: "POST", mode: "no-cors", credentials: "include",
  }}).catch(() => null);
  document.title = "done";
}})();
</script>"""


def test_a_page_on_another_port_cannot_use_the_cookie_or_frame_the_page(
    browser: Any, served: Served, server: ScriptedServer
) -> None:
    context = browser.new_context()
    try:
        ink = context.new_page()
        session_id = start_session(ink, served.url)  # the browser holds ink's cookie now
        assert any(c["name"] == "ink_token" for c in context.cookies())

        _AttackPage.html = ATTACK.format(base=served.base, sid=session_id).encode()
        attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AttackPage)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        try:
            other = context.new_page()
            # What the network saw (the page itself cannot read a no-cors answer): the
            # cookie each request carried, and the status the server answered with.
            sent: dict[str, dict[str, Any]] = {}
            cdp = context.new_cdp_session(other)
            cdp.send("Network.enable")

            def note(event: dict[str, Any], **what: Any) -> None:
                sent.setdefault(event["requestId"], {}).update(what)

            cdp.on(
                "Network.requestWillBeSent",
                lambda e: note(e, url=e["request"]["url"], method=e["request"]["method"]),
            )
            cdp.on(
                "Network.requestWillBeSentExtraInfo",
                lambda e: note(
                    e,
                    cookies=[
                        c["cookie"]["name"]
                        for c in e.get("associatedCookies", [])
                        if not c.get("blockedReasons")
                    ],
                ),
            )
            cdp.on("Network.responseReceivedExtraInfo", lambda e: note(e, status=e["statusCode"]))
            other.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
            expect(other).to_have_title("done")
            framed = other.frame_locator("#framed")
            expect(framed.locator("#app")).to_have_count(0)
        finally:
            attacker.shutdown()
            attacker.server_close()
    finally:
        context.close()

    # Each request carried ink's cookie (SameSite does not tell ports apart) and was
    # refused for where it came from.
    calls = [r for r in sent.values() if "/api/" in r.get("url", "")]
    assert [(r["method"], r.get("status"), r.get("cookies")) for r in calls] == [
        ("POST", 403, ["ink_token"])
    ] * 3, calls
    assert not (served.workspace / "pwned.txt").exists()
    listing = httpx.get(
        f"{served.base}/api/sessions", headers={"Authorization": f"Bearer {served.token}"}
    ).json()["sessions"]
    assert [s["id"] for s in listing] == [session_id]
    assert server_state(served, session_id)["message_count"] == 0
