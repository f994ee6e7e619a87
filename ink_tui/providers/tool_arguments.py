"""Reading a tool call's arguments: the JSON text a model wrote, as lenient as is safe.

Models write arguments through a server's grammar or by themselves, and both slip in
ways that lose nothing when read generously. What is accepted (docs/reliability.md,
"Tool arguments"):

- Raw control characters (a newline, a tab) inside a string: read as those characters.
  Strict JSON wants them escaped; llama.cpp-based servers' grammars let them through.
- The whole text fenced as a markdown code block (three backticks, optionally `json`):
  the fence is taken off.
- Whitespace around the object; empty text (a tool without arguments) is `{}`.

What is refused, as an argument error the model reads in the tool result (so it can
send the call again), never as a crash:

- `NaN`, `Infinity`, `-Infinity`: not JSON, and no surface downstream (RPC, SSE, session
  files) could carry them as numbers; the model is told to send a number or a string.
- Anything after the object (`{...}{...}`, `{...} trailing`): the call was cut, doubled
  or mixed with prose, and guessing which part was meant could run the wrong command.
- Text that is not one JSON object, and nesting deeper than `MAX_DEPTH`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ink_tui.core.strict_json import (
    MAX_DEPTH,
    ConstantRefused,
    JsonRefused,
    deeper_than,
    finite_float,
    refuse_constants,
)

PREFIX = "invalid JSON in arguments"
_FENCE = re.compile(r"\A\s*```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?[ \t]*```\s*\Z", re.DOTALL)


_refuse_constant = refuse_constants("{name} is not a JSON number (JSON has no NaN or Infinity)")


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, or `({}, why)` when they cannot be read."""
    if not raw.strip():
        return {}, None  # a call to a tool that takes no arguments
    fenced = _FENCE.match(raw)
    text = fenced.group("body") if fenced else raw
    try:
        value = json.loads(
            text, strict=False, parse_constant=_refuse_constant, parse_float=finite_float
        )
    except ConstantRefused as constant:
        return {}, f"{PREFIX}: {constant}; send a finite number, or a string if the value is text"
    except JsonRefused as refused:
        return {}, f"{PREFIX}: {refused}; send a finite number, or a string if it is text"
    except RecursionError:
        return {}, f"{PREFIX}: nested deeper than {MAX_DEPTH} levels"
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return {}, (
                f"{PREFIX}: more text after the JSON object (from line {exc.lineno} column "
                f"{exc.colno}); send exactly one object"
            )
        return {}, f"{PREFIX}: {exc}"
    if not isinstance(value, dict):
        return {}, f"{PREFIX}: expected an object, got {type(value).__name__}"
    if deeper_than(value, MAX_DEPTH):
        return {}, f"{PREFIX}: nested deeper than {MAX_DEPTH} levels"
    return value, None


def wire_arguments(raw: str, arguments: dict[str, Any], error: str | None) -> str:
    """The arguments text to send back in the history.

    The model's own text when it is strict JSON (a faithful replay), else, for a call
    read leniently, the object written strictly: servers that parse the history's
    arguments (llama.cpp's templates do) would refuse a raw newline or a code fence.
    A call that could not be read goes back as it came, with its error in the result.
    """
    if error is not None:
        return raw
    if not raw.strip():
        return json.dumps(arguments)
    try:
        json.loads(raw, parse_constant=_refuse_constant, parse_float=finite_float)
    except ValueError:
        return json.dumps(arguments, ensure_ascii=False)
    return raw
