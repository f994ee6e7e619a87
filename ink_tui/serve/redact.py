"""What of a session may leave the server: tool arguments reduced, secrets masked.

What it promises (every event, replayed event, answer, listing and error of `ink serve`
passes through one `Redactor`):

- Secrets are replaced by `***` in every string, however deep: the configured API keys,
  the server's own access token, values of environment variables named like `*_KEY`,
  `*_TOKEN`, `*_SECRET`, `*_PASSWORD` (and `PGPASSWORD`), `*_PASS`, `*_CREDENTIALS`
  (4 characters or more, not "true" / "false" / "none" / "null"), whatever follows
  `Authorization:` or `Bearer`, and the body of every `-----BEGIN ... PRIVATE KEY-----`
  block (to its END line, or to the end of the text when it has none).
- Without `--show-tool-arguments`, tool calls travel as a summary: arguments are
  reduced to the `path` for read / ls / grep / find and to nothing for the others (the
  tool's name travels beside them), and a write / edit result (whose content holds the
  diff, old and new text) is cut to its first line ("applied 1 edit to app.py"). With
  the flag, arguments and results are sent whole, masked like any text.
- An approval question always carries what the user must see to decide, whatever the
  flag: the call's arguments whole (the command; the path and the edits) and the diff
  preview, masked (`approval`).
- Commands that jobs left running (`jobs_update`) lose their command lines unless
  arguments are shown: they are the bash commands.

Masking works on whole strings, and a model streams its text in deltas of a few
characters: the end of a delta that may begin a secret is held back and sent with the
next (`straddling`, straddle.py; the projection holds it, control/held_text.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ink_tui.core.messages import ToolCall
from ink_tui.serve.straddle import Straddle

MASK = "***"
# Tools whose path argument is shown: it says what was looked at, not what was done.
PATH_TOOLS = frozenset({"read", "ls", "grep", "find"})
# Tools whose result content holds the file's text (a diff): a summary line without the flag.
CONTENT_TOOLS = frozenset({"write", "edit"})
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:KEY|TOKEN|SECRET|PASS|CREDENTIALS)$|PASSWORD$|_PASSWD$", re.IGNORECASE
)
_MIN_ENV_SECRET = 4
# Values too common to be anyone's secret: masking them would garble ordinary text.
_NOT_SECRETS = frozenset({"true", "false", "none", "null", "unset", "empty"})
# Shorter configured keys would mask ordinary words.
_MIN_KEY = 4
_AUTH = re.compile(
    r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|token)\s+)?[^\s\"',;]+"
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]{6,}=*")
# Most texts mention neither: one cheap search before the two above. For ASCII text
# (nearly all), lowering it and looking for the two words is several times cheaper
# than this case-insensitive search, which stays for the rest (its case folding goes
# beyond ASCII's).
_HINT = re.compile(r"(?i)authori|bearer")
# Masking is a function of the text (and the secrets): the short strings every event
# repeats (its type, the session's and run's ids, a delta's kind) are masked once and
# remembered, rather than searched again in each of a stream's thousands of events.
_MEMO_MAX_LEN = 64
_MEMO_SIZE = 4096
_SCALARS = frozenset({int, float, bool, type(None)})
# A PEM private key: its body goes, its BEGIN and END lines stay (so the reader sees
# what was there). A block cut before its END (a preview, a truncated output) is masked
# to the end of the text.
_PRIVATE_KEY = re.compile(
    r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?:.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----)|.*\Z)",
    re.DOTALL,
)


def _hinted(text: str) -> bool:
    """Whether `text` may hold an Authorization header or a Bearer token (`_HINT`)."""
    if text.isascii():
        lowered = text.lower()
        return "authori" in lowered or "bearer" in lowered
    return _HINT.search(text) is not None


def _mask_authorization(match: re.Match[str]) -> str:
    scheme = f"{match.group(2)} " if match.group(2) else ""
    return f"{match.group(1)}{scheme}{MASK}"


def _mask_private_key(match: re.Match[str]) -> str:
    return f"{match.group(1)}{MASK}{match.group(2) or ''}"


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return _SECRET_NAME.search(name) is not None


def env_secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of variables named like secrets (`OPENAI_API_KEY`, `GH_TOKEN`,
    `DB_PASSWORD`, ...)."""
    env = os.environ if env is None else env
    return [
        value
        for name, value in env.items()
        if is_secret_name(name)
        and len(value.strip()) >= _MIN_ENV_SECRET
        and value.strip().lower() not in _NOT_SECRETS
    ]


