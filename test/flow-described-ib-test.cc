/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// A flow-level InfiniBand plane built from its description (InfinibandClusterPlane's default
// in flow mode without SHARP: no HCA, switch device or credit link; its flows follow
// InfinibandFlowTopology over the subnet manager's tables) against the same plane built with
// its devices (the "flow" "BuildDevices" target, flows walking them): the same routes (links
// in order of first use, shares, capacities, latencies), source queues, packet sizes, line
// rates, nodes, `links` and `nodes` rows and description, and the same collective times to
// the picosecond, on one-, two- and three-tier fat trees, with and without adaptive routing.
#include "dgx-collective-run.h"
#include "results-db-fixture.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/infiniband-cluster-plane.h"
#include "ns3/infiniband-flow-topology.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/names.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstdio>
#include <functional>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

struct Shape
{
    std::string name;
    uint32_t servers{2};
    uint32_t gpusPerServer{8};
    uint32_t tiers{0};
    uint32_t radix{0}; //!< 0: the preset's
    bool adaptive{false};
};

ClusterConfig
Config(const Shape& s)
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = s.servers;
    c.gpusPerServer = s.gpusPerServer;
    c.ibTiers = s.tiers;
    if (s.radix != 0)
    {
        c.ibSwitchRadix = s.radix;
    }
    c.fidelity = "flow";
    EXPECT_EQ(c.Validate(), "") << s.name;
    return c;
}

void
Prepare(ClusterHelper& cluster, const Shape& s, bool devices)
{
    cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
    if (devices)
    {
        cluster.GetInfinibandPlane().SetAttribute("flow", "BuildDevices", BooleanValue(true));
    }
    if (s.adaptive)
    {
        cluster.SetSubnetManagerAttribute("AdaptiveRouting", BooleanValue(true));
        cluster.SetIbSwitchAttribute("AdaptiveRouting", BooleanValue(true));
    }
}

std::string
Exact(double v)
{
    char b[64];
    std::snprintf(b, sizeof(b), "%a", v);
    return b;
}

struct Figures
{
    bool described{false};
    uint64_t ibDevices{0};
    uint32_t splitUses{0}; //!< uses with a share below 1 (adaptive groups)
    std::vector<std::string> answers;
    std::vector<std::string> links;
    std::vector<std::string> nodes;
    std::string describe;
};

Figures
Capture(const Shape& s, bool devices)
{
    ClusterHelper cluster(Config(s));
    Prepare(cluster, s, devices);
    EXPECT_EQ(cluster.TryBuild(), "") << s.name;
    Figures f;
    f.described = cluster.GetInfinibandPlane().IsDescribedOnly();
    f.ibDevices = cluster.GetCreditLinkDevices("infiniband").size();
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    Ptr<FlowTransportPlane> flow;
    for (uint32_t i = 0; i < transport->GetNPlanes(); ++i)
    {
        if (transport->GetPlane(i)->GetPlaneName() == "infiniband")
        {
            flow = DynamicCast<FlowTransportPlane>(transport->GetPlane(i));
        }
    }
    EXPECT_TRUE(flow) << s.name;
    if (!flow)
    {
        return f;
    }
    Ptr<TransportPlane> ib = flow->GetPacketPlane();
    EXPECT_TRUE(DynamicCast<InfinibandTransportPlane>(ib));
    EXPECT_EQ(DynamicCast<InfinibandFlowTopology>(flow->GetTopology()) != nullptr, !devices);
    auto& a = f.answers;
    a.push_back("payload " + std::to_string(ib->GetMaxPayloadBytes()) + " burst " +
                std::to_string(ib->GetMaxBurstBytes()) + " overhead " +
                std::to_string(ib->GetPacketOverheadBytes()));
    const uint32_t n = cluster.GetNRanks();
    for (uint32_t src = 0; src < n; ++src)
    {
        a.push_back("rank " + std::to_string(src) + " has " + std::to_string(ib->HasRank(src)) +
                    " node " + std::to_string(ib->GetNodeId(src)) + " line " +
                    Exact(ib->GetLineRate_gbyte_per_s(src)) + " queue " +
                    std::to_string(flow->GetTopology()->GetSourceQueueBytes(src)));
        for (uint32_t dst = 0; dst < n; ++dst)
        {
            std::ostringstream r;
            r << src << "->" << dst << " reach " << ib->CanReach(src, dst);
            if (ib->CanReach(src, dst))
            {
                for (const auto& u : flow->GetPathUses(src, dst))
                {
                    r << " " << u.link << ":" << Exact(u.share) << "@"
                      << Exact(flow->GetNetwork().GetCapacity(u.link));
                    f.splitUses += u.share < 1.0;
                }
                r << " first " << flow->GetFirstPacketLatency(src, dst, 4096).GetPicoSeconds()
                  << " tail " << flow->GetTailLatency(src, dst, 4096).GetPicoSeconds();
                // The topology's hops themselves, to the picosecond (the plane rounds to ns).
                for (const auto& h : flow->GetTopology()->GetRoute(src, dst).hops)
                {
                    r << " hop " << Exact(h.wire_byte_per_s) << " "
                      << h.propagation.GetPicoSeconds() << " " << h.traversal.GetPicoSeconds()
                      << " " << h.cutThroughBytes;
                }
            }
            a.push_back(r.str());
        }
    }
    // collective-bench's analytical model of the InfiniBand ring, from devices or description.
    const CollectiveCostModel m = CollectiveBenchIbModel(cluster, transport, 0, n - 1);
    a.push_back("cost model " + Exact(m.Alpha()) + " " + Exact(m.Beta()));
    results_db_test::WrittenTopologyRows(cluster, f.nodes, f.links);
    f.describe = cluster.Describe();
    Simulator::Destroy();
    Names::Clear();
    return f;
}

