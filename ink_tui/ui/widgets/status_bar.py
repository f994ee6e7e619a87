"""The bottom line: model, run state, elapsed time, tokens, context fill, background jobs,
workspace.

The tokens ("↑12.3k ↓1.2k $0.042") are the session's: zero after /new, the file's sum
after a resume; the cost shows only when every reply's price is known (`control/usage`).

The context fill ("ctx 41.2k/128k 32%") is the last request's size as the provider
reported it (input plus output tokens), or the estimate after a compaction, over the
model's context window; it shows only when the window is known (config, or a default
for the model's name): a bare count says nothing about how close the limit is.

While an approval question is open the state reads "running 26s · waiting for your
answer": the run goes on only once the user answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.widgets import Static

from ink_tui.control.bus import EventBus
from ink_tui.control.usage import SessionUsage
from ink_tui.ui import clock
from ink_tui.ui.fit_text import Part, fit_parts
from ink_tui.ui.frame_beat import BeatTicker, FrameBeat

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ink_tui.core.events import (
        ApprovalRequest,
        ApprovalResolved,
        ContextUsage,
        Event,
        JobsUpdate,
        MessageEnd,
        StateChange,
    )
    from ink_tui.core.messages import AssistantMessage


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _window(n: int) -> str:
    """A window's size, short: 128k, 1M, 40.96k."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.3g}M"
    return f"{n / 1000:.4g}k" if n >= 1000 else str(n)


def _short_path(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        background: $panel;
        color: $text-muted;
        padding: 0 1;
    }
    """

    def __init__(
        self,
        bus: EventBus,
        *,
        model_label: str,
        is_demo: bool,
        workspace: Path,
        beat: FrameBeat | None = None,
    ) -> None:
        super().__init__()
        self._bus = bus
        # The run's clock, twice a second: in the transcript's frames while it draws.
        self._ticker = BeatTicker(beat or FrameBeat(), 0.5, self._tick)
        self.model_label = model_label
        self.is_demo = is_demo
        self.workspace = workspace
        self.state = "idle"
        self.interrupts = 0
        self.run_started: float | None = None
        self.last_run_s: float | None = None
        # The session's tokens and cost: restarted with the session (`restart_usage`).
        self.usage = SessionUsage()
        # Processes finished commands left running (`JobsUpdate`); shown only when > 0.
        self.jobs = 0
        # The context's fill: tokens of the last request, and the window (None: unknown).
        self.context_tokens: int | None = None
        self.context_window: int | None = None
        # Open approval questions (request ids): the run waits for the user.
        self.asking: set[str] = set()
        self._parts: list[Part] = []
        self._unsubscribe = lambda: None

    @property
    def tokens_in(self) -> int:
        return self.usage.input_tokens

    @property
    def tokens_out(self) -> int:
        return self.usage.output_tokens

    def restart_usage(self, replies: Sequence[AssistantMessage] = ()) -> None:
        """A new session (nothing used yet) or a resumed one (its recorded replies)."""
        self.usage.restart(replies)
        # The fill was the last request's, of the conversation left: the next request of
        # this one says its own (the window, the model's, stays known).
        self.context_tokens = None
        self._paint()

    def tokens_label(self) -> str:
        """ "↑12.3k ↓1.2k", and the cost when it is known: "↑12.3k ↓1.2k $0.042"."""
        tokens = f"↑{_tokens(self.tokens_in)} ↓{_tokens(self.tokens_out)}"
        cost = self.usage.cost_label()
        return f"{tokens} {cost}" if cost else tokens

    def set_model(self, label: str, is_demo: bool) -> None:
        self.model_label = label
        self.is_demo = is_demo
        self._paint()

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self._ticker.start(self)
        self._paint()

    def on_unmount(self) -> None:
        self._unsubscribe()
        self._ticker.stop()

    def _on_event(self, event: Event) -> None:
        # By type name: the event classes are imported with the controller, after the
        # first frame, not with the status bar.
        kind = event.type
        if kind == "state":
            change = cast("StateChange", event)
            self.state = change.state
            self.interrupts = change.interrupts
            if change.state != "running":
                self.asking.clear()
            if change.state != "running" and self.run_started is not None:
                self.last_run_s = clock.now() - self.run_started
                self.run_started = None
                self._ticker.pause()
        elif kind == "run_start":
            if self.run_started is None:
                self.run_started = clock.now()
                self._ticker.resume()
        elif kind == "message_end":
            self.usage.add(cast("MessageEnd", event).message)
        elif kind == "approval_request":
            self.asking.add(cast("ApprovalRequest", event).request_id)
        elif kind == "approval_resolved":
            self.asking.discard(cast("ApprovalResolved", event).request_id)
        elif kind == "jobs_update":
            self.jobs = len(cast("JobsUpdate", event).jobs)
        elif kind == "context_usage" and event.agent_id is None:
            # A sub-agent's context is its own; its tokens still count (message_end).
            context = cast("ContextUsage", event)
            self.context_tokens = context.tokens
            self.context_window = context.context_window
        else:
            return
        self._paint()

    def context_label(self) -> str:
        """ "ctx 41.2k/128k 32%"; "" before any reply or without a known window."""
        if self.context_tokens is None or not self.context_window:
            return ""
        used = _tokens(self.context_tokens)
        share = round(100 * self.context_tokens / self.context_window)
        return f"ctx {used}/{_window(self.context_window)} {share}%"

    def _tick(self) -> None:
        self._paint()

    def _paint(self) -> None:
        # Parts in their order, each with how long it stays when the row is short (see
        # `fit_parts`): the state first, then the model, jobs, context, folder, tokens.
        parts: list[Part] = []
        model = Text("ink ", style="bold")
        model.append(self.model_label, style="bold yellow" if self.is_demo else "bold")
        parts.append(Part(model, 8))
        state = Text()
        if self.state == "running":
            label = "interrupting" if self.interrupts else "running"
            state.append(label, style="bold red" if self.interrupts else "bold green")
            if self.run_started is not None:
                state.append(f" {clock.format_elapsed(clock.now() - self.run_started)}")
            if self.asking:
                state.append("  ·  ")
                state.append("waiting for your answer", style="bold yellow")
        else:
            state.append(self.state)
            if self.last_run_s is not None:
                state.append(f" (last run {clock.format_elapsed(self.last_run_s)})", style="dim")
        parts.append(Part(state, 9))
        parts.append(Part(Text(self.tokens_label()), 1))
        context = self.context_label()
        if context:
            share = (self.context_tokens or 0) / self.context_window if self.context_window else 0
            style = "bold red" if share >= 0.8 else "yellow" if share >= 0.6 else ""
            parts.append(Part(Text(context, style=style), 5))
        if self.jobs:
            jobs = f"{self.jobs} job{'s' if self.jobs != 1 else ''}"
            parts.append(Part(Text(jobs, style="bold yellow"), 6))
        parts.append(Part(Text(_short_path(self.workspace), style="dim"), 3))
        self._parts = parts
        # One row, always (see the CSS): no layout, only this row is drawn again.
        self.refresh()

    def render(self) -> Text:
        """The parts that fit the row's width, the least important dropped first."""
        return fit_parts(self._parts, self.content_size.width or 10_000, separator_style="")
