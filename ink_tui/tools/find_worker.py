"""The find tool's walk in a process of its own: `python -P -m ink_tui.tools.find_worker`.

Why a process: pathspec turns a glob into a regex, and one with many `*` in a name
(`*a*a*a*a*a*a*a*a*b`) backtracks for ages, holding the GIL (child_process.py). The
request is `{"root", "pattern"}`; the answer `{"found": [relative paths]}`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ink_tui.tools.child_runtime import serve
from ink_tui.tools.find import find_files
from ink_tui.tools.globs import compile_glob


def answer(request: dict[str, Any]) -> dict[str, Any]:
    root = Path(request["root"])
    return {"found": find_files(root, compile_glob(request["pattern"]), lambda: False)}


if __name__ == "__main__":
    serve(answer)
