#!/usr/bin/env python3
"""A plain veth + tbf + delay-line reference for the kernel backend: the same
kernel TCP, but the bottleneck is Linux's own token bucket on a veth pair instead of
tcplab-emu's TUN link, so that a difference between the two says what the TUN path
changes.

    sudo python scripts/veth_testbed.py --cc reno,cubic --rate 20 --rtt 40 --buffer 1 \\
        --duration 20 --runs 3

Topology, three namespaces made for the run (``tcplabveth-<pid>-snd|rtr|rcv``) and two
veth pairs; addresses exist only inside them (10.202.0.0/24 sender side, 10.202.1.0/24
receiver side):

    snd --veth-- rtr [tbf: rate, queue of BUFFER x BDP packets] --veth-- rcv [delay: RTT]

- Bottleneck: ``tbf rate R x 1514/1500 burst 3 MTU peakrate 1.1 x that mtu 1 MTU``
  (TBF_BURST_PKTS says why) at the router's egress toward the receiver, its queue
  ``limit`` = (BUFFER x BDP packets + 1) x 1514 bytes (or ``--buffer-pkts``): the
  packets on this wire carry a 14-byte Ethernet header that tbf charges and the emulator
  does not (it counts 1500-byte IP packets), and tbf's limit counts the packet waiting
  for its tokens, which the emulator's buffer does not (it is on the wire). Both were
  artefacts of the comparison until tcplab 0.7 (docs/FIDELITY-instruments.md).
- Propagation delay on the receiver's egress (the ACK path), so the data path has no
  queue but the tbf's: ``netem delay RTT`` where the kernel has sch_netem, else (this
  machine's 6.18 "fc" kernel has no netem, no fq and no etf) an NFQUEUE delay line,
  scripts/nfqueue_delay.py: an ``iptables-legacy`` rule per flow (``--sport PORT+i -j
  NFQUEUE --queue-num i``; the kernel has xt_NFQUEUE but not nft's queue expression) hands
  each ACK to a process that holds it for the flow's RTT, run at SCHED_FIFO like the
  kernel backend's emulator. ``--rtt`` takes one value per flow (``--rtt 10,60``).
  Needs ``iptables`` (Debian: apt-get install iptables).
- One MSS per packet as the kernel backend sends (``gso_max_segs 1``, GRO off on the
  router's interfaces is not needed: forwarding resegments), the socket buffers and
  sysctls of the kernel backend (``tcp_rmem``/``tcp_wmem`` max 64 MB,
  ``tcp_no_metrics_save``).
- Flows: one connection per algorithm, each connecting (non-blocking, as the kernel
  backend's agent, with its ``TCP_NOTSENT_LOWAT``) at its start (``--start`` or
  ``--stagger``), bulk writes for ``--duration`` seconds; per flow, bytes read by the
  receiver (share), ``tcpi_total_retrans`` 2 s after its start and at the end.
- ``--pcap DIR``: tcpdump at the sender and on the router's ingress and egress (after
  the tbf), for scripts/pcap_trace.py.

Bounded: every child has a timeout of duration + 30 s; the namespaces are removed on
exit, on an exception and on Ctrl-C / SIGTERM, and leftovers of a killed run
(``tcplabveth-<pid>-*`` whose pid no longer runs) are removed first.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

PREFIX = "tcplabveth-"
PORT = 5000
TCP_CONGESTION = 13
TCP_INFO = 11
TCP_NOTSENT_LOWAT = 25
NOTSENT_LOWAT = 128 * 1024  # as the kernel backend's agent
# tbf's bucket. With a burst of one packet, every late wake-up of tbf's watchdog timer is
# lost for good (the bucket cannot hold the tokens it earned meanwhile): measured at the
# router's egress (load 4-5), full packets left 614-634 us apart instead of 600 us at 20
# Mbit/s, a link 2-4 % slower than specified. Three packets of burst let it catch up, and
# a peak rate 10 % above the rate (tbf's second bucket, one MTU) keeps it from sending
# them back to back at veth's unlimited speed: p10 593 us, median 607-612 us
# (docs/FIDELITY-instruments.md). The emulator keeps its schedule in model time, so a
# late wake-up there delays a packet but never the link's later ones.
TBF_BURST_PKTS = 3
TBF_PEAK = 1.1
MSS_WIRE = 1500  # IP packet of a full segment (the emulator's unit)
ETH = 14
STARTUP_S = 2.0  # start-up retransmissions: the first 2 s of each flow (scripts/fidelity.py)


def sh(*args: str, ns: str | None = None, check: bool = True, timeout: float = 15) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def clean_stale() -> None:
    """Remove namespaces of testbed runs whose process is gone."""
    for line in sh("ip", "netns", "list").splitlines():
        m = re.match(rf"^{PREFIX}(\d+)-\w+", line)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            sh("ip", "netns", "del", line.split()[0], check=False)


class Testbed:
    def __init__(
        self,
        rate_mbit: float,
        rtts_ms: list[float],
        buffer_bdp: float,
        duration: float,
        buffer_pkts: int | None = None,
    ) -> None:
        p = f"{PREFIX}{os.getpid()}"
        self.snd, self.rtr, self.rcv = f"{p}-snd", f"{p}-rtr", f"{p}-rcv"
        self.rate_mbit, self.rtts_ms, self.duration = rate_mbit, rtts_ms, duration
        # The buffer in BDPs of the first flow's RTT, as the specs' bdp_rtt default.
        bdp_pkts = rate_mbit * 1e6 * rtts_ms[0] / 1e3 / 8 / MSS_WIRE
        self.limit_pkts = buffer_pkts or max(1, int(buffer_bdp * bdp_pkts))
        self.delay_lines: list[subprocess.Popen] = []
        self.delay = "none"
        self.captures: list[subprocess.Popen] = []
        self.tbf_burst_pkts = TBF_BURST_PKTS
        self.tbf_peak = TBF_PEAK
        self.pcap_prefix: str | None = None  # capture this run's packets to PREFIX-*.pcap

    def up(self) -> None:
        for ns in (self.snd, self.rtr, self.rcv):
            sh("ip", "netns", "add", ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
        sh(
            "ip",
            "link",
            "add",
            "vs",
            "netns",
            self.snd,
            "type",
            "veth",
            "peer",
            "name",
            "va",
            "netns",
            self.rtr,
        )
        sh(
            "ip",
            "link",
            "add",
            "vb",
            "netns",
            self.rtr,
            "type",
            "veth",
            "peer",
            "name",
            "vr",
            "netns",
            self.rcv,
        )
        for ns, dev, addr in (
            (self.snd, "vs", "10.202.0.1/24"),
            (self.rtr, "va", "10.202.0.2/24"),
            (self.rtr, "vb", "10.202.1.2/24"),
            (self.rcv, "vr", "10.202.1.1/24"),
        ):
            sh("ip", "addr", "add", addr, "dev", dev, ns=ns)
            sh("ip", "link", "set", dev, "up", "gso_max_segs", "1", ns=ns)
        sh("ip", "route", "add", "default", "via", "10.202.0.2", ns=self.snd)
        sh("ip", "route", "add", "default", "via", "10.202.1.2", ns=self.rcv)
        sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=self.rtr)
        for ns in (self.snd, self.rcv):
            for k, v in (
                ("net.ipv4.tcp_rmem", "4096 131072 67108864"),
                ("net.ipv4.tcp_wmem", "4096 16384 67108864"),
                ("net.ipv4.tcp_no_metrics_save", "1"),
            ):
                sh("sysctl", "-qw", f"{k}={v}", ns=ns)
        sh(
            "tc",
            "qdisc",
            "add",
            "dev",
            "vb",
            "root",
            "tbf",
            "rate",
            f"{self.tbf_rate_bit()}bit",
            "burst",
            str(self.tbf_burst_pkts * (MSS_WIRE + ETH)),
            *(
                ["peakrate", f"{self.tbf_peak_bit()}bit", "mtu", str(MSS_WIRE + ETH)]
                if self.tbf_burst_pkts > 1
                else []
            ),
            "limit",
            str(self.tbf_limit_bytes()),
            ns=self.rtr,
        )
        if self.pcap_prefix:
            for ns, dev, tag in (
                (self.snd, "vs", "snd"),
                (self.rtr, "va", "rtr-in"),
                (self.rtr, "vb", "rtr-out"),
            ):
                self._capture(ns, dev, f"{self.pcap_prefix}-{tag}.pcap")
        if len(set(self.rtts_ms)) == 1 and self._netem(self.rtts_ms[0]):
            self.delay = "netem"
            return
        self.delay = "nfqueue"
        here = os.path.dirname(os.path.abspath(__file__))
        rt = ["chrt", "-f", "10"] if shutil.which("chrt") else []
        for i, rtt in enumerate(self.rtts_ms):
            sh(
                "iptables-legacy", "-A", "OUTPUT", "-p", "tcp", "--sport", str(PORT + i),
                "-j", "NFQUEUE", "--queue-num", str(i), ns=self.rcv,
            )  # fmt: skip
            p = subprocess.Popen(
                ["ip", "netns", "exec", self.rcv, *rt, sys.executable,
                 os.path.join(here, "nfqueue_delay.py"), "--queue", str(i),
                 "--delay-ms", str(rtt), "--seconds", str(self.duration + 15)],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            self.delay_lines.append(p)
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the NFQUEUE delay line of flow {i} did not start")

    def tbf_rate_bit(self) -> int:
        """tbf's rate: tbf charges each packet its frame length (1514 bytes for a full
        segment on veth), the emulator and the simulator its IP length (1500), so a tbf at
        the nominal rate serves 1500/1514 of the packets per second (0.9 % fewer). Scaled
        so that it serves as many packets as the emulated link."""
        return round(self.rate_mbit * 1e6 * (MSS_WIRE + ETH) / MSS_WIRE)

    def tbf_peak_bit(self) -> int:
        return round(self.tbf_rate_bit() * self.tbf_peak)

    def tbf_limit_bytes(self) -> int:
        """tbf's limit counts the packet waiting for its tokens (the one being
        "serialized"); the emulator's buffer of N packets is N waiting behind the one on
        the wire (sim net/link.rs, enqueue), so tbf holds N + 1 frames."""
        return (self.limit_pkts + 1) * (MSS_WIRE + ETH)

    def _capture(self, ns: str, dev: str, path: str) -> None:
        """tcpdump's headers (128 bytes) of every packet on ``dev``, until ``down``."""
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, "tcpdump", "-i", dev, "-s", "128", "-U", "-n",
             "-Z", "root", "--time-stamp-precision=nano", "-w", path],
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.captures.append(p)
        assert p.stderr is not None
        line = p.stderr.readline()
        if "listening" not in line:
            raise RuntimeError(f"tcpdump on {ns} {dev}: {line.strip()}")

    def _netem(self, rtt_ms: float) -> bool:
        try:
            sh(
                "tc", "qdisc", "add", "dev", "vr", "root", "netem",
                "delay", f"{rtt_ms}ms", "limit", "100000", ns=self.rcv,
            )  # fmt: skip
            return True
        except RuntimeError:
            return False  # "Specified qdisc kind is unknown": no sch_netem here

    def down(self) -> None:
        for p in self.delay_lines:
            p.kill()
            p.wait()
        self.delay_lines = []
        for p in self.captures:
            p.terminate()
            p.wait(timeout=10)
        self.captures = []
        for ns in (self.snd, self.rtr, self.rcv):
            sh("ip", "netns", "del", ns, check=False)

    def drops(self) -> int:
        out = sh("tc", "-s", "qdisc", "show", "dev", "vb", ns=self.rtr)
        m = re.search(r"dropped (\d+)", out)
        return int(m.group(1)) if m else -1


