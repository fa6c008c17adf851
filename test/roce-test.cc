/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// RoCEv2 on lossless Ethernet: packet format, ECMP by five-tuple hash (two flows that
// hash onto one uplink get half each) against per-packet spraying and adaptive routing
// (line rate), DCQCN bringing N flows into one bottleneck to their fair share.
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/infiniband-crc.h"
#include "ns3/node-container.h"
#include "ns3/priority-flow-control.h"
#include "ns3/roce-helper.h"
#include "ns3/roce-shared-buffer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <numeric>
#include <sstream>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

Ptr<RoceNetDevice>
Nic(const NetDeviceContainer& c, uint32_t i)
{
    return DynamicCast<RoceNetDevice>(c.Get(i));
}

Ptr<PriorityFlowControl>
Pfc(Ptr<CreditLinkNetDevice> d)
{
    return DynamicCast<PriorityFlowControl>(d->GetFlowControl());
}

// A backlogged QP: keeps offering payloads of `bytes` until `count` were taken.
struct QpSource
{
    Ptr<RoceNetDevice> nic;
    uint32_t dst{0};
    uint32_t qpKey{0};
    uint32_t count{0};
    uint32_t bytes{4096};
    uint32_t taken{0};

    void Pump()
    {
        while (taken < count && nic->SendPacket(Create<Packet>(bytes), dst, qpKey))
        {
            ++taken;
        }
    }
};

// All sources of one NIC, refilled when the NIC has room again.
struct NicSources
{
    std::vector<QpSource*> sources;

    void Ready(Ptr<RoceNetDevice>)
    {
        for (auto* s : sources)
        {
            s->Pump();
        }
    }
};

// Payload bytes per source host, and in a time window.
struct Receiver
{
    std::vector<uint64_t> bytes;
    std::vector<uint64_t> windowBytes;
    std::vector<Time> first;
    std::vector<Time> last;
    Time from;
    Time to{Time::Max()};

    explicit Receiver(uint32_t hosts)
        : bytes(hosts, 0),
          windowBytes(hosts, 0),
          first(hosts, Seconds(-1)),
          last(hosts)
    {
    }

    void Rx(uint32_t src, Ptr<Packet> p)
    {
        bytes[src] += p->GetSize();
        const Time now = Simulator::Now();
        if (first[src].IsNegative())
        {
            first[src] = now;
        }
        last[src] = now;
        if (now >= from && now < to)
        {
            windowBytes[src] += p->GetSize();
        }
    }

    double Rate_bps(uint32_t src) const
    {
        return 8.0 * bytes[src] / (last[src] - first[src]).GetSeconds();
    }
};

void
Common(RoceHelper& roce)
{
    roce.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gbps")));
    roce.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(256 * 1024));
    roce.SetDeviceAttribute("MaxBurstPackets", UintegerValue(1));
    roce.SetChannelAttribute("Delay", TimeValue(NanoSeconds(500)));
    roce.SetSwitchAttribute("TraversalLatency", TimeValue(NanoSeconds(300)));
}

// Payload share of the wire for 4096-byte packets: 4096 / (4096 + 62 + 20).
constexpr double kGoodput = 4096.0 / (4096 + 62 + 20);

class RoceTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

// H0 -> H2 and H1 -> H3 across two leaves joined by two uplinks.  Returns each flow's
// rate in bits/s and the packets each uplink carried.
struct TwoFlows
{
    double rate0_bps;
    double rate1_bps;
    uint64_t uplink0;
    uint64_t uplink1;
};

