"""Tables of docs/FIDELITY-kernel-spec.md from runs of this folder's scenarios.

Run each scenario on both backends, seeds 1-5 (as root; each takes its duration in real
time on the kernel):

    for s in 1 2 3 4 5; do for f in experiments/kernel-spec/k*.toml; do
      tcplab run $f -o results/kernel-spec/$(basename $f .toml)/s$s \\
        --backend sim,kernel --seed $s -q --no-report; done; done
    python experiments/kernel-spec/summarise.py results/kernel-spec

Per scenario: each flow's share, retransmissions, mean latest RTT (``mean_rtt_ms``) and
mean smoothed RTT per seed on each backend, the ECN counters (CE at the receiver / ECE
at the sender / CWR reductions), the aggregate's utilization, backlog, sojourn, drops and
marks with the kernel / sim ratio of the seed means, and the emulator's lateness.
"""

from __future__ import annotations

import json
import statistics as st
import sys
from pathlib import Path


def _f(v: float | None, fmt: str = ".3g") -> str:
    return "-" if v is None or v != v else format(v, fmt)


def _mean(vals: list) -> float | None:
    vals = [v for v in vals if v is not None and v == v]
    return st.mean(vals) if vals else None


def scenario(sc: Path) -> list[str]:
    seeds = sorted(p for p in sc.iterdir() if (p / "kernel" / "summary.json").exists())
    if not seeds:
        return []
    runs = {
        b: [json.loads((p / b / "summary.json").read_text()) for p in seeds]
        for b in ("sim", "kernel")
    }
    out = [f"### {sc.name} (seeds {', '.join(p.name[1:] for p in seeds)})", ""]
    out += [
        "| flow | share sim | share kernel | retx sim | retx kernel | mean RTT sim | "
        "mean RTT kernel | mean sRTT sim | mean sRTT kernel | CE/ECE/CWR sim | CE/ECE/CWR kernel |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, flow in enumerate(runs["sim"][0]["flows"]):
        row = [f"{i} ({flow['cc']})"]
        for key, fmt in (
            ("share", ".3f"),
            ("retransmitted_packets", ".0f"),
            ("mean_rtt_ms", ".1f"),
            ("mean_srtt_ms", ".1f"),
        ):
            for b in ("sim", "kernel"):
                row.append("/".join(_f(s["flows"][i].get(key), fmt) for s in runs[b]))
        for b in ("sim", "kernel"):
            row.append(
                "; ".join(
                    f"{s['flows'][i]['ce_packets']}/{s['flows'][i]['ece_acks']}/"
                    f"{s['flows'][i]['ecn_reductions']}"
                    for s in runs[b]
                )
            )
        out.append("| " + " | ".join(row) + " |")
    out += ["", "| aggregate | sim | kernel | kernel / sim (seed means) |", "|---|---|---|---|"]
    for key, fmt in (
        ("utilization", ".3f"),
        ("mean_backlog_pkts", ".1f"),
        ("mean_sojourn_ms", ".2f"),
        ("bottleneck_drops_packets", ".0f"),
        ("marked_packets", ".0f"),
        ("retransmitted_packets", ".0f"),
    ):
        a = [s["aggregate"].get(key) for s in runs["sim"]]
        k = [s["aggregate"].get(key) for s in runs["kernel"]]
        ma, mk = _mean(a), _mean(k)
        ratio = mk / ma if ma and mk is not None else None
        out.append(
            f"| {key} | {'/'.join(_f(v, fmt) for v in a)} | "
            f"{'/'.join(_f(v, fmt) for v in k)} | {_f(ratio, '.2f')} |"
        )
    lat = [s["engine"]["emulator"]["lateness"] for s in runs["kernel"]]
    out += [
        "",
        "Emulator lateness per seed (mean us / max ms / events > 1 ms late): "
        + "; ".join(
            f"{x['mean_ns'] / 1e3:.1f} / {x['max_ns'] / 1e6:.1f} / "
            f"{x['over_1ms'] / max(1, x['events']) * 100:.3f} %"
            for x in lat
        ),
        "",
    ]
    return out


def main(root: str) -> None:
    for sc in sorted(Path(root).iterdir()):
        if sc.is_dir():
            print("\n".join(scenario(sc)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/kernel-spec")
