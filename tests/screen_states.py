"""Every screen state worth a picture, reached by driving the real app.

Used twice: by the SVG snapshot tests (`test_snapshots.py`) and by
`python -m tests.make_screenshots`, which writes the pictures in `assets/` that
`screens.md` and the README show. Each scene runs against the loopback scripted server
with the UI clock frozen, so the same scene always draws the same picture.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.core.stream_timeouts import StreamTimeouts
from ink_tui.core.tool_api import ToolContext, ToolResult
from ink_tui.session.entries import (
    AssistantEntry,
    SessionHeader,
    UserEntry,
    encode_entry,
    encode_header,
)
from ink_tui.session.store_paths import session_file_name, workspace_dir
from ink_tui.tools import default_tools
from ink_tui.tools.read import ReadTool
from ink_tui.ui.app import InkApp
from ink_tui.ui.blocks.compaction_block import CompactionBlock
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.startup import SessionPlan
from ink_tui.ui.widgets.queue_row import EntryEditor, EntryText, QueueRow
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import wait_gate
from tests.screen_states_tasks import TASK_SCENES, task_tools
from tests.scripted_server import (
    Gate,
    Reply,
    ScriptedServer,
    chunk,
    error_reply,
    text_reply,
    tool_reply,
    usage_chunk,
)
from tests.ui_helpers import make_app, type_text, wait_until

WORKSPACE = Path("/tmp/acme-shop")

ANSWER = """## What this project does

**acme-shop** is a small order service:

- `src/shop/cart.py` holds the cart and its `total()`
- `tests/` covers the cart with pytest

The total is computed like this:

```python
def total(items: list[Item]) -> Decimal:
    return sum((i.price * i.qty for i in items), Decimal(0))
```