class Redactor:
    def __init__(self, secrets: Iterable[str | None], *, show_arguments: bool = False) -> None:
        self.show_arguments = show_arguments
        self._secrets: set[str] = set()
        self._ordered: list[str] = []
        self._pattern: re.Pattern[str] | None = None
        self._memo: dict[str, str] = {}
        self._straddle = Straddle(())
        self.add_secrets(secrets)

    def add_secrets(self, secrets: Iterable[str | None]) -> None:
        for secret in secrets:
            if secret and len(secret.strip()) >= _MIN_KEY:
                self._secrets.add(secret.strip())
        # Longest first, so a key that contains another is masked whole.
        ordered = sorted(self._secrets, key=len, reverse=True)
        self._ordered = ordered
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._memo = {}
        self._straddle = Straddle(ordered)

    # -- text ---------------------------------------------------------------------------

    def text(self, text: str) -> str:
        if len(text) > _MEMO_MAX_LEN:
            return self._mask(text)
        memo = self._memo
        shown = memo.get(text)
        if shown is None:
            shown = self._mask(text)
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[text] = shown
        return shown

    def _mask(self, text: str) -> str:
        # A substring search per secret first: the alternation's search costs far more
        # per character, and almost no text holds a secret.
        if self._pattern is not None and any(secret in text for secret in self._ordered):
            text = self._pattern.sub(MASK, text)
        if "PRIVATE KEY-----" in text:
            text = _PRIVATE_KEY.sub(_mask_private_key, text)
        if _hinted(text):
            text = _AUTH.sub(_mask_authorization, text)
            text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
        return text

    def deep(self, value: Any) -> Any:
        """`value` with every string in it masked (dicts and lists copied)."""
        if isinstance(value, str):
            return self.text(value)
        # Strings and plain scalars in place, the rest by a call: an event is mostly the
        # former, and a call per value cost as much as masking it.
        text, deep = self.text, self.deep
        if isinstance(value, dict):
            return {
                key: text(item)
                if type(item) is str
                else item
                if type(item) in _SCALARS
                else deep(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [
                text(item) if type(item) is str else item if type(item) in _SCALARS else deep(item)
                for item in value
            ]
        return value

    def straddling(self, text: str) -> int:
        """Characters at the end of streamed `text` that may begin a secret (straddle.py)."""
        return self._straddle(text)

    # -- tool arguments and results -----------------------------------------------------

    def arguments(self, tool_name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if self.show_arguments:
            return self.deep(dict(arguments))
        path = arguments.get("path")
        if tool_name in PATH_TOOLS and isinstance(path, str):
            return {"path": self.text(path)}
        return {}

    def call(self, call: ToolCall) -> dict[str, Any]:
        """The projection's `redact_call` hook."""
        return self.arguments(call.name, call.arguments)

    def result(self, tool_name: str, content: Any) -> Any:
        """A tool result's content as it may leave: a write / edit result (the diff) is
        its first line unless arguments are shown."""
        if self.show_arguments or tool_name not in CONTENT_TOOLS or not isinstance(content, str):
            return self.deep(content)
        return self.text(content.split("\n", 1)[0])

    # -- whole things -------------------------------------------------------------------

    def event(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """A public event as it may leave (arguments were reduced by the hooks)."""
        kind = event.get("type")
        if kind == "jobs_update" and not self.show_arguments:
            event = {
                **event,
                "jobs": [
                    {k: v for k, v in job.items() if k not in ("argv", "command")}
                    for job in event.get("jobs", [])
                ],
            }
        elif kind == "tool_execution_end":
            event = {
                **event,
                "content": self.result(str(event.get("tool_name")), event.get("content")),
            }
        return self.deep(event)

    def approval(
        self, event: Mapping[str, Any], arguments: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """An `approval_request` as it may leave: with the call's whole `arguments`
        (what the user decides on), masked, whatever `show_arguments` says."""
        shown = dict(event)
        if arguments is not None:
            shown["arguments"] = dict(arguments)
        return self.deep(shown)

    def messages(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """History as `AgentSession.messages` gives it, arguments and write / edit
        results reduced, everything masked."""
        shown = []
        for message in messages:
            calls = message.get("tool_calls")
            if calls:
                message = {
                    **message,
                    "tool_calls": [
                        {**c, "arguments": self.arguments(c["name"], c.get("arguments") or {})}
                        for c in calls
                    ],
                }
            elif message.get("role") == "tool":
                content = self.result(str(message.get("tool_name")), message.get("content"))
                message = {**message, "content": content}
            shown.append(self.deep(message))
        return shown
