"""`ink serve`'s event JSON from the C encoder made once (`fastpaths.json_encoder`) is the
text `JSONEncoder.encode` writes, for any JSON value (Hypothesis), with `default` for
the rest; a NaN is refused as the stock encoder refuses it, and the SSE data line says
"NaN" either way. The check refuses a C encoder that takes its arguments otherwise,
and the stock path is taken then."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink_tui import fastpaths
from ink_tui.fastpaths import json_encoder
from ink_tui.serve import events_stream
from tests.fastpath_helpers import needs_fast_path

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.text(max_size=8), VALUES, max_size=6))
def test_the_text_is_the_stock_encoders(value: dict[str, Any]) -> None:
    assert json_encoder.compact_encoder(str)(value) == json_encoder.stock(str).encode(value)


def test_default_writes_what_json_cannot() -> None:
    value = {"path": object, "nested": [{"kind": type}]}
    assert json_encoder.compact_encoder(repr)(value) == json_encoder.stock(repr).encode(value)


def test_a_nan_is_refused_as_the_stock_encoder_refuses_it() -> None:
    for encode in (json_encoder.compact_encoder(str), json_encoder.stock(str).encode):
        with pytest.raises(ValueError, match="Out of range float"):
            encode({"x": [1.0, math.inf]})


@needs_fast_path("json_events")
def test_the_sse_data_line_says_nan_with_the_fast_path() -> None:
    # The C encoder made once, not the stock encoder's bound `encode`.
    assert events_stream._encoder() != events_stream._ENCODER.encode
    data = events_stream.encode(7, "notice", {"type": "notice", "cost": math.nan})
    assert data == b'id: 7\nevent: notice\ndata: {"type":"notice","cost":"NaN"}\n\n'


def test_a_c_encoder_taking_other_arguments_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(*args: Any) -> Any:
        raise TypeError(f"make_encoder() takes 10 arguments ({len(args)} given)")

    monkeypatch.setattr(json.encoder, "c_make_encoder", make)
    monkeypatch.delenv(fastpaths.DISABLE_VAR, raising=False)
    fastpaths.reset()
    try:
        assert "takes 10 arguments" in str(fastpaths.why_off("json_events"))
    finally:
        fastpaths.reset()


def test_no_c_encoder_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    assert json_encoder.check() == "json.encoder has no C encoder (c_make_encoder)"
