"""The kernel backend's network namespaces: names, creation, removal, and the cleanup of
leftovers from runs that died.

Every run owns two named namespaces, ``tcplab-<pid>-snd`` and ``tcplab-<pid>-rcv``
(``ip netns add``, i.e. bind mounts under /run/netns), and inside them one TUN device
each, ``tcplab<pid>s`` / ``tcplab<pid>r``, created by the emulator. Addresses
(10.201.0.1 for the senders, 10.201.1.1 for the receivers) exist only inside these two
namespaces, so no packet can go anywhere else; nothing outside them is touched.

Removal: on normal exit, on an exception and on Ctrl-C / SIGTERM (the run's ``finally``);
after a SIGKILL or a crash the namespaces stay, and the next kernel run (or ``tcplab
doctor``) removes every ``tcplab-<pid>-*`` namespace whose pid no longer runs. The TUN
devices disappear with the emulator's descriptors and with the namespaces.

Why ``ip`` (iproute2) and not pyroute2 (evaluated when the backend was built): the agents must run
*inside* the namespaces, and ``ip netns exec`` (run.py) does that for any program,
including the setup ``ip netns exec`` does beyond setns(2) (a private /sys for the
namespace, /etc/netns files); pyroute2's NSPopen proxies a process through a helper
instead. So iproute2 is needed whatever we use here, and ``tcplab doctor`` checks for it.
With pyroute2 the dozen commands below would become netlink calls in which the route
options (``initcwnd``, ``rto_min``, ``quickack``) are RTAX_* metrics in the kernel's own
units rather than the ``ip route`` options people know from ip-route(8), and a failure
would surface as a netlink errno rather than iproute2's message, which we show as it is. It would add a dependency for
no behaviour we lack; the calls stay ``ip`` subprocesses, each with a timeout.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PREFIX = "tcplab-"
NETNS_DIR = Path("/run/netns")
SENDER_ADDR, RECEIVER_ADDR = "10.201.0.1", "10.201.1.1"
SENDER_NET, RECEIVER_NET = "10.201.0.0/24", "10.201.1.0/24"
ECN_TABLE = 100
"""The sender namespace's routing table of the flows that request ECN when others do not
(any number below 253, the kernel's ``default``/``main``/``local``: the namespace is ours)."""
ECN_RULE_PREF = 1000
"""Their policy rules' priorities start here (plus the port), before the ``main`` rule
(32766)."""
_OURS = re.compile(r"^tcplab-(\d+)-(snd|rcv)$")
GSO_MAX_SEGS = 1
"""Segments per GSO packet on our devices. The TUN devices carry no offload, so every
packet on the (emulated) wire is MSS-sized anyway; but the sending stack would still
build GSO packets of tcp_tso_autosize() segments and software-segment them right before
the device, so they left back to back. The simulator sends one MSS per packet, spaced by
pacing (no TSO/GSO); with ``gso_max_segs 1`` the kernel does the same. Measured on
f01-single-bbr, seed 1: mean backlog 8.58 packets with the default GSO, 7.66 with this,
7.52 in the simulator (retransmissions 144, 144, 148). BBR's bbr_tso_segs_goal() does not
read the device limit, so its cwnd budget is unchanged."""


class NetnsError(RuntimeError):
    """An ``ip`` command failed."""


def ip(*args: str, timeout: float = 10.0) -> str:
    """Run ``ip ARGS``; raise :class:`NetnsError` with its message on failure."""
    try:
        out = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NetnsError(f"ip {' '.join(args)}: {exc}") from None
    if out.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {out.stderr.strip() or out.returncode}")
    return out.stdout


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a run that owns namespaces or BPF programs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_ours() -> list[str]:
    """Every namespace with our naming pattern (any owner)."""
    try:
        names = ip("netns", "list").split("\n")
    except NetnsError:
        return []
    return [n.split()[0] for n in names if n.strip() and _OURS.match(n.split()[0])]


def clean_stale() -> list[str]:
    """Delete the namespaces of tcplab runs whose process is gone; return their names."""
    removed = []
    for name in list_ours():
        pid = int(_OURS.match(name).group(1))  # type: ignore[union-attr]
        if pid != os.getpid() and not alive(pid):
            try:
                ip("netns", "delete", name)
                removed.append(name)
            except NetnsError:
                pass
    return removed


@dataclass
class Pair:
    """This process's two namespaces and their TUN device names."""

    sender: str
    receiver: str
    sender_tun: str
    receiver_tun: str

    @classmethod
    def for_pid(cls, pid: int) -> Pair:
        return cls(f"{PREFIX}{pid}-snd", f"{PREFIX}{pid}-rcv", f"tcplab{pid}s", f"tcplab{pid}r")

    def path(self, ns: str) -> str:
        return str(NETNS_DIR / ns)

    def create(self) -> None:
        for ns in (self.sender, self.receiver):
            if ns in list_ours():
                ip("netns", "delete", ns)  # our own pid's leftover (pid reuse)
            ip("netns", "add", ns)
            ip("-n", ns, "link", "set", "lo", "up")

    def configure(
        self,
        mtu: int,
        sender_route: list[str],
        receiver_route: list[str],
        ecn_ports: Sequence[int] = (),
    ) -> None:
        """Addresses, MTU and routes on the TUN devices (after the emulator made them),
        with per-route TCP options (``initcwnd N``, ``rto_min T`` on the sender's route,
        ``quickack 1`` on the receiver's), and the per-flow ECN routes (:meth:`commands`)."""
        for args in self.commands(mtu, sender_route, receiver_route, ecn_ports):
            ip(*args)

    def commands(
        self,
        mtu: int,
        sender_route: list[str],
        receiver_route: list[str],
        ecn_ports: Sequence[int] = (),
    ) -> list[list[str]]:
        """The ``ip`` arguments :meth:`configure` runs, in order.

        ``ecn_ports``: the receiving ports of the flows that request ECN when the others
        do not. Linux requests ECN in a SYN when the namespace's ``net.ipv4.tcp_ecn`` is
        1, the algorithm needs it, or the socket's route has the ``ecn`` feature
        (RTAX_FEATURE_ECN: ``tcp_ecn_send_syn``, include/net/tcp_ecn.h). With the sysctl
        at 0, those flows' connections are routed by their destination port (a policy
        rule, ``ip rule ... dport P``: tcp_v4_connect's ``ip_route_connect`` looks the
        route up with the ports in the flow key) to a table whose one route is the
        sender's, options included, plus ``features ecn``; every other flow keeps the
        main table's route. The receivers' ``tcp_ecn = 2`` accepts a request whatever
        the route (``tcp_ecn_create_request``: any non-zero value). Checked on 6.18 over
        a veth pair, sysctl 0: the connection to the routed port reads TCPI_OPT_ECN in
        ``tcpi_options`` (0b1111), the other not (0b111)."""
        cmds: list[list[str]] = []
        for ns, dev, addr, peer, opts in (
            (self.sender, self.sender_tun, SENDER_ADDR, RECEIVER_NET, sender_route),
            (self.receiver, self.receiver_tun, RECEIVER_ADDR, SENDER_NET, receiver_route),
        ):
            cmds.append(["-n", ns, "addr", "add", f"{addr}/24", "dev", dev])
            cmds.append(
                [
                    "-n",
                    ns,
                    "link",
                    "set",
                    "dev",
                    dev,
                    "mtu",
                    str(mtu),
                    "gso_max_segs",
                    str(GSO_MAX_SEGS),
                    "up",
                ]
            )
            cmds.append(["-n", ns, "route", "add", peer, "dev", dev, *opts])
        if ecn_ports:
            table = str(ECN_TABLE)
            cmds.append(
                [
                    "-n",
                    self.sender,
                    "route",
                    "add",
                    RECEIVER_NET,
                    "dev",
                    self.sender_tun,
                    "table",
                    table,
                    *sender_route,
                    "features",
                    "ecn",
                ]
            )
            for port in ecn_ports:
                pref = str(ECN_RULE_PREF + port)
                cmds.append(
                    ["-n", self.sender, "rule", "add", "pref", pref, "ipproto", "tcp"]
                    + ["dport", str(port), "table", table]
                )
        return cmds

    def delete(self) -> None:
        for ns in (self.sender, self.receiver):
            try:
                ip("netns", "delete", ns)
            except NetnsError:
                pass
