"""What the reference-parser tests (tests/test_reference_parsers_*.py) share: one loopback
server per module, ink's side of each comparison (the provider's final message for the
server's next reply, one attempt, no retries) and the Hypothesis settings."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import TypeVar

from hypothesis import HealthCheck, settings

from ink_tui.core.abort import AbortController
from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.core.provider_api import ModelRequest, Provider, ReplyDone
from tests.scripted_server import ScriptedServer

# Each example sends two real streams: fewer examples than the suite's default.
REFERENCE = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

S = TypeVar("S", bound=ScriptedServer)


def serving(kind: type[S]) -> Iterator[S]:
    """A server of `kind` until the module's tests are done (`yield from` it in a
    module-scoped fixture)."""
    scripted = kind()
    try:
        yield scripted
    finally:
        scripted.close()


def final_message(make_provider: Callable[[], Provider]) -> AssistantMessage:
    """The message ink's provider assembles from the server's next reply."""

    async def run() -> AssistantMessage:
        provider = make_provider()
        try:
            request = ModelRequest("You are a test.", [UserMessage("hi")])
            events = [e async for e in provider.stream(request, AbortController().signal)]
        finally:
            await provider.aclose()
        done = events[-1]
        assert isinstance(done, ReplyDone)
        return done.message

    return asyncio.run(run())
