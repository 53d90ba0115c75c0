"""The simulator backend: a lowered spec (:mod:`tcplab.lowering`) run on the Rust engine
(:mod:`.run`)."""

from tcplab.backends.sim.run import check_with_engine, run_config, spec_field

__all__ = ["check_with_engine", "run_config", "spec_field"]
