"""A latency probe's statistics as metrics (metric_table.PROBE): ``NAME[probe]`` in
``[[checks]]``, sweep tables and ``tcplab compare``; hand-computed expectations on the
empty 20 ms path of tests/specs/test_probes.py."""

import pytest
import tcplab
from tcplab.analysis.checks import evaluate, metric_value
from tcplab.cli.app import main
from tcplab.errors import SpecError
from tcplab.report.compare import compare_summaries
from tcplab.runs.result import load_run
from tcplab.specs.checks import Check
from tcplab.specs.load import parse_spec, tomllib

BASE = """
[experiment]
duration = "1s"
seed = 1

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[probes]]
name = "ping"
interval = "100ms"
rtt = "20ms"
"""

# 20 ms of propagation, 84 bytes serialized twice at 10 Mbit/s (67.2 us each) and four
# times on the 1 Gbit/s access links (0.672 us each): 20.137088 ms for every probe.
EMPTY_PATH_RTT_MS = 20.137088


def check(metric: str, op: str, value: float, tolerance: float = 0.0) -> str:
    return (
        f'[[checks]]\nmetric = "{metric}"\nop = "{op}"\nvalue = {value}\ntolerance = {tolerance}\n'
    )


@pytest.mark.engine
def test_a_check_on_the_probes_median_passes_and_fails_on_the_empty_path(tmp_path, capsys):
    passing = check("probe_median_rtt_ms[ping]", "within", EMPTY_PATH_RTT_MS, 1e-6)
    (tmp_path / "ok.toml").write_text(BASE + passing)
    assert main(["run", str(tmp_path / "ok.toml"), "-o", str(tmp_path / "ok"), "--no-report"]) == 0
    assert "PASS  probe_median_rtt_ms[ping] within 1e-06 of 20.1371" in capsys.readouterr().out
    # 1 us below the hand-computed RTT: the median is above it, so '<=' fails.
    failing = check("probe_median_rtt_ms[ping]", "<=", EMPTY_PATH_RTT_MS - 0.001)
    (tmp_path / "bad.toml").write_text(BASE + failing)
    assert (
        main(["run", str(tmp_path / "bad.toml"), "-o", str(tmp_path / "bad"), "--no-report"]) == 1
    )
    assert "FAIL  probe_median_rtt_ms[ping] <= 20.1361: ours 20.14" in capsys.readouterr().out
    summary = load_run(tmp_path / "ok").summary_json
    assert metric_value(summary, "probe_median_rtt_ms[ping]") == pytest.approx(
        EMPTY_PATH_RTT_MS, abs=1e-9
    )
    assert metric_value(summary, "probe_sent_packets[ping]") == 10  # at 0, 100, ..., 900 ms
    assert metric_value(summary, "probe_loss_rate[ping]") == 0.0
    below = Check(metric="probe_p95_rtt_ms[ping]", op="<", value=EMPTY_PATH_RTT_MS - 1e-6)
    assert not evaluate(below, summary).passed


@pytest.mark.engine
def test_a_sweep_table_lists_the_probes_median_and_count(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        BASE + '[sweep]\n"probes[0].interval" = ["100ms", "200ms"]\n'
        'metrics = ["probe_median_rtt_ms[ping]", "probe_sent_packets[ping]"]\n'
    )
    table = tcplab.sweep(spec, tmp_path / "sw", workers=1).sort_values("probes[0].interval")
    # The path is empty whatever the interval: every probe takes 20.137088 ms; 1 s holds
    # 10 probes at 100 ms and 5 at 200 ms.
    assert table["probe_median_rtt_ms[ping]"].tolist() == pytest.approx(
        [EMPTY_PATH_RTT_MS] * 2, abs=1e-9
    )
    assert sorted(table["probe_sent_packets[ping]"].tolist()) == [5, 10]


@pytest.mark.parametrize(
    "metric, words",
    [
        ("probe_median_rtt_ms[pong]", "no probe is named 'pong' (the spec's probes: ping)"),
        ("probe_median_rtt_ms", "a probe metric names its probe: probe_median_rtt_ms[NAME]"),
        ("probe_mean_rtt_ms[ping]", "unknown probe metric 'probe_mean_rtt_ms'; known: "),
        ("mean_rtt_ms[ping]", "unknown probe metric 'mean_rtt_ms'"),
    ],
)
def test_bad_probe_metrics_are_refused_naming_the_field(metric, words):
    with pytest.raises(SpecError) as e:
        parse_spec(tomllib.loads(BASE + check(metric, ">=", 0)))
    assert "checks[0].metric" in str(e.value) and words in str(e.value), str(e.value)


def test_a_probe_metric_needs_a_probe_and_has_no_window_form():
    no_probe = BASE.split("[[probes]]")[0] + '[[flows]]\ncc = "cubic"\n'
    with pytest.raises(SpecError, match=r"checks\[0\].metric.*probes: none; add \[\[probes\]\]"):
        parse_spec(tomllib.loads(no_probe + check("probe_p95_rtt_ms[ping]", "<", 30)))
    windowed = BASE.replace("seed = 1", 'seed = 1\nanalysis = ["0s", "1s"]')
    with pytest.raises(SpecError, match="probe metrics are over the whole run, not in a window"):
        parse_spec(tomllib.loads(windowed + check("window.probe_p95_rtt_ms[ping]", "<", 30)))


def test_a_bad_sweep_metric_names_sweep_metrics(tmp_path):
    from tcplab.runs.sweep import plan_sweep

    raw = tomllib.loads(
        BASE + '[sweep]\n"experiment.seed" = [1]\nmetrics = ["probe_p99_rtt_ms[x]"]\n'
    )
    with pytest.raises(SpecError, match=r"sweep.metrics.*no probe is named 'x'"):
        plan_sweep(raw)


def test_compare_lists_each_probes_statistics_by_name():
    def summary(median, p95, loss):
        probe = {
            "name": "ping",
            "median_ms": median,
            "p95_ms": p95,
            "p99_ms": p95,
            "loss_rate": loss,
        }
        return {"aggregate": {}, "by_cc": {}, "flows": [], "probes": [probe]}

    c = compare_summaries([summary(20.0, 30.0, 0.0), summary(25.0, 45.0, 0.1)], ["a", "b"])
    rows = c.table[c.table["scope"] == "probe:ping"].set_index("metric")
    assert list(rows.index) == [
        "probe_median_rtt_ms",
        "probe_p95_rtt_ms",
        "probe_p99_rtt_ms",
        "probe_loss_rate",
    ]
    assert rows.loc["probe_median_rtt_ms", "b - a"] == pytest.approx(5.0)
    assert rows.loc["probe_p95_rtt_ms", "b / a"] == pytest.approx(1.5)
    assert rows.loc["probe_loss_rate", "b"] == pytest.approx(0.1)
