"""The catalogue's data: one TOML file per figure or table of a source paper under
``experiments/papers/<paper>/``, each an ordinary spec (with a ``[sweep]`` grid where the
paper varies a parameter) plus a ``[catalogue]`` table that says where it comes from, what
to plot, how to shorten it for ``--quick``, and the paper's claims about it::

    [catalogue]
    paper = "cws"                          # the paper's key (PAPERS)
    figure = "Fig. 13a"                    # where in the paper
    title = "BBR vs CUBIC: Jain index against buffer size, 10 ms"
    x = "bottleneck.buffer"                # the swept path on the plot's x axis
    plot = ["jain_index", "share[cubic]"]  # metrics drawn against it (one line per other axis value)
    quick = { "experiment.duration" = "20s", repeat = 1 }   # overrides for --quick
    published = [ { metric = "jain_index", x = "0.5bdp", y = 0.55, label = "BBR" } ]

    [[catalogue.claims]]
    quote = "BBR takes up most of the bandwidth"
    where = "Sec. 5.4, Fig. 9a"
    published = "BBR share about 0.9"
    metric = "share[bbr]"                  # a check (tcplab.analysis.checks) on the runs at `at`
    op = ">="
    value = 0.8
    at = { "bottleneck.buffer" = "0.5bdp", "flows[0].cc" = "bbr" }   # a list: every value
    of_at = { "flows[0].cc" = "bbr" }      # with ``of``: the reference metric at another point
    weaker = { op = ">=", value = 0.5 }    # the same comparison, looser: "partly" when only this holds
    baseline = { "flows[0].cc" = "bbr" }   # optional: the same check for the algorithm the
                                           # variant changes; if it passes too, the report
                                           # says the claim does not tell them apart
    untestable = "..."                     # optional: why the metric cannot see the paper's
                                           # effect (below its practical band): reported as
                                           # "untestable with this metric", not counted
    across = "bottleneck.buffer"           # optional: the metric's range (max - min of the
                                           # points' means) over this axis, the others fixed by `at`
    of_across = "flows[0].rtt"             # optional, with ``of``: the reference's range likewise
    explain = "..."                        # what we know about a difference
    control = { set = { "flows[0].params.extra_acked" = false }, cause = "..." }
                                           # the claim judged again with the suspected cause
                                           # changed (an unswept path): does the verdict move?
    open = "..."                           # instead of a control, for a disagreement no single
                                           # unswept setting can test: what was tried, and why
                                           # no control fits (reported as open, with that)
    needs = ""                             # set: the claim cannot run yet, and why

    [catalogue.timeseries]                 # optional: one run drawn against time
    at = { "flows[0].cc" = "bbr" }         # its grid point (every axis with several values)
    columns = ["throughput_bps", "rtt_ms"] # series.parquet / queue.parquet columns, a panel each
    seed = 1                               # optional: default the point's first seed
    time = [0, 60]                         # optional: the drawn range, seconds
    paper = [                              # the numbers the paper's TEXT places in time
      { column = "throughput_bps", t = [20, 60], y = 8.9e6, where = "Sec. 5.2", label = "10 ms flow" },
      { t = 20, where = "Sec. 4.1", label = "bandwidth doubles" },
    ]                                      # t = [a, b] with y: a level over a span; y alone:
                                           # a level over the run; t = a alone: an event.
                                           # y in the column's unit (bit/s, ms, packets).

A file whose ``[catalogue]`` has ``needs`` and no spec lists claims that cannot run yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from tcplab.errors import SpecError
from tcplab.reproduce import prose
from tcplab.reproduce.timeseries_check import timeseries_problems
from tcplab.specs.checks import METRIC_EXPR, Check
from tcplab.specs.load import read_toml
from tcplab.specs.problems import field_problems

PAPERS = {
    "acd": "BBR-ACD (Mahmud et al., Electronics 2020)",
    "acw": "BBR-ACW (Electronics 2021)",
    "cws": "BBR-CWS (Song et al., Electronics 2020)",
    "bbrprime": "BBR' for ns-3 (Claypool et al., WPI-CS-TR-18-01)",
    "tum": "Reproducible Measurements of TCP BBR (Jaeger et al., Computer Communications 2019)",
}
"""The five source papers, by catalogue key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Weaker(_Strict):
    """The same claim, weaker; ``of``/``of_at`` default to the claim's own.

    The same comparison as the main check, looser (checked on load,
    :func:`weaker_problems`): a claim against a reference keeps that reference (a
    sentence about DA-BBR is not weakened into one about BBR); its weaker form is
    ``> 1`` x it ("more than") or ``< 1`` x it, never a factor that also accepts the
    reverse order (``>= 0.99`` x). A claim of a value ("about 35 ms") is weakened by a
    wider band around the same value (``within``, a larger tolerance), or by ``>``/``<``
    the no-effect point, which ``neutral`` names ("the fair share of two flows"). The
    report gives the effect-size ratio beside a "partly": (ours - that point) / (the
    paper's - that point), and "partly" stands only within thresholds.EFFECT_BAND of it."""

    op: Literal[">=", "<=", ">", "<", "within"]
    value: float
    tolerance: float = 0.0
    of: StrictStr | None = None
    of_at: dict[str, Any] | None = None
    neutral: StrictStr = ""  # without a reference: why ``value`` is the no-effect point


