/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// CreditLinkConservation: balanced accounting on clean runs, and a named violation for
// every way of losing something (a data frame, a credit update, a switch drop).  Then the
// check on tiny configurations of the scenarios that do not go through RunWorkloadStudy's
// own check: the demo trace as cluster-replay runs it and a collective-bench case.
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/collective-engine.h"
#include "ns3/config.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/credit-link-header.h"
#include "ns3/credit-link-helper.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/trace-native.h"
#include "ns3/uinteger.h"
#include "ns3/workload-study.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

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

// A channel that loses the n-th data frame or the n-th credit update (0 = none).
class LossyChannel : public CreditLinkChannel
{
  public:
    uint32_t loseData{0};
    uint32_t loseCredits{0};

    void TransmitData(const CreditLinkNetDevice* from,
                      Ptr<Packet> packet,
                      uint32_t vc,
                      Time headTime,
                      Time txTime) override
    {
        if (++m_data != loseData)
        {
            CreditLinkChannel::TransmitData(from, packet, vc, headTime, txTime);
        }
    }

    void TransmitCredits(const CreditLinkNetDevice* from,
                         uint32_t vc,
                         uint32_t credits,
                         Time txTime) override
    {
        if (++m_credits != loseCredits)
        {
            CreditLinkChannel::TransmitCredits(from, vc, credits, txTime);
        }
    }

  private:
    uint32_t m_data{0};
    uint32_t m_credits{0};
};

class Conservation : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    // Two hosts on one lossy cable; host 0 sends \p packets of 4096 B.
    static std::pair<Ptr<CreditLinkNetDevice>, Ptr<CreditLinkNetDevice>> LossyPair(
        Ptr<LossyChannel> channel,
        uint32_t packets)
    {
        NodeContainer nodes(2);
        std::pair<Ptr<CreditLinkNetDevice>, Ptr<CreditLinkNetDevice>> ends;
        for (uint32_t i = 0; i < 2; ++i)
        {
            Ptr<CreditLinkNetDevice> d = CreateObject<CreditLinkNetDevice>();
            d->SetAttribute("ReceiveBufferBytes", UintegerValue(16384));
            nodes.Get(i)->AddDevice(d);
            d->SetNode(nodes.Get(i));
            d->Attach(channel);
            (i == 0 ? ends.first : ends.second) = d;
        }
        for (uint32_t i = 0; i < packets; ++i)
        {
            EXPECT_TRUE(ends.first->SendOnVc(MakeLinkPacket(1, 4096), 0));
        }
        return ends;
    }

    // Figure for scripts/reliability-report: the links a check covered.
    static void RecordLinksChecked(const CreditLinkConservationReport& r)
    {
        int links = 0;
        for (const auto& [plane, p] : r.planes)
        {
            links += static_cast<int>(p.links);
        }
        RecordProperty("links_checked", links);
    }

    static bool Mentions(const CreditLinkConservationReport& r,
                         const std::string& where,
                         int32_t vc,
                         const std::string& words)
    {
        for (const auto& v : r.violations)
        {
            if (v.where == where && v.vc == vc && v.problem.find(words) != std::string::npos)
            {
                return true;
            }
        }
        return false;
    }
};

