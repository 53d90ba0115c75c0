"""The simulator backend: a resolved spec (:mod:`.resolve`) copied into the engine's
``WorldConfig`` (:mod:`.world_config`) and run on the Rust engine (:mod:`.run`)."""

from tcplab.backends.sim.resolve import ACCESS_RATE_FACTOR, bdp_rtt_ns, resolve, size_to_packets
from tcplab.backends.sim.run import check_with_engine, run_config, spec_field
from tcplab.backends.sim.world_config import config_json, world_config

__all__ = [
    "ACCESS_RATE_FACTOR",
    "bdp_rtt_ns",
    "check_with_engine",
    "config_json",
    "resolve",
    "run_config",
    "size_to_packets",
    "spec_field",
    "world_config",
]
