"""JSON as RFC 8259 has it, for every surface ink reads from or writes to programs.

Python's `json` reads and writes `NaN`, `Infinity` and `-Infinity`, which no strict
parser accepts, and its C scanner raises `RecursionError` on deeply nested input. The
policy (docs/rpc.md, "Strict JSON"):

- In: `NaN`/`Infinity` (and a number too big for a float, `1e999`) are refused with a
  message that says so, and so is nesting deeper than `MAX_DEPTH`; none ever reaches a
  traceback.
- Out: a float that is not finite is written as a string (`"NaN"`, `"Infinity"`,
  `"-Infinity"`), so a strict reader can still read the line and nothing is dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, NoReturn

# Far deeper than any command, message or tool argument; shallow enough that walking
# the value or writing it again can never hit Python's recursion limit.
MAX_DEPTH = 200


class JsonRefused(ValueError):
    """Input that is not strict JSON, with a message fit to send back as it is."""


class ConstantRefused(JsonRefused):
    """`NaN`, `Infinity` or `-Infinity` in the input."""


def refuse_constants(message: str) -> Callable[[str], NoReturn]:
    """A `parse_constant` for `json.loads` that refuses every constant with `message`
    (`{name}` in it: the constant) as `ConstantRefused`."""

    def refuse(name: str) -> NoReturn:
        raise ConstantRefused(message.format(name=name))

    return refuse


_refuse_constant = refuse_constants("{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def finite_float(text: str) -> float:
    """A JSON number as a float (`parse_float`), refusing one beyond a float's range."""
    value = float(text)
    if not math.isfinite(value):
        # `1e999` is valid JSON text, but as a float it is infinity, which no writer
        # can send back faithfully.
        raise JsonRefused(f"{text} is out of the range of a float")
    return value


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The value of `text`, or `JsonRefused` (a `ValueError`) saying what is wrong."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=finite_float)
    except JsonRefused:
        raise
    except RecursionError:
        raise JsonRefused(f"nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError as error:
        raise JsonRefused(str(error)) from None
    except (ValueError, TypeError) as error:
        # Bytes that are not UTF-8/16/32, or a type json cannot read.
        raise JsonRefused(str(error)) from None
    if deeper_than(value, max_depth):
        raise JsonRefused(f"nested deeper than {max_depth} levels")
    return value


def deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` levels deep."""
    # Iterative: the point is to never recurse on a hostile value.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def dumps(obj: Any, **options: Any) -> str:
    """`json.dumps` that never writes `NaN`/`Infinity`: such floats become strings."""
    options["allow_nan"] = False
    try:
        return json.dumps(obj, **options)
    except ValueError as error:
        if "Out of range float" not in str(error):
            raise
    return json.dumps(finite(obj), **options)


def finite(value: Any, _depth: int = 0) -> Any:
    """A copy of `value` with every non-finite float as its name, a string."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        if math.isnan(value):
            return "NaN"
        return "Infinity" if value > 0 else "-Infinity"
    if _depth > MAX_DEPTH:
        # A cycle or absurd depth: json.dumps will say so in its own words.
        return value
    if isinstance(value, dict):
        return {key: finite(item, _depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item, _depth + 1) for item in value]
    return value
