"""f07 (four BBR flows joining a shallow buffer): the first flow's outcome on both
backends over many runs (FINDINGS.md, finding 41).

    python experiments/fidelity/f07_outcome.py --simulate OUT --seeds 1-100 [--jitter 50us]
    python experiments/fidelity/f07_outcome.py --sim 'OUT/s*' --kernel 'RUNS/kernel-seed*' ...

The first flow's share is bimodal on both backends: it "holds" 0.68-0.82 or falls to
0.3-0.6. Per group of runs this prints the share's mean and spread, how many runs hold
(with Fisher's exact test against the first group), the joiners' loss rate at pacing
gain 1 (retransmissions over packets sent, 100 ms samples after the last join at 6 s)
split by the outcome, and how the first joiner's start-up (its bandwidth estimate at
2.5-3 s, just after STARTUP) goes with the outcome. ``--simulate`` makes simulated runs
at the kernel's CONFIG_HZ (250 on the fidelity machine, finding 39), optionally with
uniform jitter on every access link (a counterfactual for host timing noise).
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from fidelity_seeds import parse_seeds  # noqa: E402  (the suite's "1-100,120" seeds)

SPEC = Path(__file__).with_name("f07-four-bbr-shallow.toml")
HOLD_SHARE = 0.68  # between the two modes (0.3-0.6 and 0.68-0.82)
LAST_JOIN_S = 6.0  # flows start at 0, 2, 4 and 6 s
MSS = 1448


def runs(patterns: list[str]) -> list[Path]:
    out = sorted({Path(p) for pat in patterns for p in glob.glob(pat)})
    out = [p for p in out if (p / "summary.json").exists()]
    if not out:
        sys.exit(f"f07_outcome.py: no run directory matches {patterns}")
    return out


def first_share(run: Path) -> float:
    return json.loads((run / "summary.json").read_text())["flows"][0]["share"]


def read_run(run: Path) -> tuple[tuple[float, float], float]:
    """From one read of the run's series: the joiners' retransmissions and packets sent at
    pacing gain 1 after the last join, and flow 1's mean bandwidth estimate (Mbit/s) over
    2.5-3 s, after its STARTUP."""
    s = pd.read_parquet(run / "series.parquet")
    j = s[(s.time_s > LAST_JOIN_S) & (s.flow > 0)].dropna(subset=["cc_pacing_gain"])
    at1 = j.cc_pacing_gain.round(2).to_numpy(float) == 1.0
    sent = j.throughput_bps.to_numpy(float) * 0.1 / 8 / MSS
    loss = float(j.retransmits.to_numpy(float)[at1].sum()), float(sent[at1].sum())
    g = s[(s.flow == 1) & (s.time_s >= 2.5) & (s.time_s < 3.0)]
    return loss, float(g.cc_bw_bps.astype(float).mean()) / 1e6


def report(groups: dict[str, list[Path]]) -> None:
    shares_of = {name: np.array([first_share(r) for r in rs]) for name, rs in groups.items()}
    base_name = next(iter(groups))
    base_hold = int((shares_of[base_name] >= HOLD_SHARE).sum())
    base_n = len(groups[base_name])
    for name, rs in groups.items():
        shares = shares_of[name]
        hold = shares >= HOLD_SHARE
        line = (
            f"{name}: {len(rs)} runs, first flow's share {shares.mean():.3f} "
            f"(sd {shares.std(ddof=1):.3f}), holds in {hold.sum()}"
        )
        if name != base_name:
            table = [[hold.sum(), len(rs) - hold.sum()], [base_hold, base_n - base_hold]]
            line += f" (Fisher p = {fisher_exact(table).pvalue:.3f} against {base_name})"
        print(line)
        read = [read_run(r) for r in rs]
        losses = [x[0] for x in read]
        for outcome, label in ((True, "holds"), (False, "does not")):
            picked = [x for x, h in zip(losses, hold) if h == outcome]
            if picked:
                rate = sum(x[0] for x in picked) / sum(x[1] for x in picked)
                print(f"  joiners' loss at gain 1 where the first flow {label}: {rate:.3f}")
        est = np.array([x[1] for x in read])
        ok = ~np.isnan(est)
        print(
            f"  first joiner's estimate at 2.5-3 s: median {np.median(est[ok]):.2f} Mbit/s, "
            f"correlation with the first flow's share {np.corrcoef(est[ok], shares[ok])[0, 1]:+.2f}"
        )


def simulate(out: Path, seeds: list[int], jitter: str, hz: int) -> None:
    import tcplab
    from tcplab.specs.load import read_toml

    spec = copy.deepcopy(read_toml(SPEC))
    spec.setdefault("tcp", {})["hz"] = hz
    if jitter != "0":
        for f in spec["flows"]:
            f["access"] = {"jitter": jitter}
    for seed in seeds:
        tcplab.run(spec, out / f"s{seed}", seed=seed, report=False)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", nargs="+", default=[], help="globs of simulated run directories")
    ap.add_argument("--kernel", nargs="+", default=[], help="globs of kernel run directories")
    ap.add_argument("--simulate", type=Path, help="make simulated runs here (OUT/s<seed>)")
    ap.add_argument("--seeds", type=parse_seeds, default="1-100", help="e.g. 1-100 or 1,2,5-8")
    ap.add_argument("--jitter", default="0", help="uniform jitter on every access link, e.g. 50us")
    ap.add_argument("--hz", type=int, default=250, help="the simulator's tcp.hz (the kernel's)")
    args = ap.parse_args()
    if args.simulate:
        simulate(args.simulate, args.seeds, args.jitter, args.hz)
    elif args.sim or args.kernel:
        groups = {}
        if args.sim:
            groups["sim"] = runs(args.sim)
        if args.kernel:
            groups["kernel"] = runs(args.kernel)
        report(groups)
    else:
        ap.error("give --simulate OUT, or --sim and/or --kernel")
