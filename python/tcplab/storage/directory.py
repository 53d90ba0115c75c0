"""Writing and reading a run's directory.

```
DIR/spec.toml       the resolved spec          DIR/series.parquet, series.csv
DIR/world.json      the engine config it ran   DIR/queue.parquet,  queue.csv
DIR/summary.json    metrics                    DIR/report.png, report.html
DIR/manifest.json   version, commit, seed, wall time, sha256 of every other file
                                               DIR/probes.parquet, probes.csv (with [[probes]])
                                               DIR/report.pdf (only when asked for)
                                               DIR/bpf_printk.log (when a BPF program printed)
                                               DIR/bpf_maps.json (BPF programs' maps at the end)
                                               DIR/links.json (the links the engine ran)
```

A directory is written under a temporary name beside ``DIR`` and renamed into place
only when complete, so a crash or a kill never leaves a half-written run: ``DIR`` either
holds a whole run or does not exist.
"""

from __future__ import annotations

import csv as csv_module
import datetime
import functools
import importlib.metadata
import json
import platform
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from types import EllipsisType
from typing import Any

import numpy as np
import pandas as pd

from tcplab.engine import engine
from tcplab.errors import SpecError
from tcplab.specs import tomlout
from tcplab.specs.model import Spec
from tcplab.storage.files import (
    MANIFEST,
    atomic_dir,
    sha256_file,
)
from tcplab.storage.ownership import check_replaceable, read_manifest, write_owned
from tcplab.storage.pcap import write_captures
from tcplab.version import __version__


def provenance() -> dict[str, Any]:
    """What a reviewer needs to reproduce a run besides its spec and seed: when and
    where it ran, and the versions of Python and of the libraries its numbers pass
    through. Only the manifest holds these; the other files stay a function of (spec,
    seed, tcplab version)."""

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "libraries": dict(_library_versions()),
    }


@functools.cache
def _library_versions() -> tuple[tuple[str, str | None], ...]:
    """The installed versions of the libraries a run's numbers pass through, read once
    per process (3 ms a run, from the packages' metadata): the libraries this process
    imported do not change under it, whatever is installed meanwhile."""

    def version(pkg: str) -> str | None:
        try:
            return importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            return None

    return tuple((p, version(p)) for p in ("numpy", "pandas", "pyarrow", "pydantic"))


def git_commit() -> str | None:
    """The commit tcplab runs from: the source tree's when it is a git checkout, else
    the one the compiled extension was built from (an installed wheel), else None."""
    return _checkout_commit() or _build_commit()


def _build_commit() -> str | None:
    try:
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


CSV_FLOAT = "%.9g"


def _write_frame(df: pd.DataFrame, stem: Path, csv: bool = True) -> None:
    df.to_parquet(stem.with_suffix(".parquet"), index=False)
    if not csv:
        return
    # float_format still applies to a float column left as numbers (non-unique names)
    csv_text_floats(df).to_csv(stem.with_suffix(".csv"), index=False, float_format=CSV_FLOAT)


