"""PCC-RL's Python simulator (github.com/PCCproject/PCC-RL, src/gym/network_sim.py; the
environment Aurora was trained in) on the scenario of benches/gym_speed.py as far as it
supports it: one sender (it has no competing TCP flow), 100 Mbit/s of 1500-byte packets
(8333 packets/s) on each of its two links of 20 ms (40 ms RTT), a 1 BDP queue, 10 ms
monitor intervals (its ``run_dur`` forced to 0.01 s after each step), sending at 0.9 x
the link rate with its window out of the way (cwnd 5000), action 0. Not a test: the
figure beside tcplab.gym's in benches/RESULTS.md.

    git clone https://github.com/PCCproject/PCC-RL /tmp/PCC-RL
    python benches/pccrl_speed.py /tmp/PCC-RL [--steps 1000]

PCC-RL imports the old ``gym`` package; a three-module shim mapping it to gymnasium is
written to a temporary directory first (its code is not changed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

SHIM = {
    "gym/__init__.py": "from gymnasium import Env, spaces\nfrom . import envs, utils\n",
    "gym/envs/__init__.py": "from . import registration\n",
    "gym/envs/registration.py": "def register(*a, **k):\n    pass\n",
    "gym/utils/__init__.py": "from gymnasium.utils import seeding\n",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pccrl", type=Path, help="a checkout of PCCproject/PCC-RL")
    ap.add_argument("--steps", type=int, default=1000)
    a = ap.parse_args()
    shim = Path(tempfile.mkdtemp())
    for name, text in SHIM.items():
        (shim / name).parent.mkdir(parents=True, exist_ok=True)
        (shim / name).write_text(text)
    sys.argv = sys.argv[:1]  # PCC-RL parses sys.argv itself
    sys.path[:0] = [str(shim), str(a.pccrl / "src" / "gym"), str(a.pccrl / "src")]
    import network_sim as ns  # type: ignore[import-not-found]
    import numpy as np

    env = ns.SimulatedNetworkEnv()
    bw = 100e6 / 8 / 1500
    env.links = [ns.Link(bw, 0.02, bw * 0.04, 0.0), ns.Link(bw, 0.02, bw * 0.04, 0.0)]
    sender = ns.Sender(0.9 * bw, env.links, 0, env.features, history_len=10)
    env.senders = [sender]
    ns.MAX_RATE = 1e9
    sender.set_rate(0.9 * bw)
    sender.cwnd = 5000
    env.net = ns.Network(env.senders, env.links)
    env.run_dur = 0.01
    action = np.zeros(2)
    for _ in range(100):
        env.step(action)
        env.run_dur = 0.01
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(a.steps):
        env.step(action)
        env.run_dur = 0.01
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"PCC-RL: {a.steps / wall:.0f} steps/s wall, {a.steps / cpu:.0f} steps/s CPU; "
        f"{sender.acked} packets acked in the last step"
    )


if __name__ == "__main__":
    main()
