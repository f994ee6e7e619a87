"""Finding the config files and reading them into checked values, with precise messages.

Reading never raises: a bad value is left out (so lower layers or defaults apply) and a
message naming the file, the line and the key is collected for the app to show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import platformdirs

from ink_tui.session.config_schema import (
    KEY_ACTIONS,
    MIN_CONTEXT_WINDOW,
    PROVIDER_FIELDS_BY_NAME,
    SETTINGS,
    SETTINGS_BY_NAME,
    TABLES,
    TOP_LEVEL,
    KeySpec,
    check_price,
    check_value,
    suggest,
)

if TYPE_CHECKING:
    import tomllib

    from ink_tui.core.prices import Price

FileKind = Literal["user", "workspace"]

# Top-level keys that choose the model.
MODEL_KEYS = ("default_model", "provider", "providers")


def user_config_dir() -> Path:
    # platformdirs follows XDG_CONFIG_HOME on Linux, so tests can point it elsewhere.
    return Path(platformdirs.user_config_dir("ink", appauthor=False))


def user_config_path() -> Path:
    return user_config_dir() / "config.toml"


def workspace_config_path(workspace: Path) -> Path:
    return workspace / ".ink" / "config.toml"


def display_path(path: Path) -> str:
    """The path as a user would type it: "~/.config/ink/config.toml"."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except (ValueError, RuntimeError):
        return str(path)


@dataclass(slots=True)
class FileLayer:
    """What one config file contributes: only the values that passed their checks."""

    kind: FileKind
    path: Path
    found: bool = False
    # Whether it was read and parsed; False for missing, unreadable or bad TOML.
    loaded: bool = False
    settings: dict[str, object] = field(default_factory=dict)
    providers: dict[str, dict[str, object]] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    # `[context_windows]`: model name -> the model's context window in tokens.
    context_windows: dict[str, int] = field(default_factory=dict)
    # `[prices]`: model name -> its price (dollars per million tokens).
    prices: dict[str, Price] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # The keys of MODEL_KEYS this file sets, even where the value was refused or the
    # file is not valid TOML (then found by scanning its text): the user configured a
    # model here, so the offline demo must not quietly stand in for it.
    model_keys: list[str] = field(default_factory=list)
    # The subset of `problems` about those keys: why the configured model may not work.
    model_problems: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.kind} config {display_path(self.path)}"


def read_config_file(path: Path, kind: FileKind) -> FileLayer:
    layer = FileLayer(kind, path)
    if not path.exists():
        return layer
    layer.found = True
    try:
        # "utf-8-sig": Windows editors (Notepad) start UTF-8 files with a byte order mark,
        # which TOML does not allow; it is not part of the text.
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        layer.problems.append(f"{display_path(path)}: cannot read ({reason}); file ignored")
        return layer
    return parse_config_text(text, path, kind, layer)


def parse_config_text(
    text: str, path: Path, kind: FileKind, layer: FileLayer | None = None
) -> FileLayer:
    # Imported only when there is a file to parse: most starts have none, and this module
    # is read before the first frame.
    import tomllib

    layer = layer or FileLayer(kind, path, found=True)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = _syntax_message(path, text, error)
        layer.problems.append(message)
        lines = KeyLines(text)
        layer.model_keys = [key for key in MODEL_KEYS if lines.mentions(key)]
        if layer.model_keys:
            layer.model_problems.append(message)
        return layer
    layer.loaded = True
    layer.model_keys = [key for key in MODEL_KEYS if key in data]
    _Reader(layer, KeyLines(text)).read(data)
    return layer


def _syntax_message(path: Path, text: str, error: tomllib.TOMLDecodeError) -> str:
    reason, line, column = syntax_error_position(str(error))
    where = display_path(path)
    if line is None:
        return f"{where}: invalid TOML ({reason}); file ignored"
    lines = text.splitlines()
    # The key, never the line itself: the value might be a secret typed in the wrong place.
    key, has_equals, _ = _split_assignment(lines[line - 1].strip() if line <= len(lines) else "")
    parts = split_key(key) if has_equals else None
    at = f" at key '{'.'.join(parts)}'" if parts else ""
    return f"{where} line {line}, column {column}: invalid TOML{at} ({reason}); file ignored"