class Control(_Strict):
    """An experiment that tests an explanation: the claim judged again on runs with
    ``set`` applied (spec paths that the entry does not sweep, e.g.
    ``"flows[0].params.extra_acked" = false``), at the claim's points and its
    reference's.

    ``kind``: a **condition** sets something the paper plausibly had and our main runs
    lack (``evidence``, required, says why: the paper's text, its kernel or simulator
    version); a verdict that moves under it may explain a disagreement. Anything else (a
    kernel the paper did not run, a changed gain, an added loss, another reading of the
    paper) is a **diagnostic**: it shows what moves the number, never the paper's cause,
    and the report says so."""

    set: dict[str, Any]
    cause: StrictStr
    kind: Literal["condition", "diagnostic"]
    evidence: StrictStr = ""


class Claim(_Strict):
    """One sentence of a paper and the check that tests it on our runs."""

    quote: StrictStr
    where: StrictStr
    published: StrictStr = ""
    metric: StrictStr | None = None
    op: Literal[">=", "<=", ">", "<", "within"] | None = None
    value: float | None = None
    tolerance: float = Field(0.0, ge=0.0)
    of: StrictStr | None = None
    of_at: dict[str, Any] = Field(default_factory=dict)
    at: dict[str, Any] = Field(default_factory=dict)
    # "Depends largely on X, little on Y": compare how much a metric varies across one
    # axis with how much it (or ``of``) varies across another.
    across: StrictStr | None = None
    of_across: StrictStr | None = None
    weaker: Weaker | None = None
    # one of the paper's main claims: the report's section of the paper opens with it
    headline: bool = False
    explain: StrictStr = ""
    needs: StrictStr = ""
    control: Control | None = None
    # A disagreement that no single unswept setting can test (the cause is another
    # simulator's code, or the swept axis itself): what was tried and why no control fits.
    # The report lists the claim as open with this text instead of "no control yet".
    open: StrictStr = ""
    # The same check for the algorithm the variant changes (a point of the grid, as
    # ``at`` writes it, over the claim's ``at``): if it passes too, the claim does not tell
    # the two apart, and the report says so beside a "reproduced".
    baseline: dict[str, Any] = Field(default_factory=dict)
    # Why this metric cannot see the paper's effect (it is below the metric's practical
    # band, thresholds.py): the claim is reported "untestable with this metric" and not
    # counted in the tallies.
    untestable: StrictStr = ""

    def check(self, loose: bool = False) -> Check:
        """The claim as a check; ``loose``: its weaker form."""
        op, value, tol = (
            (self.weaker.op, self.weaker.value, self.weaker.tolerance)
            if loose and self.weaker
            else (self.op, self.value, self.tolerance)
        )
        return Check(
            name=self.quote[:60], metric=self.metric, op=op, value=value, tolerance=tol, of=self.of
        )


class Published(_Strict):
    metric: StrictStr
    x: Any
    y: float
    label: StrictStr = "published"


class PaperMark(_Strict):
    """A number the paper's text places in time, drawn over our run's series (the paper's
    curve itself is not available: the sources are text). ``t = [a, b]`` with ``y``: a
    level over a span; ``y`` alone: a level over the whole run; ``t = a`` alone: an event.
    Times in seconds, ``y`` in the column's unit (bit/s, ms, packets)."""

    where: StrictStr
    label: StrictStr
    t: StrictFloat | list[StrictFloat] | None = None
    y: StrictFloat | None = None
    column: StrictStr | None = None  # the panel; left out: the only one, or (an event) all


