"""Tests of a fast path's own effect skip, saying why, when that fast path is off (the
suite also runs with INK_NO_FAST_PATHS=1; the stock path's output is tested either way)."""

from __future__ import annotations

import pytest

from ink_tui import fastpaths


def needs_fast_path(name: str) -> pytest.MarkDecorator:
    reason = fastpaths.why_off(name)
    return pytest.mark.skipif(reason is not None, reason=f"fast path {name} off: {reason}")
