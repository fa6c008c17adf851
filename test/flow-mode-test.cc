/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Flow-level fidelity: FlowNetwork's weighted max-min shares against their analytical
// values (one bottleneck, parking lot, weights, sprayed flows, drain times), incremental
// refills, --fidelity parsing and refusals, a hybrid cluster's planes and NVLink path, and
// collectives in flow mode against the same collectives in packet mode (doc/flow-mode.md).
#include "dgx-collective-run.h"
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/config.h"
#include "ns3/flow-network.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/names.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"

#include <cmath>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <sqlite3.h>
#include <vector>

using namespace ns3;

namespace
{

constexpr double GB = 1e9;

class FlowNetworkTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }

    // Runs the instant's recomputation (scheduled for now) and stops there.
    static void Settle()
    {
        Simulator::Stop(Time(0));
        Simulator::Run();
    }
};

TEST_F(FlowNetworkTest, ThreeFlowsShareOneBottleneckThenDrainInTurn)
{
    FlowNetwork net;
    const uint32_t l = net.AddLink(1 * GB);
    std::vector<Time> drained(3);
    std::vector<uint32_t> f;
    for (uint32_t i = 0; i < 3; ++i)
    {
        f.push_back(net.Start({{l, 1.0}}, (i + 1) * 1e6, 1.0, [&drained, i]() {
            drained[i] = Simulator::Now();
        }));
    }
    Settle();
    for (uint32_t i = 0; i < 3; ++i)
    {
        EXPECT_NEAR(net.GetRate(f[i]), GB / 3, 1e-6 * GB); // C/3 each, 1 ppm
    }
    Simulator::Run();
    // 1, 2, 3 MB at C/3 until 3 ms, C/2 until 5 ms, then C: 3, 5, 6 ms (1 ns ceil per event).
    EXPECT_NEAR(drained[0].GetNanoSeconds(), 3e6, 2);
    EXPECT_NEAR(drained[1].GetNanoSeconds(), 5e6, 3);
    EXPECT_NEAR(drained[2].GetNanoSeconds(), 6e6, 4);
    EXPECT_EQ(net.GetNActive(), 0u);
}

TEST_F(FlowNetworkTest, ParkingLotLongFlowGetsTheTightLinksShare)
{
    // Links A (C) and B (2C); the long flow crosses both, one short flow on each: A splits
    // C/2 : C/2, B gives its short flow what the long one leaves, 2C - C/2 = 1.5C.
    FlowNetwork net;
    const uint32_t a = net.AddLink(1 * GB);
    const uint32_t b = net.AddLink(2 * GB);
    const uint32_t longFlow = net.Start({{a, 1.0}, {b, 1.0}}, 1e9, 1.0, {});
    const uint32_t onA = net.Start({{a, 1.0}}, 1e9, 1.0, {});
    const uint32_t onB = net.Start({{b, 1.0}}, 1e9, 1.0, {});
    Settle();
    EXPECT_NEAR(net.GetRate(longFlow), 0.5 * GB, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(onA), 0.5 * GB, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(onB), 1.5 * GB, 1e-6 * GB);
    EXPECT_NEAR(net.GetLoad(a), 1 * GB, 1e-6 * GB); // both links full: nothing left to give
    EXPECT_NEAR(net.GetLoad(b), 2 * GB, 1e-6 * GB);
}

TEST_F(FlowNetworkTest, ClassicParkingLotOfThreeLinks)
{
    // Three equal links, one flow across all and one per link: every flow C/2.
    FlowNetwork net;
    std::vector<uint32_t> links;
    for (int i = 0; i < 3; ++i)
    {
        links.push_back(net.AddLink(1 * GB));
    }
    const uint32_t across =
        net.Start({{links[0], 1.0}, {links[1], 1.0}, {links[2], 1.0}}, 1e9, 1.0, {});
    std::vector<uint32_t> local;
    for (uint32_t l : links)
    {
        local.push_back(net.Start({{l, 1.0}}, 1e9, 1.0, {}));
    }
    Settle();
    EXPECT_NEAR(net.GetRate(across), 0.5 * GB, 1e-6 * GB);
    for (uint32_t f : local)
    {
        EXPECT_NEAR(net.GetRate(f), 0.5 * GB, 1e-6 * GB);
    }
}

