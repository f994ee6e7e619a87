"""Every slash command in Textual's command palette (Ctrl+P).

Choosing one posts `RunSlashCommand(name)` to the App, the same message a typed "/name"
becomes, so both paths run one handler. The palette passes no argument: commands that
take one (/resume, /model) then ask with a picker.

Register it on the App: `COMMANDS = {SlashCommandProvider}` (add
`App.COMMANDS` to keep Textual's own system commands too) and leave
`ENABLE_COMMAND_PALETTE` at its default, True.
"""

from __future__ import annotations

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape
from textual.types import IgnoreReturnCallbackType

from ink_tui.ui.slash_commands import RunSlashCommand, SlashCommand, all_commands


def palette_text(command: SlashCommand) -> str:
    """How a command reads in the palette: "/model — Switch among the configured models"."""
    return f"/{command.name} — {command.summary}"


def _help(command: SlashCommand) -> str | None:
    # The usage line only says something new when there is an argument to show. The
    # palette reads help as markup, which would swallow "[session id]": escape it.
    return escape(command.usage) if command.takes_argument else None


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
            yield DiscoveryHit(Content(text), self._runner(command), text=text, help=_help(command))

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
                    matcher.highlight(text),
                    self._runner(command),
                    text=text,
                    help=_help(command),
                )
