/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Two nodes joined by one credit link: latency, throughput, credit-limited
// throughput, VC arbitration, backpressure and credit conservation.
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/credit-arbiter.h"
#include "ns3/credit-link-channel.h"
#include "ns3/credit-link-header.h"
#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/node-container.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <array>
#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

Ptr<Packet>
MakeLinkPacket(uint32_t destination, uint32_t vc, uint32_t totalBytes)
{
    Ptr<Packet> p = Create<Packet>(totalBytes - CreditLinkHeader::SIZE_BYTES);
    p->AddHeader(CreditLinkHeader(destination, static_cast<uint8_t>(vc)));
    return p;
}

// Offers `count` packets as fast as the device accepts them, refilling on TxReady.
struct Source
{
    Ptr<CreditLinkNetDevice> device;
    uint32_t vc{0};
    uint32_t bytes{0};
    uint32_t count{0};
    uint32_t sent{0};
    uint32_t refusals{0};

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
        while (sent < count)
        {
            if (!device->SendOnVc(MakeLinkPacket(0, vc, bytes), vc))
            {
                ++refusals;
                return;
            }
            ++sent;
        }
    }
};

struct UidLog
{
    std::vector<uint64_t> uids;
    std::vector<Time> times;

    void Rx(Ptr<const Packet> p, uint32_t)
    {
        uids.push_back(p->GetUid());
        times.push_back(Simulator::Now());
    }
};

struct RxLog
{
    std::vector<Time> times;
    std::array<uint64_t, 4> bytesPerVc{};
    uint64_t packets{0};
    uint64_t limit{~0ULL}; // count per-VC bytes only for the first `limit` packets

    void Rx(Ptr<const Packet> p, uint32_t vc)
    {
        times.push_back(Simulator::Now());
        if (packets++ < limit)
        {
            bytesPerVc[vc] += p->GetSize();
        }
    }
};

struct StallLog
{
    uint32_t begins{0};
    uint32_t ends{0};
    uint32_t longer{0}; // whole-ns frame times leave waits of a few ns inside a window
    Time total;

    void Begin(uint32_t)
    {
        ++begins;
    }

    void End(uint32_t, Time duration)
    {
        ++ends;
        longer += duration > NanoSeconds(100) ? 1 : 0;
        total += duration;
    }
};

void
ExpectCreditsRestored(const NetDeviceContainer& devices)
{
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        auto d = DynamicCast<CreditLinkNetDevice>(devices.Get(i));
        for (uint32_t vc = 0; vc < d->GetNumVcs(); ++vc)
        {
            EXPECT_EQ(d->GetCredits(vc), d->GetInitialCredits(vc))
                << d->GetLinkName() << " vc " << vc;
            EXPECT_EQ(d->GetReceiveOccupancy(vc), 0u) << d->GetLinkName() << " vc " << vc;
            EXPECT_EQ(d->GetQueueBytes(vc), 0u);
        }
    }
}

class CreditLinkTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }

    NetDeviceContainer Link(CreditLinkHelper& helper)
    {
        nodes.Create(2);
        return helper.Install(nodes);
    }

    NodeContainer nodes;
};

} // namespace

// EDR-like: 103.125 Gb/s signalling x 64/66 = 100 Gb/s of data; 1224 B packet +
// 26 B overhead = 1250 wire bytes = 100 ns; + 500 ns propagation = 600 ns, exact.
TEST_F(CreditLinkTest, SinglePacketLatencyIsSerialisationPlusPropagation)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("DataRate", DataRateValue(DataRate("103.125Gbps")));
    helper.SetDeviceAttribute("EncodingEfficiency", DoubleValue(64.0 / 66.0));
    helper.SetDeviceAttribute("OverheadBytes", UintegerValue(26));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(500)));
    NetDeviceContainer devs = Link(helper);
    auto tx = DynamicCast<CreditLinkNetDevice>(devs.Get(0));
    auto rx = DynamicCast<CreditLinkNetDevice>(devs.Get(1));
    RxLog log;
    rx->TraceConnectWithoutContext("Rx", MakeCallback(&RxLog::Rx, &log));
    Simulator::Schedule(NanoSeconds(1000), [tx]() { tx->SendOnVc(MakeLinkPacket(1, 0, 1224), 0); });
    Simulator::Run();
    ASSERT_EQ(log.times.size(), 1u);
    EXPECT_EQ(log.times[0] - NanoSeconds(1000), NanoSeconds(600)); // exact to the ns
    ExpectCreditsRestored(devs);
}