Run the tests with `pytest -q`.
"""


def make_workspace() -> Path:
    shutil.rmtree(WORKSPACE, ignore_errors=True)
    (WORKSPACE / "src" / "shop").mkdir(parents=True)
    (WORKSPACE / "tests").mkdir()
    (WORKSPACE / "README.md").write_text("# acme-shop\n\nA small order service.\n")
    (WORKSPACE / "pyproject.toml").write_text('[project]\nname = "acme-shop"\n')
    cart = "\n".join(
        [
            "from decimal import Decimal",
            "",
            "",
            "def total(items):",
            "    return sum((i.price * i.qty for i in items), Decimal(0))",
            "",
            "",
            "def add(cart, item):",
            "    cart.append(item)",
            "    return cart",
            "",
        ]
    )
    (WORKSPACE / "src" / "shop" / "cart.py").write_text(cart)
    (WORKSPACE / "src" / "shop" / "__init__.py").write_text("")
    (WORKSPACE / "tests" / "test_cart.py").write_text("def test_total():\n    assert True\n")
    return WORKSPACE


class GatedRead(ReadTool):
    """The real read tool, held until the scene has taken its picture."""

    def __init__(self, release: asyncio.Event) -> None:
        super().__init__()
        self.release = release

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await self.release.wait()
        return await super().execute(args, ctx)


async def submit(pilot: Pilot, text: str, key: str = "enter") -> None:
    await type_text(pilot, text)
    await pilot.press(key)
    await pilot.pause()


def app_of(pilot: Pilot) -> InkApp:
    assert isinstance(pilot.app, InkApp)
    return pilot.app


async def submit_run(pilot: Pilot, text: str) -> None:
    """Submit `text` and wait for the run it starts to end: however slowly the app takes
    the input in, the run has begun before the wait for idle (which, checked too soon,
    would find the app idle still)."""
    app = app_of(pilot)
    await wait_until(pilot, lambda: app.controller is not None, what="the controller")
    controller = app.controller
    assert controller is not None
    before = controller.runs_started
    await submit(pilot, text)
    await wait_until(pilot, lambda: controller.runs_started > before, what=f"a run of {text!r}")
    await settle(pilot)


async def settle(pilot: Pilot) -> None:
    app = app_of(pilot)
    assert app.controller is not None
    await app.controller.wait_idle()
    await pilot.pause(0.1)


async def queue_three(pilot: Pilot) -> None:
    await submit(pilot, "keep the public API of cart.py unchanged")
    await submit(pilot, "then add a changelog entry", "alt+enter")
    await submit(pilot, "!pytest -q")
    app = app_of(pilot)
    assert app.controller is not None
    await wait_until(pilot, lambda: len(app.controller.queue) == 3)  # type: ignore[union-attr]
    await pilot.pause(0.1)


@dataclass
class Scene:
    name: str
    title: str
    size: tuple[int, int]
    script: Callable[[ScriptedServer], list[Any]]
    run: Callable[[Pilot, list[Any]], Awaitable[None]]
    tools: Callable[[list[Any]], list[Any]] | None = None
    # Saved sessions to pick from (and a session store for this scene).
    sessions: bool = False


# -- the scenes ------------------------------------------------------------------------


def _idle_script(server: ScriptedServer) -> list[Any]:
    server.push(
        tool_reply([("read", {"path": "README.md"}), ("ls", {"path": "src/shop"})]),
        text_reply(ANSWER, pieces=6),
    )
    return []


async def _idle(pilot: Pilot, _: list[Any]) -> None:
    await submit(pilot, "what does this project do?")
    await settle(pilot)


def _streaming_script(server: ScriptedServer) -> list[Any]:
    gate = Gate()
    cut = ANSWER.index("```python") + 60
    server.push(
        tool_reply([("read", {"path": "src/shop/cart.py"})]),
        text_reply(ANSWER[:cut], pieces=1, gate=gate),
    )
    return [gate]


async def _streaming(pilot: Pilot, held: list[Any]) -> None:
    await submit(pilot, "what does this project do?")
    await wait_gate(held[0])
    await pilot.pause(0.2)


def _parallel_script(server: ScriptedServer) -> list[Any]:
    files = [
        "README.md",
        "pyproject.toml",
        "src/shop/cart.py",
        "src/shop/__init__.py",
        "tests/test_cart.py",
        "README.md",
    ]
    server.push(tool_reply([("read", {"path": f}) for f in files], text="Reading them together."))
    return [asyncio.Event()]


def _transcript(pilot: Pilot) -> Transcript:
    return pilot.app.query_one(Transcript)


async def _parallel(pilot: Pilot, held: list[Any]) -> None:
    await submit(pilot, "read everything")
    await wait_until(pilot, lambda: len(_transcript(pilot).blocks_of(ToolBlock)) == 6)
    await pilot.pause(0.2)


def _gated_tools(held: list[Any]) -> list[Any]:
    tools = [t for t in default_tools() if t.name != "read"]
    return [GatedRead(held[0]), *tools]


def _queue_script(server: ScriptedServer) -> list[Any]:
    gate = Gate()
    server.push(text_reply(ANSWER, pieces=3, gate=gate))
    return [gate]


async def _queue(pilot: Pilot, held: list[Any]) -> None:
    await submit(pilot, "explain the cart")
    await wait_gate(held[0])
    await queue_three(pilot)


async def _editing(pilot: Pilot, held: list[Any]) -> None:
    await _queue(pilot, held)
    row = list(pilot.app.query(QueueRow))[1]
    await pilot.click(row.query_one(EntryText))
    await pilot.pause()
    editor = pilot.app.focused
    assert isinstance(editor, EntryEditor)
    editor.text = "then add a changelog entry and bump the version"
    editor.move_cursor(editor.document.end)
    await pilot.pause(0.1)


async def _interrupted(pilot: Pilot, held: list[Any]) -> None:
    await _queue(pilot, held)
    await type_text(pilot, "my unsent draft")
    await pilot.press("ctrl+c")
    await settle(pilot)
    # A moment after the abort the hint row says a second press quits; the picture is
    # of the moment after, with the usual hints.
    from ink_tui.ui.widgets.hint_row import HintRow

    hints = pilot.app.query_one(HintRow)
    await wait_until(pilot, lambda: not hints.has_class("-flash"), what="the hints")


def _error_script(server: ScriptedServer) -> list[Any]:
    gate = Gate()
    server.push(
        tool_reply([("ls", {})], gate=gate),
        *[error_reply(503, "upstream model is overloaded, try again later")] * 3,
    )
    return [gate]


async def _error(pilot: Pilot, held: list[Any]) -> None:
    await submit(pilot, "tidy up the cart module")
    await wait_gate(held[0])
    await submit(pilot, "then run the tests", "alt+enter")
    held[0].open()
    await settle(pilot)


SESSION_ROOT = Path("/tmp/acme-shop-data")

PAST_SESSIONS = [
    (
        "3f9c2a71be04",
        dt.datetime(2026, 11, 28, 9, 14, tzinfo=dt.UTC),
        "fix the rounding bug in total()",
        14,
    ),
    (
        "a41d07c9e2f3",
        dt.datetime(2026, 11, 27, 16, 2, tzinfo=dt.UTC),
        "add a discount field to Item",
        22,
    ),
    (
        "c7e5518d0b6a",
        dt.datetime(2026, 11, 25, 11, 40, tzinfo=dt.UTC),
        "why does test_total fail on CI?",
        6,
    ),
]


def make_past_sessions() -> None:
    """Saved sessions with fixed dates, written in the store's own format."""
    shutil.rmtree(SESSION_ROOT, ignore_errors=True)
    folder = workspace_dir(WORKSPACE, SESSION_ROOT)
    folder.mkdir(parents=True)
    for session_id, started, prompt, count in PAST_SESSIONS:
        header = SessionHeader(session_id, started, str(WORKSPACE), "scripted-model")
        lines = [encode_header(header)]
        for index in range(count // 2):
            lines.append(encode_entry(UserEntry(UserMessage(prompt if index == 0 else "go on"))))
            lines.append(encode_entry(AssistantEntry(AssistantMessage(text="Done."))))
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (folder / session_file_name(started, session_id)).write_text(text)


async def _session_picker(pilot: Pilot, _: list[Any]) -> None:
    from ink_tui.ui.screens.session_picker import SessionPicker

    await submit(pilot, "/resume")
    # The sessions are listed on a thread, then the picker opens.
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionPicker))
    await pilot.pause(0.2)