def role_recv(n: int, duration: float) -> None:
    """Accept n connections on PORT..PORT+n-1 and count the bytes each delivers."""
    import selectors

    sel = selectors.DefaultSelector()
    got = [0] * n
    for i in range(n):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("10.202.1.1", PORT + i))
        ls.listen(1)
        sel.register(ls, selectors.EVENT_READ, ("listen", i))
    print("ready", flush=True)
    end = time.monotonic() + duration + 10
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            kind, i = key.data
            if kind == "listen":
                c, _ = key.fileobj.accept()
                sel.register(c, selectors.EVENT_READ, ("conn", i))
            else:
                b = key.fileobj.recv(1 << 20)
                if not b:
                    sel.unregister(key.fileobj)
                got[i] += len(b)
    print(json.dumps({"received_bytes": got}), flush=True)


def role_send(ccs: list[str], duration: float, starts: list[float]) -> None:
    """One connection per algorithm, flow i connecting ``starts[i]`` seconds after time
    zero (ascending); write until ``duration``; report retransmissions."""
    import selectors

    socks: list[socket.socket] = []
    started: list[float] = []  # when each flow called connect (s after t0)
    startup: list[int | None] = []  # tcpi_total_retrans STARTUP_S after that
    sel = selectors.DefaultSelector()
    buf = b"\0" * (64 << 10)
    t0 = time.monotonic()
    end = t0 + duration

    def connect(i: int, cc: str) -> None:
        # Non-blocking, as the kernel backend's agent (backends/kernel/agent.py): every
        # flow's SYN leaves at its own start. A blocking connect() held the next flow back
        # by a handshake (one RTT), a start offset the kernel backend does not have.
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        s.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, NOTSENT_LOWAT)
        s.setblocking(False)
        started.append(time.monotonic() - t0)
        startup.append(None)
        err = s.connect_ex(("10.202.1.1", PORT + i))
        if err not in (0, errno.EINPROGRESS):
            raise OSError(err, f"flow {i}: connect: {os.strerror(err)}")
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE)

    while time.monotonic() < end:
        while len(socks) < len(ccs) and time.monotonic() >= t0 + starts[len(socks)]:
            connect(len(socks), ccs[len(socks)])
        for i, s in enumerate(socks):
            if startup[i] is None and time.monotonic() - t0 >= started[i] + STARTUP_S:
                startup[i] = total_retrans(s)
        due = [t0 + starts[len(socks)]] if len(socks) < len(ccs) else []
        due += [t0 + t + STARTUP_S for t, n in zip(started, startup) if n is None]
        wait = min([0.1] + [max(0.0, d - time.monotonic()) for d in due])
        for key, _ in sel.select(timeout=wait):
            try:
                key.fileobj.send(buf)
            except BlockingIOError:
                pass
    out = [total_retrans(s) for s in socks]
    for s in socks:
        s.close()
    print(
        json.dumps({"total_retrans": out, "startup_retrans": startup, "started_s": started}),
        flush=True,
    )


