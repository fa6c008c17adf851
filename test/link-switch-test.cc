/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Credit links through CreditSwitch cores: hop latency, incast, head-of-line
// blocking, credit-loop deadlock detection, credit conservation.
#include "switch-ring.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/credit-link-header.h"
#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-switch.h"
#include "ns3/node-container.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <optional>
#include <vector>

using namespace ns3;

namespace
{

Ptr<Packet>
MakeLinkPacket(uint32_t destination, uint32_t totalBytes)
{
    Ptr<Packet> p = Create<Packet>(totalBytes - CreditLinkHeader::SIZE_BYTES);
    p->AddHeader(CreditLinkHeader(destination, 0));
    return p;
}

Ptr<CreditLinkNetDevice>
Dev(const NetDeviceContainer& c, uint32_t i)
{
    return DynamicCast<CreditLinkNetDevice>(c.Get(i));
}

// Sends a list of destinations in order, refilling on TxReady.
struct Source
{
    Ptr<CreditLinkNetDevice> device;
    std::vector<uint32_t> destinations;
    uint32_t bytes{4096};
    std::size_t next{0};
    uint64_t refusals{0};

    void Start()
    {
        device->SetTxReadyCallback(MakeCallback(&Source::Ready, this));
        Pump();
    }

    void Ready(Ptr<CreditLinkNetDevice>, uint32_t)
    {
        Pump();
    }

    void Pump()
    {
        while (next < destinations.size())
        {
            if (!device->SendOnVc(MakeLinkPacket(destinations[next], bytes), 0))
            {
                ++refusals;
                return;
            }
            ++next;
        }
    }
};

struct Sink
{
    uint64_t packets{0};
    uint64_t bytes{0};
    Time last;

    void Rx(Ptr<const Packet> p, uint32_t)
    {
        ++packets;
        bytes += p->GetSize();
        last = Simulator::Now();
    }
};

struct BusyLog
{
    Time first{Seconds(-1)};
    Time last;

    void Begin(Ptr<const Packet>, uint32_t)
    {
        if (first.IsNegative())
        {
            first = Simulator::Now();
        }
    }

    void End(Ptr<const Packet>, uint32_t)
    {
        last = Simulator::Now();
    }
};

void
ExpectAllCreditsRestored(const NodeContainer& nodes)
{
    for (uint32_t n = 0; n < nodes.GetN(); ++n)
    {
        for (uint32_t i = 0; i < nodes.Get(n)->GetNDevices(); ++i)
        {
            auto d = DynamicCast<CreditLinkNetDevice>(nodes.Get(n)->GetDevice(i));
            if (!d)
            {
                continue;
            }
            for (uint32_t vc = 0; vc < d->GetNumVcs(); ++vc)
            {
                EXPECT_EQ(d->GetCredits(vc), d->GetInitialCredits(vc)) << d->GetLinkName();
                EXPECT_EQ(d->GetReceiveOccupancy(vc), 0u) << d->GetLinkName();
            }
        }
    }
}

class LinkSwitchTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

} // namespace

// host -> switch -> host, 100 Gb/s, 4096 B = 327.68 ns per hop (the clock
// rounds a lone frame down to 327 ns), 200 ns per cable, 150 ns in the switch:
// 2 x (327 + 200) + 150 = 1204 ns, exact.
TEST_F(LinkSwitchTest, OnePacketLatencyAddsSwitchTraversal)
{
    NodeContainer hosts(2);
    NodeContainer sw(1);
    CreditLinkHelper helper;
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(200)));
    helper.SetSwitchAttribute("TraversalLatency", TimeValue(NanoSeconds(150)));
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    NetDeviceContainer l0 = helper.Install(hosts.Get(0), sw.Get(0));
    NetDeviceContainer l1 = helper.Install(hosts.Get(1), sw.Get(0));
    core->SetRoute(1, {1});
    Sink sink;
    Dev(l1, 0)->TraceConnectWithoutContext("Rx", MakeCallback(&Sink::Rx, &sink));
    Dev(l0, 0)->SendOnVc(MakeLinkPacket(1, 4096), 0);
    Simulator::Run();
    ASSERT_EQ(sink.packets, 1u);
    EXPECT_EQ(sink.last, NanoSeconds(2 * (327 + 200) + 150)); // exact to the ns
    ExpectAllCreditsRestored(NodeContainer(hosts, sw));
}

