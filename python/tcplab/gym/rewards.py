"""Rewards the Aurora preset can be trained for, besides Aurora's own, and the reward of an
ideal interval that a training score divides by.

**Aurora's** (the default, ``Aurora(reward="aurora")``): PCC-RL's, computed by the engine
(crates/controllers/src/policy/aurora.rs ``aurora_reward``): (10 x throughput in
1500-byte packets/s - 1000 x latency in s - 2000 x loss ratio) x 0.001, as
PCCproject/PCC-RL src/gym/network_sim.py computes it (its throughput is
sender_obs.py's "recv rate", 8 x bytes acked / s, divided by 8 x BYTES_PER_PACKET; its
loss ratio bytes lost / (bytes lost + bytes acked)). Its loss term is a constant 2000 per
unit of loss ratio while its throughput term grows with the rate, so above ~6 Mbit/s
flooding the link pays (docs/FIDELITY-policy.md: trained policies retransmitted 7-95 %).

**Vivace's** (opt-in, ``Aurora(reward="vivace")``): the utility function of PCC Vivace
(M. Dong, T. Meng, D. Zarchy, E. Arslan, Y. Gilad, P. B. Godfrey, M. Schapira, "PCC
Vivace: Online-Learning Congestion Control", NSDI 2018, section 2.1), which PCC-RL's
own code also tried as a reward (network_sim.py's commented "2e14" line, with c = 11.3):

    u(x) = x^t - b x dRTT/dT - c x L,    t = 0.9, b = 900, c = 11.35

with x the sending rate in Mbit/s, dRTT/dT the RTT gradient (s per s) and L the loss
rate. ``reward="vivace-loss"`` is the paper's loss-based utility, without the latency
term (b = 0: "Vivace-Loss", the authors' pcc-gradient sender with latency_based = 0):
a flow beside a competitor is then not charged for the queue the competitor builds,
which the gradient term charges it x 900 for (a do-nothing policy's mean Vivace score
on the training distribution is -2.0, down to -18 on an episode with CUBIC filling 3
BDP). Its loss term scales with the rate sent, so a sender losing a fraction L of what it
sends is charged the same fraction of its rate at any link rate: u falls once L passes
~0.9 x^-0.1 / 11.35 (6 % at 10 Mbit/s). The gradient filter is WebRTC's Vivace
(modules/congestion_controller/pcc/utility_function.cc and monitor_interval.cc: a
gradient of magnitude under 0.01 counts as 0, one below -10 as -10). Deviations:

- The RTT gradient is the change of the interval's mean RTT from the previous interval's
  over the interval's length (the Aurora observation's latency gradient; Vivace fits a
  line to the interval's samples): the engine keeps each interval's mean, not its
  samples. The first interval's gradient is 0.
- The loss rate is PCC-RL's loss ratio (lost / (lost + acked), in segments), the same
  quantity Aurora's reward uses; Vivace divides by the packets of the monitor interval.
- x is what the flow sent in the interval (retransmissions included) over its length,
  in units of 10^6 bit/s (PCC-Uspace divides by 2^20: 0.5 % apart in x^0.9).
"""

from __future__ import annotations

from tcplab.gym.simulation import Interval

REWARDS = ("aurora", "vivace", "vivace-loss")

# Vivace's utility, NSDI 2018 section 2.1 (t, b, c).
VIVACE_EXPONENT = 0.9
VIVACE_GRADIENT_COEFFICIENT = 900.0
VIVACE_LOSS_COEFFICIENT = 11.35
# WebRTC modules/congestion_controller/pcc: kRttGradientThreshold = 0.01
# (pcc_network_controller.cc), kDelayGradientNegativeBound = 10 (its unit tests' value).
VIVACE_GRADIENT_THRESHOLD = 0.01
VIVACE_GRADIENT_NEGATIVE_BOUND = 10.0
# Aurora's ideal: 10 x packets/s of 1500 bytes x REWARD_SCALE (PCC-RL network_sim.py).
PCC_PACKET_BYTES = 1500
MSS = 1448  # the preset's segment payload (acked_bytes counts segments x MSS)


def check_reward(value: object) -> str:
    """``reward`` checked: one of :data:`REWARDS`."""
    if value not in REWARDS:
        raise ValueError(f"reward: one of {', '.join(map(repr, REWARDS))}; got {value!r}")
    return str(value)


def vivace_utility(send_mbps: float, rtt_gradient: float, loss: float) -> float:
    """Vivace's u(x) = x^0.9 - 900 x g - 11.35 x L, with WebRTC's gradient filter."""
    g = rtt_gradient
    if abs(g) < VIVACE_GRADIENT_THRESHOLD:
        g = 0.0
    g = max(g, -VIVACE_GRADIENT_NEGATIVE_BOUND)
    x = max(send_mbps, 0.0)
    return (
        x**VIVACE_EXPONENT
        - VIVACE_GRADIENT_COEFFICIENT * x * g
        - VIVACE_LOSS_COEFFICIENT * x * loss
    )


class VivaceReward:
    """Vivace's utility per interval (module docs); keeps the previous interval's latency
    for the gradient. ``latency=False``: Vivace-Loss (no gradient term). ``reset`` at
    each episode's start."""

    def __init__(self, latency: bool = True) -> None:
        self.latency = latency
        self.reset()

    def reset(self) -> None:
        self.prev_latency_us: float | None = None

    def __call__(self, iv: Interval, srtt_us: float) -> float:
        dur_us = float(iv.duration_us)
        if dur_us <= 0:
            return 0.0
        latency_us = iv.rtt_mean_us if iv.rtt_samples > 0 else srtt_us
        gradient = 0.0
        if self.latency and self.prev_latency_us is not None and latency_us > 0:
            gradient = (latency_us - self.prev_latency_us) / dur_us
        if latency_us > 0:
            self.prev_latency_us = latency_us
        pkts = iv.acked_bytes / MSS + iv.lost_pkts
        loss = iv.lost_pkts / pkts if pkts > 0 else 0.0
        return vivace_utility(iv.sent_bytes * 8 / dur_us, gradient, loss)


def ideal_reward(reward: str, rate_bps: float) -> float:
    """The reward of an interval sending at ``rate_bps`` with no delay, gradient or loss:
    what a training score divides an episode's mean reward by, so that fast and slow
    links count alike."""
    if reward == "aurora":
        return 10.0 * rate_bps / 8 / PCC_PACKET_BYTES * 0.001
    return (rate_bps / 1e6) ** VIVACE_EXPONENT
