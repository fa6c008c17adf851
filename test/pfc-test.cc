/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Priority flow control (IEEE 802.1Qbb) as the link layer's second flow-control
// discipline: lossless incast with fair shares, a PAUSE that propagates hop by hop and
// blocks a victim behind the congested flow, pacing by a slow receiver, the PAUSE
// frame's wire time, lossy drops counted, a cyclic buffer dependency named by the
// watchdog and thresholds that do not fit the buffer refused.
#include "switch-ring.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/credit-link-header.h"
#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-switch.h"
#include "ns3/node-container.h"
#include "ns3/priority-flow-control.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

Ptr<CreditLinkNetDevice>
End(const NetDeviceContainer& c, uint32_t i)
{
    return DynamicCast<CreditLinkNetDevice>(c.Get(i));
}

Ptr<PriorityFlowControl>
Pfc(Ptr<CreditLinkNetDevice> d)
{
    return DynamicCast<PriorityFlowControl>(d->GetFlowControl());
}

// A backlogged host: keeps its device's queue full with packets for one destination
// until it has offered `count` of them; records when its first and last left.
struct Backlog
{
    Ptr<CreditLinkNetDevice> device;
    uint32_t destination{0};
    uint32_t count{0};
    uint32_t bytes{1024};
    uint32_t offered{0};
    Time firstTx{Seconds(-1)};
    Time lastTx;

    void Start()
    {
        device->SetTxReadyCallback(MakeCallback(&Backlog::Ready, this));
        device->TraceConnectWithoutContext("TxEnd", MakeCallback(&Backlog::Sent, this));
        Fill();
    }

    void Ready(Ptr<CreditLinkNetDevice>, uint32_t)
    {
        Fill();
    }

    void Sent(Ptr<const Packet>, uint32_t)
    {
        if (firstTx.IsNegative())
        {
            firstTx = Simulator::Now();
        }
        lastTx = Simulator::Now();
    }

    void Fill()
    {
        while (offered < count)
        {
            Ptr<Packet> p = Create<Packet>(bytes - CreditLinkHeader::SIZE_BYTES);
            p->AddHeader(CreditLinkHeader(destination, 0));
            if (!device->SendOnVc(p, 0))
            {
                return;
            }
            ++offered;
        }
    }

    /// Rate its packets left at, bits per second.
    double Rate_bps() const
    {
        return 8.0 * count * bytes / (lastTx - firstTx).GetSeconds();
    }
};

struct Arrivals
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

// 100 Gb/s, 500 ns cables, 64 KiB per ingress queue, PFC on every device.
void
ConfigurePfc(CreditLinkHelper& helper, bool lossless = true)
{
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(64 * 1024));
    helper.SetDeviceAttribute("Mtu", UintegerValue(4096));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(500)));
    helper.SetSwitchAttribute("TraversalLatency", TimeValue(NanoSeconds(300)));
    helper.SetFlowControl("ns3::PriorityFlowControl");
    helper.SetFlowControlAttribute("Lossless", BooleanValue(lossless));
}

uint64_t
TotalPfcDrops(const NodeContainer& nodes)
{
    uint64_t drops = 0;
    for (uint32_t n = 0; n < nodes.GetN(); ++n)
    {
        for (uint32_t i = 0; i < nodes.Get(n)->GetNDevices(); ++i)
        {
            if (auto d = DynamicCast<CreditLinkNetDevice>(nodes.Get(n)->GetDevice(i)))
            {
                drops += d->GetFlowControl()->GetDroppedPackets();
            }
        }
    }
    return drops;
}

class PfcTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

} // namespace

