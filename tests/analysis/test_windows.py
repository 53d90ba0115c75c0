"""Analysis windows and shares where the old code reported numbers it had not measured:
window edges off the sample grid, and shares of a run that received nothing."""

from __future__ import annotations

import math

import pytest
import tcplab
from tcplab.errors import SpecError

pytestmark = pytest.mark.engine


def _spec(**experiment) -> dict:
    return {
        "experiment": {"duration": "10s", "sample_interval": "100ms", **experiment},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "40ms"}],
    }


@pytest.mark.parametrize(
    ("experiment", "field", "edge", "choices"),
    [
        ({"analysis": ["6.95s", "7.2s"]}, "experiment.analysis", "6.95s", "6.9s or 7s"),
        ({"analysis": ["6s", "7.01s"]}, "experiment.analysis", "7.01s", "7s or 7.1s"),
        (
            {"windows": {"late": ["6.99s", "7.1s"]}},
            "experiment.windows.late",
            "6.99s",
            "6.9s or 7s",
        ),
    ],
)
def test_window_edges_off_the_sample_grid_are_refused(experiment, field, edge, choices):
    # The windows: [6.95 s, 7.2 s] reported utilisation 1.158 and [6.99 s, 7.1 s]
    # 1.753, since an edge inside a 100 ms sample counted all of that sample.
    with pytest.raises(SpecError) as e:
        tcplab.run(_spec(**experiment), report=False)
    msg = str(e.value)
    assert field in msg and edge in msg and "sample grid" in msg and choices in msg, msg


def test_window_edges_on_the_grid_and_the_runs_end_are_accepted():
    # 9.95 s is off the grid; as the run's end it is not (duration 9.95 s).
    spec = _spec(analysis=["7s"], windows={"mid": ["6.9s", "7.1s"]})
    spec["experiment"]["duration"] = "9.95s"
    doc = tcplab.run(spec, report=False).summary_json
    assert doc["window"]["to_s"] == pytest.approx(9.95)
    # One CUBIC flow on a 1 BDP buffer keeps the link busy: 0.2 s of it, at most full.
    assert 0.8 <= doc["windows"]["mid"]["aggregate"]["utilization"] <= 1.0


def test_by_cc_shares_are_undefined_when_nothing_was_received():
    # A flow starting 50 ms before the end of the run on a 200 ms path: its first data
    # cannot reach the receiver (100 ms one way), so the run receives nothing. The flows'
    # shares are null, and the algorithm's share must be too, not 0.0 (which sweeps
    # averaged as a loss).
    spec = _spec(analysis=["0.5s"])
    spec["experiment"]["duration"] = "1s"
    spec["flows"] = [{"cc": "cubic", "rtt": "200ms", "start": "0.95s"}]
    doc = tcplab.run(spec, report=False).summary_json
    assert doc["flows"][0]["goodput_bps"] == 0
    for block in (doc["by_cc"], doc["window"]["by_cc"]):
        share = block["cubic"]["share"]
        assert share is None or math.isnan(share), block
