"""A run controller that fails to build is shown on screen, with its cause; what the user
types stays in the input, and the garbage collector is on again (ink_tui/ui/app_start.py)."""

from __future__ import annotations

import gc
from pathlib import Path

from ink_tui.control.bus import EventBus
from ink_tui.control.controller import RunController
from ink_tui.fastpaths import gc_policy
from ink_tui.ui.app import InkApp
from tests.ui_helpers import type_text, wait_until


def _broken_controller(bus: EventBus) -> RunController:
    raise OSError(13, "Permission denied", "/srv/models/key")


async def test_a_controller_that_fails_to_build_says_why_and_keeps_the_typing(
    tmp_path: Path,
) -> None:
    app = InkApp(
        _broken_controller,
        model_label="broken @ nowhere",
        is_demo=False,
        workspace=tmp_path,
        freeze_startup_heap=True,
    )
    frozen = gc.get_freeze_count()
    try:
        with gc_policy.startup_pause():
            async with app.run_test(size=(100, 30)) as pilot:
                shown = lambda: "could not start its run controller" in _transcript(app)  # noqa: E731
                await wait_until(pilot, shown, what="the start-up error")
                text = _transcript(app)
                assert "PermissionError" in text and "Permission denied" in text
                assert "_broken_controller" not in text  # the cause, not a traceback dump
                await wait_until(pilot, gc.isenabled, what="collection on again")
                await type_text(pilot, "explain the bug")
                await pilot.press("enter")
                await wait_until(pilot, lambda: app.prompt.text == "explain the bug")
                assert app.controller is None
            assert gc.isenabled()
    finally:
        if gc.get_freeze_count() > frozen:
            gc.unfreeze()
        gc_policy._owned = False


def _transcript(app: InkApp) -> str:
    from ink_tui.ui.widgets.transcript import Transcript

    return app.query_one(Transcript).plain_text()
