"""Snapshot pictures compared by what they show, not by how a row was cut into spans.

Rich's SVG export draws one `<rect>` and one `<text>` per run of equal style. A row can
be the same cells in the same colours and still come out as one run or three: Textual
puts per-cell metadata (click offsets) into a style, so the same blank row drawn on one
path is a single span and on another three. Which path drew a row can depend on the
machine's timing. Merging adjacent runs of the same fill (rects) and the same class
(texts) on one line makes both forms the same picture; everything a user sees (each
cell's character, colour and style) is still compared.

Installed over pytest-textual-snapshot's `normalize_svg` (a module-level function it
calls on both the stored and the new picture) by tests/test_snapshots.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_RECT = re.compile(
    r'<rect fill="(?P<fill>[^"]+)" x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" '
    r'width="(?P<w>[\d.]+)" height="(?P<h>[\d.]+)" shape-rendering="crispEdges"/>'
)
_TEXT = re.compile(
    r'<text class="(?P<cls>[^"]+)" x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" '
    r'textLength="(?P<w>[\d.]+)" clip-path="(?P<clip>[^"]+)">(?P<body>[^<]*)</text>'
)
_UNNAMED = re.compile(r"\(\?P<\w+>")
_RUNS = re.compile(
    "(?:{})+|(?:{})+".format(*(_UNNAMED.sub("(?:", p.pattern) for p in (_RECT, _TEXT)))
)


def _num(value: float | str) -> str:
    # One spelling for a number however it was reached: "61", never "61.0" or
    # "60.99999".
    return f"{round(float(value), 1):g}"


def _meets(x: str, w: str, next_x: str) -> bool:
    return abs(float(x) + float(w) - float(next_x)) < 0.05


def _merge_rects(run: str) -> str:
    out: list[list[str]] = []
    for m in _RECT.finditer(run):
        fill, x, y, w, h = m.group("fill", "x", "y", "w", "h")
        last = out[-1] if out else None
        if (
            last
            and last[0] == fill
            and last[2] == y
            and last[4] == h
            and _meets(last[1], last[3], x)
        ):
            last[3] = _num(float(last[3]) + float(w))
        else:
            out.append([fill, _num(x), y, _num(w), h])
    return "".join(
        f'<rect fill="{fill}" x="{x}" y="{y}" width="{w}" height="{h}" '
        'shape-rendering="crispEdges"/>'
        for fill, x, y, w, h in out
    )


def _merge_texts(run: str) -> str:
    out: list[list[str]] = []
    for m in _TEXT.finditer(run):
        cls, x, y, w, clip, body = m.group("cls", "x", "y", "w", "clip", "body")
        last = out[-1] if out else None
        if (
            last
            and last[0] == cls
            and last[2] == y
            and last[4] == clip
            and _meets(last[1], last[3], x)
        ):
            last[3] = _num(float(last[3]) + float(w))
            last[5] += body
        else:
            out.append([cls, _num(x), y, _num(w), clip, body])
    return "".join(
        f'<text class="{cls}" x="{x}" y="{y}" textLength="{w}" clip-path="{clip}">{body}</text>'
        for cls, x, y, w, clip, body in out
    )


def _merge(match: re.Match[str]) -> str:
    run = match.group(0)
    return _merge_rects(run) if run.startswith("<rect") else _merge_texts(run)


def merged_runs(svg: str) -> str:
    return _RUNS.sub(_merge, svg)


def spans_merged(normalize: Callable[[str], str]) -> Callable[[str], str]:
    """`normalize` (the plugin's own), then runs merged."""

    def normalize_svg(svg: str) -> str:
        return merged_runs(normalize(svg))

    return normalize_svg
