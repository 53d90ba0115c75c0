"""[[workloads]] (tcplab.specs.workload): Poisson arrivals of finite flows, size distributions,
flow completion times, and that the arrivals reach the offered load."""

import numpy as np
import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.lowering import resolve
from tcplab.specs.load import parse_spec, tomllib
from tcplab.specs.workload import arrivals_ns, cdf_mean, draw_sizes, read_cdf

BASE = """
[experiment]
duration = "60s"
seed = 1

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[workloads]]
cc = "cubic"
rtt = "40ms"
load = 0.5
size = { dist = "exponential", mean = "100000B" }
stop = "50s"
"""


def spec(text=BASE, **size):
    raw = tomllib.loads(text)
    if size:
        raw["workloads"][0]["size"] = size
    return parse_spec(raw)


def test_empirical_cdf_mean_and_interpolation(tmp_path):
    # Points (100 B, 0), (200 B, 0.5), (1000 B, 1): linear between them, so the mean is
    # 0.5 x 150 + 0.5 x 600 = 375 bytes, and u = 0.75 maps to 600 bytes.
    p = tmp_path / "cdf.txt"
    p.write_text("# size cdf\n100 0\n200, 0.5\n1000 1\n")
    sizes, probs = read_cdf(str(p))
    assert cdf_mean(sizes, probs) == 375.0
    assert np.interp(0.75, probs, sizes) == 600.0
    s = spec(dist="empirical", cdf=str(p)).workloads[0].size
    x = draw_sizes(s, 20000, np.random.default_rng(1))
    assert x.min() >= 100 and x.max() <= 1000
    assert (
        abs(x.mean() - 375.5) < 5
    )  # +0.5 for the rounding up; 5 B is ~3 sigma of the mean of 20 000


def test_pareto_and_fixed_sizes():
    # Pareto, shape 2.5, mean 10 000: scale 6 000, so no size is below 6 000 bytes; the
    # sample mean of 200 000 draws is within 2 % (its variance is finite at shape > 2).
    s = spec(dist="pareto", mean="10000B", shape=2.5).workloads[0].size
    x = draw_sizes(s, 200_000, np.random.default_rng(2))
    assert x.min() >= 6000 and abs(x.mean() / 10_000 - 1) < 0.02
    assert (
        draw_sizes(spec(dist="fixed", value="1500B").workloads[0].size, 5, np.random.default_rng(0))
        == 1500
    ).all()


def test_poisson_arrival_count():
    # 100 000 arrivals at 1000/s over 100 s: count within 3 sigma (sqrt(1e5) = 316).
    t = arrivals_ns(1000.0, 0, 100 * 10**9, np.random.default_rng(5))
    assert abs(len(t) - 100_000) < 3 * 316 and (np.diff(t) >= 0).all() and t[-1] < 100 * 10**9


@pytest.mark.parametrize(
    "size, field, why",
    [
        ({"dist": "pareto", "mean": "1000B"}, "workloads[0].size.shape", "required for pareto"),
        ({"dist": "fixed", "mean": "1000B"}, "workloads[0].size", "takes value"),
        ({"dist": "exponential", "mean": "3pkt"}, "workloads[0].size.mean", "bytes"),
    ],
)
def test_bad_sizes_are_named(size, field, why):
    with pytest.raises(SpecError) as e:
        spec(**size)
    assert why in dict(e.value.problems)[field]


def test_rate_or_load_and_expansion_is_deterministic():
    with pytest.raises(SpecError) as e:
        parse_spec(tomllib.loads(BASE.replace("load = 0.5", "load = 0.5\nrate = 3")))
    assert "exactly one of rate" in dict(e.value.problems)["workloads[0]"]
    a, b = resolve(spec()), resolve(spec())
    assert [f.model_dump() for f in a.flows] == [f.model_dump() for f in b.flows]
    assert not a.workloads and all(f.start < 50 * 10**9 for f in a.flows)


@pytest.mark.engine
def test_poisson_arrivals_reach_the_offered_load(tmp_path):
    p = tmp_path / "w.toml"
    p.write_text(BASE)
    r = tcplab.run(p, tmp_path / "run", report=False)
    sizes = np.array([int(f.size.value) for f in r.spec.flows])
    # Offered: load 0.5 x 10 Mbit/s = 625 000 B/s for 50 s = 31.25 MB, in N ~ Poisson(312.5)
    # exponential sizes: the total's relative standard deviation is sqrt(2 / 312.5) = 8 %
    # (compound Poisson: var = lambda T E[S^2] = 2 lambda T mean^2); allow 3 sigma.
    offered = 0.5 * 10e6 / 8 * 50
    assert abs(sizes.sum() / offered - 1) <= 3 * np.sqrt(2 / 312.5), sizes.sum()
    # The network carries the offered load: at 50 % load every flow finishes within the
    # 10 s after the last arrival, and exactly its bytes are delivered.
    fl = r.summary_json["fct"]
    assert fl["finite_flows"] == fl["completed"] == len(sizes)
    assert r.summary["delivered_bytes"].sum() == sizes.sum()
    # No flow beats the path: one-way propagation (20 ms) + its bytes at the payload rate.
    floor = 0.020 + r.summary["size_bytes"] * 8 / (10e6 * 1448 / 1500)
    assert (r.summary["fct_s"] >= floor).all()
    assert fl["p50_s"] <= fl["p95_s"] <= fl["p99_s"]


@pytest.mark.engine
def test_seed_3_workload_runs_after_the_lost_out_fix(tmp_path):
    """Regression: with seed 3, flow 141 (CUBIC, 12 788 bytes, starting at 22.12 s among
    ~320 Poisson arrivals) once ended with lost_out = 2**32 - 1: tcp_mark_skb_lost did not
    count a segment retransmitted (by a loss probe) before it was marked lost. With the
    kernel's structure (crates/sim/src/tcp/rack.rs) the run completes, the engine's
    conservation checks pass, and every byte of a completed flow is delivered."""
    p = tmp_path / "w.toml"
    p.write_text(BASE.replace("seed = 1", "seed = 3"))
    r = tcplab.run(p, tmp_path / "run", report=False)
    done = r.summary[r.summary["fct_s"].notna()]
    assert len(done) > 0
    assert (done["delivered_bytes"] == done["size_bytes"]).all()


@pytest.mark.engine
def test_report_plots_fct_against_size(tmp_path):
    from tcplab.report.run_report import draw_report

    p = tmp_path / "w.toml"
    p.write_text(
        BASE.replace('duration = "60s"', 'duration = "8s"').replace('stop = "50s"', 'stop = "5s"')
    )
    r = tcplab.run(p, tmp_path / "run", report=False)
    fig = draw_report(r)
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert any(t.startswith("FCT against size") for t in titles) and "FCT distribution" in titles
    # A run without finite flows keeps the six-row, three-column report and its numbers
    # row (three text axes): no FCT panels.
    q = tmp_path / "bulk.toml"
    q.write_text(BASE.split("[[workloads]]")[0] + '[[flows]]\ncc = "cubic"\nrtt = "40ms"\n')
    q.write_text(q.read_text().replace('duration = "60s"', 'duration = "2s"'))
    assert len(draw_report(tcplab.run(q, tmp_path / "bulk", report=False)).axes) == 18 + 3
