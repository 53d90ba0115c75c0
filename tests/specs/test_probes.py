"""[[probes]] (tcplab.specs.probes, crates/sim/src/probe.rs): latency probes, ping beside
the flows, through the spec, the engine, summary.json, probes.parquet and the report;
hand-computed expectations."""

import pandas as pd
import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.lowering import world_config
from tcplab.runs.result import load_run
from tcplab.specs.load import parse_spec, tomllib
from tcplab.specs.probes import rtt_stats

BASE = """
[experiment]
duration = "1s"
seed = 1

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
"""

PROBE = """
[[probes]]
name = "ping"
interval = "100ms"
rtt = "20ms"
"""

CUBIC = """
[[flows]]
cc = "cubic"
rtt = "20ms"
"""


def run(tmp_path, text, name="run", report=False):
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return tcplab.run(p, tmp_path / name, report=report)


def spec(text):
    return parse_spec(tomllib.loads(text))


def test_defaults_are_flents_interval_and_pings_packet():
    # Flent's RRUL pings every STEP_SIZE = 0.2 s; iputils ping's default packet is 56 data
    # bytes + 8 ICMP + 20 IPv4 = 84 bytes.
    s = spec(BASE + "[[probes]]\n")
    (p,) = s.probes
    assert (p.interval, p.size.value, p.size.unit) == (200_000_000, 84, "bytes")


@pytest.mark.engine
def test_a_probe_alone_on_an_empty_20ms_path_takes_propagation_plus_serialization(tmp_path):
    # Base RTT 20 ms: 2 x 5 ms on the bottleneck, the other 10 ms on the receiver access
    # link (2 x 5 ms). 84 bytes = 672 bits: 67.2 us at 10 Mbit/s, each way; the access
    # links run at 100 x the bottleneck (1 Gbit/s): 0.672 us on each of 4 directions.
    # RTT = 20 + 2 x 0.0672 + 4 x 0.000672 = 20.137088 ms, for every probe. Probes at
    # 0, 100, ..., 900 ms: 10 sent, all back before 1 s.
    expected_ms = 20 + 2 * 672 / 10e6 * 1e3 + 4 * 672 / 1e9 * 1e3
    r = run(tmp_path, BASE + PROBE)
    (s,) = r.summary_json["probes"]
    assert (s["name"], s["count"], s["echoed"], s["lost"]) == ("ping", 10, 10, 0)
    for k in ("min_ms", "median_ms", "p95_ms", "p99_ms", "max_ms"):
        assert s[k] == pytest.approx(expected_ms, abs=1e-9)
    table = r.run.probe_rtts
    assert list(table.columns) == ["probe", "name", "seq", "time_s", "rtt_ms"]
    assert table["time_s"].tolist() == pytest.approx([k / 10 for k in range(10)])
    assert table["rtt_ms"].tolist() == pytest.approx([expected_ms] * 10, abs=1e-9)
    # Stored and read back: probes.parquet and probes.csv, the same rows.
    stored = pd.read_parquet(tmp_path / "run" / "probes.parquet")
    pd.testing.assert_frame_equal(stored, table, check_dtype=False)
    assert (tmp_path / "run" / "probes.csv").is_file()
    assert load_run(tmp_path / "run").run.probe_rtts["rtt_ms"].tolist() == pytest.approx(
        [expected_ms] * 10, abs=1e-9
    )


@pytest.mark.engine
def test_beside_cubic_filling_one_bdp_the_median_probe_waits_for_most_of_the_buffer(tmp_path):
    # 10 Mbit/s, 40 ms: 1 BDP = 50 kB, 40 ms of queue when full. CUBIC's window swings
    # between 2 BDP (pipe + full buffer: the loss) and 0.7 x 2 = 1.4 BDP (beta 717/1024),
    # so the standing queue stays between 0.4 and 1 BDP, 16-40 ms; CUBIC's plateau
    # keeps it near the top most of the time, so the median probe waits more than half
    # the buffer. Expected: median RTT - base RTT in [16, 41.2] ms (41.2: a full buffer
    # plus the packet in service, 1.2 ms); measured from 5 s (after slow start).
    text = (
        BASE.replace('"1s"', '"30s"').replace('"5ms"', '"10ms"')
        + CUBIC.replace("20ms", "40ms")
        + PROBE.replace("20ms", "40ms")
        + 'start = "5s"\n'
    )
    r = run(tmp_path, text)
    (s,) = r.summary_json["probes"]
    assert s["count"] == 250
    base = 40 + 2 * 672 / 10e6 * 1e3
    assert 16.0 <= s["median_ms"] - base <= 41.2, s
    assert s["min_ms"] >= base - 1e-9
    assert s["p99_ms"] <= base + 41.2 + 1e-9


