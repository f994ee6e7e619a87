"""`python -m benchmarks`: run every figure, print the table, write the JSON.

    python -m benchmarks              # full sizes, a few minutes on 2 cores
    python -m benchmarks --quick      # tiny sizes, one run each: seconds (used by a test)
    python -m benchmarks --only 2,3   # some figures
    python -m benchmarks --runs 5     # more runs per figure (the median is reported)
    python -m benchmarks --repeat 3   # three whole passes in a row, then side by side
    python -m benchmarks --only scaling   # an optional figure (OPTIONAL), never in a full pass

Everything runs headless (frames are rendered as for a terminal, then dropped) and is
pinned to `--cores` CPUs (default 2). Results go to `benchmarks/results/latest.json`
(or `--out`). Each row shows the median over the figure's runs and the lowest and highest
run, and is marked `?` when its runs disagree about the target or lie far apart
(`spread.py`). The exit status is 0 when every figure ran, 1 when one failed, and with
`--check` 2 when a target's median was missed (on any pass, with `--repeat`).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, write_json
from benchmarks.compare import all_held, side_by_side
from benchmarks.report import FIGURES, rows_for, table, untrusted_notes
from benchmarks.spread import per_run_summaries

DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "latest.json"

# Figure name -> (module, full-mode runs).
MODULES: dict[str, tuple[str, int]] = {
    "first_screen": ("benchmarks.fig1_first_screen", 5),
    "ingest": ("benchmarks.fig2_ingest", 3),
    "key_latency": ("benchmarks.fig3_key_latency", 3),
    "long_session": ("benchmarks.fig4_long_session", 5),
    "interrupt": ("benchmarks.fig5_interrupt", 3),
    "rpc": ("benchmarks.fig6_rpc", 5),
    "serve": ("benchmarks.fig7_serve", 3),
    "resume": ("benchmarks.fig8_resume", 5),
    "big_session": ("benchmarks.fig9_big_session", 3),
    "pace": ("benchmarks.fig10_pace", 3),
    "serve100": ("benchmarks.fig11_serve100", 3),
    "subagents": ("benchmarks.fig12_subagents", 3),
    "rewind": ("benchmarks.fig13_rewind", 3),
    "scaling": ("benchmarks.fig11_scaling", 3),
}
# Run only when named (`--only scaling`): not part of a full pass or its `--quick` test.
OPTIONAL = {"scaling"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks of ink against baselines measured in the same run.",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run each")
    parser.add_argument("--runs", type=int, default=None, help="runs per figure (median)")
    parser.add_argument(
        "--only", default="", help="figures to run, by number or name: e.g. 1,3 or ingest"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the JSON results file")
    parser.add_argument("--cores", type=int, default=2, help="CPUs to run on (0: all)")
    parser.add_argument(
        "--check", action="store_true", help="exit 2 if a target's median is missed (on any run)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="whole passes in a row (a target holds only if met on each); "
        "writes <out>-runN.json and <out>-runs.md side by side",
    )
    return parser


def _cpu_model() -> str:
    """The CPU's model name and clock as /proc/cpuinfo gives them ("" elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    fields = dict(
        (name.strip(), value.strip())
        for name, _, value in (line.partition(":") for line in text.splitlines())
        if name.strip() in ("model name", "cpu MHz")
    )
    model, mhz = fields.get("model name", ""), fields.get("cpu MHz")
    return f"{model} {mhz} MHz" if mhz else model


def selected(only: str) -> list[str]:
    names = list(MODULES)
    # Figure numbers are those of a full pass; an optional figure is chosen by its name.
    numbered = [name for name in names if name not in OPTIONAL]
    if not only.strip():
        return numbered
    chosen: list[str] = []
    for token in only.split(","):
        token = token.strip()
        if token.isdigit() and 1 <= int(token) <= len(numbered):
            chosen.append(numbered[int(token) - 1])
        elif token in MODULES:
            chosen.append(token)
        else:
            raise SystemExit(
                f"unknown figure {token!r}; choose from 1-{len(numbered)} or {', '.join(names)}"
            )
    return [name for name in names if name in chosen]


