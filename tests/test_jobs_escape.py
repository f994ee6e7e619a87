"""Processes that escape a command's process group are still found, listed and stopped.

Real bash commands, real processes, found in /proc by a marker argument (see
process_markers.py). Each escape form is tried alone, so a failure names the form. The
test process is set up as the `ink` command sets itself up (a subreaper whose own
children carry its mark); a session without that is tested in test_process_state.py.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
from pathlib import Path

import pytest

from ink_tui.control import jobs as control_jobs
from ink_tui.tools import jobs
from ink_tui.tools.bash import BashTool
from ink_tui.tools.job_exit import guard_exit
from ink_tui.tools.orphans import adopt_orphans
from tests.process_markers import (
    ESCAPE_FORMS,
    alive,
    kill_marked,
    new_marker,
    wait_alive,
    wait_ended,
)
from tests.tool_fixtures import make_ctx, make_ctx_with_abort

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")

FORMS = list(ESCAPE_FORMS)


@pytest.fixture(autouse=True)
def subreaper() -> None:
    # What the `ink` command's guard does (tools/job_exit.py), less its signal handlers.
    assert adopt_orphans()
    jobs.mark_own_processes(subreaper=True)


def listed(marker: str, table: jobs.JobTable) -> list[jobs.Job]:
    return [job for job in table.scan_jobs() if marker in job.argv.split()]


@pytest.mark.parametrize("form", FORMS)
async def test_an_interrupt_kills_what_escaped_the_group(form: str, tmp_path: Path) -> None:
    prefix = new_marker()
    escaped, foreground = f"{prefix}1", f"{prefix}9"
    command = ESCAPE_FORMS[form].format(m=escaped) + f"\nsleep {foreground}\n"
    ctx, abort = make_ctx_with_abort(tmp_path)
    tool = BashTool()
    task = asyncio.create_task(tool.execute({"command": command}, ctx))
    try:
        await asyncio.to_thread(wait_alive, [escaped, foreground])
        abort.abort()
        result = await asyncio.wait_for(task, 10)
        assert result.details["interrupted"] is True
        # Gone by the time the result is back: nothing to wait for.
        assert alive(escaped, foreground) == []
        assert listed(escaped, tool.jobs) == []
    finally:
        task.cancel()
        kill_marked(prefix)


@pytest.mark.parametrize("form", FORMS)
async def test_a_completed_commands_leftovers_are_jobs_until_ink_exits(
    form: str, tmp_path: Path
) -> None:
    prefix = new_marker()
    escaped = f"{prefix}1"
    command = ESCAPE_FORMS[form].format(m=escaped) + "\necho started\n"
    tool = BashTool()
    try:
        result = await tool.execute({"command": command}, make_ctx(tmp_path))
        assert not result.is_error, result.content
        # Not killed when the command completes: a server asked for keeps serving.
        await asyncio.to_thread(wait_alive, [escaped])
        [job] = listed(escaped, tool.jobs)
        assert job.command == command
        assert job.pid in alive(escaped)
        assert job.started is not None
        # What every exit path runs (the controller's exit hook, a session's close).
        await asyncio.to_thread(tool.jobs.stop_everything)
        assert alive(escaped) == []
        assert listed(escaped, tool.jobs) == []
    finally:
        kill_marked(prefix)


async def test_every_form_at_once_is_listed_and_stopped_one_by_one(tmp_path: Path) -> None:
    prefix = new_marker()
    lines = [form.format(m=f"{prefix}{n}") for n, form in enumerate(ESCAPE_FORMS.values(), 1)]
    markers = [f"{prefix}{n}" for n in range(1, len(lines) + 1)]
    tool = BashTool()
    try:
        result = await tool.execute(
            {"command": "\n".join(lines) + "\necho started\n"}, make_ctx(tmp_path)
        )
        assert not result.is_error, result.content
        await asyncio.to_thread(wait_alive, markers)
        mine = [job for job in tool.jobs.scan_jobs() if set(job.argv.split()) & set(markers)]
        assert len(mine) == len(markers)
        # Stop one by number, one by pid; the others keep running.
        first, second, *rest = mine
        said = await control_jobs.stop_jobs(tool.jobs, f"#{first.number} {second.pid}")
        assert said.startswith("Stopped 2 jobs")
        assert alive(first.argv.split()[-1], second.argv.split()[-1]) == []
        assert len(alive(*markers)) == len(rest)
        await control_jobs.stop_jobs(tool.jobs, " ".join(str(job.number) for job in rest))
        assert alive(*markers) == []
    finally:
        kill_marked(prefix)


async def test_a_job_that_ends_on_its_own_leaves_the_list(tmp_path: Path) -> None:
    # A marker that is also a short life: about a second.
    marker = new_marker().replace("300.", "1.", 1)
    command = f"sleep {marker} >/dev/null 2>&1 &"
    tool = BashTool()
    try:
        result = await tool.execute({"command": command}, make_ctx(tmp_path))
        assert not result.is_error
        found = listed(marker, tool.jobs)
        assert len(found) == 1
        # Until that process has ended, not until no process has the marker as its
        # argument: on a busy machine it may still be the shell's fork, not yet `sleep`,
        # so no process has the marker as an argument, and the job is still listed.
        [job] = found
        assert await asyncio.to_thread(wait_ended, job.pid, job.start), "the sleep never ended"
        assert listed(marker, tool.jobs) == []
    finally:
        kill_marked(marker)


@pytest.mark.parametrize("form", ["setsid", "double_fork", "env_cleared_setsid"])
async def test_a_job_belongs_to_the_session_whose_command_left_it(
    form: str, tmp_path: Path
) -> None:
    prefix = new_marker()
    escaped = f"{prefix}1"
    mine, other = BashTool(), BashTool()
    command = ESCAPE_FORMS[form].format(m=escaped) + "\necho started\n"
    try:
        # The other session's command is the later one: an orphan that cleared its
        # environment still goes to the command that started before it, not the latest.
        result = await mine.execute({"command": command}, make_ctx(tmp_path))
        assert not result.is_error, result.content
        await asyncio.to_thread(wait_alive, [escaped])
        later = await other.execute({"command": "true"}, make_ctx(tmp_path))
        assert not later.is_error, later.content
        assert len(listed(escaped, mine.jobs)) == 1
        assert listed(escaped, other.jobs) == []
        # Closing the other session leaves it running; closing its own stops it.
        await asyncio.to_thread(other.jobs.stop_everything)
        assert alive(escaped) != []
        await asyncio.to_thread(mine.jobs.stop_everything)
        assert alive(escaped) == []
    finally:
        kill_marked(prefix)


def test_two_sessions_tag_their_commands_apart() -> None:
    a, b = jobs.JobTable(), jobs.JobTable()
    first, second, third = a.new_tag(), a.new_tag(), b.new_tag()
    assert len({first, second, third}) == 3
    assert first.startswith(f"{a.id}.") and third.startswith(f"{b.id}.")
    assert a.id != b.id


def test_picking_jobs_by_number_or_pid() -> None:
    a = jobs.Job(7, 4242, 1, "sleep 1", "c", None, None)
    b = jobs.Job(8, 7, 1, "sleep 2", "c", None, None)
    assert control_jobs.pick([a, b], "") == [a, b]
    assert control_jobs.pick([a, b], "#7") == [a]
    assert control_jobs.pick([a, b], "4242") == [a]
    # A bare number is a job number first; % and # only ever name job numbers.
    assert control_jobs.pick([a, b], "7") == [a]
    assert control_jobs.pick([a, b], "%8, 7") == [b, a]
    assert control_jobs.pick([a, b], "#4242") == "There is no job #4242; /jobs lists them."
    assert control_jobs.pick([a, b], "all") == "'all' is not a job number or a pid."


def test_guard_exit_makes_this_process_a_subreaper() -> None:
    assert guard_exit() is True
    libc = ctypes.CDLL(None, use_errno=True)
    value = ctypes.c_int(0)
    assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    assert value.value == 1


def test_a_table_that_ran_no_command_finds_no_jobs_without_reading_proc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ink_tui.tools import proc_table

    scans = 0
    real_scan = proc_table.scan

    def counted() -> proc_table.Table | None:
        nonlocal scans
        scans += 1
        return real_scan()

    monkeypatch.setattr(proc_table, "scan", counted)
    tables = [jobs.JobTable() for _ in range(100)]
    assert [table.scan_jobs() for table in tables] == [[]] * 100
    assert scans == 0
