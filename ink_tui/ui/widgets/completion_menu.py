"""The completion popup above the input box: slash commands and workspace paths.

It opens when the user edits the text so that the cursor sits in a token:

- "/name" at the very start of the input: the commands whose name starts with it;
- "@fragment" at the start or after whitespace, anywhere: workspace files and folders.

While open it takes Up/Down (move, wrapping), Tab or Enter (accept: the token is replaced
by "/name " or "@path "; a folder is inserted as "@dir/" and the menu goes on inside it)
and Escape (close; the text stays). Enter only accepts: a second Enter sends. The menu
closes when the token no longer has candidates or the cursor leaves it; moving the cursor
never opens it, and neither does text the box loads itself (history, restored input), so
a recalled "/model" does not capture the next Up.

The menu does not take focus: `PromptInput` hands it those keys (`Completion` protocol)
and tells it about every text or cursor change. It sits in the layout right above the
input and takes its rows from the transcript while open, which needs no positioning code
and cannot cover the text being typed.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.text_area import DocumentBase, Location

from ink_tui.ui.file_completion import FileIndex, current_token
from ink_tui.ui.slash_commands import command_token, complete_command
from ink_tui.ui.widgets.prompt_input import PromptInput

MAX_VISIBLE_ROWS = 8
LABEL_WIDTH_CAP = 32


@dataclass(frozen=True, slots=True)
class Candidate:
    label: str
    """What the row shows first: "/model", "src/main.py"."""
    detail: str
    """Shown dimmed after the label: a command's summary, "folder", or ""."""
    replacement: str
    """The text that replaces the token when accepted."""
    start: int
    end: int
    """The token's span in the input text (offsets)."""