// 8 hosts send 200 x 1 KiB each to one host through one switch whose input
// buffers hold 2 packets.  The output's credit loop (81.92 ns frame, 2 x 20 ns
// cable, 0.48 ns credit frame = 122 ns) is shorter than its 2-packet window
// (164 ns), so the output never waits: busy > 99 %.  Each input gets 1/8 of
// it, so inputs are credit-stalled about 7/8 of the time.
TEST_F(LinkSwitchTest, IncastDeliversEverythingWithOutputSaturated)
{
    const uint32_t senders = 8;
    const uint32_t perSender = 200;
    const uint32_t bytes = 1024;
    NodeContainer hosts(senders + 1);
    NodeContainer sw(1);
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(2 * bytes));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(20)));
    helper.SetSwitchAttribute("TraversalLatency", TimeValue(NanoSeconds(50)));
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    std::vector<NetDeviceContainer> links;
    for (uint32_t h = 0; h <= senders; ++h)
    {
        links.push_back(helper.Install(hosts.Get(h), sw.Get(0)));
    }
    core->SetRoute(senders, {senders});
    Sink sink;
    Dev(links[senders], 0)->TraceConnectWithoutContext("Rx", MakeCallback(&Sink::Rx, &sink));
    BusyLog out;
    Ptr<CreditLinkNetDevice> outPort = Dev(links[senders], 1);
    outPort->TraceConnectWithoutContext("TxBegin", MakeCallback(&BusyLog::Begin, &out));
    outPort->TraceConnectWithoutContext("TxEnd", MakeCallback(&BusyLog::End, &out));
    std::vector<Source> sources(senders);
    for (uint32_t h = 0; h < senders; ++h)
    {
        sources[h].device = Dev(links[h], 0);
        sources[h].destinations.assign(perSender, senders);
        sources[h].bytes = bytes;
        sources[h].Start();
    }
    Simulator::Run();

    EXPECT_EQ(sink.packets, uint64_t{senders} * perSender); // every packet
    EXPECT_EQ(sink.bytes, uint64_t{senders} * perSender * bytes);
    for (const auto& s : sources)
    {
        EXPECT_EQ(s.next, perSender); // all offered packets accepted: nothing dropped
    }
    EXPECT_EQ(core->GetBufferedPackets(), 0u);
    // Input buffers hold at most 8 x 2 packets, all of them for the output.
    EXPECT_LE(core->GetPeakBytesForOutput(senders), uint64_t{senders} * 2 * bytes);
    EXPECT_GT(core->GetPeakBytesForOutput(senders), uint64_t{senders} * bytes);
    const Time active = out.last - out.first;
    const double busy = outPort->GetCounters().busyTime.GetSeconds() / active.GetSeconds();
    EXPECT_GT(busy, 0.99); // requirement: output busy > 99 %
    for (uint32_t h = 0; h < senders; ++h)
    {
        const double stalled =
            Dev(links[h], 0)->GetCounters().creditStallTime.GetSeconds() / active.GetSeconds();
        EXPECT_GT(stalled, 0.8) << "sender " << h; // 7/8 = 0.875 less start-up and tail
        EXPECT_LT(stalled, 0.9) << "sender " << h;
    }
    ExpectAllCreditsRestored(NodeContainer(hosts, sw));
}

namespace
{

// Host A sends 8 packets to X (drained by its host at 10 Gb/s through a
// 1-packet buffer) and then 8 packets to the idle output Y.  Returns when the
// last Y packet arrived.
// voq unset: the switch's default.
Time
RunHeadOfLine(std::optional<bool> voq)
{
    NodeContainer hosts(3); // A, X, Y
    NodeContainer sw(1);
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(128 * 1024));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(100)));
    helper.SetSwitchAttribute("TraversalLatency", TimeValue(NanoSeconds(100)));
    if (voq)
    {
        helper.SetSwitchAttribute("VirtualOutputQueues", BooleanValue(*voq));
    }
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    NetDeviceContainer a = helper.Install(hosts.Get(0), sw.Get(0));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(4096));
    helper.SetDeviceAttribute("ReceiveDrainRate", DataRateValue(DataRate("10Gbps")));
    NetDeviceContainer x = helper.Install(hosts.Get(1), sw.Get(0));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(128 * 1024));
    helper.SetDeviceAttribute("ReceiveDrainRate", DataRateValue(DataRate(0)));
    NetDeviceContainer y = helper.Install(hosts.Get(2), sw.Get(0));
    core->SetRoute(1, {1});
    core->SetRoute(2, {2});
    Sink ySink;
    Dev(y, 0)->TraceConnectWithoutContext("Rx", MakeCallback(&Sink::Rx, &ySink));
    Source src;
    src.device = Dev(a, 0);
    src.destinations.assign(8, 1);
    src.destinations.insert(src.destinations.end(), 8, 2);
    src.Start();
    Simulator::Run();
    EXPECT_EQ(ySink.packets, 8u);
    ExpectAllCreditsRestored(NodeContainer(hosts, sw));
    Simulator::Destroy();
    return ySink.last;
}

} // namespace

