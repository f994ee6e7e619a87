"""What every reply assembler shares (OpenAI's chunks, Anthropic's events).

Shown text: deltas of one kind that arrive together are gathered into one run, so one
network read becomes one chunk to show per kind (`take()`), not one per delta.
What arrived: counters the provider reads at the end to tell a whole reply from a cut
or a wrong one (`reply_end.judge_end`).
"""

from __future__ import annotations

from collections.abc import Callable

from ink_tui.core.provider_api import TextChunk, ThinkingChunk

# Lives in core (the agent loop gathers a reply with it too); providers import it from here.
from ink_tui.core.text_pieces import Pieces as Pieces

ShownChunk = TextChunk | ThinkingChunk


class ReplyAssembly:
    def __init__(self, model: str, source: str, redact: Callable[[str], str]) -> None:
        self._model = model
        self._source = source
        # Applied to the server's own text, which may quote the API key.
        self._redact = redact
        # Chunks ready for `take()`, and the run of same-kind deltas still being gathered.
        self._shown: list[ShownChunk] = []
        self._run_kind: type[ShownChunk] = TextChunk
        self._run: list[str] = []
        # Events with data, those that were the protocol's own, and the first that was not
        # (with the error text it carried, if any).
        self.events = 0
        self.chunks = 0
        self.stray: str | None = None
        self.stray_message = ""

    def take(self) -> list[ShownChunk]:
        """What the events fed since the last call add to show, same-kind runs merged."""
        self._end_run()
        shown, self._shown = self._shown, []
        return shown

    def redact(self, text: str) -> str:
        """`text` with the API key masked: for anything of the server's that is shown."""
        return self._redact(text)

    def _show(self, kind: type[ShownChunk], text: str) -> None:
        if kind is not self._run_kind:
            self._end_run()
            self._run_kind = kind
        self._run.append(text)

    def _end_run(self) -> None:
        if self._run:
            run = self._run
            self._shown.append(self._run_kind(run[0] if len(run) == 1 else "".join(run)))
            self._run = []