// A long wire holds many frames at once: 1224 B + 26 B overhead at 100 Gb/s of data = 100 ns
// each, 2 us of propagation, so 20 packets sent back to back are all on the wire together
// (more than the channel keeps inline) and arrive in order, packet i at 100 (i + 1) + 2000 ns,
// exact.  A second burst after the wire emptied arrives the same way.
TEST_F(CreditLinkTest, ManyFramesInFlightArriveInOrderAtTheirTimes)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("DataRate", DataRateValue(DataRate("103.125Gbps")));
    helper.SetDeviceAttribute("EncodingEfficiency", DoubleValue(64.0 / 66.0));
    helper.SetDeviceAttribute("OverheadBytes", UintegerValue(26));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(256 * 1024));
    helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(64 * 1024));
    helper.SetChannelAttribute("Delay", TimeValue(MicroSeconds(2)));
    NetDeviceContainer devs = Link(helper);
    auto tx = DynamicCast<CreditLinkNetDevice>(devs.Get(0));
    std::vector<uint64_t> sent;
    UidLog log;
    devs.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&UidLog::Rx, &log));
    size_t maxInFlight = 0;
    auto channel = DynamicCast<CreditLinkChannel>(tx->GetChannel());
    for (Time start : {NanoSeconds(1000), NanoSeconds(10000)})
    {
        Simulator::Schedule(start, [tx, &sent]() {
            for (int i = 0; i < 20; ++i)
            {
                Ptr<Packet> p = MakeLinkPacket(1, 0, 1224);
                sent.push_back(p->GetUid());
                ASSERT_TRUE(tx->SendOnVc(p, 0));
            }
        });
        Simulator::Schedule(start + NanoSeconds(1950), [&]() {
            maxInFlight = std::max(maxInFlight, channel->GetFramesInFlight(PeekPointer(tx)).size());
        });
    }
    Simulator::Run();
    ASSERT_EQ(log.uids.size(), 40u);
    EXPECT_EQ(log.uids, sent);
    for (uint32_t i = 0; i < 40; ++i)
    {
        const Time start = NanoSeconds(i < 20 ? 1000 : 10000);
        EXPECT_EQ(log.times[i] - start, NanoSeconds(100 * (i % 20 + 1) + 2000)) << "packet " << i;
    }
    EXPECT_EQ(maxInFlight, 20u); // 1950 ns into a burst all 20 have started, none arrived
    ExpectCreditsRestored(devs);
}

// Receive buffer (256 KiB) far above the bandwidth-delay product: the link is
// limited by its rate only.  Goodput = 100 Gb/s x 4096 / (4096 + 30).
TEST_F(CreditLinkTest, LongTransferRunsAtRateTimesPayloadOverWireBytes)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("DataRate", DataRateValue(DataRate("103.125Gbps")));
    helper.SetDeviceAttribute("EncodingEfficiency", DoubleValue(64.0 / 66.0));
    helper.SetDeviceAttribute("OverheadBytes", UintegerValue(30));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(256 * 1024));
    helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(64 * 1024));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(100)));
    NetDeviceContainer devs = Link(helper);
    Source src{DynamicCast<CreditLinkNetDevice>(devs.Get(0)), 0, 4096, 5000};
    RxLog log;
    devs.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&RxLog::Rx, &log));
    src.Start();
    Simulator::Run();
    ASSERT_EQ(log.times.size(), 5000u); // every packet, none dropped
    EXPECT_GT(src.refusals, 0u);        // the bounded queue pushed back instead of dropping
    const double seconds = (log.times.back() - log.times.front()).GetSeconds();
    const double goodputBps = 4999.0 * 4096 * 8 / seconds;
    const double expectedBps = 100e9 * 4096.0 / 4126.0;
    EXPECT_NEAR(goodputBps / expectedBps, 1.0, 0.005); // within 0.5%
    ExpectCreditsRestored(devs);
}

