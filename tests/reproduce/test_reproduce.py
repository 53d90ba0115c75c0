"""The catalogue machinery on small hand-made entries: a claim that holds, one
that fails, one that holds only in its weaker form, a claim over every grid value, a
cached rerun, a resumed interruption, bad entries, and the shipped catalogue's --quick
listing."""

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from tcplab.cli.app import main
from tcplab.errors import SpecError
from tcplab.reproduce import PAPERS, VERDICTS, load_catalogue, reproduce

# One BBR flow alone on 10 Mbit/s, 40 ms, 1 BDP, 4 s, with 1 % random loss so that its
# two seeds differ (a loss-free single flow draws no randomness: identical seeds, which
# decide nothing): BBR keeps the link busy after its first round trips (utilisation ~0.9
# of 4 s counting start-up), so "utilization >= 0.8" holds and ">= 1.5" cannot (a link
# carries at most its rate).
ENTRY = """
[experiment]
duration = "4s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
loss = 0.01
[[flows]]
cc = "bbr"
rtt = "40ms"
[sweep]
repeat = 2
"bottleneck.buffer" = ["1bdp", "2bdp"]

[catalogue]
paper = "tum"
figure = "Fig. 99"
title = "a test entry"
max_seeds = 2
max_seeds_why = "a test: two seeds keep it short, and its labels say so"
x = "bottleneck.buffer"
plot = ["utilization"]
quick = { "experiment.duration" = "2s" }

[[catalogue.claims]]
quote = "holds"
where = "here"
headline = true
published = "about 0.9"
metric = "utilization"
op = ">="
value = 0.8
at = { "bottleneck.buffer" = ["1bdp", "2bdp"] }

[[catalogue.claims]]
quote = "fails"
where = "here"
metric = "utilization"
op = ">="
value = 1.5
at = { "bottleneck.buffer" = "1bdp" }

[[catalogue.claims]]
quote = "direction only"
where = "here"
headline = true
published = "1.1 of the link"
metric = "utilization"
op = ">="
value = 1.1
weaker = { op = ">", value = 0.5, neutral = "half the link: this test's no-effect point" }
at = { "bottleneck.buffer" = "2bdp" }
"""

NOT_RUN = """
[catalogue]
paper = "bbrprime"
figure = "Fig. 10"
title = "LTE"
needs = "a cellular link model"

[[catalogue.claims]]
quote = "BBR' keeps the queue small on LTE"
where = "Sec. 5"
"""


@pytest.fixture
def cat(tmp_path):
    root = tmp_path / "papers"
    (root / "tum").mkdir(parents=True)
    (root / "bbrprime").mkdir()
    (root / "tum" / "tum-fig99-test.toml").write_text(ENTRY)
    (root / "bbrprime" / "bbrprime-fig10-lte.toml").write_text(NOT_RUN)
    return root


def _verdicts(out: Path) -> dict[str, str]:
    with open(out / "claims.csv") as f:
        return {r["quote"]: r["verdict"] for r in csv.DictReader(f)}


