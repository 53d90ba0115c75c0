"""scripts/fidelity.py's start-up retransmissions: each flow's retransmissions in the 2 s
after its own start, summed over the flows (hand-made series)."""

from __future__ import annotations

import pandas as pd
from script_module import script_module


def _fidelity():
    return script_module("fidelity")


def test_startup_retransmissions_count_from_each_flow_s_start(tmp_path):
    # Samples every 0.5 s. Flow 0 starts at 0: its window is (0, 2] -> 3 + 4 = 7 (the 5 at
    # 2.5 s is after it). Flow 1 starts at 1.0: its window is (1, 3] -> 10 + 20 = 30 (the
    # 100 at 1.0 s is its start instant, not after it; 1000 at 3.5 s is too late).
    rows = [
        (0.5, 0, 0), (1.0, 0, 3), (2.0, 0, 4), (2.5, 0, 5),
        (1.0, 1, 100), (1.5, 1, 10), (3.0, 1, 20), (3.5, 1, 1000),
    ]  # fmt: skip
    pd.DataFrame(rows, columns=["time_s", "flow", "retransmits"]).to_parquet(
        tmp_path / "series.parquet"
    )
    flows = [{"flow": 0, "start_s": 0.0}, {"flow": 1, "start_s": 1.0}]
    assert _fidelity()._startup_retransmissions(tmp_path, flows) == 37.0
