"""The big session figure 9 resumes, written through the real session writer.

Run as `python -m benchmarks.fig9_session WORKSPACE BYTES OUT` in the measured home (its
XDG variables point the store there): it creates a session for WORKSPACE with
`SessionWriter.create`, records turns the way a live session records them until the
file holds at least BYTES, closes it and writes {"path", "id", "messages", "bytes"} to
OUT as JSON.

A turn is what a coding agent's turn looks like on disk: the user's prompt, an answer
that reads a file (`read`, 20 to 60 KB of numbered source lines), one that runs the tests
(`bash`, 20 to 60 KB of test output, with the details the bash tool records), and a
short closing answer: six messages, two large tool results. Text is varied per turn (a
real session's results are not one string repeated), and one file read in five holds a
character beyond Latin-1. The last message holds `LAST_WORD`, which appears nowhere
else: once the terminal shows it, the end of the session is on screen.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from benchmarks.session_home import bash_details

LAST_WORD = "QZXJBIGSESSIONEND"
MESSAGES_PER_TURN = 6
RESULT_BYTES = (20_000, 60_000)
# Files read whose text holds a character beyond Latin-1 (an arrow in a comment).
NON_ASCII_SHARE = 0.2

_NAMES = ("cache", "parser", "scheduler", "loader", "store", "retry", "queue", "index")
_CODE = (
    "    def {name}_{k}(self, key: str, value: int = {k}) -> None:",
    '        """Keep {name} entry {k} until the size check lets it go."""',
    "        if len(self.items) >= self.size and key not in self.items:",
    "            self.items.pop(next(iter(self.items)))  # oldest first ({k})",
    "        self.items[key] = value + {k}",
    "        return self.lookup_{name}(key, default=None)",
    "",
)


def _file_contents(turn: int, rng: random.Random) -> str:
    """What `read` returns: numbered source lines, about 20-60 KB."""
    target = rng.randint(*RESULT_BYTES)
    name = rng.choice(_NAMES)
    lines: list[str] = []
    size = 0
    k = 0
    while size < target:
        for template in _CODE:
            k += 1
            line = f"{k:6d}\t{template.format(name=name, k=k + turn)}"
            lines.append(line)
            size += len(line) + 1
    if rng.random() < NON_ASCII_SHARE:
        # One character past Latin-1 makes Python hold the whole string at two bytes a
        # character, as it would a real file with an arrow in one comment.
        lines[rng.randrange(len(lines))] += "  # size → oldest first"
    return "\n".join(lines)


def _test_output(turn: int, rng: random.Random) -> tuple[str, int]:
    """What `bash` returns for a test run: about 20-60 KB of pytest lines."""
    target = rng.randint(*RESULT_BYTES)
    lines: list[str] = []
    size = 0
    k = 0
    while size < target:
        k += 1
        outcome = "PASSED" if rng.random() < 0.97 else "FAILED"
        line = (
            f"tests/test_module_{turn}.py::test_{rng.choice(_NAMES)}_case_{k:04d}"
            f"[param{rng.randint(0, 99)}] {outcome}{' ' * rng.randint(2, 14)}[{k % 100:3d}%]"
        )
        lines.append(line)
        size += len(line) + 1
    lines.append(f"{k} passed in {rng.randint(1, 59)}.{rng.randint(10, 99)}s")
    text = "\n".join(lines) + "\n\nexit code 0"
    return text, len(lines)


def write_session(workspace: Path, target_bytes: int) -> dict[str, object]:
    from ink_tui.core.messages import (
        AssistantMessage,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from ink_tui.session.session_writer import SessionWriter

    rng = random.Random(9)
    model = "bench-model"
    writer = SessionWriter.create(workspace, model)
    written = 0
    size = 0
    turn = 0

    def call(name: str, arguments: dict[str, object]) -> ToolCall:
        return ToolCall(
            id=f"call_{name}_{turn}",
            name=name,
            arguments=arguments,
            raw_arguments=json.dumps(arguments),
        )

    while True:
        turn += 1
        module = f"src/{rng.choice(_NAMES)}_{turn}.py"
        usage = Usage(input_tokens=12_000 + 25 * turn, output_tokens=240)
        prompt = f"Turn {turn}: the tests of {module} fail after the last change; find why."
        writer.record_user(UserMessage(prompt))
        read = call("read", {"path": module})
        writer.record_assistant(
            AssistantMessage(
                text=f"I'll read `{module}` first.",
                tool_calls=[read],
                finish_reason="tool_calls",
                usage=usage,
                model=model,
            )
        )
        contents = _file_contents(turn, rng)
        writer.record_tool_result(
            ToolResultMessage(call_id=read.id, tool_name="read", content=contents),
            {"path": module, "lines": contents.count("\n") + 1, "truncated": False},
            duration_s=0.01,
        )
        bash = call("bash", {"command": f"pytest -q tests/test_module_{turn}.py"})
        writer.record_assistant(
            AssistantMessage(
                text="The size check runs after the insert; running the tests to confirm.",
                tool_calls=[bash],
                finish_reason="tool_calls",
                usage=usage,
                model=model,
            )
        )
        output, lines = _test_output(turn, rng)
        details = bash_details(output, lines, pgid=4000 + turn)
        writer.record_tool_result(
            ToolResultMessage(call_id=bash.id, tool_name="bash", content=output),
            details,
            duration_s=2.0 + rng.random(),
        )
        size += len(contents) + len(output) + 1500
        closing = f"Turn {turn} is fixed: the size check now runs before the insert."
        last = size >= target_bytes
        if last:
            closing += f" {LAST_WORD}"
        writer.record_assistant(AssistantMessage(text=closing, usage=usage, model=model))
        written += MESSAGES_PER_TURN
        if last:
            break
        if turn % 100 == 0:
            writer.sync()
    path = writer.path
    writer.close()
    return {"path": str(path), "id": writer.id, "messages": written, "bytes": path.stat().st_size}


def main() -> None:
    workspace, target, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    out.write_text(json.dumps(write_session(workspace, target)))


if __name__ == "__main__":
    main()
