"""The veth testbed's column of the fidelity suite (``scripts/fidelity.py --testbed``):
the scenarios scripts/veth_testbed.py can express run there too, and their shares and
retransmissions are set beside the kernel backend's, with the difference per scenario
(docs/FIDELITY-instruments.md says why the two kernel instruments are both kept).

The testbed expresses a dumbbell of one tbf bottleneck (rate, drop-tail buffer in
packets) with bulk flows of the kernel's own algorithms, each with its RTT and start;
anything else (random loss, jitter, reordering, a queue discipline, a policer, a reverse
link, events, named links, sources, workloads, finite or on/off flows, BPF programs,
algorithm parameters, ECN, a stop before the end) is refused with the reason
(``expressible``). One testbed run per seed (the testbed draws no random numbers: the
seed only numbers the runs), stored as ``OUT/<scenario>/testbed.json``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

TESTBED = Path(__file__).resolve().parent / "veth_testbed.py"
KERNEL_CCS = ("reno", "cubic", "bbr")


def expressible(spec) -> tuple[dict | None, str]:
    """The testbed's arguments for a resolved spec, or None and why it cannot run it."""
    b = spec.bottleneck
    why = []
    for name in ("aqm", "policer", "reverse", "jitter", "reorder"):
        if getattr(b, name, None) is not None:
            why.append(f"bottleneck.{name}")
    if b.loss:
        why.append("bottleneck.loss")
    for name in ("events", "links", "sources", "workloads"):
        if getattr(spec, name, None):
            why.append(name)
    if b.buffer.unit != "pkt":
        why.append(f"bottleneck.buffer in {b.buffer.unit}")
    duration = spec.experiment.duration
    ccs, rtts, starts = [], [], []
    for i, f in enumerate(spec.flows):
        if f.cc not in KERNEL_CCS:
            why.append(f"flows[{i}].cc {f.cc!r}")
        for name in ("size", "onoff", "path", "bpf", "ecn"):
            if getattr(f, name, None) is not None:
                why.append(f"flows[{i}].{name}")
        if f.params:
            why.append(f"flows[{i}].params")
        for side in ("access", "receiver_access"):
            link = getattr(f, side)
            for name in ("jitter", "reorder", "policer"):
                if getattr(link, name, None) is not None:
                    why.append(f"flows[{i}].{side}.{name}")
            if link.loss:
                why.append(f"flows[{i}].{side}.loss")
        if f.stop is not None and f.stop < duration:
            why.append(f"flows[{i}].stop")
        for k in range(f.count):
            ccs.append(f.cc)
            rtts.append(f.rtt / 1e6)
            starts.append((f.start + k * f.stagger) / 1e9)
    if why:
        return None, "not on the testbed: " + ", ".join(why)
    order = sorted(range(len(ccs)), key=lambda i: starts[i])
    if order != list(range(len(ccs))):
        return None, "not on the testbed: flows must start in index order"
    return {
        "cc": ccs,
        "rate_mbit": b.rate / 1e6,
        "rtt_ms": rtts,
        "buffer_pkts": int(b.buffer.value),
        "duration_s": duration / 1e9,
        "start_s": starts,
    }, ""


def command(args: dict, runs: int) -> list[str]:
    return [
        sys.executable,
        str(TESTBED),
        "--cc", ",".join(args["cc"]),
        "--rate", f"{args['rate_mbit']:g}",
        "--rtt", ",".join(f"{r:g}" for r in args["rtt_ms"]),
        "--buffer-pkts", str(args["buffer_pkts"]),
        "--duration", f"{args['duration_s']:g}",
        "--start", ",".join(f"{s:g}" for s in args["start_s"]),
        "--runs", str(runs),
    ]  # fmt: skip