def test_verdicts_report_and_plot(cat, tmp_path):
    out = tmp_path / "out"
    reproduce(None, out, root=cat, workers=1, say=lambda *_: None)
    assert _verdicts(out) == {
        "holds": "agree",
        "fails": "disagree",
        "direction only": "partly",
        "BBR' keeps the queue small on LTE": "not run",
    }
    md = (out / "report.md").read_text()
    assert (
        "![Fig. 99](plots/tum-fig99-test.png)" in md
        and (out / "plots" / "tum-fig99-test.png").stat().st_size > 0
    )
    assert "not run: a cellular link model" in md
    # Every claim whose main check fails is listed (the partly one too), with what explains
    # it: nothing yet (no control).
    assert (
        "2 claims of the papers fail their main check (1 disagree, 1 partly): "
        "2 open: no control experiment yet." in md
    )
    # partly shows the effect-size ratio: (ours - 0.5) / (1.1 - 0.5), ours about 0.9: about
    # 0.67x, inside the 0.5x-2x band of "direction only" (against 1.5 it was 0.4x: a miss)
    row = next(line for line in md.splitlines() if line.startswith('| <a id="tum-fig99-test-3">'))
    assert "x the paper's" in row
    assert "full catalogue: 2 entries" in md
    # The paper's section opens with its main claims, one line each, both numbers side by
    # side: reproduced, direction only with its factor; each on 2 of TUM's 5 seeds.
    section = md[md.index("## " + PAPERS["tum"]) :]
    assert section.splitlines()[2].startswith("**Main claims**")
    heads = [line for line in section.splitlines() if line.startswith("- **")]
    assert heads[0].startswith(
        "- **reproduced (2 of the paper's 5 seeds)**: holds ([tum-fig99-test #1]"
    )
    assert "Paper: about 0.9; ours: 0.9" in heads[0]
    assert heads[1].startswith("- **direction only (effect 0.")
    assert "x the paper's) (2 of the paper's 5 seeds)**: direction only" in heads[1]
    assert "Paper: 1.1 of the link" in heads[1]
    # and the top of the report counts them per paper: all three on fewer seeds than TUM's
    # five, so in the last column, apart from agree / partly / disagree
    assert "| " + PAPERS["tum"] + " | 0 | 0 | 0 | 0 | 0 | 0 | 3 |" in md
    assert '<img src="plots/tum-fig99-test.png"' in (out / "report.html").read_text()


def test_a_range_claim_compares_how_much_a_metric_varies_across_two_axes():
    """ "Depends on X more than on Y": the range (max - min over the axis) across one axis
    against the range across another, one range per seed where every axis value has that
    seed. Hand-made runs: share 0.9 / 0.5 at 1 / 5 BDP (rtt 50 ms) in seed 1, 0.88 / 0.5
    in seed 2 -> ranges 0.40, 0.38; at 2.5 BDP shares 0.60, 0.70 (seed 2 at 25 ms: 0.72)
    and 0.65 at 10 / 25 / 50 ms, 10 ms in seed 1 only -> the range of the means
    0.60 .. 0.71 -> 0.11 (the reference is the range of the means)."""
    from tcplab.reproduce.catalogue import Claim
    from tcplab.reproduce.runner import Run, axis_range, axis_ranges, evaluate_claim

    def run(rtt, buf, share, seed=1):
        return Run(
            {"rtt": rtt, "buffer": buf}, seed, f"{rtt}{buf}{seed}", {"aggregate": {"x": share}}
        )

    runs = [
        run("50ms", "1bdp", 0.9),
        run("50ms", "5bdp", 0.5),
        run("50ms", "1bdp", 0.88, seed=2),
        run("50ms", "5bdp", 0.5, seed=2),
        run("50ms", "2.5bdp", 0.65),
        run("50ms", "2.5bdp", 0.65, seed=2),
        run("10ms", "2.5bdp", 0.60),
        run("25ms", "2.5bdp", 0.70),
        run("25ms", "2.5bdp", 0.72, seed=2),
    ]
    assert axis_range(runs, {"rtt": "50ms"}, "x", "buffer") == pytest.approx(0.89 - 0.5)
    assert axis_ranges(runs, {"rtt": "50ms"}, "x", "buffer") == pytest.approx([0.40, 0.38])
    assert axis_range(runs, {"buffer": "2.5bdp"}, "x", "rtt") == pytest.approx(0.71 - 0.60)
    # 10 ms has seed 1 only: no two common seeds, one range of the means (n = 1)
    assert axis_ranges(runs, {"buffer": "2.5bdp"}, "x", "rtt") == pytest.approx([0.11])
    claim = Claim(
        quote="q",
        where="w",
        metric="x",
        op=">",
        value=2,
        across="buffer",
        at={"rtt": "50ms"},
        of="x",
        of_across="rtt",
        of_at={"buffer": "2.5bdp"},
        weaker={"op": ">", "value": 1},
    )

    class E:  # the entry is only carried along (its paper: for the seed count)
        meta = SimpleNamespace(paper="cws")  # a paper that states no count of seeds

    # 0.39 +- 0.127 (two seeds) against 2 x 0.11 = 0.22, theta 0.01 (a share): [0.263,
    # 0.517] lies beyond 0.22 + 0.01
    r = evaluate_claim(E(), claim, runs)
    assert (r.verdict, r.ours, r.target) == ("agree", pytest.approx(0.39), pytest.approx(0.22))
    r = evaluate_claim(
        E(), claim.model_copy(update={"value": 5}), runs
    )  # against 0.55: [0.263, 0.517] is below 0.56, fails; weaker > 0.11 + 0.01 holds
    assert r.verdict == "partly"
    # the effect ratio: (0.39 - 0.11) / (0.55 - 0.11)
    assert r.effect == pytest.approx(0.28 / 0.44)


