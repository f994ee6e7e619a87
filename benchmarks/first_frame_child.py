"""The process measured by figure 1: `ink` (or the bare app) until its first frame, then idle.

Run by `fig1_first_screen` (and `fig8_resume`) under a pseudo-terminal as `python -m
benchmarks.first_frame_child KIND OUT IDLE_S WORKSPACE [INK_FLAGS...]`. It imports
nothing beyond the standard library and `textual.app` (which both apps import anyway)
before the app starts, and only hooks `App.post_display_hook`, which Textual calls right
after it has written a frame to the terminal. At the first frame it notes the time (the
parent's `time.monotonic()` before spawning is the start; the clock is system-wide), its
RSS and which modules are loaded; `IDLE_S` later (the controller has been built by then)
the RSS and modules again; then it writes OUT as JSON and exits the app.

KIND `ink` runs the real entry point (`python -m ink_tui -C WORKSPACE INK_FLAGS...`, the
offline demo model; figure 8 adds `-r ID`); KIND `bare` a Textual app with one Static and
one Input.
"""

from __future__ import annotations

import sys
import time
from typing import Any

# What "nothing of the provider, tools or sessions" means for figure 1.
HEAVY = ("httpx", "httpcore", "jsonschema", "pathspec")


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return -1.0


def _modules() -> dict[str, list[str]]:
    loaded = list(sys.modules)
    return {
        "ink_tui": sorted(name for name in loaded if name.startswith("ink_tui")),
        "heavy": sorted(name for name in loaded if name.split(".")[0] in HEAVY and "." not in name),
        "count": [str(len(loaded))],
    }


def main() -> None:
    kind, out, idle_s, workspace = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    from textual.app import App

    state: dict[str, Any] = {}

    def finish(app: App[Any]) -> None:
        state["idle_t"] = time.monotonic()
        state["rss_idle"] = _rss_mib()
        state["modules_idle"] = _modules()
        import json

        with open(out, "w") as file:
            json.dump(state, file)
        app.exit()

    def post_display_hook(app: App[Any]) -> None:
        if "frame_t" in state:
            return
        state["frame_t"] = time.monotonic()
        state["rss_frame"] = _rss_mib()
        state["modules_frame"] = _modules()
        app.set_timer(idle_s, lambda: finish(app))

    App.post_display_hook = post_display_hook  # type: ignore[method-assign,assignment]

    if kind == "ink":
        import runpy

        sys.argv = ["ink", "-C", workspace, *sys.argv[5:]]
        try:
            runpy.run_module("ink_tui", run_name="__main__", alter_sys=True)
        except SystemExit as exit_:
            if exit_.code not in (0, None):
                raise
        return

    from textual.app import ComposeResult
    from textual.widgets import Input, Static

    class BareApp(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("bare baseline ready")
            yield Input(placeholder="type here")

    BareApp().run()


if __name__ == "__main__":
    main()
