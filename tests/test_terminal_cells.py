"""The whole app on a terminal: every cell, colours too, is what the app drew.

ink writes less than Textual would: a partial frame renders only its rows
(`compositor_rows`), the transcript's scrollbar keeps rows that look the same
(`scrollbar_rows`), rows move by the terminal's scrolling (`terminal_scroll`) and a
piece of a row is written only where it differs from what the terminal shows
(`frame_diff`). Any of those wrong leaves a cell stale, and a stale cell that the app
believes drawn is never drawn again. Here the real app (transcript, scrollbar, activity
panel, status bar, input) streams a long answer from the loopback model into a real
terminal emulator (pyte), held at several points; at each, and at the end, the
emulator's cells (character, colours, attributes) must come to equal a fresh terminal
given the compositor's own full picture. Scrollbar and spinner changes are colour-only
(a thumb is coloured blanks), which a comparison of text alone would miss.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ink_tui import fastpaths
from ink_tui.fastpaths import terminal_scroll
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import Gate, Reply, ScriptedServer, chunk, usage_chunk
from tests.terminal_capture import CaptureDriver, Terminal, scrollbar_asks, shows_cells_drawn
from tests.ui_helpers import make_app, type_text, wait_until

WIDTH, HEIGHT = 80, 24

LINE = "Streaming text that wraps, with `code` and **bold** words in it, line {n}."
ANSWER_PARTS = [
    "\n\n".join(LINE.format(n=n) for n in range(start, start + 4))
    + "\n\n```python\nfor n in range(3):\n    print(n)\n```\n\n- an item\n- another\n\n"
    for start in range(0, 60, 4)
]


def held_reply(gates: list[Gate]) -> list[Any]:
    """The answer in small deltas, held by a gate after each part."""
    steps: list[Any] = [chunk({"role": "assistant", "content": ""})]
    for part, gate in zip(ANSWER_PARTS, gates, strict=True):
        steps.extend(chunk({"content": part[i : i + 9]}) for i in range(0, len(part), 9))
        steps.append(gate)
    steps.extend([chunk({}, finish="stop"), usage_chunk(), "data: [DONE]\n\n"])
    return steps


async def test_every_cell_is_what_was_drawn_while_an_answer_streams(
    server: ScriptedServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = scrollbar_asks(monkeypatch)
    gates = [Gate() for _ in ANSWER_PARTS]
    server.push(Reply(held_reply(gates)))
    app, _ = make_app(server, workspace)
    app.driver_class = CaptureDriver
    async with app.run_test(headless=False, size=(WIDTH, HEIGHT)) as pilot:
        driver = app._driver
        assert isinstance(driver, CaptureDriver)
        terminal = Terminal(driver.written, WIDTH, HEIGHT)
        await shows_cells_drawn(pilot, terminal)
        await type_text(pilot, "Write the long answer.")
        await pilot.press("enter")
        for gate in gates:
            await wait_until(pilot, gate.reached.is_set, what="the stream held")
            await shows_cells_drawn(pilot, terminal)
            gate.open()
        transcript = app.query_one(Transcript)
        await wait_until(pilot, lambda: "line 59" in transcript.plain_text(), what="the end")
        await shows_cells_drawn(pilot, terminal)
        if fastpaths.enabled("terminal_scroll"):
            terminal_scroll.forget(app)
    if all(fastpaths.enabled(name) for name in ("terminal_scroll", "frame_diff", "scrollbar_rows")):
        # The bar drew only rows unlike the screen after scrolls (and the cells held).
        assert asked and min(asked) < HEIGHT - 4, asked
    else:
        assert asked == []
