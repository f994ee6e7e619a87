"""The first screen's welcome: the model, the folder, the few keys that matter and where
help is. It sits where the conversation will be and goes at the first prompt.

Plain `Text`, no other import: it is part of the first frame (see ui/preload.py).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

KEYS = (
    ("Enter", "sends; while a run works, steers it"),
    ("Alt+Enter", "queues a follow-up for after the run"),
    ("Ctrl+C", "interrupts the run (twice at idle quits)"),
    ("Alt+Up", "pulls the queue back into the editor"),
    ("Ctrl+G", "answers a question (approval)"),
)
HELP_LINE = (("/help", " for every command  ·  "), ("Ctrl+P", " the palette"))


def _folder(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


def welcome_text(model_label: str, is_demo: bool, workspace: Path, compact: bool = False) -> Text:
    """The welcome; `compact` (a short terminal) leaves out the blank lines."""
    gap = "\n" if compact else "\n\n"
    text = Text()
    text.append("ink", style="bold")
    text.append("  ·  model ", style="dim")
    if is_demo:
        text.append("offline demo", style="bold yellow")
        text.append(" (set --base-url/--api-key for a real model)", style="dim")
    else:
        text.append(model_label, style="bold")
    text.append("\n")
    text.append("folder ", style="dim")
    text.append(_folder(workspace), style="bold")
    text.append(gap)
    width = max(len(key) for key, _ in KEYS) + 2
    for key, what in KEYS:
        text.append(f"  {key:<{width}}", style="bold")
        text.append(f"{what}\n", style="dim")
    if not compact:
        text.append("\n")
    for key, what in HELP_LINE:
        text.append(key, style="bold")
        text.append(what, style="dim")
    return text


class Welcome(Static):
    DEFAULT_CSS = """
    Welcome {
        height: auto;
        padding: 1 2;
        color: $text-muted;
    }
    Welcome.-compact {
        padding: 0 2;
    }
    """

    def __init__(self, *, model_label: str, is_demo: bool, workspace: Path) -> None:
        super().__init__(welcome_text(model_label, is_demo, workspace), id="welcome")
        self._about = (model_label, is_demo, workspace)

    @property
    def full_rows(self) -> int:
        return 12

    def set_compact(self, compact: bool) -> None:
        """A short terminal: no blank lines, so the input and the bars keep their rows."""
        if compact != self.has_class("-compact"):
            self.set_class(compact, "-compact")
            self.update(welcome_text(*self._about, compact=compact))
