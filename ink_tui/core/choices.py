"""A string from outside (RPC, HTTP, a picker) read as one of a `Literal`'s values.

    QUEUE_MODES: tuple[QueueMode, ...] = get_args(QueueMode)
    mode = one_of(command.get("mode"), QUEUE_MODES)  # QueueMode | None

The value comes back as the choice it equals, so a type checker knows it is one of them
without a cast or an ignore.
"""

from __future__ import annotations

from typing import TypeVar

Choice = TypeVar("Choice", bound=str)


def one_of(value: object, choices: tuple[Choice, ...]) -> Choice | None:
    """`value` if it equals one of `choices` (as that choice), else None."""
    for choice in choices:
        if value == choice:
            return choice
    return None
