"""Does the simulator's fixed jiffies phase move its results? (issue 42)

The simulator's jiffies clock ticks at exactly k / HZ s from time 0 (crates/cc/src/ops.rs,
Deviations), where a kernel's tick grid meets a connection at an arbitrary phase. Every
flow of a spec is started ``delta`` later, for each delta in ``--phases`` (default 0, 1,
2 and 3 ms: every quarter of a 250 Hz tick), and each delta runs ``--seeds`` seeds; all
flows move together, so their order and spacing stay and only the grid's phase against
them changes (and the run's last ``delta`` of time, below one tick). Per scenario and
metric it prints the spread over seeds (the standard deviation over seeds at each phase,
averaged over the phases) beside the spread over phases (the standard deviation of the
per-phase seed means). If the phases' spread is within the seeds', the fixed phase does
not bias a comparison that states its spread over seeds.

    python scripts/jiffies_phase.py experiments/fidelity/f0*.toml --hz 250

The metrics are those docs/FIDELITY.md compares: each flow's share, utilization, all
flows' retransmissions, the flows' mean smoothed RTT and the mean backlog. Runs are in
memory (nothing is written); simulator only.
"""

from __future__ import annotations

import argparse
import statistics as st
from pathlib import Path

from tcplab import api
from tcplab.specs.load import as_spec, read_toml


def shifted(spec: dict, delta_us: int, hz: int, seed: int) -> dict:
    """``spec`` with every flow group started ``delta_us`` later, at ``hz``, seed ``seed``."""
    d = {**spec, "experiment": {**spec["experiment"], "seed": seed}}
    d["tcp"] = {**spec.get("tcp", {}), "hz": hz}
    starts = [f.start for f in as_spec(spec).flows]
    d["flows"] = [
        {**f, "start": f"{start // 1000 + delta_us}us"} for f, start in zip(spec["flows"], starts)
    ]
    return d


def metrics(run) -> dict[str, float]:
    agg = run.aggregate
    out = {
        "utilization": agg["utilization"],
        "retransmissions": float(agg["retransmitted_packets"]),
        "mean sRTT ms": float(run.summary["mean_srtt_ms"].mean()),
        "mean backlog pkts": agg["mean_backlog_pkts"],
    }
    for _, f in run.summary.iterrows():
        out[f"flow {int(f['flow'])} share"] = float(f["share"])
    return out


def spreads(table: dict[int, list[dict[str, float]]]) -> dict[str, tuple[float, float, float]]:
    """Per metric: (mean, spread over seeds, spread over phases)."""
    names = next(iter(table.values()))[0].keys()
    out = {}
    for name in names:
        per_phase = [[m[name] for m in runs] for runs in table.values()]
        seeds = st.mean(st.stdev(v) if len(v) > 1 else 0.0 for v in per_phase)
        means = [st.mean(v) for v in per_phase]
        out[name] = (st.mean(means), seeds, st.stdev(means) if len(means) > 1 else 0.0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="+", type=Path)
    ap.add_argument("--hz", type=int, default=250)
    ap.add_argument("--phases", default="0,1000,2000,3000", help="us, comma-separated")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    phases = [int(p) for p in args.phases.split(",")]
    print(f"hz {args.hz}, phases {phases} us, seeds 1-{args.seeds}\n")
    print(
        "| scenario | metric | mean | spread over seeds | spread over phases | ratio | phases, % of mean |"
    )
    print("|---|---|---|---|---|---|---|")
    for path in args.specs:
        spec = read_toml(path)
        table = {
            delta: [
                metrics(api.run(shifted(spec, delta, args.hz, seed), report=False))
                for seed in range(1, args.seeds + 1)
            ]
            for delta in phases
        }
        for name, (mean, seeds, phase) in spreads(table).items():
            ratio = f"{phase / seeds:.2f}" if seeds > 0 else ("n/a" if phase == 0 else "inf")
            rel = f"{100 * phase / abs(mean):.2f}" if mean else "n/a"
            print(
                f"| {path.stem} | {name} | {mean:.4g} | {seeds:.3g} | {phase:.3g} | {ratio} "
                f"| {rel} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