@pytest.mark.engine
def test_specs_without_probes_have_none_in_the_engine_config(tmp_path):
    assert world_config(spec(BASE + CUBIC))["probes"] == []
    assert len(world_config(spec(BASE + CUBIC + PROBE))["probes"]) == 1


@pytest.mark.engine
def test_the_report_draws_the_probe_rtt_and_lists_its_numbers(tmp_path):
    r = run(tmp_path, BASE + CUBIC + PROBE, report=True)
    fig = r.report()
    labels = [
        t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()
    ]
    assert "probe (ping) RTT: ping" in labels
    html = (tmp_path / "run" / "report.html").read_text()
    assert "probe (ping) RTT: ping" in html and "<th>probe (ping) RTT</th>" in html
    from tcplab.report import run_report as rr

    lines = rr._numbers_blocks(r)[0]
    k = lines.index("probe (ping) RTT ping:")
    # The listed loss is the run's own count (CUBIC's slow-start overshoot in this 1 BDP
    # buffer drops a ping or not, as the engine's TCP details move; 1 since 0.14.0).
    (s,) = r.summary_json["probes"]
    assert lines[k + 1].startswith("  median ")
    assert lines[k + 1].endswith(f" lost {s['lost']}/{s['count']}"), lines[k + 1]


def test_rtt_stats_are_linear_percentiles():
    # 1..100 ms: median 50.5, p95 = 95.05, p99 = 99.01 (numpy's linear rule by hand:
    # position (n - 1) q / 100).
    st = rtt_stats([float(v) for v in range(1, 101)])
    assert st == pytest.approx(
        {"min_ms": 1.0, "median_ms": 50.5, "p95_ms": 95.05, "p99_ms": 99.01, "max_ms": 100.0}
    )
    assert rtt_stats([]) == dict.fromkeys(st)


@pytest.mark.parametrize(
    "table, field, words",
    [
        ('interval = "0ms"', "probes[0].interval", "must be > 0"),
        ('interval = "100us"', "probes[0].interval", "at least 1ms"),
        ('size = "20B"', "probes[0].size", "[28, 65535]"),
        ('size = "2pkt"', "probes[0].size", "in bytes"),
        ('rtt = "4ms"', "probes[0].rtt", "shorter than 2 x bottleneck.delay"),
        ('start = "2s"', "probes[0].stop", "start < stop"),
        ('name = "a b"', "probes[0].name", "A-Z a-z 0-9"),
        ("colour = 1", "probes[0].colour", "allowed: name, interval, size"),
    ],
)
def test_bad_probes_are_refused_naming_the_field(table, field, words):
    with pytest.raises(SpecError) as e:
        spec(BASE + "[[probes]]\n" + table + "\n")
    assert field in str(e.value) and words in str(e.value), str(e.value)


def test_two_probes_need_two_names_and_probes_need_the_dumbbell():
    with pytest.raises(SpecError, match=r"probes\[1\].name.*names two probes"):
        spec(BASE + '[[probes]]\nname = "p"\n[[probes]]\nname = "p"\n')
    with pytest.raises(SpecError, match=r"experiment.pcap: not with \[\[probes\]\]"):
        spec(BASE.replace("seed = 1", 'seed = 1\npcap = ["bottleneck"]') + "[[probes]]\n")
    text = BASE + '[[links]]\nname = "l2"\nrate = "5Mbps"\n' + CUBIC + "[[probes]]\n"
    with pytest.raises(SpecError, match="probes run on the dumbbell only"):
        spec(text)


@pytest.mark.engine
def test_tcplab_run_prints_the_probes_rtt_and_losses(tmp_path, capsys):
    from tcplab.cli.app import main

    (tmp_path / "p.toml").write_text(BASE + PROBE)
    assert main(["run", str(tmp_path / "p.toml"), "-o", str(tmp_path / "o"), "--no-report"]) == 0
    out = capsys.readouterr().out
    assert (
        "probe (ping) RTT ping: median 20.1 ms, p95 20.1 ms, p99 20.1 ms; 0 of 10 probes lost"
        in out
    )


@pytest.mark.engine
def test_same_spec_and_seed_give_identical_probe_files(tmp_path):
    # A lossy bottleneck (5 %) so that the seed matters: the same seed twice gives
    # byte-identical probes.parquet, probes.csv and summary.json.
    text = BASE.replace('buffer = "1bdp"', 'buffer = "1bdp"\nloss = 0.05') + CUBIC + PROBE
    a, b = run(tmp_path, text, "a"), run(tmp_path, text, "b")
    for name in ("probes.parquet", "probes.csv", "summary.json"):
        assert a.manifest["sha256"][name] == b.manifest["sha256"][name], name
