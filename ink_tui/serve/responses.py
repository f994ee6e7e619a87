"""JSON answers and errors of `ink serve`, masked on their way out.

Every answer goes through `Redactor.deep`, errors included: an error's message may
quote what a provider sent back, which may quote the API key.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from ink_tui.core import strict_json
from ink_tui.core.choices import Choice, one_of
from ink_tui.serve.json_response import StrictJSONResponse
from ink_tui.serve.redact import Redactor


def redactor_of(request: Request) -> Redactor:
    redactor: Redactor = request.app.state.redactor
    return redactor


def answer(request: Request, data: Any, status: int = 200, **kwargs: Any) -> JSONResponse:
    # Strict: a NaN a model sent goes out as "NaN", never as a token parsers refuse.
    return StrictJSONResponse(redactor_of(request).deep(data), status_code=status, **kwargs)


def error(request: Request, status: int, code: str, message: str, **kwargs: Any) -> JSONResponse:
    return answer(request, {"error": code, "message": message}, status, **kwargs)


class BadRequest(Exception):
    """The request's body or parameters are wrong; `str()` says how (HTTP 400)."""


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        # Strict (docs/rpc.md, "Strict JSON"): NaN/Infinity and absurd nesting are a 400
        # that says so, never a RecursionError's 500.
        body = strict_json.loads(raw)
    except ValueError as err:
        raise BadRequest(f"the body is not JSON: {err}") from err
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def optional_str(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise BadRequest(f"`{name}` must be a string")
    return value


def choice(body: dict[str, Any], name: str, allowed: tuple[Choice, ...]) -> Choice | None:
    value = body.get(name)
    if value is None:
        return None
    chosen = one_of(value, allowed)
    if chosen is None:
        raise BadRequest(f"`{name}` must be " + " or ".join(repr(a) for a in allowed))
    return chosen
