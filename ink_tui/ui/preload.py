"""Importing what the run controller needs on a thread, before it is built.

The first frame imports nothing of the loop, providers, tools or session store. Building
the controller right after that frame imported them on the UI's event loop: about 130 ms
(httpx alone is a good part) during which the first keys a user types wait. Imported on
a worker thread instead, the event loop goes on drawing and taking keys; anything typed
before the controller exists is kept and submitted once it does.
"""

from __future__ import annotations

import importlib

from ink_tui.tools import TOOL_MODULE_NAMES

CONTROLLER_MODULES = (
    "httpx",
    # Checks tool arguments; left to the first tool call, its import froze the UI ~100 ms.
    "jsonschema",
    "ink_tui.assemble",
    # The extensions' options and loader (`InkApp` makes the options after the frame).
    "ink_tui.extensions.startup",
    "ink_tui.control.controller",
    "ink_tui.core.loop",
    "ink_tui.providers.openai_compat",
    "ink_tui.providers.demo",
    "ink_tui.session.context_files",
    "ink_tui.session.system_prompt",
    "ink_tui.session.session_writer",
    "ink_tui.tools.process_group",
    *(f"ink_tui.tools.{name}" for name in TOOL_MODULE_NAMES),
)


def import_controller_modules() -> None:
    for name in CONTROLLER_MODULES:
        importlib.import_module(name)
