from __future__ import annotations

from ink_tui.control.input_queue import InputQueue, QueueEntry


def texts(entries: list[QueueEntry]) -> list[str]:
    return [e.text for e in entries]


def test_take_steer_all_skips_follow_ups_and_shell_lines() -> None:
    queue = InputQueue()
    queue.add("F1", "follow_up")
    queue.add("S2", "steer")
    queue.add("!ls", "steer")
    queue.add("S4", "steer")
    assert texts(queue.take("steer", "all")) == ["S2", "S4"]
    assert texts(queue.entries) == ["F1", "!ls"]


def test_take_one_at_a_time_takes_first_in_queue_order() -> None:
    queue = InputQueue()
    queue.add("F1", "follow_up")
    queue.add("F2", "follow_up")
    assert texts(queue.take("follow_up", "one-at-a-time")) == ["F1"]
    assert texts(queue.entries) == ["F2"]


def test_ids_are_stable_across_edits_moves_and_removals() -> None:
    queue = InputQueue()
    a = queue.add("a", "steer")
    b = queue.add("b", "steer")
    c = queue.add("c", "follow_up")
    assert queue.edit(b.id, "b2")
    assert queue.move(c.id, -2)
    assert [e.id for e in queue.entries] == [c.id, a.id, b.id]
    assert texts(queue.entries) == ["c", "a", "b2"]
    assert queue.move_to(c.id, 99)
    assert [e.id for e in queue.entries] == [a.id, b.id, c.id]
    assert queue.remove(a.id) == a
    assert queue.remove(a.id) is None
    assert not queue.edit(a.id, "gone")


def test_toggle_mode_and_changes_are_published_whole() -> None:
    published: list[list[tuple[str, str]]] = []
    queue = InputQueue(lambda entries: published.append([(e.text, e.mode) for e in entries]))
    entry = queue.add("x", "steer")
    queue.toggle_mode(entry.id)
    queue.add("y", "steer")
    assert published == [
        [("x", "steer")],
        [("x", "follow_up")],
        [("x", "follow_up"), ("y", "steer")],
    ]
    # A move that changes nothing publishes nothing.
    assert not queue.move(entry.id, -1)
    assert len(published) == 3


def test_drain_and_take_first() -> None:
    queue = InputQueue()
    queue.add("!echo hi", "steer")
    queue.add("later", "follow_up")
    first = queue.take_first()
    assert first is not None and first.shell
    assert texts(queue.drain()) == ["later"]
    assert queue.take_first() is None
    assert len(queue) == 0
