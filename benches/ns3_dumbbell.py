"""ns-3's speed on tcplab's `bbr600` engine benchmark: bottleneck packets per CPU second.

tcplab's case (crates/sim/benches/bottleneck.rs, `mixed(2, 10_000_000, 1_000_000_000,
600, &["bbr"])`): 2 BBR bulk flows from t = 0 over a dumbbell, each with its own sender
and receiver access link (1 Gbit/s, rtt/8 = 5 ms), a 10 Mbit/s bottleneck of rtt/4 =
10 ms (base RTT 2 x (5 + 10 + 5) = 40 ms) with a drop-tail buffer of 1 BDP = 50000 bytes,
MSS 1448, delayed ACKs, SACK, 600 s. Its figure: data segments that finished crossing
the bottleneck, per second of CPU time. This script builds the same world in ns-3 (the
`ns3` wheel on PyPI, 3.44.post0, Python bindings through cppyy), runs it once in this
process and prints one line: simulated seconds, bottleneck data packets, CPU seconds of
Simulator::Run alone and of the whole process (Python start, loading ns-3, cppyy's JIT of
the probe, building the topology), and bottleneck packets per CPU second of the run.

    python benches/ns3_dumbbell.py --seconds 600     # the bbr600 figure
    python benches/ns3_dumbbell.py --seconds 60      # a quick run

Side by side with tcplab (on an otherwise idle machine, one after the other):

    cargo bench -p tcplab-sim --bench bottleneck --no-run   # prints the bench binary
    TCPLAB_BENCH_REPS=1 target/release/deps/bottleneck-<hash> bbr600
    python benches/ns3_dumbbell.py --seconds 600

(The engine as installed is built with the recorded profile, docs/engine.md "Profile-guided
build"; its figure comes from the benchmark built the same way, `. scripts/pgo_env.sh &&
cargo bench -p tcplab-sim --bench bottleneck --no-run`, the binary under
target/pgo/release/deps/.)

tcplab prints "... median on-CPU S s -> N per CPU second" (the thread's on-CPU time
around World::run_config, building the world included); compare N with this script's
"per CPU second (run)". ns3 is not a tcplab dependency; install it in its own venv:
`python3 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3==3.44.post0`, then
run this script with /tmp/ns3venv/bin/python.

The wheel is ns-3's CMake profile "release" with logging and asserts compiled in; an ns-3
built from source with them compiled out ran this world 2.1-2.2x faster (benches/
RESULTS.md, "thirteenth step"). benches/ns3_dumbbell.cc is this world in C++, for linking
against such a build (its header says how).

The ns-3 world, and where it differs from tcplab's:
- Nodes: 2 senders - router A - router B - 2 receivers, PointToPoint links: access
  1 Gbit/s 5 ms, bottleneck 10 Mbit/s 10 ms. ns-3's links are symmetric, so the ACK
  direction of the bottleneck is 10 Mbit/s 10 ms too, as tcplab's default reverse link.
- Bottleneck buffer: the device queue of router A's bottleneck device, a DropTailQueue of
  50000 bytes, with no queue disc on any device (each one Ipv4AddressHelper installed is
  removed): tcplab's links have no qdisc, and its buffer, like the device queue, holds
  the packets waiting behind the one being serialized. ns-3 counts 1502 bytes a packet
  (the 2-byte PPP header) where tcplab counts 1500, and the traffic-control layer drops a
  packet when the device queue has no room for a full-MTU one; both hold at most 33
  packets. Every other device queue holds 100000 packets (tcplab: unlimited).
- TCP: ns3::TcpBbr (ns-3's BBR v1, paced; tcplab follows Linux's tcp_bbr.c), segment
  size 1448 with timestamps (1500-byte IP packets), SACK, PRR recovery (ns-3's default),
  delayed ACKs every 2nd segment or 40 ms (ns-3's default timeout is 200 ms), minimum RTO
  200 ms (ns-3's default 1 s), initial cwnd 10, 4 MiB send and receive buffers (tcplab:
  an unlimited sender, Linux's receive autotuning). No RACK, TLP or F-RTO, which ns-3
  lacks; the handshake is ns-3's own three-way one. BulkSendApplication writes 1448
  bytes at a time until the send buffer is full.
- Counted: a trace sink in C++ on the bottleneck device's PhyTxEnd (a packet finished
  serialization on the bottleneck) counts the packets longer than 82 bytes (2 PPP + 20
  IP + 60 TCP, the largest packet with no payload): the data segments, retransmissions
  included, as tcplab's `data_departed`. The sinks' received bytes / 1448 are printed
  too as a cross-check (in-order delivered segments: fewer, by retransmissions and the
  ones in flight at the end).
- CPU time is time.process_time(): the process's CPU time (ns-3 runs on one thread),
  where tcplab reads its thread's from /proc/thread-self/schedstat.

At exit the wheel's cppyy prints "[runStaticInitializersOnce]: Failed to materialize
symbols" to stderr (any script that imports it does); it comes after the result and is
harmless.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time

RTT_S = 0.040
BOTTLENECK_BPS = 10_000_000
ACCESS_BPS = 1_000_000_000
FLOWS = 2
MSS = 1448
BDP_BYTES = BOTTLENECK_BPS * 40 // 1000 // 8  # 50000, as `mixed`'s rate * rtt / 8
# The largest packet with no TCP payload on a PointToPoint device: PPP 2 + IP 20 + TCP 60.
MAX_HEADER_ONLY = 2 + 20 + 60

NS3_MISSING = (
    "the ns3 Python package is not installed (it is not a tcplab dependency): "
    "`python3 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3==3.44.post0`, "
    "then run this script with /tmp/ns3venv/bin/python"
)

# The counter and queue set-up in C++ (cppyy): a Python callback per packet would be slow.
_PROBE_CPP = r"""
namespace tcplab_ns3_bench {
using namespace ns3;
static uint64_t data_packets = 0;
static uint32_t max_header_only = 0;
void OnPhyTxEnd(Ptr<const Packet> p) {
    if (p->GetSize() > max_header_only) { data_packets++; }
}
void SetQueueBytes(Ptr<NetDevice> dev, uint32_t bytes) {
    DynamicCast<PointToPointNetDevice>(dev)->GetQueue()->SetMaxSize(
        QueueSize(QueueSizeUnit::BYTES, bytes));
}
void SetQueuePackets(Ptr<NetDevice> dev, uint32_t packets) {
    DynamicCast<PointToPointNetDevice>(dev)->GetQueue()->SetMaxSize(
        QueueSize(QueueSizeUnit::PACKETS, packets));
}
void Count(Ptr<NetDevice> dev, uint32_t header_only) {
    max_header_only = header_only;
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnPhyTxEnd));
}
uint64_t Counted() { return data_packets; }
uint64_t SinkRx(Ptr<Application> app) { return DynamicCast<PacketSink>(app)->GetTotalRx(); }
}
"""


def run(seconds: float) -> dict:
    """One ns-3 run of the scenario in this process (ns-3's globals are process-wide)."""
    from ns import ns

    ns.cppyy.cppdef(_PROBE_CPP)
    probe = ns.cppyy.gbl.tcplab_ns3_bench

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    tcp = "ns3::TcpSocketBase::"
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpBbr"))
    )
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(40)))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 22))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 22))
    ns.Config.SetDefault(tcp + "Sack", ns.BooleanValue(True))
    ns.Config.SetDefault(tcp + "Timestamp", ns.BooleanValue(True))
    ns.Config.SetDefault(tcp + "MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    ns.Config.SetDefault("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(True))

    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(FLOWS)
    receivers.Create(FLOWS)
    routers.Create(2)
    ns.InternetStackHelper().InstallAll()

    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(ACCESS_BPS)))
    access.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(RTT_S / 8)))
    neck = ns.PointToPointHelper()
    neck.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(BOTTLENECK_BPS)))
    neck.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(RTT_S / 4)))

    address = ns.Ipv4AddressHelper()
    address.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    tch = ns.TrafficControlHelper()

    def link(helper, a, b):
        devices = helper.Install(a, b)
        interfaces = address.Assign(devices)
        address.NewNetwork()
        tch.Uninstall(devices)  # the default queue disc Assign installed
        for i in range(2):
            probe.SetQueuePackets(devices.Get(i), 100_000)
        return devices, interfaces

    bottleneck, _ = link(neck, routers.Get(0), routers.Get(1))
    probe.SetQueueBytes(bottleneck.Get(0), BDP_BYTES)
    remotes = []
    for i in range(FLOWS):
        link(access, senders.Get(i), routers.Get(0))
        _, interfaces = link(access, routers.Get(1), receivers.Get(i))
        remotes.append(interfaces.GetAddress(1, 0))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 50000
    sinks = []
    for i in range(FLOWS):
        local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        sink_helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", local)
        sink_app = sink_helper.Install(receivers.Get(i))
        sink_app.Start(ns.Seconds(0))
        sinks.append(sink_app.Get(0))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.Address())
        remote = ns.InetSocketAddress(remotes[i], port).ConvertTo()
        bulk.SetAttribute("Remote", ns.AddressValue(remote))
        bulk.SetAttribute("SendSize", ns.UintegerValue(MSS))
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.Install(senders.Get(i)).Start(ns.Seconds(0))

    probe.Count(bottleneck.Get(0), MAX_HEADER_ONLY)
    ns.Simulator.Stop(ns.Seconds(seconds))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    ns.Simulator.Run()
    cpu_run, wall_run = time.process_time() - cpu0, time.perf_counter() - wall0
    out = {
        "seconds": seconds,
        "packets": int(probe.Counted()),
        "sink_segments": sum(int(probe.SinkRx(s)) for s in sinks) // MSS,
        "cpu_run": cpu_run,
        "wall_run": wall_run,
        "cpu_process": time.process_time(),
    }
    ns.Simulator.Destroy()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=600.0, help="simulated seconds (600)")
    args = ap.parse_args(argv)
    if importlib.util.find_spec("ns") is None:
        print(NS3_MISSING, file=sys.stderr)
        return 1
    r = run(args.seconds)
    print(
        f"ns-3 bbr600 world: {r['seconds']:g} simulated s, {r['packets']} bottleneck data "
        f"packets (sinks: {r['sink_segments']} segments); CPU {r['cpu_run']:.3f} s in "
        f"Simulator::Run (wall {r['wall_run']:.3f} s), {r['cpu_process']:.3f} s whole "
        f"process -> {r['packets'] / r['cpu_run']:.0f} bottleneck packets per CPU second "
        f"(run), {r['packets'] / r['cpu_process']:.0f} (process)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
