/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Cut-through forwarding in CreditSwitch (and its NVSwitch / InfiniBand defaults):
// end-to-end latency against the analytical formulas, input/output rate mismatch,
// streaming throughput, credit return, conservation mid-flight, NVLS reduction tails
// and the scheduler events per packet-hop.
#include "ns3/credit-link-conservation.h"
#include "ns3/credit-link-header.h"
#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-switch.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/node-container.h"
#include "ns3/nvlink-gpu.h"
#include "ns3/nvlink-header.h"
#include "ns3/nvlink-helper.h"
#include "ns3/nvswitch-core.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

// 100 Gb/s: 4000 B = 320 ns, 125 B = 10 ns, 25 B = 2 ns, all exact (no clock rounding).
const DataRate kFast("100Gbps");
const DataRate kSlow("25Gbps");
constexpr uint32_t kPacketBytes = 4000;
constexpr uint32_t kHeadBytes = 125;
const Time kProp = NanoSeconds(50);
const Time kSwitch = NanoSeconds(100);

Ptr<Packet>
MakeLinkPacket(uint32_t destination)
{
    Ptr<Packet> p = Create<Packet>(kPacketBytes - CreditLinkHeader::SIZE_BYTES);
    p->AddHeader(CreditLinkHeader(destination, 0));
    return p;
}

Ptr<CreditLinkNetDevice>
Dev(const NetDeviceContainer& c, uint32_t i)
{
    return DynamicCast<CreditLinkNetDevice>(c.Get(i));
}

struct Arrivals
{
    std::vector<Time> times;

    void Rx(Ptr<const Packet>, uint32_t)
    {
        times.push_back(Simulator::Now());
    }
};

struct TxLog
{
    Time begin{Seconds(-1)};
    Time end{Seconds(-1)};

    void Begin(Ptr<const Packet>, uint32_t)
    {
        begin = Simulator::Now();
    }

    void End(Ptr<const Packet>, uint32_t)
    {
        end = Simulator::Now();
    }
};

// host 0 - h switches - host 1; every switch routes destination 1 to its downstream
// port.  \p rates: one per link (both directions), or empty for the helper's.
struct Chain
{
    NodeContainer nodes;
    std::vector<NetDeviceContainer> links;
    std::vector<Ptr<CreditSwitch>> switches;

    Ptr<CreditLinkNetDevice> Source() const
    {
        return Dev(links.front(), 0);
    }

    Ptr<CreditLinkNetDevice> Sink() const
    {
        return Dev(links.back(), 1);
    }
};

Chain
BuildChain(uint32_t h,
           const std::string& forwarding,
           CreditLinkHelper& helper,
           const std::vector<DataRate>& rates = {})
{
    Chain c;
    c.nodes.Create(h + 2);
    helper.SetChannelAttribute("Delay", TimeValue(kProp));
    helper.SetSwitchAttribute("TraversalLatency", TimeValue(kSwitch));
    helper.SetSwitchAttribute("Forwarding", StringValue(forwarding));
    helper.SetSwitchAttribute("CutThroughBytes", UintegerValue(kHeadBytes));
    for (uint32_t s = 1; s <= h; ++s)
    {
        c.switches.push_back(helper.InstallSwitch(c.nodes.Get(s)));
    }
    for (uint32_t i = 0; i <= h; ++i)
    {
        if (!rates.empty())
        {
            helper.SetDeviceAttribute("DataRate", DataRateValue(rates.at(i)));
        }
        c.links.push_back(helper.Install(c.nodes.Get(i), c.nodes.Get(i + 1)));
    }
    for (auto& sw : c.switches)
    {
        sw->SetRoute(1, {1}); // port 0 faces the source, port 1 the sink
    }
    return c;
}

class CutThroughTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

// Arrival of one packet sent at t = 0 through h switches.
Time
ChainLatency(uint32_t h, const std::string& forwarding)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("DataRate", DataRateValue(kFast));
    Chain c = BuildChain(h, forwarding, helper);
    Arrivals sink;
    c.Sink()->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &sink));
    c.Source()->SendOnVc(MakeLinkPacket(1), 0);
    Simulator::Run();
    Simulator::Destroy();
    EXPECT_EQ(sink.times.size(), 1u);
    return sink.times.empty() ? Seconds(-1) : sink.times[0];
}

} // namespace

