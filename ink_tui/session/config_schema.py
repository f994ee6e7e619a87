"""What may be configured: every key, its type, default, documentation and checks.

One table drives the file parser, the environment and flag readers and `ink config`, so a
key added here is validated, layered and reported everywhere without further code.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ink_tui.control.approval_rules import parse_rule

if TYPE_CHECKING:
    from ink_tui.core.prices import Price

ValueType = Literal["string", "integer", "number", "choice", "string-list"]

TAKE_MODES = ("all", "one-at-a-time")
APPROVAL_POLICIES = ("ask", "edits", "auto")
INTERRUPT_QUEUE_MODES = ("restore", "keep", "send")


@dataclass(frozen=True, slots=True)
class KeySpec:
    """One setting. `name` is dotted for keys inside a table: "tools.max_lines"."""

    name: str
    type: ValueType
    default: object
    doc: str
    choices: tuple[str, ...] = ()
    # Integers: the smallest allowed value. Numbers: values must be strictly greater.
    minimum: float | None = None
    # The largest allowed value (numbers and integers), when there is one.
    maximum: float | None = None
    env: str | None = None
    # The key of the flags dict that sets it; shown to users as "--max-iterations".
    flag: str | None = None
    # String lists: checks each item, raising ValueError with what is wrong.
    item_check: Callable[[str], object] | None = None

    @property
    def table(self) -> str:
        return self.name.rpartition(".")[0]

    @property
    def leaf(self) -> str:
        return self.name.rpartition(".")[2]

    def describe(self) -> str:
        """What a valid value looks like, for error messages."""
        if self.type == "choice":
            return "one of " + ", ".join(repr(choice) for choice in self.choices)
        if self.type == "integer":
            return "an integer" + ("" if self.minimum is None else f" >= {self.minimum:g}")
        if self.type == "number":
            most = "" if self.maximum is None else f" and <= {self.maximum:g}"
            return "a number" + ("" if self.minimum is None else f" > {self.minimum:g}") + most
        if self.type == "string-list":
            return "a list of strings"
        return "a string"


SETTINGS: tuple[KeySpec, ...] = (
    KeySpec("provider", "string", None, "provider used when default_model has no '<provider>/'"),
    KeySpec("default_model", "string", None, "'<provider>/<model>', or '<model>' with provider"),
    KeySpec(
        "steering_mode",
        "choice",
        "all",
        "queued steering messages sent at once: all, or one at a time",
        choices=TAKE_MODES,
        env="INK_STEERING_MODE",
        flag="steering_mode",
    ),
    KeySpec(
        "follow_up_mode",
        "choice",
        "one-at-a-time",
        "queued follow-ups sent at once: all, or one at a time",
        choices=TAKE_MODES,
        env="INK_FOLLOW_UP_MODE",
        flag="follow_up_mode",
    ),
    KeySpec(
        "interrupt_queue",
        "choice",
        "restore",
        "what an interrupt does with queued input: restore to editor, keep paused, send",
        choices=INTERRUPT_QUEUE_MODES,
    ),
    KeySpec(
        "max_iterations",
        "integer",
        100,
        "rounds of tool calls per run",
        minimum=1,
        env="INK_MAX_ITERATIONS",
        flag="max_iterations",
    ),
    KeySpec(
        "abort_grace_s",
        "number",
        10.0,
        "seconds a tool may take to stop after an interrupt",
        minimum=0,
    ),
    KeySpec(
        "first_token_timeout_s",
        "number",
        120.0,
        "seconds to wait for a reply to begin (slow local models may need more)",
        minimum=0,
        env="INK_FIRST_TOKEN_TIMEOUT_S",
    ),
    KeySpec(
        "stream_idle_timeout_s",
        "number",
        60.0,
        "seconds a reply may pause between two pieces before it is given up",
        minimum=0,
        env="INK_STREAM_IDLE_TIMEOUT_S",
    ),
    KeySpec(
        "request_timeout_s",
        "number",
        600.0,
        "seconds one model request may take in all",
        minimum=0,
        env="INK_REQUEST_TIMEOUT_S",
    ),
    KeySpec(
        "compact_at",
        "number",
        0.8,
        "compact the conversation when a request would fill this share of the context window",
        minimum=0,
        maximum=1,
        env="INK_COMPACT_AT",
    ),
    KeySpec("theme", "string", "textual-dark", "Textual theme name"),
    KeySpec("tools.max_lines", "integer", 2000, "lines of tool output kept", minimum=1),
    KeySpec("tools.max_bytes", "integer", 50 * 1024, "bytes of tool output kept", minimum=1),
    KeySpec("tools.max_entries", "integer", 500, "entries listed by ls/grep/find", minimum=1),
    KeySpec(
        "tools.pass_env",
        "string-list",
        (),
        "API key variables bash commands get anyway (by default they are left out)",
    ),
    KeySpec(
        "approval.policy",
        "choice",
        "ask",
        "ask before bash/write/edit (ask), only before bash and writes outside the "
        "workspace or into protected places (edits), or never (auto); programs (RPC, API) "
        "use auto unless it is set",
        choices=APPROVAL_POLICIES,
        env="INK_APPROVAL",
        flag="approval",
    ),
    KeySpec(
        "approval.allow",
        "string-list",
        (),
        "rules that allow without asking: 'edit', 'write', 'bash:pytest' (every file's add up)",
        item_check=parse_rule,
    ),
    KeySpec(
        "checkpoints.enabled",
        "choice",
        "on",
        "checkpoint the workspace's files before each tool batch that may change them, so "
        "a rewind can restore them (needs git; a store outside the workspace)",
        choices=("on", "off"),
        env="INK_CHECKPOINTS",
        flag="checkpoints",
    ),
    KeySpec(
        "subagents.max_parallel",
        "integer",
        4,
        "task calls of one reply that run at once (a sub-agent each)",
        minimum=1,
    ),
    KeySpec(
        "subagents.max_depth",
        "integer",
        1,
        "how deep sub-agents nest: 1 lets only the main agent start them, 0 offers no task tool",
        minimum=0,
    ),
)
SETTINGS_BY_NAME = {spec.name: spec for spec in SETTINGS}

# Fields of a `[providers.<name>]` table.
PROVIDER_KINDS = ("openai", "anthropic")
PROVIDER_FIELDS: tuple[KeySpec, ...] = (
    KeySpec("base_url", "string", None, "OpenAI-compatible API base URL"),
    KeySpec("api_key_env", "string", None, "name of the environment variable holding the key"),
    KeySpec("api_key_file", "string", None, "file holding the key (must be chmod 600)"),
    KeySpec("models", "string-list", (), "model names offered by /model"),
    KeySpec(
        "kind",
        "choice",
        "openai",
        "the API it speaks: OpenAI's chat completions, or Anthropic's Messages API",
        choices=PROVIDER_KINDS,
    ),
    KeySpec(
        "thinking_budget",
        "integer",
        None,
        "kind = 'anthropic': tokens of extended thinking per reply (unset: no thinking)",
        minimum=1024,
    ),
)
PROVIDER_FIELDS_BY_NAME = {spec.name: spec for spec in PROVIDER_FIELDS}

# `[keys]`: action -> (default key, what it does). Defaults mirror the app's bindings.
KEY_ACTIONS: dict[str, tuple[str, str]] = {
    "interrupt": ("ctrl+c", "stop the run"),
    "follow_up": ("alt+enter", "queue the input as a follow-up"),
    "newline": ("shift+enter,ctrl+j", "insert a new line in the input"),
    "toggle_thinking": ("ctrl+t", "show or hide thinking"),
    "toggle_folds": ("ctrl+o", "fold or unfold tool output"),
    "focus_queue": ("ctrl+q", "move focus to the queue"),
    "focus_approval": ("ctrl+g", "move focus to an approval question to answer it, and back"),
    "pull_queue": ("alt+up", "pull queued input back into the editor"),
}

# Top-level names a file may use: plain settings and the tables.
TABLES = (
    "tools",
    "providers",
    "keys",
    "approval",
    "checkpoints",
    "subagents",
    "context_windows",
    "prices",
)
# `[context_windows]`: model name ("qwen3" or "local/qwen3") -> tokens, at least this.
MIN_CONTEXT_WINDOW = 1024
# `[prices]`: model name -> `{ input = 3.0, output = 15.0, cache_read = 0.3 }`, dollars
# per million tokens (cache_read optional: cached input is then charged as input).
PRICE_FIELDS = ("input", "output", "cache_read")


def check_price(value: object) -> Price:
    """A `[prices]` entry as a `Price`, or ValueError saying what is wrong."""
    from ink_tui.core.prices import Price

    example = "{ input = 3.0, output = 15.0 }"
    if not isinstance(value, dict):
        raise ValueError(f"must be a table like {example}, got {_show(value)}")
    unknown = [key for key in value if key not in PRICE_FIELDS]
    if unknown:
        hint = suggest(str(unknown[0]), PRICE_FIELDS)
        maybe = f" (did you mean '{hint}'?)" if hint else ""
        raise ValueError(
            f"has an unknown field '{unknown[0]}'{maybe}; it takes input, output and cache_read"
        )
    rates: dict[str, float] = {}
    for key in PRICE_FIELDS:
        if key not in value:
            if key != "cache_read":
                raise ValueError(f"needs '{key}' (dollars per million tokens), as in {example}")
            continue
        rate = value[key]
        if isinstance(rate, bool) or not isinstance(rate, int | float) or rate < 0:
            raise ValueError(
                f"'{key}' must be dollars per million tokens (a number >= 0), got {_show(rate)}"
            )
        rates[key] = float(rate)
    return Price(rates["input"], rates["output"], rates.get("cache_read"))


TOP_LEVEL = tuple(spec.name for spec in SETTINGS if not spec.table) + TABLES


def flag_label(flag: str) -> str:
    return "--" + flag.replace("_", "-")


def suggest(name: str, known: Iterable[str]) -> str | None:
    """The closest known name, for "did you mean ...?"."""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def check_value(spec: KeySpec, value: object) -> object:
    """The value in its Python form, or ValueError saying what is wrong."""
    if spec.type == "string-list":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ValueError(f"must be {spec.describe()}, got {_show(value)}")
        if spec.item_check is not None:
            for item in value:
                spec.item_check(item)
        return tuple(value)
    if spec.type in ("string", "choice"):
        if not isinstance(value, str) or not value:
            raise ValueError(f"must be {spec.describe()}, got {_show(value)}")
        if spec.type == "choice" and value not in spec.choices:
            raise ValueError(f"must be {spec.describe()}, got {_show(value)}")
        return value
    # TOML booleans are Python ints; `max_iterations = true` is a mistake, not 1.
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if spec.type == "integer":
        if not numeric or not isinstance(value, int):
            raise ValueError(f"must be {spec.describe()}, got {_show(value)}")
        if spec.minimum is not None and value < spec.minimum:
            raise ValueError(f"must be {spec.describe()}, got {value}")
        return value
    if not numeric:
        raise ValueError(f"must be {spec.describe()}, got {_show(value)}")
    assert isinstance(value, int | float)
    if spec.minimum is not None and value <= spec.minimum:
        raise ValueError(f"must be {spec.describe()}, got {value}")
    if spec.maximum is not None and value > spec.maximum:
        raise ValueError(f"must be {spec.describe()}, got {value}")
    return float(value)


def parse_text(spec: KeySpec, text: str) -> object:
    """A value given as text (environment variable) converted and checked."""
    text = text.strip()
    if spec.type == "integer":
        try:
            return check_value(spec, int(text))
        except ValueError:
            raise ValueError(f"must be {spec.describe()}, got {text!r}") from None
    if spec.type == "number":
        try:
            return check_value(spec, float(text))
        except ValueError:
            raise ValueError(f"must be {spec.describe()}, got {text!r}") from None
    return check_value(spec, text)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        text = repr(value)
        return f"array {text}" if len(text) <= 40 else "an array"
    return repr(value)
