"""summary.json computed over all flows at once (analysis/per_flow.py) is the one the
per-flow pandas code wrote, to the last digit.

tests/analysis/snapshots/summaries/NAME.toml are small real runs (BBR, BBRv3, CUBIC, DCTCP behind
FQ-CoDel with ECN, finite transfers, 40 flows, synchronised Probe RTT phases, analysis
windows, a rate change); NAME.summary.json is what main at 5f864bf (before the
vectorised analysis) wrote for them. The whole document must come out equal, every float
bit for bit (JSON keeps a float's shortest repr, which reads back to the same double).
If an engine change moves these runs, regenerate the files with the analysis code of the
commit before the change and say so in the commit: ``python scripts/summary_fixtures.py``
(all four; or name some) writes each NAME.summary.json from its NAME.toml."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tcplab.analysis import per_flow

FIXTURES = Path(__file__).parent / "snapshots" / "summaries"


@pytest.mark.engine
@pytest.mark.parametrize("name", ["mixed", "aqm_fct", "many", "sync"])
def test_summary_is_the_stored_one_to_the_last_digit(name):
    import tcplab

    r = tcplab.run(FIXTURES / f"{name}.toml", report=False)
    new = json.loads(json.dumps(r.summary_json, allow_nan=False))
    old = json.loads((FIXTURES / f"{name}.summary.json").read_text())
    assert new["aggregate"] == old["aggregate"]
    for a, b in zip(new["flows"], old["flows"]):
        assert a == b, a["flow"]
    assert new == old


@pytest.mark.engine
def test_per_flow_table_is_computed_once_per_run():
    import tcplab

    r = tcplab.run(FIXTURES / "sync.toml", report=False)
    a = per_flow.flow_metrics(r.run)
    a.loc[0, "share"] = -1.0  # a caller's change does not reach the next caller
    b = per_flow.flow_metrics(r.run)
    assert b.loc[0, "share"] != -1.0
    # The Result's table is this one with ``flow`` also as a column (api.py).
    pd.testing.assert_frame_equal(b, r.summary.drop(columns="flow").rename_axis("flow"))


@pytest.mark.parametrize(
    "values",
    [
        [1.1, np.nan, 2.2, 3.3, np.nan, 0.1] * 40,
        [np.nan] * 3 + [0.1 * k for k in range(300)],
        [np.nan, np.nan],
        [],
    ],
)
def test_means_are_pandas_means_bit_for_bit(values):
    a = np.array(values, dtype=float)
    s = pd.Series(a)
    skip, drop = s.mean(), s.dropna().mean()
    got_skip, got_drop = per_flow.mean_skipna(a), per_flow.mean_dropna(a)
    if np.isnan(skip):
        assert np.isnan(got_skip) and np.isnan(got_drop)
    else:
        assert got_skip == skip and got_drop == drop


def _modes(labels, gains):
    """One flow's FlowModes and pacing gains from hand-written samples (None: no mode)."""
    series = pd.DataFrame(
        {
            "time_s": [0.1 * (k + 1) for k in range(len(labels))],
            "flow": 0,
            "cc_mode": pd.array(labels, dtype="string"),
        }
    )
    s = per_flow.Slices(series)
    return per_flow.FlowModes(s, "cc_mode", 0, len(labels)), np.array(gains, dtype=float), s


def test_probe_bw_cycle_counts_starts_within_probe_bw_only():
    bw, rtt = "PROBE_BW", "PROBE_RTT"
    labels = ["STARTUP", bw, bw, bw, bw, bw, rtt, bw, bw, bw, None, bw]
    gains = [2.9, 1.25, 0.75, 1.0, 1.25, 1.0, 1.0, 1.25, 1.0, 1.25, 1.0, 1.25]
    fm, g, s = _modes(labels, gains)
    t = s.column("time_s")
    # Probing starts at samples 1, 4 (PROBE_BW in between: 0.3 s apart), 7, 9 (0.2 s);
    # PROBE_RTT at 6 breaks 4 -> 7; sample 10 (no mode) breaks 9 -> 11.
    assert per_flow.mean_probe_bw_cycle_s(fm, g, t) == pytest.approx(0.25)
    assert per_flow.mode_entries(fm, rtt) == 1.0
    assert per_flow.startup_exit_s(fm, t, 0.0) == pytest.approx(0.2)
    assert per_flow.mean_mode_duration_s(fm, rtt, 0.1) == pytest.approx(0.1)


def test_a_flow_without_modes_has_no_bbr_metrics():
    fm, g, s = _modes([None, None], [1.0, 1.0])
    t = s.column("time_s")
    assert np.isnan(per_flow.mean_probe_bw_cycle_s(fm, g, t))
    assert np.isnan(per_flow.mode_entries(fm, "PROBE_RTT"))
    assert np.isnan(per_flow.startup_exit_s(fm, t, 0.0))


def test_bw_estimate_is_read_from_the_column_that_has_values():
    # A kernel run keeps the simulator's cc_btlbw_bps, all null; its estimate is
    # cc_bw_bps (tcp_bbr_info). Before the fix every kernel run's mean_bw_estimate_bps was
    # null (k01's BBR flow: 7.78-8.04 Mbit/s in its series).
    kernel = pd.DataFrame(
        {"flow": [0, 0], "cc_btlbw_bps": [np.nan, np.nan], "cc_bw_bps": [7.8e6, 8.0e6]}
    )
    assert per_flow.bw_estimate_column(kernel) == "cc_bw_bps"
    sim = kernel.assign(cc_btlbw_bps=[7.9e6, 7.9e6])
    assert per_flow.bw_estimate_column(sim) == "cc_btlbw_bps"
    # Neither has a value (a CUBIC run): the first present column, so the mean is NaN.
    none = kernel.assign(cc_bw_bps=[np.nan, np.nan])
    assert per_flow.bw_estimate_column(none) == "cc_btlbw_bps"
    assert per_flow.bw_estimate_column(pd.DataFrame({"flow": [0]})) is None


def test_percentiles_are_numpys_bit_for_bit():
    rng = np.random.default_rng(1)
    groups, values = [], []
    sizes = [0, 1, 2, 3, 7, 20, 21, 40, 101, 400]
    for g, n in enumerate(sizes):
        x = rng.choice([rng.normal(40, 5, n), np.round(rng.normal(40, 5, n), 1)])
        x[rng.random(n) < 0.1] = np.nan  # intervals without an RTT sample
        values.append(x)
        groups.append(np.full(n, g))
    v, g = np.concatenate(values), np.concatenate(groups)
    shuffle = rng.permutation(v.size)
    for q in (95, 50, 10, 99):
        got = per_flow.percentiles(v[shuffle], g[shuffle], len(sizes), q)
        for k, x in enumerate(values):
            x = x[~np.isnan(x)]
            if x.size == 0:
                assert np.isnan(got[k])
            else:
                assert got[k] == np.percentile(x, q), (q, k)
