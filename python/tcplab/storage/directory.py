"""Writing and reading a run's directory.

```
DIR/spec.toml       the resolved spec          DIR/series.parquet, series.csv
DIR/world.json      the engine config it ran   DIR/queue.parquet,  queue.csv
DIR/summary.json    metrics                    DIR/report.png, report.html
DIR/manifest.json   version, commit, seed, wall time, sha256 of every other file
                                               DIR/report.pdf (only when asked for)
```

A directory is written under a temporary name beside ``DIR`` and renamed into place
only when complete, so a crash or a kill never leaves a half-written run: ``DIR`` either
holds a whole run or does not exist.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab import __version__
from tcplab.analysis.rundata import RunData
from tcplab.specs import tomlout
from tcplab.specs.model import Spec, parse_spec, read_toml

MANIFEST = "manifest.json"
TMP_PREFIX = ".tmp-"


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


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def provenance() -> dict[str, Any]:
    """What a reviewer needs to reproduce a run besides its spec and seed: when and
    where it ran, and the versions of Python and of the libraries its numbers pass
    through. Only the manifest holds these; the other files stay a function of (spec,
    seed, tcplab version)."""
    import datetime
    import importlib.metadata
    import platform

    def version(pkg: str) -> str | None:
        try:
            return importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "libraries": {p: version(p) for p in ("numpy", "pandas", "pyarrow", "pydantic")},
    }


def git_commit() -> str | None:
    """The commit tcplab runs from: the source tree's when it is a git checkout, else
    the one the compiled extension was built from (an installed wheel), else None."""
    return _checkout_commit() or _build_commit()


def _build_commit() -> str | None:
    try:
        from tcplab.engine import engine

        return engine().build_info().get("git_commit")
    except (RuntimeError, AttributeError):
        return None


def _checkout_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=5,
    ).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


def tmp_prefix(name: str) -> str:
    """The prefix of this process's temporaries for ``name``: ``.tmp-<name>-p<pid>-``. The
    pid lets a later run tell a dead process's leftovers from a live one's work."""
    return f"{TMP_PREFIX}{name}-p{os.getpid()}-"


_OURS = re.compile(re.escape(TMP_PREFIX) + r".*-p(\d+)-[A-Za-z0-9_]+$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def clean_stale_tmp(parent: Path) -> list[Path]:
    """Remove the temporaries of tcplab processes that no longer run (killed with
    SIGKILL, or by a crash of the machine) from ``parent``; return what was removed.
    A live process's temporaries are left alone (a concurrent run's work)."""
    removed = []
    try:
        entries = list(Path(parent).iterdir())
    except OSError:
        return removed
    for p in entries:
        m = _OURS.match(p.name)
        if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def check_output_dir(out: Path, flag: str = "-o") -> None:
    """Refuse, before any work, an output path that cannot be written: a file on the way
    to it, or a nearest existing ancestor that is not a writable directory.

    Raises
    ------
    SpecError
        Naming ``flag`` and the path.
    """
    from tcplab.errors import SpecError

    out = Path(out)
    probe = out
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe != out and not probe.is_dir():
        raise SpecError([(flag, f"{out}: {probe} is a file, not a directory")])
    if out.exists() and not out.is_dir():
        raise SpecError([(flag, f"{out} is a file, not a directory")])
    writable_dir = out.parent if out.exists() else probe
    if not os.access(writable_dir, os.W_OK | os.X_OK):
        raise SpecError([(flag, f"{out}: {writable_dir} is not writable")])


@contextmanager
def atomic_dir(
    final: Path, replace: bool = False, may_replace: Callable[[Path], None] | None = None
) -> Iterator[Path]:
    """Yield a fresh temporary directory beside ``final``; on success rename it to
    ``final`` (replacing an existing one if ``replace``), on any error remove it. Dead
    processes' leftovers beside it are removed first. ``may_replace(final)`` is called
    just before an existing ``final`` is replaced and raises to refuse (what is there
    may have changed while the run ran)."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(final.parent)
    tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix(final.name), dir=final.parent))
    try:
        yield tmp
        if final.exists():
            if not replace:
                raise FileExistsError(f"{final} exists")
            if may_replace is not None:
                may_replace(final)
            old = Path(tempfile.mkdtemp(prefix=tmp_prefix(final.name + "-old"), dir=final.parent))
            os.rename(final, old / "x")
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        from tcplab.errors import disk_full

        if disk_full(err) and not getattr(err, "filename", None):
            # Say where: the writers (pyarrow, matplotlib) often do not.
            raise OSError(errno.ENOSPC, "No space left on device", str(final)) from err
        raise


