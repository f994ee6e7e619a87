"""The session list for /resume and /sessions: a `ListPicker` over saved sessions.

Each row reads "2025-03-14 09:26  fix the failing parser test…   12 messages · gpt-4o":
the local start time and the first line of the first prompt, then the message count and
the model. The result is the chosen session's id, or None. Rows keep the order given
(the caller sorts, newest first as a rule).
"""

from __future__ import annotations

from ink_tui.session.summary import SessionSummary
from ink_tui.ui.screens.list_picker import ListPicker, PickerRow

PROMPT_WIDTH = 60
NO_PROMPT = "(no prompt)"


def first_line(text: str, width: int = PROMPT_WIDTH) -> str:
    """The first non-blank line of `text`, cut to `width` characters with "…"."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not line:
        return NO_PROMPT
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def session_row(session: SessionSummary) -> PickerRow:
    # astimezone(): stored times may be UTC; people remember sessions by their own clock.
    started = session.started.astimezone().strftime("%Y-%m-%d %H:%M")
    count = session.message_count
    messages = f"{count} message" if count == 1 else f"{count} messages"
    detail = f"{messages} · {session.model}" if session.model else messages
    return (session.id, f"{started}  {first_line(session.first_prompt)}", detail)


class SessionPicker(ListPicker):
    """Pick a saved session; the result is its id, or None when cancelled."""

    def __init__(
        self,
        sessions: list[SessionSummary],
        *,
        title: str = "Resume a session",
        selected_id: str | None = None,
    ) -> None:
        super().__init__(
            title,
            [session_row(session) for session in sessions],
            selected_id,
            placeholder="Type to filter by date, prompt or model",
        )
