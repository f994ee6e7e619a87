"""Telling text files from binary ones: NUL bytes near the start, or not UTF-8."""

from __future__ import annotations

from ink_tui.core.tool_api import ToolError

# Same window git and ripgrep use to sniff for NUL bytes.
SNIFF_BYTES = 8192


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:SNIFF_BYTES]


def decode_text(data: bytes) -> str | None:
    """The file's text, or None when it is binary (NUL bytes, or not valid UTF-8)."""
    if looks_binary(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def binary_error(shown: str, action: str) -> ToolError:
    return ToolError(
        f"{shown} is a binary file (NUL bytes or not valid UTF-8); {action} only handles "
        "text files. Use bash (e.g. `file`, `xxd | head`) to inspect it."
    )
