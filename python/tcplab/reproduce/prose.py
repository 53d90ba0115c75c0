"""Numbers in a claim's prose computed from the runs, so that regenerating the catalogue
cannot leave an explanation quoting another version's results.

An ``explain`` or ``open`` text may hold templates; each is replaced by a value of the runs
when the report is written::

    {{ [source:] expr [@ path = value, ...] [| option ...] }}

* ``source`` (optional): omitted, the entry's own runs; ``control``, the runs of the
  claim's control; or another entry's name (its runs in the same ``tcplab reproduce``).
* ``expr``: a metric expression as claims use it (``share[flow0]``,
  ``window.throughput_bps[bbr]`` ...), or one of the claim's own row (with ``control:``,
  its control's): ``ours`` / ``ci``, its mean and the half-width of its 95 % interval at
  the point it reports; ``n``, its number of seeds; ``holding``, the seeds at which its
  check holds on its own; ``target``, the number it is compared with. An explanation
  states its row's numbers through these, so that it cannot say "one seed" of a row with
  three, or "all three seeds" of one with ten that holds in eight.
* ``@ path = value, ...``: the grid point, as a claim's ``at`` writes it. Unnamed axes
  default to the claim's own point (the one it reports), with ``control:`` too; together
  they must fix every swept axis, or the template is refused on load.
* options: ``±`` appends the 95 % half-width over the seeds (``0.43 ± 0.05``);
  ``x<k>`` / ``/<k>`` scale the value (``x100`` for a percentage, ``/1e6`` for Mbit/s);
  a Python format spec (``.2f``, ``.0f``, ``.3g``) replaces the default of three
  significant figures.

The value is the mean over every seed the report judged at that point (the seeds added
for undecided claims included). An undefined value prints ``undefined``; a source that
this invocation did not run (an entry left out by the selection) prints
``(not run here: <entry>)``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from tcplab.analysis.checks import metric_value
from tcplab.runs.sweep import RESERVED
from tcplab.specs.checks import METRIC_EXPR

TEMPLATE = re.compile(r"\{\{(?P<body>.*?)\}\}")
ROW = ("ours", "ci", "n", "holding", "target")
"""The template expressions that read the claim's own row (ClaimResult), not the runs."""
_SCALE = re.compile(r"(?P<op>[x/])(?P<k>[0-9.eE+-]+)")
_FORMAT = re.compile(r"\.\d+[fge]")
PLUSMINUS = "±"


@dataclass(frozen=True)
class Template:
    """One parsed ``{{ ... }}``."""

    text: str  # as written, braces included
    source: str  # "" (the entry), "control", or an entry name
    expr: str  # "ours", "ci" or a metric expression
    at: dict[str, str]
    spread: bool = False
    scale: float = 1.0
    fmt: str = ""


class TemplateError(ValueError):
    """A template that cannot be parsed; the message says what is allowed."""


def parse(text: str) -> list[Template]:
    """Every template of ``text``, or a :class:`TemplateError` naming the bad one."""
    out = []
    if text.count("{{") != text.count("}}"):
        raise TemplateError(
            "unbalanced '{{' / '}}'; a template is {{ [source:] metric [@ point] }}"
        )
    for m in TEMPLATE.finditer(text):
        body = m.group("body")
        head, _, opts = body.partition("|")
        head, _, point = head.partition("@")
        source, sep, expr = head.partition(":")
        if not sep:
            source, expr = "", head
        source, expr = source.strip(), expr.strip()
        if expr not in ROW and not METRIC_EXPR.match(expr):
            raise TemplateError(
                f"{m.group(0)}: {expr!r} is neither one of the claim's row "
                f"({', '.join(ROW)}) nor a metric expression"
            )
        if expr in ROW and point.strip():
            raise TemplateError(
                f"{m.group(0)}: {', '.join(ROW)} are at the claim's point; drop '@'"
            )
        at = {}
        for part in filter(None, (p.strip() for p in point.split(","))):
            k, eq, v = part.partition("=")
            if not eq or not k.strip() or not v.strip():
                raise TemplateError(f"{m.group(0)}: point {part!r} is not 'path = value'")
            at[k.strip()] = v.strip().strip("\"'")
        spread, scale, fmt = False, 1.0, ""
        for tok in opts.split():
            if tok == PLUSMINUS:
                spread = True
            elif s := _SCALE.fullmatch(tok):
                k = float(s.group("k"))
                scale = scale * k if s.group("op") == "x" else scale / k
            elif _FORMAT.fullmatch(tok):
                fmt = tok
            else:
                raise TemplateError(
                    f"{m.group(0)}: option {tok!r} unknown; allowed: '±', 'x<k>', '/<k>', "
                    f"a format such as '.2f'"
                )
        out.append(Template(m.group(0), source, expr, at, spread, scale, fmt))
    return out


