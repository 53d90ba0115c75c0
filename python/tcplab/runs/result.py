"""A run's results as a notebook and the commands see them (:class:`Result`): stored into
a run directory with its report (:func:`store_run`), read back (:func:`load_run`) and its
report redrawn in place (:func:`redraw_report`). The files themselves are
storage/directory.py's; drawing is report/'s: this module is where the two meet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import EllipsisType
from typing import Any

import pandas as pd

from tcplab.analysis.rundata import RunData
from tcplab.analysis.summary import flow_metrics
from tcplab.specs.load import parse_spec, read_toml
from tcplab.specs.model import Spec
from tcplab.storage.directory import LINKS_JSON, is_run_dir, rewrite_files, write_run
from tcplab.storage.files import MANIFEST, read_json


@dataclass
class Result:
    """A run's results, as a notebook sees them.

    Attributes
    ----------
    spec : Spec
        The resolved spec.
    series, queue : DataFrame
        The sampled per-flow series and bottleneck queue series.
    summary : DataFrame
        Per-flow metrics, one row per flow; ``flow`` is a column (and, unnamed, the
        index, so ``summary.loc[1]`` is flow 1 as before).
    aggregate : dict
        Aggregate metrics (jain_index, utilization, ...).
    summary_json : dict
        The whole summary.json document.
    manifest : dict
        The manifest (empty until written).
    path : Path or None
        Where the run is stored.
    """

    spec: Spec
    series: pd.DataFrame
    queue: pd.DataFrame
    summary: pd.DataFrame
    aggregate: dict[str, Any]
    summary_json: dict[str, Any]
    manifest: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    run: RunData | None = None

    def __post_init__(self) -> None:
        self.summary = flow_column(self.summary)

    def __repr__(self) -> str:
        s = self.spec
        ccs = ", ".join(dict.fromkeys(str(c) for c in self.summary.get("cc", [])))
        util = self.aggregate.get("utilization")
        return (
            f"<Result {s.experiment.name!r}: {len(self.summary)} flows ({ccs or 'none'}), "
            f"{s.experiment.duration / 1e9:g} s, seed {s.experiment.seed}"
            + (f", utilization {util:.3f}" if isinstance(util, (int, float)) else "")
            + (f", stored in {self.path}" if self.path is not None else ", not stored")
            + ">"
        )

    def report(self, path: str | Path | None = None) -> Any:
        """Draw the multi-panel report; save it to ``path`` if given. Returns the figure."""
        # Here, not at the top: matplotlib's import would slow every `import tcplab.cli`.
        from tcplab.report.run_report import draw_report

        fig = draw_report(self)
        if path is not None:
            fig.savefig(path)
        return fig


def flow_column(table: pd.DataFrame) -> pd.DataFrame:
    """A per-flow table with ``flow`` as its first column (what a notebook groups, merges
    and filters by) and the flow numbers, unnamed, as its index (so ``.loc[fid]`` and
    ``iterrows()`` still give flow ids; a named index would make ``flow`` ambiguous to
    pandas' groupby and merge)."""
    if table.index.name == "flow" and "flow" not in table.columns:
        table = table.reset_index()
    if "flow" in table.columns:
        table.index = pd.Index(table["flow"].to_numpy())
    return table


def load_run(path: str | Path) -> Result:
    """Read a stored run back into a :class:`Result` (nothing is re-simulated).

    Raises
    ------
    FileNotFoundError
        If ``path`` is not a complete run directory.
    """
    p = Path(path)
    if not is_run_dir(p):
        raise FileNotFoundError(f"{p} is not a tcplab run directory (no {MANIFEST})")
    spec = parse_spec(read_toml(p / "spec.toml"), str(p / "spec.toml"), check_algorithms=False)
    summary_json = read_json(p / "summary.json")
    series = pd.read_parquet(p / "series.parquet")
    queue = pd.read_parquet(p / "queue.parquet")
    flows = pd.DataFrame(summary_json.get("flows", []))
    if not flows.empty:
        flows = flows.set_index("flow")
    run = RunData(
        spec, series, queue, flows, summary_json.get("queues", []), summary_json.get("engine", {})
    )
    if (p / "probes.parquet").is_file():  # [[probes]]: one row per echo
        run.probe_rtts = pd.read_parquet(p / "probes.parquet")
    # The links the engine ran; absent from runs stored by tcplab <= 0.10.0, whose metrics
    # then read the spec (analysis/rundata.py RunData.link).
    if (p / LINKS_JSON).is_file():
        run.links = list(read_json(p / LINKS_JSON).get("links", []))
    per_flow = flows if not flows.empty else flow_metrics(run)
    return Result(
        spec,
        series,
        queue,
        per_flow,
        summary_json.get("aggregate", {}),
        summary_json,
        read_json(p / MANIFEST),
        p,
        run,
    )


@dataclass(frozen=True)
class Storing:
    """What a stored run holds beside its data, as a sweep hands it to its workers:
    report.png and report.html (``report``), report.pdf too (``pdf``), the tables as CSV
    beside their Parquet (``csv``; write_run), and the manifest's git commit when the
    caller knows it (``commit``; ``...``: ask git for this run)."""

    report: bool = False
    pdf: bool = False
    csv: bool = True
    commit: str | None | EllipsisType = ...


DATA_ONLY = Storing()
"""A run's data with no report: a sweep's default (``tcplab report`` draws one later)."""


def store_run(
    result: Result,
    out: str | Path,
    config: dict[str, Any],
    wall_time_s: float,
    replace: bool = True,
    flag: str = "-o",
    storing: Storing = Storing(report=True),
) -> Path:
    """Write ``result`` as a run directory (storage/directory.py write_run) with what
    ``storing`` asks for (by default its report.png and report.html)."""

    def draw(tmp: Path) -> None:
        # Here, not at the top: matplotlib's import would slow every `import tcplab.cli`.
        from tcplab.report.run_report import save_report

        save_report(result, tmp, pdf=storing.pdf)

    return write_run(
        result,
        out,
        config,
        wall_time_s,
        replace=replace,
        flag=flag,
        extra=draw if storing.report else None,
        commit=storing.commit,
        csv=storing.csv,
    )


def redraw_report(result: Result, pdf: bool = False) -> list[str]:
    """Redraw report.png and report.html of a stored run (from :func:`load_run`), and
    report.pdf when ``pdf`` or when the run already has one (so no PDF is left older than
    its PNG); refresh their digests in the manifest. Returns the names written."""
    # Here, not at the top: matplotlib's import would slow every `import tcplab.cli`.
    from tcplab.report.run_report import PDF_FILE, save_report

    assert result.path is not None, "redraw_report needs a stored run"
    pdf = pdf or PDF_FILE in result.manifest.get("sha256", {})
    return rewrite_files(result.path, lambda tmp: save_report(result, tmp, pdf=pdf))