TwoFlows
RunTwoFlows(RoceSwitch::EcmpMode mode, bool collide)
{
    RoceHelper roce;
    Common(roce);
    roce.SetSwitchAttribute("EcmpMode", EnumValue(mode));
    NodeContainer hosts(4);
    NodeContainer leaves(2);
    Ptr<RoceSwitch> l0 = roce.InstallSwitch(leaves.Get(0));
    Ptr<RoceSwitch> l1 = roce.InstallSwitch(leaves.Get(1));
    std::vector<NetDeviceContainer> h;
    for (uint32_t i = 0; i < 4; ++i)
    {
        h.push_back(roce.Connect(hosts.Get(i), leaves.Get(i < 2 ? 0 : 1)));
        roce.AddHost(Nic(h[i], 0), i);
    }
    NetDeviceContainer up0 = roce.Connect(leaves.Get(0), leaves.Get(1));
    NetDeviceContainer up1 = roce.Connect(leaves.Get(0), leaves.Get(1));
    roce.PopulateRoutes(leaves);
    EXPECT_EQ(l0->GetRoute(2).size(), 2u); // the ECMP group: both uplinks
    // Pick QP keys whose five-tuples hash onto the same (or different) uplinks at L0.
    const std::vector<uint32_t>& group = l0->GetRoute(2);
    auto uplinkOf = [&](uint32_t src, uint32_t dst, uint32_t key) {
        RoceFlowKey t;
        t.srcIp = RoceHostAddress(src).Get();
        t.dstIp = RoceHostAddress(dst).Get();
        t.protocol = 17;
        t.srcPort = Nic(h[src], 0)->GetUdpSourcePort(dst, key);
        t.dstPort = RoceFraming::UDP_PORT;
        return group[RoceFiveTupleHash(t, leaves.Get(0)->GetId()) % group.size()];
    };
    const uint32_t first = uplinkOf(0, 2, 0);
    uint32_t key1 = 0;
    while ((uplinkOf(1, 3, key1) == first) != collide)
    {
        ++key1;
    }
    const uint32_t packets = 3000;
    QpSource a{Nic(h[0], 0), 2, 0, packets};
    QpSource b{Nic(h[1], 0), 3, key1, packets};
    NicSources na{{&a}};
    NicSources nb{{&b}};
    a.nic->SetPacketTxReadyCallback(MakeCallback(&NicSources::Ready, &na));
    b.nic->SetPacketTxReadyCallback(MakeCallback(&NicSources::Ready, &nb));
    Receiver rx(4);
    Nic(h[2], 0)->SetPacketReceivedCallback(MakeCallback(&Receiver::Rx, &rx));
    Nic(h[3], 0)->SetPacketReceivedCallback(MakeCallback(&Receiver::Rx, &rx));
    a.Pump();
    b.Pump();
    Simulator::Run();
    EXPECT_EQ(rx.bytes[0], uint64_t{packets} * 4096);
    EXPECT_EQ(rx.bytes[1], uint64_t{packets} * 4096);
    CreditLinkConservation check;
    check.Add("roce", NodeContainer(hosts, leaves));
    const CreditLinkConservationReport report = check.Check(true);
    EXPECT_TRUE(report.Ok()) << report.Describe();
    TwoFlows r{rx.Rate_bps(0),
               rx.Rate_bps(1),
               DynamicCast<CreditLinkNetDevice>(up0.Get(0))->GetCounters().txPackets,
               DynamicCast<CreditLinkNetDevice>(up1.Get(0))->GetCounters().txPackets};
    Simulator::Destroy();
    return r;
}

} // namespace