async def _commands(pilot: Pilot, _: list[Any]) -> None:
    await type_text(pilot, "/")
    await pilot.press("m", "o")
    await pilot.pause(0.2)


async def _palette(pilot: Pilot, _: list[Any]) -> None:
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    palette = pilot.app.screen
    await pilot.press("s", "e", "s")

    def settled() -> bool:
        # The palette searches in workers and shows results in batches: wait for the
        # search to end and the list to show what it found.
        searching = any(w.node is palette and w.is_running for w in pilot.app.workers)
        return not searching and palette.query_one(CommandList).option_count > 0

    await wait_until(pilot, settled, what="the palette's results")
    await pilot.pause(0.1)


FOLD_COMMAND = (
    'for n in $(seq 1 60); do echo "tests/test_cart.py::test_total_$n PASSED"; done; '
    'echo "============ 60 passed in 0.42s ============"'
)


def _folded_diff_script(server: ScriptedServer) -> list[Any]:
    edit = {
        "old_text": "    return sum((i.price * i.qty for i in items), Decimal(0))",
        "new_text": (
            "    subtotal = sum((i.price * i.qty for i in items), Decimal(0))\n"
            '    return subtotal.quantize(Decimal("0.01"))'
        ),
    }
    server.push(
        tool_reply(
            [("edit", {"path": "src/shop/cart.py", "edits": [edit]})],
            text="I'll round the total to cents.",
        ),
        text_reply("Done: `total()` now rounds to cents."),
    )
    return []


async def _folded_diff(pilot: Pilot, _: list[Any]) -> None:
    """An edit done: its folded diff shows the changed lines, not the first four."""
    await submit(pilot, "round the total to cents")
    await settle(pilot)


async def _folded_output(pilot: Pilot, _: list[Any]) -> None:
    """A short output shown whole; a long one folded to its last lines."""
    app = app_of(pilot)
    await wait_until(pilot, lambda: app.controller is not None)
    await submit(pilot, "!cat README.md")
    await settle(pilot)
    await submit(pilot, "!" + FOLD_COMMAND)
    await settle(pilot)


async def _status(pilot: Pilot, _: list[Any]) -> None:
    from ink_tui.core.prices import Price
    from ink_tui.ui.widgets.status_bar import StatusBar

    # As `[prices]` "scripted-model" = { input = 300, output = 1500 } would.
    pilot.app.query_one(StatusBar).usage.prices = {"scripted-model": Price(300.0, 1500.0)}
    await submit(pilot, "what does this project do?")
    await settle(pilot)
    await submit(pilot, "/status")
    await wait_until(pilot, lambda: "approval:" in _transcript(pilot).plain_text(), what="/status")
    await pilot.pause(0.1)


def _too_small_script(server: ScriptedServer) -> list[Any]:
    return []