def run(spec_path: Path, out: Path, runs: int, say) -> dict | None:
    """Run the testbed on one scenario (unless ``out/testbed.json`` has as many runs of
    the same arguments); return the stored record, or None if it cannot express it."""
    from tcplab.lowering.resolve import resolve
    from tcplab.specs.load import load_spec

    args, why = expressible(resolve(load_spec(spec_path)))
    if args is None:
        say(f"{spec_path.stem} testbed: {why}")
        return None
    path = out / spec_path.stem / "testbed.json"
    if path.is_file():
        old = json.loads(path.read_text())
        if old.get("args") == args and len(old.get("runs", [])) >= runs:
            return old
    cmd = command(args, runs)
    timeout = runs * (args["duration_s"] + 60) + 60
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    rec = {
        "args": args,
        "command": " ".join(cmd[1:]),
        "runs": [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, indent=1))
    say(f"{spec_path.stem} testbed: {len(rec['runs'])} runs")
    return rec


def _ms(xs: list[float]) -> str:
    if not xs:
        return "-"
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.fmean(xs):.3f} ± {sd:.3f}"


def row(name: str, kernel: list[dict[str, float]], testbed: list[dict], startup_key: str) -> str:
    """One scenario's line: per flow the share on the kernel backend and on the testbed
    (mean ± sd over runs), the largest share difference (testbed - kernel), all flows'
    retransmissions (means, and testbed / kernel), start-up retransmissions per run.

    ``kernel``: scripts/fidelity.py's ``_metrics`` of each kernel run (keys "flow I (...)
    share", "retransmissions (all flows)", ``startup_key``); ``testbed``: the testbed's
    runs (``share``, ``retransmissions`` and ``startup_retransmissions`` per flow)."""

    n = len(testbed[0]["share"]) if testbed else 0
    shares_k, shares_t, diffs = [], [], []
    for i in range(n):
        k = [v for m in kernel for key, v in m.items() if key.startswith(f"flow {i} (") and key.endswith(" share")]  # fmt: skip
        t = [r["share"][i] for r in testbed]
        shares_k.append(_ms(k))
        shares_t.append(_ms(t))
        if k and t:
            diffs.append((abs(statistics.fmean(t) - statistics.fmean(k)), i))
    # the largest by size, the first flow of equal ones (two flows' differences are equal)
    big = ""
    if diffs:
        size = max(d for d, _ in diffs)
        i = next(i for d, i in diffs if d >= size - 1e-12)
        diff = statistics.fmean(r["share"][i] for r in testbed) - statistics.fmean(
            v for m in kernel for key, v in m.items() if key.startswith(f"flow {i} (") and key.endswith(" share")
        )  # fmt: skip
        big = f"flow {i} {diff:+.3f}"
    rk = [m["retransmissions (all flows)"] for m in kernel if "retransmissions (all flows)" in m]
    rt = [sum(r["retransmissions"]) for r in testbed]
    ratio = (
        f"{statistics.fmean(rt) / statistics.fmean(rk):.2f}x"
        if rk and rt and statistics.fmean(rk)
        else "-"
    )
    su_k = " ".join(f"{m[startup_key]:g}" for m in kernel if startup_key in m) or "-"
    su_t = (
        " ".join(
            str(sum(x for x in r["startup_retransmissions"] if x is not None)) for r in testbed
        )
        or "-"
    )
    mean = lambda xs: f"{statistics.fmean(xs):.1f}" if xs else "-"  # noqa: E731
    return (
        f"| {name} | {len(kernel)} / {len(testbed)} | {'; '.join(shares_k)} | "
        f"{'; '.join(shares_t)} | {big or '-'} | {mean(rk)} / {mean(rt)} ({ratio}) | "
        f"{su_k} / {su_t} |"
    )


HEADER = [
    "| scenario | runs, kernel backend / testbed | shares per flow, kernel backend | "
    "shares per flow, veth testbed | largest share difference (testbed - kernel) | "
    "retransmissions, all flows, kernel backend / testbed | start-up retransmissions per "
    "run, kernel backend / testbed |",
    "|---|---|---|---|---|---|---|",
]
