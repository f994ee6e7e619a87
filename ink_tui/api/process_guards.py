"""`install_process_guards()`: the `ink` command's process-wide set-up, for embedders.

Importing `ink_tui` and opening an `AgentSession` change nothing in the host process: no
signal handler, no environment variable, no subreaper bit. A session then still

- runs every command in a process group of its own and kills it, and every process it
  started that can be found, on an abort, a timeout or `aclose()` of a busy session;
- lists what a finished command left running (`jobs_update` events: its own jobs only)
  and stops all of it on `aclose()`, wherever it went, as long as it kept the
  environment it was started with (`setsid`, `nohup`, `disown`, double forks do).

What only the guards add, since they belong to the whole process:

- the process becomes a child subreaper (Linux): orphans of commands are reparented to
  it, so even a process that cleared its environment and left the command's session
  (`env -i bash -c 'setsid cmd &'`) is found and stopped; without it such a process is
  reparented to init and outlives the session;
- `INK_OWNER` is set in `os.environ`, so that processes the host starts itself are never
  taken for those orphans;
- an `atexit` hook and SIGTERM / SIGHUP handlers (only where the action is the default,
  and only from the main thread) stop what the commands of every session still open
  left running when the program exits without closing them, then let it die of the
  signal as before. Without them, a program that exits without `aclose()` (or the
  `async with` block's end) leaves those jobs running.

The `ink` command (TUI, `-p`, `--mode rpc`, `ink serve`) installs them itself.
"""

from __future__ import annotations


def install_process_guards() -> bool:
    """Install the `ink` command's process-wide guards (once; later calls do nothing).

    Call it from the main thread before opening sessions, if the program may own this
    process's subreaper bit, `INK_OWNER` environment variable, an `atexit` hook and its
    SIGTERM / SIGHUP handlers (see this module). Returns whether the process is now a
    child subreaper (False off Linux).
    """
    from ink_tui.tools.job_exit import guard_exit

    return guard_exit()
