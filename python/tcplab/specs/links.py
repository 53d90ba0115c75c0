"""The names of a spec's links as the engine names them (crates/sim/src/net/topology.rs):
what ``experiment.pcap`` may name and what the pcap writer labels."""

from __future__ import annotations

from collections.abc import Sequence


def link_names(n_flows: int, links: Sequence[str] = ()) -> list[str]:
    """The engine's link names for a dumbbell of ``n_flows`` plus the ``[[links]]`` named
    ``links`` (net/topology.rs ``link_names``)."""
    names = ["bottleneck", "bottleneck_reverse"] + [h for n in links for h in (n, f"{n}_reverse")]
    for k in range(n_flows):
        names += [
            f"flow{k}.{end}"
            for end in (
                "sender_access",
                "sender_access_reverse",
                "receiver_access",
                "receiver_access_reverse",
            )
        ]
    return names
