"""A gap between the backends with its spread over seeds: is it larger than the seeds' own
scatter? (For the kernel-spec scenarios, docs/FIDELITY-kernel-spec.md, and any other.)

    python scripts/seed_spread.py \\
        --sim 'results/k01/sim-s*/**/summary.json' \\
        --kernel 'results/k01/kernel-s*/**/summary.json'

Each pattern (one or more per backend) is a recursive glob of ``summary.json`` files, one
per run (a seed); the two sets may differ in size (simulated seeds are cheap, kernel ones
take the run's duration in real time). Per metric (the aggregate's backlog and sojourn, each flow's share, mean
sRTT, mean latest RTT and retransmissions): each backend's mean ± standard deviation over
its runs, the gap of the means (kernel - sim; relative to the simulator's mean except for
shares, which are absolute), and the gap's 95 % confidence interval from Welch's t (the
two backends' variances are not assumed equal; scipy's Student t quantile at the
Welch-Satterthwaite degrees of freedom). Against the goals of docs/FIDELITY.md (shares
within 0.05, RTT and backlog within 5 %, retransmissions within 1.5x) a metric is "met"
when the whole interval is inside the goal, "outside" when the whole interval is outside
it, and "undecided" when the interval crosses the goal's edge: more seeds are needed to
tell.

Why: docs/FIDELITY-kernel-spec.md compared five seeds per backend, and k01's +9 %
backlog came from the simulator's first five seeds lying 1.7 standard errors below its
60-seed mean (gap 2 there).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import statistics as st
import sys
from pathlib import Path

from scipy.stats import t as student_t

CONFIDENCE = 0.95
RELATIVE_GOAL = 0.05  # RTT, backlog, sojourn (docs/FIDELITY.md)
SHARE_GOAL = 0.05  # absolute
RETX_GOAL = 1.5  # ratio either way
RUN_DIR = "_run_dir"  # the key load() adds: where a run's summary.json lies, resolved


def load(patterns: list[str]) -> list[dict]:
    """The runs the patterns match, each once: a run directory that two patterns (or one
    pattern by two routes, such as a symbolic link) both reach is one run, not two, so
    its seed is not weighted twice. Runs are told apart by their resolved directory."""
    runs, seen = [], set()
    for pattern in patterns:
        paths = sorted(glob.glob(pattern, recursive=True))
        if not paths:
            raise SystemExit(f"seed_spread.py: no summary.json matches {pattern!r}")
        for p in paths:
            run_dir = Path(p).resolve().parent
            if run_dir in seen:
                continue
            seen.add(run_dir)
            runs.append({**json.loads(Path(p).read_text()), RUN_DIR: run_dir})
    return runs


def values(runs: list[dict], key: str, flow: int | None) -> list[float]:
    out = []
    for r in runs:
        v = r["aggregate"].get(key) if flow is None else r["flows"][flow].get(key)
        if v is not None and v == v:
            out.append(float(v))
    return out


def welch_interval(a: list[float], b: list[float]) -> tuple[float, float]:
    """The 95 % interval of mean(b) - mean(a), Welch's t."""
    va, vb = st.variance(a) / len(a), st.variance(b) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        d = st.mean(b) - st.mean(a)
        return d, d
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(student_t.ppf(0.5 + CONFIDENCE / 2, df)) * se
    d = st.mean(b) - st.mean(a)
    return d - half, d + half


def verdict(lo: float, hi: float, goal_lo: float, goal_hi: float) -> str:
    if goal_lo <= lo and hi <= goal_hi:
        return "met"
    if hi < goal_lo or lo > goal_hi:
        return "outside"
    return "undecided"


def judged(sim: list[float], kern: list[float], kind: str) -> tuple[float, float, float, str]:
    """The gap, its 95 % interval and the goal's verdict, in the goal's own unit: an
    absolute difference for ``kind`` "share", the ratio kernel / sim for "retx", the
    difference relative to the simulator's mean for "rel". Needs two runs per side and a
    non-zero simulator mean for "retx" and "rel" (else ValueError)."""
    if len(sim) < 2 or len(kern) < 2:
        raise ValueError("needs two runs per side")
    ms, mk = st.mean(sim), st.mean(kern)
    lo, hi = welch_interval(sim, kern)
    if kind == "share":
        return mk - ms, lo, hi, verdict(lo, hi, -SHARE_GOAL, SHARE_GOAL)
    if ms == 0:
        raise ValueError("the simulator's mean is 0")
    if kind == "retx":
        # The ratio's interval from the difference's, over the simulator's mean.
        rlo, rhi = 1 + lo / ms, 1 + hi / ms
        return mk / ms, rlo, rhi, verdict(rlo, rhi, 1 / RETX_GOAL, RETX_GOAL)
    return (
        (mk - ms) / ms,
        lo / ms,
        hi / ms,
        verdict(lo / ms, hi / ms, -RELATIVE_GOAL, RELATIVE_GOAL),
    )


def row(name: str, sim: list[float], kern: list[float], kind: str) -> str:
    if len(sim) < 2 or len(kern) < 2:
        return f"| {name} | n={len(sim)} | n={len(kern)} | - | - | too few runs |"
    cells = [
        f"{st.mean(sim):.3g} ± {st.stdev(sim):.2g} ({len(sim)})",
        f"{st.mean(kern):.3g} ± {st.stdev(kern):.2g} ({len(kern)})",
    ]
    try:
        gap, lo, hi, v = judged(sim, kern, kind)
    except ValueError:
        return f"| {name} | {cells[0]} | {cells[1]} | - | - | - |"
    if kind == "share":
        cells += [f"{gap:+.3f}", f"[{lo:+.3f}, {hi:+.3f}]"]
    elif kind == "retx":
        cells += [f"{gap:.2f}x", f"[{lo:.2f}x, {hi:.2f}x]"]
    else:
        cells += [f"{gap:+.1%}", f"[{lo:+.1%}, {hi:+.1%}]"]
    return f"| {name} | " + " | ".join(cells) + f" | {v} |"


def table(sim: list[dict], kern: list[dict]) -> list[str]:
    out = [
        "| metric | sim mean ± sd (runs) | kernel mean ± sd (runs) | gap | 95 % interval | goal |",
        "|---|---|---|---|---|---|",
    ]
    for key, kind in (("mean_backlog_pkts", "rel"), ("mean_sojourn_ms", "rel")):
        out.append(row(key, values(sim, key, None), values(kern, key, None), kind))
    for i, flow in enumerate(sim[0]["flows"]):
        for key, kind in (
            ("share", "share"),
            ("mean_srtt_ms", "rel"),
            ("mean_rtt_ms", "rel"),
            ("retransmitted_packets", "retx"),
        ):
            name = f"flow {i} ({flow['cc']}) {key}"
            out.append(row(name, values(sim, key, i), values(kern, key, i), kind))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", required=True, nargs="+", help="globs of simulated summary.json")
    ap.add_argument("--kernel", required=True, nargs="+", help="globs of kernel summary.json")
    a = ap.parse_args(argv)
    sim, kern = load(a.sim), load(a.kernel)
    both = {r[RUN_DIR] for r in sim} & {r[RUN_DIR] for r in kern}
    if both:
        first = sorted(map(str, both))[0]
        raise SystemExit(f"seed_spread.py: the run {first} matches both --sim and --kernel")
    if len(sim[0]["flows"]) != len(kern[0]["flows"]):
        raise SystemExit("seed_spread.py: the two sets have different flows")
    print("\n".join(table(sim, kern)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