async def _too_small(pilot: Pilot, _: list[Any]) -> None:
    await pilot.pause(0.1)


COMPACT_SUMMARY = """## Goal
- Explain acme-shop, then add a 10 % discount to `total()` without changing its API.

## Decisions
- `total()` sums `price * qty` as `Decimal`; tests run with `pytest -q`.

## Files
- src/shop/cart.py: `total()`, `add()`; the discount goes here
- tests/test_cart.py: one test of the total

## Open work
- Add the discount and a test for it."""


PROJECT_TOUR = """**acme-shop** is a small order service.

- `src/shop/cart.py` holds the cart: `add()` puts an item in with its quantity, and
  `total()` sums `price * qty` for every line as a `Decimal`, so cents never drift.
- `src/shop/orders.py` turns a cart into an order, stamps it and hands it to
  `src/shop/store.py`, which writes orders as JSON lines to a file.
- `src/shop/cli.py` is the command line: `shop add`, `shop total` and `shop order`.
- `tests/test_cart.py` has one test of the total; `pytest -q` runs it.

There is no web layer and no database: everything goes through the cart and the file.
The API that callers use is `add()`, `total()` and `place_order()`; keep those as they
are if you change how a total is worked out."""


def _usage_reply(text: str, prompt_tokens: int) -> Reply:
    """An answer whose reported usage says how full the context was."""
    return Reply(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": text}),
            chunk({}, finish="stop"),
            usage_chunk(prompt_tokens, 200),
            "data: [DONE]\n\n",
        ]
    )


def _approval_script(server: ScriptedServer) -> list[Any]:
    edit = {
        "old_text": "    return sum((i.price * i.qty for i in items), Decimal(0))",
        "new_text": (
            "    subtotal = sum((i.price * i.qty for i in items), Decimal(0))\n"
            '    return subtotal.quantize(Decimal("0.01"))'
        ),
    }
    server.push(
        tool_reply(
            [("edit", {"path": "src/shop/cart.py", "edits": [edit]})],
            text="I'll round the total to cents.",
        )
    )
    return []


async def _approval(pilot: Pilot, _: list[Any]) -> None:
    from ink_tui.ui.widgets.approval_question import ApprovalQuestion

    app = app_of(pilot)
    await wait_until(pilot, lambda: app.controller is not None)
    assert app.controller is not None
    app.controller.approvals.set_policy("ask")  # the app's default; test apps use auto
    await submit(pilot, "round the total to cents")
    question = app.query_one(ApprovalQuestion)
    await wait_until(pilot, lambda: question.is_open, what="the approval question")
    # A steer typed while it waits, key by key: it stays in the input (its "a", "n" and
    # "y"s answer nothing), the question stays open.
    for key in "and keep any name":
        await pilot.press("space" if key == " " else key)
    await pilot.pause(0.2)


async def _approval_answering(pilot: Pilot, steps: list[Any]) -> None:
    """Ctrl+G: the question has the focus, its choices show their keys."""
    from ink_tui.ui.widgets.approval_question import ApprovalQuestion

    await _approval(pilot, steps)
    await pilot.press("ctrl+g", "right")
    question = app_of(pilot).query_one(ApprovalQuestion)
    await wait_until(pilot, lambda: question.has_focus, what="the focused question")
    await pilot.pause(0.2)


async def _approval_reason(pilot: Pilot, steps: list[Any]) -> None:
    """Ctrl+G, n: the deny box asks why."""
    from ink_tui.ui.widgets.approval_question import ApprovalQuestion

    await _approval(pilot, steps)
    await pilot.press("ctrl+g", "n")
    question = app_of(pilot).query_one(ApprovalQuestion)
    reason = question.query_one("#approval-reason")
    await wait_until(pilot, lambda: reason.has_focus, what="the reason box")
    for key in "use the tests first":
        await pilot.press("space" if key == " " else key)
    await pilot.pause(0.2)


def _compaction_script(server: ScriptedServer) -> list[Any]:
    server.push(
        # Longer than the summary: a summary that does not shrink what it replaces is
        # refused.
        _usage_reply(PROJECT_TOUR, 27_000),
        _usage_reply(COMPACT_SUMMARY, 2_000),
        _usage_reply("Done: `total()` now takes `discount` and the tests pass.", 6_000),
    )
    return []


