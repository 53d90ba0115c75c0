"""Rate changes in tcplab.gym.Scenarios: step changes of the bottleneck rate as the spec's
[[events]], drawn after everything else so that distributions without them sample the
episodes they always did."""

import pytest
from tcplab.errors import SpecError
from tcplab.gym import Scenarios

BASE = {"duration": 10.0, "rate_mbps": [2.0, 8.0], "rtt_ms": [50.0, 100.0]}


def test_a_distribution_without_changes_samples_what_it_always_did():
    # Seed 0 of this distribution, as sampled before rate changes existed (0.10.0): the
    # rate is log-uniform in [2, 8] to 0.1, the RTT uniform to 1 ms.
    spec = Scenarios.from_dict(BASE).sample(0)
    assert "events" not in spec
    assert spec["bottleneck"] == {"rate": "4.8Mbps", "buffer": "0.56bdp", "loss": 0.0}
    assert spec["flows"] == [{"cc": "external", "rtt": "63ms"}]
    with_changes = Scenarios.from_dict({**BASE, "rate_changes": [0, 3]}).sample(0)
    assert with_changes["bottleneck"] == spec["bottleneck"]
    assert with_changes["flows"] == spec["flows"]


def test_changes_are_events_in_the_runs_middle_within_the_rate_range():
    s = Scenarios.from_dict({**BASE, "rate_changes": [2, 2], "rate_change_factor": [0.25, 4]})
    for seed in range(20):
        events = s.sample(seed)["events"]
        assert len(events) == 2
        times = [float(e["at"].removesuffix("ms")) for e in events]
        assert times == sorted(times) and all(1000 <= t <= 9000 for t in times)
        rates = [float(e["rate"].removesuffix("Mbps")) for e in events]
        assert all(2.0 <= r <= 8.0 for r in rates)


def test_a_sampled_episode_with_changes_runs():
    import tcplab

    s = Scenarios.from_dict({**BASE, "duration": 2.0, "rate_changes": [1, 1]})
    spec = s.sample(3, "cubic")
    assert len(spec["events"]) == 1
    assert tcplab.run(spec, report=False).summary.iloc[0]["goodput_bps"] > 0


@pytest.mark.parametrize(
    ("field", "value"),
    [("rate_changes", [0.5, 2]), ("rate_changes", [3, 1]), ("rate_change_factor", [0, 2])],
)
def test_bad_ranges_are_refused_naming_the_field(field, value):
    with pytest.raises(SpecError, match=f"scenarios.{field}"):
        Scenarios.from_dict({**BASE, field: value})