// A RoCEv2 packet is Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4 + FCS 4,
// to UDP port 4791, and its ICRC is the IBA Annex A17 one.
TEST_F(RoceTest, PacketIsEthernetIpv4UdpBthWithIcrc)
{
    InfinibandBth bth;
    bth.SetOpcode(InfinibandBth::RC_SEND_ONLY);
    bth.SetDestQp(0x123);
    bth.SetPsn(7);
    Ptr<Packet> p =
        RoceBuildPacket(Create<Packet>(1000), 3, 9, 0xC123, 26, RoceFraming::ECT0, bth, true);
    EXPECT_EQ(p->GetSize(), 14u + 20 + 8 + 12 + 1000 + 4 + 4);
    RoceFlowKey key;
    ASSERT_TRUE(RocePeekFlow(p, key));
    EXPECT_EQ(key.dstPort, 4791);
    EXPECT_EQ(key.srcPort, 0xC123);
    EXPECT_EQ(RoceHostOf(key.srcIp), 3u);
    EXPECT_EQ(RoceHostOf(key.dstIp), 9u);
    EXPECT_EQ(key.ecn, RoceFraming::ECT0);
    // The ICRC does not cover the ECN bits a switch rewrites (TOS is masked).
    std::vector<uint8_t> before(p->GetSize());
    p->CopyData(before.data(), before.size());
    RoceMarkCe(p);
    std::vector<uint8_t> after(p->GetSize());
    p->CopyData(after.data(), after.size());
    const size_t covered = after.size() - 14 - 8; // IPv4 .. payload
    EXPECT_NE(before[15], after[15]);
    EXPECT_EQ(InfinibandIcrc::ComputeRoceV2(before.data() + 14, covered),
              InfinibandIcrc::ComputeRoceV2(after.data() + 14, covered));
    RoceStrip(p, key, bth);
    EXPECT_EQ(p->GetSize(), 1000u);
    EXPECT_EQ(key.ecn, RoceFraming::CE);
    EXPECT_EQ(bth.GetDestQp(), 0x123u);
}

// Two flows whose five-tuples hash onto one of two uplinks share it: R/2 each (5 %), the
// other uplink idle.  Spraying packets over both uplinks, or adaptive routing, gives each
// flow its own line rate again (5 %).
TEST_F(RoceTest, HashCollisionHalvesTwoFlowsSprayingRestoresLineRate)
{
    const double line_bps = 100e9 * kGoodput;
    const TwoFlows hashed = RunTwoFlows(RoceSwitch::ECMP_HASH, true);
    EXPECT_TRUE(hashed.uplink0 == 0 || hashed.uplink1 == 0); // one uplink carried both
    EXPECT_NEAR(hashed.rate0_bps / (line_bps / 2), 1.0, 0.05);
    EXPECT_NEAR(hashed.rate1_bps / (line_bps / 2), 1.0, 0.05);
    const TwoFlows apart = RunTwoFlows(RoceSwitch::ECMP_HASH, false);
    EXPECT_NEAR(apart.rate0_bps / line_bps, 1.0, 0.05);
    EXPECT_NEAR(apart.rate1_bps / line_bps, 1.0, 0.05);
    const TwoFlows sprayed = RunTwoFlows(RoceSwitch::ECMP_SPRAY, true);
    EXPECT_NEAR(sprayed.rate0_bps / line_bps, 1.0, 0.05);
    EXPECT_NEAR(sprayed.rate1_bps / line_bps, 1.0, 0.05);
    EXPECT_NEAR(static_cast<double>(sprayed.uplink0) / sprayed.uplink1, 1.0, 0.01);
    const TwoFlows adaptive = RunTwoFlows(RoceSwitch::ECMP_ADAPTIVE, true);
    EXPECT_NEAR(adaptive.rate0_bps / line_bps, 1.0, 0.05);
    EXPECT_NEAR(adaptive.rate1_bps / line_bps, 1.0, 0.05);
}