TEST_F(FlowNetworkTest, WeightsSplitInProportion)
{
    FlowNetwork net;
    const uint32_t l = net.AddLink(1 * GB);
    const uint32_t light = net.Start({{l, 1.0}}, 1e9, 1.0, {});
    const uint32_t heavy = net.Start({{l, 1.0}}, 1e9, 3.0, {});
    Settle();
    EXPECT_NEAR(net.GetRate(light), 0.25 * GB, 1e-6 * GB); // 1 : 3 of C
    EXPECT_NEAR(net.GetRate(heavy), 0.75 * GB, 1e-6 * GB);
}

TEST_F(FlowNetworkTest, SprayedFlowIsLimitedByItsBusierLink)
{
    // A flow sprayed half and half over links 1 and 2 (C each) and a flow on link 1 alone:
    // link 1 carries r/2 + s with equal rates r = s, so both get 2C/3; link 2 stays 1/3 used.
    FlowNetwork net;
    const uint32_t l1 = net.AddLink(1 * GB);
    const uint32_t l2 = net.AddLink(1 * GB);
    const uint32_t sprayed = net.Start({{l1, 0.5}, {l2, 0.5}}, 1e9, 1.0, {});
    const uint32_t single = net.Start({{l1, 1.0}}, 1e9, 1.0, {});
    Settle();
    EXPECT_NEAR(net.GetRate(sprayed), 2.0 / 3 * GB, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(single), 2.0 / 3 * GB, 1e-6 * GB);
    EXPECT_NEAR(net.GetLoad(l2), 1.0 / 3 * GB, 1e-6 * GB);
}

TEST_F(FlowNetworkTest, RefillsOnlyTheAffectedComponent)
{
    // Two disjoint links with 10 flows each: a flow ending on one refills that link's flows
    // alone, and the other link's flows keep their drain events.
    FlowNetwork net;
    const uint32_t a = net.AddLink(1 * GB);
    const uint32_t b = net.AddLink(1 * GB);
    for (int i = 0; i < 10; ++i)
    {
        net.Start({{a, 1.0}}, 1e6 * (i + 1), 1.0, {});
        net.Start({{b, 1.0}}, 1e9, 1.0, {});
    }
    Settle();
    EXPECT_EQ(net.GetRecomputations(), 1u);
    EXPECT_EQ(net.GetFlowsRefilled(), 20u); // the first fill sees both links' flows
    // The first flow on a drains at 10 flows x 1 MB / 1 GB/s = 10 ms.
    Simulator::Stop(MilliSeconds(10) + NanoSeconds(10));
    Simulator::Run();
    EXPECT_EQ(net.GetRecomputations(), 2u);
    EXPECT_EQ(net.GetFlowsRefilled(), 29u); // + the 9 left on a; none of b's
    EXPECT_EQ(net.GetNActive(), 19u);
}

TEST_F(FlowNetworkTest, LocalRefillFollowsADrainTwoLinksAway)
{
    // Links 1, 2, 3 of capacity C in a chain: A on 1, B on 1-2, C on 2-3, D1 and D2 on 3.
    // Link 3 gives C, D1, D2 C/3 each; B and A split link 1 (C/2 each; link 2 is not full).
    FlowNetwork net;
    const uint32_t l1 = net.AddLink(1 * GB);
    const uint32_t l2 = net.AddLink(1 * GB);
    const uint32_t l3 = net.AddLink(1 * GB);
    const uint32_t a = net.Start({{l1, 1.0}}, 1e6, 1.0, {});
    const uint32_t b = net.Start({{l1, 1.0}, {l2, 1.0}}, 1e9, 1.0, {});
    const uint32_t c = net.Start({{l2, 1.0}, {l3, 1.0}}, 1e9, 1.0, {});
    const uint32_t d1 = net.Start({{l3, 1.0}}, 4e6, 1.0, {});
    const uint32_t d2 = net.Start({{l3, 1.0}}, 1e9, 1.0, {});
    Settle();
    EXPECT_NEAR(net.GetRate(a), GB / 2, 1e-6 * GB); // 1 ppm
    EXPECT_NEAR(net.GetRate(b), GB / 2, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(c), GB / 3, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(d1), GB / 3, 1e-6 * GB);
    // A (1 MB at C/2) drains at 2 ms: B takes what C leaves of link 2, 2C/3.
    Simulator::Stop(MilliSeconds(2) + NanoSeconds(10));
    Simulator::Run();
    EXPECT_NEAR(net.GetRate(b), 2 * GB / 3, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(c), GB / 3, 1e-6 * GB);
    // D1 (4 MB at C/3) drains at 12 ms: C grows on link 3, which takes link 2 from B (held,
    // not on D1's link): the refill has to reach it.  B = C = D2 = C/2.
    Simulator::Stop(MilliSeconds(10));
    Simulator::Run();
    EXPECT_NEAR(net.GetRate(b), GB / 2, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(c), GB / 2, 1e-6 * GB);
    EXPECT_NEAR(net.GetRate(d2), GB / 2, 1e-6 * GB);
    EXPECT_EQ(net.GetComponentFallbacks(), 0u);
    // Refilled: 5 at the start, B alone when A drains, D1's link (C, D2) grown by B when D1
    // drains: 5 + 1 + 3, against 5 + 4 + 3 for whole components.
    EXPECT_EQ(net.GetFlowsRefilled(), 9u);
}