def problems(
    claims: list[Any], grid: dict[str, list[str]], grids: dict[str, dict[str, list[str]]] | None
) -> list[tuple[str, str]]:
    """Load-time checks of every claim's templates: syntax; ``control:`` only where the
    claim has a control; a point on the grid that fixes every swept axis (the claim's
    ``at`` counting for its own entry and its control). ``grids`` (entry name -> grid):
    also check templates that read another entry; None leaves them to
    :func:`cross_problems`. Returns ``(field, message)`` pairs."""
    out = []
    for i, c in enumerate(claims):
        for field in ("explain", "open"):
            where = f"catalogue.claims[{i}].{field}"
            try:
                temps = parse(getattr(c, field))
            except TemplateError as err:
                out.append((where, str(err)))
                continue
            for t in temps:
                if t.expr in ROW:
                    if t.source not in ("", "control"):
                        out.append((where, f"{t.text}: {'/'.join(ROW)} are this claim's own"))
                    elif t.source == "control" and c.control is None:
                        out.append((where, f"{t.text}: 'control:' needs the claim's control"))
                    continue
                if t.source in ("", "control"):
                    if t.source == "control" and c.control is None:
                        out.append((where, f"{t.text}: 'control:' needs the claim's control"))
                        continue
                    out += [(where, m) for m in _point_problems(t, grid, set(c.at))]
                elif grids is not None:
                    if t.source not in grids:
                        out.append((where, f"{t.text}: no catalogue entry named {t.source!r}"))
                    else:
                        out += [(where, m) for m in _point_problems(t, grids[t.source], set())]
    return out


def _point_problems(t: Template, grid: dict[str, list[str]], fixed: set[str]) -> list[str]:
    out = []
    for k, v in t.at.items():
        if k not in grid:
            out.append(f"{t.text}: '{k}' is not swept; swept: {', '.join(grid) or 'nothing'}")
        elif v not in grid[k]:
            out.append(f"{t.text}: {k} = {v} is not in the grid ({', '.join(grid[k])})")
    free = [k for k in grid if k not in t.at and k not in fixed]
    if free:
        out.append(f"{t.text}: the point leaves {', '.join(free)} open; name it after '@'")
    return out


def cross_problems(entries: list[Any]) -> list[tuple[str, str]]:
    """Templates that read another entry, checked against that entry's grid; each problem
    is prefixed with the file it is in."""
    grids = {e.name: grid_of(e.raw) for e in entries}
    out = []
    for e in entries:
        for field, msg in problems(e.meta.claims, grids[e.name], grids):
            out.append((f"{e.path}: {field}", msg))
    return out


def grid_of(raw: dict[str, Any]) -> dict[str, list[str]]:
    """An entry's swept axes and their values, as strings (``metrics``, a list too, names
    the sweep's table columns, not an axis)."""
    sweep = raw.get("sweep") or {}
    return {
        k: [str(x) for x in v]
        for k, v in sweep.items()
        if isinstance(v, list) and k not in RESERVED
    }


def render(text: str, claim_result: Any, entry_result: Any, by_name: dict[str, Any]) -> str:
    """``text`` with each template replaced by its value (see the module doc)."""
    if "{{" not in text:
        return text
    temps = {t.text: t for t in parse(text)}
    return TEMPLATE.sub(
        lambda m: _value(temps[m.group(0)], claim_result, entry_result, by_name), text
    )


def _value(t: Template, c: Any, res: Any, by_name: dict[str, Any]) -> str:
    if t.expr in ROW:
        r = c.control if t.source == "control" else c
        if r is None:
            return "(no control run)"
        if t.expr in ("n", "holding"):
            return str(r.seeds if t.expr == "n" else r.seeds_holding)
        v = {"ours": r.ours, "ci": r.ci, "target": r.target}[t.expr]
        return _show(v, r.ci if t.spread and t.expr == "ours" else math.nan, t)
    if t.source == "control":
        if c.control is None:
            return "(no control run)"
        runs = c.control_runs
    elif t.source:
        other = by_name.get(t.source)
        if other is None:
            return f"(not run here: {t.source})"
        runs = other.runs
    else:
        runs = res.runs
    # unnamed axes: the claim's reported point, for its control's runs too (they hold the
    # claim's points and its reference's, so an axis left open would mix them); another
    # entry's template names every axis (checked on load)
    own = t.source in ("", "control")
    fixed = {k: v for k, v in c.claim.at.items() if not isinstance(v, list)}
    point = {**((dict(c.point) or fixed) if own else {}), **t.at}
    sel = at_point(runs, point)
    if len({tuple(sorted((k, str(v)) for k, v in r.point.items())) for r in sel}) != 1:
        # no run, or runs of several grid points: a claim that did not run reports no
        # point, and a mean across the grid would be a number nobody asked for
        return "undefined"
    values = [metric_value(r.summary, t.expr) for r in sel]
    if any(map(math.isnan, values)):
        return "undefined"
    mean = sum(values) / len(values)
    # Here, not at the top: scipy's import is needed only when a report is written.
    from tcplab.reproduce.judge import half_width  # scipy: only when a report is written

    return _show(mean, half_width(values) if t.spread else math.nan, t)


def at_point(runs: list[Any], at: dict[str, Any]) -> list[Any]:
    """The runs (runner.Run) whose swept values match ``at`` (compared as written in the
    spec)."""
    return [r for r in runs if all(str(r.point.get(k)) == str(v) for k, v in at.items())]


def _show(v: float, ci: float, t: Template) -> str:
    if math.isnan(v):
        return "undefined"
    text = _num(v * t.scale, t.fmt)
    if t.spread and not math.isnan(ci):
        text += f" {PLUSMINUS} {_num(ci * abs(t.scale), t.fmt)}"
    return text


def _num(x: float, fmt: str) -> str:
    if fmt:
        return format(x, fmt)
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"
