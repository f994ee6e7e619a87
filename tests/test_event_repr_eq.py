"""Events share one `__repr__` and `__eq__` (core/events.py), written to behave exactly as
the ones `dataclass` would generate for each class."""

from __future__ import annotations

import dataclasses

import pytest

from ink_tui.core import events
from ink_tui.core.events import Event, Notice, QueueEntryView, QueueUpdate, StateChange, TurnStart

EVENT_TYPES = [
    cls
    for cls in vars(events).values()
    if isinstance(cls, type) and issubclass(cls, Event) and dataclasses.is_dataclass(cls)
]


def test_repr_names_every_field_in_order_as_dataclass_does() -> None:
    assert repr(TurnStart(turn=3)) == (
        "TurnStart(run_id=None, seq=0, agent_id=None, parent_call_id=None, turn=3)"
    )
    update = QueueUpdate(entries=[QueueEntryView(id=1, text="a", mode="steer", shell=False)])
    assert repr(update) == (
        "QueueUpdate(run_id=None, seq=0, agent_id=None, parent_call_id=None, "
        "entries=[QueueEntryView(id=1, text='a', "
        "mode='steer', shell=False, source='user', custom_type=None)], paused=False)"
    )


def test_a_notice_holding_itself_repr_does_not_recurse() -> None:
    notice = Notice(text="x")
    notice.data["self"] = notice
    assert (
        repr(notice) == "Notice(run_id=None, seq=0, agent_id=None, parent_call_id=None, text='x', "
        "level='info', kind='', data={'self': ...})"
    )


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda cls: cls.__name__)
def test_every_event_uses_the_shared_methods(cls: type[Event]) -> None:
    # So what the tests here show of a few events holds for all of them.
    assert [f.name for f in dataclasses.fields(cls)][:2] == ["run_id", "seq"]
    assert cls.__repr__ is Event.__repr__
    assert cls.__eq__ is Event.__eq__
    assert cls.__hash__ is None


def test_equality() -> None:
    assert TurnStart(turn=1) == TurnStart(turn=1)
    assert TurnStart(turn=1) != TurnStart(turn=2)
    assert TurnStart(turn=1, seq=4) != TurnStart(turn=1)
    # Same fields, other class: never equal (dataclass compares classes first).
    assert events.TurnEnd(turn=1) != TurnStart(turn=1)
    assert StateChange(state="idle") != "idle"
    assert TurnStart(turn=1).__eq__(1) is NotImplemented
    with pytest.raises(TypeError):
        hash(TurnStart(turn=1))