TEST_F(FlowNetworkTest, LocalRefillGivesTheComponentsRatesAndDrainTimes)
{
    // The same random flows on a random three-level tree of links, once with local refills
    // and once with whole components: every flow drains at the same nanosecond (rates agree
    // to 1e-12; the drain's ceiling to whole nanoseconds may round one either way).
    FlowNetwork local;
    FlowNetwork whole;
    whole.SetLocalRefill(false);
    uint64_t seed = 12345;
    auto next = [&seed]() {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<uint32_t>(seed >> 33);
    };
    std::vector<uint32_t> links;
    for (uint32_t i = 0; i < 24; ++i)
    {
        const double capacity = (1 + next() % 4) * GB;
        links.push_back(local.AddLink(capacity));
        whole.AddLink(capacity);
    }
    constexpr uint32_t kFlows = 300;
    std::vector<Time> localEnd(kFlows);
    std::vector<Time> wholeEnd(kFlows);
    for (uint32_t i = 0; i < kFlows; ++i)
    {
        // Up a leaf (0-11), across one of 8 middle links (12-19) sprayed or not, down a leaf.
        std::vector<FlowNetwork::Use> path{{links[next() % 12], 1.0}};
        if (next() % 2)
        {
            path.push_back({links[12 + next() % 4], 0.5});
            path.push_back({links[16 + next() % 4], 0.5});
        }
        else
        {
            path.push_back({links[12 + next() % 8], 1.0});
        }
        path.push_back({links[20 + next() % 4], 1.0});
        const double bytes = (1 + next() % 64) * 1e5;
        const double weight = 1 + next() % 3;
        Simulator::Schedule(NanoSeconds(next() % 2000000), [&, i, path, bytes, weight]() {
            local.Start(path, bytes, weight, [&localEnd, i]() { localEnd[i] = Simulator::Now(); });
            whole.Start(path, bytes, weight, [&wholeEnd, i]() { wholeEnd[i] = Simulator::Now(); });
        });
    }
    Simulator::Run();
    uint32_t same = 0;
    for (uint32_t i = 0; i < kFlows; ++i)
    {
        ASSERT_GT(localEnd[i], Time(0));
        EXPECT_NEAR(localEnd[i].GetNanoSeconds(), wholeEnd[i].GetNanoSeconds(), 2); // 2 ns
        same += localEnd[i] == wholeEnd[i];
    }
    EXPECT_GE(same, kFlows * 95 / 100); // ceiling flips are rare: at least 95 % identical
    EXPECT_LT(local.GetFlowsRefilled(), whole.GetFlowsRefilled()); // the point of it
    std::cout << "local refilled " << local.GetFlowsRefilled() << " flows, whole components "
              << whole.GetFlowsRefilled() << "; " << same << " of " << kFlows
              << " drains at the same ns; fallbacks " << local.GetComponentFallbacks() << "\n";
}

// --fidelity on the command line's ClusterConfig: accepted forms and refusals.
TEST(FlowFidelityConfigTest, ParsesWholeClusterAndPerPlaneForms)
{
    ClusterConfig c;
    ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
    EXPECT_EQ(c.GetFidelityName(), "nvlink:packet,infiniband:packet");
    c.fidelity = "flow";
    EXPECT_EQ(c.Validate(), "");
    EXPECT_EQ(c.GetFidelityName(), "nvlink:flow,infiniband:flow");
    c.fidelity = "nvlink:flow,infiniband:packet";
    EXPECT_EQ(c.Validate(), "");
    EXPECT_TRUE(c.IsFlowPlane(ClusterPlane::NVLINK));
    EXPECT_FALSE(c.IsFlowPlane(ClusterPlane::INFINIBAND));
    c.fidelity = "flow,infiniband:packet";
    EXPECT_EQ(c.GetFidelityName(), "nvlink:flow,infiniband:packet");
    c.fidelity = "ethernet:packet,infiniband:flow";
    EXPECT_EQ(c.Validate(), "");
    EXPECT_EQ(c.GetFidelityName(), "nvlink:packet,infiniband:flow");
}

