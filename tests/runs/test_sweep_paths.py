"""Every kind of swept path reaches the run it labels: the engine config and the digest
change with the swept value (a sweep over ``experiment.seed`` used to run seed
1 under every label)."""

import pytest
from tcplab.lowering import world_config
from tcplab.runs.sweep import plan_sweep
from tcplab.specs.load import read_toml

SPEC = """
[experiment]
duration = "2s"
seed = 1

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[flows]]
cc = "cubic"
rtt = "20ms"

[[events]]
at = "1s"
rate = "5Mbps"
"""


def plan(write_spec, sweep: str):
    return plan_sweep(read_toml(write_spec(SPEC + "\n[sweep]\n" + sweep)))


# (sweep table line, a function reading the swept quantity from the engine config, the
# two values the config must hold: hand-converted to engine units)
CASES = [
    ('"experiment.seed" = [5, 7]', lambda c: c["seed"], [5, 7]),
    (
        '"experiment.duration" = ["2s", "3s"]',
        lambda c: c["duration_ns"],
        [2_000_000_000, 3_000_000_000],
    ),
    (
        '"bottleneck.rate" = ["10Mbps", "20Mbps"]',
        lambda c: c["bottleneck"]["rate_bps"],
        [10_000_000, 20_000_000],
    ),
    (
        '"flows[0].rtt" = ["20ms", "40ms"]',
        # the RTT's remainder after the 5 ms bottleneck goes on the receiver's access link:
        # (20 ms / 2 - 5 ms) and (40 ms / 2 - 5 ms)
        lambda c: c["flows"][0]["receiver_access"]["delay_ns"],
        [5_000_000, 15_000_000],
    ),
    ('"flows[0].params.beta" = [0.7, 0.8]', lambda c: c["flows"][0]["params"]["beta"], [0.7, 0.8]),
    ('"tcp.mss" = [1448, 1000]', lambda c: c["tcp"]["mss_bytes"], [1448, 1000]),
    (
        '"events[0].rate" = ["5Mbps", "2Mbps"]',
        lambda c: c["events"][0]["rate_bps"],
        [5_000_000, 2_000_000],
    ),
]


@pytest.mark.parametrize(
    "sweep, read, expected", CASES, ids=[c[0].split("=")[0].strip() for c in CASES]
)
def test_every_swept_path_reaches_the_config_and_the_digest(
    fake_engine, write_spec, sweep, read, expected
):
    jobs = plan(write_spec, sweep).jobs
    assert [read(world_config(j.spec)) for j in jobs] == expected
    assert len({j.digest for j in jobs}) == 2


def test_swept_seed_labels_the_seed_that_runs(fake_engine, write_spec):
    jobs = plan(write_spec, '"experiment.seed" = [5, 6, 7]').jobs
    assert [j.seed for j in jobs] == [5, 6, 7]
    assert [world_config(j.spec)["seed"] for j in jobs] == [5, 6, 7]
    assert len({j.digest for j in jobs}) == 3


def test_repeats_count_up_from_the_swept_seed(fake_engine, write_spec):
    jobs = plan(write_spec, 'repeat = 2\n"experiment.seed" = [10, 20]').jobs
    assert [j.seed for j in jobs] == [10, 11, 20, 21]


def test_repeats_past_the_seed_limit_are_refused(fake_engine, write_spec):
    from tcplab.errors import SpecError

    with pytest.raises(SpecError, match=r"experiment.seed.*below 2\*\*63"):
        plan(write_spec, f'repeat = 2\n"experiment.seed" = [{2**63 - 1}]')


def test_a_star_path_sets_every_flow_group(tmp_path):
    """flows[*].cc is one axis that changes every group together (both senders of a
    testbed switch algorithm at once); the digest and table carry it like any path."""
    from tcplab.errors import SpecError

    raw = {
        "experiment": {"duration": "1s"},
        "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
        "flows": [{"cc": "bbr", "rtt": "40ms"}, {"cc": "bbr", "rtt": "40ms", "start": "500ms"}],
        "sweep": {"flows[*].cc": ["cubic", "reno"]},
    }
    plan = plan_sweep(raw)
    assert [[f.cc for f in j.spec.flows] for j in plan.jobs] == [
        ["cubic", "cubic"],
        ["reno", "reno"],
    ]
    assert [j.point for j in plan.jobs] == [{"flows[*].cc": "cubic"}, {"flows[*].cc": "reno"}]
    raw["sweep"] = {"bottleneck[*].rate": ["1Mbps"]}
    with pytest.raises(SpecError, match=r"sweep.bottleneck\[\*\].rate.*needs a list"):
        plan_sweep(raw)