// N senders into one 100 Gb/s receiver port; the first starts alone, the others 1 ms
// later, all at line rate.  ECN marks at the bottleneck, CNPs cut the rates (DCQCN), and
// after convergence each flow gets R/N: from 10 to 20 ms every flow's bytes are within
// 10 % of a fair share (measured: 6.5 % at most), and the bottleneck stays above 85 %
// utilised (measured 89 %: DCQCN's cuts leave the queue empty part of the time).
TEST_F(RoceTest, DcqcnConvergesFlowsToFairShare)
{
    const uint32_t n = 4;
    RoceHelper roce;
    Common(roce);
    roce.SetSwitchAttribute("EcnEnabled", BooleanValue(true));
    roce.SetCongestionControl("ns3::RoceDcqcn");
    NodeContainer hosts(n + 1);
    NodeContainer sw(1);
    roce.InstallSwitch(sw.Get(0))->AssignStreams(1); // the marking decisions' stream
    std::vector<NetDeviceContainer> links;
    for (uint32_t i = 0; i <= n; ++i)
    {
        links.push_back(roce.Connect(hosts.Get(i), sw.Get(0)));
        roce.AddHost(Nic(links[i], 0), i);
    }
    roce.PopulateRoutes(sw);
    const Time start = MilliSeconds(1);
    const Time from = MilliSeconds(10);
    const Time to = MilliSeconds(20);
    std::vector<QpSource> sources(n);
    std::vector<NicSources> pumps(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        sources[i] = QpSource{Nic(links[i], 0), n, 0, 1000000};
        pumps[i].sources = {&sources[i]};
        sources[i].nic->SetPacketTxReadyCallback(MakeCallback(&NicSources::Ready, &pumps[i]));
        Simulator::Schedule(i == 0 ? Time(0) : start, &QpSource::Pump, &sources[i]);
    }
    Receiver rx(n + 1);
    rx.from = from;
    rx.to = to;
    Nic(links[n], 0)->SetPacketReceivedCallback(MakeCallback(&Receiver::Rx, &rx));
    Simulator::Stop(to);
    Simulator::Run();

    const double total = std::accumulate(rx.windowBytes.begin(), rx.windowBytes.end(), 0.0);
    const double window_s = (to - from).GetSeconds();
    EXPECT_GT(8 * total / window_s, 0.85 * 100e9 * kGoodput); // bottleneck utilised
    for (uint32_t i = 0; i < n; ++i)
    {
        EXPECT_NEAR(rx.windowBytes[i] / (total / n), 1.0, 0.10) << "flow " << i;
        auto cc = DynamicCast<RoceDcqcn>(sources[i].nic->GetCongestionControl());
        EXPECT_GT(cc->GetCnpsReceived(), 0u) << "flow " << i;
    }
    EXPECT_GT(Nic(links[n], 0)->GetRoceCounters().cnpsSent, 0u);
}

namespace
{

// N senders at 100 Gb/s into one receiver behind a 50 Gb/s link, through a switch whose
// ingress queues share one buffer of S bytes with dynamic thresholds (alpha 1).  Returns
// the peak occupancy of each sender's ingress queue.
std::vector<uint64_t>
RunSharedBuffer(uint32_t n, uint64_t sharedBytes, uint64_t* drops)
{
    RoceHelper roce;
    Common(roce);
    roce.SetSharedBuffer(sharedBytes, 1.0);
    NodeContainer hosts(n + 1);
    NodeContainer sw(1);
    roce.InstallSwitch(sw.Get(0));
    std::vector<NetDeviceContainer> links;
    for (uint32_t i = 0; i <= n; ++i)
    {
        if (i == n)
        {
            roce.SetDeviceAttribute("DataRate", DataRateValue(DataRate("50Gbps")));
        }
        links.push_back(roce.Connect(hosts.Get(i), sw.Get(0)));
        roce.AddHost(Nic(links[i], 0), i);
    }
    roce.PopulateRoutes(sw);
    std::vector<QpSource> sources(n);
    std::vector<NicSources> pumps(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        sources[i] = QpSource{Nic(links[i], 0), n, 0, 2000};
        pumps[i].sources = {&sources[i]};
        sources[i].nic->SetPacketTxReadyCallback(MakeCallback(&NicSources::Ready, &pumps[i]));
        sources[i].Pump();
    }
    Receiver rx(n + 1);
    Nic(links[n], 0)->SetPacketReceivedCallback(MakeCallback(&Receiver::Rx, &rx));
    Simulator::Run();
    std::vector<uint64_t> peaks;
    *drops = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        EXPECT_EQ(rx.bytes[i], 2000u * 4096) << "sender " << i; // lossless
        auto pfc = DynamicCast<PriorityFlowControl>(Nic(links[i], 1)->GetFlowControl());
        peaks.push_back(pfc->GetCounters().peakOccupancyBytes);
        *drops += pfc->GetDroppedPackets();
    }
    Simulator::Destroy();
    return peaks;
}

} // namespace

