"""The agent loop: one run, which may make many model calls.

Where queued input enters (the run-control contract, "Where the loop takes queued input"):

1. Top of every iteration: return `aborted` if the signal fired. Then take steering
   input, unless the skip flag is set (clear it, take none), and call the model.
2. A reply with tool calls: run them, append the results, return `max_iterations` when
   the limit is reached, else loop.
3. A reply without tool calls (the model would stop): take steering input; if any,
   append it, set the skip flag, loop. Else take follow-up input the same way. Else
   return `completed`.

Compaction is a step of its own at the top of an iteration, after the abort check and
the steering poll (so input just taken is part of the kept, recent messages): when the
next request would pass `compact_at` of the model's context window, the older part of
the history is summarised and replaced by the summary (`compact`, core/compaction.py).
It takes no queued input. A reply refused as too long for the context compacts and is
retried once.

The skip flag keeps input just taken at step 3 from being followed at once by a second
batch at step 1, which in `one-at-a-time` mode would send two entries in one request.

The loop owns no queue: `take_steering` / `take_follow_up` are handed in by the run
controller, which applies the steer and follow-up modes. They hand over whole user
messages, so a message an extension injected keeps its sender (`UserMessage.source`).
`run(prompt, lead=...)` puts messages that waited for this run (an extension's
`next_turn`) into the history just before the prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ink_tui.core.abort import AbortError, AbortSignal
from ink_tui.core.compaction import (
    CompactionBackoff,
    CompactionFailed,
    CompactionRefused,
    check_shrinks,
    keep_budget,
    plan_cut,
    refused_notice,
    summarise,
)
from ink_tui.core.compaction_prompt import summary_message
from ink_tui.core.context_window import context_tokens, fixed_tokens, messages_tokens, window_of
from ink_tui.core.events import (
    CompactionEnd,
    CompactionReason,
    CompactionStart,
    ContextUsage,
    Event,
    MessageEnd,
    Notice,
    RunStopReason,
    ServerWaiting,
    TextDelta,
    ThinkingDelta,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)

# LoopConfig lives apart so that configuration can be read without importing the loop;
# it is re-exported here for code that imports it from the loop.
from ink_tui.core.loop_config import LoopConfig as LoopConfig
from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    StopReason,
    Usage,
    UserKind,
    UserMessage,
    new_entry_id,
)
from ink_tui.core.provider_api import (
    ModelRequest,
    Provider,
    ProviderError,
    ReplyDone,
    RetryScheduled,
    TextChunk,
    ThinkingChunk,
    Waiting,
)
from ink_tui.core.scheduler import ToolScheduler
from ink_tui.core.text_pieces import Pieces
from ink_tui.core.tool_api import Tool, ToolContext, spec_of

TakeInput = Callable[[], list[UserMessage]]

CUT_OFF_CALL = (
    "Not run: your reply was cut off by the output token limit before it was complete, so "
    "this call's arguments may be incomplete. Issue the call again in a smaller form (for "
    "example, write a large file in several edits)."
)


@dataclass(slots=True)
class LoopResult:
    stop_reason: RunStopReason
    turns: int = 0
    usage: Usage = field(default_factory=Usage)


@dataclass
class AgentLoop:
    provider: Provider
    tools: Sequence[Tool]
    system_prompt: str
    history: list[Message]
    ctx: ToolContext
    emit: Callable[[Event], None]
    take_steering: TakeInput
    take_follow_up: TakeInput
    config: LoopConfig = field(default_factory=LoopConfig)
    # The run's usage, which the summary requests add to as well.
    usage: Usage = field(default_factory=Usage, init=False)
    # When the threshold may compact again; the controller hands in one per conversation
    # so that the wait holds across runs.
    backoff: CompactionBackoff = field(default_factory=CompactionBackoff)
    # Set by a compaction, cleared by the next reply: one compaction per model call.
    _just_compacted: bool = field(default=False, init=False)

    @property
    def signal(self) -> AbortSignal:
        return self.ctx.signal

    async def run(self, prompt: str | UserMessage, lead: Sequence[UserMessage] = ()) -> LoopResult:
        result = LoopResult("completed")
        self.usage = result.usage
        first = prompt if isinstance(prompt, UserMessage) else UserMessage(prompt, "prompt")
        self._append_user([*lead, first], None)
        scheduler = ToolScheduler(self.tools, self.ctx, self.emit, self.config.abort_grace_s)
        skip_steering = False
        tool_replies = 0
        while True:
            if self.signal.aborted:
                result.stop_reason = "aborted"
                return result
            # Whether this iteration polled the steers and found none.
            polled_none = False
            if skip_steering:
                skip_steering = False
            else:
                steers = self.take_steering()
                self._append_user(steers, "steer")
                polled_none = not steers
            try:
                # A steer typed while compacting still reaches the very next call (unless
                # one just went in: `one-at-a-time` must not send two in one request).
                if self._over_threshold() and await self.compact("threshold") and polled_none:
                    self._append_user(self.take_steering(), "steer")
            except AbortError:
                result.stop_reason = "aborted"
                return result

            result.turns += 1
            self.emit(TurnStart(turn=result.turns))
            try:
                reply = await self._reply_or_compact()
            except AbortError:
                self.emit(TurnEnd(turn=result.turns))
                result.stop_reason = "aborted"
                return result
            result.usage.add(reply.usage)
            self._just_compacted = False
            self._emit_context(reply)

            if reply.tool_calls:
                if reply.finish_reason == "length":
                    results = scheduler.refuse(reply.tool_calls, CUT_OFF_CALL)
                else:
                    results = await scheduler.run(reply.tool_calls)
                self.history.extend(results)
                self.emit(TurnEnd(turn=result.turns))
                tool_replies += 1
                if self.signal.aborted:
                    result.stop_reason = "aborted"
                    return result
                if tool_replies >= self.config.max_iterations:
                    result.stop_reason = "max_iterations"
                    return result
                continue

            self.emit(TurnEnd(turn=result.turns))
            if reply.finish_reason == "length":
                self.emit(
                    Notice(
                        text="The answer was cut off by the model's output token limit.",
                        level="warning",
                        kind="cut_off",
                    )
                )
            takes: tuple[tuple[TakeInput, UserKind], ...] = (
                (self.take_steering, "steer"),
                (self.take_follow_up, "follow_up"),
            )
            for take, kind in takes:
                texts = take()
                if texts:
                    self._append_user(texts, kind)
                    skip_steering = True
                    break
            else:
                return result

    # -- context and compaction ---------------------------------------------------------

    def _fixed_tokens(self) -> int:
        return fixed_tokens(self.system_prompt, [spec_of(tool) for tool in self.tools])

    def _over_threshold(self) -> bool:
        window = window_of(self.provider)
        if window is None or self._just_compacted:
            return False
        tokens = context_tokens(self.history, self._fixed_tokens())
        threshold = self.config.compact_at * window
        return self.backoff.allows(tokens, threshold) and tokens >= threshold

    def _emit_context(self, reply: AssistantMessage) -> None:
        reported = reply.usage.input_tokens + reply.usage.output_tokens
        tokens = reported or context_tokens(self.history, self._fixed_tokens())
        self.emit(ContextUsage(tokens=tokens, context_window=window_of(self.provider)))

    async def compact(self, reason: CompactionReason, instructions: str = "") -> bool:
        """Summarise the older part of the history and keep the summary plus the recent
        messages. False (nothing emitted) when there is nothing older to summarise.

        Raises `AbortError` on abort and `CompactionFailed` when the summary cannot be
        made or is refused as not shorter (`CompactionRefused`); either way the history
        is left exactly as it was. A refusal by threshold only warns (False): the run
        goes on with the history as it was, and the threshold waits (`CompactionBackoff`).
        """
        window = window_of(self.provider)
        plan = plan_cut(self.history, keep_budget(window))
        if plan is None:
            return False
        fixed = self._fixed_tokens()
        before = context_tokens(self.history, fixed)
        self.emit(CompactionStart(reason=reason, tokens_before=before, context_window=window))
        try:
            summary, usage = await summarise(
                self.provider,
                self.signal,
                self.history,
                plan,
                instructions=instructions,
                window=window,
                on_event=self._on_summary_event,
            )
        except AbortError:
            self.emit(CompactionEnd(reason=reason, tokens_before=before, aborted=True))
            raise
        except CompactionFailed as error:
            self.emit(CompactionEnd(reason=reason, tokens_before=before, error=str(error)))
            raise
        self.usage.add(usage)
        threshold = self.config.compact_at * window if window else float("inf")
        try:
            check_shrinks(self.history, plan, summary)
        except CompactionRefused as refused:
            self.emit(CompactionEnd(reason=reason, tokens_before=before, error=str(refused)))
            retry_at = self.backoff.note(before, threshold, window)
            if reason != "threshold":
                raise
            self.emit(refused_notice(refused, retry_at))
            return False
        first = plan.previous.covers if plan.previous is not None else 0
        end = first + plan.cut - plan.start
        kept = self.history[plan.cut :]
        self.history[:] = [summary_message(summary, end, len(kept)), *kept]
        after = fixed + messages_tokens(self.history)
        self.backoff.note(after, threshold, window)
        self._just_compacted = True
        self.emit(
            CompactionEnd(
                reason=reason,
                tokens_before=before,
                tokens_after=after,
                summary=summary,
                first=first,
                end=end,
            )
        )
        self.emit(ContextUsage(tokens=after, context_window=window))
        return True

    def _on_summary_event(self, event: object) -> None:
        if isinstance(event, RetryScheduled):
            self.emit(_retry_notice(event))
        elif isinstance(event, Waiting):
            self.emit(ServerWaiting(seconds=event.seconds, limit_s=event.limit, over=event.over))

    async def _reply_or_compact(self) -> AssistantMessage:
        """One reply; a request refused as longer than the context window compacts the
        history and is sent once more."""
        try:
            return await self._stream_reply()
        except ProviderError as error:
            if not error.context_overflow:
                raise
            overflow = error
        if not await self.compact("overflow"):
            raise ProviderError(
                f"{overflow} (nothing older in the conversation to compact)",
                status=overflow.status,
            ) from overflow
        try:
            return await self._stream_reply()
        except ProviderError as error:
            if not error.context_overflow:
                raise
            raise ProviderError(
                f"the conversation is still too long for the model after compacting it: {error}",
                status=error.status,
            ) from error

    def _append_user(self, messages: Iterable[UserMessage], kind: UserKind | None) -> None:
        """Append to the history; `kind`, when given, says how they entered it."""
        for message in messages:
            if kind is not None:
                message.kind = kind
            if message.entry_id is None:
                message.entry_id = new_entry_id()
            self.history.append(message)
            self.emit(
                UserMessageEvent(
                    text=message.content,
                    kind=message.kind,
                    source=message.source,
                    custom_type=message.custom_type,
                    entry_id=message.entry_id,
                )
            )

    async def _stream_reply(self) -> AssistantMessage:
        """Stream one model reply into the history.

        On abort or failure the text that did arrive is kept as a reply of its own (its
        tool calls, possibly incomplete, are dropped), so work already shown to the user
        stays in the history.
        """
        request = ModelRequest(
            system_prompt=self.system_prompt,
            messages=list(self.history),
            tools=[spec_of(tool) for tool in self.tools],
            max_output_tokens=self.config.max_output_tokens,
        )
        # Pieces, not a list: a fast reply is tens of thousands of deltas, one string
        # each for every full collection to walk while the reply streams.
        text = Pieces()
        thinking = Pieces()
        try:
            async for chunk in self.provider.stream(request, self.signal):
                if isinstance(chunk, TextChunk):
                    text.append(chunk.text)
                    self.emit(TextDelta(text=chunk.text))
                elif isinstance(chunk, ThinkingChunk):
                    thinking.append(chunk.text)
                    self.emit(ThinkingDelta(text=chunk.text))
                elif isinstance(chunk, RetryScheduled):
                    self.emit(_retry_notice(chunk))
                elif isinstance(chunk, Waiting):
                    self.emit(
                        ServerWaiting(seconds=chunk.seconds, limit_s=chunk.limit, over=chunk.over)
                    )
                elif isinstance(chunk, ReplyDone):
                    self.history.append(chunk.message)
                    self.emit(MessageEnd(message=chunk.message))
                    return chunk.message
        except AbortError:
            self._keep_partial(text.text(), thinking.text(), "aborted")
            raise
        except Exception:
            self._keep_partial(text.text(), thinking.text(), "unknown")
            raise
        # A provider that ends without ReplyDone breaks its contract; keep what came.
        message = AssistantMessage(
            text=text.text(), thinking=thinking.text(), finish_reason="unknown"
        )
        self.history.append(message)
        self.emit(MessageEnd(message=message))
        return message

    def _keep_partial(self, text: str, thinking: str, finish: StopReason) -> None:
        if not text and not thinking:
            return
        message = AssistantMessage(
            text=text, thinking=thinking, finish_reason=finish, model=self.provider.model
        )
        self.history.append(message)
        self.emit(MessageEnd(message=message))


def _retry_notice(retry: RetryScheduled) -> Notice:
    return Notice(
        text=(
            f"Request failed ({retry.reason}); retrying in {retry.delay:.1f} s "
            f"(attempt {retry.attempt + 1} of {retry.max_attempts})."
        ),
        level="warning",
        kind="retry",
        data={
            "attempt": retry.attempt,
            "max_attempts": retry.max_attempts,
            "delay": retry.delay,
            "reason": retry.reason,
        },
    )
