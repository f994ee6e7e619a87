"""The running tools' spinners in the transcript: one timer turns them all, and it rests
while no tool runs."""

from __future__ import annotations

from collections.abc import Callable

from textual.timer import Timer

from ink_tui.ui.blocks.tool_block import ToolBlock

SPINNER_INTERVAL_S = 0.1


class Spinners:
    def __init__(self) -> None:
        self._blocks: dict[ToolBlock, None] = {}
        self._timer: Timer | None = None

    def attach(self, set_interval: Callable[..., Timer], turn: Callable[[], None]) -> None:
        """Start the (paused) timer; `turn` is called each tick while a tool runs."""
        self._timer = set_interval(SPINNER_INTERVAL_S, turn, pause=True)

    def start(self, block: ToolBlock) -> None:
        self._blocks[block] = None
        if self._timer is not None:
            self._timer.resume()

    def stop(self, block: ToolBlock) -> None:
        self._blocks.pop(block, None)

    def clear(self) -> None:
        self._blocks.clear()

    def turning(self) -> list[ToolBlock]:
        """The blocks to draw at their next spinner frame; none rests the timer."""
        if not self._blocks and self._timer is not None:
            self._timer.pause()
        return list(self._blocks)