TEST_F(LinkSwitchTest, HeadOfLineBlockingWithFifoInputsNotWithVoq)
{
    const double ser_ns = 4096 * 8 / 100.0; // 327.68 ns per packet at 100 Gb/s
    // VOQ: Y packets overtake the X backlog.  The 16th packet of A's back-to-back
    // burst arrives at 16 ser + 100 ns, waits 100 ns, takes ser + 100 ns: the
    // unobstructed time.  Tolerance 1 %.
    const double unobstructed_ns = 17 * ser_ns + 300;
    const Time voq = RunHeadOfLine(true);
    EXPECT_NEAR(voq.GetSeconds() * 1e9 / unobstructed_ns, 1.0, 0.01);
    // FIFO: the Y packets leave only after the 8th X packet, which needs the
    // first 7 drained at 10 Gb/s (3276.8 ns each): a lower bound of 22.9 us.
    const Time fifo = RunHeadOfLine(false);
    EXPECT_GT(fifo.GetSeconds() * 1e9, 7 * 3276.8);
    EXPECT_GT(fifo.GetSeconds(), 3 * voq.GetSeconds());
    // The default is virtual output queues, as switch ASICs queue by output: the same
    // unobstructed time (1 %).
    const Time byDefault = RunHeadOfLine(std::nullopt);
    EXPECT_NEAR(byDefault.GetSeconds() * 1e9 / unobstructed_ns, 1.0, 0.01);
}

// Four switches in a ring, each with one host; every route goes clockwise and
// each host sends 3 hops around: the ring links' buffers wait on each other
// (a cycle in the channel dependency graph).  With 1-packet buffers the ring
// locks up and the watchdog names its four links.
TEST_F(LinkSwitchTest, CreditLoopTriggersWatchdogNamingTheLoop)
{
    const uint32_t n = 4;
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(4096));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(50)));
    helper.SetWatchdogAttribute("Timeout", TimeValue(MicroSeconds(20)));
    const SwitchRing ring = BuildSwitchRing(helper, n);
    const std::vector<std::string>& ringLinks = ring.ringLinks;
    std::vector<Source> sources(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        sources[i].device = ring.hostDevices[i];
        sources[i].destinations.assign(200, (i + 3) % n);
        sources[i].Start();
    }
    Simulator::Stop(Seconds(1)); // only if the watchdog failed
    Simulator::Run();
    Ptr<CreditLinkWatchdog> watchdog = helper.GetWatchdog();
    ASSERT_TRUE(watchdog->HasFired());
    EXPECT_LT(Simulator::Now(), MilliSeconds(1));
    for (const auto& name : ringLinks)
    {
        EXPECT_NE(watchdog->GetReport().find("link " + name + " vc 0"), std::string::npos)
            << name << " missing from:\n"
            << watchdog->GetReport();
    }
    // Deadlocked, nothing is lost: the books balance, but the ring's credits are not back.
    CreditLinkConservation check;
    check.Add("ring", NodeContainer(ring.hosts, ring.switches));
    const CreditLinkConservationReport balance = check.Check(false);
    EXPECT_TRUE(balance.Ok()) << balance.Describe();
    const std::string idle = check.Check(true).Describe();
    for (const auto& name : ringLinks)
    {
        EXPECT_NE(idle.find("link " + name + " vc 0: credits not back"), std::string::npos) << idle;
    }
}

// Same ring, but each host sends only 1 hop: no cycle, everything drains and
// the watchdog stays silent.
TEST_F(LinkSwitchTest, RingWithoutCreditLoopDrainsAndWatchdogStaysQuiet)
{
    const uint32_t n = 4;
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(4096));
    helper.SetWatchdogAttribute("Timeout", TimeValue(MicroSeconds(20)));
    const SwitchRing ring = BuildSwitchRing(helper, n);
    std::vector<Source> sources(n);
    std::vector<Sink> sinks(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        ring.hostDevices[i]->TraceConnectWithoutContext("Rx", MakeCallback(&Sink::Rx, &sinks[i]));
        sources[i].device = ring.hostDevices[i];
        sources[i].destinations.assign(200, (i + 1) % n);
        sources[i].Start();
    }
    Simulator::Run();
    EXPECT_FALSE(helper.GetWatchdog()->HasFired());
    for (const auto& s : sinks)
    {
        EXPECT_EQ(s.packets, 200u);
    }
    ExpectAllCreditsRestored(NodeContainer(ring.hosts, ring.switches));
}