// N hosts send 2 MB each to one host through one switch.  The output runs at line rate
// and serves its inputs in turn, so each sender gets R/N; the inputs fill to XOFF and
// PAUSE their hosts instead of dropping: nothing is lost.
TEST_F(PfcTest, IncastLosesNothingAndSharesTheOutputEqually)
{
    const uint32_t senders = 8;
    const uint32_t packets = 2000;
    NodeContainer hosts(senders + 1);
    NodeContainer sw(1);
    CreditLinkHelper helper;
    ConfigurePfc(helper);
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    std::vector<NetDeviceContainer> links;
    for (uint32_t h = 0; h <= senders; ++h)
    {
        links.push_back(helper.Install(hosts.Get(h), sw.Get(0)));
    }
    core->SetRoute(senders, {senders});
    Arrivals sink;
    End(links[senders], 0)->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &sink));
    std::vector<Backlog> sources(senders);
    for (uint32_t h = 0; h < senders; ++h)
    {
        sources[h].device = End(links[h], 0);
        sources[h].destination = senders;
        sources[h].count = packets;
        sources[h].Start();
    }
    Simulator::Run();

    const NodeContainer all(hosts, sw);
    EXPECT_EQ(sink.packets, uint64_t{senders} * packets); // lossless: every packet
    EXPECT_EQ(TotalPfcDrops(all), 0u);
    const double line_bps = 100e9;
    for (uint32_t h = 0; h < senders; ++h)
    {
        // Each sender's share: R / N, 5 % tolerance (start-up and the last packets).
        EXPECT_NEAR(sources[h].Rate_bps() / (line_bps / senders), 1.0, 0.05) << "sender " << h;
        // Its switch input paused it (XOFF), and so its host waited.
        EXPECT_GT(Pfc(End(links[h], 1))->GetCounters().pauseFramesSent, 0u) << "sender " << h;
        EXPECT_GT(Pfc(End(links[h], 0))->GetPausedTime(), Time(0)) << "sender " << h;
        // Below the headroom: the ingress queue never overflowed its buffer.
        EXPECT_LE(Pfc(End(links[h], 1))->GetCounters().peakOccupancyBytes, 64u * 1024);
    }
    // The output is the bottleneck at line rate: all bytes in N x 2 MB / R (1 %).
    const double ideal_s = 8.0 * senders * packets * 1024 / line_bps;
    EXPECT_NEAR(sink.last.GetSeconds() / ideal_s, 1.0, 0.01);
    CreditLinkConservation check;
    check.Add("pfc", all);
    const CreditLinkConservationReport report = check.Check(true);
    EXPECT_TRUE(report.Ok()) << report.Describe();
}

// A host draining at 10 Gb/s behind a 100 Gb/s link: PAUSE at XOFF and resume at XON pace
// the sender to the drain rate.  Each PFC frame costs 84 B of wire time (6.72 ns at
// 100 Gb/s) on the reverse direction, which carries nothing else.
TEST_F(PfcTest, SlowReceiverPacesTheSenderAndPauseFramesCostWireTime)
{
    NodeContainer hosts(2);
    CreditLinkHelper helper;
    ConfigurePfc(helper);
    helper.SetDeviceAttribute("ReceiveDrainRate", DataRateValue(DataRate("10Gbps")));
    NetDeviceContainer link = helper.Install(hosts.Get(0), hosts.Get(1));
    Backlog source;
    source.device = End(link, 0);
    source.destination = 1;
    source.count = 4000;
    source.Start();
    Simulator::Run();

    // Paced to the drain: 10 Gb/s within 2 % (the first buffer fill goes at 100 Gb/s).
    EXPECT_NEAR(source.Rate_bps() / 10e9, 1.0, 0.02);
    Ptr<PriorityFlowControl> rx = Pfc(End(link, 1));
    EXPECT_EQ(rx->GetDroppedPackets(), 0u);
    EXPECT_GT(rx->GetCounters().pauseFramesSent, 10u);
    EXPECT_GT(rx->GetCounters().resumeFramesSent, 10u);
    // XON = XOFF - one 4096-byte frame: between them the queue drains 4 KiB at 10 Gb/s
    // (3.3 us), and a pause cycle is one XOFF and one XON frame.
    const auto& c = End(link, 1)->GetCounters();
    EXPECT_EQ(c.txFlowControlFrames,
              rx->GetCounters().pauseFramesSent + rx->GetCounters().resumeFramesSent);
    // Busy time of the reverse direction is its PFC frames only, 84 B each (1 ns rounding).
    const double frame_ns = 84 * 8 / 100.0;
    EXPECT_NEAR(c.busyTime.GetNanoSeconds(),
                c.txFlowControlFrames * frame_ns,
                c.txFlowControlFrames * 1.0);
    EXPECT_GT(Pfc(End(link, 0))->GetPausedTime().GetSeconds(),
              0.8 * (source.lastTx - source.firstTx).GetSeconds()); // paused 9/10 of the time
}