const std::vector<Shape>&
Shapes()
{
    static const std::vector<Shape> shapes = {
        {"1-tier (one rail)", 8, 1, 1, 0, false},
        {"2-tier", 2, 8, 0, 0, false},
        {"2-tier, 4 spines", 4, 8, 2, 8, false},
        {"2-tier, 4 spines, adaptive", 4, 8, 2, 8, true},
        {"3-tier", 8, 8, 3, 8, false},
        {"3-tier, adaptive", 8, 8, 3, 8, true},
    };
    return shapes;
}

// Everything the flow plane reads, every row and the description: equal as exact text
// (tolerance 0: doubles printed in hex, times in ps).
TEST(FlowDescribedIbTest, DescribedPlaneAnswersAsTheBuiltOne)
{
    for (const Shape& s : Shapes())
    {
        const Figures built = Capture(s, true);
        const Figures described = Capture(s, false);
        EXPECT_FALSE(built.described) << s.name;
        EXPECT_TRUE(described.described) << s.name;
        EXPECT_GT(built.ibDevices, 0u) << s.name;
        EXPECT_EQ(described.ibDevices, 0u) << s.name;
        ASSERT_EQ(built.answers.size(), described.answers.size()) << s.name;
        for (std::size_t i = 0; i < built.answers.size(); ++i)
        {
            EXPECT_EQ(built.answers[i], described.answers[i]) << s.name;
        }
        // Adaptive groups split flows over several uplinks; single routes never.
        EXPECT_EQ(built.splitUses, described.splitUses) << s.name;
        if (s.adaptive)
        {
            EXPECT_GT(described.splitUses, 0u) << s.name;
        }
        else
        {
            EXPECT_EQ(described.splitUses, 0u) << s.name;
        }
        EXPECT_GT(built.links.size(), 0u) << s.name;
        EXPECT_EQ(built.links, described.links) << s.name;
        EXPECT_EQ(built.nodes, described.nodes) << s.name;
        EXPECT_EQ(built.describe, described.describe) << s.name;
    }
}

// The first packet's latency from rank 0 to rank 7 over one leaf, and the description, with
// \p overrides set through the helper's attributes before the build.
Time
OneLeafFirstPacket(const std::function<void(ClusterHelper&)>& overrides, InfinibandFlowFabric* out)
{
    Shape s{"1-tier (one rail)", 8, 1, 1, 0, false};
    ClusterHelper cluster(Config(s));
    Prepare(cluster, s, false);
    if (overrides)
    {
        overrides(cluster);
    }
    EXPECT_EQ(cluster.TryBuild(), "");
    EXPECT_TRUE(cluster.GetInfinibandPlane().IsDescribedOnly());
    *out = cluster.GetInfinibandPlane().GetFlowFabric();
    Ptr<FlowTransportPlane> flow = CreateObject<FlowTransportPlane>();
    flow->SetTopology(cluster.GetInfinibandPlane().MakeFlowTopology());
    flow->SetPacketPlane(cluster.GetInfinibandPlane().MakeTransportPlane(cluster.GetLayout()));
    EXPECT_EQ(flow->GetPathUses(0, 7).size(), 2u); // HCA -> leaf -> HCA
    const Time t = flow->GetFirstPacketLatency(0, 7, 4096);
    Simulator::Destroy();
    Names::Clear();
    return t;
}

