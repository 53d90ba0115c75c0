"""The Python API: ``tcplab.run(spec) -> Result`` and ``tcplab.sweep(...)``, the same
work the CLI does, for notebooks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcplab import preset_file
from tcplab.errors import SpecError
from tcplab.runs.execute import execute
from tcplab.runs.result import Result, Storing, load_run, store_run
from tcplab.runs.sweep import run_sweep
from tcplab.runs.sweep_data import load_sweep as _load_sweep
from tcplab.specs.load import SpecLike
from tcplab.specs.load import as_spec as _as_spec
from tcplab.specs.model import Spec
from tcplab.storage.ownership import check_replaceable


def as_spec(spec: SpecLike, overrides: dict[str, Any] | None = None) -> Spec:
    """A validated :class:`Spec` from a Spec, a TOML path or a raw dictionary."""
    _check_arguments(overrides, None)
    return _as_spec(spec, overrides)


def _check_arguments(overrides: Any, progress: Any) -> None:
    """API misuse as a SpecError naming the argument (an AttributeError or 'the simulator
    failed' said nothing about it)."""
    if overrides is not None and (
        not isinstance(overrides, dict) or not all(isinstance(k, str) for k in overrides)
    ):
        raise SpecError(
            [
                (
                    "overrides",
                    "must be a dict of {'path.to.field': value}, e.g. "
                    f"{{'bottleneck.buffer': '2bdp'}}; got {type(overrides).__name__} {overrides!r:.80}",
                )
            ]
        )
    if progress is not None and not callable(progress):
        raise SpecError(
            [
                (
                    "progress",
                    "must be a function taking the simulated time in seconds, or None; "
                    f"got {type(progress).__name__}",
                )
            ]
        )


def _check_report_flags(report: Any, pdf: Any) -> None:
    """``pdf=True`` with ``report=False`` asks for a report and for none: refused, naming
    the argument, rather than silently writing no PDF."""
    for name, value in (("report", report), ("pdf", pdf)):
        if not isinstance(value, bool):
            raise SpecError([(name, f"must be True or False; got {type(value).__name__}")])
    if pdf and not report:
        raise SpecError([("pdf", "report.pdf is part of the report: pdf=True needs report=True")])


def run(
    spec: SpecLike,
    out: str | Path | None = None,
    *,
    overrides: dict[str, Any] | None = None,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
    report: bool = True,
    pdf: bool = False,
) -> Result:
    """Run one experiment.

    Parameters
    ----------
    spec : Spec, path or dict
        The experiment.
    out : path, optional
        Write the run directory here (atomically). An existing run directory tcplab wrote
        is replaced; anything else there (a file, a directory with other files) is refused
        with a SpecError before the run starts, as ``tcplab run -o`` does.
    overrides : dict, optional
        ``{"bottleneck.buffer": "2bdp", ...}`` applied before validation.
    seed : int, optional
        Overrides ``experiment.seed``.
    progress : callable, optional
        Called with the simulated time (s) about 100 times.
    report : bool
        Draw report.png and report.html when writing.
    pdf : bool
        Also write report.pdf (the PNG's figure as vectors; off by default, since it
        costs about a third of the report's drawing time). Needs ``report``.

    Returns
    -------
    Result
        DataFrames ``series``, ``queue``, ``summary`` (per flow) and ``aggregate`` metrics.
    """
    _check_arguments(overrides, progress)
    _check_report_flags(report, pdf)
    if out is not None:
        check_replaceable(Path(out), "out")
    s = as_spec(spec, overrides)
    if seed is not None:
        s = s.model_copy(deep=True)
        s.experiment.seed = seed
    failure: list[BaseException] = []

    def guarded(sim_time_s: float) -> None:
        try:
            progress(sim_time_s)  # type: ignore[misc]
        except BaseException as exc:
            failure.append(exc)
            raise

    try:
        result, config, wall = execute_spec(s, guarded if progress is not None else None)
    except Exception:
        # The engine reports a callback's exception as its own failure ("engine config:
        # ..."); the caller's own exception, with its traceback, says what went wrong.
        if failure:
            raise failure[0] from None
        raise
    if out is not None:
        store_run(result, out, config, wall, flag="out", storing=Storing(report=report, pdf=pdf))
    return result


def execute_spec(
    spec: Spec, progress: Callable[[float], None] | None = None
) -> tuple[Result, dict[str, Any], float]:
    """:func:`tcplab.runs.execute.execute`, or for a spec with ``preset:`` flows
    (tcplab.preset_file) the stepping driver that runs their Python between the engine's
    steps (tcplab.gym.preset_run; simulator only)."""
    if not preset_file.flows(spec):
        return execute(spec, progress)
    if (spec.experiment.backend or "sim") != "sim":
        raise SpecError(preset_file.refuse(spec, preset_file.KERNEL_REFUSES))
    # why: here, not at the top: tcplab.gym imports gymnasium, which most runs never need
    from tcplab.gym.preset_run import execute_presets

    return execute_presets(spec, progress)


def load(path: str | Path) -> Result:
    """Load a stored run directory."""
    return load_run(path)


def load_sweep(path: str | Path) -> Any:
    """Load a stored sweep directory: see :class:`tcplab.runs.sweep_data.SweepData`
    (``.table`` one row per run and flow, ``.runs`` one per run, ``.series``)."""
    return _load_sweep(path)


def sweep(
    spec: SpecLike,
    out: str | Path,
    *,
    workers: int | None = None,
    executor: str = "local",
    overrides: dict[str, Any] | None = None,
    progress: bool = False,
    reports: bool = False,
    pdf: bool = False,
) -> Any:
    """Run the ``[sweep]`` grid of a spec; see :func:`tcplab.runs.sweep.run_sweep`
    (``reports``: draw each computed run's report.png and report.html; ``pdf``: and its
    report.pdf, which implies ``reports``).

    Returns
    -------
    DataFrame
        One row per run: the swept values, seed, digest and the aggregate metrics.
    """
    _check_arguments(overrides, None)
    source = str(spec) if isinstance(spec, (str, Path)) else None
    return run_sweep(
        spec,
        Path(out),
        workers=workers,
        executor=executor,
        overrides=overrides,
        progress=progress,
        source=source,
        reports=reports,
        pdf=pdf,
    )