async def _compaction(pilot: Pilot, _: list[Any]) -> None:
    app = app_of(pilot)
    await wait_until(pilot, lambda: app.controller is not None)
    assert app.controller is not None
    app.controller.provider.context_window = 32_000  # type: ignore[attr-defined]
    await submit(pilot, "what does this project do?")
    await settle(pilot)
    await submit(pilot, "add a 10 % discount to total()")
    await settle(pilot)
    transcript = _transcript(pilot)
    [marker] = transcript.blocks_of(CompactionBlock)
    transcript.toggle_fold(marker)
    await pilot.pause(0.1)


async def _first_screen(pilot: Pilot, _: list[Any]) -> None:
    """Nothing typed yet: the welcome (model, folder, keys, where help is)."""
    app = app_of(pilot)
    await wait_until(pilot, lambda: app.controller is not None)
    await pilot.pause(0.1)


CROWDED_COMMAND = "pytest -q tests/test_cart.py --maxfail=1 -k 'total and not slow'"


def _crowded_script(server: ScriptedServer) -> list[Any]:
    server.push(
        tool_reply(
            [("bash", {"command": CROWDED_COMMAND})],
            text="I will run the cart tests first, then look at the failing totals.",
        )
    )
    return []


async def _crowded(pilot: Pilot, _: list[Any]) -> None:
    """60x20: the activity panel, a question and two queued entries give way to the
    conversation; "now stop" is typed into the input."""
    from ink_tui.ui.widgets.approval_question import ApprovalQuestion

    app = app_of(pilot)
    await wait_until(pilot, lambda: app.controller is not None)
    assert app.controller is not None
    app.controller.approvals.set_policy("ask")
    await submit(pilot, "fix the cart totals")
    question = app.query_one(ApprovalQuestion)
    await wait_until(pilot, lambda: question.is_open, what="the approval question")
    await submit(pilot, "keep the public API")
    await submit(pilot, "then add a changelog entry", "alt+enter")
    await wait_until(pilot, lambda: len(app.controller.queue) == 2)  # type: ignore[union-attr]
    for key in "now stop":
        await pilot.press("space" if key == " " else key)
    from ink_tui.ui.widgets.transcript import Transcript

    transcript = app.query_one(Transcript)
    # The panels gave way: the transcript, taller now, still shows its end.
    await wait_until(
        pilot,
        lambda: (
            app.prompt.text == "now stop"
            and transcript.max_scroll_y > 0
            and transcript.scroll_y >= transcript.max_scroll_y
        ),
        what="the typed text, with the transcript at its end",
    )
    await pilot.pause()


WIDE_ANSWER = (
    "The cart keeps its items in a plain list and computes the total on demand, so "
    "nothing is cached and every call walks the items again; that is cheap for the "
    "carts this service sees, a few dozen items at most, and it keeps the code obvious. "
    "If totals ever show up in a profile, a running sum updated by `add()` would do.\n\n"
    "Rounding happens once, at the end, which is what the accountants asked for."
)


def _wide_script(server: ScriptedServer) -> list[Any]:
    server.push(text_reply(WIDE_ANSWER, pieces=2))
    return []


async def _wide(pilot: Pilot, _: list[Any]) -> None:
    await submit(pilot, "how does the cart compute its total?")
    await settle(pilot)


