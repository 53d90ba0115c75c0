#!/usr/bin/env python3
"""Generate the link traces shipped under traces/ (Mahimahi format: one line per
1500-byte delivery opportunity, integer ms, non-decreasing; the trace repeats with period
= its last line). Deterministic: the same script gives the same files.

    python3 scripts/make_traces.py [OUTDIR]      (default: traces/)

Models (none is a measurement; see python/tcplab/specs/traces.py for public recorded traces):

- constant-12mbps: one opportunity every ms for 1 s = 1500 B/ms = 12 Mbit/s, the rate
  of Mahimahi's one-line "12Mbps" example trace.
- square-24-6mbps-5s: 24 Mbit/s (two opportunities each ms) for 5 s, then 6 Mbit/s (one
  every 2 ms) for 5 s; period 10 s.
- synthetic-lte.down / synthetic-lte.up: a cellular-like capacity, 60 s. The log of the
  rate follows an AR(1) process updated every 20 ms,
      x[k+1] = mu + phi * (x[k] - mu) + sigma * N(0, 1),   phi = 0.98, sigma = 0.15,
  mu = ln(10 Mbit/s) downlink, ln(3 Mbit/s) uplink (medians; the means come out higher,
  11.6 and 2.6 Mbit/s once clamped and with outages), the rate clamped to [0.3, 60] Mbit/s;
  with probability 0.002 per step an outage (rate 0, as in a handover) starts and lasts an
  exponential time of mean 300 ms. Within a step the number of opportunities is Poisson
  with mean rate * 20 ms / 12 000 bit, at uniformly drawn ms of the step.
  Seeds: 11 (down), 12 (up), Python's random.Random (Mersenne Twister; gauss, expovariate
  and random are stable across Python versions).
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

STEP_MS = 20
BITS_PER_OPPORTUNITY = 1500 * 8


def constant(rate_per_ms: int = 1, length_ms: int = 1000) -> list[int]:
    return [ms for ms in range(1, length_ms + 1) for _ in range(rate_per_ms)]


def square(hi_per_ms: int = 2, lo_every_ms: int = 2, half_ms: int = 5000) -> list[int]:
    hi = [ms for ms in range(1, half_ms + 1) for _ in range(hi_per_ms)]
    lo = list(range(half_ms + lo_every_ms, 2 * half_ms + 1, lo_every_ms))
    return hi + lo


def _poisson(rng: random.Random, mean: float) -> int:
    # Knuth's method for small means, a rounded normal for large ones (mean > 30).
    if mean > 30:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def cellular(
    seed: int,
    mean_bps: float,
    length_ms: int = 60_000,
    phi: float = 0.98,
    sigma: float = 0.15,
    outage_p: float = 0.002,
    outage_mean_ms: float = 300.0,
) -> list[int]:
    rng = random.Random(seed)
    mu = math.log(mean_bps)
    x = mu
    outage_left = 0.0
    out: list[int] = []
    for start in range(0, length_ms, STEP_MS):
        x = mu + phi * (x - mu) + sigma * rng.gauss(0.0, 1.0)
        if outage_left <= 0 and rng.random() < outage_p:
            outage_left = rng.expovariate(1.0 / outage_mean_ms)
        if outage_left > 0:
            outage_left -= STEP_MS
            continue
        rate = min(max(math.exp(x), 0.3e6), 60e6)
        n = _poisson(rng, rate * STEP_MS / 1000 / BITS_PER_OPPORTUNITY)
        out += sorted(start + 1 + rng.randrange(STEP_MS) for _ in range(n))
    if not out or out[-1] < length_ms:
        out.append(length_ms)  # the period is the whole trace
    return out


def main() -> None:
    outdir = Path(
        sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "traces"
    )
    outdir.mkdir(parents=True, exist_ok=True)
    traces = {
        "constant-12mbps": constant(),
        "square-24-6mbps-5s": square(),
        "synthetic-lte.down": cellular(11, 10e6),
        "synthetic-lte.up": cellular(12, 3e6),
    }
    for name, ms in traces.items():
        (outdir / name).write_text("".join(f"{t}\n" for t in ms), encoding="ascii")
        mean = len(ms) * BITS_PER_OPPORTUNITY / (ms[-1] / 1000)
        print(
            f"{outdir / name}: {len(ms)} opportunities over {ms[-1]} ms, mean {mean / 1e6:.2f} Mbit/s"
        )


if __name__ == "__main__":
    main()
