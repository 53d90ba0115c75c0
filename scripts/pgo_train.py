"""The workload an instrumented engine runs to record the profile its release builds are
optimised with (scripts/pgo_profile.sh; docs/engine.md, "Profile-guided build"). Not a test
and not a benchmark: it only has to make the engine run what users run, in about the
proportions they run it. What a training run computes is thrown away.

    PYTHONPATH=<instrumented package> python scripts/pgo_train.py

What it runs (about a minute on this project's 2-core VM under instrumentation):
- every algorithm of `tcplab algorithms` (but `external`) twice against itself on a
  20 Mbit/s, 40 ms dumbbell, the catalogue's most common shape;
- the shapes the engine benchmark times: 2 BBR flows at 10 Mbit/s (crates/sim/benches
  bbr600, shortened), 10 and 100 flows half BBR half CUBIC at 1 Gbit/s;
- the link features the catalogue and the examples use: random loss, netem jitter and
  reordering, AQMs with ECN (DCTCP), a trace-driven bottleneck and a policer, a handshake,
  start jitter, a parking-lot topology, constant-rate sources, latency probes, on/off flows;
- a stepped run as `tcplab.gym` drives one (the Aurora preset) and a trained policy in the
  engine (experiments/gym/cem-linear-2.json).

Code no training run reaches (the BPF machine, the kernel backend's emulator) keeps the
optimisation it has without a profile: scripts/pgo_profile.sh merges with `--sparse`, and
the builds pass `-pgso=false` (scripts/pgo_env.sh).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def dumbbell(
    flows: list[dict[str, Any]],
    rate: str = "20Mbps",
    seconds: float = 20,
    bottleneck: dict[str, Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    return {
        "experiment": {"duration": f"{seconds}s", "seed": 1, "sample_interval": "100ms"},
        "bottleneck": {"rate": rate, "delay": "5ms", "buffer": "1bdp", **(bottleneck or {})},
        "flows": flows,
        **top,
    }


def specs() -> list[tuple[str, dict[str, Any]]]:
    from tcplab.engine import engine

    out: list[tuple[str, dict[str, Any]]] = []
    for cc in sorted(a["name"] for a in engine().algorithms()):
        if cc != "external":
            out.append((cc, dumbbell([{"cc": cc, "rtt": "40ms", "count": 2}])))
    half = [{"cc": "bbr", "rtt": "40ms", "count": 5}, {"cc": "cubic", "rtt": "40ms", "count": 5}]
    wide = [{"cc": "bbr", "rtt": "40ms", "count": 50}, {"cc": "cubic", "rtt": "40ms", "count": 50}]
    out += [
        ("bbr 10 Mbit/s", dumbbell([{"cc": "bbr", "rtt": "40ms", "count": 2}], "10Mbps", 240)),
        ("10 flows 1 Gbit/s", dumbbell(half, "1Gbps", 3)),
        ("100 flows 1 Gbit/s", dumbbell(wide, "1Gbps", 2)),
        ("loss", dumbbell([{"cc": "cubic", "rtt": "40ms", "count": 2}], bottleneck={"loss": 0.01})),
        (
            "jitter and reordering",
            dumbbell(
                [{"cc": "bbr", "rtt": "40ms", "count": 2}],
                bottleneck={"jitter": "2ms", "reorder": 0.01},
            ),
        ),
        (
            "dctcp codel ecn",
            dumbbell(
                [{"cc": "dctcp", "rtt": "40ms", "count": 2}],
                bottleneck={"aqm": {"kind": "codel", "target": "5ms", "ecn": True}},
            ),
        ),
        (
            "fq_codel",
            dumbbell(
                [{"cc": "cubic", "rtt": "40ms"}, {"cc": "bbr", "rtt": "40ms"}],
                bottleneck={"aqm": {"kind": "fq_codel"}},
            ),
        ),
        (
            "red",
            dumbbell(
                [{"cc": "reno", "rtt": "40ms", "count": 2}], bottleneck={"aqm": {"kind": "red"}}
            ),
        ),
        (
            "trace and policer",
            dumbbell(
                [{"cc": "bbr", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}],
                bottleneck={
                    "rate": {"trace": "synthetic-lte.down"},
                    "policer": {"rate": "10Mbps", "burst": "30000B"},
                },
            ),
        ),
        (
            "handshake, start jitter, on/off",
            dumbbell(
                [
                    {"cc": "cubic", "rtt": "40ms", "count": 2},
                    {"cc": "bbr", "rtt": "80ms", "onoff": {"on": "2s", "off": "1s"}},
                ],
                tcp={"handshake": True, "start_jitter": "0.6ms"},
            ),
        ),
        (
            "sources and probes",
            {
                **dumbbell([{"cc": "bbr", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}]),
                "sources": [{"rate": "5Mbps", "rtt": "40ms"}],
                "probes": [{"rtt": "40ms"}],
            },
        ),
        (
            "parking lot",
            {
                **dumbbell(
                    [
                        {"cc": "cubic", "rtt": "60ms", "path": ["bottleneck", "l2"]},
                        {"cc": "bbr", "rtt": "40ms", "path": ["l2"]},
                    ]
                ),
                "links": [{"name": "l2", "rate": "15Mbps", "delay": "5ms", "buffer": "1bdp"}],
            },
        ),
        (
            "trained policy",
            dumbbell(
                [
                    {"cc": f"policy:{ROOT / 'experiments/gym/cem-linear-2.json'}", "rtt": "60ms"},
                    {"cc": "cubic", "rtt": "60ms"},
                ],
                "10Mbps",
            ),
        ),
    ]
    return out


def stepped(steps: int = 3000) -> None:
    """A tcplab.gym episode: the Aurora preset, 10 ms steps, a CUBIC flow beside it."""
    import tcplab.gym as tg

    spec = dumbbell(
        [{"cc": "external", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}], "100Mbps", 60
    )
    env = tg.CongestionControlEnv(spec=spec, preset="aurora", interval="10ms")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        _, _, _, done, _ = env.step(rng.uniform(-1, 1, 1).astype(np.float32))
        if done:
            env.reset()


def main() -> int:
    import tcplab.api as api

    failed = []
    for name, spec in specs():
        t0 = time.perf_counter()
        try:
            api.run(spec, report=False)
        except Exception as exc:  # a training run that fails only narrows the profile
            failed.append(name)
            print(f"{name}: FAILED {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    stepped()
    print("gym steps: done", flush=True)
    if failed:
        print(f"pgo_train.py: {len(failed)} runs failed: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
