"""ns-3's tcp-variants-comparison scenario in ns-3 and in tcplab, per algorithm both have
(issue 40; the results: docs/FIDELITY-ns3.md).

The ns-3 side re-creates examples/tcp/tcp-variants-comparison.cc (ns-3.44) with its
defaults through ns-3's Python bindings (the `ns3` wheel on PyPI, ns-3.44 with cppyy):
one run per algorithm, each in its own process (ns-3's Config defaults and node list are
process-wide). The tcplab side runs experiments/ns3/tcp-variants-comparison.toml with the
flow's cc set to the mapped tcplab algorithm. Both are measured the same way, from
samples every 100 ms over [0, 97.1 s] (the sender's application stops at 97.1 s):

    goodput_mbps       bytes delivered in order to the receiving application by 97.1 s
    retransmissions    segments the sender sent again
    bottleneck_drops   packets the bottleneck's queue dropped
    mean_rtt_ms        mean of the latest RTT sample at each sampling instant
    mean_cwnd_pkts     mean cwnd in segments (ns-3: bytes / 340)
    mean_backlog_pkts  mean bottleneck backlog (ns-3: queue disc + device queue)
    max_backlog_pkts   the largest sampled backlog
    loss_epochs        runs of samples with bottleneck drops, a new one after 1 s without

    python3 scripts/ns3_variants.py -o results/ns3-variants            # both sides
    python3 scripts/ns3_variants.py --side tcplab -o results/ns3-variants
    python3 scripts/ns3_variants.py --side ns3 --algorithms TcpCubic TcpBbr
    python3 scripts/ns3_variants.py --side ns3 --recovery prr   # ns-3's PRR (OUT/ns3-prr.csv)

ns3 is not a tcplab dependency: without it (`pip install ns3==3.44.post0`) the ns-3
side is skipped with a message and the tcplab side still runs.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "experiments" / "ns3" / "tcp-variants-comparison.toml"

# ns-3 TypeId name -> tcplab algorithm. Both of ns-3's Renos map to tcplab's reno (Linux's
# tcp_cong.c): TcpLinuxReno is ns-3's Linux-like one, TcpNewReno its RFC 5681 one
# (src/internet/doc/tcp.rst, "Linux Reno"). TcpWestwoodPlus -> westwood: Linux's
# tcp_westwood.c is Westwood+ ("TCP Westwood+: end-to-end bandwidth estimation").
MAPPING: dict[str, str] = {
    "TcpNewReno": "reno",
    "TcpLinuxReno": "reno",
    "TcpCubic": "cubic",
    "TcpBic": "bic",
    "TcpHighSpeed": "highspeed",
    "TcpHtcp": "htcp",
    "TcpHybla": "hybla",
    "TcpIllinois": "illinois",
    "TcpLedbat": "ledbat",
    "TcpLp": "lp",
    "TcpScalable": "scalable",
    "TcpVegas": "vegas",
    "TcpVeno": "veno",
    "TcpWestwoodPlus": "westwood",
    "TcpYeah": "yeah",
    "TcpBbr": "bbr",
}
# In ns-3 3.44's list but not compared, and why.
LEFT_OUT: dict[str, str] = {
    "TcpDctcp": "needs ECN marking, which the scenario's pfifo_fast queues never do; ns-3's "
    "DCTCP also does not react to loss (tcp.rst, 'Data Center TCP')",
}

# The scenario (examples/tcp/tcp-variants-comparison.cc at tag ns-3.44, its line numbers).
BANDWIDTH = "2Mbps"  # l. 336
DELAY = "0.01ms"  # l. 337
ACCESS_BANDWIDTH = "10Mbps"  # l. 338
ACCESS_DELAY = "45ms"  # l. 339
MTU_BYTES = 400  # l. 343
DURATION_S = 100.0  # l. 345
START_TIME_S = 0.1  # l. 404: flow i starts at start_time * i, so flow 0 at 0 s
STOP_TIME_S = START_TIME_S + DURATION_S  # l. 405
APP_STOP_S = STOP_TIME_S - 3  # l. 521
ADU_BYTES = MTU_BYTES - 20 - (20 + 20)  # l. 392-400: 340
# l. 468-472: min(access, bottleneck) / 8 x 2 (access delay + bottleneck delay), in
# packets of mtu_bytes (C++ integer arithmetic: 250000 x 0.09002 -> 22505 -> 56).
QUEUE_PKTS = int((2_000_000 // 8) * ((0.045 + 0.00001) * 2)) // MTU_BYTES

SAMPLE_S = 0.1
METRICS = [
    "goodput_mbps",
    "retransmissions",
    "bottleneck_drops",
    "mean_rtt_ms",
    "mean_cwnd_pkts",
    "mean_backlog_pkts",
    "max_backlog_pkts",
    "loss_epochs",
]
# Drops more than this apart belong to different loss epochs (about 3 RTTs at the
# scenario's ~300 ms loaded RTT: one recovery's drops fall within it).
EPOCH_GAP_S = 1.0


def summarize(samples: dict[str, list[float]], window_end: float = APP_STOP_S) -> dict:
    """The metrics from samples at SAMPLE_S steps: t (s), rx_bytes (cumulative delivered),
    cwnd_pkts, rtt_ms (NaN before the first sample), backlog_pkts, retx and drops
    (cumulative). Both sides go through this one function."""
    keep = [i for i, t in enumerate(samples["t"]) if 0 < t <= window_end + 1e-9]
    if not keep:
        raise ValueError(f"no samples in (0, {window_end}] s")
    last = keep[-1]

    def mean(name: str) -> float:
        vals = [samples[name][i] for i in keep if not math.isnan(samples[name][i])]
        return sum(vals) / len(vals) if vals else math.nan

    end = samples["t"][last]
    epochs, last_drop, before = 0, -math.inf, 0.0
    for i in keep:
        t, d = samples["t"][i], samples["drops"][i]
        if d > before:
            epochs += t - last_drop > EPOCH_GAP_S
            last_drop = t
        before = d
    return {
        "goodput_mbps": samples["rx_bytes"][last] * 8 / end / 1e6,
        "retransmissions": samples["retx"][last],
        "bottleneck_drops": samples["drops"][last],
        "mean_rtt_ms": mean("rtt_ms"),
        "mean_cwnd_pkts": mean("cwnd_pkts"),
        "mean_backlog_pkts": mean("backlog_pkts"),
        "max_backlog_pkts": max(samples["backlog_pkts"][i] for i in keep),
        "loss_epochs": epochs,
    }


# --- tcplab -------------------------------------------------------------------------


def tcplab_samples(cc: str, duration: str | None = None) -> dict[str, list[float]]:
    """One tcplab run of the spec with flow 0's cc set, as summarize()'s samples."""
    import tcplab

    overrides: dict = {"flows[0].cc": cc}
    if duration is not None:
        overrides["experiment.duration"] = duration
        overrides["flows[0].stop"] = duration
        overrides["experiment.analysis"] = ["0s", duration]
    res = tcplab.run(SPEC, overrides=overrides, report=False)
    series = res.series
    queue = res.queue
    flow = series[series["flow"] == 0].sort_values("time_s")
    q = queue.sort_values("time_s")
    rx, retx, drops = [], [], []
    total = retx_total = 0.0
    for gp, r in zip(flow["goodput_bps"], flow["retransmits"]):
        total += gp * SAMPLE_S / 8
        retx_total += r
        rx.append(total)
        retx.append(retx_total)
    dropped = 0.0
    for d in q["drops"]:
        dropped += d
        drops.append(dropped)
    return {
        "t": [round(t, 6) for t in flow["time_s"]],
        "rx_bytes": rx,
        "cwnd_pkts": list(flow["cwnd_pkts"].astype(float)),
        "rtt_ms": list(flow["rtt_ms"].astype(float)),
        "srtt_ms": list(flow["srtt_ms"].astype(float)),
        "backlog_pkts": list(q["backlog_pkts"].astype(float)),
        "retx": retx,
        "drops": drops,
    }


# --- ns-3 ---------------------------------------------------------------------------

NS3_MISSING = (
    "ns-3 side skipped: the ns3 Python package is not installed (it is not a tcplab "
    "dependency); `pip install ns3==3.44.post0` into this venv to run it"
)

# The trace sinks and the sampler in C++ (cppyy): a Python callback per packet would be
# slow and ns-3's Python bindings connect trace sources to C++ functions.
_PROBE_CPP = r"""
namespace tcplab_ns3 {
using namespace ns3;
struct Probe {
    Ptr<BulkSendApplication> app;
    Ptr<PacketSink> sink;
    Ptr<QueueDisc> qdisc;
    Ptr<Queue<Packet>> devq;
    uint32_t seg = 0;
    uint64_t retx = 0, drops = 0;
    double cwnd = 0, rtt_ms = -1;
    uint32_t max_wire = 0;
    std::vector<double> t, rx, cwnd_s, rtt_s, backlog, retx_s, drops_s;
};
static Probe P;
void OnRetx(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
            Ptr<const TcpSocketBase>) { P.retx++; }
void OnCwnd(uint32_t, uint32_t v) { P.cwnd = v; }
void OnLastRtt(Time, Time v) { P.rtt_ms = v.GetSeconds() * 1e3; }
void OnQdiscDrop(Ptr<const QueueDiscItem>) { P.drops++; }
void OnDevDrop(Ptr<const Packet>) { P.drops++; }
void OnPhyTx(Ptr<const Packet> p) { P.max_wire = std::max(P.max_wire, p->GetSize()); }
void Hook() {
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(P.app->GetSocket());
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetx));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    s->TraceConnectWithoutContext("LastRTT", MakeCallback(&OnLastRtt));
}
void Sample(uint32_t k, uint32_t n, uint32_t step_ms) {
    P.t.push_back(Simulator::Now().GetSeconds());
    P.rx.push_back(P.sink->GetTotalRx());
    P.cwnd_s.push_back(P.cwnd / P.seg);
    P.rtt_s.push_back(P.rtt_ms);
    P.backlog.push_back(P.qdisc->GetNPackets() + P.devq->GetNPackets());
    P.retx_s.push_back(P.retx);
    P.drops_s.push_back(P.drops);
    if (k < n) {
        Simulator::Schedule(MilliSeconds(step_ms * (k + 1)) - Simulator::Now(), &Sample, k + 1,
                            n, step_ms);
    }
}
void Setup(Ptr<Application> app, Ptr<Application> sink, Ptr<QueueDisc> qdisc,
           Ptr<NetDevice> dev, uint32_t seg, uint32_t n, uint32_t step_ms) {
    P.app = DynamicCast<BulkSendApplication>(app);
    P.sink = DynamicCast<PacketSink>(sink);
    P.qdisc = qdisc;
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev);
    P.devq = p2p->GetQueue();
    P.seg = seg;
    qdisc->TraceConnectWithoutContext("Drop", MakeCallback(&OnQdiscDrop));
    P.devq->TraceConnectWithoutContext("Drop", MakeCallback(&OnDevDrop));
    p2p->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnPhyTx));
    // As the example's tracing: the socket exists once the application started at 0 s.
    Simulator::Schedule(Seconds(0.00001), &Hook);
    Simulator::Schedule(MilliSeconds(step_ms), &Sample, 1, n, step_ms);
}
}
"""


def ns3_available() -> bool:
    return importlib.util.find_spec("ns") is not None


RECOVERY = {"classic": "ns3::TcpClassicRecovery", "prr": "ns3::TcpPrrRecovery"}


def ns3_samples(transport_prot: str, recovery: str = "classic") -> dict:
    """One ns-3 run of the scenario in this process (call it in a fresh process).
    recovery "classic" is the example's (l. 351); "prr" is ns-3's own default since 3.32
    (tcp.rst, "Loss Recovery Algorithms"), the one Linux runs: a control that tells what
    of a difference the recovery makes."""
    from ns import ns

    ns.cppyy.cppdef(_PROBE_CPP)
    probe = ns.cppyy.gbl.tcplab_ns3
    tid = "ns3::" + transport_prot

    ns.RngSeedManager.SetSeed(1)  # l. 383-384, run = 0
    ns.RngSeedManager.SetRun(0)
    # l. 407-419: 2 MB buffers, SACK, classic recovery, the variant.
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 21))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 21))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName(RECOVERY[recovery])),
    )
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(tid))
    )

    gateways = ns.NodeContainer()
    gateways.Create(1)
    sources = ns.NodeContainer()
    sources.Create(1)
    sinks = ns.NodeContainer()
    sinks.Create(1)

    # l. 429-441: the receive error model at error_p = 0 drops nothing; left out.
    unre = ns.PointToPointHelper()
    unre.SetDeviceAttribute("DataRate", ns.StringValue(BANDWIDTH))
    unre.SetChannelAttribute("Delay", ns.StringValue(DELAY))
    stack = ns.InternetStackHelper()
    stack.InstallAll()
    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc("ns3::PfifoFastQueueDisc")
    address = ns.Ipv4AddressHelper()
    address.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    local = ns.PointToPointHelper()
    local.SetDeviceAttribute("DataRate", ns.StringValue(ACCESS_BANDWIDTH))
    local.SetChannelAttribute("Delay", ns.StringValue(ACCESS_DELAY))
    ns.Config.SetDefault(
        "ns3::PfifoFastQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{QUEUE_PKTS}p"))
    )

    devices = local.Install(sources.Get(0), gateways.Get(0))
    tch.Install(devices)
    address.NewNetwork()
    address.Assign(devices)
    bottleneck = unre.Install(gateways.Get(0), sinks.Get(0))
    qdiscs = tch.Install(bottleneck)
    address.NewNetwork()
    sink_if = address.Assign(bottleneck)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 50000
    sink_local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
    sink_helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", sink_local)
    remote = ns.AddressValue(ns.InetSocketAddress(sink_if.GetAddress(1, 0), port).ConvertTo())
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(ADU_BYTES))
    ftp = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.Address())
    ftp.SetAttribute("Remote", remote)
    ftp.SetAttribute("SendSize", ns.UintegerValue(ADU_BYTES))
    ftp.SetAttribute("MaxBytes", ns.UintegerValue(0))
    source_app = ftp.Install(sources.Get(0))
    source_app.Start(ns.Seconds(0))
    source_app.Stop(ns.Seconds(APP_STOP_S))
    sink_helper.SetAttribute("Protocol", ns.TypeIdValue(ns.TcpSocketFactory.GetTypeId()))
    sink_app = sink_helper.Install(sinks.Get(0))
    sink_app.Start(ns.Seconds(0))
    sink_app.Stop(ns.Seconds(STOP_TIME_S))

    step_ms = round(SAMPLE_S * 1000)
    n = int(round(APP_STOP_S / SAMPLE_S))
    probe.Setup(
        source_app.Get(0), sink_app.Get(0), qdiscs.Get(0), bottleneck.Get(0), ADU_BYTES, n, step_ms
    )
    ns.Simulator.Stop(ns.Seconds(STOP_TIME_S))
    ns.Simulator.Run()
    p = probe.P
    out = {
        "t": list(p.t),
        "rx_bytes": list(p.rx),
        "cwnd_pkts": list(p.cwnd_s),
        "rtt_ms": [math.nan if v < 0 else v for v in p.rtt_s],
        "backlog_pkts": list(p.backlog),
        "retx": list(p.retx_s),
        "drops": list(p.drops_s),
        "max_wire_bytes": int(p.max_wire),
        "queue_disc_limit_pkts": QUEUE_PKTS,
        "device_queue_limit_pkts": int(p.devq.GetMaxSize().GetValue()),
    }
    ns.Simulator.Destroy()
    return out


def ns3_run_isolated(transport_prot: str, recovery: str = "classic") -> dict:
    """ns3_samples in a child process (ns-3's globals outlive Simulator::Destroy)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--one-ns3", transport_prot, "--recovery", recovery],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"ns-3 {transport_prot} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- the comparison -----------------------------------------------------------------


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def read_csv(path: Path) -> dict[str, dict]:
    with path.open() as f:
        return {r["ns3"]: r for r in csv.DictReader(f)}


def comparison_table(ns3_rows: dict[str, dict], tcplab_rows: dict[str, dict]) -> str:
    """Markdown: per algorithm, each metric as ns-3 / tcplab (ratio tcplab / ns-3)."""
    head = "| ns-3 | tcplab | " + " | ".join(METRICS) + " |"
    lines = [head, "|" + "---|" * (len(METRICS) + 2)]
    for name, cc in MAPPING.items():
        a, b = ns3_rows.get(name), tcplab_rows.get(name)
        if a is None or b is None:
            continue
        cells = []
        for m in METRICS:
            x, y = float(a[m]), float(b[m])
            ratio = f"{y / x:.2f}" if x else "-"
            fmt = ".3f" if m == "goodput_mbps" else ".1f" if m.startswith("mean") else ".0f"
            cells.append(f"{x:{fmt}} / {y:{fmt}} ({ratio})")
        lines.append(f"| {name} | {cc} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--side", choices=["both", "ns3", "tcplab"], default="both")
    ap.add_argument("--algorithms", nargs="+", metavar="NS3_NAME", default=list(MAPPING))
    ap.add_argument("-o", "--out", type=Path, default=REPO / "results" / "ns3-variants")
    ap.add_argument(
        "--recovery",
        choices=list(RECOVERY),
        default="classic",
        help="ns-3's loss recovery: the example's classic (default) or prr (writes ns3-prr.csv)",
    )
    ap.add_argument("--one-ns3", metavar="NS3_NAME", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.one_ns3:  # the child process of ns3_run_isolated
        print(json.dumps(ns3_samples(args.one_ns3, args.recovery)))
        return 0
    unknown = [a for a in args.algorithms if a not in MAPPING]
    if unknown:
        print(
            f"--algorithms: {', '.join(unknown)} not compared; allowed: {', '.join(MAPPING)}"
            + "".join(f"\n  {k}: {v}" for k, v in LEFT_OUT.items() if k in unknown),
            file=sys.stderr,
        )
        return 2

    sides = ["ns3", "tcplab"] if args.side == "both" else [args.side]
    if "ns3" in sides and not ns3_available():
        print(NS3_MISSING, file=sys.stderr)
        sides.remove("ns3")
        if not sides:
            return 0
    for side in sides:
        rows = []
        for name in args.algorithms:
            if side == "ns3":
                samples = ns3_run_isolated(name, args.recovery)
                extra = {
                    "max_wire_bytes": samples["max_wire_bytes"],
                    "device_queue_limit_pkts": samples["device_queue_limit_pkts"],
                }
            else:
                samples = tcplab_samples(MAPPING[name])
                extra = {}
            row = {"ns3": name, "tcplab": MAPPING[name], **summarize(samples), **extra}
            # The samples themselves, for statistics the table does not hold.
            csv_name = "ns3-prr" if side == "ns3" and args.recovery == "prr" else side
            dump = args.out / "samples" / f"{csv_name}-{name}.json"
            dump.parent.mkdir(parents=True, exist_ok=True)
            dump.write_text(json.dumps(samples))
            print(side, json.dumps(row), flush=True)
            rows.append(row)
        csv_name = "ns3-prr" if side == "ns3" and args.recovery == "prr" else side
        write_csv(args.out / f"{csv_name}.csv", rows)
    for ns3_csv in ("ns3", "ns3-prr"):
        if (args.out / f"{ns3_csv}.csv").exists() and (args.out / "tcplab.csv").exists():
            table = comparison_table(
                read_csv(args.out / f"{ns3_csv}.csv"), read_csv(args.out / "tcplab.csv")
            )
            suffix = "" if ns3_csv == "ns3" else "-prr"
            (args.out / f"comparison{suffix}.md").write_text(table)
            print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
