"""The real Linux kernel as a second backend (``backend = "kernel"``).

The spec's dumbbell is built from two network namespaces on this machine (senders,
receivers) joined by ``tcplab-emu``, a user-space link emulator that forwards real IP
packets between a TUN device in each namespace through the simulator's own link and
queue model (``crates/emu``), so both backends share the network and differ only in TCP.
The flows are real kernel TCP connections (``TCP_CONGESTION`` by name) driven by small
agents in the namespaces (:mod:`.agent`), sampled through ``TCP_INFO`` / ``TCP_CC_INFO``
every ``sample_interval`` (:mod:`.tcpinfo`). The run directory is the simulator's: the
same files, series columns and summary metrics (:mod:`.assemble`).

Modules: :mod:`.requirements` (what the machine must offer), :mod:`.netns` (namespaces,
cleanup), :mod:`.agent` (traffic), :mod:`.tcpinfo`, :mod:`.assemble`, :mod:`.run`.
"""

from tcplab.backends.kernel.run import check_spec, run_kernel

__all__ = ["check_spec", "run_kernel"]
