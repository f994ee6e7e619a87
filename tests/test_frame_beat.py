"""The widgets that move with time paint in the transcript's frames while it draws.

`BeatTicker` on a clock of the test's own: a beat paints at most once per period, a
paused ticker ignores beats, and the widget's own timer stands aside while beats come.
Then the real widgets: with the activity panel and status bar following the transcript's
beat, a streamed answer's frames each carry the panel's paint (the paint happens inside
the transcript's frame, so the screen is updated once for both), and once the stream
stops the panel's own timer turns the spinner again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from ink_tui.control.bus import EventBus
from ink_tui.core.events import RunStart, TextDelta
from ink_tui.ui import frame_beat
from ink_tui.ui.frame_beat import BEATING_S, BeatTicker, FrameBeat
from ink_tui.ui.widgets.activity_panel import ActivityPanel
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript

WITHIN = 30.0


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    fake = Clock()
    monkeypatch.setattr(frame_beat.time, "monotonic", fake)
    yield fake


def test_a_beat_paints_at_most_once_a_period_and_only_while_resumed(fake_time: Clock) -> None:
    beat = FrameBeat()
    painted: list[float] = []
    ticker = BeatTicker(beat, 0.1, lambda: painted.append(fake_time.t))
    ticker._on_beat()  # not followed yet: nothing
    unfollow = beat.follow(ticker._on_beat)
    beat.beat()
    assert painted == []  # paused
    ticker.resume()
    beat.beat()
    assert painted == [1000.0]
    fake_time.t += 0.05
    beat.beat()  # half a period later: the spinner would turn twice as fast
    assert painted == [1000.0]
    fake_time.t += 0.045  # 95 ms: a beat a little early still paints
    beat.beat()
    assert painted == pytest.approx([1000.0, 1000.095])
    ticker.pause()
    fake_time.t += 1
    beat.beat()
    assert len(painted) == 2
    unfollow()
    ticker.resume()
    fake_time.t += 1
    beat.beat()
    assert len(painted) == 2  # no longer following


def test_the_own_timer_stands_aside_while_beats_come(fake_time: Clock) -> None:
    beat = FrameBeat()
    painted: list[float] = []
    ticker = BeatTicker(beat, 0.1, lambda: painted.append(fake_time.t))
    ticker.resume()
    ticker._tick()
    assert len(painted) == 1  # no beats: the timer paints
    beat.beat()
    assert beat.beating()
    ticker._tick()
    assert len(painted) == 1
    fake_time.t += BEATING_S + 0.01
    assert not beat.beating()
    ticker._tick()
    assert len(painted) == 2


class StreamApp(App[None]):
    def __init__(self, bus: EventBus) -> None:
        super().__init__()
        self.bus = bus

    def compose(self) -> ComposeResult:
        transcript = Transcript(self.bus)
        yield transcript
        yield ActivityPanel(self.bus, transcript.beat)
        yield StatusBar(
            self.bus, model_label="m", is_demo=False, workspace=Path("/"), beat=transcript.beat
        )


async def test_streamed_frames_carry_the_panels_paint_and_the_timer_takes_over_after() -> None:
    bus = EventBus()
    app = StreamApp(bus)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        panel = app.query_one(ActivityPanel)
        in_frame = [False]
        paints: list[bool] = []
        original_paint = panel._paint

        def paint() -> None:
            paints.append(in_frame[0])
            original_paint()

        panel._paint = paint  # type: ignore[method-assign]
        original_beat = transcript.beat.beat

        def beat() -> None:
            in_frame[0] = True
            try:
                original_beat()
            finally:
                in_frame[0] = False

        transcript.beat.beat = beat  # type: ignore[method-assign]
        bus.publish(RunStart())
        # One delta per transcript frame, each after the last was drawn.
        for n in range(12):
            frames = transcript.beat._last
            bus.publish(TextDelta(text=f"word{n} " * 3))
            async with asyncio.timeout(WITHIN):
                while transcript.beat._last == frames:
                    await pilot.pause(0.01)
        assert paints.count(True) >= 1, paints
        # The stream stops: the panel's own timer paints again.
        before = paints.count(False)
        async with asyncio.timeout(WITHIN):
            while paints.count(False) == before:
                await pilot.pause(0.05)
        assert not transcript.beat.beating()
