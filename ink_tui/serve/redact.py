"""What of a session may leave the server: tool arguments reduced, secrets masked.

What it promises (every event, answer and error of `ink serve` passes through here):

- Tool arguments are reduced to what a remote page needs: nothing for most tools, the
  `path` for read / ls / grep / find (the tool's name travels beside them). Bash
  commands and write / edit contents leave only when the server was started with
  `--show-tool-arguments`, and then masked like any text.
- Secrets are replaced by `***` in every string, however deep: the configured API keys,
  the server's own access token, values of environment variables named like `*_KEY`,
  `*_TOKEN`, `*_SECRET` (6 characters or more), and whatever follows `Authorization:` or
  `Bearer`.
- Commands that jobs left running (`jobs_update`) lose their command lines unless
  arguments are shown: they are the bash commands.

Masking works on whole strings. A secret the model streams split across two deltas is
masked only when the deltas are merged into one event (see `events_stream`) or in the
`message_end` that follows with the whole text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ink_tui.core.messages import ToolCall

MASK = "***"
# Tools whose path argument is shown: it says what was looked at, not what was done.
PATH_TOOLS = frozenset({"read", "ls", "grep", "find"})
_SECRET_NAME = re.compile(r".*_(KEY|TOKEN|SECRET)$", re.IGNORECASE)
_MIN_ENV_SECRET = 6
# Shorter configured keys would mask ordinary words.
_MIN_KEY = 4
_AUTH = re.compile(
    r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|token)\s+)?[^\s\"',;]+"
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]{6,}=*")
# Most texts mention neither: one cheap search before the two above.
_HINT = re.compile(r"(?i)authori|bearer")


def _mask_authorization(match: re.Match[str]) -> str:
    scheme = f"{match.group(2)} " if match.group(2) else ""
    return f"{match.group(1)}{scheme}{MASK}"


def env_secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of variables named like secrets (`OPENAI_API_KEY`, `GH_TOKEN`, ...)."""
    env = os.environ if env is None else env
    return [
        value
        for name, value in env.items()
        if _SECRET_NAME.match(name) and len(value.strip()) >= _MIN_ENV_SECRET
    ]


class Redactor:
    def __init__(self, secrets: Iterable[str | None], *, show_arguments: bool = False) -> None:
        self.show_arguments = show_arguments
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add_secrets(secrets)

    def add_secrets(self, secrets: Iterable[str | None]) -> None:
        for secret in secrets:
            if secret and len(secret.strip()) >= _MIN_KEY:
                self._secrets.add(secret.strip())
        # Longest first, so a key that contains another is masked whole.
        ordered = sorted(self._secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    # -- text ---------------------------------------------------------------------------

    def text(self, text: str) -> str:
        if self._pattern is not None:
            text = self._pattern.sub(MASK, text)
        if _HINT.search(text):
            text = _AUTH.sub(_mask_authorization, text)
            text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
        return text

    def deep(self, value: Any) -> Any:
        """`value` with every string in it masked (dicts and lists copied)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.deep(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.deep(item) for item in value]
        return value

    # -- tool arguments -----------------------------------------------------------------

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

    # -- whole things -------------------------------------------------------------------

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        """A public event as it may leave (arguments were reduced by the hooks)."""
        if event.get("type") == "jobs_update" and not self.show_arguments:
            event = {
                **event,
                "jobs": [
                    {k: v for k, v in job.items() if k not in ("argv", "command")}
                    for job in event.get("jobs", [])
                ],
            }
        return self.deep(event)

    def messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """History as `AgentSession.messages` gives it, arguments reduced and masked."""
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
            shown.append(self.deep(message))
        return shown
