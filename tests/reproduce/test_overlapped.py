"""The catalogue's entries overlapped on one shared pool (reproduce/runner.py
run_catalogue, runs/executors.py SharedPool): the same runs stored and the same report
as one entry after another, lines and results in the entries' order however they finish,
and a failure or Ctrl-C stops everything without a report."""

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tcplab.reproduce import reproduce, runner

# BBR alone on 10 Mbit/s with 1 % random loss (so that seeds differ; a loss-free single
# flow draws no randomness). Both claims hold (utilisation ~0.9, test_reproduce.py) and
# are raised from the entry's 2 seeds to the cap, 4, at their points (more-seeds/: both
# buffers, 4 of its 8 runs new); the second's control (30 % loss) runs in control-2/ at
# the entry's 2 seeds. Each entry thus runs all three kinds of sweep the catalogue has.
ENTRY = """
[experiment]
duration = "DURATION"
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
figure = "Fig. FIG"
title = "overlap test FIG"
max_seeds = 4
max_seeds_why = "a test: four seeds keep it short"

[[catalogue.claims]]
quote = "busy"
where = "here"
metric = "utilization"
op = ">="
value = 0.8
at = { "bottleneck.buffer" = "1bdp" }

[[catalogue.claims]]
quote = "controlled"
where = "here"
metric = "utilization"
op = ">="
value = 0.8
at = { "bottleneck.buffer" = "2bdp" }
control = { set = { "bottleneck.loss" = 0.3 }, cause = "random loss", kind = "diagnostic" }
"""


def _catalogue(root: Path, durations: list[str]) -> Path:
    (root / "tum").mkdir(parents=True)
    for k, d in enumerate(durations):
        fig = 90 + k
        text = ENTRY.replace("DURATION", d).replace("FIG", str(fig))
        (root / "tum" / f"tum-fig{fig}-overlap.toml").write_text(text)
    return root


def _stored(out: Path) -> dict[str, str]:
    """Every stored run's files by their manifest digests (all but the manifest, whose
    date and wall time differ from run to run)."""
    import json

    return {
        str(m.parent.relative_to(out)): json.dumps(json.loads(m.read_text())["sha256"])
        for m in sorted(out.glob("**/runs/*/manifest.json"))
    }


def test_overlapped_entries_store_and_report_what_sequential_ones_do(tmp_path):
    # The first entry is the longest, so the later ones finish first: their lines and
    # results must still come after its.
    root = _catalogue(tmp_path / "papers", ["6s", "2s", "2s"])
    one, two = tmp_path / "one", tmp_path / "two"
    said_one: list[str] = []
    said_two: list[str] = []
    res_one = reproduce(None, one, root=root, workers=1, say=said_one.append)
    res_two = reproduce(None, two, root=root, workers=2, say=said_two.append)
    assert said_two == said_one and len(said_one) == 3 + 1  # 3 entries + the tally
    assert [r.entry.name for r in res_two] == [r.entry.name for r in res_one]
    assert said_one[0].startswith("tum tum-fig90-overlap: ")
    # all three kinds of sweep ran in each entry: the first pass (4 runs), more seeds (8,
    # 4 of them new), the control (2, apart from the entry's runs)
    assert "8 runs (0 cached)" in said_one[0]
    for k in range(3):
        d = two / "tum" / f"tum-fig9{k}-overlap"
        assert len(list((d / "more-seeds" / "runs").iterdir())) == 8
        assert len(list((d / "control-2" / "runs").iterdir())) == 2
    stored = _stored(two)
    assert len(stored) == 3 * (4 + 8 + 2) and stored == _stored(one)
    assert (two / "claims.csv").read_text() == (one / "claims.csv").read_text()
    # the plots, drawn in the entries' threads as each is judged, the same bytes
    pngs = [{p.name: p.read_bytes() for p in (d / "plots").iterdir()} for d in (one, two)]
    assert len(pngs[0]) == 3 and pngs[0] == pngs[1]
    md = [(d / "report.md").read_text().splitlines() for d in (one, two)]
    # the header's wall time and worker count differ (one line); nothing else
    diff = [(a, b) for a, b in zip(*md) if a != b]
    assert len(md[0]) == len(md[1]) and len(diff) == 1 and "wall time" in diff[0][0], diff


class _Pool:
    workers = 2
    stopped = False

    def stop(self) -> None:
        self.stopped = True


def test_a_failing_entry_stops_the_others_and_its_error_goes_on(monkeypatch):
    """Entry 1 fails while entry 0 still runs: entry 0's line is said, then entry 1's
    error raised, the pool stopped, and entry 2's result never reported."""
    release = threading.Event()

    def one(e, out, quick, workers, executor, progress, pool=None, after=None):
        if e == 0:
            release.wait(10)
        if e == 1:
            release.set()
            raise ValueError("entry 1 failed")
        return e, [f"line {e}"]

    monkeypatch.setattr(runner, "_run_one", one)
    said: list[str] = []
    pool = _Pool()
    with pytest.raises(ValueError, match="entry 1 failed"):
        runner._run_overlapped([0, 1, 2, 3], Path("."), False, pool, said.append, False)
    assert said == ["line 0"] and pool.stopped


def test_results_come_in_the_entries_order_and_at_most_ahead_run_at_once(monkeypatch):
    running, most = [0], [0]
    lock = threading.Lock()

    def one(e, out, quick, workers, executor, progress, pool=None, after=None):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05 * (5 - e % 5))  # earlier entries take longer
        with lock:
            running[0] -= 1
        return e, [f"line {e}"]

    monkeypatch.setattr(runner, "_run_one", one)
    said: list[str] = []
    got = runner._run_overlapped(list(range(8)), Path("."), False, _Pool(), said.append, False)
    assert got == list(range(8)) and said == [f"line {e}" for e in range(8)]
    assert most[0] == runner.AHEAD


def test_ctrl_c_kills_the_shared_pool_and_writes_no_report(tmp_path):
    """Ctrl-C once runs are stored: exit 130, no report, and no worker left running
    (the stored runs stop changing)."""
    root = _catalogue(tmp_path / "papers", ["60s", "60s", "60s"])
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "reproduce", "-o", str(out), "--workers", "2"]
        + ["--catalogue", str(root), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("tum/*/runs/[!.]*/summary.json")):
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert not (out / "claims.csv").exists() and not (out / "report.md").exists()
    first = sorted(out.glob("tum/**/*"))
    time.sleep(3)  # a 60 s run left behind would go on writing its temporary files
    assert sorted(out.glob("tum/**/*")) == first
