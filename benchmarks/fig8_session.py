"""The session figure 8 resumes, written through the real session writer.

Run as `python -m benchmarks.fig8_session WORKSPACE MESSAGES OUT` in the measured home
(its XDG variables point the store there): it creates a session for WORKSPACE with
`SessionWriter.create`, records MESSAGES messages the way a live session records them,
closes it and writes {"path", "id", "messages", "bytes"} to OUT as JSON.

The conversation comes in turns of four messages: the user's prompt, an answer in
markdown (prose, a list, sometimes a fenced block) that ends in a `bash` call, the call's
result (10 to 60 lines of test or build output, with the details the bash tool records)
and a short closing answer. The last message holds `LAST_WORD`, which appears nowhere
else: once the terminal shows it, the end of the session is on screen.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from benchmarks.session_home import bash_details

LAST_WORD = "QZXJLASTWORD"
MESSAGES_PER_TURN = 4

_TOPICS = ("cache", "parser", "scheduler", "config loader", "session store", "retry policy")
_PROSE = str.split(
    "the failing test expects the oldest key to go first but the size check runs after "
    "the insert so one entry too many survives and the next lookup returns a stale value "
    "while the retry path reads the same field twice before the lock is taken"
)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_PROSE) for _ in range(rng.randint(10, 22))]
    if rng.random() < 0.4:
        index = rng.randrange(len(words))
        words[index] = f"`{words[index]}()`"
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _prompt(i: int, rng: random.Random) -> str:
    topic = rng.choice(_TOPICS)
    return f"Turn {i}: the {topic} in module_{i}.py misbehaves; fix it and run its tests."


def _answer(i: int, rng: random.Random) -> str:
    parts = [" ".join(_sentence(rng) for _ in range(rng.randint(2, 4)))]
    parts.append("\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 4))))
    if rng.random() < 0.5:
        parts.append(
            "```python\n"
            f"def put_{i}(self, key: str, value: str) -> None:\n"
            "    if len(self.items) >= self.size:\n"
            "        self.items.pop(next(iter(self.items)))\n"
            "    self.items[key] = value\n"
            "```"
        )
    parts.append("I'll run the tests now.")
    return "\n\n".join(parts)


def _output(i: int, rng: random.Random) -> tuple[str, int]:
    count = rng.randint(10, 60)
    lines = [
        f"tests/test_module_{i}.py::test_case_{k:03d} PASSED{' ' * 12}[{k * 100 // count:3d}%]"
        for k in range(1, count)
    ]
    lines.append(f"{count - 1} passed in 0.{rng.randint(10, 99)}s")
    return "\n".join(lines) + "\n\nexit code 0", count


def write_session(workspace: Path, messages: int) -> dict[str, object]:
    from ink_tui.core.messages import (
        AssistantMessage,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from ink_tui.session.session_writer import SessionWriter

    rng = random.Random(8)
    model = "bench-model"
    writer = SessionWriter.create(workspace, model)
    written = 0
    turn = 0
    while written < messages:
        turn += 1
        last_turn = written + MESSAGES_PER_TURN >= messages
        writer.record_user(UserMessage(_prompt(turn, rng)))
        call = ToolCall(
            id=f"call_{turn}",
            name="bash",
            arguments={"command": f"pytest -q tests/test_module_{turn}.py"},
            raw_arguments=json.dumps({"command": f"pytest -q tests/test_module_{turn}.py"}),
        )
        usage = Usage(input_tokens=1200 + turn, output_tokens=180)
        writer.record_assistant(
            AssistantMessage(
                text=_answer(turn, rng),
                tool_calls=[call],
                finish_reason="tool_calls",
                usage=usage,
                model=model,
            )
        )
        output, lines = _output(turn, rng)
        details = bash_details(output, lines, pgid=4000 + turn)
        writer.record_tool_result(
            ToolResultMessage(call_id=call.id, tool_name="bash", content=output),
            details,
            duration_s=0.5 + rng.random(),
        )
        closing = f"All tests in `module_{turn}.py` pass now; the fix is one line."
        if last_turn:
            closing += f" {LAST_WORD}"
        writer.record_assistant(AssistantMessage(text=closing, usage=usage, model=model))
        written += MESSAGES_PER_TURN
        if turn % 250 == 0:
            writer.sync()
    path = writer.path
    writer.close()
    return {"path": str(path), "id": writer.id, "messages": written, "bytes": path.stat().st_size}


def main() -> None:
    workspace, messages, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    out.write_text(json.dumps(write_session(workspace, messages)))


if __name__ == "__main__":
    main()
