/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Packet-hops per wall-clock second through a chain of forwarding nodes:
// host - k switches - host over credit links, against ns-3's
// PointToPointNetDevice forwarding the same packets (a) by a receive
// callback that resends on the next device (the same per-hop work a switch
// core does) and (b) through the IPv4 stack with global routing.  Speed
// targets for the credit chain: >= 5x the packet-hops/s of (b), <= 3 events per
// packet-hop.  Heap allocations during the run are counted by replacing the
// global operator new (ns-3 allocates one EventImpl per scheduled event).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/credit-link-header.h"
#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-switch.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <benchmark/benchmark.h>
#include <cstdlib>
#include <new>

using namespace ns3;

namespace
{
uint64_t g_allocations = 0; // the simulation is single-threaded
} // namespace

void*
operator new(std::size_t bytes)
{
    ++g_allocations;
    if (void* p = std::malloc(bytes ? bytes : 1))
    {
        return p;
    }
    throw std::bad_alloc();
}

// gcc 12 cannot see that these pair with the malloc-based operator new above.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void
operator delete(void* p) noexcept
{
    std::free(p);
}

void
operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}

#pragma GCC diagnostic pop

namespace
{

constexpr uint32_t kPacketBytes = 1000;
const char* const kRate = "100Gbps";
const Time kDelay = NanoSeconds(100);

struct Counter
{
    uint64_t packets{0};

    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&)
    {
        ++packets;
        return true;
    }

    void Rx(Ptr<const Packet>, uint32_t)
    {
        ++packets;
    }
};

// Events and allocations of the timed Simulator::Run() calls.
struct RunCounts
{
    uint64_t events{0};
    uint64_t allocations{0};
    uint64_t eventsBefore{0};
    uint64_t allocationsBefore{0};

    void Start()
    {
        eventsBefore = Simulator::GetEventCount();
        allocationsBefore = g_allocations;
    }

    void Stop()
    {
        events += Simulator::GetEventCount() - eventsBefore;
        allocations += g_allocations - allocationsBefore;
    }
};

void
Report(benchmark::State& state, uint64_t hops, const RunCounts& counts)
{
    const auto h = static_cast<double>(hops);
    state.counters["packet_hops_per_s"] = benchmark::Counter(h, benchmark::Counter::kIsRate);
    state.counters["packet_hops"] = h;
    state.counters["events_per_hop"] = static_cast<double>(counts.events) / h;
    state.counters["allocations_per_hop"] = static_cast<double>(counts.allocations) / h;
}

// host - k switches - host; every packet queued at t = 0 on the first host.
// Third argument: 0 = a credit update per released packet, 1 = periodic (1 us).
// Fourth: 1 = cut-through switches (same events per hop as store-and-forward).
// With \p pfc the links run priority flow control (PriorityFlowControl) instead of credits.
void
RunLinkChain(benchmark::State& state, bool pfc)
{
    const auto switches = static_cast<uint32_t>(state.range(0));
    const auto packets = static_cast<uint32_t>(state.range(1));
    const bool periodic = state.range(2) != 0;
    const bool cutThrough = state.range(3) != 0;
    uint64_t hops = 0;
    RunCounts counts;
    for (auto _ : state)
    {
        state.PauseTiming();
        // The scheduler every ai-fabric program runs (ClusterHelper): a binary heap, which
        // allocates nothing per event; ns-3's default (a std::map, kept by the ns-3 chains
        // below) allocates a tree node per event.
        ObjectFactory scheduler("ns3::PriorityQueueScheduler");
        Simulator::SetScheduler(scheduler);
        NodeContainer nodes(switches + 2);
        CreditLinkHelper helper;
        helper.SetDeviceAttribute("DataRate", DataRateValue(DataRate(kRate)));
        helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(packets * (kPacketBytes + 8)));
        helper.SetChannelAttribute("Delay", TimeValue(kDelay));
        helper.SetSwitchAttribute("Forwarding",
                                  EnumValue(cutThrough
                                                ? CreditSwitch::FORWARDING_CUT_THROUGH
                                                : CreditSwitch::FORWARDING_STORE_AND_FORWARD));
        if (pfc)
        {
            helper.SetFlowControl("ns3::PriorityFlowControl");
        }
        if (periodic)
        {
            helper.SetDeviceAttribute("CreditUpdatePolicy",
                                      EnumValue(CreditLinkNetDevice::CREDIT_UPDATE_PERIODIC));
            helper.SetDeviceAttribute("CreditUpdateInterval", TimeValue(MicroSeconds(1)));
        }
        std::vector<Ptr<CreditSwitch>> cores;
        for (uint32_t s = 1; s <= switches; ++s)
        {
            cores.push_back(helper.InstallSwitch(nodes.Get(s)));
        }
        NetDeviceContainer first;
        NetDeviceContainer last;
        for (uint32_t i = 0; i <= switches; ++i)
        {
            NetDeviceContainer l = helper.Install(nodes.Get(i), nodes.Get(i + 1));
            if (i == 0)
            {
                first = l;
            }
            last = l;
        }
        for (auto& core : cores)
        {
            core->SetRoute(1, {1}); // port 0 came from upstream, port 1 goes downstream
        }
        Counter sink;
        last.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&Counter::Rx, &sink));
        auto src = DynamicCast<CreditLinkNetDevice>(first.Get(0));
        for (uint32_t p = 0; p < packets; ++p)
        {
            Ptr<Packet> packet = Create<Packet>(kPacketBytes);
            packet->AddHeader(CreditLinkHeader(1, 0));
            src->SendOnVc(packet, 0);
        }
        counts.Start();
        state.ResumeTiming();
        Simulator::Run();
        state.PauseTiming();
        counts.Stop();
        hops += sink.packets * (switches + 1);
        if (sink.packets != packets)
        {
            state.SkipWithError("credit chain lost packets");
        }
        Simulator::Destroy();
        state.ResumeTiming();
    }
    Report(state, hops, counts);
}

