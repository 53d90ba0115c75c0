"""A trace at a factor of its rate: ``rate = { trace = FILE, scale = S }``
(tcplab.specs.traces.scale_opportunities). Hand-computed thinning and repetition, the
period kept, the field's errors, the resolved spec and digest, and a run whose goodput
follows the scaled rate."""

from pathlib import Path

import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.lowering import world_config
from tcplab.runs.digest import files_read
from tcplab.specs.load import load_spec
from tcplab.specs.traces import TraceRate, scale_opportunities

TRACES = Path(__file__).resolve().parents[2] / "traces"
CONSTANT = TRACES / "constant-12mbps"  # 1000 opportunities at 1, 2, ..., 1000 ms

SPEC = """
[experiment]
duration = "10s"
sample_interval = "100ms"

[bottleneck]
rate = {rate}
delay = "10ms"
buffer = "1bdp"

[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def spec_file(tmp_path, rate):
    p = tmp_path / "spec.toml"
    p.write_text(SPEC.format(rate=rate))
    return p


def test_halving_keeps_every_second_opportunity_and_the_last():
    # N = 4, M = 2: k = 1 -> ceil(1 x 4 / 2) = 2nd, k = 2 -> 4th.
    assert scale_opportunities((1, 2, 3, 4), 0.5) == (2, 4)


def test_one_and_a_half_repeats_opportunities_in_place():
    # N = 4, M = 6: ceil(k x 4 / 6) for k = 1..6 = 1, 2, 2, 3, 4, 4.
    assert scale_opportunities((1, 2, 3, 4), 1.5) == (1, 2, 2, 3, 4, 4)


def test_scale_one_is_the_trace_and_a_tiny_scale_keeps_one_opportunity():
    assert scale_opportunities((1, 1, 5, 9), 1.0) == (1, 1, 5, 9)
    # round(0.01 x 4) = 0 -> at least one, the last: the period stays 9 ms.
    assert scale_opportunities((1, 1, 5, 9), 0.01) == (9,)


def test_a_scaled_constant_trace_has_the_scaled_mean_and_the_same_period():
    spec = load_spec(spec_file(Path("/tmp"), f'{{ trace = "{CONSTANT}", scale = 0.25 }}'))
    rate = spec.bottleneck.rate
    assert isinstance(rate, TraceRate)
    # 250 opportunities of 12 000 bit in 1 s.
    assert int(rate) == 3_000_000 and rate.scale == 0.25
    assert rate.opportunities_ms[:3] == (4, 8, 12) and rate.opportunities_ms[-1] == 1000
    assert len(rate.opportunities_ms) == 250
    assert world_config(spec)["shaping"]["bottleneck"]["trace"]["opportunities_ms"][:2] == [4, 8]


def test_the_resolved_spec_names_the_scale_and_the_digest_tells_them_apart(tmp_path):
    plain = load_spec(spec_file(tmp_path, f'{{ trace = "{CONSTANT}" }}'))
    half = load_spec(spec_file(tmp_path, f'{{ trace = "{CONSTANT}", scale = 0.5 }}'))
    assert half.to_dict()["bottleneck"]["rate"] == {"trace": str(CONSTANT), "scale": 0.5}
    assert plain.to_dict()["bottleneck"]["rate"] == {"trace": str(CONSTANT)}
    assert files_read(half)["bottleneck.rate"] != files_read(plain)["bottleneck.rate"]


@pytest.mark.parametrize("scale", ["0", "-1", "1001", '"half"', "true", "nan"])
def test_a_bad_scale_is_refused_naming_the_field(tmp_path, scale):
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, f'{{ trace = "{CONSTANT}", scale = {scale} }}'))
    msg = dict(e.value.problems)["bottleneck.rate"]
    assert "scale is a number in (0, 1000]" in msg, msg


def test_an_unknown_key_beside_trace_is_refused(tmp_path):
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, f'{{ trace = "{CONSTANT}", factor = 2 }}'))
    assert "optionally with scale" in dict(e.value.problems)["bottleneck.rate"]


@pytest.mark.engine
def test_cubic_over_the_half_scaled_trace_gets_the_half_rate(tmp_path):
    # The constant 12 Mbit/s trace at scale 0.5 is a 6 Mbit/s link: one CUBIC flow with a
    # 1 BDP buffer fills it (utilisation over 0.9, as on a fixed-rate link) and its goodput
    # cannot pass 6 Mbit/s (12 Mbit/s would be twice that).
    r = tcplab.run(spec_file(tmp_path, f'{{ trace = "{CONSTANT}", scale = 0.5 }}'), tmp_path / "r")
    goodput = r.summary.iloc[0]["goodput_bps"]
    assert 0.9 * 6e6 < goodput <= 6e6, goodput
    assert r.aggregate["utilization"] > 0.9
