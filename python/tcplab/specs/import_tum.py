"""``tcplab import-tum FILE``: a spec from a TUM measurement-framework config (Jaeger et
al., "Towards a Reproducible Evaluation of BBR", conjee/tcp-bbr-measurement-framework,
``run_mininet.py``: ``parseConfigFile`` and ``run_test``).

The config format, as ``parseConfigFile`` reads it: one command per line, fields separated
by commas, ``#`` lines and empty lines skipped::

    host, <cc>, <rtt>, <start>, <stop>     a sender/receiver pair
    link, bw|rtt, <value>, <start>         a change of the bottleneck

Semantics, as ``run_test`` applies them:

- ``<start>`` is seconds *after the previous command* (the runner sleeps ``start`` before
  each command in file order), so absolute times are running sums.
- A host's ``<stop>`` is how long its sender runs (``timeout <stop> nc ...``): it stops at
  its absolute start + stop. The experiment lasts until the last sender stops.
- A host's ``<rtt>`` is a netem delay on its receiver's interface (one direction), so it is
  the flow's whole base RTT; the runner's ``-r`` (initial RTT, default 0 ms) and ``link,
  rtt`` add a netem delay for every flow at the bottleneck switch (s2-eth1, again one
  direction, so the value adds to every RTT).
- ``link, bw`` changes the bottleneck's tbf rate (``-b``, default 10 Mbit); tbf's burst is
  ``-s`` (1600 b) and its buffer ``-l`` (100 ms) of latency.
- ``--loss`` (default 0 %) is netem loss on s3-eth1 (towards s2: every flow's ACKs) and
  s3-eth2 (towards the first receiver only, since s3's ports are s2, r0, r1, ...).
- Units are tc's: rates ``bit kbit mbit`` (bits) and ``bps kbps mbps`` (BYTES per second),
  SI multiples; times ``s ms us``; sizes ``b``, ``k``/``kb`` (1024 bytes), ``m``/``mb``,
  ``kbit``/``mbit`` (1024-based, in bits).

How it maps onto a tcplab spec (what differs):

- The bottleneck is a rate-limited link with a drop-tail buffer of tbf's limit,
  ``rate * latency + burst`` bytes, computed for the initial rate; tbf recomputes its limit
  when the rate changes, ours stays in bytes. The burst is not modelled as a token bucket
  (1600 b is about one packet).
- Host RTTs become flow ``rtt``; ``-r`` and ``link, rtt`` become bottleneck delay events
  (the engine's events change the data direction only, so a value adds to every RTT, as
  the runner's one-directional netem does), with ``bdp_rtt`` stated.
- Loss: ``bottleneck.reverse.loss`` (ACKs) and flow 0's ``receiver_access.loss``.
- Hosts keep their order; each becomes a ``[[flows]]`` group of one flow.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from tcplab.errors import SpecError
from tcplab.specs.files import read_bounded
from tcplab.specs.units import format_rate, format_time

_RATE = {
    "bit": 1,
    "kbit": 10**3,
    "mbit": 10**6,
    "gbit": 10**9,
    "bps": 8,
    "kbps": 8 * 10**3,
    "mbps": 8 * 10**6,
    "gbps": 8 * 10**9,
}
_TIME = {"s": 10**9, "ms": 10**6, "us": 10**3}
_SIZE = {
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "kbit": 128,
    "mbit": 128 * 1024,
}
_NUM = re.compile(r"^\s*((?:[0-9]+\.)?[0-9]+)\s*([A-Za-z%]*)\s*$")


def _quantity(text: str, units: dict[str, int], what: str, where: str) -> int:
    m = _NUM.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in units:
        raise SpecError(
            [(where, f"{text!r} is not a {what}; allowed units: {', '.join(units)} (tc's)")]
        )
    return int(Decimal(m.group(1)) * units[unit])


def _seconds(text: str, where: str) -> int:
    try:
        v = Decimal(text.strip())
    except ArithmeticError:
        v = Decimal(-1)
    if not v.is_finite() or v < 0:
        raise SpecError([(where, f"{text.strip()!r} is not a time in seconds >= 0")])
    return int(v * 10**9)


def _percent(text: str, where: str) -> float:
    m = re.fullmatch(r"\s*([0-9.]+)\s*%?\s*", text)
    if not m:
        raise SpecError([(where, f"{text!r} is not a loss rate (e.g. '1%')")])
    return float(m.group(1)) / 100


def import_tum(
    path: str,
    bandwidth: str = "10Mbit",
    rtt: str = "0ms",
    loss: str = "0%",
    bucket: str = "1600b",
    latency: str = "100ms",
    name: str | None = None,
) -> dict[str, Any]:
    """The spec (a dict, ready for :func:`tcplab.specs.tomlout.dumps`) for a TUM config file.

    The keyword arguments are ``run_mininet.py``'s options with its defaults (``-b -r
    --loss -s -l``).

    Raises
    ------
    SpecError
        Naming the file, line and field of a malformed command.
    """
    p = Path(path)
    try:
        # Bounded, regular files only: a link to /dev/zero took all 23 GB.
        lines = read_bounded(p).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SpecError([("", f"cannot be read: {exc}")], str(p)) from None
    rate0 = _quantity(bandwidth, _RATE, "rate", "--bandwidth")
    rtt0 = _quantity(rtt, _TIME, "time", "--rtt")
    burst = _quantity(bucket, _SIZE, "size", "--bucket")
    lat = _quantity(latency, _TIME, "time", "--latency")
    p_loss = _percent(loss, "--loss")
    now = 0
    flows: list[dict[str, Any]] = []
    changes: list[tuple[int, str, int]] = []
    ends = []
    problems = []
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        f = [x.strip() for x in s.split(",")]
        at = f"line {n}"
        try:
            if f[0] == "host":
                if len(f) != 5:
                    raise SpecError(
                        [(at, "host takes 4 fields: host, <cc>, <rtt>, <start>, <stop>")]
                    )
                now += _seconds(f[3], f"{at}: start")
                stop = _seconds(f[4], f"{at}: stop")
                if stop == 0:
                    raise SpecError([(f"{at}: stop", "a sender must run for more than 0 s")])
                flows.append(
                    {
                        "cc": f[1],
                        "rtt": _quantity(f[2], _TIME, "time", f"{at}: rtt"),
                        "start": now,
                        "stop": now + stop,
                    }
                )
                ends.append(now + stop)
            elif f[0] == "link":
                if len(f) != 4 or f[1] not in ("bw", "rtt"):
                    raise SpecError([(at, "link takes 3 fields: link, bw|rtt, <value>, <start>")])
                now += _seconds(f[3], f"{at}: start")
                value = _quantity(
                    f[2],
                    _RATE if f[1] == "bw" else _TIME,
                    "rate" if f[1] == "bw" else "time",
                    f"{at}: value",
                )
                changes.append((now, f[1], value))
            else:
                raise SpecError([(at, f"unknown command {f[0]!r}; allowed: host, link")])
        except SpecError as err:
            problems += err.problems
    if not problems and not flows:
        problems.append(("", "no host lines: nothing to run"))
    if problems:
        raise SpecError(problems, str(p))
    return _spec(p, flows, changes, max(ends), rate0, rtt0, burst, lat, p_loss, name)


def _spec(
    p: Path,
    flows: list[dict[str, Any]],
    changes: list[tuple[int, str, int]],
    duration: int,
    rate0: int,
    rtt0: int,
    burst: int,
    lat: int,
    p_loss: float,
    name: str | None,
) -> dict[str, Any]:
    rtt_changes = [c for c in changes if c[1] == "rtt"]
    events = []
    if rtt_changes and rtt0 > 0:
        events.append({"at": "0s", "delay": format_time(rtt0)})
    for at, kind, value in changes:
        if at >= duration:
            continue  # after the last sender stopped: changes nothing measured
        events.append(
            {
                "at": format_time(at),
                **({"rate": format_rate(value)} if kind == "bw" else {"delay": format_time(value)}),
            }
        )
    # Without rtt changes the initial RTT is part of every flow's rtt; with them it is the
    # delay event at 0 s (events change the data direction only, adding to every RTT).
    extra = 0 if rtt_changes else rtt0
    buffer = rate0 * lat // (8 * 10**9) + burst
    bottleneck: dict[str, Any] = {
        "rate": format_rate(rate0),
        "delay": "0s",
        "buffer": f"{buffer}B",
        "bdp_rtt": format_time(min(f["rtt"] for f in flows) + rtt0),
    }
    if p_loss > 0:
        bottleneck["reverse"] = {"loss": p_loss}
    out_flows = []
    for i, f in enumerate(flows):
        g: dict[str, Any] = {
            "cc": f["cc"],
            "rtt": format_time(f["rtt"] + extra),
            "start": format_time(f["start"]),
            "stop": format_time(f["stop"]),
        }
        if i == 0 and p_loss > 0:
            g["receiver_access"] = {"loss": p_loss}
        out_flows.append(g)
    spec: dict[str, Any] = {
        "experiment": {
            "name": name or p.stem,
            "description": f"imported from the TUM framework config {p.name}",
            "duration": format_time(duration),
            "sample_interval": "40ms",
        },
        "bottleneck": bottleneck,
        "flows": out_flows,
    }
    if events:
        spec["events"] = events
    return spec