// Hosts A and V on switch S0, X and Y on S1; B1 and B2 on S1 also send to X.  X's output
// serves its three inputs in turn, so A gets R/3; the S1 input from S0 fills with A's
// packets, XOFF pauses S0's output, S0's inputs fill and pause A and V: the PAUSE moved
// two hops.  V's packets to the idle Y wait in the same FIFO behind A's (head-of-line
// blocking): S0 alternates A and V, so V gets A's R/3 instead of the 2R/3 the link
// has left.  The switches keep one FIFO per input (not the default virtual output
// queues) so that the victim's packets share A's queue in S1 as well as the paused trunk.
TEST_F(PfcTest, PausePropagatesAndBlocksAVictimAtTheCongestedShare)
{
    NodeContainer hosts(6); // A V X Y B1 B2
    NodeContainer sw(2);
    CreditLinkHelper helper;
    ConfigurePfc(helper);
    helper.SetSwitchAttribute("VirtualOutputQueues", BooleanValue(false));
    Ptr<CreditSwitch> s0 = helper.InstallSwitch(sw.Get(0));
    Ptr<CreditSwitch> s1 = helper.InstallSwitch(sw.Get(1));
    NetDeviceContainer a = helper.Install(hosts.Get(0), sw.Get(0));
    NetDeviceContainer v = helper.Install(hosts.Get(1), sw.Get(0));
    NetDeviceContainer x = helper.Install(hosts.Get(2), sw.Get(1));
    NetDeviceContainer y = helper.Install(hosts.Get(3), sw.Get(1));
    NetDeviceContainer b1 = helper.Install(hosts.Get(4), sw.Get(1));
    NetDeviceContainer b2 = helper.Install(hosts.Get(5), sw.Get(1));
    NetDeviceContainer trunk = helper.Install(sw.Get(0), sw.Get(1));
    const uint32_t toS1 = s0->GetPortIndex(trunk.Get(0));
    s0->SetRoute(2, {toS1});
    s0->SetRoute(3, {toS1});
    s1->SetRoute(2, {s1->GetPortIndex(x.Get(1))});
    s1->SetRoute(3, {s1->GetPortIndex(y.Get(1))});
    const uint32_t packets = 1500;
    std::vector<Backlog> flows(4);
    const std::vector<std::pair<NetDeviceContainer, uint32_t>> senders = {{a, 2},
                                                                          {v, 3},
                                                                          {b1, 2},
                                                                          {b2, 2}};
    for (uint32_t i = 0; i < flows.size(); ++i)
    {
        flows[i].device = End(senders[i].first, 0);
        flows[i].destination = senders[i].second;
        flows[i].count = packets;
        flows[i].Start();
    }
    Simulator::Run();

    const NodeContainer all(hosts, sw);
    EXPECT_EQ(TotalPfcDrops(all), 0u);
    const double line_bps = 100e9;
    // Congested flow: a third of X (5 %); the victim: the same third, not 2/3 (5 %).
    EXPECT_NEAR(flows[0].Rate_bps() / (line_bps / 3), 1.0, 0.05);
    EXPECT_NEAR(flows[1].Rate_bps() / (line_bps / 3), 1.0, 0.05);
    // Hop by hop: S1 paused S0's trunk output, S0 paused both its hosts.
    EXPECT_GT(Pfc(End(trunk, 1))->GetCounters().pauseFramesSent, 0u);
    EXPECT_GT(Pfc(End(trunk, 0))->GetPausedTime(), Time(0));
    EXPECT_GT(Pfc(End(a, 0))->GetCounters().pauseFramesReceived, 0u);
    EXPECT_GT(Pfc(End(v, 0))->GetCounters().pauseFramesReceived, 0u);
    // Y's output was idle most of the time: it was never the bottleneck.
    EXPECT_EQ(Pfc(End(y, 0))->GetCounters().pauseFramesSent, 0u);
}

