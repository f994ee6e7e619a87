"""`ink serve` reads request bodies as strict JSON: a body nested 100,000 deep or one
holding NaN is a 400 that says why (never a 500), and the server goes on serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scripted_server import ScriptedServer, text_reply
from tests.serve_helpers import serve

BAD_BODIES = [
    ("[" * 100_000, "nested deeper than"),
    ('{"resume": ' + "[" * 500 + "]" * 500 + "}", "nested deeper than"),
    ('{"text": "hi", "x": NaN}', "NaN is not JSON"),
    ('{"text": "hi", "x": -Infinity}', "-Infinity is not JSON"),
]


@pytest.mark.parametrize(
    ("body", "says"), BAD_BODIES, ids=["deep", "deep-field", "nan", "infinity"]
)
async def test_a_hostile_body_is_a_400_that_says_why(
    server: ScriptedServer, workspace: Path, body: str, says: str
) -> None:
    async with serve(server, workspace) as srv:
        session_id = await srv.new_session()
        headers = {"Content-Type": "application/json"}
        for path in ("/api/sessions", f"/api/sessions/{session_id}/messages"):
            response = await srv.client.post(path, content=body, headers=headers)
            assert response.status_code == 400, (path, response.text[:300])
            answer = response.json()
            assert answer["error"] == "bad_request"
            assert answer["message"].startswith("the body is not JSON: ")
            assert says in answer["message"]
        # Still serving: the same session takes a prompt.
        server.push(text_reply("still here"))
        sent = await srv.client.post(f"/api/sessions/{session_id}/messages", json={"text": "hi"})
        assert sent.status_code in (200, 202), sent.text
        assert (await srv.wait_idle(session_id))["message_count"] == 2