TEST(FlowFidelityConfigTest, RefusesUnknownValuesPlanesAndAbsentPlanesNamingTheFlag)
{
    struct Case
    {
        std::string fidelity;
        uint32_t gpusPerServer;
        std::string says;
    };

    const std::vector<Case> cases = {
        {"fluid", 8, "unknown fidelity 'fluid'"},
        {"nvlink:fast", 8, "unknown mode 'fast'"},
        {"nvswitch:flow", 8, "nvswitch"},
        {"ethernet:flow", 8, "front-end"},
        {"nvlink:flow,nvlink:packet", 8, "given twice"},
        {"infiniband:flow,packet", 8, "comes first"},
        {"", 8, "empty fidelity"},
        {"nvlink:flow", 1, "no NVLink plane"},
    };
    for (const Case& k : cases)
    {
        ClusterConfig c;
        ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
        c.gpusPerServer = k.gpusPerServer;
        c.fidelity = k.fidelity;
        std::string field;
        const std::string error = c.Validate(&field);
        EXPECT_NE(error.find(k.says), std::string::npos) << k.fidelity << ": " << error;
        EXPECT_EQ(field, "fidelity") << k.fidelity;
    }
}

class FlowModeTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    static double Time_us(const std::string& fidelity,
                          uint32_t servers,
                          const std::string& kind,
                          const std::string& algorithm,
                          uint64_t bytes)
    {
        return RunDgxCollective_us(fidelity, servers, kind, algorithm, bytes);
    }

    static void ExpectClose(uint32_t servers,
                            const std::string& kind,
                            const std::string& algorithm,
                            uint64_t bytes,
                            double tolerance)
    {
        const double packet = Time_us("packet", servers, kind, algorithm, bytes);
        const double flow = Time_us("flow", servers, kind, algorithm, bytes);
        EXPECT_GT(packet, 0);
        EXPECT_NEAR(flow / packet, 1.0, tolerance)
            << kind << " " << algorithm << " " << bytes << " B on " << servers
            << " servers: packet " << packet << " us, flow " << flow << " us";
    }
};

TEST_F(FlowModeTest, RingAllReduceInOneServerMatchesPackets)
{
    ExpectClose(1, "allreduce", "ring", 64 << 20, 0.03); // validate-flow's target, 3 %
}

TEST_F(FlowModeTest, AllToAllAcrossTwoServersMatchesPackets)
{
    ExpectClose(2, "alltoall", "auto", 4 << 20, 0.05); // 5 %: many flows on shared HCAs
}

TEST_F(FlowModeTest, HierarchicalAllReduceAcrossTwoServersMatchesPackets)
{
    ExpectClose(2, "allreduce", "hierarchical", 64 << 20, 0.03); // 3 %
}

TEST_F(FlowModeTest, NvlsTreeAllReduceAcrossTwoServersMatchesPackets)
{
    // Its rails' ring messages share the HCA with the other channels': within 3 % only with
    // the last packets in turn (+1.8 % without).
    ExpectClose(2, "allreduce", "nvlstree", 4 << 20, 0.03); // 3 %
}

