"""SVG snapshots of every screen state, so a change in what users see shows in review.

Update after an intended change with `pytest tests/test_snapshots.py --snapshot-update`
and look at the pictures (`python -m tests.make_screenshots` refreshes `assets/`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import pytest_textual_snapshot

from ink_tui.ui import clock
from tests.screen_states import SCENES, Scene, build, scene_server
from tests.scripted_server import ScriptedServer
from tests.snapshot_svg import spans_merged

# Every scene's server listens on one fixed port (its address shows in the pictures), so
# under `pytest -n` the scenes run one after another in one worker.
pytestmark = pytest.mark.xdist_group("fixed-port-pictures")

# Pictures compared by cells, not by how rows were cut into spans (tests/snapshot_svg.py).
# Where the plugin no longer has the function, its own exact comparison stands.
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
