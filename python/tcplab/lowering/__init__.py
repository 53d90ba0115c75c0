"""Stage 2, lowering: a spec resolved against its bottleneck (:mod:`.resolve`: RTT split,
access rates, BDP sizes) and copied into the engine's ``WorldConfig`` (:mod:`.world_config`).
Every backend runs this form: the simulator hands it to the engine, the kernel backend's
emulator builds its links from it."""

from tcplab.lowering.resolve import ACCESS_RATE_FACTOR, bdp_rtt_ns, resolve, size_to_packets
from tcplab.lowering.world_config import config_json, world_config

__all__ = [
    "ACCESS_RATE_FACTOR",
    "bdp_rtt_ns",
    "config_json",
    "resolve",
    "size_to_packets",
    "world_config",
]
