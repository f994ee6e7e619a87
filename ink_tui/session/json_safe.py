"""JSON the store writes: a JSON-safe copy of display data, and UTF-8 encoding.

Tools may put anything in `details` (paths, bytes, custom objects). The session file
only needs what the UI can use to rebuild a tool's fold, so values JSON cannot hold are
dropped rather than stringified: a lossy `repr` would look like real data on reload.
Everything else the store writes is strict JSON (`to_json_bytes`): no `NaN`/`Infinity`.
"""

from __future__ import annotations

import math
from typing import Any

from ink_tui.core import strict_json

_DROP = object()


def json_safe_dict(value: dict[Any, Any]) -> dict[str, Any]:
    """A copy of `value` holding only what `json.dumps` writes faithfully."""
    safe = _safe(value, depth=0)
    return safe if isinstance(safe, dict) else {}


# Deeper nesting is not display data; stopping also guards against cycles.
_MAX_DEPTH = 32


def _safe(value: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return _DROP
    # bool before int: it is one, and must stay a bool.
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        # NaN and infinities are not JSON; json.dumps would write invalid tokens.
        return float(value) if math.isfinite(value) else _DROP
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                continue
            safe = _safe(item, depth + 1)
            if safe is not _DROP:
                out[key] = safe
        return out
    if isinstance(value, (list, tuple)):
        items = (_safe(item, depth + 1) for item in value)
        return [item for item in items if item is not _DROP]
    return _DROP


def to_json_bytes(obj: Any, *, indent: int | None = None) -> bytes:
    """`obj` as UTF-8 JSON, non-ASCII text kept readable. Strict: a float that is not
    finite (a model's `NaN` in tool arguments) is written as its name, a string, so the
    line is valid JSON and the entry is never lost (the format: `session_writer`)."""
    separators = (",", ":") if indent is None else None
    try:
        text = strict_json.dumps(obj, ensure_ascii=False, indent=indent, separators=separators)
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from undecodable tool output) is not UTF-8; escaped as
        # \udXXX it still round-trips exactly.
        text = strict_json.dumps(obj, ensure_ascii=True, indent=indent, separators=separators)
        return text.encode("ascii")
