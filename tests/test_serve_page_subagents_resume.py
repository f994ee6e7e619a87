"""A session made earlier by `ink -p` (the real process), opened in the page of the real
`ink serve` from its saved list, in Debian's chromium: its task row unfolds to the
sub-agent's recorded conversation (its prompt, its answer as markdown, its tool calls
with their results folded, its own sub-agent's row inside), ended, saying how."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.run_helpers import user_texts
from tests.scripted_server import Reply, ScriptedServer, text_reply, tool_reply
from tests.serve_page_helpers import MODEL_VARIABLES, chromium, ink_serve, skip_reason

_WHY_NOT = skip_reason()
pytestmark = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")

if _WHY_NOT is None:
    from playwright.sync_api import Locator, Page, expect

    expect.set_options(timeout=10_000)
else:  # pragma: no cover - only the skip reason is used then
    Locator = Page = Any  # type: ignore[misc,assignment]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def answer_by_prompt(server: ScriptedServer, replies: dict[str, list[Reply]]) -> None:
    queues = {prompt: deque(list_) for prompt, list_ in replies.items()}

    def respond(body: dict[str, Any]) -> Reply | None:
        texts = user_texts(body)
        queue = queues.get(texts[0]) if texts else None
        return queue.popleft() if queue else None

    server.responders.append(respond)


def task(description: str, prompt: str, call_id: str) -> tuple[str, dict[str, Any], str]:
    return ("task", {"description": description, "prompt": prompt}, call_id)


def print_mode_session(server: ScriptedServer, root: Path) -> None:
    """`ink -p` in the workspace and data folders `ink_serve` will use: a parent whose
    sub-agent reads a file and starts a sub-agent of its own."""
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# acme-shop\n\nA small order service.\n")
    config = root / "config" / "ink"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[subagents]\nmax_depth = 2\n")
    answer_by_prompt(
        server,
        {
            "PROMPT-A": [
                tool_reply([("read", {"path": "README.md"}, "call_read")], text="Reading it."),
                tool_reply([task("ask deeper", "PROMPT-B", "call_b")]),
                text_reply("alpha finds **the order service** in README.md"),
            ],
            "PROMPT-B": [text_reply("beta looked deeper")],
        },
    )
    server.push(
        tool_reply([task("map the shop", "PROMPT-A", "call_a")]),
        text_reply("All done: it is an order service."),
    )
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
    )
    model = ["--base-url", server.base_url, "--model", "scripted-model"]
    done = subprocess.run(
        [sys.executable, "-m", "ink_tui", "-p", "look at the shop", *model],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "All done" in done.stdout


def head(task_row: Locator) -> Locator:
    return task_row.locator(":scope > .task-head")


def test_a_resumed_sessions_task_row_unfolds_to_the_recorded_subagent(
    browser: Any, server: ScriptedServer, tmp_path: Path
) -> None:
    print_mode_session(server, tmp_path)
    asked = len(server.requests)
    with ink_serve(server.base_url, tmp_path) as served:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        try:
            page = context.new_page()
            page.set_default_timeout(10_000)
            page.goto(served.url)
            page.locator("#session-list .session", has_text="look at the shop").click()
            expect(page.locator("#transcript > .msg-assistant")).to_have_text(
                "All done: it is an order service."
            )
            a = page.locator('#transcript > .tool.task[data-call-id="call_a"]')
            expect(head(a).locator(".name")).to_have_text("task map the shop")
            expect(head(a).locator(".state-word")).to_have_text("done")
            expect(head(a).locator(".detail")).to_have_text("3 turns · 45 tokens")
            expect(a).to_have_attribute("data-recorded", "true")
            # Ended: no Stop or Steer; folded: none of its words show yet.
            expect(a.get_by_role("button", name="Stop", exact=True)).to_be_hidden()
            sub = a.locator(":scope > .task-transcript")
            expect(sub).to_be_hidden()
            assert page.locator("#transcript > .msg-assistant").count() == 1

            head(a).locator(".tool-row").click()
            expect(sub).to_be_visible()
            expect(sub.locator(":scope > .msg-user")).to_have_text("PROMPT-A")
            answers = sub.locator(":scope > .msg-assistant")
            expect(answers).to_have_count(2)
            expect(answers.first).to_have_text("Reading it.")
            expect(answers.last.locator("strong")).to_have_text("the order service")
            expect(sub).not_to_contain_text("**")
            # Its tool call, its result folded until it is opened.
            read = sub.locator(':scope > .tool[data-call-id="call_read"]')
            expect(read.locator(".name")).to_have_text("read README.md")
            expect(read).to_have_attribute("data-state", "ok")
            body = read.locator(".tool-body")
            expect(body).to_be_hidden()
            read.locator(".tool-row").click()
            expect(body).to_contain_text("A small order service.")
            # Its own sub-agent's row, inside its transcript, ended too.
            b = sub.locator(':scope > .tool.task[data-call-id="call_b"]')
            expect(head(b).locator(".name")).to_have_text("task ask deeper")
            expect(head(b).locator(".state-word")).to_have_text("done")
            expect(head(b).locator(".detail")).to_have_text("1 turn · 15 tokens")
            head(b).locator(".tool-row").click()
            expect(b.locator(".task-transcript .msg-assistant")).to_have_text("beta looked deeper")
            expect(a.locator(":scope > .task-result")).to_have_text(
                "alpha finds **the order service** in README.md"
            )
            shot = tmp_path / "resumed-subagent.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 0
            # A reload draws it again, from the file's record.
            page.reload()
            a = page.locator('#transcript > .tool.task[data-call-id="call_a"]')
            head(a).locator(".tool-row").click()
            expect(a.locator(":scope > .task-transcript > .msg-user")).to_have_text("PROMPT-A")
        finally:
            context.close()
    # Opening the session asked the model nothing.
    assert len(server.requests) == asked
