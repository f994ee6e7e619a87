"""`<session>.seq.json` (session/event_seqs.py): a seq is on disk as possibly used before
it is handed out, a clean close keeps the exact last one, and a damaged file or a folder
that cannot be written never stops the session (the seqs go on, with a warning)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ink_tui.session.event_seqs import EventSeqs, seq_path


def _kept(session: Path) -> int:
    return int(json.loads(seq_path(session).read_text())["last_seq"])


def test_seqs_are_reserved_before_use_and_closing_keeps_the_last(tmp_path: Path) -> None:
    session = tmp_path / "2026-01-01T00-00-00-000Z_abc.jsonl"
    assert seq_path(session).name == "2026-01-01T00-00-00-000Z_abc.seq.json"
    seqs = EventSeqs.load(session, block=10)
    assert seqs.last == 0 and not seq_path(session).exists()
    handed = [seqs.next() for _ in range(12)]
    assert handed == list(range(1, 13))
    # Killed now, a reopen would start after 20: past everything handed out.
    assert _kept(session) == 20
    assert EventSeqs.load(session).last == 20
    seqs.close()
    assert _kept(session) == 12
    reopened = EventSeqs.load(session, block=10)
    assert reopened.next() == 13


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"last_seq": -3}', b'{"last_seq": "7"}'])
def test_a_damaged_file_starts_again_with_a_warning(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    session = tmp_path / "s.jsonl"
    seq_path(session).write_bytes(content)
    with caplog.at_level(logging.WARNING):
        seqs = EventSeqs.load(session)
    assert seqs.last == 0
    assert "damaged" in caplog.text
    assert seqs.next() == 1 and _kept(session) >= 1


def test_a_seq_file_that_cannot_be_written_leaves_the_seqs_going_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session = tmp_path / "s.jsonl"
    # A folder where the file should be: neither read nor replaced (even by root).
    seq_path(session).mkdir()
    with caplog.at_level(logging.WARNING):
        seqs = EventSeqs.load(session, block=2)
        assert [seqs.next() for _ in range(5)] == [1, 2, 3, 4, 5]
        seqs.close()
    assert "cannot read" in caplog.text
    # Said once, not once per block.
    assert caplog.text.count("cannot keep the event seq") == 1
    assert seq_path(session).is_dir()
    assert [p.name for p in tmp_path.iterdir()] == [seq_path(session).name]