@dataclass(slots=True)
class _Reader:
    layer: FileLayer
    lines: KeyLines

    def problem(self, path: tuple[str, ...], message: str) -> None:
        line = self.lines.line_of(path)
        where = display_path(self.layer.path)
        prefix = f"{where} line {line}" if line is not None else where
        self.layer.problems.append(f"{prefix}: {message}")
        if path[0] in MODEL_KEYS:
            self.layer.model_problems.append(f"{prefix}: {message}")

    def unknown(self, path: tuple[str, ...], known: list[str], what: str = "key") -> None:
        name = path[-1]
        table = f" in [{'.'.join(path[:-1])}]" if len(path) > 1 else ""
        if name == "api_key":
            message = "keys are not kept in config files: set api_key_env or api_key_file"
            self.problem(path, f"unknown key 'api_key'{table} ({message}); ignored")
            return
        # A key written outside the table it belongs to (`max_lines` without [tools]) is
        # pointed to its table before any look-alike name is guessed.
        homes = [spec.table for spec in SETTINGS if spec.leaf == name and spec.table]
        if len(path) == 1 and homes:
            hint: str | None = f"[{homes[0]}] {name}"
        else:
            hint = suggest(name, known)
        did_you_mean = f" (did you mean '{hint}'?)" if hint else ""
        self.problem(path, f"unknown {what} '{name}'{table}{did_you_mean}")

    def checked(self, path: tuple[str, ...], spec: KeySpec, value: object) -> object | None:
        try:
            return check_value(spec, value)
        except ValueError as error:
            self.problem(path, f"'{'.'.join(path)}' {error}; ignored")
            return None

    def read(self, data: dict[str, object]) -> None:
        for key, value in data.items():
            if key in TABLES:
                if not isinstance(value, dict):
                    example = ' policy = "ask"' if key == "approval" else ""
                    self.problem((key,), f"'{key}' must be a table ([{key}]{example}); ignored")
                elif key in ("tools", "approval", "checkpoints", "subagents"):
                    self.read_tools(value, key)
                elif key == "providers":
                    self.read_providers(value)
                elif key == "context_windows":
                    self.read_context_windows(value)
                elif key == "prices":
                    self.read_prices(value)
                else:
                    self.read_keys(value)
            elif key in SETTINGS_BY_NAME:
                checked = self.checked((key,), SETTINGS_BY_NAME[key], value)
                if checked is not None:
                    self.layer.settings[key] = checked
            else:
                self.unknown((key,), list(TOP_LEVEL))

    def read_tools(self, table: dict[str, object], name: str = "tools") -> None:
        """A table of plain settings: [tools] or [approval]."""
        known = [spec.leaf for spec in SETTINGS if spec.table == name]
        for key, value in table.items():
            spec = SETTINGS_BY_NAME.get(f"{name}.{key}")
            if spec is None:
                self.unknown((name, key), known)
                continue
            checked = self.checked((name, key), spec, value)
            if checked is not None:
                self.layer.settings[spec.name] = checked

    def read_providers(self, table: dict[str, object]) -> None:
        for name, entry in table.items():
            path = ("providers", name)
            if not isinstance(entry, dict):
                self.problem(path, f"'providers.{name}' must be a table; ignored")
            elif "/" in name:
                self.problem(path, f"provider name '{name}' cannot contain '/'; ignored")
            else:
                self.layer.providers[name] = self.read_provider(name, entry)

    def read_provider(self, name: str, entry: dict[str, object]) -> dict[str, object]:
        fields: dict[str, object] = {}
        for key, value in entry.items():
            path = ("providers", name, key)
            spec = PROVIDER_FIELDS_BY_NAME.get(key)
            if spec is None:
                self.unknown(path, list(PROVIDER_FIELDS_BY_NAME))
                continue
            checked = self.checked(path, spec, value)
            if checked is None:
                continue
            if key == "base_url" and not str(checked).startswith(("http://", "https://")):
                self.problem(
                    path,
                    f"'providers.{name}.base_url' must start with http:// or "
                    f"https://, got {checked!r}; ignored",
                )
                continue
            if key == "api_key_env" and not _ENV_NAME.fullmatch(str(checked)):
                # Not echoed: people paste the key itself here.
                self.problem(
                    path,
                    f"'providers.{name}.api_key_env' must name an environment variable "
                    "(letters, digits and _), not hold the key; ignored",
                )
                continue
            if key == "api_key_file":
                # Relative to the file that names it, so it does not depend on the cwd.
                checked = self.layer.path.parent / Path(str(checked)).expanduser()
            fields[key] = checked
        return fields

    def read_context_windows(self, table: dict[str, object]) -> None:
        for model, value in table.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < MIN_CONTEXT_WINDOW:
                self.problem(
                    ("context_windows", model),
                    f"'context_windows.{model}' must be a number of tokens (an integer >= "
                    f"{MIN_CONTEXT_WINDOW}), got {value!r}; ignored",
                )
            else:
                self.layer.context_windows[model] = value

    def read_prices(self, table: dict[str, object]) -> None:
        for model, value in table.items():
            try:
                self.layer.prices[model] = check_price(value)
            except ValueError as error:
                self.problem(("prices", model), f"'prices.{model}' {error}; ignored")

    def read_keys(self, table: dict[str, object]) -> None:
        for action, value in table.items():
            path = ("keys", action)
            if action not in KEY_ACTIONS:
                self.unknown(path, list(KEY_ACTIONS), what="action")
            elif not isinstance(value, str) or not value.strip():
                self.problem(
                    path,
                    f"'keys.{action}' must be a key such as \"ctrl+x\", got {value!r}; ignored",
                )
            else:
                self.layer.keys[action] = value.strip()