// Lossy Ethernet (PFC off): the incast's switch input queues overflow; packets are
// dropped and counted, and the conservation check notes them without a violation.
TEST_F(PfcTest, LossyModeDropsAtOverflowAndCountsThem)
{
    const uint32_t senders = 4;
    NodeContainer hosts(senders + 1);
    NodeContainer sw(1);
    CreditLinkHelper helper;
    ConfigurePfc(helper, false);
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    std::vector<NetDeviceContainer> links;
    for (uint32_t h = 0; h <= senders; ++h)
    {
        links.push_back(helper.Install(hosts.Get(h), sw.Get(0)));
    }
    core->SetRoute(senders, {senders});
    Arrivals sink;
    End(links[senders], 0)->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &sink));
    std::vector<Backlog> sources(senders);
    for (uint32_t h = 0; h < senders; ++h)
    {
        sources[h].device = End(links[h], 0);
        sources[h].destination = senders;
        sources[h].count = 1000;
        sources[h].Start();
    }
    Simulator::Run();

    const NodeContainer all(hosts, sw);
    const uint64_t drops = TotalPfcDrops(all);
    // The output drains R while R x N arrives: about (N - 1) / N of what is sent past the
    // 64 KiB buffers is lost; at least half here.
    EXPECT_GT(drops, uint64_t{senders} * 1000 / 2);
    EXPECT_EQ(sink.packets + drops, uint64_t{senders} * 1000); // every packet accounted
    for (uint32_t h = 0; h < senders; ++h)
    {
        EXPECT_EQ(Pfc(End(links[h], 1))->GetCounters().pauseFramesSent, 0u);
    }
    CreditLinkConservation check;
    check.Add("lossy", all);
    const CreditLinkConservationReport report = check.Check(true);
    EXPECT_TRUE(report.Ok()) << report.Describe();
    EXPECT_EQ(report.notes.size(), senders);
    EXPECT_EQ(report.planes.at("lossy").drops, drops);
}

// Four switches in a ring, every route clockwise three hops: each ring link's ingress
// queue waits for the next one (a cyclic buffer dependency).  Under PFC every ring link
// pauses its upstream and nothing moves while PAUSE refreshes go on; the watchdog counts
// data frames only, so it reports the deadlock and names the four paused ring links.
TEST_F(PfcTest, CyclicBufferDependencyIsReportedAsDeadlock)
{
    const uint32_t n = 4;
    CreditLinkHelper helper;
    ConfigurePfc(helper);
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(24 * 1024));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(50)));
    helper.SetWatchdogAttribute("Timeout", TimeValue(MicroSeconds(200)));
    const SwitchRing switchRing = BuildSwitchRing(helper, n);
    const std::vector<std::string>& ring = switchRing.ringLinks;
    std::vector<Backlog> sources(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        sources[i].device = switchRing.hostDevices[i];
        sources[i].destination = (i + 3) % n;
        sources[i].count = 400;
        sources[i].bytes = 4096;
        sources[i].Start();
    }
    Simulator::Stop(MilliSeconds(20)); // only if the watchdog failed
    Simulator::Run();
    Ptr<CreditLinkWatchdog> watchdog = helper.GetWatchdog();
    ASSERT_TRUE(watchdog->HasFired());
    // One pause time (65535 quanta at 100 Gb/s: 335.5 us) is refreshed at its half, so
    // the fabric never moves again: found within two watchdog timeouts of locking up.
    EXPECT_LT(Simulator::Now(), MilliSeconds(2));
    for (const auto& name : ring)
    {
        EXPECT_NE(
            watchdog->GetReport().find("link " + name + " vc 0: head packet 4096 B paused by PFC"),
            std::string::npos)
            << name << " missing from:\n"
            << watchdog->GetReport();
    }
    EXPECT_EQ(TotalPfcDrops(NodeContainer(switchRing.hosts, switchRing.switches)), 0u);
}

// Thresholds that leave less headroom than the cable and two frames need are refused,
// naming the attribute.
TEST_F(PfcTest, ThresholdsThatDoNotFitTheBufferAreRefused)
{
    NodeContainer hosts(2);
    CreditLinkHelper helper;
    ConfigurePfc(helper);
    helper.SetFlowControlAttribute("XoffBytes", UintegerValue(60 * 1024));
    NetDeviceContainer link = helper.Install(hosts.Get(0), hosts.Get(1));
    Ptr<CreditLinkNetDevice> d = End(link, 1);
    const std::string error = d->GetFlowControl()->Validate(PeekPointer(d));
    EXPECT_NE(error.find("XoffBytes 61440"), std::string::npos) << error;
    // Headroom: 2 x 6250 B of cable (500 ns at 100 Gb/s) + 2 x 4096 + 84 = 20776 B.
    EXPECT_EQ(Pfc(d)->RequiredHeadroomBytes(PeekPointer(d)), 20776u);
    CreditLinkHelper small;
    ConfigurePfc(small);
    small.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(16 * 1024));
    NetDeviceContainer tiny = small.Install(hosts.Get(0), hosts.Get(1));
    const std::string tooSmall =
        End(tiny, 0)->GetFlowControl()->Validate(PeekPointer(End(tiny, 0)));
    EXPECT_NE(tooSmall.find("exceed ReceiveBufferBytes 16384"), std::string::npos) << tooSmall;
}