def csv_text_floats(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each float64 column as the text ``to_csv(float_format="%.9g")`` writes
    for it, byte for byte: NaN as an empty field; a whole number below 1e9 in magnitude
    (which %.9g prints as its digits, no exponent, no point) by numpy's integer-to-text
    conversion; any other value (and -0.0, printed "-0") by ``%.9g`` itself. Pandas
    formats every float through a Python call, which made series.csv a catalogue run's
    largest cost after the engine, larger than it for 10 flows over 300 s (most series
    values are whole: packets, bits per second; benches/RESULTS.md, "Engine speed, third
    step")."""
    if not df.columns.is_unique:  # df[name] would be a table: pandas formats it all
        return df
    out = df.copy(deep=False)
    for name in df.columns:
        if df[name].dtype != np.float64:
            continue
        values = df[name].to_numpy()
        text = np.full(len(values), "", dtype=object)
        nan = np.isnan(values)
        whole = (
            ~nan
            & (np.abs(values) < 1e9)
            & (values == np.trunc(values))
            & ~((values == 0) & np.signbit(values))
        )
        text[whole] = values[whole].astype(np.int64).astype(str).astype(object)
        other = ~nan & ~whole
        text[other] = [CSV_FLOAT % v for v in values[other].tolist()]
        out[name] = text
    return out


def write_run(
    result: Any,
    out: str | Path,
    config: dict[str, Any],
    wall_time_s: float,
    replace: bool = True,
    flag: str = "-o",
    extra: Callable[[Path], object] | None = None,
    commit: str | None | EllipsisType = ...,
    csv: bool = True,
) -> Path:
    """Write a run directory atomically; return its path. With ``replace``, an existing
    ``out`` is replaced only if it is a run tcplab wrote with nothing of the user's in it
    (storage/ownership.py); otherwise a SpecError naming ``flag`` refuses, before the run
    is written and again just before the rename.

    Outputs other than manifest.json are deterministic for a given spec, seed and tcplab
    version, so their sha256 digests in the manifest are identical across runs.
    ``extra(tmp)`` writes further files (the caller's report) before the manifest is made;
    the manifest lists the files written, so a run without a report is as complete as
    one with. ``commit`` is the manifest's ``git_commit`` when the caller knows it (a
    sweep asks git once for all its runs: two git processes, 8 ms of CPU a run); by
    default it is asked for here (:func:`git_commit`). ``csv``: the series, queue and
    probes tables as CSV beside their Parquet (the catalogue stores Parquet only: a
    30,000-row series.csv is 4.3 MB and costs twice the engine's CPU to write).
    """
    out = Path(out)
    if replace:
        check_replaceable(out, flag)
    with atomic_dir(out, replace=replace, may_replace=lambda p: check_replaceable(p, flag)) as tmp:
        (tmp / "spec.toml").write_text(spec_toml(result.spec))
        (tmp / "world.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
        (tmp / "summary.json").write_text(json.dumps(result.summary_json, indent=1) + "\n")
        _write_frame(result.series, tmp / "series", csv)
        _write_frame(result.queue, tmp / "queue", csv)
        if result.spec.probes and result.run is not None:  # one row per echo (specs/probes.py)
            _write_frame(result.run.probe_rtts, tmp / PROBES, csv)
        if result.run is not None and result.run.captures:
            write_captures(tmp, result.run.captures, config)
        if result.run is not None and (result.run.printk or result.run.printk_dropped):
            write_printk(tmp / PRINTK_LOG, result.run.printk, result.run.printk_dropped)
        if result.run is not None and result.run.bpf_maps:
            (tmp / MAPS_JSON).write_text(
                json.dumps({"programs": result.run.bpf_maps}, indent=1) + "\n"
            )
        if result.run is not None and result.run.links:
            (tmp / LINKS_JSON).write_text(json.dumps({"links": result.run.links}, indent=1) + "\n")
        if result.run is not None and len(result.run.actions):
            write_actions(tmp / ACTIONS_FILE, result.run.actions)
        if extra is not None:
            extra(tmp)
        outputs = sorted(p.name for p in tmp.iterdir() if p.is_file())
        manifest = {
            "tcplab_version": __version__,
            "git_commit": git_commit() if commit is ... else commit,
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


PROBES = "probes"
"""The probes' table's stem: probes.parquet, probes.csv (analysis/rundata.py PROBE_COLUMNS)."""
PRINTK_LOG = "bpf_printk.log"
LINKS_JSON = "links.json"
"""The links the engine ran (RunOutput.links, net/network.rs): {"links": [{"name",
"rate_bps", "delay_ns", "loss", "trace" (when traced), "events": [{"at_ns", "rate_bps",
"delay_ns", "loss"}]}]}, what the analysis reads the capacity from (rundata.link). Runs
stored by tcplab <= 0.10.0 have none."""
MAPS_JSON = "bpf_maps.json"
"""Every map of each BPF program the run loaded, at its end: {"programs": [{"program",
"maps": [{"name", "type" (enum bpf_map_type), "key_size", "value_size", "max_entries",
"entries": [{"key", "value"} in hex bytes]}]}]}; global sections are maps named by their
section (".bss", ".data", ".rodata", ".kconfig"), as libbpf makes them."""


ACTIONS_FILE = "actions.csv"
"""The writes a driver made between the engine's steps (tcplab.gym's Simulation, a
``preset:`` flow's driver): time_s, flow, field (cwnd_pkts, pacing_rate_bps,
ssthresh_pkts), value. A run's spec.toml alone does not reproduce a run an agent drove."""


def write_actions(path: Path, actions: Sequence[tuple[int, int, str, float]]) -> None:
    """``actions`` ((time ns, flow, field, value), in time order) as :data:`ACTIONS_FILE`;
    values in repr form, so that a float reads back bit for bit."""
    with open(path, "w", newline="") as fh:
        w = csv_module.writer(fh)
        w.writerow(["time_s", "flow", "field", "value"])
        for t_ns, flow, field, value in actions:
            w.writerow([f"{t_ns / 1e9:.9f}", flow, field, repr(value)])


def write_printk(path: Path, lines: list[dict[str, Any]], dropped: int) -> None:
    """A run's ``bpf_printk`` output as the kernel's trace_pipe shows it, one line each:
    the time in seconds (simulated), the program's name, its text (a trailing newline of
    the format dropped, as trace_pipe prints one line per call)."""
    with open(path, "w", encoding="utf-8") as fh:
        for row in lines:
            text = str(row["text"]).rstrip("\n")
            fh.write(f"{int(row['time_ns']) / 1e9:12.6f} {row['program']}: {text}\n")
        if dropped:
            fh.write(f"# {dropped} more lines not kept (only the first 100000 per program)\n")


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a complete tcplab run (it has a manifest)."""
    return (Path(path) / MANIFEST).is_file()


def rewrite_files(d: Path, write: Callable[[Path], list[str]]) -> list[str]:
    """Replace files of the stored run ``d`` under the one rule (ownership.write_owned):
    ``write(tmp)`` writes them beside the run and returns their names; each is moved in
    only if ``d``'s manifest lists a file of that name with the digest it has (or there is
    none), and its digest is refreshed in the manifest. Returns the names written."""
    if read_manifest(d) is None:
        raise SpecError([("DIR", f"{d} has no manifest.json tcplab wrote; not a run of ours")])
    return write_owned(d, write, "DIR", manifest=MANIFEST, kind="report")
