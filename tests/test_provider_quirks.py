"""Real servers' quirks (issue 20, items 10, 11, 13-15), through the real `ink -p`.

The scripted server plays llama-cpp-python's server (`quirks=`): tool-call fragments sent
twice (tool_calls and the legacy function_call), `content: null` refused with HTTP 500,
raw newlines inside argument strings. The scripted Anthropic server sends a delta for a
block that never started. Arguments ink reads leniently, and those it refuses, are
checked both as the reader sees them and as the model is told.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.providers.tool_arguments import parse_arguments, wire_arguments
from tests.scripted_anthropic_server import ScriptedAnthropicServer, unstarted_reply
from tests.scripted_anthropic_server import text_reply as anthropic_text
from tests.scripted_server import (
    LLAMA_CPP_PYTHON,
    Reply,
    ScriptedServer,
    chunk,
    text_reply,
    tool_reply,
    usage_chunk,
)
from tests.test_print_mode import clean_env, ink


def quirky(*quirks: str) -> Iterator[ScriptedServer]:
    server = ScriptedServer(quirks=quirks)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def llama_cpp_python() -> Iterator[ScriptedServer]:
    yield from quirky(*LLAMA_CPP_PYTHON)


def run(server: ScriptedServer, workspace: Path, prompt: str, *args: str):
    env = clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m")
    return ink("-p", prompt, *args, cwd=workspace, env=env)


def tool_message(request: dict[str, Any]) -> dict[str, Any]:
    """The latest tool result the request carries."""
    return [m for m in request["messages"] if m["role"] == "tool"][-1]


def raw_call_reply(arguments: str) -> Reply:
    """One `read` call whose arguments text is sent exactly as given."""
    fragment = {
        "index": 0,
        "id": "call_raw",
        "type": "function",
        "function": {"name": "read", "arguments": arguments},
    }
    return Reply(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [fragment]}),
            chunk({}, finish="tool_calls"),
            usage_chunk(),
            "data: [DONE]\n\n",
        ]
    )


# -- item 13: each fragment twice ----------------------------------------------------------


def test_fragments_sent_in_tool_calls_and_function_call_are_read_once(
    workspace: Path,
) -> None:
    for server in quirky("function_call_copy"):
        server.push(tool_reply([("read", {"path": "README.md"})]), text_reply("Read it."))
        done = run(server, workspace, "read the readme")
        assert done.returncode == 0, done.stderr
        assert "✓ read README.md" in done.stderr
        # The quirk is real: the server did send each fragment twice.
        assert "A tiny project for tests." in tool_message(server.requests[1])["content"]
        sent = server.requests[1]["messages"][2]["tool_calls"][0]["function"]
        assert json.loads(sent["arguments"]) == {"path": "README.md"}


# -- item 14: content null -------------------------------------------------------------------


def test_a_call_without_text_goes_back_with_empty_content_not_null(workspace: Path) -> None:
    for server in quirky("null_content_500"):
        server.push(tool_reply([("read", {"path": "README.md"})]), text_reply("Read it."))
        done = run(server, workspace, "read the readme")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Read it.\n"
        assert server.refused == []
        assistant = server.requests[1]["messages"][2]
        assert assistant["role"] == "assistant" and assistant["content"] == ""


# -- item 15: raw newlines -------------------------------------------------------------------


def test_a_raw_newline_inside_an_argument_string_is_read_as_a_newline(workspace: Path) -> None:
    for server in quirky("raw_newline"):
        server.push(
            tool_reply([("write", {"path": "notes.txt", "content": "one\ntwo\n"})]),
            text_reply("Written."),
        )
        done = run(server, workspace, "write notes", "--approval", "auto")
        assert done.returncode == 0, done.stderr
        assert (workspace / "notes.txt").read_text() == "one\ntwo\n"
        # Sent back strictly: servers that parse the history's arguments refuse raw ones.
        sent = server.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
        assert json.loads(sent) == {"path": "notes.txt", "content": "one\ntwo\n"}


def test_llama_cpp_python_all_quirks_at_once(
    llama_cpp_python: ScriptedServer, workspace: Path
) -> None:
    llama_cpp_python.push(
        tool_reply([("write", {"path": "a.txt", "content": "first\nsecond\n"})]),
        tool_reply([("read", {"path": "a.txt"})]),
        text_reply("Both done."),
    )
    done = run(llama_cpp_python, workspace, "write then read", "--approval", "auto")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Both done.\n"
    assert (workspace / "a.txt").read_text() == "first\nsecond\n"
    assert llama_cpp_python.refused == []
    assert "first\nsecond" in tool_message(llama_cpp_python.requests[2])["content"]


# -- items 10 and 15: what the lenient reader takes and refuses ------------------------------


def test_nan_in_arguments_is_refused_with_a_message_the_model_reads(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(raw_call_reply('{"path": NaN}'), text_reply("Sorry."))
    done = run(server, workspace, "read")
    assert done.returncode == 0, done.stderr
    told = tool_message(server.requests[1])["content"]
    assert "NaN is not a JSON number (JSON has no NaN or Infinity)" in told
    # Nothing that is not strict JSON went out to the server either (this would raise).
    json.dumps(server.requests[1], allow_nan=False)


def test_a_fenced_object_is_read_and_trailing_text_is_refused(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        raw_call_reply('```json\n{"path": "README.md"}\n```'),
        raw_call_reply('{"path": "README.md"}{"path": "README.md"}'),
        text_reply("Done."),
    )
    done = run(server, workspace, "read twice")
    assert done.returncode == 0, done.stderr
    assert "A tiny project for tests." in tool_message(server.requests[1])["content"]
    told = tool_message(server.requests[2])["content"]
    assert "more text after the JSON object (from line 1 column 22)" in told


@pytest.mark.parametrize(
    ("raw", "arguments", "error_part"),
    [
        ('{"a": "x\ny\tz"}', {"a": "x\ny\tz"}, None),
        ('```\n{"a": 1}\n```', {"a": 1}, None),
        ('  ```json\n{"a": 1}```  ', {"a": 1}, None),
        ('{"a": 1}\n', {"a": 1}, None),
        ('{"a": Infinity}', {}, "Infinity is not a JSON number"),
        ('{"a": -Infinity}', {}, "-Infinity is not a JSON number"),
        ('{"a": 1} and more', {}, "more text after the JSON object"),
        ("```\n[1]\n```", {}, "expected an object, got list"),
        ("[" * 100_000, {}, "invalid JSON in arguments"),
        ('{"a":' * 300 + "1" + "}" * 300, {}, "nested deeper than 200 levels"),
    ],
)
def test_the_lenient_reader(raw: str, arguments: dict[str, Any], error_part: str | None) -> None:
    value, error = parse_arguments(raw)
    assert value == arguments
    if error_part is None:
        assert error is None
        # What goes back to the server is strict JSON of the same object.
        assert json.loads(wire_arguments(raw, value, error)) == arguments
    else:
        assert error is not None and error.startswith("invalid JSON in arguments")
        assert error_part in error


# -- item 11: a delta for a block that never started -----------------------------------------


@pytest.fixture
def anthropic() -> Iterator[ScriptedAnthropicServer]:
    server = ScriptedAnthropicServer()
    try:
        yield server
    finally:
        server.close()


def ink_anthropic(anthropic: ScriptedAnthropicServer, workspace: Path, tmp_path: Path):
    config_home = tmp_path / "config"
    (config_home / "ink").mkdir(parents=True, exist_ok=True)
    (config_home / "ink" / "config.toml").write_text(
        f"""
