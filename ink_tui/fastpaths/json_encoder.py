"""Compact JSON of an event from json's C encoder, made once rather than once a call.

`json.JSONEncoder.encode` builds a new C encoder object for every call (with a new
circular-reference dict and a float formatter), which for a streamed delta's small
event cost more than the encoding itself (`ink serve` encodes one per SSE message:
figure 11 in benchmarks/README.md). `compact_encoder` makes that C encoder once and
calls it; the text is the same encoder's, so it is what `encode` writes.

Touches: `json.encoder.c_make_encoder` (undocumented) and its argument order. `check()`
encodes a probe both ways (nested objects and arrays, non-ASCII text, floats, a value
only `default` can write) and asks that a NaN is refused as the stock encoder refuses
it. One difference, on purpose: no circular-reference check (an event is a tree of
JSON values; a cycle would end in RecursionError rather than ValueError).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from json import encoder as json_encoder
from typing import Any

_PROBE: dict[str, Any] = {
    "type": "message_update",
    "seq": 12,
    "ok": True,
    "none": None,
    "float": 0.1,
    "text": 'é "quoted" \n\u2028 \x00',
    "nested": {"list": [1, 2.5, "x", {"k": []}], "empty": {}},
    "object": object,
}


def stock(default: Callable[[Any], Any]) -> json.JSONEncoder:
    """The encoder `compact_encoder` writes as."""
    return json.JSONEncoder(
        ensure_ascii=False, separators=(",", ":"), default=default, allow_nan=False
    )


def compact_encoder(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """`stock(default).encode` for a dict or list, with the C encoder made once."""
    make: Callable[..., Callable[[Any, int], Any]] = json_encoder.c_make_encoder  # type: ignore[attr-defined]
    encode = make(
        None,  # no circular-reference check (see the module)
        default,
        json_encoder.encode_basestring,  # ensure_ascii=False
        None,  # indent
        ":",
        ",",
        False,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )

    def text(value: Any) -> str:
        return "".join(encode(value, 0))

    return text


def check() -> str | None:
    if getattr(json_encoder, "c_make_encoder", None) is None:
        return "json.encoder has no C encoder (c_make_encoder)"
    try:
        fast = compact_encoder(str)
        if fast(_PROBE) != stock(str).encode(_PROBE):
            return "json's C encoder writes unlike JSONEncoder.encode"
        fast({"x": math.nan})
    except ValueError as error:
        if "Out of range float" in str(error):
            return None
        return f"json's C encoder: {error}"
    except TypeError as error:  # another argument order
        return f"json's C encoder: {error}"
    return "json's C encoder wrote a NaN"
