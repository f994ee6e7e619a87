"""A stream's text chunks read by their one changing part, not parsed whole each time.

A fast server sends tens of thousands of chunks a reply, each a JSON object that differs
from the one before only in the few characters of its delta:

    {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,
     "delta":{"content":"Hello"},"finish_reason":null}]}

Parsing each into dictionaries and walking them was most of what the provider spent per
chunk. A `ChunkTemplate` is learned from one such chunk, parsed whole: the text before
and after the delta's string literal. A later chunk that starts and ends with exactly
that text, with one JSON string literal between, is the same object with another delta,
and only the literal is decoded (one C call). The template is checked when learned: the
chunk with a probe string put in the literal's place must parse to the chunk itself with
the probe as its delta (so a key given twice, or text that only looks like the key, is
never taken for it). Anything else is parsed whole, as before.

A fast path of ink's own (`ink_tui.fastpaths`, `chunk_template`): nothing private, only
`json.decoder.scanstring`, which `check()` makes sure is there; switched off, every
chunk is parsed whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json import decoder
from typing import Any

# json.loads' own string scanner (C where built). typeshed's json.decoder stub leaves it
# out, so the checker is told its type here.
scanstring: Callable[[str, int], tuple[str, int]] = decoder.scanstring  # type: ignore[attr-defined]


def check() -> str | None:
    if scanstring('"a\\n"', 1) != ("a\n", 5):
        return "json.decoder.scanstring decodes unlike expected"
    return None


# Only a delta holding one string under one of these keys is learned from; the key is
# what it is shown as (the reply builder's own reading of the same delta).
TEXT_KEYS = ("content", "reasoning_content", "reasoning")
_PROBE = "ink-template-probe"


class ChunkTemplate:
    """The fixed text around one delta key's string literal."""

    __slots__ = ("_fixed", "key", "prefix", "suffix")

    def __init__(self, key: str, prefix: str, suffix: str) -> None:
        self.key = key
        self.prefix = prefix
        self.suffix = suffix
        # The shortest chunk that fits: prefix, closing quote, suffix.
        self._fixed = len(prefix) + 1 + len(suffix)

    def text_of(self, data: str) -> str | None:
        """The delta's text if `data` is this template's chunk with another delta."""
        if len(data) < self._fixed or not data.startswith(self.prefix):
            return None
        if not data.endswith(self.suffix):
            return None
        try:
            text, end = scanstring(data, len(self.prefix))
        except ValueError:
            return None
        # The literal must end exactly where the fixed suffix starts.
        return text if end == len(data) - len(self.suffix) else None


def learn(data: str, chunk: dict[str, Any]) -> ChunkTemplate | None:
    """A template from `data`, parsed as `chunk`, if it is a plain one-key text delta."""
    key = text_key(chunk)
    if key is None:
        return None
    for found in re.finditer(rf'"{key}"\s*:\s*"', data):
        start = found.end()
        try:
            _text, end = scanstring(data, start)
        except ValueError:
            continue
        template = ChunkTemplate(key, data[:start], data[end:])
        probe = f'{template.prefix}{_PROBE}"{template.suffix}'
        try:
            parsed = json.loads(probe)
        except ValueError:
            continue
        if parsed == _with_text(chunk, key, _PROBE):
            return template
    return None


def text_key(chunk: dict[str, Any]) -> str | None:
    """The key of a chunk whose only effect is one text delta: no usage, no finish, no
    error, one choice at index 0 whose delta holds exactly one text key."""
    if chunk.get("usage") is not None or chunk.get("error"):
        return None
    choices = chunk.get("choices")
    if not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or choice.get("index", 0) != 0:
        return None
    if choice.get("finish_reason") is not None or "message" in choice:
        return None
    delta = choice.get("delta")
    if not isinstance(delta, dict) or len(delta) != 1:
        return None
    (key, value), *_ = delta.items()
    return key if key in TEXT_KEYS and isinstance(value, str) else None


def _with_text(chunk: dict[str, Any], key: str, text: str) -> dict[str, Any]:
    choice = {**chunk["choices"][0], "delta": {key: text}}
    return {**chunk, "choices": [choice]}
