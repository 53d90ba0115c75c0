"""The kernel backend's policy agent: a trained policy (``cc = "policy:FILE"``) driving
real Linux TCP, run in the sender's namespace beside the traffic agent
(``ip netns exec NS python -m tcplab.backends.kernel.policy_agent CONFIG.json``).

The flow runs a BPF congestion control of tcplab/data/bpf/policy/, registered for the run
like a ``bpf:`` program: policy_rate.bpf.c for an Aurora policy (an ``external`` flow: it
applies the pacing rate and cwnd this agent writes), policy_cubic.bpf.c for an Orca one
(the kernel's own CUBIC through its kfuncs, whose window this agent overrides); both
measure each socket on every ACK (policy_maps.h; their module docs). At each monitor
interval, for each policy flow, the agent reads the flow's measurements
(:mod:`.policy_maps`), makes the interval's statistics from them as the simulator's
``Stepper::take_interval`` does (:func:`interval`), and hands them to the policy's
controller: ``tcplab._engine.PolicyAgent`` (Aurora's ``PolicyController``) or
``tcplab._engine.OrcaAgent`` (``OrcaController``), the Rust code
(crates/controllers/src/policy/) the simulator's in-engine agent runs, so the
observation, the network's action, the rate or window rule and the interval rule are the
same code on both backends, not a copy. It writes what the controller returns.

Time is the experiment's: ``start T0`` on stdin (CLOCK_MONOTONIC, as the emulator and
the traffic agents); the agents start at 0 and step when their controller says, at the
interval's real end (a late wake-up makes a longer interval, measured as such). As in
the simulator, a controller first writes TCP's initial window and looks every 1 ms for
the flow's first RTT sample (the map's srtt, which the program's ``init`` records after
the handshake's sample), then starts from the initial window over that round trip (an
Orca controller writes nothing and looks every 1 ms for CUBIC's first exit from slow
start, ssthresh < cwnd in the map); it is given the socket's measurements only, never
the emulated path's configuration. Its
record (per agent: the start, then per step: time, the interval, observation, action,
rate, cwnd) goes to ``out``.

Deviations from the simulator's agent, besides the programs':
- The interval's ``delivered_bytes`` (the receiver's in-order bytes) and ``rto_count``
  are 0: the sender's program sees neither; Aurora's observation and reward use
  neither.
- ``rtt_min_us`` of an interval is the connection's minimum so far (what the
  observation keeps of it is the same).
- Steps happen when this process wakes (Python's sleep on a loaded machine: up to a
  few ms late); the simulator's agents step at the exact instant.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from tcplab import bpf
from tcplab.backends.kernel.agent import die_with_parent, write_result
from tcplab.backends.kernel.policy_maps import PolicyMaps, Scale, find
from tcplab.engine import engine as get_engine
from tcplab.lowering import config_json

MODULE = "tcplab.backends.kernel.policy_agent"
POLICY_DIR = Path(__file__).resolve().parents[2] / "data" / "bpf" / "policy"
# Each preset's program (its tcp_congestion_ops' name is the file's stem).
SOURCES = {"aurora": POLICY_DIR / "policy_rate.bpf.c", "orca": POLICY_DIR / "policy_cubic.bpf.c"}
PROGRAM_KEYS = {preset: (str(src), "{}") for preset, src in SOURCES.items()}
"""Each program's key among a run's BPF registrations (run.py: (object, params))."""


def preset_of(agent: dict[str, Any]) -> str:
    """The preset of a config's ``agents[i]`` entry (checked by the engine already)."""
    return str(agent["policy"].get("preset", "aurora"))


def program(key: tuple[str, str]) -> tuple[bytes, str]:
    """The compiled policy program of ``key`` (tcplab.bpf's compile cache) and its name.
    Not through ``bpf.kernel_object``: that checks the object against the simulator,
    which does not model the fields these kernel-only programs read."""
    source = Path(key[0])
    return bpf.object_for(source).read_bytes(), source.name.removesuffix(".bpf.c")


def agent_config(
    config: dict[str, Any], kernel_names: dict[int, str], base_port: int, work: Path
) -> dict[str, Any]:
    """The agent's configuration for a run of the engine config ``config``: flow ``i``
    is the connection to ``base_port + i`` (agent.py), its map key; ``kernel_names``
    the name its program is registered under, per driven flow."""
    return {
        "world": config,
        "agents": [
            {
                "index": k,
                "port": base_port + a["flow"],
                "preset": preset_of(a),
                "kernel_name": kernel_names[a["flow"]],
            }
            for k, a in enumerate(config["agents"])
        ],
        "duration_ns": config["duration_ns"],
        "out": str(work / "pol-out.json"),
    }


