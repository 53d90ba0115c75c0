"""[[links]] and flows' path in specs (crates/sim/src/net/topology.rs): the fields'
errors, the RTT split over a path's links, the engine config, and a parking lot run."""

import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.lowering import resolve, world_config
from tcplab.specs.load import parse_spec, tomllib

PARKING_LOT = """
[experiment]
duration = "30s"

[bottleneck]
rate = "10Mbps"
delay = "5ms"

[[links]]
name = "l2"
rate = "10Mbps"
delay = "5ms"

[[flows]]
cc = "cubic"
rtt = "40ms"
path = ["bottleneck", "l2"]

[[flows]]
cc = "cubic"
rtt = "40ms"

[[flows]]
cc = "cubic"
rtt = "40ms"
path = ["l2"]
"""


def spec(text=PARKING_LOT, **edits):
    raw = tomllib.loads(text)
    for path, value in edits.items():
        target = raw
        *head, last = path.split(".")
        for k in head:
            target = target[int(k)] if k.isdigit() else target[k]
        target[last] = value
    return parse_spec(raw)


def problems(**edits):
    with pytest.raises(SpecError) as e:
        spec(**edits)
    return dict(e.value.problems)


def test_path_and_link_errors_are_named():
    assert "no link 'l3'" in problems(**{"flows.0.path": ["bottleneck", "l3"]})["flows[0].path[1]"]
    assert "twice" in problems(**{"flows.0.path": ["l2", "l2"]})["flows[0].path[1]"]
    assert "not 'bottleneck'" in problems(**{"links.0.name": "bottleneck"})["links[0].name"]
    assert (
        "link's delay"
        in problems(**{"links.0.reverse": {"delay": "1ms"}})["links[0].reverse.delay"]
    )


def test_rtt_splits_over_the_paths_links():
    # The long flow's one-way 20 ms: 5 + 5 ms on the two links, 10 ms left for the
    # receiver's access link (the TUM rule); the short flows have 15 ms left.
    s = resolve(spec())
    assert [f.receiver_access.delay for f in s.flows] == [10_000_000, 15_000_000, 15_000_000]
    # 2 x (5 + 5) ms = 20 ms is the shortest RTT the long flow may have.
    with pytest.raises(SpecError) as e:
        resolve(spec(**{"flows.0.rtt": "18ms"}))
    assert "20ms" in str(e.value)


def test_engine_config_has_links_and_a_path_per_flow():
    cfg = world_config(spec())
    assert [link["name"] for link in cfg["links"]] == ["l2"]
    assert cfg["paths"] == [["bottleneck", "l2"], ["bottleneck"], ["l2"]]
    # A spec without links or paths is the dumbbell: none, and an empty paths (which the
    # engine reads as every flow on the bottleneck).
    plain = world_config(
        spec(PARKING_LOT.split("[[links]]")[0] + '[[flows]]\ncc = "cubic"\nrtt = "40ms"\n')
    )
    assert plain["links"] == [] and plain["paths"] == []


@pytest.mark.engine
def test_parking_lot_long_flow_gets_less_than_each_short_flow(tmp_path):
    # Hand-computed max-min shares: 5 Mbit/s each; the long flow, congested at two queues,
    # gets less than each short one (crates/sim/tests/topology_scenarios.rs checks the
    # links' utilisation and the total against the max-min allocation).
    p = tmp_path / "pl.toml"
    p.write_text(PARKING_LOT)
    r = tcplab.run(p, tmp_path / "run", report=False)
    x = r.summary["throughput_bps"].tolist()
    assert x[0] < x[1] and x[0] < x[2], x


@pytest.mark.engine
def test_reverse_flow_uses_the_reverse_direction(tmp_path):
    text = PARKING_LOT.split("[[links]]")[0] + (
        '[bottleneck.reverse]\nbuffer = "1bdp"\n\n[[flows]]\ncc = "cubic"\nrtt = "40ms"\n\n'
        '[[flows]]\ncc = "cubic"\nrtt = "40ms"\npath = ["bottleneck_reverse"]\n'
    )
    p = tmp_path / "rev.toml"
    p.write_text(text)
    r = tcplab.run(p, tmp_path / "run", report=False)
    q = {x["name"]: x for x in r.run.queues}
    # Both directions carry a flow's data: each ~10 Mbit/s x 30 s of 1500-byte packets.
    assert q["bottleneck"]["departed"] > 20_000 and q["bottleneck_reverse"]["departed"] > 20_000
