"""Traces in tcplab.gym.Scenarios: an episode that follows a trace, scaled to the drawn
rate, named by a path relative to the scenarios file or by a shipped trace's name; drawn
last, so distributions without traces sample the episodes they always did."""

from pathlib import Path

import pytest
from tcplab.errors import SpecError
from tcplab.gym import Scenarios
from tcplab.gym.scenarios import SHIPPED_TRACES

BASE = {"duration": 10.0, "rate_mbps": [2.0, 8.0], "rtt_ms": [50.0, 100.0]}


def test_every_episode_follows_the_trace_at_the_drawn_rate():
    s = Scenarios.from_dict(
        {**BASE, "traces": ["constant-12mbps"], "trace_share": 1.0, "rate_changes": [2, 2]}
    )
    spec = s.sample(0)
    # Seed 0 draws 4.8 Mbit/s (test_scenarios_rate_changes.py): 4.8 / 12 = 0.4.
    assert spec["bottleneck"]["rate"] == {
        "trace": str(SHIPPED_TRACES / "constant-12mbps"),
        "scale": 0.4,
    }
    assert "events" not in spec  # a traced bottleneck's rate is the trace's
    assert spec["flows"] == Scenarios.from_dict(BASE).sample(0)["flows"]


def test_a_share_of_zero_or_no_traces_samples_what_it_always_did():
    plain = Scenarios.from_dict({**BASE, "rate_changes": [0, 3]})
    with_traces = Scenarios.from_dict(
        {**BASE, "rate_changes": [0, 3], "traces": ["constant-12mbps"], "trace_share": 0.0}
    )
    assert all(plain.sample(k) == with_traces.sample(k) for k in range(10))


def test_a_quarter_share_traces_about_a_quarter_of_episodes():
    s = Scenarios.from_dict({**BASE, "traces": ["constant-12mbps"], "trace_share": 0.25})
    traced = sum(isinstance(s.sample(k)["bottleneck"]["rate"], dict) for k in range(400))
    # Binomial(400, 0.25): mean 100, sd 8.7; +-4 sd.
    assert 65 <= traced <= 135, traced


def test_paths_are_relative_to_the_scenarios_file(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "mine").write_text("5\n10\n")  # 2 opportunities in 10 ms: 2.4 Mbit/s
    (tmp_path / "s.toml").write_text(
        '[scenarios]\nrate_mbps = 2.4\ntraces = ["t/mine"]\ntrace_share = 1.0\n'
    )
    spec = Scenarios.load(tmp_path / "s.toml").sample(1)
    assert spec["bottleneck"]["rate"] == {"trace": str(tmp_path / "t" / "mine"), "scale": 1.0}


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ({"traces": ["no-such-trace"]}, "no such trace file"),
        ({"traces": [3]}, "must be a list of trace files"),
        ({"trace_share": 1.5}, "scenarios.trace_share"),
    ],
)
def test_bad_traces_are_refused_naming_the_field(raw, why):
    with pytest.raises(SpecError) as e:
        Scenarios.from_dict({**BASE, **raw})
    assert why in str(e.value), str(e.value)


def test_a_traced_episode_runs(tmp_path):
    import tcplab

    s = Scenarios.from_dict(
        {**BASE, "duration": 2.0, "traces": ["synthetic-lte.down"], "trace_share": 1.0}
    )
    spec = s.sample(3, "cubic")
    assert Path(spec["bottleneck"]["rate"]["trace"]).name == "synthetic-lte.down"
    assert tcplab.run(spec, report=False).summary.iloc[0]["goodput_bps"] > 0


def test_describe_names_the_trace_its_scale_and_rate_changes():
    from tcplab.gym.scenarios import describe

    traced = {
        "bottleneck": {
            "rate": {"trace": "/x/synthetic-lte.down", "scale": 0.793},
            "buffer": "0.78bdp",
            "loss": 0.0086,
        },
        "flows": [{"cc": "external", "rtt": "52ms"}, {"cc": "bbr", "rtt": "52ms"}],
    }
    assert describe(traced) == "synthetic-lte.down x0.793 52ms 0.78bdp loss 0.0086 +bbr"
    fixed = {
        "bottleneck": {"rate": "6Mbps", "buffer": "1bdp", "loss": 0.0},
        "flows": [{"cc": "external", "rtt": "63ms"}],
        "events": [{"at": "1s", "rate": "3Mbps"}, {"at": "2s", "rate": "6Mbps"}],
    }
    assert describe(fixed) == "6Mbps 63ms 1bdp loss 0.0 (2 rate changes)"