// Dynamic thresholds (Choudhury and Hahne): N queues congested together each stop (XOFF)
// at alpha S / (1 + N alpha): S/2 for one, S/5 for four, then hold at most their headroom
// more (2 x 6250 B of cable + 2 frames + the PAUSE = 20940 B).  Measured peaks: 532224 B
// for one queue (S/2 = 524288), 228690 B for each of four (S/5 = 209715); nothing dropped.
TEST_F(RoceTest, SharedBufferDynamicThresholdsSplitItAmongCongestedQueues)
{
    const uint64_t shared = 1 << 20;
    const uint64_t headroom = 2 * 6250 + 2 * (4096 + 62 + 20) + 84;
    for (uint32_t n : {1u, 4u})
    {
        uint64_t drops = 0;
        const std::vector<uint64_t> peaks = RunSharedBuffer(n, shared, &drops);
        const double fair = static_cast<double>(shared) / (1 + n);
        EXPECT_EQ(drops, 0u);
        for (uint64_t peak : peaks)
        {
            EXPECT_GE(peak, 0.99 * fair) << n << " queues";
            EXPECT_LE(peak, fair + headroom) << n << " queues";
        }
    }
}

// Lossy Ethernet (PFC off) with RC reliability: 4 senders into one receiver through a
// switch with 64 KiB ingress queues overflow them, the receiver takes packets in PSN order
// only and NAKs the first missing one, senders go back to it: every byte arrives exactly
// once, although packets were dropped and resent.
TEST_F(RoceTest, LossyIncastRecoversByGoBackN)
{
    const uint32_t n = 4;
    const uint32_t packets = 500;
    RoceHelper roce;
    Common(roce);
    roce.SetPfc(false);
    roce.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(64 * 1024));
    roce.SetDeviceAttribute("Reliable", BooleanValue(true));
    NodeContainer hosts(n + 1);
    NodeContainer sw(1);
    roce.InstallSwitch(sw.Get(0));
    std::vector<NetDeviceContainer> links;
    for (uint32_t i = 0; i <= n; ++i)
    {
        links.push_back(roce.Connect(hosts.Get(i), sw.Get(0)));
        roce.AddHost(Nic(links[i], 0), i);
    }
    roce.PopulateRoutes(sw);
    std::vector<QpSource> sources(n);
    std::vector<NicSources> pumps(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        sources[i] = QpSource{Nic(links[i], 0), n, 0, packets};
        pumps[i].sources = {&sources[i]};
        sources[i].nic->SetPacketTxReadyCallback(MakeCallback(&NicSources::Ready, &pumps[i]));
        sources[i].Pump();
    }
    Receiver rx(n + 1);
    Nic(links[n], 0)->SetPacketReceivedCallback(MakeCallback(&Receiver::Rx, &rx));
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    uint64_t drops = 0;
    uint64_t resent = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        EXPECT_EQ(rx.bytes[i], uint64_t{packets} * 4096) << "sender " << i; // exactly once
        drops += Nic(links[i], 1)->GetFlowControl()->GetDroppedPackets();
        resent += Nic(links[i], 0)->GetRoceCounters().retransmittedPackets;
    }
    EXPECT_GT(drops, 0u);     // the buffers did overflow
    EXPECT_GE(resent, drops); // every lost packet was sent again (and those behind it)
    EXPECT_GT(Nic(links[n], 0)->GetRoceCounters().outOfOrderDropped, 0u);
    // Recovered by NAKs within a few ms (measured 2.5 ms for 8 MB at 100 Gb/s: 0.67 ms at
    // line rate), not by waiting on timeouts.
    for (uint32_t i = 0; i < n; ++i)
    {
        EXPECT_LT(rx.last[i], MilliSeconds(10)) << "sender " << i;
    }
}

namespace
{

// Output of \p command (stdout and stderr).
std::string
Shell(const std::string& command, const std::string& scratch)
{
    const int status = std::system((command + " > " + scratch + " 2>&1").c_str());
    std::ifstream in(scratch);
    std::stringstream text;
    text << in.rdbuf() << "(exit " << status << ")";
    std::remove(scratch.c_str());
    return text.str();
}

} // namespace