class CompletionMenu(OptionList, can_focus=False):
    DEFAULT_CSS = f"""
    CompletionMenu {{
        display: none;
        height: auto;
        max-height: {MAX_VISIBLE_ROWS};
        border: none;
        padding: 0 1;
        margin: 0 1;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        /* Never focused, so the "blurred" highlight would be too faint to follow. */
        & > .option-list--option-highlighted {{
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }}
    }}
    CompletionMenu.-open {{
        display: block;
    }}
    """

    def __init__(
        self,
        prompt: PromptInput,
        file_index: FileIndex | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """`prompt` is the box to complete in; without `file_index`, "@" offers nothing."""
        super().__init__(id=id, classes=classes, markup=False)
        self._prompt = prompt
        self._files = file_index
        self._candidates: list[Candidate] = []
        # Live: the last edit left the cursor in a token and nothing has closed it since.
        self._active = False
        # The text and cursor offset last looked at, to tell an edit from a cursor move.
        self._seen_text: str | None = None
        self._seen_offset: int | None = None
        self._refreshing = False
        prompt.completion = self

    # -- state ----------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self._active and bool(self._candidates)

    @property
    def candidates(self) -> list[Candidate]:
        """What the menu offers now, in display order (empty when closed)."""
        return list(self._candidates) if self.is_open else []

    @property
    def highlighted_candidate(self) -> Candidate | None:
        if not self.is_open or self.highlighted is None:
            return None
        return self._candidates[self.highlighted]

    def on_unmount(self) -> None:
        if self._prompt.completion is self:
            self._prompt.completion = None

    # -- the Completion protocol (called by PromptInput) ----------------------------

    def sync(self) -> None:
        """Look at the prompt's text and cursor again: open, filter or close."""
        text = self._prompt.text
        offset = self._cursor_offset()
        if text == self._seen_text and offset == self._seen_offset:
            return
        edited = text != self._seen_text
        self._seen_text, self._seen_offset = text, offset
        if edited:
            self._active = True
        if self._active:
            self._update(text, offset)

    def take_key(self, key: str) -> bool:
        # The key may have arrived before the message about the last edit: decide on the
        # text as it is now, not as last shown.
        self.sync()
        if not self.is_open:
            return False
        if key == "up":
            self._move(-1)
        elif key == "down":
            self._move(1)
        elif key == "enter" and self._already_complete():
            # "/copy" typed in full: Enter runs it rather than completing to "/copy ".
            self.dismiss()
            return False
        elif key in ("tab", "enter"):
            self.accept()
        elif key == "escape":
            self.dismiss()
        else:
            return False
        return True

    def _already_complete(self) -> bool:
        index = self.highlighted or 0
        if not 0 <= index < len(self._candidates):
            return False
        chosen = self._candidates[index]
        typed = self._prompt.text[chosen.start : chosen.end]
        return typed == chosen.replacement.rstrip()

    def dismiss(self) -> None:
        self._seen_text = self._prompt.text
        self._seen_offset = self._cursor_offset()
        self._active = False
        self._show([])

    # -- actions --------------------------------------------------------------------

    def accept(self, index: int | None = None) -> None:
        """Replace the token with the highlighted (or `index`) candidate."""
        if not self.is_open:
            return
        if index is None:
            index = self.highlighted or 0
        chosen = self._candidates[index]
        prompt = self._prompt
        text = prompt.text
        replacement = chosen.replacement
        if replacement.endswith(" ") and text[chosen.end : chosen.end + 1].isspace():
            # A blank already follows the token: step over it instead of adding another.
            replacement = replacement[:-1]
            cursor = chosen.start + len(replacement) + 1
        else:
            cursor = chosen.start + len(replacement)
        prompt.replace(
            replacement,
            _location_of(prompt.document, chosen.start),
            _location_of(prompt.document, chosen.end),
            maintain_selection_offset=False,
        )
        prompt.move_cursor(_location_of(prompt.document, cursor))
        # An edit like any other: a folder reopens the menu inside it, anything else
        # leaves the cursor after a blank, outside any token.
        self.sync()

    def _move(self, delta: int) -> None:
        current = self.highlighted or 0
        self.highlighted = (current + delta) % len(self._candidates)

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        # A click on a row; the keys never reach the list itself.
        event.stop()
        self.accept(event.option_index)

    def _on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # Internal to the menu: nobody above has a use for it.
        event.stop()

    # -- computing the candidates ---------------------------------------------------

    def _cursor_offset(self) -> int | None:
        prompt = self._prompt
        if not prompt.selection.is_empty:
            return None  # a selection is being made: not a moment to complete
        return _offset_of(prompt.document, prompt.cursor_location)

    def _update(self, text: str, offset: int | None) -> None:
        candidates = None if offset is None else self._candidates_at(text, offset)
        if candidates is None:
            # The cursor left the token (or there never was one): done until the next edit.
            self._active = False
            candidates = []
        self._show(candidates)

    def _candidates_at(self, text: str, offset: int) -> list[Candidate] | None:
        """Candidates for the token at `offset`; None when there is no token there."""
        command = command_token(text, offset)
        if command is not None:
            return [
                Candidate(f"/{found.name}", found.summary, f"/{found.name} ", 0, command.end)
                for found in complete_command(
                    command.prefix, getattr(self.app, "extra_commands", ())
                )
            ]
        token = current_token(text, offset)
        if token is None:
            return None
        if self._files is None:
            return []
        if self._files.is_stale:
            self._refresh_files()
        return [
            Candidate(
                path,
                "folder" if path.endswith("/") else "",
                # No blank after a folder: the user usually goes on into it.
                f"@{path}" if path.endswith("/") else f"@{path} ",
                token.start,
                token.end,
            )
            for path in self._files.matches(token.fragment)
        ]

    def _refresh_files(self) -> None:
        if self._refreshing or not self.is_mounted:
            return
        self._refreshing = True
        self.run_worker(self._refresh_and_update(), group="completion-files", exit_on_error=False)

    async def _refresh_and_update(self) -> None:
        assert self._files is not None
        try:
            changed = await self._files.refresh()
        finally:
            self._refreshing = False
        if changed and self._active:
            offset = self._cursor_offset()
            if offset is not None:
                self._update(self._prompt.text, offset)

    # -- drawing --------------------------------------------------------------------

    def _show(self, candidates: list[Candidate]) -> None:
        previous = self.highlighted_candidate
        self._candidates = candidates
        self.set_class(self.is_open, "-open")
        if not candidates:
            self.clear_options()
            return
        width = min(max(len(candidate.label) for candidate in candidates), LABEL_WIDTH_CAP)
        self.set_options(_row(candidate, width) for candidate in candidates)
        # Keep the user's place while they narrow the list, when the row is still there.
        labels = [candidate.label for candidate in candidates]
        index = labels.index(previous.label) if previous and previous.label in labels else 0
        self.highlighted = index


# Offsets in `TextArea.text` <-> (row, column) locations. The base document type that
# `TextArea.document` is declared as has no such conversion; lines are joined with the
# document's own newline, which may be two characters long.


def _offset_of(document: DocumentBase, location: Location) -> int:
    row, column = location
    newline = len(document.newline)
    return sum(len(document.get_line(line)) + newline for line in range(row)) + column


def _location_of(document: DocumentBase, offset: int) -> Location:
    newline = len(document.newline)
    for row in range(document.line_count):
        length = len(document.get_line(row))
        if offset <= length:
            return (row, offset)
        offset -= length + newline
        if offset < 0:  # inside a two-character newline
            return (row, length)
    return document.end


def _row(candidate: Candidate, width: int) -> Text:
    row = Text(no_wrap=True, overflow="ellipsis")
    row.append(candidate.label.ljust(width), style="bold")
    if candidate.detail:
        row.append("  ")
        row.append(candidate.detail, style="dim")
    return row
