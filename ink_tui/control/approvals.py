"""Approvals: the user's yes or no before a tool changes anything.

One check in the tool gate (`ToolContext.before_tool`, the same gate extensions use; the
controller puts this one last, so a call an extension blocks is never asked about):

- Read-only tools never ask. `bash`, `write` and `edit` ask according to the policy:
  `ask` asks for all three, `edits` lets `write`/`edit` inside the workspace through
  and asks for `bash` and anything outside, `auto` never asks.
- A `write`/`edit` path is judged once, by `tools.path_target`: the file the tool will
  open (symlinks followed in order, `..` applied after them, as the file system does);
  the tools open that same path. Outside the workspace, or in a protected place
  (`protected_places.py`: the workspace's `.ink/` and `.git/`, ink's config, extension
  and data folders, the trust store), it asks under `ask` and `edits` whatever the rules
  say, offering "allow once" or "deny" only. So does a path whose text reads as such a
  place when its real target is not (a `..` after a symlink: `a/../../x` with
  `a -> d/e`): the user is asked about what they would read, and the question names
  the real target, which is what gets written.
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
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

from ink_tui.control.approval_rules import ASKING_TOOLS, Rule, parse_rule, rule_for
from ink_tui.control.protected_places import Judgement, ProtectedPlaces
from ink_tui.core.abort import AbortSignal
from ink_tui.core.events import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalResolved,
    Event,
    Notice,
)
from ink_tui.core.messages import ToolCall
from ink_tui.core.tool_summary import call_label
from ink_tui.tools.path_target import path_target

log = logging.getLogger(__name__)

Policy = Literal["ask", "edits", "auto"]
POLICIES: tuple[str, ...] = ("ask", "edits", "auto")
DECISIONS: tuple[str, ...] = ("allow", "session", "always", "deny")

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


class AgentTag(NamedTuple):
    """The sub-agent a question comes from: its events and questions carry these."""

    agent_id: str
    parent_call_id: str
    description: str


class AnswerError(ValueError):
    """An answer that cannot be taken: unknown or already answered request, bad decision."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a call asks."""

    why: str
    # False for a path outside the workspace or in a protected place: no rule and no
    # "session"/"always" answer allows it, only a yes to this question (or `auto`).
    by_rule: bool = True
    # write/edit: where the path leads, as judged.
    judgement: Judgement | None = None


