"""f19 (ten flows of mixed RTT): how much of the time each BBR flow spends in the
long-term ("policer") bandwidth mode, and its loss rate, on both backends; and the
simulator's shares with uniform jitter on every sender's access link (a drop-tail
phase-effect test). FINDINGS.md, finding 24.

    python experiments/fidelity/f19_lt_mode.py RUNS_DIR          # stored scripts/fidelity.py runs
    python experiments/fidelity/f19_lt_mode.py --jitter 0,10us,50us,200us

For stored runs it also counts, per backend, the runs in which each long-RTT BBR flow
(40, 50, 60 ms) "wins" (a share above ``WIN_SHARE``; the others then starve at 0.01-0.05),
compares the counts per RTT with Fisher's exact test, and gives the time in the
long-term mode of winners and of starved flows (FINDINGS.md, finding 38).

The kernel reports no lt_use_bw (tcp_bbr_info has bw, min_rtt and the gains); in that
mode bbr_bw() is lt_bw and the pacing gain is 1 for 48 rounds, so a run of >= 10
samples (1 s) in PROBE_BW with gain 1 and an unchanged bw is counted as the mode. On the
simulator's runs that estimate reads within 0.05 of its recorded cc_lt_use_bw.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

SPEC = Path(__file__).with_name("f19-ten-flows-mixed-rtt.toml")
BBR = [0, 2, 4, 6, 8]  # the BBR flows, at 20/30/40/50/60 ms
AFTER_S = 10.0  # the suite's analysis window
LONG_RTT_BBR = [4, 6, 8]  # the 40, 50 and 60 ms BBR flows: bimodal on both backends
WIN_SHARE = 0.15  # between the starved mode (0.01-0.05) and the winning one (0.2-0.5)


def in_long_runs(flags: np.ndarray, length: int = 10) -> float:
    """The fraction of samples inside runs of at least ``length`` true flags."""
    out = np.zeros(len(flags), bool)
    i = 0
    while i < len(flags):
        j = i
        while j < len(flags) and flags[j]:
            j += 1
        if j - i >= length:
            out[i:j] = True
        i = max(j, i + 1)
    return float(out.mean())


def per_flow(series: pd.DataFrame) -> pd.DataFrame:
    d = series[(series.time_s > AFTER_S) & (series.cc == "bbr")]
    # A kernel flow has no TCP_CC_INFO before it connects: its samples are empty (NA).
    d = d.dropna(subset=["cc_mode", "cc_pacing_gain", "cc_bw_bps"])
    rows = {}
    for f, g in d.groupby("flow"):
        flat = (
            (g.cc_pacing_gain.to_numpy() == 1.0)
            & (g.cc_mode.to_numpy() == "PROBE_BW")
            & np.r_[False, np.diff(g.cc_bw_bps.to_numpy()) == 0]
        )
        sent = (g.throughput_bps * 0.1 / 8 / 1448).sum()
        rows[f] = {
            "lt_estimate": in_long_runs(flat),
            "lt_recorded": g.cc_lt_use_bw.mean() if "cc_lt_use_bw" in g else np.nan,
            "loss_rate": g.retransmits.sum() / sent,
            "mbps": g.throughput_bps.mean() / 1e6,
        }
    return pd.DataFrame(rows).T


def stored(runs: Path) -> None:
    wins = {}
    for backend in ("sim", "kernel"):
        seeds = sorted(runs.glob(f"{backend}-seed*/series.parquet"))
        if not seeds:
            sys.exit(
                f"{runs}: no {backend}-seed*/series.parquet (a scripts/fidelity.py run folder)"
            )
        tables = [per_flow(pd.read_parquet(p)) for p in seeds]
        table = pd.concat(tables).groupby(level=0).mean()
        print(f"{backend} ({len(seeds)} seeds)\n{table.round(3)}\n")
        wins[backend] = winners(seeds, tables)
    for i, flow in enumerate(LONG_RTT_BBR):
        counts = [[w[i], n - w[i]] for w, n in wins.values()]
        p = fisher_exact(counts).pvalue
        print(
            f"flow {flow}: wins {counts[0][0]} of {sum(counts[0])} (sim) and "
            f"{counts[1][0]} of {sum(counts[1])} (kernel), Fisher p = {p:.2f}"
        )


def winners(seeds: list[Path], tables: list[pd.DataFrame]) -> tuple[list[int], int]:
    """Per long-RTT BBR flow, in how many runs its share exceeds ``WIN_SHARE``; printed
    with how many winners each run has and the long-term mode's time by outcome."""
    won = [0] * len(LONG_RTT_BBR)
    per_run = [0] * (len(LONG_RTT_BBR) + 1)
    lt = {True: [], False: []}
    for path, table in zip(seeds, tables):
        flows = json.loads((path.parent / "summary.json").read_text())["flows"]
        k = 0
        for i, f in enumerate(LONG_RTT_BBR):
            w = flows[f]["share"] > WIN_SHARE
            won[i] += w
            k += w
            lt[w].append(table.loc[f, "lt_estimate"])
        per_run[k] += 1
    print(f"  runs with 0, 1, 2, 3 winners among flows {LONG_RTT_BBR}: {per_run}")
    print(
        f"  time in the long-term mode: winners {np.mean(lt[True]):.2f}, "
        f"starved {np.mean(lt[False]):.2f}\n"
    )
    return won, len(seeds)


def jitter_sweep(values: list[str], seeds: range = range(1, 11)) -> None:
    import tcplab
    from tcplab.specs.load import read_toml

    base = read_toml(SPEC)
    for j in values:
        spec = copy.deepcopy(base)
        if j != "0":
            for f in spec["flows"]:
                f["access"] = {"jitter": j}
        shares, lt = [], []
        for seed in seeds:
            s = tcplab.run(spec, seed=seed).series
            s = s[s.time_s > AFTER_S]
            thr = s.groupby("flow").throughput_bps.mean()
            shares.append((thr / thr.sum()).to_numpy()[BBR])
            lt.append(s[s.cc == "bbr"].groupby("flow").cc_lt_use_bw.mean().to_numpy())
        print(
            f"jitter {j}: BBR shares {np.mean(shares, 0).round(3)} "
            f"(sd {np.std(shares, 0).round(3)}), lt_use_bw {np.mean(lt, 0).round(3)}"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="?", type=Path, help="a scripts/fidelity.py folder of f19")
    ap.add_argument("--jitter", help="comma-separated access-link jitters to simulate")
    args = ap.parse_args()
    if args.jitter:
        jitter_sweep(args.jitter.split(","))
    elif args.runs:
        stored(args.runs)
    else:
        ap.error("give RUNS or --jitter")
