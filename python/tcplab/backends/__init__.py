"""Backends: what runs a resolved spec. Each says what it refuses before a run starts
(:meth:`Backend.check`) and runs a spec's engine config into the engine's raw result
format (:meth:`Backend.run`), so everything after it (analysis, reports, sweeps,
``compare``) reads every backend's runs alike.

``BACKENDS`` holds them by the name a spec gives in ``experiment.backend``; the rest of
tcplab asks the registry (:func:`backend_of`), never compares backend names.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from tcplab.backends.kernel import check_spec, run_kernel
from tcplab.backends.sim import check_with_engine, run_config
from tcplab.errors import SpecError
from tcplab.specs.model import Spec

Progress = Callable[[float], None] | None


class Backend(ABC):
    """One way to run a spec."""

    name: str
    verb: str
    """How ``tcplab run`` says a finished run happened: ``simulated in 1.2 s``."""
    real_time: bool = False
    """Runs take the experiment's duration in wall time and need the machine to
    themselves: progress is shown in wall time and a sweep runs them one at a time."""

    @abstractmethod
    def check(self, spec: Spec) -> None:
        """Refuse, before anything runs, what this backend cannot do with ``spec``.

        Raises
        ------
        SpecError
            Naming the spec field and what is allowed.
        """

    @abstractmethod
    def run(
        self, spec: Spec, config: dict[str, Any], progress: Progress = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Run the resolved ``spec`` whose engine config is ``config``: the raw result (the
        engine's ``RunOutput`` form) and what the run adds to summary.json's ``engine``."""


class SimBackend(Backend):
    """The Rust simulator (crates/sim)."""

    name = "sim"
    verb = "simulated"

    def check(self, spec: Spec) -> None:
        check_with_engine(spec)

    def run(
        self, spec: Spec, config: dict[str, Any], progress: Progress = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        return run_config(config, progress, spec), {}


class KernelBackend(Backend):
    """This machine's Linux TCP in network namespaces over the emulated bottleneck
    (:mod:`tcplab.backends.kernel`)."""

    name = "kernel"
    verb = "ran on the kernel"
    real_time = True

    def check(self, spec: Spec) -> None:
        check_with_engine(spec)  # the emulator runs the engine's own link model
        check_spec(spec)

    def run(
        self, spec: Spec, config: dict[str, Any], progress: Progress = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        raw = run_kernel(spec, config, progress)
        extra = {
            "backend": self.name,
            "kernel_release": os.uname().release,
            "emulator": raw["emulator"],
            "kernel": raw.get("kernel", {}),
        }
        return raw, extra


BACKENDS: dict[str, Backend] = {b.name: b for b in (SimBackend(), KernelBackend())}
"""Every backend by name; ``experiment.backend`` names one (absent: ``sim``)."""

DEFAULT = "sim"


def get(name: str) -> Backend:
    """The backend called ``name``.

    Raises
    ------
    SpecError
        Naming ``--backend`` and the known backends.
    """
    if name not in BACKENDS:
        raise SpecError([("--backend", f"'{name}': allowed: {', '.join(BACKENDS)}")])
    return BACKENDS[name]


def backend_of(spec: Spec) -> Backend:
    """The backend a spec runs on (``experiment.backend``, else the simulator)."""
    return BACKENDS[spec.experiment.backend or DEFAULT]
