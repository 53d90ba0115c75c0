"""A snapshot of what the engine computes: every registered algorithm on two small
scenarios, key metrics rounded, kept in tests/snapshots/scenario_table.csv. An engine
change that moves a result changes this table, so the move shows up in review as a diff
of numbers. When a change is meant to move results, regenerate the table and commit it
with the change:

    TCPLAB_UPDATE_SNAPSHOT=1 python -m pytest tests/test_snapshot.py
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest
import tcplab
from tcplab.spec.algorithms import registry

pytestmark = pytest.mark.engine

SNAPSHOT = Path(__file__).parent / "snapshots" / "scenario_table.csv"

# Two flows of the algorithm alone in a 1 BDP buffer; the algorithm against CUBIC in a
# 2 BDP buffer with 0.1 % random loss (loss, recovery and inter-algorithm sharing).
SCENARIOS = {
    "alone-1bdp": lambda cc: {
        "experiment": {"duration": "6s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": cc, "rtt": "40ms", "count": 2, "stagger": "1s"}],
    },
    "vs-cubic-2bdp-loss": lambda cc: {
        "experiment": {"duration": "6s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "2bdp", "loss": 0.001},
        "flows": [{"cc": cc, "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}],
    },
}
COLUMNS = [
    "scenario",
    "cc",
    "flow",
    "share",
    "goodput_mbps",
    "retransmitted_packets",
    "mean_rtt_ms",
    "utilization",
    "jain_index",
]


def _table() -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for scenario, make in SCENARIOS.items():
        for cc in registry():
            r = tcplab.run(make(cc), seed=1)
            agg = r.aggregate
            for flow, row in r.summary.iterrows():
                w.writerow(
                    [
                        scenario,
                        cc,
                        flow,
                        f"{row['share']:.3f}",
                        f"{row['goodput_bps'] / 1e6:.2f}",
                        int(row["retransmitted_packets"]),
                        f"{row['mean_rtt_ms']:.1f}",
                        f"{agg['utilization']:.3f}",
                        f"{agg['jain_index']:.3f}",
                    ]
                )
    return out.getvalue()


def test_scenario_table_matches_the_snapshot():
    table = _table()
    if os.environ.get("TCPLAB_UPDATE_SNAPSHOT"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(table)
    stored = SNAPSHOT.read_text()
    changed = [
        f"  stored:   {a}\n  computed: {b}"
        for a, b in zip(stored.splitlines(), table.splitlines(), strict=False)
        if a != b
    ]
    assert table == stored, (
        f"{len(changed)} rows of the scenario table moved (if meant, regenerate with "
        "TCPLAB_UPDATE_SNAPSHOT=1 and commit the diff):\n" + "\n".join(changed[:20])
    )