// One packet of S = 4000 B through h = 3 switches, R = 100 Gb/s, H = 125 B, L = 100 ns,
// d = 50 ns.  Cut-through: S/R + h(H/R + L) + (h+1)d = 320 + 3 x 110 + 200 = 850 ns;
// store-and-forward: (h+1)S/R + hL + (h+1)d = 1280 + 300 + 200 = 1780 ns.  Exact.
TEST_F(CutThroughTest, ChainLatencyMatchesFormula)
{
    EXPECT_EQ(ChainLatency(3, "CutThrough").GetNanoSeconds(), 320 + 3 * (10 + 100) + 4 * 50);
    EXPECT_EQ(ChainLatency(3, "StoreAndForward").GetNanoSeconds(), 4 * 320 + 3 * 100 + 4 * 50);
    // The generic switch's default is store-and-forward.
    EXPECT_EQ(ChainLatency(3, "Default").GetNanoSeconds(), 4 * 320 + 3 * 100 + 4 * 50);
    EXPECT_EQ(ChainLatency(0, "CutThrough").GetNanoSeconds(), 320 + 50);
}

// host -(in)-> switch -(out)-> host, S = 4000 B, H = 125 B, L = 100 ns, d = 50 ns.
// Slow input (25 Gb/s: S 1280 ns, H 40 ns), fast output (100 Gb/s: S 320 ns): the
// output starts at H/Rin + d + L = 190 ns but cannot end before the tail is in
// (S/Rin + d = 1330 ns), so the sink has it at 1380 ns = S/Rin + 2d, not at
// 190 + 320 + 50 = 560 ns.  Fast input, slow output: the output's own serialisation
// bounds it, H/Rin + d + L + S/Rout + d = 10 + 50 + 100 + 1280 + 50 = 1490 ns.  The
// stretched transmission's busyTime is its own serialisation (320 ns).  Exact.
TEST_F(CutThroughTest, OutputFasterThanInputIsPacedByTheTail)
{
    for (const bool slowInput : {true, false})
    {
        CreditLinkHelper helper;
        const Chain c = BuildChain(1,
                                   "CutThrough",
                                   helper,
                                   {slowInput ? kSlow : kFast, slowInput ? kFast : kSlow});
        const NetDeviceContainer& in = c.links[0];
        const NetDeviceContainer& out = c.links[1];
        Arrivals sink;
        Dev(out, 1)->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &sink));
        TxLog outTx;
        Dev(out, 0)->TraceConnectWithoutContext("TxBegin", MakeCallback(&TxLog::Begin, &outTx));
        Dev(out, 0)->TraceConnectWithoutContext("TxEnd", MakeCallback(&TxLog::End, &outTx));
        Dev(in, 0)->SendOnVc(MakeLinkPacket(1), 0);
        Simulator::Run();
        ASSERT_EQ(sink.times.size(), 1u);
        if (slowInput)
        {
            EXPECT_EQ(outTx.begin.GetNanoSeconds(), 40 + 50 + 100);
            EXPECT_EQ(outTx.end.GetNanoSeconds(), 1280 + 50);
            EXPECT_EQ(sink.times[0].GetNanoSeconds(), 1280 + 2 * 50);
            EXPECT_EQ(Dev(out, 0)->GetCounters().busyTime.GetNanoSeconds(), 320);
        }
        else
        {
            EXPECT_EQ(outTx.begin.GetNanoSeconds(), 10 + 50 + 100);
            EXPECT_EQ(sink.times[0].GetNanoSeconds(), 10 + 50 + 100 + 1280 + 50);
            EXPECT_EQ(Dev(out, 0)->GetCounters().busyTime.GetNanoSeconds(), 1280);
        }
        Simulator::Destroy();
    }
}