class Timeseries(_Strict):
    """``[catalogue.timeseries]``: one run of the entry drawn against time, as the paper's
    figure is, with the numbers its text states (reproduce/timeseries_plot.py)."""

    at: dict[str, Any] = Field(default_factory=dict)
    columns: list[StrictStr] = Field(min_length=1)
    seed: StrictInt | None = Field(None, ge=0)
    time: list[StrictFloat] | None = None
    paper: list[PaperMark] = Field(default_factory=list)


class Meta(_Strict):
    """The ``[catalogue]`` table of one entry."""

    paper: StrictStr
    figure: StrictStr
    title: StrictStr
    x: StrictStr | None = None
    plot: list[StrictStr] = Field(default_factory=list)
    series: StrictStr = "throughput_bps"
    quick: dict[str, Any] = Field(default_factory=dict)
    published: list[Published] = Field(default_factory=list)
    timeseries: Timeseries | None = None
    claims: list[Claim] = Field(default_factory=list)
    needs: StrictStr = ""
    # At most this many seeds when a claim is inconclusive (reproduce/seeds.py; default
    # the paper's own repetitions, else 10): set only to shorten a long entry.
    max_seeds: int | None = Field(None, ge=1)
    # Why the entry caps its seeds below the paper's count (required with max_seeds): the
    # report gives it beside the entry's seed count.
    max_seeds_why: StrictStr = ""
    # Not the paper's claims as the paper measured them, but the catalogue's own
    # experiment (a control, the authors' code) or the paper's sentences measured over a
    # network we made up (a synthetic trace): the reason. Reported with the rest, counted
    # apart from the paper's tallies.
    diagnostic: StrictStr = ""


@dataclass
class Entry:
    """One catalogue file: its name (the file stem), metadata and the spec it runs."""

    name: str
    path: Path
    meta: Meta
    raw: dict[str, Any]  # the spec without [catalogue]; empty for an entry that cannot run

    @property
    def runnable(self) -> bool:
        return not self.meta.needs and bool(self.raw)


PACKAGED = Path(__file__).resolve().parents[1] / "data" / "papers"
"""The catalogue shipped inside the package (``tcplab/data/papers``; in a checkout,
``experiments/papers`` links to it), so an installed wheel reproduces without a checkout."""


def default_root() -> Path:
    """``experiments/papers`` of the working directory (a catalogue of one's own, or a
    checkout's), else the catalogue shipped in the package."""
    here = Path("experiments/papers")
    if here.is_dir():
        return here
    return PACKAGED


def load_entry(path: Path) -> Entry:
    """Read and check one catalogue file.

    Raises
    ------
    SpecError
        Naming the file and the field.
    """
    raw = read_toml(path)
    table = raw.pop("catalogue", None)
    if not isinstance(table, dict):
        raise SpecError(
            [("catalogue", "a catalogue entry needs a [catalogue] table (paper, figure, title)")],
            str(path),
        )
    try:
        meta = Meta.model_validate(table)
    except ValidationError as err:
        raise SpecError(
            [(f"catalogue.{p}", m) for p, m in field_problems(err)], str(path)
        ) from None
    problems = []
    if meta.paper not in PAPERS:
        problems.append(
            ("catalogue.paper", f"unknown paper '{meta.paper}'; known: {', '.join(PAPERS)}")
        )
    for i, c in enumerate(meta.claims):
        if not (c.needs or meta.needs) and (c.metric is None or c.op is None or c.value is None):
            problems.append(
                (
                    f"catalogue.claims[{i}]",
                    "a claim that runs needs metric, op and value "
                    "(or 'needs' saying why it cannot run)",
                )
            )
    for i, c in enumerate(meta.claims):
        problems += [(f"catalogue.claims[{i}].{f}", m) for f, m in weaker_problems(c)]
        if c.control is not None and c.control.kind == "condition" and not c.control.evidence:
            problems.append(
                (
                    f"catalogue.claims[{i}].control.evidence",
                    "a 'condition' control sets what the paper plausibly had: say why "
                    "(its text, its kernel or simulator version), or call it 'diagnostic'",
                )
            )
    if meta.max_seeds is not None and not meta.max_seeds_why:
        problems.append(
            (
                "catalogue.max_seeds_why",
                "an entry that caps its seeds (max_seeds) must say why, for the report",
            )
        )
    if not meta.needs:
        problems += _grid_problems(meta, raw)
        if meta.timeseries is not None:
            problems += timeseries_problems(meta.timeseries, raw)
    if problems:
        raise SpecError(problems, str(path))
    return Entry(path.stem, path, meta, raw if not meta.needs else {})


