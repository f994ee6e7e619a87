"""Several full runs side by side: each row's median per run, and whether it held on all.

    python -m benchmarks.compare run-1.json run-2.json run-3.json [--out runs.md]

A target counts as met only when it holds on every run given (the issue asks for three
consecutive full runs); the last column says so. Rows are matched by figure and key, so
runs of different commits can be compared as long as their figures are the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.report import _shown


def _key(row: dict[str, Any]) -> tuple[str, str]:
    return row["figure"], row["key"]


def held(rows: list[dict[str, Any] | None]) -> str:
    """'yes' when every run passed, 'NO' when one missed, '-' for rows without a target."""
    verdicts = [None if row is None else row["pass"] for row in rows]
    if all(verdict is None for verdict in verdicts):
        return "-"
    return "yes" if all(verdict is True for verdict in verdicts) else "NO"


def side_by_side(reports: list[dict[str, Any]]) -> str:
    """A markdown table: a line per row of the first report, a column per run."""
    by_run = [{_key(row): row for row in report["rows"]} for report in reports]
    heads = [
        f"run {i} ({report['meta'].get('commit') or '?'}{_switch(report)})"
        for i, report in enumerate(reports, 1)
    ]
    lines = [["#", "figure", "target", *heads, "held on all"]]
    for row in reports[0]["rows"]:
        runs = [rows.get(_key(row)) for rows in by_run]
        cells = [
            "missing"
            if run is None
            else ("error" if run["value"] is None else f"{_shown(run['value'])} {run['unit']}")
            for run in runs
        ]
        target = "" if row["target"] is None else f"{row['target']} {row['unit']}"
        lines.append([row["figure"], row["metric"], target, *cells, held(runs)])
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for index, line in enumerate(lines):
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |")
        if index == 0:
            out.append("| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(out)


def _switch(report: dict[str, Any]) -> str:
    off = report["meta"].get("fast_paths_off", "")
    return f", INK_NO_FAST_PATHS={off}" if off and off != "0" else ""


def all_held(reports: list[dict[str, Any]]) -> bool:
    by_run = [{_key(row): row for row in report["rows"]} for report in reports]
    return all(held([rows.get(_key(row)) for rows in by_run]) != "NO" for row in reports[0]["rows"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__)
    parser.add_argument("reports", nargs="+", type=Path, help="results JSON files, in run order")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    reports = [json.loads(path.read_text()) for path in args.reports]
    text = side_by_side(reports)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    if not all_held(reports):
        print("\nA target was missed on at least one run.", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
