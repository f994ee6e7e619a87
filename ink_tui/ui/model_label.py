"""The model as the status bar names it.

A module of its own so the app's start (which names the model before the first frame)
does not import the slash commands, and difflib with them, to get one short function.
"""

from __future__ import annotations


def model_label(base_url: str | None, model: str | None) -> str:
    if base_url is None:
        return "demo model (offline)"
    host = base_url.split("://", 1)[-1].split("/", 1)[0]
    return f"{model or 'default model'} @ {host}"
