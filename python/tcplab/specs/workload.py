"""``[[workloads]]``: finite flows arriving as a Poisson process with sizes from a
distribution, expanded into ordinary flows before a run.

Model: flows of one workload arrive at the instants of a Poisson process of rate ``rate``
flows per second (or the rate that offers ``load`` x the bottleneck's rate:
``rate = load * bottleneck.rate / (8 * mean size)``) in ``[start, stop)``; each transfers
a size drawn from ``size``, independently:

- ``{ dist = "fixed", value = "100KiB" }``
- ``{ dist = "exponential", mean = "100KiB" }``
- ``{ dist = "pareto", mean = "100KiB", shape = 1.5 }``: scale ``mean * (shape - 1) / shape``,
  ``x = scale / U ** (1 / shape)`` (shape > 1 so the mean exists)
- ``{ dist = "empirical", cdf = "FILE" }``: lines ``<size in bytes> <cumulative
  probability>`` (comma or space separated, ``#`` comments), sizes and probabilities
  non-decreasing, the last probability 1; sampled by inverse transform with linear
  interpolation between points, as ns-3's ``EmpiricalRandomVariable`` (the pFabric and
  Homa workload files have this form; ours take sizes in bytes). Path relative to the spec.

Sizes are rounded up to whole bytes (at least 1). The draws come from numpy's PCG64 seeded
with ``(experiment.seed, workload index)``, so a spec and seed give the same flows. The
resolved spec lists the expanded flows (and no workloads), so it repeats the run as is.

Constant-rate and on/off sources are ``[[sources]]`` (tcplab.specs.sources).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

import numpy as np

from tcplab.specs.files import read_bounded
from tcplab.specs.units import MAX_BYTES, format_time

# A flow's size must be a Size (at most 2**53 bytes): a draw from a long tail beyond it,
# or a CDF entry beyond it, failed later as a raw pydantic error.
MAX_FLOW_BYTES = MAX_BYTES

SEED_TAG = 0x776B6C64  # "wkld": keeps these draws apart from any other use of the seed


def read_cdf(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(sizes in bytes, cumulative probabilities) of an empirical CDF file.

    Raises
    ------
    ValueError
        Naming the file and line.
    """
    try:
        text = read_bounded(path).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path}: cannot be read ({exc})") from None
    sizes, probs = [], []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.split("#")[0].replace(",", " ").split()
        if not s:
            continue
        try:
            size, p = float(s[0]), float(s[1])
        except (ValueError, IndexError):
            raise ValueError(
                f"{path}: line {n}: expected '<size in bytes> <cumulative probability>'"
            ) from None
        if size > MAX_FLOW_BYTES:
            raise ValueError(
                f"{path}: line {n}: size {size:g} bytes is above the largest flow size, 2**53 bytes"
            )
        if not (size >= 0 and 0 <= p <= 1) or (sizes and (size < sizes[-1] or p < probs[-1])):
            raise ValueError(
                f"{path}: line {n}: sizes >= 0 and probabilities in [0, 1], both non-decreasing"
            )
        sizes.append(size)
        probs.append(p)
    if not probs or probs[-1] != 1.0:
        raise ValueError(f"{path}: the last cumulative probability must be 1")
    return np.array(sizes), np.array(probs)


def cdf_mean(sizes: np.ndarray, probs: np.ndarray) -> float:
    """The mean of the linearly interpolated distribution: the first point's mass at its
    size, then each segment's mass at its midpoint."""
    return float(sizes[0] * probs[0] + np.sum((sizes[1:] + sizes[:-1]) / 2 * np.diff(probs)))


def mean_size(size: Any) -> float:
    """Mean transfer size in bytes of a validated size distribution."""
    if size.dist == "fixed":
        return float(size.value_bytes)
    if size.dist in ("exponential", "pareto"):
        return float(size.mean_bytes)
    return cdf_mean(*read_cdf(size.cdf))


def draw_sizes(size: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` sizes in whole bytes (1 to MAX_FLOW_BYTES)."""
    if size.dist == "fixed":
        x = np.full(n, float(size.value_bytes))
    elif size.dist == "exponential":
        x = rng.exponential(size.mean_bytes, n)
    elif size.dist == "pareto":
        a = size.shape
        scale = size.mean_bytes * (a - 1) / a
        x = scale / rng.random(n) ** (1 / a)
    else:
        sizes, probs = read_cdf(size.cdf)
        x = np.interp(rng.random(n), probs, sizes)
    # The tails of exponential and Pareto draws are cut at the largest size a flow may
    # have (a draw beyond 2**53 bytes could never finish in any run anyway).
    return np.clip(np.ceil(x), 1, MAX_FLOW_BYTES).astype(np.int64)


def arrivals_ns(
    rate_per_s: float, start_ns: int, stop_ns: int, rng: np.random.Generator
) -> np.ndarray:
    """Poisson arrival instants (ns) in [start, stop)."""
    out = []
    t = float(start_ns)
    while True:
        t += rng.exponential(1e9 / rate_per_s)
        if t >= stop_ns:
            return np.array(out, dtype=np.int64)
        out.append(int(t))


def expand(spec: Any) -> list[dict[str, Any]]:
    """The flows (raw ``[[flows]]`` tables) of every workload of ``spec``."""
    flows: list[dict[str, Any]] = []
    wire_rate = int(spec.bottleneck.rate)
    for i, w in enumerate(spec.workloads):
        rng = np.random.Generator(
            np.random.PCG64(np.random.SeedSequence([spec.experiment.seed, i, SEED_TAG]))
        )
        rate = w.rate if w.rate is not None else w.load * wire_rate / (8 * mean_size(w.size))
        stop = w.stop if w.stop is not None else spec.experiment.duration
        times = arrivals_ns(rate, w.start, stop, rng)
        sizes = draw_sizes(w.size, len(times), rng)
        for t, s in zip(times, sizes):
            f: dict[str, Any] = {
                "cc": w.cc,
                "rtt": format_time(w.rtt),
                "start": format_time(int(t)),
                "size": f"{int(s)}B",
            }
            if w.params:
                f["params"] = dict(w.params)
            if w.path:
                f["path"] = list(w.path)
            flows.append(f)
    return flows


def size_bytes(size: Any, mss: int) -> int | None:
    """A ``Size`` in bytes (packets x mss), or None for other units."""
    if size.unit == "bytes":
        return int(size.value)
    if size.unit == "pkt":
        return int(size.value) * mss
    return None


Dist = Literal["fixed", "exponential", "pareto", "empirical"]
__all__ = [
    "Dist",
    "expand",
    "read_cdf",
    "cdf_mean",
    "draw_sizes",
    "arrivals_ns",
    "mean_size",
    "size_bytes",
    "Decimal",
]
