"""The rewind picker, its confirm and the session tree, reached by driving the real app:
a recorded session whose runs edit, write and run commands in the scenes' workspace,
checkpointed by the real store. Used by `tests/test_snapshots_rewind.py`, and by
`python -m tests.screen_states_rewind`, which writes the pictures into `assets/`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from textual.pilot import Pilot

from ink_tui.ui import clock
from ink_tui.ui.screens.rewind_confirm import RewindConfirm
from ink_tui.ui.screens.rewind_picker import RewindPicker
from ink_tui.ui.screens.tree_view import TreeView
from ink_tui.ui.widgets.hint_row import HintRow
from tests.make_screenshots import ASSETS, to_png
from tests.screen_states import Scene, app_of, build, scene_server, submit, submit_run
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import wait_until

ROUNDING = {
    "old_text": "    return sum((i.price * i.qty for i in items), Decimal(0))",
    "new_text": (
        "    subtotal = sum((i.price * i.qty for i in items), Decimal(0))\n"
        '    return subtotal.quantize(Decimal("0.01"))'
    ),
}
CHANGELOG = "printf '## 0.2.0\\n\\n- totals are rounded to cents\\n' > CHANGELOG.md"
DISCOUNT = (
    "from decimal import Decimal\n\n\n"
    "def discounted(total, percent):\n"
    "    return total * (Decimal(100) - percent) / Decimal(100)\n"
)


def _three_turns(server: ScriptedServer) -> list[Any]:
    server.push(
        tool_reply([("read", {"path": "src/shop/cart.py"})]),
        text_reply("`total()` sums price times quantity over the cart's items."),
        tool_reply([("edit", {"path": "src/shop/cart.py", "edits": [ROUNDING]})]),
        tool_reply([("bash", {"command": CHANGELOG})]),
        text_reply("Done: totals are rounded to cents, and CHANGELOG.md says so."),
        tool_reply([("write", {"path": "src/shop/discount.py", "content": DISCOUNT})]),
        text_reply("Added `discounted()` in src/shop/discount.py."),
    )
    return []


async def _run_three(pilot: Pilot) -> None:
    for prompt in (
        "what does total() do?",
        "round the total to cents and note it in a changelog",
        "add a percentage discount helper",
    ):
        await submit_run(pilot, prompt)


async def _open_picker(pilot: Pilot) -> None:
    """Esc Esc, however slow the machine between the two, and the picker once the first
    Esc's hint ("Esc again to rewind") is gone from the hint row under it."""
    app = app_of(pilot)
    app.commands.rewind.double_escape_s = 60.0
    await pilot.press("escape", "escape")
    await wait_until(pilot, lambda: isinstance(app.screen, RewindPicker), what="picker")
    hints = app.screen_stack[0].query_one(HintRow)
    await wait_until(pilot, lambda: not hints.has_class("-flash"), what="the hint's end")


async def _picker(pilot: Pilot, _: list[Any]) -> None:
    await _run_three(pilot)
    await _open_picker(pilot)
    await pilot.pause(0.1)


async def _confirm(pilot: Pilot, held: list[Any]) -> None:
    await _picker(pilot, held)
    await pilot.press("down", "enter")  # "round the total…": every change after it
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, RewindConfirm), what="confirm")
    await pilot.pause(0.1)


def _branched_script(server: ScriptedServer) -> list[Any]:
    _three_turns(server)
    server.push(
        tool_reply([("write", {"path": "src/shop/discount.py", "content": DISCOUNT})]),
        text_reply("Added `discounted()`, with the percentage checked to be 0-100."),
    )
    return []


async def _tree(pilot: Pilot, _: list[Any]) -> None:
    """The last message rewound (conversation only) and asked again another way."""
    await _run_three(pilot)
    await _open_picker(pilot)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, RewindConfirm), what="confirm")
    await pilot.press("2")
    await wait_until(pilot, lambda: pilot.app.screen is pilot.app.screen_stack[0])
    await pilot.press("ctrl+c")  # the message's text, back in the editor, cleared
    await submit_run(pilot, "add a discount helper that checks the percentage")
    await submit(pilot, "/tree")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, TreeView), what="the tree")
    await pilot.pause(0.1)


SCENES = [
    Scene(
        "rewind-picker",
        "Rewind (Esc Esc): the branch's messages, newest first, with the files each changed",
        (100, 32),
        _three_turns,
        _picker,
        sessions=True,
    ),
    Scene(
        "rewind-confirm",
        "Rewind: what a code restore changes, and the three choices",
        (100, 32),
        _three_turns,
        _confirm,
        sessions=True,
    ),
    Scene(
        "rewind-confirm-small",
        "Rewind's confirm in a small terminal (60x20)",
        (60, 20),
        _three_turns,
        _confirm,
        sessions=True,
    ),
    Scene(
        "session-tree",
        "/tree: both branches under the answer they split from, ● the current one",
        (100, 32),
        _branched_script,
        _tree,
        sessions=True,
    ),
    Scene(
        "session-tree-small",
        "/tree in a small terminal (60x20)",
        (60, 20),
        _branched_script,
        _tree,
        sessions=True,
    ),
]


async def shoot(scene: Scene) -> None:
    server = scene_server()
    clock.freeze(1000.0, zero_durations=True)
    try:
        app, run_before = build(scene, server)
        async with app.run_test(size=scene.size) as pilot:
            await run_before(pilot)
            svg = app.export_screenshot(title=f"ink: {scene.title}")
    finally:
        clock.freeze(None)
        server.close()
    path = ASSETS / f"{scene.name}.svg"
    path.write_text(svg)
    png = to_png(path)
    print(path.relative_to(ASSETS.parent), "->", png.name if png else "(no rsvg-convert)")


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for each in SCENES:
        if not wanted or each.name in wanted:
            asyncio.run(shoot(each))
