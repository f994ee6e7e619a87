"""Going back from the page, in Debian's chromium against the real `ink serve`: the ↶
button on each of the user's messages (live and after a reload), the dialog with the
files a restore would change, restoring code and conversation (the files on disk back,
the text in the input box, the transcript drawn again without the message), the button
disabled while a run goes, and only "Restore conversation" when nothing changed the
files since the message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.serve_page_helpers import Served, chromium, ink_serve, skip_reason

_WHY_NOT = skip_reason()
pytestmark = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")

if _WHY_NOT is None:
    from playwright.sync_api import Locator, Page, expect

    expect.set_options(timeout=10_000)
else:  # pragma: no cover - only the skip reason is used then
    Locator = Page = Any  # type: ignore[misc,assignment]

CART = "def total(items):\n    return sum(items)\n"
IDLE_TITLE = (
    "Rewind to here: restore the conversation, the code or both as they were before this message"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def served(server: ScriptedServer, tmp_path: Path) -> Iterator[Served]:
    # Without asking: the questions are another test's (the page's approval panel).
    with ink_serve(server.base_url, tmp_path, "--approval", "auto") as running:
        yield running


@pytest.fixture
def page(browser: Any, served: Served) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    try:
        yield opened
    finally:
        context.close()


def send(page: Page, text: str) -> None:
    page.locator("#input").fill(text)
    page.locator("#input").press("Enter")


def settled(page: Page) -> None:
    """The run the page shows as running has settled. Only after something proved that
    run started: the line still says the last run's "settled" until its state_change."""
    expect(page.locator("#state")).to_have_text("settled · completed")


def run(page: Page, text: str) -> None:
    """Send `text` and wait until its own run has settled. The page draws the message
    from the run's `user_message` event, which comes after its `state_change` to running
    (events applied in order): once the message is there, a "settled" is this run's,
    never the one before it left on the line."""
    send(page, text)
    expect(message(page, text)).to_have_count(1)
    settled(page)


def message(page: Page, text: str) -> Locator:
    return page.locator("#transcript > .msg-user", has_text=text)


def wait_gate(gate: Gate) -> None:
    assert gate.reached.wait(10), "the model request never reached the gate"


