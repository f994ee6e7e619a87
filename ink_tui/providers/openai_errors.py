"""Error text from OpenAI-compatible servers: finding the server's own words and trimming them.

Servers report failures in many shapes (`{"error": {"message": ...}}`, `{"detail": ...}`,
a bare string, an HTML page); `server_message` and `error_text` dig out the readable part,
and `shorten` keeps it to a length worth showing.
"""

from __future__ import annotations

import json

MESSAGE_LIMIT = 500  # characters of a server's error text worth showing
REASON_LIMIT = 120  # the one-line retry notice is shorter still


def server_message(body: str) -> str:
    """The server's own words from an error body, whatever shape it came in."""
    body = body.strip()
    if not body:
        return ""
    try:
        obj = json.loads(body)
    except ValueError:
        return shorten(body)
    return shorten(error_text(obj) or body)


def error_text(obj: object) -> str:
    """The message in a parsed error object (nested `error`/`message`/`detail`), or ""."""
    if isinstance(obj, str):
        return obj.strip()
    if not isinstance(obj, dict):
        return ""
    for key in ("error", "message", "detail"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict):
            text = error_text(value)
            if text:
                return text
    return ""


def shorten(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` stripped, and cut to `limit` characters (ending in "…") when longer."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