def test_a_rerun_is_cached(cat, tmp_path):
    out = tmp_path / "out"
    said: list[str] = []
    reproduce(["tum"], out, root=cat, workers=1, say=said.append)
    assert "4 runs (0 cached)" in " ".join(said)
    said.clear()
    reproduce(["tum"], out, root=cat, workers=1, say=said.append)
    assert "4 runs (4 cached)" in " ".join(said)
    md = (out / "report.md").read_text()
    assert "full runs of a selection (tum): 1 entry, 4 runs" in md
    # A damaged stored run (an edited summary.json) is computed again, and counted and
    # reported as computed, not as reused.
    runs = sorted((out / "tum" / "tum-fig99-test" / "runs").glob("[!.]*/summary.json"))
    runs[0].write_text(runs[0].read_text().replace("0", "1", 1))
    said.clear()
    reproduce(["tum"], out, root=cat, workers=1, say=said.append)
    assert "4 runs (3 cached, 1 damaged and computed again)" in " ".join(said)
    md = (out / "report.md").read_text()
    assert "1 computed in it, 3 reused" in md and "1 of those computed were stored runs" in md


def test_an_entrys_sweep_keeps_its_table_and_draws_no_sweep_plots(cat, tmp_path):
    # The report draws the entry's own plot; the sweep's summary plots and report.html
    # cost more CPU than a short entry's runs (benches/RESULTS.md, "Engine speed, third
    # step"), so reproduce leaves them to `tcplab report DIR` on demand.
    out = tmp_path / "out"
    reproduce(["tum"], out, root=cat, workers=1, say=lambda *_: None)
    sweep = out / "tum" / "tum-fig99-test"
    assert (sweep / "table.csv").is_file() and (sweep / "table.parquet").is_file()
    assert not list(sweep.glob("*.png")) and not (sweep / "report.html").exists()
    assert len(pd.read_csv(sweep / "table.csv")) == 4  # 2 buffers x 2 seeds
    assert (out / "plots" / "tum-fig99-test.png").stat().st_size > 0


def test_quick_uses_the_entrys_overrides(cat, tmp_path):
    out = tmp_path / "out"
    res = reproduce(["tum-fig99"], out, root=cat, quick=True, workers=1, say=lambda *_: None)
    assert {r.summary["duration_s"] for r in res[0].runs} == {2.0}
    # quick verdicts say so: shortened runs are never a decision
    assert all(c.quick for c in res[0].claims)
    md = (out / "report.md").read_text()
    assert (
        "**agree (2 of the paper's 5 seeds) (quick)**" in md
        and "quick: shortened runs, not a decision" in md
    )


def _finished(out: Path) -> list[Path]:
    """Stored runs (not the hidden temporaries a run is written into first)."""
    return [p for p in (out / "tum" / "tum-fig99-test" / "runs").glob("[!.]*/summary.json")]