def pin_cores(cores: int) -> list[int]:
    """Run this process and its children on `cores` CPUs; returns the CPUs in use."""
    available = sorted(os.sched_getaffinity(0))
    if cores > 0 and len(available) > cores:
        os.sched_setaffinity(0, available[:cores])
    return sorted(os.sched_getaffinity(0))


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def run_figure(name: str, quick: bool, runs: int, log: Callable[[str], None]) -> dict[str, Any]:
    module = import_module(MODULES[name][0])
    started = time.monotonic()
    try:
        samples = module.measure(quick, runs)
        summary = module.summarize(samples)
        per_run = per_run_summaries(module.summarize, samples, runs)
        error = None
    except Exception:
        samples, summary, per_run = None, None, []
        error = traceback.format_exc()
        log(f"  {name} failed:\n{error}")
    seconds = time.monotonic() - started
    log(f"  {FIGURES[name][0]}: {seconds:.1f} s")
    return {
        "runs": runs,
        "seconds": seconds,
        "summary": summary,
        "per_run": per_run,
        "samples": samples,
        "error": error,
    }


def run_all(
    args: argparse.Namespace, names: list[str], cpus: list[int], out: Path, command: str
) -> dict[str, Any]:
    """One full pass over the chosen figures: prints the table, writes `out`."""

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    mode = "quick" if args.quick else "full"
    log(f"ink benchmarks ({mode}) on {len(cpus)} CPUs: {', '.join(names)}")
    started = time.monotonic()
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    results: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for name in names:
        runs = args.runs or (1 if args.quick else MODULES[name][1])
        results[name] = run_figure(name, args.quick, runs, log)
        rows.extend(rows_for(name, results[name]["summary"], results[name]["per_run"]))
    duration = time.monotonic() - started

    report = {
        "meta": {
            "mode": mode,
            "started": started_at,
            "duration_s": duration,
            "cpus": cpus,
            "python": platform.python_version(),
            "textual": _version("textual"),
            "rich": _version("rich"),
            "httpx": _version("httpx"),
            "platform": platform.platform(),
            # Passes on different hosts differ by a quarter (2026-12-06: the bare app's
            # first frame and ingest both): the CPU says which host a pass ran on.
            "cpu": _cpu_model(),
            "commit": _git("rev-parse", "--short", "HEAD"),
            "dirty": bool(_git("status", "--porcelain")),
            "command": command,
            # Which of ink's fast paths the measured processes had off (they inherit it).
            "fast_paths_off": os.environ.get("INK_NO_FAST_PATHS", ""),
        },
        "rows": rows,
        "figures": results,
    }
    write_json(out, report)
    print(table(rows))
    notes = untrusted_notes(rows)
    if notes:
        print("\nSpread too wide to trust (value is the median; runs listed):")
        print("\n".join(notes))
    print(f"\n{mode} run: {duration:.0f} s; results in {_relative(out)}", flush=True)
    return report


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    names = selected(args.only)
    cpus = pin_cores(args.cores)
    command = " ".join(["python -m benchmarks", *(argv if argv is not None else sys.argv[1:])])
    if args.repeat < 2:
        reports = [run_all(args, names, cpus, args.out, command)]
    else:
        # Consecutive full passes, each written on its own, then their medians side by side.
        outs = [
            args.out.with_name(f"{args.out.stem}-run{i}.json") for i in range(1, args.repeat + 1)
        ]
        reports = [run_all(args, names, cpus, out, command) for out in outs]
        side = args.out.with_name(f"{args.out.stem}-runs.md")
        side.write_text(side_by_side(reports) + "\n")
        print(f"\n{side_by_side(reports)}\n\nside by side in {_relative(side)}")
    if any(result["error"] for report in reports for result in report["figures"].values()):
        return 1
    if args.check and not all_held(reports):
        return 2
    return 0


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
