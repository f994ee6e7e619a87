"""Write the pictures the docs use: `python -m tests.make_screenshots`.

Each scene of `tests/screen_states.py` is driven in the real app against the loopback
server and saved as `assets/<name>.svg`, then `assets/<name>.png` when `rsvg-convert`
(Debian: librsvg2-bin) is installed.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from ink_tui.ui import clock
from tests.screen_states import SCENES, build, scene_server

ASSETS = Path(__file__).resolve().parent.parent / "assets"


async def shoot(name: str) -> Path:
    scene = next(s for s in SCENES if s.name == name)
    server = scene_server()
    clock.freeze(1000.0, zero_durations=True)
    try:
        app, run_before = build(scene, server)
        async with app.run_test(size=scene.size) as pilot:
            await run_before(pilot)
            svg = app.export_screenshot(title=f"ink: {scene.title}")
    finally:
        clock.freeze(None)
        server.close()
    path = ASSETS / f"{name}.svg"
    path.write_text(svg)
    return path


def to_png(svg: Path) -> Path | None:
    if shutil.which("rsvg-convert") is None:
        return None
    png = svg.with_suffix(".png")
    # rsvg drops spaces at the edges of text runs unless told to keep them.
    source = svg.read_text().replace("<svg ", '<svg xml:space="preserve" ', 1)
    subprocess.run(["rsvg-convert", "-z", "1.0", "-o", str(png)], input=source.encode(), check=True)
    return png


def main(names: list[str]) -> None:
    ASSETS.mkdir(exist_ok=True)
    for name in names or [s.name for s in SCENES]:
        svg = asyncio.run(shoot(name))
        png = to_png(svg)
        print(svg.relative_to(ASSETS.parent), "->", png.name if png else "(no rsvg-convert)")


if __name__ == "__main__":
    main(sys.argv[1:])
