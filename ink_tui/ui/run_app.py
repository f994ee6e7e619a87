"""The `ink` command's full-screen app: the controller it builds after the first frame,
the app around it, and the exit status it leaves with.

Apart from the app class (ui/app.py): that module
is about what the app does, this one about how the command puts it together (the
assembled controller, the process guards). The app is imported when it runs: the
command line imports this module before it needs the app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ink_tui.control.bus import EventBus
    from ink_tui.control.controller import RunController
    from ink_tui.extensions.startup import ExtensionOptions
    from ink_tui.session.config import Config
    from ink_tui.ui.startup import SessionPlan


def run_app(
    config: Config,
    workspace: Path,
    plan: SessionPlan,
    *,
    extensions: ExtensionOptions | Callable[[], ExtensionOptions] | None = None,
) -> int:
    from ink_tui.assemble import assemble_controller
    from ink_tui.ui.app import InkApp
    from ink_tui.ui.model_label import model_label

    model = config.model_config()

    def make_controller(bus: EventBus) -> RunController:
        from ink_tui.tools.job_exit import guard_exit

        # The `ink` command's process-wide guards (subreaper, exit paths), before any
        # command can run; after the first frame, which does not need their imports.
        guard_exit()
        # Run settings bring the tool and message types: built with the controller,
        # after the first frame.
        settings = config.run_settings()
        from ink_tui.ui.widgets.transcript_pacing import NETWORK_GATHER_S

        return assemble_controller(
            model,
            workspace,
            settings=settings,
            bus=bus,
            user_config_dir=config.user_config_dir,
            gather_s=NETWORK_GATHER_S,
        )

    app = InkApp(
        make_controller,
        model_label=model_label(model.base_url, model.model),
        is_demo=model.is_demo,
        workspace=workspace,
        plan=plan,
        notices=config.problems,
        config=config,
        freeze_startup_heap=True,
        extensions=extensions,
    )
    app.run()
    # The exit status is the app's return code (130 after a double Ctrl+C, 1 after a
    # crash); `run()` returns the return value, which ink does not set.
    return app.return_code or 0
