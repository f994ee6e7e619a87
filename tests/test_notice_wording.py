"""What notices say to a user (issue item 10): no internal ids, counts that read
naturally, no double full stops, and the config file that is really read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.control.run_settings import RunSettings
from ink_tui.core.messages import ToolResultMessage
from ink_tui.core.sentence import sentence
from ink_tui.providers.demo_replies import acknowledge_failures
from ink_tui.session.config import load_config
from ink_tui.ui.startup import restored_notice
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import make_controller
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.test_approvals import next_question
from tests.ui_helpers import make_app, type_text, wait_until


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL", "INK_APPROVAL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "xdg-config"


def test_the_restore_notice_counts_real_entries_and_reads_naturally() -> None:
    after = "from when the app last stopped."
    assert restored_notice(0, True) == f"Restored the unsent text {after}"
    assert restored_notice(1, False) == f"Restored 1 queued input {after}"
    assert restored_notice(3, False) == f"Restored 3 queued inputs {after}"
    assert restored_notice(2, True) == f"Restored 2 queued inputs and the unsent text {after}"


def test_sentence_adds_a_full_stop_only_when_missing() -> None:
    assert sentence("it was not run") == "it was not run."
    assert sentence("it was not run.") == "it was not run."
    assert sentence("Really?") == "Really?"
    assert sentence("Interrupting…") == "Interrupting…"


def test_a_denied_call_is_acknowledged_without_a_double_full_stop() -> None:
    denied = ToolResultMessage(
        call_id="c1",
        tool_name="bash",
        content="Denied: the user did not allow this call, so it was not run.\nDo not retry.",
        is_error=True,
    )
    line = acknowledge_failures([denied])
    assert "so it was not run." in line
    assert ".." not in line


async def test_a_second_answer_names_the_call_not_the_request_id(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("make a file")
    question = await next_question(recorder)
    assert controller.answer_approval(question.request_id, "allow") is True
    assert controller.answer_approval(question.request_id, "deny") is False
    assert controller.answer_approval("approval-99", "allow") is False
    await controller.wait_idle()
    notices = [n.text for n in recorder.of("notice") if n.kind == "approval"]
    texts = [t for t in notices if "ignored" in t]
    assert texts == [
        "The question about bash touch made was already answered (allow); this answer is ignored.",
        "That question is not open; this answer is ignored.",
    ]
    assert not any("approval-" in text for text in notices)
    await controller.aclose()


async def test_model_with_no_models_names_the_config_file_xdg_points_at(
    server: ScriptedServer, workspace: Path, isolated: Path
) -> None:
    config = load_config(workspace, environ={})
    app, _ = make_app(server, workspace, config=config)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        await type_text(pilot, "/model")
        await pilot.press("enter")
        transcript = app.query_one(Transcript)
        await wait_until(
            pilot, lambda: "No models are configured" in transcript.plain_text(), what="/model"
        )
        text = " ".join(transcript.plain_text().split())
        assert f"{isolated / 'ink' / 'config.toml'}" in text
        assert "~/.config/ink/config.toml" not in text
