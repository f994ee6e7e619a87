"""Key sequences Textual's terminal parser does not know, taught to it at start-up.

Touches: `textual._ansi_sequences.ANSI_SEQUENCES_KEYS` (private), one entry added. Not a
speed trick but a key Textual lacks, so `INK_NO_FAST_PATHS=1` leaves it on;
`INK_NO_FAST_PATHS=alt_enter` turns it off (Alt+Enter then works only in terminals with
the kitty keyboard protocol). `check()` makes sure the parser reads this very table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

ALT_ENTER_SEQUENCE = "\x1b\r"
"""What xterm, GNOME Terminal, VTE, tmux (`send-keys M-Enter`) and most terminals without
the kitty keyboard protocol send for Alt+Enter: ESC, then carriage return."""


@dataclass(frozen=True, slots=True)
class _KeyName:
    # The parser only reads `.value` from the entries of its table (it expects members
    # of `textual.keys.Keys`, an enum with no "alt+enter" member, so we cannot use one).
    value: str


_ALT_ENTER = (_KeyName("alt+enter"),)


def check() -> str | None:
    from textual import _xterm_parser

    if not isinstance(ANSI_SEQUENCES_KEYS, dict):
        return "textual's ANSI_SEQUENCES_KEYS is not a dict"
    if getattr(_xterm_parser, "ANSI_SEQUENCES_KEYS", None) is not ANSI_SEQUENCES_KEYS:
        return "textual's xterm parser does not look keys up in ANSI_SEQUENCES_KEYS"
    return None


def install_alt_enter() -> None:
    """Make the terminal parser report ESC CR as "alt+enter". Safe to call repeatedly.

    Why a private table: Textual's xterm parser (`textual._xterm_parser`) looks escape
    sequences up in `textual._ansi_sequences.ANSI_SEQUENCES_KEYS`, which has no entry for
    "\\x1b\\r". Unknown, the sequence is held until the escape delay runs out and is then
    replayed as its characters; the ESC only turns a *single-character* key into an alt
    key, so CR comes out as plain "enter" and Alt+Enter cannot be told from Enter. There
    is no public hook to add a sequence, so we add one entry to that table (the parser
    reads it on every lookup, so adding it after the driver started is fine too).

    With the kitty keyboard protocol the terminal sends its own CSI-u sequence and Textual
    already reports "alt+enter"; this entry does not change that path.

    The price is the usual one for ESC-prefixed keys: Escape followed by Enter within the
    escape delay (ESCDELAY, 100 ms by default) also reads as Alt+Enter.
    """
    # The table is typed as a read-only Mapping of `Keys` tuples; it is a plain dict at
    # run time and the parser only needs `.value`, hence the cast.
    table = cast(dict[str, Any], ANSI_SEQUENCES_KEYS)
    table[ALT_ENTER_SEQUENCE] = _ALT_ENTER


def alt_enter_installed() -> bool:
    """True when `install_alt_enter` has taken effect."""
    keys = ANSI_SEQUENCES_KEYS.get(ALT_ENTER_SEQUENCE)
    return isinstance(keys, tuple) and [getattr(key, "value", None) for key in keys] == [
        "alt+enter"
    ]