# Where each key is written, for messages: tomllib gives positions only for syntax errors.
_HEADER = re.compile(r"^\[\[?(?P<key>[^\[\]]+)\]\]?\s*(#.*)?$")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def syntax_error_position(message: str) -> tuple[str, int | None, int | None]:
    """tomllib's message split into (reason, line, column); 3.11 has no attributes for them."""
    match = _POSITION.search(message)
    if match is None:
        return message.removesuffix(" (at end of document)"), None, None
    return message[: match.start()], int(match.group(1)), int(match.group(2))


class KeyLines:
    """Line numbers of keys and table headers, found by scanning the text table by table."""

    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str, ...], int] = {}
        table: tuple[str, ...] = ()
        open_string: str | None = None
        for number, raw in enumerate(text.splitlines(), 1):
            if open_string is not None:
                # Inside a multi-line string nothing is a key.
                if raw.count(open_string) % 2 == 1:
                    open_string = None
                continue
            line = raw.strip()
            header = _HEADER.match(line)
            if header is not None:
                table = tuple(split_key(header.group("key")) or ())
                self._note(table, number)
                continue
            key, has_equals, value = _split_assignment(line)
            parts = split_key(key) if has_equals else None
            if parts:
                full = table + tuple(parts)
                # A dotted key also defines its parent tables (`tools.max_lines = 5`).
                for end in range(len(table) + 1, len(full) + 1):
                    self._note(full[:end], number)
            for quote in ('"""', "'''"):
                if value.count(quote) % 2 == 1:
                    open_string = quote

    def _note(self, path: tuple[str, ...], number: int) -> None:
        self._lines.setdefault(path, number)

    def mentions(self, top: str) -> bool:
        """Whether the text sets the top-level key `top` or anything in its table."""
        return any(path[0] == top for path in self._lines)

    def line_of(self, path: tuple[str, ...]) -> int | None:
        """The key's line, or its nearest table's (keys inside inline tables are not indexed)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self._lines:
                return self._lines[path[:end]]
        return None


def _split_assignment(line: str) -> tuple[str, bool, str]:
    """`key = value` split at the first `=` outside quotes."""
    quote: str | None = None
    for index, char in enumerate(line):
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char == "=":
            return line[:index], True, line[index + 1 :]
    return line, False, ""


def split_key(text: str) -> list[str] | None:
    """A TOML dotted key (`a."b.c".d`) as its parts, or None if it is not one."""
    parts: list[str] = []
    rest = text.strip()
    while True:
        if rest[:1] in ('"', "'"):
            end = rest.find(rest[0], 1)
            if end < 0:
                return None
            parts.append(rest[1:end])
            rest = rest[end + 1 :].lstrip()
        else:
            match = _BARE.match(rest)
            if match is None:
                return None
            parts.append(match.group())
            rest = rest[match.end() :].lstrip()
        if not rest:
            return parts
        if rest[0] != ".":
            return None
        rest = rest[1:].lstrip()
