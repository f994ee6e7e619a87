"""The event loop ink runs on: uvloop's when installed, asyncio's own otherwise."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import pytest

from ink_tui import event_loop


@pytest.fixture(autouse=True)
def _default_policy_after() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_run_uses_uvloop_when_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    monkeypatch.delenv("INK_NO_UVLOOP", raising=False)
    assert event_loop.run(_loop_module()).startswith("uvloop")


def test_without_uvloop_asyncio_runs_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INK_NO_UVLOOP", raising=False)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if not installed: ImportError
    assert event_loop.install() is False
    assert event_loop.run(_loop_module()).startswith("asyncio")


def test_it_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INK_NO_UVLOOP", "1")
    assert event_loop.install() is False
    assert event_loop.run(_loop_module()).startswith("asyncio")
