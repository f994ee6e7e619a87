"""Listing and finding sessions, and where the store puts them."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.session import session_writer
from ink_tui.session.catalog import (
    SessionLookupError,
    find_session,
    list_sessions,
    newest_session,
)
from ink_tui.session.session_writer import SessionWriter
from ink_tui.session.store_paths import (
    data_root,
    session_file_name,
    session_id_from_name,
    workspace_dir,
    workspace_slug,
)

T0 = dt.datetime(2024, 5, 1, 10, 0, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[dt.datetime, str]]]:
    """Queue (start time, id) pairs for the next `SessionWriter.create` calls."""
    plan: list[tuple[dt.datetime, str]] = []
    current: list[str] = []

    def now() -> dt.datetime:
        started, session_id = plan.pop(0)
        current[:] = [session_id]
        return started

    monkeypatch.setattr(session_writer, "utc_now", now)
    monkeypatch.setattr(session_writer, "new_session_id", lambda: current[0])
    yield plan


def make(workspace: Path, prompt: str | None, model: str = "m", root: Path | None = None) -> Path:
    with SessionWriter.create(workspace, model, root) as writer:
        if prompt is not None:
            writer.record_user(UserMessage(prompt))
            writer.record_assistant(AssistantMessage(text="reply"))
            writer.record_user(UserMessage("more", kind="steer"))
    return writer.path


def test_list_is_newest_first_with_summaries_and_skips_what_it_cannot_use(
    workspace: Path, tmp_path: Path, clock: list[tuple[dt.datetime, str]]
) -> None:
    clock.extend(
        [
            (T0 + dt.timedelta(hours=1), "bbbbbbbbbbbb"),
            (T0, "aaaaaaaaaaaa"),  # created second, started first
            (T0 + dt.timedelta(hours=2), "cccccccccccc"),
            (T0 + dt.timedelta(hours=3), "dddddddddddd"),
            (T0 + dt.timedelta(hours=4), "eeeeeeeeeeee"),
            (T0 + dt.timedelta(hours=5), "ffffffffffff"),
            (T0 + dt.timedelta(hours=6), "999999999999"),
        ]
    )
    make(workspace, "second prompt\nwith two lines")
    make(workspace, "first prompt")
    third = make(workspace, "third prompt", model="m1")
    with SessionWriter.open_existing(third) as writer:
        writer.record_model_change("m2")
    make(workspace, None)  # nothing said: not offered
    damaged = make(workspace, "damaged")
    lines = damaged.read_text().splitlines()
    lines[2] = "{oops"
    damaged.write_text("\n".join(lines) + "\n")
    other = tmp_path / "other-ws"
    other.mkdir()
    make(other, "elsewhere")
    (workspace_dir(workspace) / "notes.txt").write_text("not a session")
    no_header = make(workspace, "header lost")
    no_header.write_text("{oops\n" + no_header.read_text().split("\n", 1)[1])

    sessions = list_sessions(workspace)
    # A damaged line in the middle does not hide a session; a lost header does.
    assert [s.id for s in sessions] == [
        "eeeeeeeeeeee",
        "cccccccccccc",
        "bbbbbbbbbbbb",
        "aaaaaaaaaaaa",
    ]
    assert sessions[0].skipped_lines == (3,)
    assert sessions[0].first_prompt == "damaged"
    assert sessions[0].message_count == 2
    sessions = sessions[1:]
    newest = sessions[0]
    assert newest.first_prompt == "third prompt"
    assert newest.message_count == 3
    assert newest.model == "m2"  # the model it ended on, which a resume continues with
    assert newest.started == T0 + dt.timedelta(hours=2)
    assert newest.path == third
    assert sessions[1].first_prompt == "second prompt\nwith two lines"
    assert newest_session(workspace).id == "eeeeeeeeeeee"  # type: ignore[union-attr]
    all_of_them = list_sessions(workspace, include_empty=True)
    assert [s.id for s in all_of_them[:2]] == ["eeeeeeeeeeee", "dddddddddddd"]
    assert [s.id for s in list_sessions(other)] == ["ffffffffffff"]


def test_no_sessions_yet(workspace: Path) -> None:
    assert list_sessions(workspace) == []
    assert newest_session(workspace) is None
    with pytest.raises(SessionLookupError, match="none saved yet"):
        find_session(workspace, "abc")


def test_find_by_prefix_unique_ambiguous_and_missing(
    workspace: Path, clock: list[tuple[dt.datetime, str]]
) -> None:
    clock.extend(
        [
            (T0, "abc111111111"),
            (T0 + dt.timedelta(minutes=1), "abc222222222"),
            (T0 + dt.timedelta(minutes=2), "def333333333"),
        ]
    )
    make(workspace, "one")
    make(workspace, "two " * 40)
    make(workspace, "three")

    assert find_session(workspace, "def").id == "def333333333"
    assert find_session(workspace, " ABC1 ").id == "abc111111111"
    assert find_session(workspace, "abc222222222").id == "abc222222222"
    with pytest.raises(SessionLookupError) as ambiguous:
        find_session(workspace, "abc")
    text = str(ambiguous.value)
    assert "'abc' matches 2 sessions" in text
    assert "abc111111111" in text and "abc222222222" in text
    assert "def333333333" not in text
    assert "one" in text and "…" in text  # prompts shown, long ones shortened
    with pytest.raises(SessionLookupError, match=r"no session id starts with 'zzz'.*3 saved"):
        find_session(workspace, "zzz")
    with pytest.raises(SessionLookupError, match="give the start"):
        find_session(workspace, "  ")


def test_root_override_and_xdg_data_home(workspace: Path, data_home: Path, tmp_path: Path) -> None:
    assert data_root() == data_home / "ink"
    default = make(workspace, "default store")
    assert default.is_relative_to(data_home / "ink" / "sessions")
    custom_root = tmp_path / "custom"
    custom = make(workspace, "custom store", root=custom_root)
    assert custom.is_relative_to(custom_root / "sessions")
    assert [s.path for s in list_sessions(workspace)] == [default]
    assert [s.path for s in list_sessions(workspace, custom_root)] == [custom]


def test_workspace_folders_are_readable_and_never_shared(tmp_path: Path) -> None:
    one = tmp_path / "a-b" / "c"
    two = tmp_path / "a" / "b-c"  # the same readable slug as `one`
    for folder in (one, two):
        folder.mkdir(parents=True)
    slug_one, slug_two = workspace_slug(one), workspace_slug(two)
    assert slug_one != slug_two
    assert slug_one.rsplit("-", 1)[0] == slug_two.rsplit("-", 1)[0]
    assert re.fullmatch(r"[A-Za-z0-9._-]+-[0-9a-f]{10}", slug_one)
    assert slug_one.rsplit("-", 1)[0].endswith("a-b-c")
    # The same workspace reached another way is the same folder.
    link = tmp_path / "link"
    os.symlink(one, link)
    assert workspace_slug(link) == slug_one
    assert workspace_slug(str(one) + "/") == slug_one
    deep = tmp_path.joinpath(*["very-long-directory-name"] * 12)
    assert len(workspace_slug(deep)) <= 60 + 11
    assert workspace_slug(deep).startswith("very-long")


def test_file_names_sort_by_start_time_and_carry_the_id() -> None:
    times = [
        T0 + dt.timedelta(milliseconds=5),
        T0,
        T0 + dt.timedelta(days=40),
        dt.datetime(2024, 5, 1, 12, 0, 0, 1000, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    ]
    names = [session_file_name(t, f"{i:012x}") for i, t in enumerate(times)]
    assert names[1] == "2024-05-01T10-00-00-000Z_000000000001.jsonl"
    # 12:00:00.001 at +02:00 is 10:00:00.001 UTC: between the first two.
    assert sorted(names) == [names[1], names[3], names[0], names[2]]
    assert [session_id_from_name(n) for n in names] == [f"{i:012x}" for i in range(4)]
    assert session_id_from_name("notes.txt") is None
    assert session_id_from_name(names[0].replace(".jsonl", ".pending.json")) is None