// 200 packets of 4000 B through 3 switches at 100 Gb/s: after the first arrival the
// sink receives one packet per S/R = 320 ns in both modes (the pipeline runs at the
// link rate), so first-to-last spans 199 x 320 ns exactly; only the first arrival moves,
// by h(S - H)/R = 3 x 310 = 930 ns.  Event count: cut-through adds no event, so both
// runs take the same number (asserted equal).
TEST_F(CutThroughTest, StreamingThroughputAndEventsUnchanged)
{
    constexpr uint32_t kPackets = 200;
    Time first[2];
    Time span[2];
    uint64_t events[2];
    const char* modes[2] = {"StoreAndForward", "CutThrough"};
    for (uint32_t m = 0; m < 2; ++m)
    {
        CreditLinkHelper helper;
        helper.SetDeviceAttribute("DataRate", DataRateValue(kFast));
        helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(kPackets * kPacketBytes));
        Chain c = BuildChain(3, modes[m], helper);
        Arrivals sink;
        c.Sink()->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &sink));
        for (uint32_t p = 0; p < kPackets; ++p)
        {
            ASSERT_TRUE(c.Source()->SendOnVc(MakeLinkPacket(1), 0));
        }
        const uint64_t before = Simulator::GetEventCount();
        Simulator::Run();
        events[m] = Simulator::GetEventCount() - before;
        ASSERT_EQ(sink.times.size(), kPackets) << modes[m];
        first[m] = sink.times.front();
        span[m] = sink.times.back() - sink.times.front();
        CreditLinkConservation check;
        check.Add("test", c.nodes);
        EXPECT_TRUE(check.Check(true).Ok()) << check.Check(true).Describe();
        Simulator::Destroy();
    }
    EXPECT_EQ(span[0].GetNanoSeconds(), (kPackets - 1) * 320);
    EXPECT_EQ(span[1].GetNanoSeconds(), (kPackets - 1) * 320);
    EXPECT_EQ((first[0] - first[1]).GetNanoSeconds(), 3 * (320 - 10));
    EXPECT_EQ(events[1], events[0]);
}

// Both hosts stream 200 packets to each other through 3 switches, so flow-control frames
// share every wire with data.  A credit frame that ends as the next data frame to a
// cut-through switch starts rides with that frame's head (at most H/R late) instead of
// costing a delivery event of its own: the run takes no more events than store-and-forward.
// Every packet arrives, the first one h(S - H)/R = 930 ns earlier (exact), and the drained
// fabric conserves packets and credits.
TEST_F(CutThroughTest, TwoWayStreamingAddsNoEvents)
{
    constexpr uint32_t kPackets = 200;
    uint64_t events[2];
    Time first[2];
    const char* modes[2] = {"StoreAndForward", "CutThrough"};
    for (uint32_t m = 0; m < 2; ++m)
    {
        CreditLinkHelper helper;
        helper.SetDeviceAttribute("DataRate", DataRateValue(kFast));
        helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(kPackets * kPacketBytes));
        Chain c = BuildChain(3, modes[m], helper);
        for (auto& sw : c.switches)
        {
            sw->SetRoute(0, {0});
        }
        Arrivals atSink;
        Arrivals atSource;
        c.Sink()->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &atSink));
        c.Source()->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &atSource));
        for (uint32_t p = 0; p < kPackets; ++p)
        {
            ASSERT_TRUE(c.Source()->SendOnVc(MakeLinkPacket(1), 0));
            ASSERT_TRUE(c.Sink()->SendOnVc(MakeLinkPacket(0), 0));
        }
        const uint64_t before = Simulator::GetEventCount();
        Simulator::Run();
        events[m] = Simulator::GetEventCount() - before;
        ASSERT_EQ(atSink.times.size(), kPackets) << modes[m];
        ASSERT_EQ(atSource.times.size(), kPackets) << modes[m];
        first[m] = atSink.times.front();
        CreditLinkConservation check;
        check.Add("test", c.nodes);
        const CreditLinkConservationReport r = check.Check(true);
        EXPECT_TRUE(r.Ok()) << modes[m] << ": " << r.Describe();
        Simulator::Destroy();
    }
    EXPECT_EQ((first[0] - first[1]).GetNanoSeconds(), 3 * (320 - 10));
    EXPECT_LE(events[1], events[0]);
}