def report(raw: dict[str, Any], config: dict[str, Any], out: dict[str, Any]) -> None:
    """Into a kernel run's raw result: each driven flow reported as ``policy:<name>``,
    as the simulator reports it, and the agents' step counts and lateness (how long
    after the controller's planned time each step ran) under ``kernel.policy_agents``."""
    summary = []
    for a, rec in zip(config["agents"], out["agents"]):
        raw["flows"][a["flow"]]["cc"] = f"policy:{a['policy']['name']}"
        late = [(r["t_ns"] - r["planned_ns"]) / 1e6 for r in rec["steps"] if "action" in r]
        pending = sum(bool(r.get("pending")) for r in rec["steps"] if "action" in r)
        summary.append(
            {
                "flow": a["flow"],
                "steps": len(late),
                # steps at which the previous write had not reached the socket yet
                "writes_pending": pending,
                "late_ms_mean": round(sum(late) / len(late), 3) if late else 0.0,
                "late_ms_max": round(max(late), 3) if late else 0.0,
            }
        )
    raw.setdefault("kernel", {})["policy_agents"] = summary


def counters(meas: dict[str, int] | None) -> dict[str, float]:
    """A flow's cumulative counters from its map entry (all 0 before its connection
    exists, as the simulator's flow state before it starts)."""
    if meas is None:
        return {
            "sent_bytes": 0,
            "acked_bytes": 0,
            "lost_pkts": 0,
            "retransmitted_pkts": 0,
            "rtt_sum_us": 0,
            "rtt_count": 0,
            "rtt_min_us": 0,
            "srtt_us": 0,
            "cwnd": 0,
            "ssthresh": 0,
            "inflight": 0,
            "min_rtt_us": 0,
        }
    have_rtt = meas["rtt_count"] > 0
    return {
        "sent_bytes": meas["bytes_sent"],
        "acked_bytes": meas["delivered"] * meas["mss"],
        "lost_pkts": meas["lost"],
        "retransmitted_pkts": meas["total_retrans"],
        "rtt_sum_us": meas["rtt_sum_us"],
        "rtt_count": meas["rtt_count"],
        "rtt_min_us": meas["rtt_min_us"] if have_rtt else 0,
        "srtt_us": meas["srtt_us"],
        "cwnd": meas["cwnd"],
        "ssthresh": meas["ssthresh"],
        "inflight": meas["inflight"],
        # tcp_min_rtt; ~0 (the fresh entry's) before the socket's first sample.
        "min_rtt_us": meas["min_rtt_us"] if meas["min_rtt_us"] != 0xFFFFFFFF else 0,
    }


