"""Getting the server's heap ready before it listens: a run's modules loaded, then frozen.

A full garbage collection walks every tracked object, and it stops the event loop, so
every session's stream, while it lasts. Most of `ink serve`'s objects are its modules'
(some 60,000 once a run has loaded httpx, the provider, the loop and the tools), and
they live as long as the server. Left to the first run, those imports land in the middle
of its stream; left in the collector's view, each full pass while 20 sessions streamed
took 50-180 ms (figure 7 of `python -m benchmarks`). So they are imported before the
server listens, and everything alive then is frozen: later passes walk only what the
sessions hold.
"""

from __future__ import annotations

import importlib

from ink_tui.tools import TOOL_MODULE_NAMES

RUN_MODULES = (
    "httpx",
    # Checks tool arguments: the first tool call would import it.
    "jsonschema",
    "ink_tui.assemble",
    "ink_tui.control.controller",
    "ink_tui.core.loop",
    "ink_tui.providers.openai_compat",
    "ink_tui.session.context_files",
    "ink_tui.session.system_prompt",
    "ink_tui.session.session_writer",
    "ink_tui.tools.process_group",
    *(f"ink_tui.tools.{name}" for name in TOOL_MODULE_NAMES),
)


def prepare_heap() -> None:
    from ink_tui.fastpaths import gc_policy

    for name in RUN_MODULES:
        importlib.import_module(name)
    gc_policy.own_process()
    gc_policy.freeze_server_heap()