// host -> switch -> host, one packet.  The switch releases the input buffer when the
// output starts, at H/R + d + L = 160 ns cut-through (S/R + d + L = 470 ns
// store-and-forward), and the 25-byte flow-control frame (2 ns) brings the credits
// back d later: at 212 ns resp. 522 ns the source holds all its credits again, 1 ns
// earlier it does not.  Same loop in both modes, only its start moved.  Exact.
TEST_F(CutThroughTest, CreditsReturnWhenTheOutputStarts)
{
    for (const bool cutThrough : {true, false})
    {
        CreditLinkHelper helper;
        helper.SetDeviceAttribute("DataRate", DataRateValue(kFast));
        helper.SetDeviceAttribute("FlowControlFrameBytes", UintegerValue(25));
        Chain c = BuildChain(1, cutThrough ? "CutThrough" : "StoreAndForward", helper);
        Ptr<CreditLinkNetDevice> src = c.Source();
        src->SendOnVc(MakeLinkPacket(1), 0);
        const uint32_t initial = src->GetInitialCredits(0);
        const uint32_t cost = src->CreditsFor(kPacketBytes);
        const Time back = NanoSeconds((cutThrough ? 10 : 320) + 50 + 100 + 2 + 50);
        uint32_t before = 0;
        uint32_t at = 0;
        // The second check is scheduled after the credit frame's delivery, so at the
        // same instant it runs after it.
        Simulator::Schedule(back - NanoSeconds(1), [&]() {
            before = src->GetCredits(0);
            Simulator::Schedule(NanoSeconds(1), [&]() { at = src->GetCredits(0); });
        });
        Simulator::Run();
        EXPECT_EQ(before, initial - cost) << (cutThrough ? "cut-through" : "store-and-forward");
        EXPECT_EQ(at, initial) << (cutThrough ? "cut-through" : "store-and-forward");
        Simulator::Destroy();
    }
}

// Mid-flight conservation: slow input (25 Gb/s), fast output, 20 packets back to back.
// At 700 ns the output is sending packet 1 whose tail is still on the input wire; the
// balance (sent = received + on the wire, credits, switch buffer) must hold then and
// at every 100 ns after, and the drained fabric must be idle with all credits back.
TEST_F(CutThroughTest, ConservationHoldsWhileTailsAreInFlight)
{
    CreditLinkHelper helper;
    const Chain c = BuildChain(1, "CutThrough", helper, {kSlow, kFast});
    const NetDeviceContainer& in = c.links[0];
    const NetDeviceContainer& out = c.links[1];
    for (uint32_t p = 0; p < 20; ++p)
    {
        ASSERT_TRUE(Dev(in, 0)->SendOnVc(MakeLinkPacket(1), 0));
    }
    CreditLinkConservation check;
    check.Add("test", c.nodes);
    uint32_t checks = 0;
    uint32_t sawStretched = 0;
    for (uint32_t t = 700; t < 26000; t += 100)
    {
        Simulator::Schedule(NanoSeconds(t), [&]() {
            ++checks;
            sawStretched += Dev(out, 0)->IsSendingData() && Dev(in, 0)->IsSendingData();
            const CreditLinkConservationReport r = check.Check(false);
            EXPECT_TRUE(r.Ok()) << "at " << Simulator::Now() << ": " << r.Describe();
        });
    }
    Simulator::Run();
    EXPECT_GT(checks, 200u);
    EXPECT_GT(sawStretched, 0u);
    EXPECT_EQ(Dev(out, 1)->GetCounters().rxPackets, 20u);
    const CreditLinkConservationReport end = check.Check(true);
    EXPECT_TRUE(end.Ok()) << end.Describe();
}

// NVLS on an NvSwitch (cut-through by default, 16-byte NvLinkHeader): GPU 0 on a
// 100 Gb/s link, GPU 1 on 25 Gb/s, both send one 4000-B contribution of (group 5,
// chunk 0) at t = 0.  The chunk is complete when GPU 1's head is in (16 B at 25 Gb/s =
// 5.12 ns -> 6 ns, frame times round up, + d = 56 ns); both outputs start at 156 ns.
// The reduced chunk's tail is GPU 1's, 1280 + 50 = 1330 ns, so GPU 0 gets it at
// 1330 + 50 = 1380 ns (not at 156 + 320 + 50 = 526 ns, as its own contribution's tail
// would allow), GPU 1 at 156 + 1280 + 50 = 1486 ns (its output is the slower).  Exact.
TEST_F(CutThroughTest, NvlsReducedChunkEndsWithTheLastContribution)
{
    NodeContainer gpus(2);
    NodeContainer swNode(1);
    Ptr<NvSwitch> nvSwitch = CreateObject<NvSwitch>();
    nvSwitch->SetAttribute("TraversalLatency", TimeValue(kSwitch));
    swNode.Get(0)->AggregateObject(nvSwitch);
    EXPECT_EQ(nvSwitch->GetCutThroughBytes(), NvLinkHeader::SIZE_BYTES);
    CreditLinkHelper helper;
    helper.SetChannelAttribute("Delay", TimeValue(kProp));
    std::vector<NetDeviceContainer> links;
    for (uint32_t g = 0; g < 2; ++g)
    {
        helper.SetDeviceAttribute("DataRate", DataRateValue(g == 0 ? kFast : kSlow));
        links.push_back(helper.Install(gpus.Get(g), swNode.Get(0)));
        nvSwitch->SetRoute(g, {g});
    }
    nvSwitch->RegisterNvlsGroup(5, {0, 1});
    std::vector<Arrivals> got(2);
    for (uint32_t g = 0; g < 2; ++g)
    {
        Dev(links[g], 0)->TraceConnectWithoutContext("Rx", MakeCallback(&Arrivals::Rx, &got[g]));
        NvLinkHeader h;
        h.type = NvLinkHeader::NVLS_REDUCE;
        h.source = static_cast<uint16_t>(g);
        h.tag = 5;
        h.count = 0;
        Ptr<Packet> p = Create<Packet>(kPacketBytes - NvLinkHeader::SIZE_BYTES);
        p->AddHeader(h);
        Dev(links[g], 0)->SendOnVc(p, 0);
    }
    Simulator::Run();
    ASSERT_EQ(got[0].times.size(), 1u);
    ASSERT_EQ(got[1].times.size(), 1u);
    EXPECT_EQ(got[0].times[0].GetNanoSeconds(), 1280 + 2 * 50);
    EXPECT_EQ(got[1].times[0].GetNanoSeconds(), 6 + 50 + 100 + 1280 + 50);
    EXPECT_EQ(nvSwitch->GetNvlsReducedChunks(), 1u);
}

