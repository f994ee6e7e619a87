from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolLimits, ToolResult
from ink_tui.tools.bash import BashTool
from ink_tui.tools.orphans import adopt_orphans
from ink_tui.tools.output_capture import TailCapture
from ink_tui.tools.process_group import group_alive
from tests.process_markers import wait_ended
from tests.tool_fixtures import group_exists, make_ctx, make_ctx_with_abort


@pytest.fixture(autouse=True)
def reaper() -> None:
    # As the `ink` command is (tools/job_exit.py): a subreaper, so the orphans of a
    # killed group are this process's to reap and not even zombies are left (some
    # containers run a PID 1 that never reaps). A program that embeds ink without the
    # guard still gets no live process left (test_process_state.py).
    adopt_orphans()


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Cut outputs are kept under the user cache folder: never the real one in tests.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def wait_for_file(path: Path, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never written"
        time.sleep(0.02)


async def run(workspace: Path, command: str, limits: ToolLimits | None = None, **args: object):
    return await BashTool().execute({"command": command, **args}, make_ctx(workspace, limits))


def real(path: Path) -> str:
    return os.path.realpath(path)


def spilled(result: ToolResult) -> bytes:
    return Path(result.details["full_output_path"]).read_bytes()


def cleanup(result: ToolResult) -> None:
    path = result.details.get("full_output_path")
    if path:
        os.unlink(path)


async def test_output_and_exit_code(tmp_path: Path) -> None:
    result = await run(tmp_path, "echo hello")
    assert result.content == "hello\n\nexit code 0"
    assert not result.is_error
    assert result.details["exit_code"] == 0
    assert result.details["truncated"] is False
    assert result.details["full_output_path"] is None


async def test_nonzero_exit_is_an_error_and_stderr_is_merged(tmp_path: Path) -> None:
    result = await run(tmp_path, "echo out; echo err >&2; exit 3")
    assert result.content == "out\nerr\n\nexit code 3"
    assert result.is_error
    assert result.details["exit_code"] == 3


async def test_runs_in_the_workspace_with_empty_stdin(tmp_path: Path) -> None:
    result = await run(tmp_path, "pwd; cat; echo done")
    assert result.content == f"{real(tmp_path)}\ndone\n\nexit code 0"


async def test_no_output(tmp_path: Path) -> None:
    result = await run(tmp_path, "true")
    assert result.content == "(no output)\n\nexit code 0"


async def test_long_output_keeps_the_tail_and_saves_all_of_it(tmp_path: Path) -> None:
    result = await run(tmp_path, "seq 1 9000")
    try:
        path = result.details["full_output_path"]
        assert Path(path).name.startswith("ink-bash-")
        body, note, code = result.content.split("\n\n")
        assert body.splitlines() == [str(n) for n in range(7001, 9001)]
        assert note == f"[output cut: showing last 2000 of 9000 lines; full output in {path}]"
        assert code == "exit code 0"
        assert spilled(result) == "".join(f"{n}\n" for n in range(1, 9001)).encode()
        assert result.details["truncated"] is True
        assert result.details["lines"] == 9000
    finally:
        cleanup(result)


async def test_byte_cap_keeps_whole_lines_of_the_tail(tmp_path: Path) -> None:
    command = "for i in $(seq 1 300); do printf 'line %04d\\n' $i; done"
    result = await run(tmp_path, command, ToolLimits(max_bytes=1000))
    try:
        body, note, _ = result.content.split("\n\n")
        assert body.splitlines() == [f"line {n:04d}" for n in range(201, 301)]
        assert note.startswith("[output cut: showing last 100 of 300 lines (1000 bytes limit);")
    finally:
        cleanup(result)


async def test_one_huge_line_keeps_its_end(tmp_path: Path) -> None:
    result = await run(
        tmp_path, "head -c 3000 /dev/zero | tr '\\0' x; echo END", ToolLimits(max_bytes=1000)
    )
    try:
        body, note, _ = result.content.split("\n\n")
        assert body == "x" * 997 + "END"
        assert note.startswith("[output cut: showing last 1000 bytes of the last line;")
        assert spilled(result) == b"x" * 3000 + b"END\n"
    finally:
        cleanup(result)


async def test_output_exactly_at_the_cap_is_not_cut(tmp_path: Path) -> None:
    result = await run(tmp_path, "seq 1 2000")
    assert result.details["truncated"] is False
    assert result.details["full_output_path"] is None
    assert result.content.startswith("1\n2\n")


def test_capture_memory_stays_bounded_and_spill_holds_everything() -> None:
    capture = TailCapture(ToolLimits(max_lines=50, max_bytes=4096))
    chunk = b"".join(b"%08d\n" % n for n in range(1000))  # 9,000 bytes
    for _ in range(500):
        capture.feed(chunk)
        assert capture.buffered_bytes <= 4 * 4096 + len(chunk)
    output = capture.finish()
    try:
        assert output.total_lines == 500_000
        assert output.cut.lines == [f"{n:08d}" for n in range(950, 1000)]
        assert output.full_output_path is not None
        assert Path(output.full_output_path).read_bytes() == chunk * 500
    finally:
        if output.full_output_path:
            os.unlink(output.full_output_path)


async def test_timeout_kills_the_group_and_keeps_output(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await run(tmp_path, "echo before; sleep 10 & sleep 10", timeout=0.5)
    assert time.monotonic() - started < 2
    assert result.content == "before\n\ntimed out after 0.5 s; process group killed"
    assert result.is_error
    assert result.details["timed_out"] is True
    assert not group_exists(result.details["pgid"])


async def test_abort_terminates_the_whole_group_promptly(tmp_path: Path) -> None:
    ctx, controller = make_ctx_with_abort(tmp_path)
    # The grandchild ignores SIGTERM, so only the SIGKILL after the grace stops it.
    ready = tmp_path / "ready"
    command = (
        f"echo $$; bash -c 'trap \"\" TERM; echo child ready; touch {ready}; sleep 30' & sleep 30"
    )
    task = asyncio.create_task(BashTool().execute({"command": command}, ctx))
    await asyncio.to_thread(wait_for_file, ready)
    started = time.monotonic()
    controller.abort()
    result = await asyncio.wait_for(task, 5)
    elapsed = time.monotonic() - started
    assert elapsed < 3
    lines = result.content.splitlines()
    pgid = int(lines[0])
    assert pgid == result.details["pgid"]
    assert "child ready" in lines
    assert result.content.endswith("\n\ninterrupted; process group terminated")
    assert result.is_error
    assert result.details["interrupted"] is True
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)


async def test_abort_before_start_returns_at_once(tmp_path: Path) -> None:
    ctx, controller = make_ctx_with_abort(tmp_path)
    controller.abort()
    result = await BashTool().execute({"command": "touch ran"}, ctx)
    assert result.is_error
    assert result.details["interrupted"] is True
    assert not (tmp_path / "ran").exists()


async def test_background_job_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await run(tmp_path, "sleep 5 & echo started")
    try:
        assert time.monotonic() - started < 2
        assert result.content == "started\n\nexit code 0"
    finally:
        os.killpg(result.details["pgid"], signal.SIGKILL)


async def test_cancelled_call_kills_the_group(tmp_path: Path) -> None:
    ctx, _ = make_ctx_with_abort(tmp_path)
    command = "echo $$ > pgid; sleep 30; echo never"
    task = asyncio.create_task(BashTool().execute({"command": command}, ctx))
    pgid_file = tmp_path / "pgid"
    for _ in range(250):
        if pgid_file.exists() and pgid_file.read_text().endswith("\n"):
            break
        await asyncio.sleep(0.02)
    pgid = int(pgid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(50):
        if not group_alive(pgid):
            break
        await asyncio.sleep(0.02)
    assert not group_alive(pgid)


async def test_shell_killed_by_a_signal_reports_it(tmp_path: Path) -> None:
    result = await run(tmp_path, "echo bye; kill -KILL $$")
    assert result.content == "bye\n\nexit code 137 (killed by SIGKILL)"
    assert result.is_error
    assert result.details["exit_code"] == 137


async def test_background_job_is_reaped_after_it_ends(tmp_path: Path) -> None:
    first = await run(tmp_path, "sleep 0.3 & echo $!")
    pgid = first.details["pgid"]
    # Ended: a zombie of this process (a subreaper) until something reaps it.
    assert await asyncio.to_thread(wait_ended, int(first.content.split()[0]))
    # The next command reaps what earlier groups left behind.
    await run(tmp_path, "true")
    assert not group_exists(pgid)