void
BM_CreditLinkChain(benchmark::State& state)
{
    RunLinkChain(state, false);
}

// The same chain under PFC (lossless Ethernet's discipline): PAUSE frames only at XOFF.
void
BM_PfcLinkChain(benchmark::State& state)
{
    RunLinkChain(state, true);
}

// The same chain of PointToPointNetDevices; intermediate nodes resend each
// packet on their downstream device from the receive callback.
struct P2pForwarder
{
    Ptr<NetDevice> next;

    bool Receive(Ptr<NetDevice>, Ptr<const Packet> packet, uint16_t protocol, const Address&)
    {
        next->Send(packet->Copy(), next->GetBroadcast(), protocol);
        return true;
    }
};

void
BM_PointToPointChain(benchmark::State& state)
{
    const auto switches = static_cast<uint32_t>(state.range(0));
    const auto packets = static_cast<uint32_t>(state.range(1));
    uint64_t hops = 0;
    RunCounts counts;
    for (auto _ : state)
    {
        state.PauseTiming();
        NodeContainer nodes(switches + 2);
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(kRate)));
        p2p.SetChannelAttribute("Delay", TimeValue(kDelay));
        p2p.SetQueue("ns3::DropTailQueue<Packet>",
                     "MaxSize",
                     QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, packets + 1)));
        std::vector<NetDeviceContainer> links;
        for (uint32_t i = 0; i <= switches; ++i)
        {
            links.push_back(p2p.Install(nodes.Get(i), nodes.Get(i + 1)));
        }
        std::vector<P2pForwarder> forwarders(switches);
        for (uint32_t s = 0; s < switches; ++s)
        {
            forwarders[s].next = links[s + 1].Get(0);
            links[s].Get(1)->SetReceiveCallback(
                MakeCallback(&P2pForwarder::Receive, &forwarders[s]));
        }
        Counter sink;
        links[switches].Get(1)->SetReceiveCallback(MakeCallback(&Counter::Receive, &sink));
        Ptr<NetDevice> src = links[0].Get(0);
        for (uint32_t p = 0; p < packets; ++p)
        {
            // 1008 B: the same bytes as the credit packet with its 8-byte header.
            src->Send(Create<Packet>(kPacketBytes + 8), src->GetBroadcast(), 0x0800);
        }
        counts.Start();
        state.ResumeTiming();
        Simulator::Run();
        state.PauseTiming();
        counts.Stop();
        hops += sink.packets * (switches + 1);
        if (sink.packets != packets)
        {
            state.SkipWithError("point-to-point chain lost packets");
        }
        Simulator::Destroy();
        state.ResumeTiming();
    }
    Report(state, hops, counts);
}

// Point-to-point chain as an IPv4 network: UdpClient paced at line rate,
// global routing, UdpServer at the end (the full ns-3 stack per hop).
void
BM_PointToPointIpv4Chain(benchmark::State& state)
{
    const auto routers = static_cast<uint32_t>(state.range(0));
    const auto packets = static_cast<uint32_t>(state.range(1));
    uint64_t hops = 0;
    RunCounts counts;
    for (auto _ : state)
    {
        state.PauseTiming();
        NodeContainer nodes(routers + 2);
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(kRate)));
        p2p.SetChannelAttribute("Delay", TimeValue(kDelay));
        InternetStackHelper stack;
        stack.Install(nodes);
        Ipv4AddressHelper address;
        address.SetBase("10.0.0.0", "255.255.255.0");
        Ipv4InterfaceContainer lastIf;
        for (uint32_t i = 0; i <= routers; ++i)
        {
            lastIf = address.Assign(p2p.Install(nodes.Get(i), nodes.Get(i + 1)));
            address.NewNetwork();
        }
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
        UdpServerHelper server(9);
        ApplicationContainer sinkApp = server.Install(nodes.Get(routers + 1));
        UdpClientHelper client(lastIf.GetAddress(1), 9);
        client.SetAttribute("MaxPackets", UintegerValue(packets));
        // 1000 B payload + 8 UDP + 20 IP + 2 PPP = 1030 B = 82.4 ns at 100 Gb/s.
        client.SetAttribute("Interval", TimeValue(NanoSeconds(83)));
        client.SetAttribute("PacketSize", UintegerValue(kPacketBytes));
        client.Install(nodes.Get(0));
        counts.Start();
        state.ResumeTiming();
        Simulator::Run();
        state.PauseTiming();
        counts.Stop();
        const uint64_t received = DynamicCast<UdpServer>(sinkApp.Get(0))->GetReceived();
        hops += received * (routers + 1);
        if (received != packets)
        {
            state.SkipWithError("IPv4 chain lost packets");
        }
        Simulator::Destroy();
        Config::Reset();
        state.ResumeTiming();
    }
    Report(state, hops, counts);
}

} // namespace

BENCHMARK(BM_CreditLinkChain)
    ->Args({4, 100000, 0, 0})
    ->Args({4, 100000, 1, 0})
    ->Args({4, 100000, 0, 1})
    ->Args({4, 100000, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_PfcLinkChain)
    ->Args({4, 100000, 0, 0})
    ->Args({4, 100000, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_PointToPointChain)->Args({4, 100000})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PointToPointIpv4Chain)
    ->Args({4, 100000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
