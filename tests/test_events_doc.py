"""docs/events.md lists every public event and shows one example of each, and both agree
with the TypedDicts in ink_tui/control/public_event_types.py: the same events, every key
named in the table, and each example holding exactly its type's keys (those marked
NotRequired may be left out), with values of the declared types, nested ones too."""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from ink_tui.control import public_event_types as pub
from ink_tui.control.public_events import PUBLIC_EVENT_TYPES

DOC = (Path(__file__).resolve().parent.parent / "docs" / "events.md").read_text()
ENVELOPE = set(pub.Envelope.__annotations__) | {"type"}


def _by_type() -> dict[str, type]:
    """Each event's TypedDict, by its `type`."""
    found = {}
    for td in get_args(pub.PublicEvent):
        (tag,) = get_args(get_type_hints(td)["type"])
        found[tag] = td
    return found


EVENTS = _by_type()


def _table_rows() -> dict[str, str]:
    """Event type -> the fields cell of its row in "The events"."""
    table = DOC[DOC.index("## The events") : DOC.index("## One example of each")]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`([a-z_]+)`", cells[0]):
            rows[name] = cells[2]
    return rows


def _examples() -> list[dict[str, Any]]:
    examples = DOC[DOC.index("## One example of each") :]
    return [json.loads(line) for line in re.findall(r"^\{.*\}$", examples, flags=re.MULTILINE)]


def _problems(value: Any, tp: Any, where: str) -> list[str]:
    """Where `value` (parsed JSON) does not fit the type `tp`."""
    if tp is Any:
        return []
    origin = get_origin(tp)
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{where}: {value!r} is not one of {get_args(tp)}"]
    if origin in (Union, types.UnionType):
        tried = [_problems(value, arm, where) for arm in get_args(tp)]
        return [] if any(not p for p in tried) else min(tried, key=len)
    if tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object"]
        keys = set(value)
        problems = [f"{where}: missing {k}" for k in sorted(tp.__required_keys__ - keys)]
        problems += [f"{where}: unknown {k}" for k in sorted(keys - set(tp.__annotations__))]
        hints = get_type_hints(tp)
        for key in sorted(keys & set(hints)):
            problems += _problems(value[key], hints[key], f"{where}.{key}")
        return problems
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        (item,) = get_args(tp)
        return [p for i, v in enumerate(value) for p in _problems(v, item, f"{where}[{i}]")]
    if origin is dict or tp is dict:
        return [] if isinstance(value, dict) else [f"{where}: {value!r} is not an object"]
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if tp in (str, int, bool):
        ok = isinstance(value, tp) and (tp is bool or not isinstance(value, bool))
        return [] if ok else [f"{where}: {value!r} is not {tp.__name__}"]
    raise AssertionError(f"{where}: no check for {tp!r}")


def test_every_public_event_is_in_the_table_and_has_an_example() -> None:
    shown = {example["type"] for example in _examples()}
    assert [t for t in PUBLIC_EVENT_TYPES if f"`{t}`" not in DOC] == []
    assert [t for t in PUBLIC_EVENT_TYPES if t not in shown] == []


def test_the_event_list_the_table_and_the_typeddicts_name_the_same_events() -> None:
    assert list(EVENTS) == list(PUBLIC_EVENT_TYPES)
    assert set(_table_rows()) == set(PUBLIC_EVENT_TYPES)


def test_the_table_names_every_key_of_each_event() -> None:
    rows = _table_rows()
    unnamed = {
        name: [k for k in td.__annotations__ if k not in ENVELOPE and f"`{k}`" not in rows[name]]
        for name, td in EVENTS.items()
    }
    assert {name: keys for name, keys in unnamed.items() if keys} == {}


def test_each_example_has_its_typeddicts_keys_and_types() -> None:
    problems = []
    for example in _examples():
        td = EVENTS.get(example["type"])
        if td is None:
            problems.append(f"no TypedDict for {example['type']}")
            continue
        problems += _problems(example, td, f"{example['type']}#{example['seq']}")
    assert problems == []


def test_the_examples_show_every_key_of_each_event() -> None:
    shown: dict[str, set[str]] = {name: set() for name in EVENTS}
    for example in _examples():
        shown[example["type"]] |= set(example)
    # The envelope's sub-agent keys are on any type's events: shown below, not for each.
    optional_envelope = pub.Envelope.__optional_keys__
    missing = {
        name: set(td.__annotations__) - shown[name] - optional_envelope
        for name, td in EVENTS.items()
    }
    assert {name: keys for name, keys in missing.items() if keys} == {}


def test_sub_agent_events_are_shown_with_both_keys() -> None:
    assert pub.Envelope.__optional_keys__ == {"agent_id", "parent_call_id"}
    marked = [e for e in _examples() if "agent_id" in e or "parent_call_id" in e]
    assert {e["type"] for e in marked} >= {"subagent_start", "subagent_end", "message_update"}
    assert all(
        isinstance(e["agent_id"], str) and isinstance(e["parent_call_id"], str) for e in marked
    )
    assert [e for e in _examples() if e["type"].startswith("subagent_") and e not in marked] == []
    assert "## Sub-agents" in DOC


def test_optional_keys_are_known_at_run_time() -> None:
    # What the checks above rely on (and programs that look at the types): `NotRequired`
    # is read when the TypedDict is made, which needs evaluated annotations.
    own = pub.AgentEndEvent.__optional_keys__ - pub.Envelope.__optional_keys__
    assert own == {"usage", "turns", "duration_s"}
    assert typing.get_type_hints(pub.AgentEndEvent)["turns"] is int