// host 0 - switch - host 1, 40 packets of 4096 B: mid-run the accounting balances but the
// fabric is not idle; at the end every byte sent on each of the two hops was received
// (2 x 40 x 4096 B) and every credit is back.
TEST_F(Conservation, CleanTransferBalancesAndIdlesAtTheEnd)
{
    NodeContainer hosts(2);
    NodeContainer sw(1);
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(16384));
    helper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(100)));
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    NetDeviceContainer a = helper.Install(hosts.Get(0), sw.Get(0));
    NetDeviceContainer b = helper.Install(hosts.Get(1), sw.Get(0));
    core->SetRoute(1, {core->GetPortIndex(b.Get(1))});
    Ptr<CreditLinkNetDevice> src = DynamicCast<CreditLinkNetDevice>(a.Get(0));
    for (uint32_t i = 0; i < 40; ++i)
    {
        ASSERT_TRUE(src->SendOnVc(MakeLinkPacket(1, 4096), 0));
    }
    CreditLinkConservation check;
    check.Add("test", NodeContainer(hosts, sw));
    CreditLinkConservationReport mid;
    CreditLinkConservationReport midIdle;
    Simulator::Schedule(MicroSeconds(3), [&]() {
        mid = check.Check(false);
        midIdle = check.Check(true);
    });
    Simulator::Run();
    EXPECT_TRUE(mid.Ok()) << mid.Describe();
    EXPECT_FALSE(midIdle.Ok()) << "3 us into a 13 us transfer something must be in flight";
    const CreditLinkConservationReport end = check.Check();
    EXPECT_TRUE(end.Ok()) << end.Describe();
    ASSERT_EQ(end.planes.count("test"), 1u);
    EXPECT_EQ(end.planes.at("test").links, 2u);
    EXPECT_EQ(end.planes.at("test").sentBytes, 2u * 40 * 4096);
    EXPECT_EQ(end.planes.at("test").receivedBytes, 2u * 40 * 4096);
    EXPECT_NE(end.Describe().find("conservation OK"), std::string::npos);
}

// The checker can fail: a data frame lost on the wire is named as unaccounted bytes on
// its link and, since its credits never come back, as 64 lost credits on VC 0.
TEST_F(Conservation, LostDataFrameIsNamed)
{
    Ptr<LossyChannel> channel = CreateObject<LossyChannel>();
    channel->loseData = 2;
    auto [src, dst] = LossyPair(channel, 5);
    Simulator::Run();
    CreditLinkConservation check;
    check.Add("test", src);
    const CreditLinkConservationReport r = check.Check();
    ASSERT_FALSE(r.Ok());
    const std::string link = "link " + src->GetLinkName();
    EXPECT_TRUE(Mentions(r, link, -1, "4096 B unaccounted")) << r.Describe();
    EXPECT_TRUE(Mentions(r, link, 0, "64 credits lost")) << r.Describe();
    EXPECT_EQ(dst->GetCounters().rxPackets, 4u);
}

// A credit update lost on the way back: the data all arrived, but the sender's VC 0 is
// short of the credits that update carried.
TEST_F(Conservation, SwallowedCreditUpdateIsNamed)
{
    Ptr<LossyChannel> channel = CreateObject<LossyChannel>();
    channel->loseCredits = 1;
    auto [src, dst] = LossyPair(channel, 5);
    Simulator::Run();
    EXPECT_EQ(dst->GetCounters().rxPackets, 5u);
    CreditLinkConservation check;
    check.Add("test", dst);
    const CreditLinkConservationReport r = check.Check();
    ASSERT_FALSE(r.Ok());
    ASSERT_EQ(r.violations.size(), 1u) << r.Describe();
    EXPECT_TRUE(Mentions(r, "link " + src->GetLinkName(), 0, "64 credits lost")) << r.Describe();
}

// A packet for a destination the switch has no route for is dropped at its input (its
// buffer released, so the link's credits still balance) and reported on the link it came
// from, with the reason; the run ends instead of hanging.
TEST_F(Conservation, SwitchDropIsNamedWithItsReason)
{
    NodeContainer hosts(2);
    NodeContainer sw(1);
    CreditLinkHelper helper;
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
    NetDeviceContainer a = helper.Install(hosts.Get(0), sw.Get(0));
    NetDeviceContainer b = helper.Install(hosts.Get(1), sw.Get(0));
    core->SetRoute(1, {core->GetPortIndex(b.Get(1))});
    Ptr<CreditLinkNetDevice> src = DynamicCast<CreditLinkNetDevice>(a.Get(0));
    ASSERT_TRUE(src->SendOnVc(MakeLinkPacket(1, 4096), 0));
    ASSERT_TRUE(src->SendOnVc(MakeLinkPacket(7, 4096), 0));
    ASSERT_TRUE(src->SendOnVc(MakeLinkPacket(7, 4096), 0));
    Simulator::Run();
    EXPECT_EQ(core->GetDroppedPackets(), 2u);
    EXPECT_EQ(core->GetDroppedPackets(core->GetPortIndex(a.Get(1))), 2u);
    EXPECT_FALSE(helper.GetWatchdog()->HasFired());
    CreditLinkConservation check;
    check.Add("test", NodeContainer(hosts, sw));
    const CreditLinkConservationReport r = check.Check();
    ASSERT_EQ(r.violations.size(), 1u) << r.Describe();
    EXPECT_TRUE(
        Mentions(r,
                 "link " + src->GetLinkName(),
                 -1,
                 "2 packets dropped at the switch input (first: no route for destination 7)"))
        << r.Describe();
    EXPECT_EQ(r.planes.at("test").drops, 2u);
}

