"""A cut bash output's full copy lives in the user cache folder and does not pile up:
this process's files go at exit, other processes' leftovers by age and total size."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ink_tui.tools import output_files
from ink_tui.tools.bash import BashTool
from ink_tui.tools.output_files import outputs_dir, prune_old_outputs, prune_outputs
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.tool_fixtures import make_ctx

DAY = 24 * 3600
MANY_LINES = "seq 1 5000"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def outputs(cache: Path) -> Path:
    return cache / "ink" / "outputs"


def named_path(text: str) -> Path:
    found = re.search(r"full output in (\S+)\]", text)
    assert found, text
    return Path(found.group(1))


def stale_file(folder: Path, name: str, age_s: float, size: int = 10) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(b"x" * size)
    when = time.time() - age_s
    os.utime(path, (when, when))
    return path


async def test_a_cut_output_is_kept_in_the_cache_folder_privately(
    cache: Path, tmp_path: Path
) -> None:
    result = await BashTool().execute({"command": MANY_LINES}, make_ctx(tmp_path))
    path = named_path(result.content)
    assert outputs_dir() == outputs(cache)
    assert path.parent == outputs(cache)
    assert path.read_text().splitlines() == [str(n) for n in range(1, 5001)]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert prune_outputs() >= 1
    assert not path.exists()


async def test_prune_outputs_removes_only_this_process_files(cache: Path, tmp_path: Path) -> None:
    other = stale_file(outputs(cache), "ink-bash-1-other.log", age_s=60)
    result = await BashTool().execute({"command": MANY_LINES}, make_ctx(tmp_path))
    ours = named_path(result.content)
    prune_outputs()
    assert not ours.exists()
    assert other.exists()


async def test_an_output_that_was_not_cut_leaves_no_file(cache: Path, tmp_path: Path) -> None:
    result = await BashTool().execute({"command": "echo hi"}, make_ctx(tmp_path))
    assert result.details["full_output_path"] is None
    assert not outputs(cache).exists() or list(outputs(cache).iterdir()) == []


def test_old_outputs_are_pruned_by_age(tmp_path: Path) -> None:
    old = stale_file(tmp_path, "ink-bash-1-a.log", age_s=8 * DAY)
    recent = stale_file(tmp_path, "ink-bash-2-b.log", age_s=1 * DAY)
    unrelated = stale_file(tmp_path, "notes.txt", age_s=30 * DAY)
    assert prune_old_outputs(tmp_path) == 1
    assert not old.exists()
    assert recent.exists() and unrelated.exists()


def test_old_outputs_are_pruned_oldest_first_over_the_size_cap(tmp_path: Path) -> None:
    oldest = stale_file(tmp_path, "ink-bash-1-a.log", age_s=300, size=1000)
    middle = stale_file(tmp_path, "ink-bash-2-b.log", age_s=200, size=1000)
    newest = stale_file(tmp_path, "ink-bash-3-c.log", age_s=100, size=1000)
    assert prune_old_outputs(tmp_path, max_total_bytes=2500) == 1
    assert not oldest.exists()
    assert middle.exists() and newest.exists()
    assert prune_old_outputs(tmp_path, max_total_bytes=1000) == 1
    assert [p.name for p in tmp_path.iterdir()] == [newest.name]


def test_print_mode_leaves_no_output_file_and_prunes_leftovers(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    folder = home / "cache" / "ink" / "outputs"
    leftover = stale_file(folder, "ink-bash-1-left.log", age_s=8 * DAY)
    fresh = stale_file(folder, "ink-bash-2-fresh.log", age_s=60)
    server.push(tool_reply([("bash", {"command": MANY_LINES})]), text_reply("Done."))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="m",
    )
    done = subprocess.run(
        [sys.executable, "-m", "ink_tui", "-p", "count", "--no-session", "--approval", "auto"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    named = named_path(tool_message["content"])
    assert named.parent == folder
    # The named file was there for the model while ink ran, and went when ink exited.
    assert not named.exists()
    assert not leftover.exists()
    assert fresh.exists()


def test_first_output_of_a_process_prunes_once(cache: Path, tmp_path: Path) -> None:
    # What `_first_use` does on the first file; later files do not scan the folder again.
    output_files._started = False
    old = stale_file(outputs(cache), "ink-bash-1-old.log", age_s=8 * DAY)
    first = output_files.new_output_file()
    first.close()
    assert not old.exists()
    again = stale_file(outputs(cache), "ink-bash-1-again.log", age_s=8 * DAY)
    second = output_files.new_output_file()
    second.close()
    assert again.exists()
    prune_outputs()
    assert not Path(first.name).exists() and not Path(second.name).exists()
