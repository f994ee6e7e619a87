"""Approvals: the user's yes or no before a tool changes anything.

One check in the tool gate (`ToolContext.before_tool`, the same gate extensions use; the
controller puts this one last, so a call an extension blocks is never asked about):

- Read-only tools never ask. `bash`, `write` and `edit` ask according to the policy:
  `ask` asks for all three, `edits` lets `write`/`edit` inside the workspace through
  (not into its `.ink/` or `.git/`: a rule or a hook there would grant more) and asks for
  `bash` and anything outside, `auto` never asks.
- Rules (`approval_rules.py`) allow without asking: the configured ones ("always"
  answers are saved there) and this session's ("allow for this session").
- Otherwise an `ApprovalRequest` is published and the call waits for `answer()`. One
  question at a time, in call order (a lock, FIFO): a later call of the same batch is
  asked only after the earlier one is answered, and a rule that answer added applies.
- An answer arrives once: a second answer for the same request (or an unknown id) is
  refused with a message, and changes nothing.
- An abort while a question is open ends it as "deny" (`by="interrupt"`); the scheduler
  gives the call its not-run result and the run settles like any interrupt.
- A front end that cannot ask (`can_ask=False`, print mode) refuses such a call with a
  reason the model reads and the user sees in the call's summary line.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from ink_tui.control.approval_rules import ASKING_TOOLS, Rule, parse_rule, rule_for
from ink_tui.core.abort import AbortSignal
from ink_tui.core.events import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalResolved,
    Event,
    Notice,
)
from ink_tui.core.messages import ToolCall

log = logging.getLogger(__name__)

Policy = Literal["ask", "edits", "auto"]
POLICIES: tuple[str, ...] = ("ask", "edits", "auto")
DECISIONS: tuple[str, ...] = ("allow", "session", "always", "deny")

# Folders inside the workspace that `edits` still asks about: writing there can grant
# more than an edit (an approval rule in .ink/config.toml, a git hook).
_GUARDED_DIRS = (".ink", ".git")

# Saves a rule as "always"; raises OSError/ValueError with a message for the user.
SaveRule = Callable[[str], None]


def refused_text(why: str) -> str:
    """What the model reads (and print mode shows, first line) for a call that needed
    asking where nobody can be asked."""
    return (
        "Not run: needs approval; print mode cannot ask (--approval auto allows it)\n"
        f"This call needs the user's approval ({why}), and nobody can be asked here. "
        "Do not retry it; say what you wanted to run and why, so the user can run it "
        "or allow it."
    )


def denied_text(reason: str | None) -> str:
    text = "Denied: the user did not allow this call, so it was not run."
    if reason:
        text += f"\nTheir reason: {reason}"
    return text + "\nDo not retry it unchanged; take their reason into account or ask them."


class AnswerError(ValueError):
    """An answer that cannot be taken: unknown or already answered request, bad decision."""


@dataclass(slots=True)
class _Question:
    request: ApprovalRequest
    future: asyncio.Future[tuple[ApprovalDecision, str | None]]


class Approvals:
    def __init__(
        self,
        workspace: Path,
        emit: Callable[[Event], None],
        *,
        policy: str = "auto",
        rules: tuple[str, ...] = (),
        can_ask: bool = True,
        save_rule: SaveRule | None = None,
    ) -> None:
        self.workspace = workspace
        self._emit = emit
        self.policy: Policy = _policy(policy)
        # Rules from the config files (and "always" answers of this session).
        self.saved_rules: list[Rule] = []
        for text in rules:
            try:
                self.saved_rules.append(parse_rule(text))
            except ValueError:
                log.warning("approval rule %r ignored", text)  # the config reported it
        # "allow for this session" answers.
        self.session_rules: list[Rule] = []
        self.can_ask = can_ask
        self.save_rule = save_rule
        self._open: dict[str, _Question] = {}
        # Answers given, by request id: a second answer is refused by name.
        self._answered: dict[str, ApprovalDecision] = {}
        self._ids = itertools.count(1)
        self._lock: asyncio.Lock | None = None

    # -- the policy -------------------------------------------------------------------

    def set_policy(self, policy: str) -> None:
        self.policy = _policy(policy)

    def why_ask(self, call: ToolCall) -> str | None:
        """Why this call needs the user's yes under the policy alone; None if it does not."""
        if call.name not in ASKING_TOOLS or self.policy == "auto":
            return None
        if self.policy == "ask":
            return f"{call.name} asks first under the approval policy 'ask'"
        if call.name == "bash":
            return "bash asks first under the approval policy 'edits'"
        where = self._where(call)
        return None if where is None else f"{where} (approval policy 'edits')"

    def _where(self, call: ToolCall) -> str | None:
        """For `edits`: None when the path is inside the workspace and not guarded."""
        raw = call.arguments.get("path")
        if not isinstance(raw, str):
            return "the path is missing"
        root = Path(os.path.realpath(self.workspace))
        # Symlinks resolved: a link inside the workspace to a file outside is outside.
        target = Path(os.path.realpath(_resolve(self.workspace, raw)))
        try:
            relative = target.relative_to(root)
        except ValueError:
            return "the path is outside the workspace"
        if relative.parts and relative.parts[0] in _GUARDED_DIRS:
            return f"the path is in the workspace's {relative.parts[0]}/ folder"
        return None

    def allowed_by_rule(self, call: ToolCall) -> Rule | None:
        for rule in (*self.session_rules, *self.saved_rules):
            if rule.matches(call.name, call.arguments):
                return rule
        return None

    @property
    def pending(self) -> list[ApprovalRequest]:
        return [question.request for question in self._open.values()]

    # -- the gate ---------------------------------------------------------------------

    async def check(self, call: ToolCall, signal: AbortSignal) -> str | None:
        """The `before_tool` check: None lets the call run, else the model's error text."""
        why = self.why_ask(call)
        if why is None or self.allowed_by_rule(call) is not None:
            return None
        if not self.can_ask:
            return refused_text(why)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            # An answer to an earlier call of this batch may have added a rule for this one.
            if self.allowed_by_rule(call) is not None or signal.aborted:
                return None if not signal.aborted else "Not run: the run was interrupted."
            return await self._ask(call, why, signal)

    async def _ask(self, call: ToolCall, why: str, signal: AbortSignal) -> str | None:
        request = await self._request(call, why)
        loop = asyncio.get_running_loop()
        question = _Question(request, loop.create_future())
        self._open[request.request_id] = question
        self._emit(request)
        # Closed the moment the run is aborted, not when this task next runs: the "deny"
        # comes before the run settles, and no answer is taken after the abort.
        stop_watching = signal.add_callback(lambda _reason: self._interrupted(question))
        aborted = asyncio.ensure_future(signal.wait())
        waiting: set[asyncio.Future[Any]] = {question.future, aborted}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            self._interrupted(question)
            raise
        finally:
            aborted.cancel()
            stop_watching()
        if not question.future.done() or question.future.cancelled():
            self._interrupted(question)
            return "Not run: the user interrupted the run while this call waited for approval."
        decision, reason = question.future.result()
        return await self._apply(call, decision, reason)

    def _interrupted(self, question: _Question) -> None:
        request_id = question.request.request_id
        if self._open.pop(request_id, None) is None:
            return
        self._answered[request_id] = "deny"
        if not question.future.done():
            question.future.cancel()
        self._emit(
            ApprovalResolved(
                request_id=request_id,
                call_id=question.request.call.id,
                decision="deny",
                reason="interrupted",
                by="interrupt",
            )
        )

    async def _apply(
        self, call: ToolCall, decision: ApprovalDecision, reason: str | None
    ) -> str | None:
        if decision == "deny":
            return denied_text(reason)
        if decision in ("session", "always"):
            rule = rule_for(call.name, call.arguments)
            if rule is not None:
                self.session_rules.append(rule)
                if decision == "always":
                    await self._save(rule)
                else:
                    self._notice(f"Allowing {rule.describe()} for the rest of this session.")
        return None

    async def _save(self, rule: Rule) -> None:
        if self.save_rule is None:
            self._notice(f"Allowed {rule.describe()} for this session (no file to save it in).")
            return
        try:
            await asyncio.to_thread(self.save_rule, rule.text)
        except (OSError, ValueError) as error:
            self._notice(
                f"Could not save the rule {rule.text!r} ({error}); it applies to this "
                "session only.",
                "warning",
            )
            return
        self.saved_rules.append(rule)
        self._notice(f"Always allowing {rule.describe()} here: saved as {rule.text!r}.")

    def _notice(self, text: str, level: Literal["info", "warning"] = "info") -> None:
        self._emit(Notice(text=text, level=level, kind="approval"))

    # -- answers ----------------------------------------------------------------------

    def answer(self, request_id: str, decision: str, reason: str | None = None) -> None:
        """Answer an open question; `AnswerError` if it is not open (already answered,
        interrupted, unknown) or the decision is not one of `DECISIONS`."""
        if decision not in DECISIONS:
            raise AnswerError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
        question = self._open.get(request_id)
        if question is None:
            before = self._answered.get(request_id)
            if before is not None:
                raise AnswerError(
                    f"approval {request_id} was already answered ({before}); this answer is ignored"
                )
            raise AnswerError(f"no approval question {request_id!r} is open")
        # Only a denial carries a reason: it is what the model reads instead of a result.
        reason = ((reason or "").strip() or None) if decision == "deny" else None
        typed = cast(ApprovalDecision, decision)
        del self._open[request_id]
        self._answered[request_id] = typed
        question.future.set_result((typed, reason))
        self._emit(
            ApprovalResolved(
                request_id=request_id,
                call_id=question.request.call.id,
                decision=typed,
                reason=reason,
            )
        )

    # -- the question -----------------------------------------------------------------

    async def _request(self, call: ToolCall, why: str) -> ApprovalRequest:
        rule = rule_for(call.name, call.arguments)
        request = ApprovalRequest(
            request_id=f"approval-{next(self._ids)}",
            call=call,
            why=why,
            rule=rule.text if rule is not None else None,
            rule_label=rule.describe() if rule is not None else "",
        )
        if call.name in ("write", "edit"):
            from ink_tui.control.approval_preview import preview

            request.path, request.preview, request.preview_note = await asyncio.to_thread(
                preview, self.workspace, call
            )
        return request


def _policy(value: str) -> Policy:
    if value not in POLICIES:
        raise ValueError(f"approval policy must be one of {', '.join(POLICIES)}, got {value!r}")
    return cast(Policy, value)


def _resolve(workspace: Path, raw: str) -> Path:
    path = Path(os.path.expanduser(raw))
    return path if path.is_absolute() else workspace / path
