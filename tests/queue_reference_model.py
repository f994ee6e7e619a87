"""A reference model of the run-control contract (/work/shared/spec/run-control.md).

Written from the contract, apart from `ink_tui.control` and `ink_tui.core.loop`, so the
property test in `test_queue_property.py` can hold the real controller against it. Plain
Python, no ink imports: it must not share a bug with the code it checks.

The model only moves between *quiescent points* the test can observe: idle, a model call
waiting for its reply, or a tool call waiting to finish. Everything the controller does
between two such points (taking queued input, settling a run, running shell lines) is
done here in one step. It records what should be observable: the user texts of every
model request, each user message with its kind, shell lines run, restores to the editor,
how each run ended, and the fate of every input the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["steer", "follow_up"]
Take = Literal["all", "one-at-a-time"]
Phase = Literal["idle", "model", "tool"]
Fate = Literal["sent", "shell", "restored", "deleted"]


def is_shell(text: str) -> bool:
    return text.startswith("!")


@dataclass
class Entry:
    id: int
    text: str
    mode: Mode


@dataclass
class ReferenceModel:
    steering_mode: Take = "all"
    follow_up_mode: Take = "one-at-a-time"
    max_iterations: int = 100

    phase: Phase = "idle"
    queue: list[Entry] = field(default_factory=list)
    # Every user text in the conversation history, across runs (the history is shared).
    history: list[str] = field(default_factory=list)
    # The user texts each model request carried, in order of the requests.
    requests: list[list[str]] = field(default_factory=list)
    user_messages: list[tuple[str, str]] = field(default_factory=list)
    shell_runs: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    # How each run ended: completed, max_iterations, aborted, failed.
    run_ends: list[str] = field(default_factory=list)
    # Every input's final text -> where it ended. An edit that lands on a queued entry
    # replaces that entry's text: the old text is no longer an input of its own.
    fates: dict[str, Fate] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    skip_steering: bool = False
    tool_replies: int = 0
    next_id: int = 1

    @property
    def running(self) -> bool:
        return self.phase != "idle"

    # -- what the user does ---------------------------------------------------------

    def submit(self, text: str, mode: Mode) -> int | None:
        """Returns the id of the queued entry, or None when the line started at once."""
        self.inputs.append(text)
        if not self.running:
            self._start(text)
            self._run_queue_after_completion()
            return None
        return self._add(text, mode)

    def edit(self, entry_id: int, text: str, mode: Mode) -> int | None:
        """An edit of a queued entry; one whose entry is gone is still kept (queued again
        while running, else to the editor). Returns a new entry's id when it was queued."""
        entry = self._get(entry_id)
        if entry is not None:
            self.inputs.remove(entry.text)
            self.inputs.append(text)
            entry.text = text
            return None
        self.inputs.append(text)
        if self.running:
            return self._add(text, mode)
        self.restored.append(text)
        self.fates[text] = "restored"
        return None

    def set_mode(self, entry_id: int, mode: Mode) -> None:
        entry = self._get(entry_id)
        if entry is not None:
            entry.mode = mode

    def toggle_mode(self, entry_id: int) -> None:
        entry = self._get(entry_id)
        if entry is not None:
            entry.mode = "follow_up" if entry.mode == "steer" else "steer"

    def move(self, entry_id: int, offset: int) -> None:
        entry = self._get(entry_id)
        if entry is not None:
            self.move_to(entry_id, self.queue.index(entry) + offset)

    def move_to(self, entry_id: int, index: int) -> None:
        entry = self._get(entry_id)
        if entry is None:
            return
        self.queue.remove(entry)
        self.queue.insert(max(0, min(index, len(self.queue))), entry)

    def remove(self, entry_id: int) -> str | None:
        entry = self._get(entry_id)
        if entry is None:
            return None
        self.queue.remove(entry)
        self.fates[entry.text] = "deleted"
        return entry.text

    def pull_to_editor(self) -> None:
        """Alt+Up: every queued entry back to the editor; the run goes on."""
        self._restore_all()

    def interrupt(self) -> None:
        if not self.running:
            return
        # The abort reaches the model call or the tool at once; the run ends aborted
        # and everything queued goes back to the editor.
        self._end_run("aborted")
        self._restore_all()

    # -- what the model and tools do ------------------------------------------------

    def model_stop(self) -> None:
        """The reply has no tool calls: the model would stop here."""
        assert self.phase == "model"
        steers = self._take("steer", self.steering_mode)
        if steers:
            self._append(steers, "steer")
            self.skip_steering = True
            self._top()
            return
        follow_ups = self._take("follow_up", self.follow_up_mode)
        if follow_ups:
            self._append(follow_ups, "follow_up")
            self.skip_steering = True
            self._top()
            return
        self._end_run("completed")
        self._run_queue_after_completion()

    def model_tools(self, wait: bool) -> None:
        """The reply asks for a tool; `wait`: it runs until `tool_done()` (or an abort)."""
        assert self.phase == "model"
        self.phase = "tool"
        if not wait:
            self.tool_done()

    def tool_done(self) -> None:
        assert self.phase == "tool"
        self.tool_replies += 1
        if self.tool_replies >= self.max_iterations:
            self._end_run("max_iterations")
            self._run_queue_after_completion()
            return
        self._top()

    def model_fail(self) -> None:
        """The request failed for good: nothing queued runs, all of it is restored."""
        assert self.phase == "model"
        self._end_run("failed")
        self._restore_all()

    # -- the loop and settling ------------------------------------------------------

    def _start(self, text: str) -> None:
        if is_shell(text):
            self.shell_runs.append(text)
            self.fates[text] = "shell"
            self.run_ends.append("completed")
            return
        self.tool_replies = 0
        self.skip_steering = False
        self._append([text], "prompt")
        self._top()

    def _top(self) -> None:
        """Top of a loop iteration: steering input unless just taken, then a model call."""
        if self.skip_steering:
            self.skip_steering = False
        else:
            self._append(self._take("steer", self.steering_mode), "steer")
        self.requests.append(list(self.history))
        self.phase = "model"

    def _run_queue_after_completion(self) -> None:
        """A completed run: what is still queued runs in order, each a run of its own."""
        while self.phase == "idle" and self.queue:
            self._start(self.queue.pop(0).text)

    def _end_run(self, how: str) -> None:
        self.run_ends.append(how)
        self.phase = "idle"

    def _take(self, mode: Mode, how: Take) -> list[str]:
        taken = [e for e in self.queue if e.mode == mode and not is_shell(e.text)]
        if how == "one-at-a-time":
            taken = taken[:1]
        for entry in taken:
            self.queue.remove(entry)
        return [e.text for e in taken]

    def _append(self, texts: list[str], kind: str) -> None:
        for text in texts:
            self.history.append(text)
            self.user_messages.append((kind, text))
            self.fates[text] = "sent"

    def _restore_all(self) -> None:
        if not self.queue:
            return
        texts = [e.text for e in self.queue]
        self.queue.clear()
        self.restored.append("\n\n".join(texts))
        for text in texts:
            self.fates[text] = "restored"

    def _add(self, text: str, mode: Mode) -> int:
        entry = Entry(self.next_id, text, mode)
        self.next_id += 1
        self.queue.append(entry)
        return entry.id

    def _get(self, entry_id: int) -> Entry | None:
        return next((e for e in self.queue if e.id == entry_id), None)
