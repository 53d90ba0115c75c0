// ns-3's speed on tcplab's `bbr600` engine benchmark, in C++: the world of
// benches/ns3_dumbbell.py (read its docstring for the scenario and where it differs from
// tcplab's), built without Python, so that it can be linked against any ns-3 build: the
// PyPI wheel's libraries (ns3 3.44.post0: CMake profile "release" with NS_LOG and
// NS_ASSERT compiled in) or an ns-3 3.44 built from source with the "optimized" profile
// (-O3 -march=native, logging and asserts compiled out). The same world in both gives
// the factor between the wheel, which issue 41's ratios are taken against, and an
// optimized ns-3 (benches/RESULTS.md, "ns-3 optimized, measured").
//
// Against the wheel (headers and libraries inside the venv's site-packages/ns3):
//   NS=/tmp/ns3venv/lib/python3.11/site-packages/ns3
//   g++ -O2 -std=c++20 benches/ns3_dumbbell.cc -I$NS/include -L$NS/lib64 \
//       -Wl,-rpath,$NS/lib64 -lns3.44-applications -lns3.44-point-to-point \
//       -lns3.44-internet -lns3.44-traffic-control -lns3.44-network -lns3.44-core \
//       -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE -o /tmp/ns3-bbr600-wheel
// Against an ns-3 3.44 source tree built with
//   ./ns3 configure --build-profile=optimized \
//       --enable-modules="point-to-point;internet;applications" --disable-examples \
//       --disable-tests --disable-python-bindings && ./ns3 build
// (the libraries carry the profile's suffix):
//   SRC=/path/to/ns-3.44
//   g++ -O3 -march=native -std=c++20 benches/ns3_dumbbell.cc -I$SRC/build/include \
//       -L$SRC/build/lib -Wl,-rpath,$SRC/build/lib -lns3.44-applications-optimized \
//       -lns3.44-point-to-point-optimized -lns3.44-internet-optimized \
//       -lns3.44-traffic-control-optimized -lns3.44-network-optimized \
//       -lns3.44-core-optimized -o /tmp/ns3-bbr600-optimized
// Run: /tmp/ns3-bbr600-wheel 600 (simulated seconds; 600 by default). It prints the
// Python script's line, with the same packet count as the script gives on the wheel.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

using namespace ns3;

namespace
{
// The constants of benches/ns3_dumbbell.py.
constexpr double RTT_S = 0.040;
constexpr uint64_t BOTTLENECK_BPS = 10'000'000;
constexpr uint64_t ACCESS_BPS = 1'000'000'000;
constexpr uint32_t FLOWS = 2;
constexpr uint32_t MSS = 1448;
constexpr uint32_t BDP_BYTES = BOTTLENECK_BPS * 40 / 1000 / 8;
// The largest packet with no TCP payload on a PointToPoint device: PPP 2 + IP 20 + TCP 60.
constexpr uint32_t MAX_HEADER_ONLY = 2 + 20 + 60;

uint64_t g_data_packets = 0;

void
OnPhyTxEnd(Ptr<const Packet> p)
{
    if (p->GetSize() > MAX_HEADER_ONLY)
    {
        g_data_packets++;
    }
}

void
SetQueue(Ptr<NetDevice> dev, QueueSize size)
{
    DynamicCast<PointToPointNetDevice>(dev)->GetQueue()->SetMaxSize(size);
}

double
CpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double
WallSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
} // namespace

int
main(int argc, char** argv)
{
    double seconds = argc > 1 ? std::atof(argv[1]) : 600.0;
    if (seconds <= 0)
    {
        std::fprintf(stderr, "usage: %s [simulated seconds > 0]\n", argv[0]);
        return 2;
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName("ns3::TcpBbr")));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(MSS));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));

    NodeContainer senders;
    NodeContainer receivers;
    NodeContainer routers;
    senders.Create(FLOWS);
    receivers.Create(FLOWS);
    routers.Create(2);
    InternetStackHelper().InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(ACCESS_BPS)));
    access.SetChannelAttribute("Delay", TimeValue(Seconds(RTT_S / 8)));
    PointToPointHelper neck;
    neck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(BOTTLENECK_BPS)));
    neck.SetChannelAttribute("Delay", TimeValue(Seconds(RTT_S / 4)));

    Ipv4AddressHelper address;
    address.SetBase(Ipv4Address("10.0.0.0"), Ipv4Mask("255.255.255.0"));
    TrafficControlHelper tch;
    auto link = [&](PointToPointHelper& helper, Ptr<Node> a, Ptr<Node> b) {
        NetDeviceContainer devices = helper.Install(a, b);
        Ipv4InterfaceContainer interfaces = address.Assign(devices);
        address.NewNetwork();
        tch.Uninstall(devices); // the default queue disc Assign installed
        for (uint32_t i = 0; i < 2; i++)
        {
            SetQueue(devices.Get(i), QueueSize(QueueSizeUnit::PACKETS, 100'000));
        }
        return std::make_pair(devices, interfaces);
    };

    NetDeviceContainer bottleneck = link(neck, routers.Get(0), routers.Get(1)).first;
    SetQueue(bottleneck.Get(0), QueueSize(QueueSizeUnit::BYTES, BDP_BYTES));
    std::vector<Ipv4Address> remotes;
    for (uint32_t i = 0; i < FLOWS; i++)
    {
        link(access, senders.Get(i), routers.Get(0));
        remotes.push_back(link(access, routers.Get(1), receivers.Get(i)).second.GetAddress(1, 0));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 50000;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < FLOWS; i++)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer app = sink.Install(receivers.Get(i));
        app.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(app.Get(0)));
        BulkSendHelper bulk("ns3::TcpSocketFactory", Address());
        bulk.SetAttribute("Remote", AddressValue(InetSocketAddress(remotes[i], port)));
        bulk.SetAttribute("SendSize", UintegerValue(MSS));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.Install(senders.Get(i)).Start(Seconds(0));
    }

    bottleneck.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnPhyTxEnd));
    Simulator::Stop(Seconds(seconds));
    double wall0 = WallSeconds();
    double cpu0 = CpuSeconds();
    Simulator::Run();
    double cpu_run = CpuSeconds() - cpu0;
    double wall_run = WallSeconds() - wall0;
    uint64_t sink_bytes = 0;
    for (auto& s : sinks)
    {
        sink_bytes += s->GetTotalRx();
    }
    double cpu_process = CpuSeconds();
    std::printf("ns-3 bbr600 world: %g simulated s, %llu bottleneck data packets (sinks: %llu "
                "segments); CPU %.3f s in Simulator::Run (wall %.3f s), %.3f s whole process "
                "-> %.0f bottleneck packets per CPU second (run), %.0f (process)\n",
                seconds,
                static_cast<unsigned long long>(g_data_packets),
                static_cast<unsigned long long>(sink_bytes / MSS),
                cpu_run,
                wall_run,
                cpu_process,
                g_data_packets / cpu_run,
                g_data_packets / cpu_process);
    Simulator::Destroy();
    return 0;
}
