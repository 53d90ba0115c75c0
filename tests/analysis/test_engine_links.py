"""The links the engine ran, carried in its output (RunOutput.links, links.json) and read by
the analysis for the bottleneck's rate, rate changes and delay; a run stored before the
engine reported them falls back to the spec."""

from __future__ import annotations

import copy

import pytest
import tcplab
from tcplab.analysis.summary import summarize
from tcplab.runs.result import load_run

pytestmark = pytest.mark.engine

# 20 Mbit/s, 5 ms; halved to 10 Mbit/s at 1 s of a 2 s run: 20e6 x 1 + 10e6 x 1 = 30e6
# bits of capacity.
SPEC = {
    "experiment": {"name": "links", "duration": "2s", "sample_interval": "100ms"},
    "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
    "flows": [{"cc": "cubic", "rtt": "40ms"}],
    "events": [{"at": "1s", "rate": "10Mbps"}],
}


@pytest.fixture(scope="module")
def result():
    return tcplab.run(SPEC, report=False)


def test_the_output_names_the_bottleneck_as_run_with_its_rate_change(result):
    bn = result.run.link("bottleneck")
    assert (bn["rate_bps"], bn["delay_ns"], bn["loss"]) == (20_000_000, 5_000_000, 0.0)
    assert bn["events"] == [
        {"at_ns": 1_000_000_000, "rate_bps": 10_000_000, "delay_ns": None, "loss": None}
    ]
    assert result.run.bottleneck_events() == [(1.0, 10_000_000.0)]
    # Every link direction, in the order of the queue reports.
    assert [ln["name"] for ln in result.run.links] == [q["name"] for q in result.run.queues]
    # rtt 40 ms = 2 x (sender access 0 + bottleneck 5 ms + receiver access 15 ms), the
    # remainder on the receiver's side (lowering/resolve.py).
    assert result.run.link("flow0.receiver_access")["delay_ns"] == 15_000_000


def test_utilisation_reads_the_output_not_the_spec(result):
    # An output that says the bottleneck ran at 40 Mbit/s throughout (no change): the
    # capacity is 40e6 x 2 = 80e6 bits whatever the spec says.
    run = copy.copy(result.run)
    run.links = copy.deepcopy(result.run.links)
    bn = run.link("bottleneck")
    bn["rate_bps"], bn["events"] = 40_000_000, []
    delivered = float(result.run.flows["delivered_bytes"].sum())
    got = summarize(run)["aggregate"]["utilization"]
    assert got == pytest.approx(8 * delivered / 80e6, rel=1e-12)
    # Queueing delay: backlog bytes x 8 / 40 Mbit/s at every sample.
    q = result.run.queue
    want = float((q["backlog_bytes"] * 8 / 40e6 * 1e3).mean())
    assert summarize(run)["aggregate"]["mean_queueing_delay_ms"] == pytest.approx(want, rel=1e-12)


def test_a_run_without_links_falls_back_to_the_spec(result):
    run = copy.copy(result.run)
    run.links = []  # as stored by tcplab <= 0.10.0
    assert run.bottleneck_rate() == 20_000_000
    assert run.bottleneck_events() == [(1.0, 10_000_000.0)]
    delivered = float(result.run.flows["delivered_bytes"].sum())
    got = summarize(run)["aggregate"]["utilization"]
    assert got == pytest.approx(8 * delivered / 30e6, rel=1e-12)
    # Spec and engine agree here, so both paths give the stored value to the last digit.
    assert got == result.summary_json["aggregate"]["utilization"]


def test_a_stored_run_keeps_its_links_and_an_older_one_reads_the_spec(tmp_path):
    stored = tcplab.run(SPEC, tmp_path / "run", report=False)
    back = load_run(tmp_path / "run")
    assert back.run.links == stored.run.links
    assert back.run.link("bottleneck")["rate_bps"] == 20_000_000
    (tmp_path / "run" / "links.json").unlink()  # a run stored before links.json existed
    old = load_run(tmp_path / "run")
    assert old.run.links == [] and old.run.link("bottleneck") is None
    assert old.run.bottleneck_rate() == 20_000_000
