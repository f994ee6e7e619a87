"""How far apart a figure's runs were: min / median / max of each row over its runs.

A figure's summary is the median over its runs; on a shared, noisy machine that median
alone can hide runs on both sides of a target. Each run is summarized on its own (every
figure keeps one entry per run, in order, in each list of its samples), and each row's
value is read from every one of those, so the table can say how steady the figure was.

A row is not to be trusted when its runs disagree about the target (`mixed`: some pass,
some miss) or when the runs lie far apart (`wide`: the largest more than `WIDE_RATIO`
times the smallest, for a positive figure).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

# max / min above this and the median is not a figure to trust: another run could land
# anywhere in between.
WIDE_RATIO = 1.5

Summarize = Callable[[dict[str, list[Any]]], dict[str, Any]]


def run_samples(samples: dict[str, Any], index: int, runs: int) -> dict[str, Any]:
    """The samples of run `index` alone, in the shape `summarize` takes."""
    return {
        key: [value[index]] if isinstance(value, list) and len(value) == runs else value
        for key, value in samples.items()
    }


def per_run_summaries(
    summarize: Summarize, samples: dict[str, Any], runs: int
) -> list[dict[str, Any]]:
    """Each run summarized alone; [] when the samples do not hold one entry per run."""
    lists = [value for value in samples.values() if isinstance(value, list)]
    if runs < 1 or not lists or any(len(value) != runs for value in lists):
        return []
    return [summarize(run_samples(samples, index, runs)) for index in range(runs)]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def row_spread(
    key: str, summaries: list[dict[str, Any]], passes: Callable[[float], bool] | None
) -> dict[str, Any] | None:
    """min / median / max of `key` over the runs, and whether it is steady enough to trust."""
    values = [v for v in (_number(s.get(key)) for s in summaries) if v is not None]
    if not values:
        return None
    low, high = min(values), max(values)
    verdicts = {passes(value) for value in values} if passes is not None else set()
    wide = low > 0 and high / low > WIDE_RATIO
    return {
        "runs": len(values),
        "min": low,
        "median": float(statistics.median(values)),
        "max": high,
        "values": values,
        "mixed": len(verdicts) > 1,
        "wide": wide,
    }


def untrusted(spread: dict[str, Any] | None) -> str | None:
    """Why a row's median is not to be trusted, or None."""
    if spread is None:
        return None
    if spread["mixed"]:
        return "runs on both sides of the target"
    if spread["wide"]:
        return f"runs more than {WIDE_RATIO:g}x apart"
    return None
