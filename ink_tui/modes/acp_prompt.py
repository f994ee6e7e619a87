"""An ACP prompt as ink's text, and how a prompt sent while one runs is delivered.

- Text blocks are the text. An embedded resource (the editor's file or selection,
  `promptCapabilities.embeddedContext`) follows as a fenced block under its URI; a
  resource link (which every agent must take) becomes a mention of its path or URI
  that the model can `read`. Images and audio are not advertised; any that comes
  anyway is named, never dropped in silence.
- `_meta.ink.deliverAs`: "steer" or "follow_up" (also "followUp"); the session/inject
  proposal's modes are accepted too ("steer", "queue" = follow_up).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from ink_tui.core.messages import QueueMode
from ink_tui.modes.acp_types import META_KEY

_MODES: dict[str, QueueMode] = {
    "steer": "steer",
    "follow_up": "follow_up",
    "followUp": "follow_up",
    "queue": "follow_up",
}


def prompt_text(blocks: list[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{_path_of(block.uri)}")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            where = _path_of(resource.uri)
            if isinstance(resource, TextResourceContents):
                parts.append(f"\n<context ref={where!r}>\n{resource.text}\n</context>\n")
            else:
                parts.append(f"[binary resource {where} not shown]")
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} not supported by ink]")
    return " ".join(part for part in parts if part).strip() if len(parts) > 1 else "".join(parts)


def deliver_as(meta: dict[str, Any]) -> QueueMode | None:
    """How a prompt's `_meta` (spread as keyword arguments by the SDK) asks to be queued."""
    ours = meta.get(META_KEY)
    wanted = ours.get("deliverAs") if isinstance(ours, dict) else None
    return _MODES.get(wanted) if isinstance(wanted, str) else None


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri
