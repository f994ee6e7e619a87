"""The environment bash commands run with: ink's own, minus the API keys.

A model can print anything in its environment (`env`, `echo $OPENAI_API_KEY`), and what
it prints goes to the provider and into the session file. So the variables that hold
API keys are left out: the well-known ones below and every provider's `api_key_env`
from the configuration. `[tools] pass_env = ["NAME", ...]` passes named ones anyway,
for users whose commands need them. The user's own `!` lines run through the same tool,
so they do not see the keys either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

KEY_VARIABLES = ("INK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def hidden_names(extra: Iterable[str] = (), passed: Iterable[str] = ()) -> frozenset[str]:
    """The variables to leave out: the well-known keys and `extra`, less `passed`."""
    return frozenset((*KEY_VARIABLES, *extra)) - frozenset(passed)


def command_env(hidden: frozenset[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `environ` (default: this process's) without the `hidden` variables."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if name not in hidden}
