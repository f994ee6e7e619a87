"""Extensions: Python files that hook into a session (`def setup(ink): ...`).

A front-end-level layer over `control/`, beside `api/` and `modes/`: `core/` and
`control/` never import it. See docs/extensions.md for the API an extension gets.
"""

from ink_tui.extensions.api import Block, Ink, ToolCallInfo, block
from ink_tui.extensions.budget import ExtensionStopped

__all__ = ["Block", "ExtensionStopped", "Ink", "ToolCallInfo", "block"]