// Buffer of 4 packets (16 KiB) < bandwidth-delay product: each window waits for
// the first packet's credits.  Credit round trip = ser(4096 B) + delay + ser(6 B
// flow-control frame) + delay = 327.68 + 1000 + 0.48 + 1000 ns; throughput =
// 16384 B / 2328.16 ns = 56.3 Gb/s.
TEST_F(CreditLinkTest, SmallBufferLimitsThroughputToBufferOverCreditRoundTrip)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gbps")));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(16384));
    helper.SetChannelAttribute("Delay", TimeValue(MicroSeconds(1)));
    NetDeviceContainer devs = Link(helper);
    Source src{DynamicCast<CreditLinkNetDevice>(devs.Get(0)), 0, 4096, 2000};
    RxLog log;
    devs.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&RxLog::Rx, &log));
    StallLog stalls;
    devs.Get(0)->TraceConnectWithoutContext("CreditStallBegin",
                                            MakeCallback(&StallLog::Begin, &stalls));
    devs.Get(0)->TraceConnectWithoutContext("CreditStallEnd",
                                            MakeCallback(&StallLog::End, &stalls));
    src.Start();
    Simulator::Run();
    ASSERT_EQ(log.times.size(), 2000u);
    // One real stall per 4-packet window after the first: 499, each ended.
    EXPECT_EQ(stalls.begins, stalls.ends);
    EXPECT_EQ(stalls.longer, 499u);
    // Per-VC stall traces and the link counter measure the same waits (one VC).
    EXPECT_EQ(stalls.total,
              DynamicCast<CreditLinkNetDevice>(devs.Get(0))->GetCounters().creditStallTime);
    // Whole windows only: packet 4 and packet 1996 both start a window.
    const double seconds = (log.times[1996] - log.times[4]).GetSeconds();
    const double throughputBps = 1992.0 * 4096 * 8 / seconds;
    const double rttSeconds = (327.68 + 1000 + 0.48 + 1000) * 1e-9;
    const double expectedBps = 16384.0 * 8 / rttSeconds;
    EXPECT_NEAR(throughputBps / expectedBps, 1.0, 0.02); // within 2%
    auto sender = DynamicCast<CreditLinkNetDevice>(devs.Get(0));
    // Stalled for credits most of the time: 1 - 4 x 327.68 / 2328.16 = 44%.
    EXPECT_NEAR(sender->GetCounters().creditStallTime.GetSeconds() / seconds, 0.437, 0.02);
    ExpectCreditsRestored(devs);
}

// Weighted table "0:192,1:64" with 4 KiB packets (64 credit-units each): VC0
// sends 3 packets per VC1 packet while both are backlogged: 75 % / 25 %.
TEST_F(CreditLinkTest, WeightedTableSharesLinkByWeight)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("NumVcs", UintegerValue(2));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(64 * 1024));
    helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(32 * 1024));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(200)));
    helper.SetArbiter("ns3::WeightedTableArbiter");
    helper.SetArbiterAttribute("LowTable", StringValue("0:192,1:64"));
    NetDeviceContainer devs = Link(helper);
    auto tx = DynamicCast<CreditLinkNetDevice>(devs.Get(0));
    Source vc0{tx, 0, 4096, 3000};
    Source vc1{tx, 1, 4096, 3000};
    RxLog log;
    log.limit = 2000; // both VCs still backlogged: VC0 alone needs 2000 x 0.75 < 3000
    devs.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&RxLog::Rx, &log));

    // One TxReady callback per device: pump both sources from it.
    struct Both
    {
        Source* a;
        Source* b;

        void Ready(Ptr<CreditLinkNetDevice>, uint32_t)
        {
            a->Pump();
            b->Pump();
        }
    } both{&vc0, &vc1};

    vc0.Pump();
    vc1.Pump();
    tx->SetTxReadyCallback(MakeCallback(&Both::Ready, &both));
    Simulator::Run();
    const double total = static_cast<double>(log.bytesPerVc[0] + log.bytesPerVc[1]);
    EXPECT_NEAR(log.bytesPerVc[0] / total, 0.75, 0.01); // within 1%
    EXPECT_NEAR(log.bytesPerVc[1] / total, 0.25, 0.01);
    ExpectCreditsRestored(devs);
}