@dataclass(slots=True)
class _Question:
    request: ApprovalRequest
    verdict: Verdict
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
        protected: ProtectedPlaces | None = None,
    ) -> None:
        self.workspace = workspace
        # Where a write asks whatever the rules say (the folders as of now).
        self.protected = protected if protected is not None else ProtectedPlaces(workspace)
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
        # What each question asked about ("bash ls -la"), for messages a user reads: the
        # request id is for programs, not for the transcript.
        self._asked_about: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._lock: asyncio.Lock | None = None

    # -- the policy -------------------------------------------------------------------

    def set_policy(self, policy: str) -> None:
        self.policy = _policy(policy)

    def why_ask(self, call: ToolCall) -> str | None:
        """Why this call needs the user's yes under the policy alone; None if it does not."""
        verdict = self.verdict(call)
        return None if verdict is None else verdict.why

    def verdict(self, call: ToolCall) -> Verdict | None:
        """Why this call asks (before rules); None when the policy lets it run. Blocking
        for write/edit (a few `lstat`s to follow symlinks)."""
        if call.name not in ASKING_TOOLS or self.policy == "auto":
            return None
        policy = f"approval policy '{self.policy}'"
        if call.name == "bash":
            return Verdict(f"bash asks first under the {policy}")
        raw = call.arguments.get("path")
        if not isinstance(raw, str):
            return Verdict("the path is missing", by_rule=False)
        judgement = self.judge(raw)
        why = judgement.why if judgement.place != "inside" else self._misread(judgement)
        if why:
            return Verdict(why, by_rule=False, judgement=judgement)
        if self.policy == "ask":
            return Verdict(f"{call.name} asks first under the {policy}", judgement=judgement)
        return None

    def judge(self, raw: str) -> Judgement:
        """Where the path argument `raw` leads: its real target, the file the tool opens,
        and whether that is inside the workspace, outside or protected. Blocking."""
        return self.protected.judge(path_target(self.workspace, raw))

    def _misread(self, judgement: Judgement) -> str:
        """Why to ask about a path whose text reads as outside or protected while its
        target is an ordinary file inside ("" when it does not): the user would read
        the text, and expect the write elsewhere."""
        target = judgement.target
        if not target.differs:
            return ""
        read = self.protected.judge(replace(target, real=target.as_written))
        if read.place == "inside":
            return ""
        return (
            f"as written, {target.raw} {read.why}; its `..` comes after a symlink, so "
            f"it really writes {target.shown}"
        )

    def allowed_by_rule(self, call: ToolCall) -> Rule | None:
        for rule in (*self.session_rules, *self.saved_rules):
            if rule.matches(call.name, call.arguments):
                return rule
        return None

    @property
    def pending(self) -> list[ApprovalRequest]:
        return [question.request for question in self._open.values()]

    # -- the gate ---------------------------------------------------------------------

    async def check(
        self, call: ToolCall, signal: AbortSignal, agent: AgentTag | None = None
    ) -> str | None:
        """The `before_tool` check: None lets the call run, else the model's error text.
        A sub-agent's gate passes `agent`: its question says who asks, for what task."""
        verdict = self.verdict(call)
        if verdict is None or self._ruled(verdict, call):
            return None
        if not self.can_ask:
            return refused_text(verdict.why)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            # An answer to an earlier call of this batch may have added a rule for this one.
            if signal.aborted:
                return "Not run: the run was interrupted."
            if self._ruled(verdict, call):
                return None
            refused = await self._ask(call, verdict, signal, agent)
        if refused is None and verdict.judgement is not None:
            # The question may have been open a while: the path must still lead where
            # the user was shown.
            before = verdict.judgement.target
            now = path_target(self.workspace, before.raw)
            if now.real != before.real:
                return (
                    f"Not run: {before.raw} led to {before.shown} when you were asked and "
                    f"leads to {now.shown} now (a symlink on the way changed). Ask again."
                )
        return refused

    def _ruled(self, verdict: Verdict, call: ToolCall) -> bool:
        return verdict.by_rule and self.allowed_by_rule(call) is not None

    async def _ask(
        self, call: ToolCall, verdict: Verdict, signal: AbortSignal, agent: AgentTag | None
    ) -> str | None:
        request = await self._request(call, verdict)
        if agent is not None:
            request.agent_id, request.parent_call_id = agent.agent_id, agent.parent_call_id
            request.agent_description = agent.description
        loop = asyncio.get_running_loop()
        question = _Question(request, verdict, loop.create_future())
        self._open[request.request_id] = question
        self._asked_about[request.request_id] = call_label(request.call)
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
        return await self._apply(question, decision, reason)

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
                agent_id=question.request.agent_id,
                parent_call_id=question.request.parent_call_id,
            )
        )

    async def _apply(
        self, question: _Question, decision: ApprovalDecision, reason: str | None
    ) -> str | None:
        if decision == "deny":
            return denied_text(reason)
        if decision in ("session", "always"):
            call = question.request.call
            rule = rule_for(call.name, call.arguments) if question.verdict.by_rule else None
            if not question.verdict.by_rule:
                self._notice(
                    "Allowed once: no rule can allow writing there, so the next such "
                    "write asks again."
                )
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
            about = self._asked_about.get(request_id)
            question_name = f"the question about {about}" if about else "that question"
            if before is not None:
                raise AnswerError(
                    f"{question_name} was already answered ({before}); this answer is ignored"
                )
            raise AnswerError(f"{question_name} is not open; this answer is ignored")
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
                agent_id=question.request.agent_id,
                parent_call_id=question.request.parent_call_id,
            )
        )

    # -- the question -----------------------------------------------------------------

    async def _request(self, call: ToolCall, verdict: Verdict) -> ApprovalRequest:
        # Outside or protected: only "allow once" or "deny" (a rule would not apply).
        rule = rule_for(call.name, call.arguments) if verdict.by_rule else None
        request = ApprovalRequest(
            request_id=f"approval-{next(self._ids)}",
            call=call,
            why=verdict.why,
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
