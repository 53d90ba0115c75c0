"""Distributions of specs for training: ranges of bottleneck rate, RTT, buffer and random
loss, and competing flows of any tcplab algorithm, sampled per episode from a seed.

A sample is an ordinary spec dictionary (the controlled flow first, with its ``cc``), so
every episode is reproducible from (distribution, seed) and can be written out with
``tcplab.specs.tomlout`` and re-run as a plain ``tcplab run`` (the competing flows and
the network as the agent saw them; the agent's writes are in its run's actions.csv).

The TOML form (``experiments/gym/*.toml``)::

    [scenarios]
    duration = 5.0                  # s, each episode
    rate_mbps = [10.0, 100.0]       # log-uniform
    rtt_ms = [20.0, 80.0]           # uniform (the flows' base RTT)
    buffer_bdp = [0.5, 2.0]         # uniform, in bandwidth-delay products
    loss = [0.0, 0.01]              # uniform random loss on the bottleneck
    competing = [0, 1]              # how many competing flows, uniform integer
    competing_cc = ["cubic", "bbr"] # each competing flow's algorithm, uniform choice
    competing_start_s = [0.0, 1.0]  # uniform start time of each competing flow
    rate_changes = [0, 2]           # how many step changes of the bottleneck rate, uniform
                                    # integer, at uniform times in the run's middle 80 %
    rate_change_factor = [0.5, 2.0] # each step multiplies the rate by a log-uniform
                                    # factor, kept within rate_mbps
    traces = ["synthetic-lte.down"] # Mahimahi traces an episode's bottleneck may follow:
                                    # a path relative to this file, or the name of a
                                    # trace tcplab ships (``tcplab.gym.scenarios.SHIPPED_TRACES``)
    trace_share = 0.25              # the chance that an episode follows one of them,
                                    # scaled to the drawn rate (``{ trace, scale }``)

A range with equal ends (or a single number) is a constant. Sampled values are rounded
(rate to 0.1 Mbit/s, RTT to 1 ms, buffer to 0.01 BDP, loss to 1e-4, starts to 1 ms) so the
spec reads as one a person would write. Rate changes are drawn after everything else and
only when ``rate_changes`` allows one, so distributions without them sample the episodes
they always did; they are the spec's ``[[events]]``. Traces come last, only when
``trace_share`` > 0: an episode that follows a trace (uniform choice) has the trace
scaled so its mean rate is the drawn rate (``rate = { trace = FILE, scale = S }``,
tcplab.specs.traces) and no rate changes (a traced bottleneck's rate is the trace's);
its spec names the trace by absolute path, so it re-runs anywhere the file is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.errors import SpecError
from tcplab.specs.load import read_toml
from tcplab.specs.traces import SHIPPED_TRACES, read_trace, trace_file

"""The traces tcplab ships (the checkout's traces/, made by scripts/make_traces.py): a
scenarios file may name one by its file name alone."""


def _range(name: str, value: Any, lo: float, hi: float) -> tuple[float, float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value, value]
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    ):
        raise SpecError([(f"scenarios.{name}", f"must be a number or [low, high]; got {value!r}")])
    a, b = float(value[0]), float(value[1])
    if not (lo <= a <= b <= hi):
        raise SpecError(
            [(f"scenarios.{name}", f"must satisfy {lo} <= low <= high <= {hi}; got [{a}, {b}]")]
        )
    return a, b


@dataclass(frozen=True)
class Scenarios:
    """Ranges sampled per episode; see the module docs for each field."""

    duration: float = 5.0
    rate_mbps: tuple[float, float] = (10.0, 100.0)
    rtt_ms: tuple[float, float] = (20.0, 80.0)
    buffer_bdp: tuple[float, float] = (0.5, 2.0)
    loss: tuple[float, float] = (0.0, 0.0)
    competing: tuple[int, int] = (0, 0)
    competing_cc: tuple[str, ...] = ("cubic",)
    competing_start_s: tuple[float, float] = (0.0, 0.0)
    rate_changes: tuple[int, int] = (0, 0)
    rate_change_factor: tuple[float, float] = (0.5, 2.0)
    traces: tuple[str, ...] = ()
    trace_share: float = 0.0
    sample_interval: str = "100ms"
    name: str = "gym"
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], base: Path | None = None) -> Scenarios:
        """``base``: the directory trace paths are relative to (the scenarios file's;
        default the working directory)."""
        known = {
            "duration",
            "rate_mbps",
            "rtt_ms",
            "buffer_bdp",
            "loss",
            "competing",
            "competing_cc",
            "competing_start_s",
            "rate_changes",
            "rate_change_factor",
            "traces",
            "trace_share",
            "sample_interval",
            "name",
        }
        unknown = sorted(set(raw) - known)
        if unknown:
            raise SpecError(
                [(f"scenarios.{unknown[0]}", f"unknown field; known: {', '.join(sorted(known))}")]
            )
        duration = _range("duration", raw.get("duration", 5.0), 0.01, 1e5)[0]
        comp = _range("competing", raw.get("competing", 0), 0, 64)
        if comp[0] != int(comp[0]) or comp[1] != int(comp[1]):
            raise SpecError([("scenarios.competing", "must be whole numbers of flows")])
        changes = _range("rate_changes", raw.get("rate_changes", 0), 0, 100)
        if changes[0] != int(changes[0]) or changes[1] != int(changes[1]):
            raise SpecError([("scenarios.rate_changes", "must be whole numbers of changes")])
        ccs = raw.get("competing_cc", ["cubic"])
        if isinstance(ccs, str):
            ccs = [ccs]
        if not ccs or not all(isinstance(c, str) for c in ccs):
            raise SpecError([("scenarios.competing_cc", "must be a list of algorithm names")])
        return cls(
            duration=duration,
            rate_mbps=_range("rate_mbps", raw.get("rate_mbps", [10.0, 100.0]), 0.001, 1e6),
            rtt_ms=_range("rtt_ms", raw.get("rtt_ms", [20.0, 80.0]), 1.0, 1e4),
            buffer_bdp=_range("buffer_bdp", raw.get("buffer_bdp", [0.5, 2.0]), 0.01, 1e3),
            loss=_range("loss", raw.get("loss", 0.0), 0.0, 0.5),
            competing=(int(comp[0]), int(comp[1])),
            competing_cc=tuple(ccs),
            competing_start_s=_range(
                "competing_start_s", raw.get("competing_start_s", 0.0), 0.0, duration
            ),
            rate_changes=(int(changes[0]), int(changes[1])),
            rate_change_factor=_range(
                "rate_change_factor", raw.get("rate_change_factor", [0.5, 2.0]), 0.01, 100.0
            ),
            traces=_traces(raw.get("traces", []), base or Path.cwd()),
            trace_share=_range("trace_share", raw.get("trace_share", 0.0), 0.0, 1.0)[0],
            sample_interval=str(raw.get("sample_interval", "100ms")),
            name=str(raw.get("name", "gym")),
        )

    @classmethod
    def load(cls, path: str | Path) -> Scenarios:
        """From a TOML file's ``[scenarios]`` table."""
        raw = read_toml(path)  # tomllib on 3.11+, tomli on 3.10; syntax errors name the file
        if "scenarios" not in raw:
            raise SpecError([("scenarios", f"{path} has no [scenarios] table")])
        return cls.from_dict(raw["scenarios"], Path(path).resolve().parent)

    def sample(self, seed: int, controlled_cc: str = "external") -> dict[str, Any]:
        """The spec of episode ``seed`` (a raw spec dictionary, validated by the caller),
        flow 0 being the controlled one running ``controlled_cc``."""
        rng = np.random.default_rng(seed)
        lo, hi = self.rate_mbps
        rate = round(math.exp(rng.uniform(math.log(lo), math.log(hi))), 1)
        rtt = round(float(rng.uniform(*self.rtt_ms)))
        buffer = round(float(rng.uniform(*self.buffer_bdp)), 2)
        loss = round(float(rng.uniform(*self.loss)), 4)
        n = int(rng.integers(self.competing[0], self.competing[1] + 1))
        flows: list[dict[str, Any]] = [{"cc": controlled_cc, "rtt": f"{rtt}ms"}]
        for _ in range(n):
            cc = str(self.competing_cc[int(rng.integers(len(self.competing_cc)))])
            start = round(float(rng.uniform(*self.competing_start_s)), 3)
            flows.append({"cc": cc, "rtt": f"{rtt}ms", "start": f"{start * 1000:g}ms"})
        spec: dict[str, Any] = {
            "experiment": {
                "name": f"{self.name} episode {seed}",
                "duration": f"{self.duration:g}s",
                "seed": int(seed % 2**31),
                "sample_interval": self.sample_interval,
            },
            "bottleneck": {
                "rate": f"{max(rate, 0.1):g}Mbps",
                "buffer": f"{max(buffer, 0.01):g}bdp",
                "loss": loss,
            },
            "flows": flows,
        }
        traced = bool(self.traces) and self.trace_share > 0 and rng.uniform() < self.trace_share
        if traced:
            path = self.traces[int(rng.integers(len(self.traces)))]
            mean_mbps = read_trace(path) / 1e6  # the file was checked by from_dict
            spec["bottleneck"]["rate"] = {
                "trace": path,
                "scale": round(max(rate, 0.1) / mean_mbps, 4),
            }
        elif self.rate_changes[1] > 0:
            events = self._rate_events(rng, max(rate, 0.1))
            if events:
                spec["events"] = events
        return spec

    def _rate_events(self, rng: np.random.Generator, rate: float) -> list[dict[str, Any]]:
        """Step changes of the bottleneck rate: how many, when (the run's middle 80 %, to
        the ms) and by what factor (log-uniform, the rate kept within ``rate_mbps``)."""
        n = int(rng.integers(self.rate_changes[0], self.rate_changes[1] + 1))
        times = sorted(round(float(t), 3) for t in rng.uniform(0.1, 0.9, n) * self.duration)
        events = []
        lo, hi = self.rate_change_factor
        for t in times:
            factor = math.exp(rng.uniform(math.log(lo), math.log(hi)))
            rate = round(min(max(rate * factor, self.rate_mbps[0]), self.rate_mbps[1]), 1)
            events.append({"at": f"{t * 1000:g}ms", "rate": f"{max(rate, 0.1):g}Mbps"})
        return events


def describe(spec: dict[str, Any]) -> str:
    """A sampled episode in one line, as tables print it: "6.8Mbps 76ms 0.5bdp loss 0.01
    +bbr", a traced bottleneck as "synthetic-lte.down x0.793", rate changes as
    "(2 rate changes)"."""
    b = spec["bottleneck"]
    rate = b["rate"]
    if isinstance(rate, dict):
        rate = f"{Path(rate['trace']).name} x{rate.get('scale', 1.0):g}"
    text = f"{rate} {spec['flows'][0]['rtt']} {b['buffer']} loss {b['loss']}" + "".join(
        f" +{f['cc']}" for f in spec["flows"][1:]
    )
    changes = len(spec.get("events", []))
    if changes:
        text += f" ({changes} rate change{'s' if changes > 1 else ''})"
    return text


def _traces(value: Any, base: Path) -> tuple[str, ...]:
    """``traces`` as absolute paths: each relative to ``base`` if that file exists, else a
    trace tcplab ships by its name; each read and checked here, so a bad file is refused
    when the distribution is made, naming it."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise SpecError([("scenarios.traces", f"must be a list of trace files; got {value!r}")])
    out = []
    for name in value:
        p = trace_file(name, base)
        try:
            read_trace(p)
        except ValueError as exc:
            shipped = ", ".join(sorted(f.name for f in SHIPPED_TRACES.iterdir()))
            raise SpecError(
                [
                    (
                        "scenarios.traces",
                        f"{exc} (a path relative to the scenarios file, or one "
                        f"tcplab ships: {shipped})",
                    )
                ]
            ) from None
        out.append(str(p.resolve()))
    return tuple(out)