default_model = "anthropic/claude-test"

[providers.anthropic]
kind = "anthropic"
base_url = "{anthropic.base_url}"
api_key_env = "ANTHROPIC_API_KEY"
models = ["claude-test"]
"""
    )
    env = clean_env(
        XDG_CONFIG_HOME=str(config_home),
        XDG_DATA_HOME=str(tmp_path / "data"),
        ANTHROPIC_API_KEY="sk-ant-quirks",
    )
    env.pop("ANTHROPIC_BASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "ink_tui", "-p", "hello"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_text_for_a_block_that_never_started_is_kept(
    anthropic: ScriptedAnthropicServer, workspace: Path, tmp_path: Path
) -> None:
    anthropic.push(unstarted_reply(0, {"type": "text_delta", "text": "Hello from block 0."}))
    done = ink_anthropic(anthropic, workspace, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from block 0.\n"


def test_tool_input_for_a_block_that_never_started_is_a_malformed_stream(
    anthropic: ScriptedAnthropicServer, workspace: Path, tmp_path: Path
) -> None:
    anthropic.push(
        unstarted_reply(0, {"type": "input_json_delta", "partial_json": "{}"}, "tool_use"),
        anthropic_text("never asked for"),
    )
    done = ink_anthropic(anthropic, workspace, tmp_path)
    assert done.returncode == 1
    assert "malformed stream" in done.stderr
    assert "no content_block_start opened" in done.stderr
    assert len(anthropic.requests) == 1  # as for any malformed reply: not sent again
