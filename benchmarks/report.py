"""The figures, their targets, and the table printed and written as JSON.

Each row reads one key of a figure's summary (the medians over runs), with the baseline
measured in the same run where there is one, and a target where the issue sets one.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.spread import row_spread, untrusted

Compare = Callable[[float, float], bool]
_OPS: dict[str, Compare] = {"<=": operator.le, ">=": operator.ge}


@dataclass(frozen=True)
class Row:
    figure: str
    label: str
    key: str
    unit: str
    baseline: str | None = None
    target: tuple[str, float] | None = None

    def passes(self, value: float) -> bool:
        assert self.target is not None
        op, limit = self.target
        return _OPS[op](value, limit)

    def evaluate(
        self, summary: dict[str, Any], per_run: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        value = summary.get(self.key)
        baseline = summary.get(self.baseline) if self.baseline else None
        passed: bool | None = None
        if self.target is not None and _is_number(value):
            passed = self.passes(float(value))
        spread = row_spread(self.key, per_run or [], self.passes if self.target else None)
        return {
            "figure": self.figure,
            "metric": self.label.format(**summary),
            "key": self.key,
            "value": value,
            "unit": self.unit,
            "baseline": baseline,
            "target": None if self.target is None else f"{self.target[0]} {self.target[1]:g}",
            "pass": passed,
            "spread": spread,
            "untrusted": untrusted(spread),
        }


FIGURES: dict[str, tuple[str, list[Row]]] = {
    "first_screen": (
        "1 First screen",
        [
            Row("1", "start to first frame: ink (vs bare)", "ink_ms", "ms", "bare_ms"),
            Row("1", "first frame, ink / bare", "ratio", "x", target=("<=", 1.3)),
            Row("1", "RSS at first frame", "ink_rss_frame_mib", "MiB", "bare_rss_frame_mib"),
            Row(
                "1",
                "RSS idle (controller built)",
                "ink_rss_idle_mib",
                "MiB",
                "bare_rss_idle_mib",
                ("<=", 60),
            ),
            Row("1", "eager imports at first frame", "eager_imports", "modules", None, ("<=", 0)),
        ],
    ),
    "ingest": (
        "2 Streaming ingest",
        [
            Row(
                "2",
                "{size_kb:g} KB in 4-byte deltas: ink (vs Markdown.get_stream)",
                "ink_kbps",
                "KB/s",
                "bare_kbps",
                (">=", 300),
            ),
            Row("2", "ingest, ink / bare", "ratio", "x"),
        ],
    ),
    "key_latency": (
        "3 Key latency while streaming 32 KB/s",
        [
            Row("3", "key to input box p50 (vs idle)", "p50_ms", "ms", "idle_p50_ms"),
            Row("3", "key to input box p99 (vs idle)", "p99_ms", "ms", "idle_p99_ms", ("<=", 16.7)),
            Row("3", "key to input box max", "max_ms", "ms", None, ("<=", 50)),
        ],
    ),
    "long_session": (
        "4 Long session",
        [
            Row("4", "RSS, {small:g} messages", "rss_mib_small", "MiB"),
            Row("4", "RSS, {large:g} messages", "rss_mib_large", "MiB", None, ("<=", 150)),
            Row(
                "4",
                "append an answer, {large:g} (vs {small:g})",
                "append_ms_large",
                "ms",
                "append_ms_small",
            ),
            Row("4", "append, {large:g} / {small:g}", "append_ms_ratio", "x", None, ("<=", 1.2)),
            Row(
                "4",
                "scroll a page, {large:g} (vs {small:g})",
                "scroll_ms_large",
                "ms",
                "scroll_ms_small",
            ),
            Row("4", "scroll, {large:g} / {small:g}", "scroll_ms_ratio", "x", None, ("<=", 1.2)),
            Row("4", "build {large:g} messages", "build_s_large", "s"),
        ],
    ),
    "interrupt": (
        "5 Interrupt",
        [
            Row("5", "Ctrl+C in a stream to HTTP closed", "http_closed_ms", "ms", None, ("<=", 50)),
            Row(
                "5",
                "Ctrl+C in bash to process group gone",
                "group_gone_ms",
                "ms",
                None,
                ("<=", 100),
            ),
            Row("5", "Ctrl+C in a stream to idle", "idle_after_stream_ms", "ms", None, ("<=", 150)),
            Row("5", "Ctrl+C in bash to idle", "idle_after_bash_ms", "ms", None, ("<=", 150)),
        ],
    ),
    "rpc": (
        "6 RPC mode",
        [
            # The target (issue 10) is on events as a real server sends them: one SSE
            # event per network write. The 1 MB row is read-limited (one merged event per
            # 64 KB socket read), kept for information.
            Row(
                "6",
                "RPC events/s, one delta per network write, offered {each_rate:,.0f}/s "
                "(vs measured offer)",
                "each_events_per_s",
                "events/s",
                "each_offered_per_s",
                (">=", 10_000),
            ),
            Row(
                "6",
                "one delta per write: SSE deltas per message_update",
                "each_merge_ratio",
                "x",
            ),
            Row(
                "6",
                "RPC events/s to a reader, {rpc_size_kb:g} KB fast (vs bare pipe)",
                "events_per_s",
                "events/s",
                "pipe_events_per_s",
            ),
            Row("6", "SSE deltas per message_update ({sse_deltas:g} sent)", "merge_ratio", "x"),
            Row("6", "SSE deltas delivered to the RPC reader", "deltas_per_s", "deltas/s"),
            Row("6", "answer text to the RPC reader", "text_kbps", "KB/s"),
            Row(
                "6",
                "RPC abort in a stream to agent_settled",
                "abort_settled_ms",
                "ms",
                None,
                ("<=", 100),
            ),
            Row("6", "RPC abort in a stream to HTTP closed", "abort_http_closed_ms", "ms"),
        ],
    ),
    "serve": (
        "7 ink serve",
        [
            # Every tool event is an SSE message of its own; text deltas are merged per
            # 16 ms per client, so the text rows count events by seq (fig7_serve's doc).
            Row(
                "7",
                "SSE events/s to one client, {tool_calls:,.0f} tool calls (none merged)",
                "tool_events_per_s",
                "events/s",
                None,
                (">=", 2_000),
            ),
            Row(
                "7",
                "text events/s (by seq), one delta per write at {serve_each_rate:,.0f}/s "
                "(vs measured offer)",
                "events_per_s",
                "events/s",
                "offered_per_s",
            ),
            Row("7", "text: SSE messages/s (deltas merged per 16 ms)", "sse_per_s", "msgs/s"),
            Row(
                "7",
                "model byte to SSE event p50, {serve_sessions:g} sessions at 8 KB/s (vs alone)",
                "p50_ms",
                "ms",
                "alone_p50_ms",
            ),
            Row(
                "7",
                "model byte to SSE event p99, {serve_sessions:g} sessions at 8 KB/s (vs alone)",
                "p99_ms",
                "ms",
                "alone_p99_ms",
                ("<=", 50),
            ),
            Row(
                "7",
                "server peak RSS, {serve_sessions:g} sessions (vs idle)",
                "peak_rss_mib",
                "MiB",
                "idle_rss_mib",
                ("<=", 300),
            ),
        ],
    ),
    "resume": (
        "8 Resume a long session",
        [
            Row(
                "8",
                "start to first frame, resume {messages:,.0f} messages (vs fresh start)",
                "resume_ms",
                "ms",
                "fresh_ms",
            ),
            Row("8", "first frame, resume / fresh", "ratio", "x", None, ("<=", 1.5)),
            Row(
                "8",
                "first key typed after it, to the input box",
                "first_key_ms",
                "ms",
                None,
                ("<=", 50),
            ),
            Row("8", "session file ({messages:,.0f} messages)", "file_mb", "MB"),
        ],
    ),
    "big_session": (
        "9 A 50 MB session",
        [
            Row(
                "9",
                "RSS resumed, {file_mb:.0f} MB session",
                "rss_resumed_mib",
                "MiB",
                None,
                ("<=", 200),
            ),
            Row(
                "9",
                "peak RSS through the next request (the whole history sent)",
                "peak_rss_mib",
                "MiB",
                None,
                ("<=", 200),
            ),
            Row("9", "start to first frame, {file_mb:.0f} MB session", "resume_ms", "ms"),
        ],
    ),
    "pace": (
        "10 A real model's pace",
        [
            Row(
                "10",
                "CPU, share of one core, streaming 1 KB/s: ink (vs bare Textual Markdown)",
                "cpu_pct",
                "%",
                "bare_cpu_pct",
                ("<=", 5),
            ),
            Row(
                "10",
                "terminal bytes per answer character, 1 KB/s (vs bare)",
                "tty_bytes_per_char",
                "B/char",
                "bare_tty_bytes_per_char",
                ("<=", 30),
            ),
            Row(
                "10",
                "idle CPU after the answer (vs bare)",
                "idle_cpu_pct",
                "%",
                "bare_idle_cpu_pct",
                ("<=", 0.5),
            ),
            Row(
                "10",
                "answer's last byte to its last word on screen, 1 KB/s (vs bare)",
                "lag_ms",
                "ms",
                "bare_lag_ms",
            ),
            Row(
                "10",
                "CPU, share of one core, streaming 8 KB/s (vs bare)",
                "cpu_pct_8k",
                "%",
                "bare_cpu_pct_8k",
            ),
            Row(
                "10",
                "terminal bytes per answer character, 8 KB/s (vs bare)",
                "tty_bytes_per_char_8k",
                "B/char",
                "bare_tty_bytes_per_char_8k",
            ),
            Row(
                "10",
                "answer's last byte to its last word on screen, 8 KB/s "
                "(vs bare; waited {lag_limit_s:g} s at most)",
                "lag_ms_8k",
                "ms",
                "bare_lag_ms_8k",
            ),
        ],
    ),
    "serve100": (
        "11 ink serve, 100 sessions",
        [
            Row(
                "11",
                "model byte to SSE event p50, {serve100_sessions:g} sessions at "
                "{serve100_kbps:g} KB/s",
                "p50_ms",
                "ms",
            ),
            Row(
                "11",
                "model byte to SSE event p99, {serve100_sessions:g} sessions at "
                "{serve100_kbps:g} KB/s",
                "p99_ms",
                "ms",
                None,
                ("<=", 50),
            ),
            Row(
                "11",
                "server peak RSS, {serve100_sessions:g} sessions (vs idle)",
                "rss_mib",
                "MiB",
                "idle_rss_mib",
                ("<=", 200),
            ),
            Row(
                "11",
                "server CPU, % of one core (vs the SSE clients')",
                "cpu_pct",
                "%",
                "client_cpu_pct",
                ("<=", 25),
            ),
            Row("11", "server CPU per streamed delta (one model write)", "us_per_delta", "us"),
            Row("11", "SSE clients' loop lag p99 (a 10 ms timer)", "client_lag_p99_ms", "ms"),
            Row("11", "model server CPU, % of one core", "model_cpu_pct", "%"),
            Row(
                "11",
                "server runnable but waiting for a CPU, % of the window",
                "server_wait_pct",
                "%",
            ),
        ],
    ),
    "subagents": (
        "12 Sub-agents",
        [
            Row(
                "12",
                "key to input box p50, {agents:g} sub-agents streaming (vs none)",
                "key_p50_ms",
                "ms",
                "idle_key_p50_ms",
            ),
            Row(
                "12",
                "key to input box p99, {agents:g} sub-agents streaming (vs none)",
                "key_p99_ms",
                "ms",
                "idle_key_p99_ms",
                ("<=", 16.7),
            ),
            Row(
                "12",
                "key to input box max, {agents:g} sub-agents streaming (vs none)",
                "key_max_ms",
                "ms",
                "idle_key_max_ms",
                ("<=", 50),
            ),
            Row("12", "Ctrl+C of a tree of {agents:g} to every sub-agent ended", "ended_ms", "ms"),
            Row(
                "12",
                "Ctrl+C of the tree to every stream closed",
                "streams_closed_ms",
                "ms",
                None,
                ("<=", 50),
            ),
            Row(
                "12",
                "Ctrl+C of the tree to every process gone",
                "processes_gone_ms",
                "ms",
                None,
                ("<=", 100),
            ),
            Row("12", "Ctrl+C of the tree to the run settled (idle)", "settled_ms", "ms"),
            Row(
                "12",
                "Ctrl+C of the tree to all of it settled",
                "abort_tree_ms",
                "ms",
                None,
                ("<=", 100),
            ),
        ],
    ),
    "rewind": (
        "13 Rewind",
        [
            Row(
                "13",
                "first checkpoint of the workspace (vs a git repo)",
                "first_snapshot_ms",
                "ms",
                "repo_first_snapshot_ms",
            ),
            Row(
                "13",
                "checkpoint after 5 files changed, 1 added (vs a git repo)",
                "snapshot_ms",
                "ms",
                "repo_snapshot_ms",
                ("<=", 200),
            ),
            Row(
                "13",
                "restore the first checkpoint (vs a git repo)",
                "restore_ms",
                "ms",
                "repo_restore_ms",
                ("<=", 1000),
            ),
        ],
    ),
    "scaling": (
        "11b ink serve processes behind a proxy",
        [
            Row(
                "11b",
                "model byte to SSE event p50, {scaling_sessions:g} sessions through the proxy "
                "to {scaling_backends:g} backends (vs {scaling_direct:g} direct)",
                "p50_ms",
                "ms",
                "direct_p50_ms",
            ),
            Row(
                "11b",
                "model byte to SSE event p99, through the proxy (vs direct)",
                "p99_ms",
                "ms",
                "direct_p99_ms",
            ),
            Row("11b", "proxy CPU, % of one core", "proxy_cpu_pct", "%"),
            Row("11b", "proxy CPU per proxied delta", "proxy_us_per_delta", "us"),
            Row("11b", "busiest backend's CPU, % of one core", "backend_cpu_max_pct", "%"),
            Row("11b", "backends' CPU per streamed delta", "backend_us_per_delta", "us"),
            Row("11b", "largest backend peak RSS", "rss_max_mib", "MiB"),
            Row("11b", "backend RSS per streamed session", "rss_per_session_mib", "MiB"),
            Row("11b", "backend file descriptors per streamed session", "fds_per_session", "fds"),
            Row("11b", "SSE clients' loop lag p99 (a 10 ms timer)", "client_lag_p99_ms", "ms"),
            Row(
                "11b",
                "a second backend opening a held session: refused, naming the holder",
                "lock_refused",
                "ok",
                None,
                (">=", 1),
            ),
            Row(
                "11b",
                "reconnect on the next backend after a hand-over: replay_gap first",
                "handover_gap",
                "ok",
                None,
                (">=", 1),
            ),
            Row(
                "11b",
                "a backend SIGKILLed mid-stream: its session opens on the next, replay_gap first",
                "kill_resumed",
                "ok",
                None,
                (">=", 1),
            ),
            Row(
                "11b",
                "proxied sessions not open on their pinned backend",
                "misrouted",
                "sessions",
                None,
                ("<=", 0),
            ),
            Row("11b", "session files not read back whole", "files_bad", "files", None, ("<=", 0)),
            Row(
                "11b",
                "backends still running 30 s after Ctrl+C (then killed)",
                "killed",
                "backends",
                None,
                ("<=", 0),
            ),
        ],
    ),
}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# Label fields when a figure failed and has no summary: the full-mode sizes.
LABEL_DEFAULTS: dict[str, Any] = {
    "serve100_sessions": 100,
    "serve100_kbps": 1,
    "scaling_backends": 2,
    "scaling_sessions": 24,
    "scaling_direct": 6,
    "small": 10,
    "large": 20000,
    "size_kb": 200,
    "rpc_size_kb": 1024,
    "each_rate": 20_000,
    "sse_deltas": 262144,
    "tool_calls": 2000,
    "serve_each_rate": 4000,
    "serve_sessions": 20,
    "messages": 20000,
    "file_mb": 50,
    "agents": 8,
    "lag_limit_s": 20,
}


def rows_for(
    name: str, summary: dict[str, Any] | None, per_run: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    _, rows = FIGURES[name]
    if summary is None:
        return [
            {
                "figure": row.figure,
                "metric": row.label.format(**LABEL_DEFAULTS),
                "key": row.key,
                "value": None,
                "unit": row.unit,
                "baseline": None,
                "target": None if row.target is None else f"{row.target[0]} {row.target[1]:g}",
                "pass": False if row.target is not None else None,
                "spread": None,
                "untrusted": None,
            }
            for row in rows
        ]
    return [row.evaluate(summary, per_run) for row in rows]


def _shown(value: object) -> str:
    if not _is_number(value):
        return "error" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    assert isinstance(value, float)
    number = value
    if number == 0:
        return "0"
    if abs(number) >= 100:
        return f"{number:.0f}"
    if abs(number) >= 10:
        return f"{number:.1f}"
    return f"{number:.2f}"


def _spread_cell(row: dict[str, Any]) -> str:
    spread = row.get("spread")
    if not spread or spread["runs"] < 2:
        return ""
    return f"{_shown(spread['min'])} - {_shown(spread['max'])}"


def table(rows: list[dict[str, Any]]) -> str:
    """A markdown table: readable in a terminal, pasteable into benchmarks/README.md.

    `value` is the median over the figure's runs, `runs` the lowest and highest run; a
    result marked `?` is one whose runs are not to be trusted (see `untrusted_notes`).
    """
    header = ["#", "figure", "value", "runs (min - max)", "baseline", "target", "result"]
    lines = [header]
    for row in rows:
        result = {True: "pass", False: "MISS", None: "-"}[row["pass"]]
        if row["value"] is None:
            result = "error"
        elif row.get("untrusted"):
            result += " ?"
        baseline = "" if row["baseline"] is None else f"{_shown(row['baseline'])} {row['unit']}"
        target = "" if row["target"] is None else f"{row['target']} {row['unit']}"
        lines.append(
            [
                row["figure"],
                row["metric"],
                "error" if row["value"] is None else f"{_shown(row['value'])} {row['unit']}",
                _spread_cell(row),
                baseline,
                target,
                result,
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for index, line in enumerate(lines):
        out.append("| " + " | ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)))
        out[-1] += " |"
        if index == 0:
            out.append("| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(out)


def untrusted_notes(rows: list[dict[str, Any]]) -> list[str]:
    """A line for each row whose runs are too far apart to trust its median."""
    return [
        f"? {row['figure']} {row['metric']}: {row['untrusted']} "
        f"({', '.join(_shown(v) for v in row['spread']['values'])} {row['unit']})"
        for row in rows
        if row.get("untrusted")
    ]
