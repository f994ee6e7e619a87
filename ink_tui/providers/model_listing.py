"""Reading a server's `/models` listing: the first model, and a model's context window.

OpenAI-compatible servers list `{"data": [{"id": ...}, ...]}`; the local and routing
ones also say how long a context each model takes, each in its own words: vLLM
`max_model_len`, OpenRouter `context_length` (and `top_provider.context_length`), LM
Studio `max_context_length` / `loaded_context_length`, llama.cpp `meta.n_ctx_train`,
others `context_window`. OpenAI itself and Ollama say nothing: None.
"""

from __future__ import annotations

from typing import Any

_WINDOW_KEYS = (
    "context_window",
    "context_length",
    "max_model_len",
    "loaded_context_length",
    "max_context_length",
)
_NESTED = (("top_provider", "context_length"), ("meta", "n_ctx_train"), ("meta", "n_ctx"))


def entries(listing: object) -> list[dict[str, Any]]:
    data = listing.get("data") if isinstance(listing, dict) else None
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def first_model_id(listing: object) -> str | None:
    for entry in entries(listing):
        model_id = entry.get("id")
        if isinstance(model_id, str) and model_id:
            return model_id
    return None


def listed_context_window(listing: object, model: str) -> int | None:
    """The window the listing gives for `model`, or None when it gives none."""
    for entry in entries(listing):
        if entry.get("id") != model:
            continue
        values = [entry.get(key) for key in _WINDOW_KEYS]
        values += [
            inner.get(key) for outer, key in _NESTED if isinstance(inner := entry.get(outer), dict)
        ]
        for value in values:
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None
