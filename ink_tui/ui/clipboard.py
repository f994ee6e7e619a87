"""Copying (/copy, and Ctrl+C on a selection): to the system clipboard through a tool
when there is one, else OSC 52.

A clipboard tool on PATH (wl-copy, xclip, xsel, pbcopy) says whether it worked: its
exit status. OSC 52 asks the terminal to set its clipboard, and nothing comes back, so
ink never says it "copied" that way; it says what it sent. Under tmux the sequence goes
nowhere unless tmux lets programs set the clipboard (`set -g set-clipboard on`; the
default, `external`, does not).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# (tool, its arguments), in the order tried. wl-copy only under Wayland: elsewhere it
# fails after a while, and xclip may still work through XWayland.
TOOLS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("wl-copy", ()),
    ("xclip", ("-selection", "clipboard")),
    ("xsel", ("--clipboard", "--input")),
    ("pbcopy", ()),
)
TOOL_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class CopyOutcome:
    tool: str | None
    """The clipboard tool that took the text; None: OSC 52 was sent."""
    failed: str = ""
    """Why a tool that was found did not take it ("xclip: exit status 1")."""


def find_tools(env: Mapping[str, str] | None = None) -> list[tuple[str, list[str]]]:
    """The clipboard tools on PATH, each with the command line that copies stdin."""
    env = os.environ if env is None else env
    path = env.get("PATH", "")
    found = []
    for name, args in TOOLS:
        if name == "wl-copy" and not env.get("WAYLAND_DISPLAY"):
            continue
        program = shutil.which(name, path=path)
        if program is not None:
            found.append((name, [program, *args]))
    return found


def copy_text(
    text: str, send_osc52: Callable[[str], None], env: Mapping[str, str] | None = None
) -> CopyOutcome:
    """Copy `text` with the first tool that works; without one, `send_osc52(text)`."""
    failures = []
    for name, command in find_tools(env):
        try:
            # No pipes but stdin: xclip stays behind to serve the selection, and a pipe
            # it kept open would hold this call until then.
            done = subprocess.run(
                command,
                input=text.encode(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=TOOL_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            failures.append(f"{name}: {error}")
            continue
        if done.returncode == 0:
            return CopyOutcome(name)
        failures.append(f"{name}: exit status {done.returncode}")
    send_osc52(text)
    return CopyOutcome(None, "; ".join(failures))


def copy_message(what: str, outcome: CopyOutcome, env: Mapping[str, str] | None = None) -> str:
    """What /copy tells the user: what it did, never more than it knows."""
    env = os.environ if env is None else env
    if outcome.tool is not None:
        return f"Copied {what} to the clipboard (via {outcome.tool})."
    message = (
        f"Sent {what} to the terminal's clipboard (OSC 52); if nothing arrives, your "
        "terminal may not accept it."
    )
    if env.get("TMUX"):
        message += (
            "\nUnder tmux, set `set -g set-clipboard on` (in ~/.tmux.conf) to let it through."
        )
    if outcome.failed:
        message += f" ({outcome.failed})"
    return message


def copy_flash(what: str, outcome: CopyOutcome, env: Mapping[str, str] | None = None) -> str:
    """The one line the hint row shows after Ctrl+C copied a selection: what it did, as
    `copy_message` says it at more length."""
    env = os.environ if env is None else env
    if outcome.tool is not None:
        return f"Copied {what} (via {outcome.tool})"
    message = f"Sent {what} to the terminal (OSC 52)"
    if env.get("TMUX"):
        message += "; under tmux it needs `set -g set-clipboard on`"
    if outcome.failed:
        message += f" ({outcome.failed})"
    return message
