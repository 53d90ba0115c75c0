"""Observation, action and reward of published learned congestion controllers, as
presets of :class:`tcplab.gym.CongestionControlEnv`. A preset is a small class; subclass
one (or :class:`Preset`) to change any of the three.

Units: an :class:`~tcplab.gym.simulation.Interval` and a
:class:`~tcplab.gym.simulation.FlowState` from the stepping engine (bytes, packets,
microseconds).

**Aurora** (N. Jay, N. Rotman, P. B. Godfrey, M. Schapira, A. Tamar, "A Deep
Reinforcement Learning Perspective on Internet Congestion Control", ICML 2019; code
github.com/PCCproject/PCC-RL, src/gym/network_sim.py): the agent sets the sending rate.
Observation: the last 10 monitor intervals' (latency gradient, latency ratio, sending
ratio). Action a: rate x (1 + 0.025 a) for a >= 0, rate / (1 - 0.025 a) below.
Reward: 10 x throughput (packets/s of 1500 bytes) - 1000 x latency (s) - 2000 x loss
ratio, times 0.001 (PCC-RL's REWARD_SCALE); checked against PCC-RL's code, units and
scale included. Opt-in, ``reward="vivace"`` or ``"vivace-loss"``: PCC Vivace's utility
(with or without its latency term), whose loss term scales with the rate sent
(:mod:`tcplab.gym.rewards`). Observation, action and Aurora's
reward are computed by the engine (crates/controllers/src/policy/), the code a trained
policy runs with as ``cc = "policy:FILE"``. Deviations:

- The latency gradient is the change of the interval's mean RTT from the previous
  interval's, over the interval's length; PCC-RL takes the last minus the first sample
  of the interval over its send duration (the engine keeps each interval's mean and
  minimum, not its first and last sample).
- The action is bounded to [-10, 10] (a Box the environment checker accepts); PCC-RL's
  Box is +-1e12. PCC-RL clamps the rate to an absolute [40, 1000] packets/s (MIN_RATE,
  MAX_RATE) for links of 100-500 packets/s; ours is absolute too, in segments per srtt
  (rates tcplab specs use span 1 Mbit/s to 10 Gbit/s): at least 4 per srtt (BBR's
  smallest window), at most the rate whose window is 1 000 000 segments (policy/aurora.rs
  ``aurora_bounds``). Neither bound reads the path's configuration.
- A real TCP flow (`cc = "external"`: SACK, RACK, RTO) carries the rate, paced by the
  kernel's internal pacing, with cwnd written each interval to 2 x rate x srtt (at least
  10 segments) so that the window never binds; PCC-RL's sender has no window.
- The start is TCP's, as a deployed policy's (``cc = "policy:FILE"``): the initial window
  (10 segments) until the flow's first RTT sample (the handshake's), then 10 segments per
  that round trip. PCC-RL starts each episode at 0.3-1.5 x the link's rate, a rate no
  sender knows; that is kept only as the privileged training option
  ``privileged_start_fraction`` (a number, or a (low, high) range drawn per episode from
  its seed; PCC-RL's is (0.3, 1.5)), marked in the environment's info, and refused in a
  policy file. The monitor interval defaults to the environment's (PCC-RL: 0.5 x the
  mean latency of the last interval, i.e. ``interval = "rtt"`` with ``rtt_fraction=0.5``).
- Latency is the mean RTT sample of the interval (PCC-RL: mean "latency" of acked
  packets, the same quantity); an interval without a sample uses srtt.

**Orca** (S. Abbasloo, C.-Y. Yen, H. J. Chao, "Classic Meets Modern: a Pragmatic
Learning-Based Congestion Control for the Internet", SIGCOMM 2020; code
github.com/Soheil-ab/Orca, rl-module/envwrapper.py, rl-module/d5.py,
src/orca-server-mahimahi.cc): CUBIC runs underneath (the controlled flow's
``cc = "cubic"``) and, once CUBIC has first left slow start (Orca's server reports
nothing before), at each monitor interval the agent scales its window: cwnd =
max(4, int(int(100 x 4^a) x cwnd / 100)) for a in [-1, 1]; CUBIC continues from the
written window, as Orca's kernel module writes tp->snd_cwnd. Observation: the last 10
reports (``rec_dim``) of 7 features, oldest first: throughput / max throughput of the
episode, min(pacing rate / max throughput, 10), 5 x loss rate / max throughput, RTT
samples / cwnd, the interval's length (s), min RTT / srtt, and the delay metric
(1.25 x min RTT / srtt when srtt exceeds 1.25 x min RTT, else 1). Reward: (throughput
- 5 x loss rate) / max throughput x the delay metric. All of it is computed by the
engine (crates/controllers/src/policy/orca.rs, which cites each line of Orca's code and
lists the deviations: throughput as the interval's delivered bytes, not the mean of its
per-ACK rate samples; the socket's windowed minimum RTT; every interval a report; no
1.1x window boost before the first report), the code a ``policy:`` file with
``"preset": "orca"`` runs on both backends. Orca's report period is 20 ms: train with
``interval="20ms"`` (the environment's default interval is the same for every preset).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from tcplab.engine import engine
from tcplab.gym.rewards import VivaceReward, check_reward
from tcplab.gym.simulation import FlowState, Interval, Simulation

PCC_PACKET_BYTES = 1500  # PCC-RL's BYTES_PER_PACKET
MSS = 1448


class Preset:
    """What the agent sees, does and is paid. ``controlled_cc`` is the algorithm the
    controlled flow runs; ``observation_space`` / ``action_space`` the gymnasium spaces."""

    name = "preset"
    controlled_cc = "external"
    waits_for = "the flow's first RTT sample"
    observation_space: spaces.Box
    action_space: spaces.Box

    def ready(self, st: FlowState) -> bool:
        """Whether the agent starts acting (``start``, then steps) at flow state ``st``;
        until then the environment advances in steps of the engine's shortest interval
        and drops what happened. The default: the flow has an RTT sample."""
        return st.srtt_us > 0

    def reset(self, sim: Simulation, flow: int, rng: np.random.Generator) -> None:
        """A new episode on ``sim``, before the flow's first RTT sample: clear histories,
        write what the flow sends until then."""

    def start(self, sim: Simulation, flow: int, rng: np.random.Generator) -> None:
        """The flow has its first RTT sample (``sim.state(flow).srtt_us`` > 0): write the
        initial control."""

    def act(self, sim: Simulation, flow: int, action: np.ndarray) -> None:
        """Write ``action`` (checked by the environment: the action space's shape, finite)
        into the flow."""

    def observe(self, iv: Interval, st: FlowState) -> np.ndarray:
        """The observation after an interval (called once per step, before ``reward``)."""
        raise NotImplementedError

    def reward(self, iv: Interval, st: FlowState) -> float:
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        return {}

    def privileged(self) -> dict[str, Any]:
        """The privileged training options this episode used (read the path's
        configuration, which a deployed policy cannot): name -> value; empty if none."""
        return {}


def _first(action: Any) -> float:
    """The number of a one-number action: the checked array FlowDriver.check_action
    hands over at once (indexing it costs a third of the general path's ~0.6 us)."""
    if type(action) is np.ndarray and action.ndim == 1:
        return float(action[0])
    return float(np.asarray(action).reshape(-1)[0])


def _fraction(value: Any) -> float | tuple[float, float] | None:
    """``privileged_start_fraction`` checked: None, a number in (0, 2] or a (low, high)
    range within it."""
    if value is None:
        return None
    field = "privileged_start_fraction"
    ok = lambda x: isinstance(x, (int, float)) and 0 < x <= 2  # noqa: E731
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(map(ok, value)):
        lo, hi = float(value[0]), float(value[1])
        if lo <= hi:
            return (lo, hi)
    elif ok(value):
        return float(value)
    raise ValueError(
        f"{field}: a fraction of the bottleneck rate in (0, 2] or a (low, high) range of "
        f"them (PCC-RL: (0.3, 1.5)); got {value!r}"
    )


class Aurora(Preset):
    """Aurora (Jay et al., ICML 2019); see the module docs. The observation, reward, rate
    change, start and what is written are the engine's (crates/controllers/src/policy/),
    the code a trained policy runs with in ``cc = "policy:FILE"``.

    ``privileged_start_fraction``: a training option a deployed policy cannot have. None
    (the default): the episode starts as a deployed policy does, from the initial window
    over the first RTT. A number or a (low, high) range: the start rate is that fraction
    (drawn per episode for a range, as PCC-RL draws 0.3-1.5) of the configured
    bottleneck rate, which no sender knows; the environment's info then carries
    ``privileged_start_fraction`` (the fraction used) and ``finish`` records it in the
    run's summary.json.

    ``reward``: "aurora" (the default, PCC-RL's), "vivace" (PCC Vivace's utility, whose
    loss term scales with the rate sent) or "vivace-loss" (the same without its latency
    term); opt-in, :mod:`tcplab.gym.rewards`. Only the
    training signal differs: observation, action and what a deployed policy does are
    the same."""

    name = "aurora"
    controlled_cc = "external"
    DELTA_SCALE = 0.025  # PCC-RL config.DELTA_SCALE
    REWARD_SCALE = 0.001  # PCC-RL REWARD_SCALE
    # PCC-RL sender_obs min/max of the three features.
    FEATURE_LOW = (-1.0, 1.0, 0.0)
    FEATURE_HIGH = (10.0, 10000.0, 1000.0)
    INIT_CWND = 10  # policy/aurora.rs INIT_CWND (TCP_INIT_CWND): the first window

    def __init__(
        self,
        history: int = 10,
        privileged_start_fraction: float | tuple[float, float] | None = None,
        reward: str = "aurora",
    ) -> None:
        self.history = history
        self.reward_name = check_reward(reward)
        self._vivace = VivaceReward(latency=self.reward_name == "vivace")
        self.privileged_start_fraction = _fraction(privileged_start_fraction)
        self.observation_space = spaces.Box(
            np.tile(np.array(self.FEATURE_LOW, np.float32), history),
            np.tile(np.array(self.FEATURE_HIGH, np.float32), history),
            dtype=np.float32,
        )
        self.action_space = spaces.Box(-10.0, 10.0, shape=(1,), dtype=np.float32)
        self._eng = engine()
        self._used: float | None = None
        self.rate_bps = 0.0

    def reset(self, sim: Simulation, flow: int, rng: np.random.Generator) -> None:
        self._obs = self._eng.AuroraObservation(self.history)
        self._vivace.reset()
        self._used = None
        # Until the first RTT sample: TCP's initial window, unpaced (policy/mod.rs PolicyController::start).
        self.rate_bps = 0.0
        sim.set_pacing_rate(flow, 0.0)
        sim.set_cwnd(flow, self.INIT_CWND)

    def start(self, sim: Simulation, flow: int, rng: np.random.Generator) -> None:
        srtt_us = sim.state(flow).srtt_us
        frac = self.privileged_start_fraction
        if frac is None:
            self.rate_bps, cwnd = self._eng.aurora_start(srtt_us)
        else:
            if isinstance(frac, tuple):
                frac = float(rng.uniform(*frac))
            self._used = frac
            configured = float(sim.config["bottleneck"]["rate_bps"])  # privileged
            self.rate_bps, cwnd = self._eng.aurora_write(frac * configured, srtt_us)
        sim.set_pacing_rate(flow, self.rate_bps)
        sim.set_cwnd(flow, cwnd)

    def act(self, sim: Simulation, flow: int, action: np.ndarray) -> None:
        a = _first(action)
        self.rate_bps, cwnd = self._eng.aurora_write(
            self._eng.aurora_rate(self.rate_bps, a), sim.state(flow).srtt_us
        )
        sim.set_pacing_rate(flow, self.rate_bps)
        sim.set_cwnd(flow, cwnd)

    def observe(self, iv: Interval, st: FlowState) -> np.ndarray:
        return np.asarray(self._obs.push(iv, st.srtt_us), np.float32)

    def reward(self, iv: Interval, st: FlowState) -> float:
        if self.reward_name != "aurora":
            return self._vivace(iv, st.srtt_us)
        return self._eng.aurora_reward(iv, st.srtt_us)

    def info(self) -> dict[str, Any]:
        return {"rate_bps": self.rate_bps, **self.privileged()}

    def privileged(self) -> dict[str, Any]:
        return {} if self._used is None else {"privileged_start_fraction": self._used}


class Orca(Preset):
    """Orca (Abbasloo et al., SIGCOMM 2020) as its code computes it; see the module docs.
    The state history, reward, window written and start rule are the engine's
    (crates/controllers/src/policy/orca.rs)."""

    name = "orca"
    controlled_cc = "cubic"
    waits_for = "CUBIC's first exit from slow start (Orca's agent starts there)"
    FEATURES = 7  # rl-module/params.json state_dim

    def __init__(self, history: int = 10) -> None:
        self.history = history
        # Orca's code bounds the throughput ratio (max_bw includes the report's own), the
        # pacing ratio (capped at 10) and the delay metric ((0, 1]); the others have no
        # bound (float32's largest, not infinity, which gymnasium's checker warns about).
        big = np.finfo(np.float32).max
        high = np.array([1.0, 10.0, big, big, big, big, 1.0], np.float32)
        self.observation_space = spaces.Box(
            np.zeros(self.FEATURES * history, np.float32),
            np.tile(high, history),
            dtype=np.float32,
        )
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self._eng = engine()
        self.cwnd = 0

    def reset(self, sim: Simulation, flow: int, rng: np.random.Generator) -> None:
        # Nothing is written until the agent starts: CUBIC runs its slow start as it does.
        self._obs = self._eng.OrcaObservation(self.history)

    def ready(self, st: FlowState) -> bool:
        return bool(self._eng.orca_ready(st.srtt_us, st.ssthresh_pkts, st.cwnd_pkts))

    def act(self, sim: Simulation, flow: int, action: np.ndarray) -> None:
        a = _first(action)
        self.cwnd = self._eng.orca_cwnd(sim.state(flow).cwnd_pkts, a)
        sim.set_cwnd(flow, self.cwnd)

    def observe(self, iv: Interval, st: FlowState) -> np.ndarray:
        obs = self._obs.push(iv, st.cwnd_pkts, st.inflight_pkts, st.srtt_us, st.min_rtt_us)
        return np.asarray(obs, np.float32)

    def reward(self, iv: Interval, st: FlowState) -> float:
        return float(self._obs.reward())

    def info(self) -> dict[str, Any]:
        return {"cwnd_written": self.cwnd}


PRESETS: dict[str, type[Preset]] = {"aurora": Aurora, "orca": Orca}