// The NVLink helper's switches forward cut-through: a 4 KiB message (one burst) from
// GPU 0 to GPU 1 on a dgx-h100 arrives after the burst's serialisation on its plane's
// bundle once, + the 16-byte header's + the NVSwitch TraversalLatency + 2 cables;
// store-and-forward adds the burst's serialisation again (34.8 ns on 5 links).
// Exact figures from the bundle's data rate; tolerance 2 ns (each serialisation is
// whole ns, within 1 ns of its exact time).
TEST_F(CutThroughTest, NvLinkHelperSwitchesForwardCutThrough)
{
    for (const bool storeAndForward : {false, true})
    {
        NvLinkHelper helper;
        helper.SetPreset("dgx-h100");
        if (storeAndForward)
        {
            helper.SetSwitchAttribute("Forwarding", StringValue("StoreAndForward"));
        }
        NodeContainer gpus(8);
        helper.Install(gpus);
        EXPECT_EQ(helper.GetSwitch(0)->GetCutThroughBytes(),
                  storeAndForward ? 0u : NvLinkHeader::SIZE_BYTES);
        std::vector<Arrivals> planes(helper.GetNSwitches());
        for (uint32_t s = 0; s < planes.size(); ++s)
        {
            helper.GetGpuDevice(1, s)->TraceConnectWithoutContext(
                "Rx",
                MakeCallback(&Arrivals::Rx, &planes[s]));
        }
        // One 4 KiB message is one packet (the plane's Granularity).
        Ptr<GpuTransport> transport = helper.InstallTransport();
        transport->SendMessage(0,
                               1,
                               4096,
                               GpuTransport::DoneCallback(),
                               GpuTransport::DoneCallback());
        Simulator::Run();
        uint32_t plane = 0;
        uint32_t arrivals = 0;
        for (uint32_t s = 0; s < planes.size(); ++s)
        {
            arrivals += planes[s].times.size();
            plane = planes[s].times.empty() ? plane : s;
        }
        ASSERT_EQ(arrivals, 1u);
        const double bps = helper.GetGpuDevice(0, plane)->GetClock().GetDataRateBps();
        const uint32_t wireBytes = 4096 + 16 * 16; // 16 real packets of 256 B, 16 B each
        const double burstNs = wireBytes * 8e9 / bps;
        const double headNs = NvLinkHeader::SIZE_BYTES * 8e9 / bps;
        TimeValue cable;
        helper.GetGpuDevice(0, plane)->GetChannel()->GetAttribute("Delay", cable);
        TimeValue latency;
        helper.GetSwitch(plane)->GetAttribute("TraversalLatency", latency);
        const double expected = burstNs + (storeAndForward ? burstNs : headNs) +
                                latency.Get().GetNanoSeconds() + 2 * cable.Get().GetNanoSeconds();
        EXPECT_NEAR(planes[plane].times[0].GetNanoSeconds(), expected, 2.0)
            << (storeAndForward ? "store-and-forward" : "cut-through");
        Simulator::Destroy();
    }
}