def total_retrans(s: socket.socket) -> int:
    """``tcpi_total_retrans`` (struct tcp_info, offset 100)."""
    raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    return int.from_bytes(raw[100:104], "little")


def run_once(tb: Testbed, ccs: list[str], duration: float, starts: list[float]) -> dict:
    me = [sys.executable, os.path.abspath(__file__)]
    rcv = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            tb.rcv,
            *me,
            "--role",
            "recv",
            "--n",
            str(len(ccs)),
            "--duration",
            str(duration),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert rcv.stdout is not None
    rcv.stdout.readline()  # "ready"
    snd = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            tb.snd,
            *me,
            "--role",
            "send",
            "--cc",
            ",".join(ccs),
            "--duration",
            str(duration),
            "--start",
            ",".join(map(str, starts)),
        ],
        capture_output=True,
        text=True,
        timeout=duration + 30,
    )
    res_snd = json.loads(snd.stdout.strip().splitlines()[-1])
    out, _ = rcv.communicate(timeout=duration + 30)
    res_rcv = json.loads(out.strip().splitlines()[-1])
    tot = sum(res_rcv["received_bytes"]) or 1
    # Bits delivered over what the link could carry while the senders wrote (what is
    # still queued when they stop arrives after; a BDP or two of 20 s is under 1 %).
    capacity = tb.rate_mbit * 1e6 * duration / 8
    return {
        "cc": ccs,
        "share": [b / tot for b in res_rcv["received_bytes"]],
        "utilization": tot / capacity,
        "retransmissions": res_snd["total_retrans"],
        # tcpi_total_retrans STARTUP_S after each flow's connect (None: ran shorter)
        "startup_retransmissions": res_snd["startup_retrans"],
        "started_s": res_snd["started_s"],
        "bottleneck_drops": tb.drops(),
        "delay_line": tb.delay,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="reno,cubic", help="one flow per algorithm")
    ap.add_argument("--rate", type=float, default=20, help="Mbit/s")
    ap.add_argument("--rtt", default="40", help="ms; one value, or one per flow (10,60)")
    ap.add_argument("--buffer", type=float, default=1, help="in BDPs")
    ap.add_argument("--buffer-pkts", type=int, help="in packets (instead of --buffer)")
    ap.add_argument("--duration", type=float, default=20, help="s")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument(
        "--pcap",
        metavar="DIR",
        help="capture each run at the sender and the router's in/out (DIR/runK-*.pcap; tcpdump)",
    )
    ap.add_argument(
        "--tbf-burst",
        type=int,
        default=TBF_BURST_PKTS,
        help=f"tbf's burst in packets (default {TBF_BURST_PKTS}; 1: no peakrate)",
    )
    ap.add_argument(
        "--tbf-peak", type=float, default=TBF_PEAK, help=f"peakrate / rate (default {TBF_PEAK})"
    )
    ap.add_argument("--stagger", type=float, default=0.0, help="s between flow starts")
    ap.add_argument("--start", help="s; each flow's start (ascending), instead of --stagger")
    ap.add_argument("--role", choices=("recv", "send"), help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.role == "recv":
        role_recv(a.n, a.duration)
        return 0
    n = len(a.cc.split(","))
    if a.start:
        starts = [float(x) for x in a.start.split(",")]
        if len(starts) != n or starts != sorted(starts):
            print("--start: give one ascending value per flow", file=sys.stderr)
            return 2
    else:
        starts = [i * a.stagger for i in range(n)]
    if a.role == "send":
        role_send(a.cc.split(","), a.duration, starts)
        return 0
    if os.geteuid() != 0:
        print("needs root (network namespaces)", file=sys.stderr)
        return 2
    clean_stale()
    ccs = a.cc.split(",")
    rtts = [float(x) for x in a.rtt.split(",")]
    if len(rtts) == 1:
        rtts *= len(ccs)
    if len(rtts) != len(ccs):
        print("--rtt: give one value or one per flow", file=sys.stderr)
        return 2
    tb = Testbed(a.rate, rtts, a.buffer, a.duration, a.buffer_pkts)
    tb.tbf_burst_pkts, tb.tbf_peak = a.tbf_burst, a.tbf_peak

    def stop(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    runs = []
    try:
        for k in range(a.runs):
            if a.pcap:
                os.makedirs(a.pcap, exist_ok=True)
                tb.pcap_prefix = os.path.join(a.pcap, f"run{k + 1}")
            tb.up()
            try:
                r = run_once(tb, a.cc.split(","), a.duration, starts)
            finally:
                tb.down()
            print(json.dumps(r), flush=True)
            runs.append(r)
    except KeyboardInterrupt:
        tb.down()
        return 130
    finally:
        tb.down()
    if len(runs) > 1:
        for i, cc in enumerate(a.cc.split(",")):
            rt = [r["retransmissions"][i] for r in runs]
            sh_ = [r["share"][i] for r in runs]
            print(
                f"{cc}: share {statistics.fmean(sh_):.3f} ± {statistics.stdev(sh_):.3f}, "
                f"retransmissions {statistics.fmean(rt):.1f} ± {statistics.stdev(rt):.1f}"
            )
        ut = [r["utilization"] for r in runs]
        print(f"utilization {statistics.fmean(ut):.3f} ± {statistics.stdev(ut):.3f}")
    print(f"tbf limit {tb.limit_pkts} packets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
