from __future__ import annotations

import pytest

from ink_tui.ui.input_history import DEFAULT_LIMIT, InputHistory


def test_add_skips_blanks_and_consecutive_duplicates() -> None:
    history = InputHistory()
    for text in ["one", "", "   \n ", "one", "two", "one", "one"]:
        history.add(text)
    assert history.entries == ["one", "two", "one"]


def test_constructor_takes_existing_entries_under_the_same_rules() -> None:
    history = InputHistory(["a", "a", " ", "b"], limit=5)
    assert history.entries == ["a", "b"]
    # A copy: changing it does not change the history.
    history.entries.append("c")
    assert len(history) == 2


def test_capped_at_the_limit_dropping_the_oldest() -> None:
    history = InputHistory(str(n) for n in range(DEFAULT_LIMIT + 5))
    assert DEFAULT_LIMIT == 1_000
    assert len(history) == DEFAULT_LIMIT
    assert history.entries[0] == "5"
    assert history.entries[-1] == str(DEFAULT_LIMIT + 4)


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        InputHistory(limit=0)


def test_walks_back_and_returns_the_draft_past_the_newest() -> None:
    history = InputHistory(["first", "second"])
    assert history.previous("my draft") == "second"
    assert history.browsing
    # The draft argument only counts when a walk starts.
    assert history.previous("second") == "first"
    assert history.previous("first") is None  # nothing older
    assert history.next() == "second"
    assert history.next() == "my draft"
    assert not history.browsing
    assert history.next() is None  # not walking: Down moves the cursor instead


def test_empty_history_gives_nothing_and_does_not_start_a_walk() -> None:
    history = InputHistory()
    assert history.previous("draft") is None
    assert not history.browsing
    assert history.next() is None


def test_add_and_reset_end_the_walk() -> None:
    history = InputHistory(["a", "b"])
    assert history.previous("draft") == "b"
    history.add("c")
    assert not history.browsing
    assert history.previous("new draft") == "c"
    history.reset()
    assert history.next() is None
    # Drafts from both abandoned walks were kept as entries.
    assert history.entries == ["a", "b", "draft", "c", "new draft"]
    assert history.previous("again") == "new draft"
    assert history.next() == "again"


def test_a_draft_is_never_lost_when_a_walk_ends_without_it() -> None:
    history = InputHistory(["one", "two"])
    assert history.previous("my unsent draft") == "two"
    history.add("two")  # the user submitted the recalled entry
    assert history.previous("") == "two"
    assert history.previous("") == "my unsent draft"
    history.reset()
    # Walking back down to the draft returns it and does not add it again.
    assert history.previous("another draft") == "two"
    assert history.next() == "another draft"
    assert history.entries == ["one", "two", "my unsent draft", "two"]