_UP, _DOWN = (">", ">="), ("<", "<=")


def weaker_problems(c: Claim) -> list[tuple[str, str]]:
    """Why a claim's weaker form is not the paper's direction ([] when it is): it must
    point the way the main check does, and not accept the opposite order (Weaker's doc).
    Returns ``(field, message)`` pairs, fields relative to the claim."""
    w = c.weaker
    if w is None or c.op is None or c.value is None:
        return []
    out = []
    same_subject = (w.of is None or w.of == c.of) and (w.of_at is None or w.of_at == c.of_at)
    if c.of is not None and not same_subject:
        field = "weaker.of" if w.of not in (None, c.of) else "weaker.of_at"
        theirs = f"{w.of or c.of} at {w.of_at if w.of_at is not None else c.of_at}"
        return [
            (
                field,
                f"the weaker form compares with {theirs} where the claim compares with "
                f"{c.of} at {c.of_at}: another claim, not this one weaker; keep the "
                "claim's reference (a claim that is already a direction has no weaker form)",
            )
        ]
    if w.op == "within":
        if c.op == "within" and same_subject and w.value == c.value and w.tolerance > c.tolerance:
            return []  # the same comparison, a looser band
        return [
            (
                "weaker.op",
                "a weaker 'within' is the claim's own comparison with a wider band: the "
                "claim's op 'within', its value and reference, and a tolerance above the "
                "claim's; otherwise the paper's direction ('>' or '<' against the "
                "no-effect point or the reference)",
            )
        ]
    relative = w.of is not None or c.of is not None
    up = w.op in _UP
    if w.of is not None and c.of is None and not w.neutral:
        out.append(
            (
                "weaker.neutral",
                f"the weaker form compares with {w.of} where the claim compares with a value: "
                "another comparison, which is the claim's direction only when the paper "
                "says so; name in 'neutral' why that reference is the no-effect point "
                "(or make it a claim of its own)",
            )
        )
    if relative and not w.neutral:
        if (up and w.value < 1) or (not up and w.value > 1):
            out.append(
                (
                    "weaker.value",
                    f"{w.op} {w.value:g} x the reference also accepts the opposite order "
                    f"(ours {'below' if up else 'above'} the reference); use "
                    f"'{w.op[0]}' 1 or a factor on the paper's side of 1",
                )
            )
        elif w.value == 1 and w.op in (">=", "<="):
            out.append(
                (
                    "weaker.op",
                    f"'{w.op}' 1 x the reference accepts no difference at all; the direction "
                    f"is '{w.op[0]}' 1",
                )
            )
    elif not relative:
        if w.op in (">=", "<="):
            out.append(
                (
                    "weaker.op",
                    f"'{w.op} {w.value:g}' is a looser level, not a direction: a direction is "
                    f"'{w.op[0]}' the no-effect point, named in 'neutral'",
                )
            )
        if not w.neutral:
            out.append(
                (
                    "weaker.neutral",
                    "a weaker form without a reference must name why its value is the "
                    "no-effect point (the fair share, no reduction, the base RTT)",
                )
            )
    # the same way as the main check; for 'within', the side the paper's value is on
    same_reference = w.of is None or w.of == c.of
    if c.op in _UP + _DOWN:
        if (c.op in _UP) != up:
            out.append(("weaker.op", f"'{w.op}' points against the main check's '{c.op}'"))
    elif same_reference and (up != (c.value > w.value)):
        out.append(
            (
                "weaker.op",
                f"the paper's value {c.value:g} is {'above' if c.value > w.value else 'below'} "
                f"{w.value:g}, so its direction is '{'>' if c.value > w.value else '<'}'",
            )
        )
    return out


