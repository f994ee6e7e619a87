"""SVG snapshots of the rewind picker, its confirm (with a file list) and the session tree,
wide and at 60x20.

Update after an intended change with
`pytest tests/test_snapshots_rewind.py --snapshot-update`, look at the pictures, and
refresh `assets/` with `python -m tests.screen_states_rewind`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import pytest_textual_snapshot  # type: ignore[import-untyped]

from ink_tui.ui import clock
from tests.screen_states import Scene, build, scene_server
from tests.screen_states_rewind import SCENES
from tests.scripted_server import ScriptedServer
from tests.snapshot_svg import spans_merged

# One fixed port for every scene (its address shows in the pictures): under `pytest -n`
# these run in the one worker that runs the other pictures.
pytestmark = pytest.mark.xdist_group("fixed-port-pictures")

if callable(getattr(pytest_textual_snapshot, "normalize_svg", None)):
    pytest_textual_snapshot.normalize_svg = spans_merged(pytest_textual_snapshot.normalize_svg)


@pytest.fixture
def frozen_clock() -> Iterator[None]:
    clock.freeze(1000.0, zero_durations=True)
    try:
        yield
    finally:
        clock.freeze(None)


@pytest.fixture
def fixed_port_server() -> Iterator[ScriptedServer]:
    server = scene_server()
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_screen(
    scene: Scene, snap_compare, frozen_clock: None, fixed_port_server: ScriptedServer
) -> None:
    app, run_before = build(scene, fixed_port_server)
    assert snap_compare(app, terminal_size=scene.size, run_before=run_before)
