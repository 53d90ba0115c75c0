"""Jitter and reordering on links (netem's ``delay D J`` and ``reorder P gap G``,
crates/sim/src/net/netem.rs) and TCP under reordering (crates/sim/src/tcp/reorder.rs):
a zero jitter changes nothing, reordering produces spurious retransmissions that D-SACK
reports, and bad values are refused naming the field."""

from __future__ import annotations

import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.lowering.world_config import world_config
from tcplab.specs.load import parse_spec

pytestmark = pytest.mark.engine


def _spec(**bottleneck):
    return {
        "experiment": {"duration": "10s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "1bdp", **bottleneck},
        "flows": [{"cc": "cubic", "rtt": "40ms"}],
    }


def test_zero_jitter_is_the_run_without_the_field():
    # The same engine config (netem's defaults written out: no jitter) and bit-identical
    # counters.
    assert world_config(parse_spec(_spec())) == world_config(parse_spec(_spec(jitter="0ms")))
    assert world_config(parse_spec(_spec()))["bottleneck"]["jitter_ns"] == 0
    plain = tcplab.run(_spec(), seed=1).summary
    zero = tcplab.run(_spec(jitter="0ms"), seed=1).summary
    assert plain.equals(zero)


def test_reordering_makes_spurious_retransmissions_that_dsack_reports():
    # reorder 5 % on a 10 ms bottleneck: a reordered packet arrives 10 ms early, ahead of
    # about 16 packets at 20 Mbit/s (1500 B = 0.6 ms). The sender sees reordering
    # (reordering > 3), some fast retransmissions before it learns are spurious: each
    # duplicate at the receiver is a retransmission, reported by D-SACK.
    none = tcplab.run(_spec(), seed=1).summary.iloc[0]
    reo = tcplab.run(_spec(reorder=0.05), seed=1).summary.iloc[0]
    assert (none["spurious_retransmissions"], none["reordering"], none["reord_seen"]) == (0, 3, 0)
    assert reo["reordering"] > 3
    assert reo["reord_seen"] > 0
    assert 1 <= reo["spurious_retransmissions"] <= reo["duplicate_packets"]
    assert reo["spurious_retransmissions"] <= reo["retransmitted_packets"]
    # Reordering without loss does not cost throughput here: within 5 % of the plain run.
    assert reo["goodput_bps"] > 0.95 * none["goodput_bps"]


@pytest.mark.parametrize(
    ("bottleneck", "field", "words"),
    [
        ({"delay": "0ms", "reorder": 0.1}, "bottleneck.reorder", "needs a delay"),
        ({"jitter_distribution": "normal"}, "bottleneck.jitter_distribution", "jitter > 0"),
        ({"reorder_gap": 5}, "bottleneck.reorder_gap", "reorder > 0"),
        ({"jitter": "3s"}, "bottleneck.jitter", "2147483647"),
        ({"reorder": 1.5}, "bottleneck.reorder", "1"),
        ({"jitter_distribution": "gamma", "jitter": "1ms"}, "bottleneck.jitter_distribution", ""),
    ],
)
def test_bad_values_name_the_field(bottleneck, field, words):
    with pytest.raises(SpecError) as info:
        tcplab.run(_spec(**bottleneck), seed=1)
    hits = [m for p, m in info.value.problems if p == field]
    assert hits, info.value.problems
    assert words in hits[0]


def test_access_link_jitter_reaches_the_engine():
    spec = _spec()
    spec["flows"][0]["access"] = {"jitter": "1ms", "jitter_distribution": "pareto"}
    cfg = world_config(parse_spec(spec))
    assert cfg["flows"][0]["sender_access"]["jitter_ns"] == 1_000_000
    assert cfg["flows"][0]["sender_access"]["jitter_distribution"] == "pareto"
    # The other direction has netem's defaults (the engine's schema), written out.
    rcv = cfg["flows"][0]["receiver_access"]
    assert (rcv["jitter_ns"], rcv["jitter_distribution"], rcv["reorder_gap"]) == (0, "uniform", 1)


def test_the_kernel_backend_runs_jitter_and_reordering():
    # Its emulator runs the simulator's links, netem fields included: nothing refused.
    from tcplab.backends.kernel.support import unsupported

    spec = _spec(jitter="2ms", jitter_distribution="normal", reorder=0.01)
    spec["flows"][0]["access"] = {"jitter": "1ms"}
    assert unsupported(parse_spec(spec)) == []
