"""The SSE parser on its own: every way a real stream splits, ends and decorates events."""

from __future__ import annotations

import pytest

from ink_tui.providers.sse import SSEEvent, SSEParser


def parse_all(*chunks: bytes | str) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for piece in chunks:
        events.extend(parser.feed(piece))
    events.extend(parser.close())
    return events


def datas(*chunks: bytes | str) -> list[str]:
    return [event.data for event in parse_all(*chunks)]


def test_simple_events() -> None:
    assert datas("data: one\n\ndata: two\n\n") == ["one", "two"]


def test_event_is_held_until_its_blank_line() -> None:
    parser = SSEParser()
    assert parser.feed("data: one\n") == []
    assert parser.feed("\n") == [SSEEvent("one")]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_line_endings(eol: str) -> None:
    text = f"data: a{eol}data: b{eol}{eol}data: c{eol}{eol}"
    assert datas(text) == ["a\nb", "c"]


def test_crlf_split_between_cr_and_lf_is_one_line_ending() -> None:
    # If "\r" were taken as a line end on its own, the "\n" would make a blank line and
    # dispatch "a" early, splitting one event into two.
    assert datas("data: a\r", "\ndata: b\r\n\r\n") == ["a\nb"]


def test_lone_cr_at_chunk_end_followed_by_text() -> None:
    assert datas("data: a\r", "\rdata: b\r\r") == ["a", "b"]


def test_comments_and_keep_alives_are_ignored() -> None:
    assert datas(": keep-alive\n\n: OPENROUTER PROCESSING\ndata: x\n\n:\n\n") == ["x"]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert datas("data: first\ndata: second\ndata:\ndata: fourth\n\n") == [
        "first\nsecond\n\nfourth"
    ]


def test_field_without_space_after_colon() -> None:
    assert datas('data:{"a":1}\n\n') == ['{"a":1}']


def test_only_one_leading_space_is_stripped() -> None:
    assert datas("data:  two spaces\n\n") == [" two spaces"]


def test_event_id_and_retry_fields() -> None:
    parser = SSEParser()
    events = parser.feed("event: error\nid: 7\nretry: 1500\ndata: boom\n\ndata: next\n\n")
    assert events == [SSEEvent("boom", "error", "7"), SSEEvent("next", "message", "7")]
    assert parser.retry_ms == 1500


def test_bad_retry_and_unknown_fields_are_ignored() -> None:
    parser = SSEParser()
    assert parser.feed("retry: soon\nfoo: bar\nnocolon\ndata: x\n\n") == [SSEEvent("x")]
    assert parser.retry_ms is None


def test_event_without_data_is_not_dispatched() -> None:
    assert parse_all("event: ping\n\ndata: x\n\n") == [SSEEvent("x")]


def test_final_event_without_trailing_blank_line() -> None:
    assert datas("data: a\n\ndata: last") == ["a", "last"]
    assert datas("data: a\n\ndata: last\n") == ["a", "last"]


def test_utf8_character_split_across_chunks() -> None:
    encoded = "data: héllo ✓ 🙂\n\n".encode()
    # Split inside every multi-byte character in turn.
    for cut in range(1, len(encoded)):
        assert datas(encoded[:cut], encoded[cut:]) == ["héllo ✓ 🙂"], cut


def test_byte_at_a_time() -> None:
    encoded = "data: α\r\ndata: β\r\n\r\ndata: γ\r\n\r\n".encode()
    assert datas(*[encoded[i : i + 1] for i in range(len(encoded))]) == ["α\nβ", "γ"]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert datas(b"data: a\xffb\n\n") == ["a\ufffdb"]


def test_leading_bom_is_dropped() -> None:
    assert datas(b"\xef\xbb\xbfdata: x\n\n") == ["x"]


def test_empty_stream() -> None:
    assert parse_all() == []
    assert parse_all("") == []


def test_a_read_full_of_events_with_other_fields_between() -> None:
    text = "".join(f"data: {n}\n\n" for n in range(100))
    text += "event: error\nid: 9\ndata:no space\n: note\ndata: two\n\ndata: after\n\n"
    events = parse_all(text)
    assert [event.data for event in events[:100]] == [str(n) for n in range(100)]
    assert events[100:] == [
        SSEEvent("no space\ntwo", "error", "9"),
        SSEEvent("after", "message", "9"),
    ]


MIXED = (
    "data: a\n\n"
    ": comment\r\n"
    "event: e1\r\n"
    "data: b1\r\n"
    "data:b2\r\n\r\n"
    "id: 3\r"
    "data: c\r\r"
    "data: d\n"
    "\n"
    "data: last"
)


def test_every_split_of_a_stream_mixing_line_endings_gives_the_same_events() -> None:
    whole = parse_all(MIXED)
    assert whole == [
        SSEEvent("a"),
        SSEEvent("b1\nb2", "e1"),
        SSEEvent("c", "message", "3"),
        SSEEvent("d", "message", "3"),
        SSEEvent("last", "message", "3"),
    ]
    for cut in range(len(MIXED) + 1):
        assert parse_all(MIXED[:cut], MIXED[cut:]) == whole, cut
    for first in range(len(MIXED)):
        for second in range(first, len(MIXED)):
            pieces = (MIXED[:first], MIXED[first:second], MIXED[second:])
            assert parse_all(*pieces) == whole, (first, second)