TEST_F(FlowModeTest, LastPacketsOfMessagesToOneDestinationLeaveInTurn)
{
    // n = 4 messages of k = 4 packets from rank 0 to rank 8 (the other server's HCA on the
    // same leaf) at once, each larger than the HCA's message queue (no SourceQueue): the
    // bodies share the wire, (k - 1) n packet times w, then the last packets leave one per
    // turn, so the messages drain at 13w, 14w, 15w, 16w.  Without LastPacketInTurn all
    // drain at n k w = 16w.  w: one packet's wire bytes at the HCA's wire rate.
    const uint32_t n = 4;
    const uint32_t k = 4;
    const uint32_t packetBytes = 16384;
    for (bool inTurn : {true, false})
    {
        Config::SetDefault("ns3::FlowTransportPlane::LastPacketInTurn", BooleanValue(inTurn));
        ClusterConfig c;
        ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
        c.servers = 2;
        c.endpoint = "ideal";
        c.fidelity = "infiniband:flow";
        ClusterHelper cluster(c);
        ASSERT_EQ(cluster.TryBuild(), "");
        Ptr<GpuTransport> transport = cluster.InstallTransport("world");
        Ptr<FlowTransportPlane> wrapped =
            DynamicCast<FlowTransportPlane>(transport->GetPlane(transport->SelectPlane(0, 8)));
        ASSERT_TRUE(wrapped);
        Ptr<FlowTransportPlane> plane = CreateObject<FlowTransportPlane>();
        plane->SetTopology(wrapped->GetTopology()); // the described plane's routes
        plane->SetPacketPlane(wrapped->GetPacketPlane());
        std::vector<Time> drained;
        auto none = FlowTransportPlane::MessageCallback([](uint64_t) {});
        plane->SetMessageCallbacks(none,
                                   FlowTransportPlane::MessageCallback([&drained](uint64_t) {
                                       drained.push_back(Simulator::Now());
                                   }),
                                   none);
        const auto uses = plane->GetPathUses(0, 8);
        ASSERT_EQ(uses.size(), 2u); // HCA up, leaf down to the peer HCA
        const double wire_byte_per_s = plane->GetNetwork().GetCapacity(uses.front().link);
        const uint32_t fine = plane->GetMaxPayloadBytes();
        const double w = (packetBytes + double((packetBytes + fine - 1) / fine) *
                                            plane->GetPacketOverheadBytes()) /
                         wire_byte_per_s;
        for (uint32_t m = 0; m < n; ++m)
        {
            plane->StartMessage(0, 8, uint64_t{k} * packetBytes, packetBytes, m);
        }
        Simulator::Run();
        ASSERT_EQ(drained.size(), n);
        for (uint32_t j = 0; j < n; ++j)
        {
            const double expected = inTurn ? ((k - 1) * n + j + 1) * w : n * k * w;
            // 4 ns: each rate change rounds a drain up to the next nanosecond.
            EXPECT_NEAR(drained[j].GetSeconds() * 1e9, expected * 1e9, 4)
                << (inTurn ? "in turn" : "shared") << ", message " << j;
        }
        plane->Dispose();
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
    }
}

TEST_F(FlowModeTest, HybridClusterWrapsOnlyTheFlowPlaneAndFollowsTheSpray)
{
    ClusterConfig c;
    ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 2;
    c.fidelity = "nvlink:flow,infiniband:packet";
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    ASSERT_EQ(transport->GetNPlanes(), 2u);
    Ptr<FlowTransportPlane> nv;
    for (uint32_t i = 0; i < transport->GetNPlanes(); ++i)
    {
        if (transport->GetPlane(i)->GetPlaneName() == "nvlink")
        {
            nv = DynamicCast<FlowTransportPlane>(transport->GetPlane(i));
        }
        else
        {
            EXPECT_FALSE(DynamicCast<FlowTransportPlane>(transport->GetPlane(i)));
        }
    }
    ASSERT_TRUE(nv);
    // GPU 0 -> GPU 1 of a DGX H100: its 4 switch bundles up (5, 4, 4, 5 links of 18), the
    // destination's 4 bundles down, each at its share of the spray.
    const auto uses = nv->GetPathUses(0, 1);
    ASSERT_EQ(uses.size(), 8u);
    double up = 0;
    for (const auto& u : uses)
    {
        up += u.share;
    }
    EXPECT_NEAR(up, 2.0, 1e-12); // every byte once up, once down
    // Unloaded first-packet latency: a 4 KiB packet at the GPU's bundle rate and the switch
    // hop, positive and below a microsecond.
    const Time first = nv->GetFirstPacketLatency(0, 1, 4096);
    EXPECT_GT(first, Time(0));
    EXPECT_LT(first, MicroSeconds(1));
    // The packet contract: one injected packet is its own flow, in at exactly that latency.
    uint32_t got = 0;
    Time at = Seconds(-1);
    nv->SetDeliverCallback(TransportPlane::DeliverCallback(
        [&got, &at](uint32_t, uint32_t, uint32_t bytes, TransportTag) {
            got = bytes;
            at = Simulator::Now();
        }));
    EXPECT_TRUE(nv->Inject(0, 1, 4096, TransportTag{7, 0}));
    Simulator::Run();
    EXPECT_EQ(got, 4096u);
    EXPECT_EQ(at, first);
}

