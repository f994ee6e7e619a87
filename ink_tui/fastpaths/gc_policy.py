"""The garbage collector's settings: the one place that changes them, and when.

A full collection walks every tracked object and holds the interpreter meanwhile. A
Textual app has some 65,000 of them before the user types a word and a resumed session
of 20,000 messages some 120,000 more, all living as long as the app; passes over them
cost the first frame ~40 ms and, while a model streams, are what a key press waits
behind (figures 1, 3 and 4 of benchmarks/README.md). So a process that is ink's alone:

- `startup_pause()`: `ink` collects nothing while it starts (start-up makes next to no
  garbage), from its entry point until `resume()` right after the app's first frame.
  Entered as a context manager, so whatever happens (a controller that fails to build
  included) the collector is on again when the command returns.
- `freeze_startup_heap()`: the objects alive then are frozen (left out of every later
  pass) without a full pass first; `freeze_long_lived()` does the same, after a pass,
  once a resumed session's transcript is in; `freeze_server_heap()` before `ink serve`
  listens, which also makes the server's full passes rarer (`SERVER_FULL_EVERY`).

Only the `ink` command owns the process (`own_process()`): imported as a library, or
run inside a test, ink leaves the collector alone. Nothing private is touched, but the
collector is the whole process's, so this is a fast path like the others (`check()`
only asks that this Python's gc can freeze): switched off (`INK_NO_FAST_PATHS=1`), the
collector stays as Python has it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from ink_tui import fastpaths

_owned = False
_paused = False


def check() -> str | None:
    if not all(hasattr(gc, name) for name in ("freeze", "get_freeze_count", "isenabled")):
        return "this Python's gc has no freeze()"
    return None


def own_process() -> None:
    """The `ink` command's: this process runs ink alone, its collector is ink's to set."""
    global _owned
    _owned = True


def _in_charge() -> bool:
    return _owned and fastpaths.enabled("gc_policy")


@contextmanager
def startup_pause() -> Iterator[None]:
    """No collection until `resume()` (or the block's end, whichever comes first)."""
    global _paused
    if _in_charge() and gc.isenabled():
        gc.disable()
        _paused = True
    try:
        yield
    finally:
        resume()


def resume() -> None:
    """Collect again, if `startup_pause` stopped it; idempotent."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


def freeze_startup_heap() -> None:
    """Leave what is alive now out of later passes (no pass first: it would hold the
    interpreter ~70 ms just when the user starts typing, to free next to nothing)."""
    if _in_charge():
        gc.freeze()


def freeze_long_lived() -> None:
    """A resumed session is in: keep its blocks out of later full collections too.

    Frozen, the next full pass over a 20,000-message transcript takes a few ms instead of
    130-200. Objects frozen are still freed when no longer referenced; only cyclic
    garbage among them stays until the process ends.
    """
    if _in_charge():
        gc.collect()
        gc.freeze()


# `ink serve`: a full collection after this many collections of the middle generation
# (Python's default is 10). With 100 sessions streaming (figure 11) the default made a
# full pass every ~6 s, each walking what the sessions hold for 90-165 ms, every stream
# stopped meanwhile, and freeing nothing: those stalls were the p99 of model byte to SSE
# event. A full pass still comes (the young generations free most cycles as before);
# what waits for it is garbage in cycles that outlived two young passes.
SERVER_FULL_EVERY = 100


def freeze_server_heap() -> None:
    """`ink serve`, its run's modules imported: start-up garbage freed, the rest frozen,
    and full collections made rarer (`SERVER_FULL_EVERY`)."""
    if _in_charge():
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, SERVER_FULL_EVERY)
