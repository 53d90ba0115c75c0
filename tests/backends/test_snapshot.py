"""A snapshot of what the engine computes: every registered algorithm on two small
scenarios, key metrics rounded, kept in tests/backends/snapshots/scenario_table.csv. An engine
change that moves a result changes this table, so the move shows up in review as a diff
of numbers. When a change is meant to move results, regenerate the table and commit it
with the change:

    TCPLAB_UPDATE_SNAPSHOT=1 python -m pytest tests/backends/test_snapshot.py

Results that move need a new tcplab version: a stored run's digest covers the version,
not the code (runs/digest.py run_digest), so a sweep or catalogue cache would otherwise
serve runs of the old engine as if they were the new one's. The table records the
version it was made with (scenario_table.version) and refuses to be regenerated with
other numbers under the same version. Say what moved in docs/CHANGELOG.md.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest
import tcplab
from tcplab.specs.algorithms import registry

pytestmark = pytest.mark.engine

SNAPSHOT = Path(__file__).parent / "snapshots" / "scenario_table.csv"
SNAPSHOT_VERSION = SNAPSHOT.with_suffix(".version")

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
        for cc, algo in registry().items():
            if algo.family == "external":
                continue  # set from outside (tcplab.gym); alone, a fixed window
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
        made_with = SNAPSHOT_VERSION.read_text().strip() if SNAPSHOT_VERSION.exists() else ""
        if SNAPSHOT.exists() and table != SNAPSHOT.read_text() and made_with == tcplab.__version__:
            pytest.fail(
                f"the scenario table moves but tcplab is still {made_with}: bump the version "
                "(pyproject.toml, Cargo.toml) so that cached runs of the old engine are not "
                "reused under the new one, then regenerate"
            )
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(table)
        SNAPSHOT_VERSION.write_text(tcplab.__version__ + "\n")
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
