"""Text chunks read by their delta alone (providers/chunk_template), the same as parsed whole."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink_tui.core.provider_api import ProviderError
from ink_tui.providers.chunk_template import learn
from ink_tui.providers.openai_reply import MAX_MISFITS, ReplyBuilder
from tests.fastpath_helpers import needs_fast_path


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def test_a_template_reads_the_next_chunks_delta() -> None:
    template = learn(compact(chunk({"content": "Hel"})), chunk({"content": "Hel"}))
    assert template is not None and template.key == "content"
    assert template.text_of(compact(chunk({"content": 'lo "wor\\ld"\n'}))) == 'lo "wor\\ld"\n'
    assert template.text_of(compact(chunk({"content": "é ☃ 😀"}))) == "é ☃ 😀"
    assert template.text_of(compact(chunk({"content": ""}))) == ""


@pytest.mark.parametrize(
    "other",
    [
        chunk({"content": "x"}, finish="stop"),
        chunk({"content": "x"}, usage={"prompt_tokens": 1}),
        chunk({"content": "x", "role": "assistant"}),
        chunk({"reasoning_content": "x"}),
        {**chunk({"content": "x"}), "id": "chatcmpl-2"},
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
    ],
)
def test_a_chunk_that_differs_anywhere_else_is_not_read_by_the_template(
    other: dict[str, Any],
) -> None:
    template = learn(compact(chunk({"content": "a"})), chunk({"content": "a"}))
    assert template is not None
    assert template.text_of(compact(other)) is None


@pytest.mark.parametrize(
    "data",
    [
        # Something after the literal that a JSON string cannot hold unescaped.
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":'
        '[{"index":0,"delta":{"content":"a"b"},"finish_reason":null}]}',
        # The literal unterminated.
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":'
        '[{"index":0,"delta":{"content":"ab},"finish_reason":null}]}',
        # A bad escape.
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":'
        '[{"index":0,"delta":{"content":"a\\q"},"finish_reason":null}]}',
    ],
)
def test_bad_json_in_the_templates_shape_is_not_read(data: str) -> None:
    template = learn(compact(chunk({"content": "a"})), chunk({"content": "a"}))
    assert template is not None
    assert template.text_of(data) is None
    builder = ReplyBuilder("m")
    builder.feed(compact(chunk({"content": "a"})))
    with pytest.raises(ProviderError, match="not valid JSON"):
        builder.feed(data)


def test_no_template_from_a_key_that_is_given_twice() -> None:
    # JSON keeps the last of two equal keys: the first literal is not the delta.
    data = (
        '{"id":"x","choices":[{"index":0,"delta":{"content":"first","content":"second"},'
        '"finish_reason":null}]}'
    )
    template = learn(data, json.loads(data))
    assert template is not None
    assert template.text_of(data) == "second"


def test_no_template_when_the_key_only_appears_inside_other_text() -> None:
    data = '{"id":"\\"content\\":\\"","choices":[{"index":0,"delta":{"content":"z"}}]}'
    template = learn(data, json.loads(data))
    assert template is not None
    assert template.prefix.endswith('"delta":{"content":"')


def test_chunks_that_are_not_plain_text_deltas_teach_nothing() -> None:
    for obj in (
        chunk({"content": "x"}, finish="stop"),
        chunk({"content": "x", "role": "assistant"}),
        chunk({"content": None}),
        {"choices": [{"index": 1, "delta": {"content": "x"}}]},
        {"choices": []},
    ):
        assert learn(compact(obj), obj) is None


@needs_fast_path("chunk_template")
def test_a_builder_stops_trying_after_text_chunks_no_template_fits() -> None:
    # The key spelled with an escape: parsed whole it is "content", but no template can
    # find its literal.
    builder = ReplyBuilder("m")
    for n in range(MAX_MISFITS + 3):
        assert builder._learning == (n < MAX_MISFITS)
        builder.feed('{"choices":[{"index":0,"delta":{"con\\u0074ent":"%d "}}]}' % n)  # noqa: UP031
    assert builder._template is None
    assert builder.finish().text == "".join(f"{n} " for n in range(MAX_MISFITS + 3))


# Chunks as different servers write them: spacing, key order, extra fields, escapes.
deltas = st.lists(
    st.tuples(
        st.sampled_from(["content", "reasoning_content", "reasoning", "tool", "finish"]),
        st.text(max_size=12),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    deltas=deltas,
    separators=st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]),
    ensure_ascii=st.booleans(),
    extra=st.dictionaries(
        st.sampled_from(["system_fingerprint", "created", "obfuscation"]), st.text(max_size=6)
    ),
)
def test_a_reply_read_with_templates_is_the_reply_parsed_whole(
    deltas: list[tuple[str, str]],
    separators: tuple[str, str],
    ensure_ascii: bool,
    extra: dict[str, str],
) -> None:
    fast = ReplyBuilder("m")
    whole = ReplyBuilder("m")
    whole._learning = False  # the reference: every chunk parsed whole
    fast_shown: list[Any] = []
    whole_shown: list[Any] = []
    for kind, text in deltas:
        if kind == "tool":
            obj = chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "c1", "function": {"name": "f", "arguments": text}}
                    ]
                }
            )
        elif kind == "finish":
            obj = chunk({}, finish="stop", usage={"prompt_tokens": 3, "completion_tokens": 4})
        else:
            obj = chunk({kind: text}, **extra)
        data = json.dumps(obj, separators=separators, ensure_ascii=ensure_ascii)
        fast.feed(data)
        whole.feed(data)
        fast_shown.extend(fast.take())
        whole_shown.extend(whole.take())
    assert fast_shown == whole_shown
    assert fast.finish() == whole.finish()
    assert (fast.events, fast.chunks) == (whole.events, whole.chunks)
