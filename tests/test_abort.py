from __future__ import annotations

import asyncio
import time

import pytest

from ink_tui.core.abort import AbortController, AbortError


async def test_abort_is_idempotent_and_first_reason_wins() -> None:
    controller = AbortController()
    calls: list[str] = []
    controller.signal.add_callback(calls.append)
    controller.abort("first")
    controller.abort("second")
    assert controller.signal.aborted
    assert controller.signal.reason == "first"
    assert calls == ["first"]
    late: list[str] = []
    controller.signal.add_callback(late.append)
    assert late == ["first"]


async def test_scope_cancels_a_pending_await_at_once() -> None:
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.05, controller.abort, "stop now")
    started = time.monotonic()
    with pytest.raises(AbortError) as info:
        async with controller.signal.scope():
            await asyncio.sleep(10)
    assert time.monotonic() - started < 1
    assert info.value.reason == "stop now"
    # The task is usable afterwards: no stray cancellation left behind.
    await asyncio.sleep(0.01)


async def test_scope_leaves_foreign_cancellation_alone() -> None:
    controller = AbortController()

    async def body() -> None:
        async with controller.signal.scope():
            await asyncio.sleep(10)

    task = asyncio.create_task(body())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_scope_aborted_from_inside_the_same_task() -> None:
    controller = AbortController()
    with pytest.raises(AbortError):
        async with controller.signal.scope():
            controller.abort("self")
    await asyncio.sleep(0.01)


async def test_wait_returns_reason() -> None:
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await asyncio.sleep(0)
    controller.abort("why")
    assert await waiter == "why"
