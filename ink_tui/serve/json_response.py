"""`ink serve`'s JSON answers as RFC 8259 has them (docs/serve.md, "Strict JSON").

Starlette's `JSONResponse` refuses a non-finite float with a `ValueError`, so one `NaN`
in a model's tool arguments turned every later `GET /api/sessions/{id}` of that session
into a 500. This one writes such floats as strings (`"NaN"`, `"Infinity"`), the same
as every SSE data line and the session file: nothing a strict parser refuses, nothing
dropped.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from ink_tui.core import strict_json


class StrictJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        text = strict_json.dumps(content, ensure_ascii=False, indent=None, separators=(",", ":"))
        return text.encode("utf-8")