TEST_F(FlowModeTest, HybridRunWritesEachFlowsFidelityAndAFlowMovesAtTheLineRate)
{
    ClusterConfig c;
    ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 2;
    c.endpoint = "ideal"; // the wire alone: no endpoint rate behind it
    c.fidelity = "nvlink:flow,infiniband:packet";
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    const test_util::ScratchDir scratch("flow");
    const std::string path = scratch.File("results.db");
    Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
    db->Open(path);
    db->BeginRun("flow-mode", "flow-mode-test", 1, "{}");
    transport->SetResultsDatabase(db);
    const uint64_t bytes = 64 << 20;
    Time nvDone = Seconds(-1);
    Time ibDone = Seconds(-1);
    auto at = [](Time* t) { return Callback<void>([t]() { *t = Simulator::Now(); }); };
    transport->SendMessage(0, 1, bytes, GpuTransport::DoneCallback(), at(&nvDone));
    transport->SendMessage(0, 9, bytes, GpuTransport::DoneCallback(), at(&ibDone));
    Simulator::Run();
    ASSERT_GT(nvDone, Time(0));
    ASSERT_GT(ibDone, Time(0));
    // One flow alone on GPU 0's bundles: bytes at the plane's payload line rate (the
    // devices' wire rate less one overhead per fine packet), 1 % for the path latency.
    Ptr<TransportPlane> nv = transport->GetPlane(transport->SelectPlane(0, 1));
    const double line_byte_per_s = nv->GetLineRate_gbyte_per_s(0) * 1e9;
    EXPECT_NEAR(nvDone.GetSeconds() / (bytes / line_byte_per_s), 1.0, 0.01);
    db->EndRun("complete", Simulator::Now());
    db->Close();
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    auto count = [h](const std::string& sql) {
        sqlite3_stmt* st = nullptr;
        EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
        int64_t v = -1;
        if (st && sqlite3_step(st) == SQLITE_ROW)
        {
            v = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        return v;
    };
    EXPECT_EQ(count("SELECT count(*) FROM flows WHERE plane='nvlink' AND fidelity='flow' AND "
                    "packets=1 AND end_ns IS NOT NULL"),
              1);
    EXPECT_EQ(count("SELECT count(*) FROM flows WHERE plane='infiniband' AND fidelity='packet' "
                    "AND packets>1"),
              1);
    sqlite3_close(h);
}

TEST_F(FlowModeTest, MessagesToOneDestinationDrainInOrderThroughTheSourceQueue)
{
    // Two 1 MiB messages from GPU 0 to GPU 1 on two channels fit the GPU's transmit queues:
    // the first drains alone at the line rate R, the second after it, B/R later (2 %).
    // Without SourceQueue they share the wire and their last packets leave in turn: one
    // packet apart, the 32 packets GpuTransport cuts them into (MinPacketsPerMessage), so
    // B/32R (0.5 % of B/R).
    const uint64_t bytes = 1 << 20;
    for (bool queue : {true, false})
    {
        Config::SetDefault("ns3::FlowTransportPlane::SourceQueue", BooleanValue(queue));
        ClusterConfig c;
        ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
        c.servers = 1;
        c.endpoint = "ideal";
        c.fidelity = "flow";
        ClusterHelper cluster(c);
        ASSERT_EQ(cluster.TryBuild(), "");
        Ptr<GpuTransport> transport = cluster.InstallTransport("world");
        Time done[2] = {Seconds(-1), Seconds(-1)};
        for (uint32_t ch = 0; ch < 2; ++ch)
        {
            Time* t = &done[ch];
            transport->SendMessage(0,
                                   1,
                                   bytes,
                                   GpuTransport::DoneCallback(),
                                   Callback<void>([t]() { *t = Simulator::Now(); }),
                                   ch);
        }
        Simulator::Run();
        Ptr<TransportPlane> nv = transport->GetPlane(transport->SelectPlane(0, 1));
        const double oneMessage_s = bytes / (nv->GetLineRate_gbyte_per_s(0) * 1e9);
        const double gap = (done[1] - done[0]).GetSeconds() / oneMessage_s;
        if (queue)
        {
            EXPECT_NEAR(gap, 1.0, 0.02);
        }
        else
        {
            EXPECT_NEAR(gap, 1.0 / 32, 0.005);
        }
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
    }
}

} // namespace
