"""Issue 41's 2-flow figure, side by side: tcplab's `bbr600` against ns-3 on the same
world, alternated in one sitting, with the spread. Not a test: a figure for
benches/RESULTS.md.

    python benches/ns3_ratio.py --ns3-python /tmp/ns3venv/bin/python [--rounds 3]
    python benches/ns3_ratio.py --ns3-binary /tmp/ns3-bbr600-wheel \
        --ns3-binary /tmp/ns3-bbr600-optimized

Each round runs tcplab's bench binary (`bbr600`, `TCPLAB_BENCH_REPS=3`, its median on-CPU
figure) and then each ns-3 given (600 simulated s, the packets per CPU second of
`Simulator::Run`), all pinned to one core when `taskset` exists, and prints the figures
and the ratios; the last lines give each ratio's median and range. An ns-3 is
benches/ns3_dumbbell.py under a Python with the wheel (`--ns3-python`), or
benches/ns3_dumbbell.cc compiled against the wheel's libraries or an ns-3 built from
source (`--ns3-binary`, its header says how; both print the same line).

Why a script: the ratio depends on the host as much as on either engine. Over the same
two binaries, the ns-3 wheel ran 11.5-11.8 k packets per CPU second on one host of this
VM (benches/RESULTS.md, "thirteenth step") and 17.8-20.9 k on another ("seventeenth
step"), where tcplab gained less; a ratio measured on different days or hosts is not a
comparison. Record `cargo bench -p tcplab-sim --bench memory_latency` beside it.

- tcplab's binary: `--tcplab-bench PATH`, or built here as the engine is installed, with
  the recorded profile (`. scripts/pgo_env.sh && cargo bench -p tcplab-sim --bench
  bottleneck --no-run`; `--no-pgo` for a plain build).
- ns-3: a Python with the `ns3` wheel (3.44.post0), not a tcplab dependency:
  `python3 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3==3.44.post0`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TCPLAB_LINE = re.compile(r"median on-CPU [0-9.]+ s -> (?P<rate>[0-9]+) per CPU second")
NS3_LINE = re.compile(r"-> (?P<rate>[0-9]+) bottleneck packets per CPU second \(run\)")


def build_bench(pgo: bool) -> Path:
    """Build the bottleneck bench and return its executable (cargo's JSON messages)."""
    env_setup = ". scripts/pgo_env.sh && " if pgo else ""
    cmd = f"{env_setup}cargo bench -p tcplab-sim --bench bottleneck --no-run --message-format=json"
    res = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"ns3_ratio: building the bench failed:\n{res.stderr[-2000:]}")
    for line in res.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            if msg["target"]["name"] == "bottleneck":
                return Path(msg["executable"])
    sys.exit("ns3_ratio: cargo built no bottleneck bench executable")


def pinned(cmd: list[str]) -> list[str]:
    """`cmd` on one core (the highest this process may use), so both programs run alike."""
    if not shutil.which("taskset"):
        return cmd
    return ["taskset", "-c", str(max(os.sched_getaffinity(0))), *cmd]


def packet_rate(cmd: list[str], line: re.Pattern[str], env: dict | None = None) -> float:
    """Run `cmd` pinned and return the packets per CPU second its output's `line` gives."""
    res = subprocess.run(pinned(cmd), env=env, capture_output=True, text=True)
    m = line.search(res.stdout)
    if res.returncode != 0 or not m:
        sys.exit(f"ns3_ratio: {' '.join(cmd)} failed:\n{res.stdout}\n{res.stderr[-2000:]}")
    return float(m.group("rate"))


def ns3_commands(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """(label, command) of each ns-3 to run, checked to exist."""
    found = []
    if args.ns3_python:
        if not shutil.which(args.ns3_python):
            sys.exit(f"ns3_ratio: --ns3-python {args.ns3_python}: no such program")
        script = ROOT / "benches" / "ns3_dumbbell.py"
        cmd = [args.ns3_python, str(script), "--seconds", str(args.seconds)]
        found.append(("wheel (Python)", cmd))
    for binary in args.ns3_binary:
        if not shutil.which(binary):
            sys.exit(f"ns3_ratio: --ns3-binary {binary}: no such program")
        found.append((binary, [binary, str(args.seconds)]))
    if not found:
        sys.exit("ns3_ratio: give --ns3-python or --ns3-binary (one or more)")
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns3-python", help="a Python with the ns3 wheel")
    ap.add_argument(
        "--ns3-binary",
        action="append",
        default=[],
        help="benches/ns3_dumbbell.cc compiled (repeatable)",
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=600, help="ns-3's simulated seconds")
    ap.add_argument("--tcplab-bench", type=Path, help="a built bottleneck bench binary")
    ap.add_argument("--no-pgo", action="store_true", help="build without the profile")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("ns3_ratio: --rounds must be at least 1")
    others = ns3_commands(args)
    if args.tcplab_bench and not args.tcplab_bench.is_file():
        sys.exit(f"ns3_ratio: --tcplab-bench {args.tcplab_bench}: no such file")
    binary = args.tcplab_bench or build_bench(pgo=not args.no_pgo)
    print(f"tcplab: {binary}; ns-3: {', '.join(lab for lab, _ in others)}; {args.seconds} s")
    ratios: dict[str, list[float]] = {label: [] for label, _ in others}
    tcplab_env = dict(os.environ, TCPLAB_BENCH_REPS="3")
    for r in range(1, args.rounds + 1):
        ours = packet_rate([str(binary), "bbr600"], TCPLAB_LINE, tcplab_env)
        line = f"round {r}: tcplab {ours:,.0f}"
        for label, cmd in others:
            theirs = packet_rate(cmd, NS3_LINE)
            ratios[label].append(ours / theirs)
            line += f"; {label} {theirs:,.0f} ({ours / theirs:.1f}x)"
        print(line + " bottleneck packets per CPU s", flush=True)
    for label, rs in ratios.items():
        print(
            f"against {label}, {len(rs)} rounds: median {statistics.median(rs):.1f}x, "
            f"range {min(rs):.1f}-{max(rs):.1f}x"
        )


if __name__ == "__main__":
    main()