def test_an_interrupted_reproduce_resumes(cat, tmp_path):
    """Ctrl-C after the first run: exit 130; the rerun keeps the finished run and completes."""
    long = ENTRY.replace('duration = "4s"', 'duration = "60s"').replace(
        '["1bdp", "2bdp"]', '["1bdp", "2bdp", "3bdp"]', 1
    )
    (cat / "tum" / "tum-fig99-test.toml").write_text(long)
    out = tmp_path / "out"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tcplab",
            "reproduce",
            "tum",
            "-o",
            str(out),
            "--workers",
            "1",
            "--catalogue",
            str(cat),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not _finished(out):
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    first = _finished(out)
    assert len(first) == 1 and not (out / "claims.csv").exists()
    stamp = first[0].stat().st_mtime_ns
    said: list[str] = []
    reproduce(["tum"], out, root=cat, workers=1, say=said.append)
    assert "6 runs (1 cached)" in " ".join(said)
    assert first[0].stat().st_mtime_ns == stamp


@pytest.mark.parametrize(
    "edit, field",
    [
        (
            ('at = { "bottleneck.buffer" = "1bdp" }', 'at = { "bottleneck.buffer" = "7bdp" }'),
            "catalogue.claims[1].at",
        ),
        (
            ('at = { "bottleneck.buffer" = "1bdp" }', 'at = { "bottleneck.rate" = "1bdp" }'),
            "catalogue.claims[1].at",
        ),
        (
            (
                'metric = "utilization"\nop = ">="\nvalue = 1.5',
                'metric = "util ization"\nop = ">="\nvalue = 1.5',
            ),
            "catalogue.claims[1].metric",
        ),
        (('paper = "tum"', 'paper = "nope"'), "catalogue.paper"),
        (('x = "bottleneck.buffer"', 'x = "bottleneck.delay"'), "catalogue.x"),
        (('quote = "fails"', 'quote = "fails"\ncolour = "red"'), "catalogue.claims[1].colour"),
        (
            ('quote = "fails"', 'quote = "fails"\nacross = "bottleneck.delay"'),
            "catalogue.claims[1].across",
        ),
        (
            ('quote = "fails"', 'quote = "fails"\nacross = "bottleneck.buffer"'),
            "catalogue.claims[1].across",
        ),
    ],
)
def test_bad_entries_name_the_field(cat, edit, field):
    path = cat / "tum" / "tum-fig99-test.toml"
    path.write_text(ENTRY.replace(*edit, 1))
    with pytest.raises(SpecError) as err:
        load_catalogue(cat)
    assert field in str(err.value) and "tum-fig99-test.toml" in str(err.value)


def test_cli_list_and_unknown_selection(cat, capsys):
    assert main(["reproduce", "--list", "--catalogue", str(cat)]) == 0
    out = capsys.readouterr().out
    assert "tum-fig99-test" in out and "not run: a cellular link model" in out
    assert main(["reproduce", "acw", "-o", "x", "--catalogue", str(cat)]) == 2
    assert "no catalogue entry matches acw" in capsys.readouterr().err


def test_the_shipped_catalogue_loads_and_lists_every_paper():
    entries = load_catalogue()
    assert {e.meta.paper for e in entries} == {"acd", "acw", "cws", "bbrprime", "tum"}
    assert all(e.meta.claims for e in entries)


def test_the_shipped_catalogue_runs_quick(tmp_path):
    """`tcplab reproduce --quick` over the whole shipped catalogue: every entry runs, every
    claim gets a verdict, and "not run" only where an entry or claim says what it needs."""
    out = tmp_path / "quick"
    assert main(["reproduce", "-o", str(out), "--quick", "-q"]) == 0
    with open(out / "claims.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["verdict"] in VERDICTS for r in rows)
    assert all(r["quick"] == "True" for r in rows if r["verdict"] != "not run")
    unexplained = [
        r["entry"]
        for r in rows
        if r["verdict"] == "not run" and not r["ours"].startswith("not run: ")
    ]
    assert not unexplained
    assert (out / "report.md").read_text().count("![") >= len(
        {r["entry"] for r in rows if r["verdict"] != "not run"}
    )