// Strict priority: while VC0 is backlogged VC1 gets nothing.
TEST_F(CreditLinkTest, StrictPriorityServesLowestVcFirst)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("NumVcs", UintegerValue(2));
    helper.SetArbiter("ns3::StrictPriorityArbiter");
    NetDeviceContainer devs = Link(helper);
    auto tx = DynamicCast<CreditLinkNetDevice>(devs.Get(0));
    Source vc1{tx, 1, 1024, 100};
    Source vc0{tx, 0, 1024, 100};
    RxLog log;
    log.limit = 101; // the first packet (VC1) starts before VC0 has data
    devs.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&RxLog::Rx, &log));
    vc1.Pump();
    vc0.Pump();
    Simulator::Run();
    EXPECT_EQ(log.bytesPerVc[0], 100u * 1024);
    EXPECT_EQ(log.bytesPerVc[1], 1u * 1024);
    ExpectCreditsRestored(devs);
}

namespace
{

struct VcOrder
{
    std::vector<uint32_t> vcs;

    void Rx(Ptr<const Packet>, uint32_t vc)
    {
        vcs.push_back(vc);
    }
};

// Two packets offered to an idle strict-priority link in the same instant, VC1's Send
// event first: \return the VCs in the order they arrived.
std::vector<uint32_t>
SameInstantSendOrder(bool instantEndDecisions)
{
    NodeContainer nodes(2);
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("NumVcs", UintegerValue(2));
    helper.SetDeviceAttribute("InstantEndDecisions", BooleanValue(instantEndDecisions));
    helper.SetArbiter("ns3::StrictPriorityArbiter");
    NetDeviceContainer devs = helper.Install(nodes);
    auto tx = DynamicCast<CreditLinkNetDevice>(devs.Get(0));
    VcOrder order;
    devs.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&VcOrder::Rx, &order));
    for (uint32_t vc : {1u, 0u})
    {
        Simulator::Schedule(NanoSeconds(10),
                            [tx, vc]() { tx->SendOnVc(MakeLinkPacket(1, vc, 1024), vc); });
    }
    Simulator::Run();
    ExpectCreditsRestored(devs);
    Simulator::Destroy();
    return order.vcs;
}

} // namespace

// Without InstantEndDecisions the first Send event of the instant takes the idle link; with
// it the device decides after every event of the instant, so the arbiter chooses (strict
// priority: VC0), whatever the events' order.
TEST_F(CreditLinkTest, InstantEndDecisionsLetTheArbiterChooseAmongSameInstantSends)
{
    EXPECT_EQ(SameInstantSendOrder(false), (std::vector<uint32_t>{1, 0}));
    EXPECT_EQ(SameInstantSendOrder(true), (std::vector<uint32_t>{0, 1}));
}

// Periodic credit updates coalesce: with a 2 us interval the receiver sends at
// most one flow-control frame per 2 us (each covering ~6 packets of 327.68 ns),
// yet all credits come back.
TEST_F(CreditLinkTest, PeriodicCreditUpdatesAreCoalesced)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("CreditUpdatePolicy",
                              EnumValue(CreditLinkNetDevice::CREDIT_UPDATE_PERIODIC));
    helper.SetDeviceAttribute("CreditUpdateInterval", TimeValue(MicroSeconds(2)));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(256 * 1024));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(100)));
    NetDeviceContainer devs = Link(helper);
    Source src{DynamicCast<CreditLinkNetDevice>(devs.Get(0)), 0, 4096, 1000};
    RxLog log;
    devs.Get(1)->TraceConnectWithoutContext("Rx", MakeCallback(&RxLog::Rx, &log));
    src.Start();
    Simulator::Run();
    ASSERT_EQ(log.times.size(), 1000u);
    auto rx = DynamicCast<CreditLinkNetDevice>(devs.Get(1));
    const double activeUs = log.times.back().GetSeconds() * 1e6;
    // Frames are >= 2 us apart and the last follows the final packet by < 2 us:
    // at most (activeUs + 2) / 2 + 1 of them.
    EXPECT_LE(rx->GetCounters().txFlowControlFrames, (activeUs + 2) / 2 + 1);
    EXPECT_LT(rx->GetCounters().txFlowControlFrames, 1000u / 5);
    ExpectCreditsRestored(devs);
}