// A cable delay, a switch latency and an HCA queue set through the helper's attributes reach
// the described plane as they reach the devices.
TEST(FlowDescribedIbTest, AttributeOverridesReachTheDescription)
{
    InfinibandFlowFabric base;
    const Time before = OneLeafFirstPacket(nullptr, &base);
    InfinibandFlowFabric f;
    const Time after = OneLeafFirstPacket(
        [](ClusterHelper& cluster) {
            cluster.SetIbChannelAttribute("Delay", TimeValue(NanoSeconds(250)));
            cluster.SetIbSwitchAttribute("PortToPortLatency", TimeValue(NanoSeconds(300)));
            cluster.SetIbDeviceAttribute("MessageQueueBytes", UintegerValue(32768));
        },
        &f);
    EXPECT_EQ(base.propagation, Time(0));        // CreditLinkChannel's default
    EXPECT_EQ(base.traversal, NanoSeconds(130)); // InfinibandSwitch's PortToPortLatency
    EXPECT_EQ(f.propagation, NanoSeconds(250));
    EXPECT_EQ(f.traversal, NanoSeconds(300));
    EXPECT_EQ(f.messageQueueBytes, 32768u);
    // Two cables 250 ns longer, one switch 170 ns slower; the serialisation the same
    // (tolerance 0).
    EXPECT_EQ(after - before, NanoSeconds(2 * 250 + 300 - 130));
    // NDR 4x: 400 Gb/s of data at 16/17 line coding, 425 Gb/s signalled (to the bit).
    EXPECT_EQ(f.signalling_bps, 425000000000u);
    EXPECT_EQ(f.GetFrameRate_bps(), 400000000000);
}

// A described rank's packet: the guard's message, not a null device.
TEST(FlowDescribedIbTest, PacketOnADescribedRankAborts)
{
    Shape s{"1-tier (one rail)", 8, 1, 1, 0, false};
    ClusterHelper cluster(Config(s));
    Prepare(cluster, s, false);
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<TransportPlane> ib = cluster.GetInfinibandPlane().MakeTransportPlane(cluster.GetLayout());
    EXPECT_TRUE(ib->CanReach(0, 1));
    EXPECT_DEATH(ib->Inject(0, 1, 4096, TransportTag()), "has no HCA device");
    Simulator::Destroy();
    Names::Clear();
}

// The collective's time on \p s, described or with devices (collective-bench, out of place).
double
RunOnShape_us(const Shape& s,
              bool devices,
              const std::string& kind,
              const std::string& algorithm,
              uint64_t bytes)
{
    return RunCollective_us(
        Config(s),
        kind,
        algorithm,
        bytes,
        [devices](ClusterHelper& cluster) {
            EXPECT_EQ(cluster.GetInfinibandPlane().IsDescribedOnly(), !devices);
        },
        nullptr,
        [&s, devices](ClusterHelper& cluster) { Prepare(cluster, s, devices); });
}

// Rings across servers, the hierarchical and NVLS-tree allreduce, an alltoall: the same time
// to the picosecond (tolerance 0) on every tier count, adaptive routing on and off.
TEST(FlowDescribedIbTest, CollectiveTimesAreTheBuiltPlanes)
{
    struct Case
    {
        uint32_t shape;
        std::string kind;
        std::string algorithm;
        uint64_t bytes;
    };

    for (const Case& k : {Case{0, "allreduce", "ring", 4 << 20},
                          Case{0, "alltoall", "auto", 1 << 20},
                          Case{1, "allreduce", "ring", 4 << 20},
                          Case{1, "allreduce", "hierarchical", 4 << 20},
                          Case{1, "allreduce", "nvlstree", 4 << 20},
                          Case{1, "alltoall", "auto", 1 << 20},
                          Case{3, "allreduce", "ring", 4 << 20},
                          Case{3, "alltoall", "auto", 1 << 20},
                          Case{4, "allreduce", "hierarchical", 4 << 20},
                          Case{4, "alltoall", "auto", 256 << 10},
                          Case{5, "allreduce", "ring", 4 << 20},
                          Case{5, "alltoall", "auto", 256 << 10}})
    {
        const Shape& s = Shapes()[k.shape];
        const double built = RunOnShape_us(s, true, k.kind, k.algorithm, k.bytes);
        const double described = RunOnShape_us(s, false, k.kind, k.algorithm, k.bytes);
        EXPECT_GT(built, 0) << s.name << " " << k.kind << " " << k.algorithm;
        EXPECT_EQ(built, described)
            << s.name << " " << k.kind << " " << k.algorithm << " " << k.bytes;
    }
}

// SHARP reduces in the switches: the plane keeps its devices in flow mode.
TEST(FlowDescribedIbTest, SharpKeepsTheDevices)
{
    Shape s{"2-tier", 2, 8, 0, 0, false};
    ClusterConfig c = Config(s);
    c.sharp = true;
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    EXPECT_FALSE(cluster.GetInfinibandPlane().IsDescribedOnly());
    EXPECT_GT(cluster.GetCreditLinkDevices("infiniband").size(), 0u);
    Simulator::Destroy();
    Names::Clear();
}

} // namespace
