"""docs/events.md lists every public event and shows one example of each."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ink_tui.control.public_events import PUBLIC_EVENT_TYPES

DOC = (Path(__file__).resolve().parent.parent / "docs" / "events.md").read_text()


def test_every_public_event_is_in_the_table_and_has_an_example() -> None:
    examples = DOC[DOC.index("## One example of each") :]
    shown = {
        json.loads(line)["type"] for line in re.findall(r"^\{.*\}$", examples, flags=re.MULTILINE)
    }
    assert [t for t in PUBLIC_EVENT_TYPES if f"`{t}`" not in DOC] == []
    assert [t for t in PUBLIC_EVENT_TYPES if t not in shown] == []
