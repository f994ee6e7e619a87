"""The provider speed benchmark on a small answer, so it never rots.

Only that both readers ran, read the whole answer and gave a rate is checked here; the
rates themselves belong to a full run on a quiet machine, never to a test.
"""

from __future__ import annotations

import math

from benchmarks.loopback import LoopbackServer
from benchmarks.provider_speed import format_table, measure

SIZE = 16 * 1024


async def test_provider_speed_measures_both_readers() -> None:
    with LoopbackServer((SIZE,)) as server:
        raw, provider = await measure(server.fast_url(SIZE), SIZE, runs=1)
    assert (raw.name, provider.name) == ("raw httpx (aiter_bytes)", "provider stream")
    for row in (raw, provider):
        assert all(math.isfinite(rate) and rate > 0 for rate in row.kbps())
    # One HTTP chunk per 4-character delta on the wire; the provider merges what arrives
    # together, so it hands over far fewer events than httpx did chunks.
    assert raw.runs[0].events >= SIZE // 4
    assert provider.runs[0].events < raw.runs[0].events // 10
    table = format_table([raw, provider])
    assert "raw httpx" in table and "provider stream" in table
