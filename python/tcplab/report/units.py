"""The unit of a series column or summary metric, read from its name's suffix: one table
for every plot and table of the reports (run, sweep and HTML), so the same quantity is
shown in the same unit everywhere."""

from __future__ import annotations

MBIT = 1e6


def unit(name: str) -> tuple[float, str]:
    """Divisor and unit text of a column (``cc_min_rtt_us``) or a metric expression
    (``goodput_bps[flow0]``, ``window.share[bbr]``): value / divisor is in that unit."""
    base = name.split("[")[0].rsplit(".", 1)[-1]
    if base.endswith("_bps"):
        return MBIT, "Mbit/s"
    if base.endswith("_us"):
        return 1e3, "ms"
    if base.endswith("_ns"):
        return 1e6, "ms"
    if base.endswith("_ms"):
        return 1.0, "ms"
    if base.endswith("_s"):
        return 1.0, "s"
    if base.endswith("_pkts") or base.endswith("_packets"):
        return 1.0, "packets"
    if base in ("share", "utilization", "share_minus_fair_share") or base.endswith("_rate"):
        return 1.0, "fraction"
    if base.startswith("jain") or base == "f_avg":
        return 1.0, "index, 1 = fair"
    return 1.0, ""
