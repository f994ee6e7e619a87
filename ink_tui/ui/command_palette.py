"""Every slash command in Textual's command palette (Ctrl+P), and Textual's own.

Choosing one posts `RunSlashCommand(name)` to the App, the same message a typed "/name"
becomes, so both paths run one handler. The palette passes no argument: commands that
take one (/resume, /model) then ask with a picker. Each command is one entry, its usage
and summary on one line ("/resume [session id] — Resume a saved session"): a help line
under it read as a second entry.

Textual's system commands (Theme, Screenshot, Keys, Maximize, ...) come from
`SystemCommands`, all but Quit: Textual's quits at once, without settling the run or
setting ink's exit status, so /quit stands for it.

Register them on the App as one provider, `COMMANDS = {PaletteCommands}`, and leave
`ENABLE_COMMAND_PALETTE` at its default, True. One, not the two: Textual lists the hits
of equal score (and everything before a key is typed) in the order they arrive, and
two providers arrive in the order of the `COMMANDS` set, which is by object address, so
the list came out in a different order from one start to the next.
"""

from __future__ import annotations

from typing import Any

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.screen import Screen
from textual.style import Style
from textual.types import IgnoreReturnCallbackType

from ink_tui.ui.slash_commands import RunSlashCommand, SlashCommand, all_commands


def palette_text(command: SlashCommand) -> str:
    """How a command reads in the palette, with its arguments:
    "/model [name] — Switch among the configured models"."""
    return f"{command.usage} — {command.summary}"


def _highlight(matcher: Matcher, text: str) -> Content:
    """`text` with the matched characters marked, read as plain text: Textual's
    `highlight` reads it as markup, which swallows "[session id]"."""
    content = Content(text)
    _, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class SlashCommandProvider(Provider):
    """The slash commands as palette commands."""

    def _runner(self, command: SlashCommand) -> IgnoreReturnCallbackType:
        app = self.app

        def run() -> None:
            app.post_message(RunSlashCommand(command.name))

        return run

    def _commands(self) -> list[SlashCommand]:
        # ink's own, then those the app's extensions registered.
        return all_commands(getattr(self.app, "extra_commands", ()))

    async def discover(self) -> Hits:
        """With nothing typed yet: every command, in display order."""
        for command in self._commands():
            text = palette_text(command)
            # Content, not str: a str prompt is read as markup too.
            yield DiscoveryHit(Content(text), self._runner(command), text=text)

    async def search(self, query: str) -> Hits:
        """Commands matching `query` (fuzzy, on the name and summary)."""
        # A typed leading "/" is habit from the input box, not part of what to match.
        wanted = query.strip().removeprefix("/")
        if not wanted:
            # Just "/": Textual's matcher cannot match an empty query, and every
            # command is a fair answer.
            async for hit in self.discover():
                yield hit
            return
        matcher = self.matcher(wanted)
        for command in self._commands():
            text = palette_text(command)
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score,
                    _highlight(matcher, text),
                    self._runner(command),
                    text=text,
                )


# Textual's commands that ink leaves out: its Quit skips ink's own exit (/quit).
LEFT_OUT = frozenset({"Quit"})


class SystemCommands(Provider):
    """Textual's system commands (`App.get_system_commands`), but for `LEFT_OUT`."""

    def _commands(self) -> list[SystemCommand]:
        commands = self.app.get_system_commands(self.screen)
        return sorted((c for c in commands if c.title not in LEFT_OUT), key=lambda c: c.title)

    async def discover(self) -> Hits:
        for command in self._commands():
            if command.discover:
                yield DiscoveryHit(command.title, command.callback, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query.strip())
        for command in self._commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(command.title), command.callback, help=command.help
                )


class PaletteCommands(Provider):
    """ink's commands, then Textual's (`SystemCommands`), from one provider: the order of
    the palette's list is the same on every start (see the module's docstring)."""

    def __init__(self, screen: Screen[Any], match_style: Style | None = None) -> None:
        super().__init__(screen, match_style)
        self._parts = (
            SlashCommandProvider(screen, match_style),
            SystemCommands(screen, match_style),
        )

    async def discover(self) -> Hits:
        for part in self._parts:
            async for hit in part.discover():
                yield hit

    async def search(self, query: str) -> Hits:
        for part in self._parts:
            async for hit in part.search(query):
                yield hit
