"""[[checks]]: metric expressions on a hand-made summary, comparisons, validation, and
`tcplab run` exiting 1 with the failing check named."""

import math

import pytest
from tcplab.analysis.checks import evaluate, metric_value
from tcplab.cli.app import main
from tcplab.specs.checks import Check

SUMMARY = {
    "aggregate": {"jain_index": 0.8, "utilization": 0.95},
    "by_cc": {"bbr": {"flows": 2, "share": 0.75, "share_minus_fair_share": 0.0833}},
    "flows": [
        {
            "flow": 0,
            "cc": "bbr",
            "goodput_bps": 4e6,
            "sent_packets": 1000,
            "retransmitted_packets": 100,
            "mean_rtt_ms": 30.0,
        },
        {
            "flow": 1,
            "cc": "bbr",
            "goodput_bps": 5e6,
            "sent_packets": 3000,
            "retransmitted_packets": 200,
            "mean_rtt_ms": 50.0,
        },
        {
            "flow": 2,
            "cc": "cubic",
            "goodput_bps": 3e6,
            "sent_packets": 2000,
            "retransmitted_packets": 20,
            "mean_rtt_ms": None,
        },
    ],
}


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("jain_index", 0.8),
        ("share[bbr]", 0.75),  # the group's share (by_cc)
        ("goodput_bps[bbr]", 9e6),  # summed: 4 + 5 Mbit/s
        (
            "retransmission_rate[bbr]",
            300 / 4000,
        ),  # the group's ratio, not the mean of 0.1 and 0.0667
        ("mean_rtt_ms[bbr]", 40.0),  # averaged over the group's flows
        ("goodput_bps[flow2]", 3e6),
    ],
)
def test_metric_expressions_on_a_handmade_summary(expr, expected):
    assert metric_value(SUMMARY, expr) == pytest.approx(expected)


def test_undefined_metrics_are_nan_and_never_pass():
    assert math.isnan(metric_value(SUMMARY, "mean_rtt_ms[cubic]"))
    assert not evaluate(Check(metric="mean_rtt_ms[cubic]", op="<=", value=1e9), SUMMARY).passed


def test_ratio_and_tolerance_checks():
    # cubic retransmitted 20, bbr 300: 20 <= 0.1 x 300 = 30 holds, 20 <= 0.05 x 300 = 15 does not
    assert evaluate(
        Check(
            metric="retransmitted_packets[cubic]",
            op="<=",
            value=0.1,
            of="retransmitted_packets[bbr]",
        ),
        SUMMARY,
    ).passed
    o = evaluate(
        Check(
            metric="retransmitted_packets[cubic]",
            op="<=",
            value=0.05,
            of="retransmitted_packets[bbr]",
        ),
        SUMMARY,
    )
    assert not o.passed and o.target == pytest.approx(15.0)
    assert evaluate(
        Check(metric="jain_index", op="within", value=0.85, tolerance=0.05), SUMMARY
    ).passed
    assert not evaluate(
        Check(metric="jain_index", op="within", value=0.86, tolerance=0.05), SUMMARY
    ).passed


@pytest.mark.parametrize(
    "value, tolerance, passes",
    [
        # cubic 20 vs bbr 300 retransmissions: the ratio is 20/300 = 0.0667.
        (0.10, 0.04, True),  # |0.0667 - 0.10| = 0.0333 <= 0.04
        (0.10, 0.03, False),  # 0.0333 > 0.03; an absolute reading (|20 - 30| = 10) fails both
        (0.05, 0.02, True),  # |0.0667 - 0.05| = 0.0167 <= 0.02
        (0.0, 0.07, True),  # |0.0667 - 0| <= 0.07
    ],
)
def test_within_of_reads_its_tolerance_on_the_ratio(value, tolerance, passes):
    o = evaluate(
        Check(
            metric="retransmitted_packets[cubic]",
            op="within",
            value=value,
            tolerance=tolerance,
            of="retransmitted_packets[bbr]",
        ),
        SUMMARY,
    )
    assert o.passed is passes
    assert o.target == pytest.approx(value * 300)


def test_within_of_a_zero_reference_is_undefined():
    zero = {**SUMMARY, "aggregate": {**SUMMARY["aggregate"], "retransmitted_packets": 0}}
    assert not evaluate(
        Check(
            metric="retransmitted_packets[cubic]",
            op="within",
            value=1.0,
            tolerance=100.0,
            of="retransmitted_packets",
        ),
        zero,
    ).passed


SPEC = """
[experiment]
duration = "2s"

[bottleneck]
rate = "10Mbps"
delay = "5ms"

[[flows]]
cc = "reno"
rtt = "20ms"
count = 2

[[checks]]
name = "reno shares evenly"
metric = "share[flow0]"
op = "within"
value = 0.5
tolerance = 0.05

[[checks]]
name = "one flow takes everything"
metric = "share[flow0]"
op = ">="
value = 0.9
"""