namespace
{
struct HostRx
{
    uint64_t packets{0};
    Time last;

    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&)
    {
        ++packets;
        last = Simulator::Now();
        return true;
    }
};
} // namespace

// A host draining at 10 Gb/s paces a 100 Gb/s link to 10 Gb/s through credits.
TEST_F(CreditLinkTest, ReceiveDrainRatePacesTheSender)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(16384));
    helper.SetDeviceAttribute("ReceiveDrainRate", DataRateValue(DataRate("10Gbps")));
    NetDeviceContainer devs = Link(helper);
    HostRx host;
    devs.Get(1)->SetReceiveCallback(MakeCallback(&HostRx::Receive, &host));
    Source src{DynamicCast<CreditLinkNetDevice>(devs.Get(0)), 0, 4096, 500};
    src.Start();
    Simulator::Run();
    ASSERT_EQ(host.packets, 500u);
    // The first packet arrives after 0.33 us, then the host consumes 500 x 4096 B
    // at 10 Gb/s back to back (credits keep its buffer non-empty): 1638.4 us.  Within 0.1 %.
    EXPECT_NEAR(host.last.GetSeconds() * 1e6, 1638.4 + 0.33, 1638.4 * 0.001);
    ExpectCreditsRestored(devs);
}

namespace
{
struct ProtocolRx
{
    uint64_t packets{0};
    uint16_t protocol{0};
    uint64_t txBegins{0};
    uint32_t txVc{99};

    void Receive(Ptr<NetDevice>,
                 Ptr<const Packet>,
                 uint16_t proto,
                 const Address&,
                 const Address&,
                 NetDevice::PacketType)
    {
        ++packets;
        protocol = proto;
    }

    void TxBegin(Ptr<const Packet>, uint32_t vc)
    {
        ++txBegins;
        txVc = vc;
    }
};
} // namespace

// The device works with ns-3's node machinery: NetDevice::Send classifies the
// VC from the header, the node's protocol handler gets the header's protocol,
// and trace sources are reachable through Config paths.
TEST_F(CreditLinkTest, WorksWithNodeProtocolHandlersAndConfigPaths)
{
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("NumVcs", UintegerValue(2));
    NetDeviceContainer devs = Link(helper);
    ProtocolRx rx;
    nodes.Get(1)->RegisterProtocolHandler(MakeCallback(&ProtocolRx::Receive, &rx),
                                          0x88b5,
                                          devs.Get(1));
    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::CreditLinkNetDevice/TxBegin",
                                  MakeCallback(&ProtocolRx::TxBegin, &rx));
    Ptr<Packet> p = Create<Packet>(100);
    p->AddHeader(CreditLinkHeader(1, 1, 0x88b5));
    ASSERT_TRUE(devs.Get(0)->Send(p, devs.Get(1)->GetAddress(), 0x88b5));
    Simulator::Run();
    EXPECT_EQ(rx.packets, 1u);
    EXPECT_EQ(rx.protocol, 0x88b5);
    EXPECT_EQ(rx.txBegins, 1u); // the data packet; flow-control frames are not TxBegin
    EXPECT_EQ(rx.txVc, 1u);     // VC taken from the header by ClassifyVc
    auto tx = DynamicCast<CreditLinkNetDevice>(devs.Get(0));
    EXPECT_EQ(tx->GetCounters().txPackets, 1u);
    ExpectCreditsRestored(devs);
}
