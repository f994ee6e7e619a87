"""The streamed answer: deterministic markdown of a given size (prose, lists, code blocks).

ASCII only, so a delta of 4 characters is 4 bytes. It ends with `SENTINEL`, a word that
appears nowhere else: once the terminal output holds it, the last byte is on screen.
"""

from __future__ import annotations

import random

SENTINEL = "QZXJENDMARK"
DELTA_CHARS = 4

_PROSE = (
    "the parser reads each line once and keeps only what it cannot finish yet so a "
    "chunk that ends inside a word costs nothing more than a list append the widget "
    "renders finished blocks once while the open tail is drawn again every frame "
    "tests cover the queue the interrupt and the restore path with a real server "
    "config values come from flags first then the environment and the defaults last "
    "a process group is stopped with a signal and a short grace before the kill"
)
_WORDS = _PROSE.split()

_CODE = [
    "def merge(left: list[int], right: list[int]) -> list[int]:",
    "    out: list[int] = []",
    "    i = j = 0",
    "    while i < len(left) and j < len(right):",
    "        if left[i] <= right[j]:",
    "            out.append(left[i])",
    "            i += 1",
    "        else:",
    "            out.append(right[j])",
    "            j += 1",
    "    out.extend(left[i:])",
    "    out.extend(right[j:])",
    "    return out",
    "",
    "class Cache:",
    '    """Keeps the last results by key."""',
    "",
    "    def __init__(self, size: int = 128) -> None:",
    "        self.size = size",
    "        self.items: dict[str, str] = {}",
    "",
    "    def get(self, key: str) -> str | None:",
    "        return self.items.get(key)",
]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 18))]
    if rng.random() < 0.3:
        index = rng.randrange(len(words))
        words[index] = f"`{words[index]}()`"
    if rng.random() < 0.2:
        index = rng.randrange(len(words))
        words[index] = f"**{words[index]}**"
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(3, 6)))


def _bullets(rng: random.Random) -> str:
    marker = rng.choice(["-", "*"])
    return "\n".join(f"{marker} {_sentence(rng)}" for _ in range(rng.randint(3, 6)))


def _numbered(rng: random.Random) -> str:
    return "\n".join(f"{n}. {_sentence(rng)}" for n in range(1, rng.randint(3, 6) + 1))


def _code(rng: random.Random) -> str:
    start = rng.randrange(len(_CODE))
    length = rng.randint(6, 24)
    lines = [_CODE[(start + k) % len(_CODE)] for k in range(length)]
    return "```python\n" + "\n".join(lines) + "\n```"


def make_answer(size: int, seed: int = 7) -> str:
    """Markdown of exactly `size` characters (at least 64) ending with `SENTINEL`."""
    rng = random.Random(seed)
    ending = f"\n\nThat is the whole answer. {SENTINEL}"
    budget = max(size, 64) - len(ending)
    parts: list[str] = []
    total = 0
    section = 0
    makers = (_paragraph, _bullets, _paragraph, _code, _numbered, _paragraph)
    while True:
        if len(parts) % 7 == 0:
            section += 1
            part = f"## Step {section}"
        else:
            part = rng.choice(makers)(rng)
        cost = len(part) + (2 if parts else 0)
        if total + cost > budget:
            break
        parts.append(part)
        total += cost
    body = "\n\n".join(parts)
    pad = budget - len(body)
    if pad > 2 and body:
        words = " ".join(rng.choice(_WORDS) for _ in range(pad // 3 + 1))
        body += "\n\n" + words[: pad - 2].rstrip().ljust(pad - 2, ".")
    else:
        body += "." * pad
    return body + ending


def deltas(text: str, size: int = DELTA_CHARS) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
