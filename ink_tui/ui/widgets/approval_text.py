"""The words of an approval question, apart from the widget that shows them: the call
("? bash ls -la", a path for write/edit), the diff preview folded to what is being
decided, and each choice's label with its key (approval_question.py)."""

from __future__ import annotations

from rich.text import Text

from ink_tui.core.events import ApprovalRequest
from ink_tui.core.tool_summary import call_label
from ink_tui.ui.blocks.diff_lines import diff_line_style, diff_lines
from ink_tui.ui.blocks.fold_view import fold_view

PREVIEW_LINES = 12

# decision -> its keys; labels for "session" and "always" name the rule.
DECISION_KEYS = {
    "allow": ("y", "1"),
    "session": ("s", "2"),
    "always": ("a", "3"),
    "deny": ("n", "4"),
}


def call_text(request: ApprovalRequest) -> Text:
    call = request.call
    text = Text("? ", style="bold")
    if call.name == "bash":
        text.append("bash ", style="bold")
        text.append(str(call.arguments.get("command", "")), style="")
    elif request.path is not None:
        text.append(f"{call.name} {request.path}")
    else:
        text.append(call_label(call, 200))
    return text


def preview_lines(request: ApprovalRequest) -> list[Text]:
    if not request.preview:
        return [Text(request.preview_note, style="dim")] if request.preview_note else []
    lines = diff_lines(request.preview, file_header=False)
    if len(lines) > PREVIEW_LINES:
        # Folded as the transcript folds a diff: the hunks' headers and changed lines
        # first (what is being decided), context only with the room left.
        view = fold_view([line.plain for line in lines], "diff")
        kept = view.lines if view is not None else ()
        hidden = len(lines) - len(kept)
        lines = [Text(line, style=diff_line_style(line)) for line in kept]
        lines.append(Text(f"… {hidden} more lines", style="dim"))
    if request.preview_note:
        lines.insert(0, Text(request.preview_note, style="dim"))
    return lines


def choice_label(
    decision: str, request: ApprovalRequest, *, keyed: bool, short: bool = False
) -> str:
    """A choice's label; `keyed` (the question has the focus) shows its key first;
    `short` leaves out the rule (a narrow row)."""
    if decision == "allow":
        label = "allow once"
    elif decision == "session":
        label = "this session" if short else f"allow {request.rule_label} this session"
    elif decision == "always":
        label = "always" if short else f"always allow {request.rule_label}"
    else:
        label = "deny…"
    return f"[{DECISION_KEYS[decision][0]}] {label}" if keyed else label