# One long walk through the page (two runs, a rewind, an undo, a reload): on a machine
# that is busy with other suites it takes well over the suite's 60 s default.
@pytest.mark.timeout(180)
def test_rewind_from_the_page_restores_files_and_conversation(
    page: Page, served: Served, server: ScriptedServer, tmp_path: Path
) -> None:
    workspace = served.workspace
    page.goto(served.url)
    page.get_by_role("button", name="+ New session").click()
    expect(page.locator("#state")).to_have_text("idle")

    server.push(text_reply("Looked around."))
    run(page, "look first")
    server.push(
        tool_reply(
            [("write", {"path": "cart.py", "content": "def total(items):\n    return 0\n"})]
        ),
        tool_reply([("bash", {"command": "printf made > created.txt"})]),
        text_reply("Changed the cart."),
    )
    run(page, "change the cart")
    assert (workspace / "created.txt").read_text() == "made"

    buttons = page.get_by_role("button", name="Rewind to here")
    expect(buttons).to_have_count(2)
    expect(buttons.first).to_be_enabled()
    expect(buttons.first).to_have_attribute("title", IDLE_TITLE)
    # The message's text is its own: the button's glyph is drawn by CSS.
    expect(message(page, "change the cart")).to_have_text("change the cart")

    message(page, "change the cart").get_by_role("button", name="Rewind to here").click()
    dialog = page.get_by_role("dialog", name="Rewind to this message?")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".rewind-message")).to_have_text("change the cart")
    files = dialog.locator(".rewind-file")
    expect(files).to_have_count(2)
    cart = dialog.locator(".rewind-file", has_text="cart.py")
    expect(cart.locator(".rewind-status")).to_have_text("M")
    expect(cart.locator(".rewind-added")).to_have_text("+1")
    expect(cart.locator(".rewind-removed")).to_have_text("-1")
    created = dialog.locator(".rewind-file", has_text="created.txt")
    expect(created.locator(".rewind-status")).to_have_text("D")
    expect(dialog.locator(".rewind-files-head")).to_have_text("Restoring the code changes 2 files:")
    for name in ("Restore code and conversation", "Restore conversation", "Restore code", "Cancel"):
        expect(dialog.get_by_role("button", name=name, exact=True)).to_be_enabled()
    shot = tmp_path / "rewind-dialog.png"
    page.screenshot(path=str(shot), animations="disabled", caret="initial")
    assert shot.stat().st_size > 0

    # Cancel (or Escape) changes nothing.
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert (workspace / "created.txt").exists()

    message(page, "change the cart").get_by_role("button", name="Rewind to here").click()
    expect(dialog.locator(".rewind-file")).to_have_count(2)
    dialog.get_by_role("button", name="Restore code and conversation").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#input")).to_have_value("change the cart")
    expect(page.locator("#transcript > .msg-user")).to_have_text(["look first"])
    expect(page.locator("#transcript > .msg-assistant")).to_have_text(["Looked around."])
    notice = page.locator(".rewind-notice")
    expect(notice).to_contain_text("Rewound the code and the conversation")
    expect(notice).to_contain_text("2 files restored")
    assert not (workspace / "created.txt").exists()
    assert (workspace / "cart.py").read_text() == CART

    after = tmp_path / "rewind-after.png"
    page.screenshot(path=str(after), animations="disabled", caret="initial")
    assert after.stat().st_size > 0

    # The code restore can be undone: the files as they were just before it.
    notice.get_by_role("button", name="Undo code restore").click()
    expect(notice).to_contain_text("Undone: 2 files back as they were before the rewind.")
    expect(notice.get_by_role("button", name="Undo code restore")).to_be_hidden()
    assert (workspace / "created.txt").read_text() == "made"
    assert "return 0" in (workspace / "cart.py").read_text()
    expect(page.locator("#transcript > .msg-user")).to_have_text(["look first"])

    # The next prompt goes on from before the rewound message.
    gate = Gate()
    server.push(text_reply("Another way.", gate=gate))
    page.locator("#input").fill("try another way")
    page.locator("#input").press("Enter")
    wait_gate(gate)
    # Once a run starts the notice (and its undo) is gone.
    expect(notice).to_be_hidden()
    # While it runs the buttons are greyed, and say why.
    running = page.get_by_role("button", name="Rewind to here")
    expect(running).to_have_count(2)
    expect(running.first).to_be_disabled()
    expect(running.first).to_have_attribute(
        "title", "A run is in progress: stop it (or wait for it to end) to rewind"
    )
    gate.open()
    settled(page)
    expect(running.first).to_be_enabled()
    sent = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert sent == ["look first", "try another way"]

    # Drawn from the history after a reload: the buttons again, from the messages' ids.
    page.reload()
    expect(page.locator("#transcript > .msg-user")).to_have_text(["look first", "try another way"])
    expect(page.get_by_role("button", name="Rewind to here")).to_have_count(2)
    # Nothing changed the files since the last message: only the conversation goes back.
    message(page, "try another way").get_by_role("button", name="Rewind to here").click()
    expect(dialog.locator(".rewind-note")).to_contain_text("only the conversation goes back")
    expect(dialog.get_by_role("button", name="Restore conversation")).to_be_enabled()
    expect(dialog.get_by_role("button", name="Restore code and conversation")).to_be_hidden()
    expect(dialog.get_by_role("button", name="Restore code", exact=True)).to_be_hidden()
    dialog.get_by_role("button", name="Restore conversation").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#transcript > .msg-user")).to_have_text(["look first"])
    expect(page.locator("#input")).to_have_value("try another way")
    expect(notice.locator(".rewind-notice-text")).to_have_text(
        "Rewound the conversation to before “try another way”."
    )
    expect(notice.get_by_role("button", name="Undo code restore")).to_be_hidden()


def test_a_rewind_by_another_client_redraws_the_page(
    page: Page, served: Served, server: ScriptedServer
) -> None:
    page.goto(served.url)
    page.get_by_role("button", name="+ New session").click()
    expect(page.locator("#state")).to_have_text("idle")
    server.push(text_reply("One."), text_reply("Two."))
    run(page, "first")
    run(page, "second")
    expect(page.get_by_role("button", name="Rewind to here")).to_have_count(2)
    entry = message(page, "second").get_attribute("data-entry-id")
    assert entry
    sid = page.evaluate("window.inkPage.state.id")
    answer = httpx.post(
        f"{served.base}/api/sessions/{sid}/rewind",
        json={"entry_id": entry, "restore": "conversation"},
        headers={"Authorization": f"Bearer {served.token}"},
        timeout=30,  # httpx's 5 s default is a guess at a busy machine
    )
    assert answer.status_code == 200, answer.text
    # Its `rewound` event redraws this page: the message is gone, its input untouched.
    expect(page.locator("#transcript > .msg-user")).to_have_text(["first"])
    expect(page.locator("#transcript > .msg-assistant")).to_have_text(["One."])
    expect(page.get_by_role("button", name="Rewind to here")).to_have_count(1)
    expect(page.locator("#input")).to_have_value("")
