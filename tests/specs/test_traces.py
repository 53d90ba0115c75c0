"""Trace-driven links (Mahimahi format) and policers in specs: reading and checking trace
files, paths relative to the spec file, the fields' errors, the engine config they make,
and runs on the real simulator (the engine's own scenario tests are in
crates/sim/tests/shaping_scenarios.rs)."""

import shutil
from pathlib import Path

import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.lowering import world_config
from tcplab.specs.load import load_spec, parse_spec
from tcplab.specs.traces import TraceRate, read_trace

TRACES = Path(__file__).resolve().parents[2] / "traces"

BASE = """
[experiment]
duration = "20s"
sample_interval = "100ms"

[bottleneck]
rate = {rate}
delay = "10ms"
buffer = "1bdp"
{extra}

[[flows]]
cc = "{cc}"
rtt = "40ms"
count = {count}
"""


def spec_file(tmp_path, rate, extra="", cc="cubic", count=1):
    p = tmp_path / "spec.toml"
    p.write_text(BASE.format(rate=rate, extra=extra, cc=cc, count=count))
    return p


def problems(path):
    with pytest.raises(SpecError) as e:
        load_spec(path)
    return dict(e.value.problems)


def test_shipped_traces_have_their_stated_mean_rates():
    # constant: 1000 opportunities of 12 000 bit in 1 s; square: 5000 x 2 + 2500 in 10 s
    # = 12 500 x 12 000 bit / 10 s = 15 Mbit/s (the mean of 24 and 6).
    assert int(read_trace(TRACES / "constant-12mbps")) == 12_000_000
    assert int(read_trace(TRACES / "square-24-6mbps-5s")) == 15_000_000


@pytest.mark.parametrize(
    "text, why",
    [
        ("1\n\n2\n", "line 2"),
        ("5\n3\n", "non-decreasing"),
        ("0\n0\n", "nonzero"),
        ("", "empty"),
        ("1.5\n", "whole number"),
    ],
)
def test_bad_trace_files_are_refused_naming_the_field_and_line(tmp_path, text, why):
    (tmp_path / "bad").write_text(text)
    p = spec_file(tmp_path, '{ trace = "bad" }')
    msg = problems(p)["bottleneck.rate"]
    assert why in msg and "bad" in msg


def test_trace_paths_are_relative_to_the_spec_file_and_written_absolute(tmp_path):
    (tmp_path / "traces").mkdir()
    shutil.copy(TRACES / "constant-12mbps", tmp_path / "traces" / "c")
    spec = load_spec(spec_file(tmp_path, '{ trace = "traces/c" }'))
    assert isinstance(spec.bottleneck.rate, TraceRate) and spec.bottleneck.rate == 12_000_000
    dumped = spec.to_dict()["bottleneck"]["rate"]
    assert dumped == {"trace": str(tmp_path / "traces" / "c")}
    assert problems(spec_file(tmp_path, '{ trace = "nope" }'))["bottleneck.rate"].endswith(
        "no such trace file"
    )


def test_field_errors(tmp_path):
    trace = f'{{ trace = "{TRACES / "constant-12mbps"}" }}'
    p = spec_file(
        tmp_path,
        trace,
        extra='policer = { rate = "5Mbps", burst = "1000B" }\n'
        'reverse = { delay = "1ms" }\n'
        '[[events]]\nat = "1s"\nrate = "5Mbps"',
    )
    got = problems(p)
    assert "at least one full packet (1500 bytes)" in got["bottleneck.policer.burst"]
    assert "rate events are not allowed" in got["events[0].rate"]
    assert "reverse direction has the bottleneck's delay" in got["bottleneck.reverse.delay"]
    got = problems(spec_file(tmp_path, '{ trace = "x", rate = "1Mbps" }'))
    assert 'trace = "FILE"' in got["bottleneck.rate"]


def test_a_plain_dumbbell_config_shapes_nothing():
    # Both keys are written; nothing shapes a link and the ACK direction is the engine's
    # default (null): the data direction's rate and delay, unlimited.
    spec = load_spec(Path(__file__).resolve().parents[2] / "experiments" / "quickstart.toml")
    cfg = world_config(spec)
    assert cfg["shaping"] == {} and cfg["bottleneck_reverse"] is None


def test_engine_config_names_each_shaped_link(tmp_path):
    trace = f'{{ trace = "{TRACES / "constant-12mbps"}" }}'
    p = spec_file(
        tmp_path,
        '"50Mbps"',
        extra=f'policer = {{ rate = "5Mbps", burst = "10pkt" }}\nreverse = {{ rate = {trace} }}',
        count=2,
    )
    cfg = world_config(load_spec(p))
    assert cfg["shaping"]["bottleneck"] == {
        "trace": None,
        "policer": {"rate_bps": 5_000_000, "burst_bytes": 15_000},
    }
    assert cfg["shaping"]["bottleneck_reverse"]["policer"] is None
    assert cfg["shaping"]["bottleneck_reverse"]["trace"]["opportunities_ms"] == list(range(1, 1001))
    assert cfg["bottleneck_reverse"]["rate_bps"] == 12_000_000


@pytest.mark.engine
def test_constant_trace_runs_as_the_fixed_rate_link(tmp_path):
    # Two CUBIC flows over a 12 Mbit/s link and over the constant 12 Mbit/s trace:
    # utilisation within 1 % absolute (the reasoning is in shaping_scenarios.rs).
    trace = f'{{ trace = "{TRACES / "constant-12mbps"}" }}'
    util = []
    for i, rate in enumerate(['"12Mbps"', trace]):
        d = tmp_path / str(i)
        d.mkdir()
        r = tcplab.run(spec_file(d, rate, count=2), d / "run")
        util.append(r.aggregate["utilization"])
    assert abs(util[0] - util[1]) <= 0.01, util


@pytest.mark.engine
def test_a_policed_bottleneck_engages_bbrs_lt_bw(tmp_path):
    # As crates/sim/tests/shaping_scenarios.rs, from a spec: 50 Mbit/s policed at 5 Mbit/s.
    p = spec_file(
        tmp_path, '"50Mbps"', extra='policer = { rate = "5Mbps", burst = "20000B" }', cc="bbr"
    )
    r = tcplab.run(p, tmp_path / "run")
    assert r.series["cc_lt_use_bw"].max() == 1.0
    # Goodput at most the policed payload rate plus the bucket over the run: 4.83 + 0.008.
    assert r.summary["goodput_bps"].iloc[0] <= 5e6 * 1448 / 1500 + 20_000 * 8 / 20


def test_bbrprime_fig10_runs_over_the_shipped_synthetic_trace():
    # The LTE entry is runnable now, over traces/synthetic-lte.down (named relative to the
    # entry file), and says it is not the paper's link.
    from tcplab.lowering import world_config
    from tcplab.reproduce.catalogue import load_entry

    root = Path(__file__).resolve().parents[2] / "experiments" / "papers" / "bbrprime"
    e = load_entry(root / "bbrprime-fig10-lte-5km.toml")
    assert e.runnable and "not the paper's" in e.meta.title
    cfg = world_config(parse_spec(e.raw))
    assert cfg["shaping"]["bottleneck"]["trace"]["name"] == "synthetic-lte.down"
    assert cfg["shaping"]["bottleneck_reverse"]["trace"]["name"] == "synthetic-lte.up"
    assert not load_entry(root / "bbrprime-fig11-lte-vs-distance.toml").runnable
