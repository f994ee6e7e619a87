"""The demo model's answer to a summarisation request (context compaction), offline.

The demo's context window is small (`DEMO_CONTEXT_WINDOW`), so a few prompts into the
tour the conversation is compacted as a real model's would be, and a new user sees the
marker row, its summary and the status bar's context fill. The summary is built from the
transcript the request carries: the user's requests, the tools called, the files named.
"""

from __future__ import annotations

import re

from ink_tui.core.compaction_prompt import SUMMARY_SYSTEM_PROMPT
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import ModelRequest

# Tokens. The system prompt and tools take about 2.4k of them, each tour step ~0.5k:
# compaction (at 80 %) comes around the fourth prompt.
DEMO_CONTEXT_WINDOW = 5_000

_USER = re.compile(r"^\[user\]\n(.+)$", re.MULTILINE)
_CALL = re.compile(r"^\[tool call (\w+)\] (.*)$", re.MULTILINE)
_PATH = re.compile(r'"(?:path|pattern|command)": "([^"]{1,80})"')
_PREVIOUS = re.compile(r"<previous-summary>\n(.*?)\n</previous-summary>", re.DOTALL)
_GOALS = re.compile(r"^## Goal\n(.*?)\n\n## ", re.DOTALL | re.MULTILINE)


def is_summary_request(request: ModelRequest) -> bool:
    return request.system_prompt == SUMMARY_SYSTEM_PROMPT


def summary_reply(request: ModelRequest) -> str:
    """A summary in the sections the prompt asks for, from the transcript alone."""
    text = "\n".join(m.content for m in request.messages if isinstance(m, UserMessage))
    goals: list[str] = []
    previous = _PREVIOUS.search(text)
    if previous:
        earlier = _GOALS.search(previous.group(1) + "\n\n## ")
        if earlier:
            goals += [line for line in earlier.group(1).splitlines() if line.strip()]
    goals += [f"- {line.strip()[:100]}" for line in _USER.findall(text)]
    calls = _CALL.findall(text)
    tools = sorted({name for name, _ in calls})
    touched: dict[str, None] = {}
    for _, arguments in calls:
        for found in _PATH.findall(arguments):
            touched.setdefault(found, None)
    files = [f"- {name}" for name in touched] or ["- (none yet)"]
    return "\n".join(
        [
            "## Goal",
            *(goals or ["- (no request yet)"]),
            "",
            "## Decisions",
            f"- Looked around with {', '.join(tools)}." if tools else "- Nothing decided yet.",
            "- This is the offline demo model: the summary lists what the transcript shows.",
            "",
            "## Files",
            *files,
            "",
            "## Open work",
            "- Answer the latest request; the messages after this summary are unchanged.",
        ]
    )