// Two parallel 50 Gb/s trunks between two switches, both candidates for the
// destination: adaptive routing spreads a 100 Gb/s flow over both, so it
// finishes in the time of the 100 Gb/s host links, not of one trunk.
TEST_F(LinkSwitchTest, AdaptiveRoutingSpreadsOverCandidates)
{
    NodeContainer hosts(2);
    NodeContainer switches(2);
    CreditLinkHelper helper;
    Ptr<CreditSwitch> s0 = helper.InstallSwitch(switches.Get(0));
    Ptr<CreditSwitch> s1 = helper.InstallSwitch(switches.Get(1));
    NetDeviceContainer a = helper.Install(hosts.Get(0), switches.Get(0));
    NetDeviceContainer b = helper.Install(hosts.Get(1), switches.Get(1));
    helper.SetDeviceAttribute("DataRate", DataRateValue(DataRate("50Gbps")));
    NetDeviceContainer t0 = helper.Install(switches.Get(0), switches.Get(1));
    NetDeviceContainer t1 = helper.Install(switches.Get(0), switches.Get(1));
    s0->SetRoute(1, {s0->GetPortIndex(t0.Get(0)), s0->GetPortIndex(t1.Get(0))});
    s1->SetRoute(1, {s1->GetPortIndex(b.Get(1))});
    Sink sink;
    Dev(b, 0)->TraceConnectWithoutContext("Rx", MakeCallback(&Sink::Rx, &sink));
    Source src;
    src.device = Dev(a, 0);
    src.destinations.assign(1000, 1);
    src.Start();
    Simulator::Run();
    ASSERT_EQ(sink.packets, 1000u);
    // Each trunk carries half (+-1 packet).
    EXPECT_NEAR(static_cast<double>(Dev(t0, 0)->GetCounters().txPackets), 500.0, 1.0);
    EXPECT_NEAR(static_cast<double>(Dev(t1, 0)->GetCounters().txPackets), 500.0, 1.0);
    // 1000 x 4096 B at 100 Gb/s = 327.68 us; one 50 Gb/s trunk alone would need
    // twice that.  Within 1 %.
    EXPECT_NEAR(sink.last.GetSeconds() * 1e6, 327.68, 327.68 * 0.01);
    ExpectAllCreditsRestored(NodeContainer(hosts, switches));
}

namespace
{

struct ForwardLog
{
    std::vector<uint32_t> inPorts;

    void Forward(Ptr<const Packet>, uint32_t in, uint32_t)
    {
        inPorts.push_back(in);
    }
};

// Hosts 0-2 each send one packet to host 3 at t = 100 ns, the send events scheduled in
// the order \p senders; equal cables, so the three reach the switch in the same
// nanosecond in that event order.  \return the switch's input port of each packet, in
// the order its output started them.
std::vector<uint32_t>
ServiceOrder(const std::vector<uint32_t>& senders)
{
    NodeContainer hosts(4);
    NodeContainer sw(1);
    CreditLinkHelper helper;
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(20)));
    helper.SetSwitchAttribute("TraversalLatency", TimeValue(NanoSeconds(50)));
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    std::vector<Ptr<CreditLinkNetDevice>> hostDevices;
    for (uint32_t h = 0; h < 4; ++h)
    {
        hostDevices.push_back(Dev(helper.Install(hosts.Get(h), sw.Get(0)), 0));
    }
    core->SetRoute(3, {3});
    ForwardLog log;
    core->TraceConnectWithoutContext("Forward", MakeCallback(&ForwardLog::Forward, &log));
    for (uint32_t h : senders)
    {
        Simulator::Schedule(NanoSeconds(100), [device = hostDevices[h]]() {
            device->SendOnVc(MakeLinkPacket(3, 1024), 0);
        });
    }
    Simulator::Run();
    ExpectAllCreditsRestored(NodeContainer(hosts, sw));
    Simulator::Destroy();
    return log.inPorts;
}

} // namespace

// The output is idle when the three packets become ready (same nanosecond): it starts the
// one of the lowest input port and serves the others in port order, whatever the order of
// their arrival events (which ns-3's distributed simulator changes for packets from
// another process).  Before the fix the service order was the event order.
TEST_F(LinkSwitchTest, SameNanosecondArrivalsServedInPortOrderNotEventOrder)
{
    const std::vector<uint32_t> portOrder{0, 1, 2};
    std::vector<uint32_t> senders{0, 1, 2};
    do
    {
        EXPECT_EQ(ServiceOrder(senders), portOrder)
            << "send events in the order " << senders[0] << senders[1] << senders[2];
    } while (std::next_permutation(senders.begin(), senders.end()));
}
