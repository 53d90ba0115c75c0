"""Steps per second of tcplab.gym at a 10 ms control interval on a 100 Mbit/s, 40 ms
dumbbell (1 BDP buffer) with one controlled flow and one CUBIC flow; memory per
environment; the cost of a reset. Not a test: figures for benches/RESULTS.md.

    python benches/gym_speed.py [--seconds 20] [--envs 20]
    python benches/gym_speed.py --rates 10Mbps,100Mbps,1Gbps,10Gbps [--seconds 5]

Three levels, each over the same simulated seconds (one step = 10 ms of simulated time):
- engine: ``tcplab._engine.Stepper`` alone (advance, one state and one interval read,
  one cwnd write per step): the Rust event loop plus the PyO3 boundary;
- simulation: the same through ``tcplab.gym.Simulation`` (named tuples, action log);
- env: ``CongestionControlEnv.step`` with the Aurora preset (its numpy observation and
  reward), without gymnasium's checking wrappers, and with them (``gymnasium.make``).
With ``--rates``: the unwrapped environment's steps per CPU second at each bottleneck rate
(the same dumbbell and CUBIC flow; the packet rate is what a step's cost follows), and
the resident set's growth per step over the measured steps of one environment.
Memory: the process's resident set before and after holding ``--envs`` environments
reset and run 1 s each, divided by their number. Reset: ``env.reset`` (builds the spec,
resolves, validates and builds the engine's world), median of 20.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np
import tcplab.gym as tg
from tcplab.gym.simulation import Simulation
from tcplab.specs.units import parse_rate

SPEC = {
    "experiment": {"duration": "1000s", "seed": 1, "sample_interval": "100ms"},
    "bottleneck": {"rate": "100Mbps", "buffer": "1bdp"},
    "flows": [{"cc": "external", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}],
}
STEP_NS = 10_000_000


def rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def bench_engine(seconds: float) -> tuple[float, float]:
    sim = Simulation(SPEC)
    s = sim._s
    s.set_cwnd(0, 300)
    s.set_pacing_rate(0, 50e6)
    s.advance(2 * 10**9)  # past start-up
    n = int(seconds * 1e9 / STEP_NS)
    t0, c0 = time.perf_counter(), time.process_time()
    now = s.now_ns
    for _ in range(n):
        now += STEP_NS
        s.advance(now)
        s.state(0)
        s.interval(0)
        s.set_cwnd(0, 300)
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)


def bench_simulation(seconds: float) -> tuple[float, float]:
    sim = Simulation(SPEC)
    sim.set_cwnd(0, 300)
    sim.set_pacing_rate(0, 50e6)
    sim.advance(to_s=2.0)
    n = int(seconds * 1e9 / STEP_NS)
    t0, c0 = time.perf_counter(), time.process_time()
    now = sim._s.now_ns
    for _ in range(n):
        now += STEP_NS
        sim.advance_ns(now)
        sim.state(0)
        sim.interval(0)
        sim.set_cwnd(0, 300)
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)


def bench_env(seconds: float, wrapped: bool) -> tuple[float, float]:
    if wrapped:
        env = gymnasium.make(tg.ENV_ID, spec=SPEC, preset="aurora", interval="10ms")
    else:
        env = tg.CongestionControlEnv(spec=SPEC, preset="aurora", interval="10ms")
    env.reset(seed=0)
    zero = np.zeros(1, np.float32)
    for _ in range(200):  # 2 s: past start-up
        env.step(zero)
    n = int(seconds * 1e9 / STEP_NS)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        env.step(zero)
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)


def bench_memory(n_envs: int) -> float:
    before = rss_kb()
    envs = []
    zero = np.zeros(1, np.float32)
    for i in range(n_envs):
        env = tg.CongestionControlEnv(spec=SPEC, preset="aurora", interval="10ms")
        env.reset(seed=i)
        for _ in range(100):
            env.step(zero)
        envs.append(env)
    return (rss_kb() - before) / n_envs


def bench_reset(k: int = 20) -> float:
    env = tg.CongestionControlEnv(spec=SPEC, preset="aurora", interval="10ms")
    env.reset(seed=0)
    times = []
    for i in range(k):
        t0 = time.perf_counter()
        env.reset(seed=i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_rate(rate: str, seconds: float) -> tuple[float, float]:
    """Steps per CPU second of the unwrapped environment at bottleneck ``rate``, and the
    resident set's growth per step (KB) over those steps."""
    spec = {**SPEC, "bottleneck": {**SPEC["bottleneck"], "rate": rate}}
    env = tg.CongestionControlEnv(spec=spec, preset="aurora", interval="10ms")
    env.reset(seed=0)
    zero = np.zeros(1, np.float32)
    for _ in range(200):  # 2 s: past start-up
        env.step(zero)
    n = int(seconds * 1e9 / STEP_NS)
    rss0, c0 = rss_kb(), time.process_time()
    for _ in range(n):
        env.step(zero)
    return n / (time.process_time() - c0), (rss_kb() - rss0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--envs", type=int, default=20)
    ap.add_argument("--rates", help="comma-separated bottleneck rates: steps/s at each")
    a = ap.parse_args()
    if a.rates:
        print(f"{'rate':>9s} {'packets/s':>10s} {'steps/s CPU':>12s} {'KB/step':>8s}")
        for rate in a.rates.split(","):
            cpu, kb = bench_rate(rate, a.seconds)
            pkts = parse_rate(rate) / (1500 * 8)
            print(f"{rate:>9s} {pkts:10.0f} {cpu:12.0f} {kb:8.3f}")
        return
    for name, fn in (
        ("engine (Stepper)", lambda: bench_engine(a.seconds)),
        ("Simulation", lambda: bench_simulation(a.seconds)),
        ("env.step, unwrapped", lambda: bench_env(a.seconds, False)),
        ("env.step, gymnasium.make", lambda: bench_env(a.seconds, True)),
    ):
        wall, cpu = fn()
        print(f"{name:28s} {wall:9.0f} steps/s wall  {cpu:9.0f} steps/s CPU")
    print(f"memory per env (RSS, {a.envs} envs)  {bench_memory(a.envs):.0f} KB")
    print(f"reset (median of 20)          {bench_reset() * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