def spec_toml(spec: Spec) -> str:
    """The resolved spec as TOML text (the ``sweep`` table left out)."""
    doc = spec.to_dict()
    doc.pop("sweep", None)
    doc.pop("catalogue", None)
    if not doc.get("checks"):
        doc.pop("checks", None)
    if not doc.get("events"):
        doc.pop("events", None)
    if not doc["experiment"].get("description"):
        doc["experiment"].pop("description", None)
    for f in doc["flows"]:
        if not f.get("params"):
            f.pop("params", None)
    return tomlout.dumps(
        doc, header=f"Resolved by tcplab {__version__}: defaults filled, sizes in packets."
    )


def _write_frame(df: pd.DataFrame, stem: Path) -> None:
    df.to_parquet(stem.with_suffix(".parquet"), index=False)
    df.to_csv(stem.with_suffix(".csv"), index=False, float_format="%.9g")


def write_run(
    result: Result,
    out: str | Path,
    config: dict[str, Any],
    wall_time_s: float,
    replace: bool = True,
    report: bool = True,
    flag: str = "-o",
    pdf: bool = False,
) -> Path:
    """Write a run directory atomically; return its path. With ``replace``, an existing
    ``out`` is replaced only if it is a run tcplab wrote with nothing of the user's in it
    (storage/ownership.py); otherwise a SpecError naming ``flag`` refuses, before the run
    is written and again just before the rename.

    Outputs other than manifest.json are deterministic for a given spec, seed and tcplab
    version, so their sha256 digests in the manifest are identical across runs. The
    report (``report``) is report.png and report.html, plus report.pdf with ``pdf``; the
    manifest lists the files written, so a run without a PDF is as complete as one with.
    """
    from tcplab.storage.ownership import check_replaceable

    out = Path(out)
    if replace:
        check_replaceable(out, flag)
    with atomic_dir(out, replace=replace, may_replace=lambda p: check_replaceable(p, flag)) as tmp:
        (tmp / "spec.toml").write_text(spec_toml(result.spec))
        (tmp / "world.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
        (tmp / "summary.json").write_text(json.dumps(result.summary_json, indent=1) + "\n")
        _write_frame(result.series, tmp / "series")
        _write_frame(result.queue, tmp / "queue")
        if result.run is not None and result.run.captures:
            from tcplab.storage.pcap import write_captures

            write_captures(tmp, result.run.captures, config)
        if report:
            from tcplab.report.run_report import save_report

            save_report(result, tmp, pdf=pdf)
        outputs = sorted(p.name for p in tmp.iterdir() if p.is_file())
        manifest = {
            "tcplab_version": __version__,
            "git_commit": git_commit(),
            "experiment": result.spec.experiment.name,
            "seed": result.spec.experiment.seed,
            "wall_time_s": round(wall_time_s, 3),
            **provenance(),
            "sha256": {name: sha256_file(tmp / name) for name in outputs},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        result.manifest = manifest
    result.path = out
    return out


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a complete tcplab run (it has a manifest)."""
    return (Path(path) / MANIFEST).is_file()


def load_run(path: str | Path) -> Result:
    """Read a stored run back into a :class:`Result` (nothing is re-simulated).

    Raises
    ------
    FileNotFoundError
        If ``path`` is not a complete run directory.
    """
    from tcplab.analysis.rundata import RunData
    from tcplab.analysis.summary import flow_metrics

    p = Path(path)
    if not is_run_dir(p):
        raise FileNotFoundError(f"{p} is not a tcplab run directory (no {MANIFEST})")
    spec = parse_spec(read_toml(p / "spec.toml"), str(p / "spec.toml"), check_algorithms=False)
    summary_json = json.loads((p / "summary.json").read_text())
    series = pd.read_parquet(p / "series.parquet")
    queue = pd.read_parquet(p / "queue.parquet")
    flows = pd.DataFrame(summary_json.get("flows", []))
    if not flows.empty:
        flows = flows.set_index("flow")
    run = RunData(
        spec, series, queue, flows, summary_json.get("queues", []), summary_json.get("engine", {})
    )
    per_flow = flows if not flows.empty else flow_metrics(run)
    return Result(
        spec,
        series,
        queue,
        per_flow,
        summary_json.get("aggregate", {}),
        summary_json,
        json.loads((p / MANIFEST).read_text()),
        p,
        run,
    )