def _grid_problems(meta: Meta, raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Claims and the plot must name swept paths and values of the grid, and metrics that
    parse: a typo would otherwise turn a claim into "not run" silently."""
    grid = prose.grid_of(raw)
    problems = prose.problems(meta.claims, grid, None)
    if meta.x and meta.x not in grid:
        problems.append(
            ("catalogue.x", f"'{meta.x}' is not swept; swept: {', '.join(grid) or 'nothing'}")
        )
    for j, m in enumerate(meta.plot):
        if not METRIC_EXPR.match(m):
            problems.append((f"catalogue.plot[{j}]", f"cannot parse metric {m!r}"))
    for i, c in enumerate(meta.claims):
        for field in ("metric", "of"):
            expr = getattr(c, field)
            if expr is not None and not METRIC_EXPR.match(expr):
                problems.append((f"catalogue.claims[{i}].{field}", f"cannot parse metric {expr!r}"))
        if c.weaker and c.weaker.of is not None and not METRIC_EXPR.match(c.weaker.of):
            problems.append(
                (f"catalogue.claims[{i}].weaker.of", f"cannot parse metric {c.weaker.of!r}")
            )
        for name, axis, at in (("across", c.across, c.at), ("of_across", c.of_across, c.of_at)):
            if axis is None:
                continue
            if axis not in grid:
                problems.append(
                    (
                        f"catalogue.claims[{i}].{name}",
                        f"'{axis}' is not swept; swept: {', '.join(grid) or 'nothing'}",
                    )
                )
            elif axis in at:
                problems.append(
                    (
                        f"catalogue.claims[{i}].{name}",
                        f"'{axis}' varies across the range, so "
                        f"it cannot also be fixed in the claim's point",
                    )
                )
        if c.control is not None and c.open:
            problems.append(
                (
                    f"catalogue.claims[{i}].open",
                    "a claim with a control is judged by it; 'open' is for a claim that no "
                    "single setting can test (give one or the other)",
                )
            )
        if c.control is not None:
            for path in c.control.set:
                if path in grid:
                    problems.append(
                        (
                            f"catalogue.claims[{i}].control.set",
                            f"'{path}' is swept by the entry; a control sets what the grid "
                            f"does not (its points stay those of the claim)",
                        )
                    )
        if c.of_across is not None and c.of is None:
            problems.append(
                (
                    f"catalogue.claims[{i}].of_across",
                    "needs 'of', the metric whose range is the reference",
                )
            )
        for name, at in (
            ("at", c.at),
            ("of_at", c.of_at),
            ("baseline", c.baseline),
            ("weaker.of_at", (c.weaker and c.weaker.of_at) or {}),
        ):
            for k, v in at.items():
                if k not in grid:
                    problems.append(
                        (
                            f"catalogue.claims[{i}].{name}",
                            f"'{k}' is not swept; swept: {', '.join(grid) or 'nothing'}",
                        )
                    )
                    continue
                for x in v if isinstance(v, list) else [v]:
                    if str(x) not in grid[k]:
                        problems.append(
                            (
                                f"catalogue.claims[{i}].{name}",
                                f"{k} = {x!r} is not in the grid ({', '.join(grid[k])})",
                            )
                        )
    return problems


def load_catalogue(root: Path | None = None, select: list[str] | None = None) -> list[Entry]:
    """Every entry under ``root`` (sorted by paper and name), or those whose paper key or
    file name starts with one of ``select``."""
    root = Path(root) if root else default_root()
    if not root.is_dir():
        raise SpecError([("--catalogue", f"{root} is not a directory of catalogue entries")])
    entries = [load_entry(p) for p in sorted(root.glob("*/*.toml"))]
    cross = prose.cross_problems(entries)  # templates that read another entry
    if cross:
        raise SpecError(cross)
    if select:
        chosen = [
            e for e in entries if any(e.meta.paper == s or e.name.startswith(s) for s in select)
        ]
        unknown = [
            s for s in select if not any(e.meta.paper == s or e.name.startswith(s) for e in entries)
        ]
        if unknown:
            raise SpecError(
                [
                    (
                        "selection",
                        f"no catalogue entry matches {', '.join(unknown)}; papers: "
                        f"{', '.join(PAPERS)}; or an entry name such as {entries[0].name}",
                    )
                ]
            )
        entries = chosen
    return entries