// Two senders into a 50 Gb/s receiver: the captures of sender 0's NIC and of the switch
// port facing it decode with tshark as Ethernet / IPv4 / UDP 4791 / InfiniBand BTH (RoCEv2),
// and the switch's PAUSEs as MAC control PFC frames (opcode 0x0101, priority 0, 65535 quanta).
TEST_F(RoceTest, CaptureDecodesAsRoceV2AndPauseFramesAsMacControl)
{
    if (std::system("command -v tshark > /dev/null 2>&1") != 0)
    {
        GTEST_SKIP() << "tshark not installed (apt-get install tshark)";
    }
    RoceHelper roce;
    Common(roce);
    roce.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(64 * 1024));
    roce.SetDeviceAttribute("ComputeIcrc", BooleanValue(true));
    NodeContainer hosts(3);
    NodeContainer sw(1);
    roce.InstallSwitch(sw.Get(0));
    std::vector<NetDeviceContainer> links;
    for (uint32_t i = 0; i < 3; ++i)
    {
        if (i == 2)
        {
            roce.SetDeviceAttribute("DataRate", DataRateValue(DataRate("50Gbps")));
        }
        links.push_back(roce.Connect(hosts.Get(i), sw.Get(0)));
        roce.AddHost(Nic(links[i], 0), i);
    }
    roce.PopulateRoutes(sw);
    const test_util::ScratchDir captures("roce-pcap");
    const std::string prefix = captures.File("roce");
    roce.EnablePcap(prefix, links[0]);
    std::vector<QpSource> sources(2);
    std::vector<NicSources> pumps(2);
    for (uint32_t i = 0; i < 2; ++i)
    {
        sources[i] = QpSource{Nic(links[i], 0), 2, 7, 200};
        pumps[i].sources = {&sources[i]};
        sources[i].nic->SetPacketTxReadyCallback(MakeCallback(&NicSources::Ready, &pumps[i]));
        sources[i].Pump();
    }
    Simulator::Run();
    ASSERT_GT(Pfc(Nic(links[0], 1))->GetCounters().pauseFramesSent, 0u);
    const std::string nicFile = prefix + "-" + std::to_string(hosts.Get(0)->GetId()) + "-0.pcap";
    const std::string portFile = prefix + "-" + std::to_string(sw.Get(0)->GetId()) + "-0.pcap";
    const std::string scratch = prefix + ".txt";
    const std::string data =
        Shell("tshark -r " + nicFile +
                  " -Y infiniband -T fields -e eth.type -e ip.src -e ip.dst -e udp.dstport"
                  " -e infiniband.bth.opcode -e infiniband.bth.psn -c 2",
              scratch);
    const std::string pause = Shell("tshark -r " + portFile +
                                        " -Y macc -T fields -e eth.dst -e macc.opcode"
                                        " -e macc.cbfc.enbv.c0 -e macc.cbfc.pause_time.c0",
                                    scratch);
    const std::string verbose = Shell("tshark -r " + nicFile + " -V -c 1", scratch);
    EXPECT_NE(data.find("0x0800\t10.0.0.1\t10.0.0.3\t4791\t4\t0\n"), std::string::npos) << data;
    EXPECT_NE(data.find("\t4791\t4\t1\n"), std::string::npos) << data;
    // XOFF (65535 quanta) and XON (0) entries for priority 0.
    EXPECT_NE(pause.find("01:80:c2:00:00:01\t0x0101\t1\t65535\n"), std::string::npos) << pause;
    EXPECT_NE(pause.find("01:80:c2:00:00:01\t0x0101\t1\t0\n"), std::string::npos) << pause;
    EXPECT_NE(verbose.find("InfiniBand"), std::string::npos) << verbose;
    EXPECT_EQ(verbose.find("Malformed"), std::string::npos) << verbose;
}