SCENES = [
    Scene(
        "first-screen",
        "The first screen: what to type, and where help is",
        (100, 32),
        _too_small_script,
        _first_screen,
    ),
    Scene("idle", "Idle, after an answer", (100, 32), _idle_script, _idle),
    Scene("streaming", "Streaming an answer", (100, 32), _streaming_script, _streaming),
    Scene(
        "parallel-tools",
        "Tools running in parallel (five at a time)",
        (100, 32),
        _parallel_script,
        _parallel,
        _gated_tools,
    ),
    Scene("queue", "Queue with entries", (100, 32), _queue_script, _queue),
    Scene("editing-entry", "Editing a queued entry", (100, 32), _queue_script, _editing),
    Scene("interrupted", "After an interrupt", (100, 32), _queue_script, _interrupted),
    Scene("error", "After an error", (100, 32), _error_script, _error),
    Scene("narrow", "Narrow terminal (80x24)", (80, 24), _queue_script, _queue),
    Scene("too-small", "A terminal too small", (40, 10), _too_small_script, _too_small),
    Scene(
        "small-crowded",
        "A small terminal (60x20): the panels give way to the conversation",
        (60, 20),
        _crowded_script,
        _crowded,
    ),
    Scene(
        "wide",
        "A very wide terminal (300 columns): prose at a readable measure",
        (300, 24),
        _wide_script,
        _wide,
    ),
    Scene("commands", "Slash command completion", (100, 32), _idle_script, _commands),
    Scene(
        "palette",
        "The command palette (Ctrl+P)",
        (100, 32),
        _idle_script,
        _palette,
    ),
    Scene(
        "status",
        "/status, and the session's tokens and cost in the status bar (a known price)",
        (100, 32),
        _idle_script,
        _status,
    ),
    Scene(
        "approval",
        "An approval question: an edit with its diff; typing still goes to the input",
        (100, 32),
        _approval_script,
        _approval,
    ),
    Scene(
        "approval-answering",
        "The approval question after Ctrl+G: y / s / a / n, arrows and Enter answer",
        (100, 32),
        _approval_script,
        _approval_answering,
    ),
    Scene(
        "approval-reason",
        "Denying: the reason box the model reads",
        (100, 32),
        _approval_script,
        _approval_reason,
    ),
    Scene(
        "compaction",
        "The conversation compacted: the marker unfolded to its summary",
        (100, 32),
        _compaction_script,
        _compaction,
    ),
    Scene(
        "session-picker",
        "Resuming a session (/resume)",
        (100, 32),
        _too_small_script,
        _session_picker,
        sessions=True,
    ),
    Scene(
        "folded-diff",
        "An edit done: its folded diff shows the changed lines",
        (100, 32),
        _folded_diff_script,
        _folded_diff,
    ),
    Scene(
        "folded-output",
        "Command output: a short one whole, a long one folded to its last lines",
        (100, 32),
        _too_small_script,
        _folded_output,
    ),
    *(
        Scene(name, title, (100, 32), script, run, task_tools)
        for name, title, script, run in TASK_SCENES
    ),
]


# Error messages name the server's address, so pictures need the same port every time.
SCENE_PORT = 47613
# A scene that holds a stream takes its picture however long the machine takes to get
# there: the activity panel's "waiting for the server" (3 s of silence, by default)
# never comes into it.
SCENE_TIMEOUTS = StreamTimeouts(notice_after_s=60.0)


def scene_server() -> ScriptedServer:
    return ScriptedServer(port=SCENE_PORT)


def build(scene: Scene, server: ScriptedServer) -> tuple[InkApp, Callable[[Pilot], Any]]:
    """The app for `scene`, and the callable that drives it to the state to picture."""
    workspace = make_workspace()
    held = scene.script(server)
    tools = scene.tools(held) if scene.tools else None
    if scene.sessions:
        make_past_sessions()
    app, _ = make_app(
        server,
        workspace,
        tools=tools,
        plan=SessionPlan("new") if scene.sessions else None,
        session_root=SESSION_ROOT if scene.sessions else None,
        timeouts=SCENE_TIMEOUTS,
    )

    async def run_before(pilot: Pilot) -> None:
        await pilot.pause(0.1)
        await scene.run(pilot, held)
        # A blinking caret is drawn or not depending on the instant of the picture:
        # hold it steady (shown), so the same screen always makes the same SVG. A
        # TextArea keeps its lines as last drawn (its cache does not count the caret of
        # a non-blinking cursor): drawn in the hidden phase, as a slow machine may have
        # caught it, it stayed hidden. Restyling clears that cache.
        # Every screen's: `app.query` does not reach a modal's (the palette's own input
        # blinked on in one picture and off in the next).
        for screen in pilot.app.screen_stack:
            for editor in screen.query("TextArea, Input"):
                editor.cursor_blink = False  # type: ignore[attr-defined]
                editor.notify_style_update()
        await pilot.pause()
        await screen_settled(pilot)

    return app, run_before


async def screen_settled(pilot: Pilot, tries: int = 100) -> None:
    """Every widget drawn anew, then until two pictures in a row are the same: a row
    kept from an earlier draw can be cut into other spans than the same row drawn now,
    and a block may still be drawing its final form on a busy machine."""
    for widget in pilot.app.screen.walk_children():
        widget.refresh()
    await pilot.pause()
    last = pilot.app.export_screenshot()
    for _ in range(tries):
        await pilot.pause(0.02)
        now = pilot.app.export_screenshot()
        if now == last:
            return
        last = now