def interval(prev: dict[str, float], now: dict[str, float], duration_ns: int) -> list[float]:
    """The statistics between two reads of a flow's counters, in the engine's order
    (``tcplab._engine.Stepper.INTERVAL_FIELDS``, the one list) as ``Stepper::take_interval``
    computes them: differences, acked and lost never below 0; the mean of the interval's
    RTT samples, 0 without one."""
    n = now["rtt_count"] - prev["rtt_count"]
    return [
        float(duration_ns // 1000),
        float(now["sent_bytes"] - prev["sent_bytes"]),
        float(max(0, now["acked_bytes"] - prev["acked_bytes"])),
        0.0,
        float(max(0, now["lost_pkts"] - prev["lost_pkts"])),
        float(max(0, now["retransmitted_pkts"] - prev["retransmitted_pkts"])),
        0.0,
        float(n),
        (now["rtt_sum_us"] - prev["rtt_sum_us"]) / n if n > 0 else 0.0,
        float(now["rtt_min_us"]) if n > 0 else 0.0,
    ]


class Driver:
    """One Aurora policy flow: its controller, port, last counters and record."""

    def __init__(self, engine: Any, world_json: str, index: int, port: int, ctl: Any = None):
        self.ctl = engine.PolicyAgent(world_json, index) if ctl is None else ctl
        self.poll_ns = int(engine.POLICY_MIN_STEP_NS)  # how often a waiting controller looks
        self.index, self.port = index, port
        self.prev = counters(None)
        self.prev_ns = 0
        self.next_ns = 0
        self.gen = 0
        self.done = False
        self.steps: list[dict[str, Any]] = []

    def _write(self, maps: PolicyMaps, rate: float, cwnd: int, scale: Scale | None = None) -> None:
        self.gen += 1
        maps.write(self.port, rate, cwnd, self.gen, scale)

    def start(self, maps: PolicyMaps) -> None:
        rate, cwnd, self.next_ns = self.ctl.start(0)
        self._write(maps, rate, cwnd)
        self.steps.append({"t_ns": 0, "rate_bps": rate, "cwnd": cwnd})

    def _read(self, maps: PolicyMaps, now_ns: int, last: bool) -> tuple[dict, list, bool]:
        """The flow's counters now, the interval since the last read, and whether the
        socket has yet to apply this agent's last write (the program's ``applied``
        generation): a write still pending one step later means the flow ran without
        the policy for that interval (report() counts them)."""
        meas = maps.read(self.port)
        now = counters(meas)
        pending = self.gen > 0 and (meas is None or meas["applied"] != (self.gen & 0xFFFFFFFF))
        iv = interval(self.prev, now, now_ns - self.prev_ns)
        self.prev, self.prev_ns = now, now_ns
        if last:
            self.done = True
        return now, iv, pending

    def _row(self, now_ns: int, iv: list, srtt: int, pending: bool) -> dict[str, Any]:
        """A step's record before its action."""
        return {
            "t_ns": now_ns,
            "planned_ns": self.next_ns,
            "interval": iv,
            "srtt_us": srtt,
            "pending": pending,
        }

    def step(self, maps: PolicyMaps, now_ns: int, last: bool) -> None:
        now, iv, pending = self._read(maps, now_ns, last)
        srtt = int(now["srtt_us"])
        if self.ctl.waiting:
            # Looking for the first RTT sample; the interval so far is dropped, as the
            # simulator's agent drops it (policy/mod.rs PolicyAgent::step).
            if not last:
                begun = self.ctl.begin(now_ns, srtt)
                if begun is None:
                    self.next_ns = now_ns + self.poll_ns
                else:
                    rate, cwnd, self.next_ns = begun
                    self._write(maps, rate, cwnd)
                    self.steps.append(
                        {"t_ns": now_ns, "srtt_us": srtt, "rate_bps": rate, "cwnd": cwnd}
                    )
            return
        obs = self.ctl.observe(iv, srtt)
        row = self._row(now_ns, iv, srtt, pending)
        if not last:
            action, rate, cwnd, self.next_ns = self.ctl.act(now_ns, srtt)
            self._write(maps, rate, cwnd)
            row.update(observation=obs, action=action, rate_bps=rate, cwnd=cwnd)
        self.steps.append(row)


class OrcaDriver(Driver):
    """One Orca policy flow: CUBIC runs until its first exit from slow start; then each
    report the controller scales its window (written alone: the program never touches
    the pacing rate, so the rate field of a write is 0 and ignored). A step's record
    keeps the window computed from the one read (``cwnd``); the socket gets the same
    percentage of its window when the write lands."""

    def __init__(self, engine: Any, world_json: str, index: int, port: int):
        super().__init__(engine, world_json, index, port, ctl=engine.OrcaAgent(world_json, index))

    def start(self, maps: PolicyMaps) -> None:
        self.next_ns = self.ctl.start(0)
        self.steps.append({"t_ns": 0})

    def step(self, maps: PolicyMaps, now_ns: int, last: bool) -> None:
        now, iv, pending = self._read(maps, now_ns, last)
        srtt = int(now["srtt_us"])
        if self.ctl.waiting:
            if not last:
                begun = self.ctl.begin(now_ns, srtt, now["ssthresh"], now["cwnd"])
                self.next_ns = now_ns + self.poll_ns if begun is None else begun
                if begun is not None:
                    self.steps.append({"t_ns": now_ns, "srtt_us": srtt, "cwnd": now["cwnd"]})
            return
        obs = self.ctl.observe(iv, now["cwnd"], now["inflight"], srtt, now["min_rtt_us"])
        row = self._row(now_ns, iv, srtt, pending)
        if not last:
            # The write is a percentage: the program applies it to the window the socket
            # has when it lands (the window read here may have moved by then).
            action, cwnd, percent, self.next_ns = self.ctl.act(now_ns, now["cwnd"], srtt)
            self._write(maps, 0.0, cwnd, Scale(percent, self.ctl.min_cwnd))
            row.update(observation=obs, action=action, cwnd_read=now["cwnd"], cwnd=cwnd)
        self.steps.append(row)


DRIVERS = {"aurora": Driver, "orca": OrcaDriver}


def run(cfg: dict[str, Any], t0: int | None = None, engine: Any = None) -> dict[str, Any]:
    """Drive the flows of ``cfg["agents"]`` until ``cfg["duration_ns"]``; the record."""
    if engine is None:
        engine = get_engine()

    world_json = config_json(cfg["world"])
    drivers = [
        DRIVERS[a["preset"]](engine, world_json, a["index"], a["port"]) for a in cfg["agents"]
    ]
    maps: dict[str, PolicyMaps] = {}
    try:
        for a in cfg["agents"]:
            if a["kernel_name"] not in maps:
                maps[a["kernel_name"]] = find(a["kernel_name"])
        of = [maps[a["kernel_name"]] for a in cfg["agents"]]
        if t0 is None:
            print("ready", flush=True)
            t0 = int(sys.stdin.readline().split()[1])  # "start T0"
        duration = cfg["duration_ns"]
        _sleep_until(t0)
        for d, m in zip(drivers, of):
            d.start(m)
        while not all(d.done for d in drivers):
            due = min(min(d.next_ns for d in drivers if not d.done), duration)
            _sleep_until(t0 + due)
            now = time.monotonic_ns() - t0
            for d, m in zip(drivers, of):
                if not d.done and (d.next_ns <= now or now >= duration):
                    d.step(m, now, last=now >= duration)
    finally:
        for m in maps.values():
            m.close()
    return {"agents": [{"index": d.index, "steps": d.steps} for d in drivers]}


def _sleep_until(t_ns: int) -> None:
    while True:
        left = t_ns - time.monotonic_ns()
        if left <= 0:
            return
        time.sleep(left / 1e9)


def main(argv: list[str]) -> int:
    die_with_parent()
    with open(argv[0]) as fh:
        cfg = json.load(fh)
    write_result(cfg["out"], run(cfg))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
