"""The app's side of extensions: loading them, the trust question, their slash commands.

The user's extensions and a trusted project's load with the controller (after the first
frame). An untrusted project's wait for the trust dialog: nothing of them runs before
the user allows them, and a refusal is a notice (ink asks again next time). Their slash
commands join completion, the palette and parsing through `commands`.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ink_tui.ui.slash_commands import SlashCommand
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController
    from ink_tui.extensions.host import ExtensionHost
    from ink_tui.extensions.startup import ExtensionOptions, Started
    from ink_tui.ui.app_host import AppHost


class AppExtensions:
    def __init__(self, app: AppHost, options: ExtensionOptions | None) -> None:
        self.app = app
        # None loads none (tests, --no-extensions).
        self.options = options
        self.host: ExtensionHost | None = None
        # The extensions' slash commands, for completion, the palette and parsing.
        self.commands: list[SlashCommand] = []

    def start(self, controller: RunController) -> None:
        """Load the user's extensions and a trusted project's; ask about an untrusted one."""
        options = self.options
        if options is None or not options.enabled:
            return
        from ink_tui.extensions.startup import start_extensions
        from ink_tui.ui.slash_commands import COMMANDS

        started = start_extensions(
            controller, options, reserved_commands=[c.name for c in COMMANDS]
        )
        self.host = started.host
        self._refresh_commands()
        if started.pending and started.pending_dir is not None:
            from ink_tui.session.config_files import display_path
            from ink_tui.ui.screens.trust_extensions import TrustExtensions

            self.app.push_screen(
                TrustExtensions(display_path(started.pending_dir), started.pending),
                partial(self._trust_answered, started),
            )

    def close(self) -> None:
        if self.host is not None:
            self.host.close()

    def _trust_answered(self, started: Started, allow: bool | None) -> None:
        from ink_tui.extensions.startup import allow_project, pending_names

        transcript = self.app.query_one(Transcript)
        names = pending_names(started)
        if not allow or self.options is None:
            transcript.add_notice(
                f"This folder's extensions were not loaded ({names}); ink asks again next time.",
                "warning",
            )
            return
        warning = allow_project(started, self.options)
        if warning:
            transcript.add_notice(warning, "warning")
        self._refresh_commands()
        transcript.add_notice(f"Allowed this folder's extensions ({names}).")

    def _refresh_commands(self) -> None:
        host = self.host
        commands = host.commands.values() if host is not None else ()
        self.commands = [
            SlashCommand(
                c.name,
                c.description or f"from extension {c.extension}",
                f"/{c.name} [argument]",
                True,
                extension=c.extension,
            )
            for c in commands
        ]