// The demo job of scripts/demo (cluster-replay's trace) on its 2 x dgx-h100 cluster, cut
// to one step of 1 MiB collectives, parsed as cluster-replay parses it: both planes carry
// traffic and conserve it.
TEST_F(Conservation, DemoTraceReplayConserves)
{
    std::ifstream in(std::string(AI_FABRIC_SOURCE_DIR) + "/scenarios/traces/demo-tp8-dp2.trace");
    ASSERT_TRUE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    std::string trace = text.str();
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"repeat 3", "repeat 1"},
                                                          {"bytes=128MiB", "bytes=1MiB"},
                                                          {"bytes=32MiB", "bytes=1MiB"},
                                                          {"time=600us", "time=10us"}})
    {
        for (std::size_t at = trace.find(from); at != std::string::npos; at = trace.find(from))
        {
            trace.replace(at, from.size(), to);
        }
    }
    ClusterConfig config;
    ASSERT_EQ(config.ApplyPreset("dgx-h100"), "");
    config.servers = 2;
    StudyResult r;
    {
        ClusterHelper cluster(config);
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        ASSERT_EQ(cluster.TryBuild(), "");
        r = RunWorkloadStudy(cluster, NativeTraceParser::ParseString(trace, "demo"), "");
    }
    ASSERT_TRUE(r.complete) << r.stuckReport;
    ASSERT_TRUE(r.conservation.Ok()) << r.conservation.Describe();
    EXPECT_GT(r.conservation.planes.at("nvlink").sentBytes, 0u);
    EXPECT_GT(r.conservation.planes.at("infiniband").sentBytes, 0u);
    RecordLinksChecked(r.conservation);
}

// collective-bench's loop stops the simulator when a collective ends; after the trailing
// credit updates land (1 us) the fabric is idle and conserved.  Hierarchical allreduce of
// 1 MiB on 2 x dgx-h100 uses both planes.
TEST_F(Conservation, CollectiveBenchCaseConserves)
{
    ClusterConfig c;
    ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 2;
    ClusterHelper cluster(c);
    cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetTransport(cluster.InstallTransport("world"));
    std::map<uint32_t, uint32_t> domains;
    std::vector<uint32_t> ranks;
    for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
    {
        domains[r] = cluster.GetDomain(r);
        ranks.push_back(r);
    }
    engine->SetDomainMap(domains);
    CollectiveBenchOptions o;
    o.collective = "allreduce";
    o.algorithm = "hierarchical";
    const CollectiveBenchRow row = CollectiveBenchRun(o, ranks, {1 << 20}, engine).front();
    EXPECT_EQ(row.outOfPlace.algorithm, "hierarchical");
    EXPECT_EQ(row.inPlace.algorithm, "hierarchical");
    Simulator::Stop(MicroSeconds(1));
    Simulator::Run();
    const CreditLinkConservationReport r = cluster.CheckConservation();
    EXPECT_TRUE(r.Ok()) << r.Describe();
    EXPECT_GT(r.planes.at("nvlink").sentBytes, 0u);
    EXPECT_GT(r.planes.at("infiniband").sentBytes, 0u);
    RecordLinksChecked(r);
}

} // namespace
