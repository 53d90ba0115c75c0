"""The unit of a series column or summary metric, read from its name's suffix: one rule
for every plot and table of the reports (run, sweep, HTML and ``tcplab compare``), so the
same quantity is shown in the same unit everywhere. The rule itself lives in
:mod:`tcplab.metric_table`, which gives every summary metric its unit (and which the spec
stage reads too, so it cannot import from the reports)."""

from __future__ import annotations

from tcplab.metric_table import MBIT, unit

__all__ = ["MBIT", "unit"]
