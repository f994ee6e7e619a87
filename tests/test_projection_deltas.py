"""The projection's path for text and thinking deltas (`PublicProjection._delta`, taken
while no retry waits) projects exactly as its general `match`: the same public events,
seqs and held text, for any mix of deltas of several agents and kinds, with held ends,
retries, tool starts and run ends between them (Hypothesis; the general path is a
projection with `_fast_deltas` off)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ink_tui.control.public_events import PublicProjection
from ink_tui.core.events import Event, Notice, RunEnd, RunStart, TextDelta, ThinkingDelta, ToolStart
from ink_tui.core.messages import ToolCall
from ink_tui.serve.redact import Redactor

SECRETS = ["sk-proj-abc123", "hunter2hunter2"]
PIECES = ["sk-", "proj", "-abc123", "hunter2", "hunter", "the ", "s", "\n", "Bear", "er tok"]
AGENTS = [None, "a1"]


def make(general: bool, held: bool) -> PublicProjection:
    redactor = Redactor(SECRETS)
    projection = PublicProjection(
        "s1",
        redact_call=redactor.call,
        redact_text=redactor.text,
        hold_text=redactor.straddling if held else None,
    )
    if general:
        projection._fast_deltas = False
    return projection


def event(spec: tuple[str, Any, Any]) -> Event:
    kind, agent, value = spec
    if kind == "text":
        return TextDelta(text=value, run_id="r1", agent_id=agent)
    if kind == "thinking":
        return ThinkingDelta(text=value, run_id="r1", agent_id=agent)
    if kind == "retry":
        data = {"attempt": value, "max_attempts": 3, "delay": 0.5, "reason": "overloaded"}
        return Notice(text="retrying", kind="retry", data=data, run_id="r1", agent_id=agent)
    if kind == "tool":
        call = ToolCall(id=f"c{value}", name="read", arguments={"path": "a.py"})
        return ToolStart(call=call, run_id="r1", agent_id=agent)
    return RunEnd(stop_reason="completed", run_id="r1")


SPECS = st.one_of(
    st.tuples(
        st.sampled_from(["text", "thinking"]), st.sampled_from(AGENTS), st.sampled_from(PIECES)
    ),
    st.tuples(st.just("retry"), st.sampled_from(AGENTS), st.integers(0, 2)),
    st.tuples(st.just("tool"), st.sampled_from(AGENTS), st.integers(0, 9)),
    st.tuples(st.just("end"), st.none(), st.none()),
)


@settings(max_examples=300, deadline=None)
@given(specs=st.lists(SPECS, max_size=40), held=st.booleans())
def test_deltas_project_as_the_general_path_does(specs: list[Any], held: bool) -> None:
    fast, general = make(False, held), make(True, held)
    start = RunStart(run_id="r1", prompt="go")
    assert fast.project(start) == general.project(start)
    for spec in specs:
        assert fast.project(event(spec)) == general.project(event(spec)), spec