def test_run_exits_1_naming_the_failing_check(fake_engine, write_spec, tmp_path, capsys):
    # the stand-in engine shares the bottleneck equally: flow0's share is 0.5
    assert (
        main(["run", str(write_spec(SPEC)), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 1
    )
    cap = capsys.readouterr()
    assert "PASS  reno shares evenly" in cap.out
    assert "FAIL  one flow takes everything: ours 0.5" in cap.out
    assert "1 of 2 checks failed: one flow takes everything" in cap.err
    assert (tmp_path / "out" / "summary.json").is_file()  # the run itself is kept


@pytest.mark.parametrize(
    "line, says",
    [
        (
            'metric = "share[bbr]"',
            "checks[0].metric: share[bbr]: no flow runs 'bbr'; the spec's algorithms: reno",
        ),
        ('metric = "goodput_bps[flow7]"', "the spec has 2 flows"),
        ('metric = "nonsense"', "unknown aggregate metric 'nonsense'"),
        ('op = "=="', "checks[0].op"),
        ('value = "0.5"', "checks[0].value: must be a number"),
    ],
)
def test_bad_checks_name_the_field(fake_engine, write_spec, capsys, line, says):
    key = line.split(" = ")[0]
    text = SPEC.replace(
        {"metric": 'metric = "share[flow0]"', "op": 'op = "within"', "value": "value = 0.5"}[key],
        line,
        1,
    )
    assert main(["validate", str(write_spec(text))]) == 2
    assert says in capsys.readouterr().err


WINDOWED = """
[experiment]
duration = "10s"
analysis = ["7s", "10s"]

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "2bdp"

[[flows]]
cc = "cubic"
rtt = "40ms"

[[events]]
at = "5s"
rate = "2Mbps"

[[checks]]
metric = "window.total_goodput_bps"
op = "within"
value = 1.93e6
tolerance = 0.15e6

[[checks]]
metric = "window.utilization"
op = ">="
value = 0.85
"""


def test_an_analysis_window_measures_only_its_part_of_the_run(tmp_path, capsys):
    """10 Mbit/s for 5 s, then 2 Mbit/s: over (7 s, 10 s] a busy CUBIC flow delivers about
    2 Mbit/s x 1448/1500 = 1.93 Mbit/s of payload, and its utilisation is measured
    against the window's 2 Mbit/s capacity, not the run's (over the whole run the goodput is
    ~5.5 Mbit/s). The window starts at 7 s because the loss episode the step causes ends
    around 6 s: a hole filled just after 6 s releases the data held behind it into the
    window (seen with tcplab 0.2.0: 2.085 Mbit/s over (6 s, 10 s], above the link)."""
    import json

    spec = tmp_path / "w.toml"
    spec.write_text(WINDOWED)
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 0
    doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert doc["window"]["from_s"] == 7.0 and doc["window"]["to_s"] == 10.0
    assert doc["aggregate"]["total_goodput_bps"] > 4e6
    assert metric_value(doc, "window.share[cubic]") == pytest.approx(1.0)


@pytest.mark.parametrize(
    "edit, field",
    [
        (('analysis = ["7s", "10s"]', 'analysis = ["7s", "11s"]'), "experiment.analysis"),
        (('analysis = ["7s", "10s"]', 'analysis = ["7s", "5s"]'), "experiment.analysis"),
        (('analysis = ["7s", "10s"]\n', ""), "checks[0].metric"),
    ],
)
def test_bad_analysis_windows_name_the_field(tmp_path, capsys, edit, field):
    spec = tmp_path / "w.toml"
    spec.write_text(WINDOWED.replace(*edit))
    assert main(["validate", str(spec)]) == 2
    assert field in capsys.readouterr().err


NAMED_WINDOWS = (
    WINDOWED.replace(
        'analysis = ["7s", "10s"]', 'windows = { fast = ["1s", "5s"], slow = ["7s", "10s"] }'
    )
    .replace('metric = "window.total_goodput_bps"', 'metric = "windows.slow.total_goodput_bps"')
    .replace(
        'metric = "window.utilization"',
        'metric = "windows.fast.total_goodput_bps"\nof = "windows.slow.total_goodput_bps"',
    )
    .replace("value = 0.85", "value = 4.0")
)


def test_named_windows_compare_two_phases_of_one_run(tmp_path, capsys):
    """The same run as above, read over two named windows: (1 s, 5 s] at 10 Mbit/s and
    (7 s, 10 s] at 2 Mbit/s. Goodput over the first is about 10 x 1448/1500 = 9.65 Mbit/s,
    over the second about 1.93 Mbit/s: the first is about 5 times the second (the check
    asks >= 4 x, with room for CUBIC's slow start in the first second)."""
    import json

    spec = tmp_path / "w.toml"
    spec.write_text(NAMED_WINDOWS)
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") == 2, out
    doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert set(doc["windows"]) == {"fast", "slow"}
    assert doc["windows"]["fast"]["from_s"] == 1.0 and doc["windows"]["slow"]["to_s"] == 10.0
    assert metric_value(doc, "windows.fast.utilization") == pytest.approx(0.95, abs=0.05)
    assert "window" not in doc  # no [experiment] analysis


@pytest.mark.parametrize(
    "edit, field, says",
    [
        (
            ('slow = ["7s", "10s"]', 'slow = ["7s", "11s"]'),
            "experiment.windows.slow",
            "<= experiment.duration",
        ),
        (('slow = ["7s", "10s"]', 'Slow = ["7s", "10s"]'), "experiment.windows.Slow", "lower-case"),
        (('slow = ["7s", "10s"]', 'slow = ["7s"]'), "experiment.windows.slow", "[from, to]"),
        (
            ('"windows.slow.total_goodput_bps"\nop', '"windows.late.total_goodput_bps"\nop'),
            "checks[0].metric",
            "names no window",
        ),
    ],
)
def test_bad_named_windows_name_the_field(tmp_path, capsys, edit, field, says):
    spec = tmp_path / "w.toml"
    text = NAMED_WINDOWS.replace(*edit)
    assert text != NAMED_WINDOWS
    spec.write_text(text)
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert field in err and says in err, err
