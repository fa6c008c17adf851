/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// A flow-level NVLink plane built from its domains' descriptions (NvLinkClusterPlane's
// default in flow mode: no NVLink device, switch core or credit link) against the same plane
// built with its devices (the "flow" "BuildDevices" target): the same routes, links,
// capacities, latencies, source queues, switch planes, packet sizes and NVLS cuts, the same
// `links` and `nodes` rows, and the same collective times to the picosecond.
#include "dgx-collective-run.h"
#include "results-db-fixture.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/names.h"
#include "ns3/nvlink-cluster-plane.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <numeric>
#include <sqlite3.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

void
KeepDevices(ClusterHelper& cluster)
{
    cluster.GetNvLinkPlane().SetAttribute("flow", "BuildDevices", BooleanValue(true));
}

// What the flow-level NVLink plane of a 2-server dgx-h100 cluster answers, as exact text.
struct Figures
{
    bool devices{false};
    std::vector<std::string> answers;
    std::vector<std::string> links;
    std::vector<std::string> nodes;
    std::string describe;
};

std::string
Exact(double v)
{
    char b[64];
    std::snprintf(b, sizeof(b), "%a", v);
    return b;
}

Figures
Capture(bool devices, double rate_gbyte_per_s)
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 2;
    c.nvlinkLinkRate_gbyte_per_s = rate_gbyte_per_s;
    c.fidelity = "flow";
    ClusterHelper cluster(c);
    if (devices)
    {
        KeepDevices(cluster);
    }
    EXPECT_EQ(cluster.TryBuild(), "");
    Figures f;
    f.devices = !cluster.GetCreditLinkDevices("nvlink").empty();
    EXPECT_EQ(cluster.GetNvLinkPlane().IsDescribedOnly(), !devices);
    EXPECT_EQ(cluster.GetNvLinkGpu(0) != nullptr, devices);
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    Ptr<FlowTransportPlane> flow;
    for (uint32_t i = 0; i < transport->GetNPlanes(); ++i)
    {
        if (transport->GetPlane(i)->GetPlaneName() == "nvlink")
        {
            flow = DynamicCast<FlowTransportPlane>(transport->GetPlane(i));
        }
    }
    EXPECT_TRUE(flow);
    if (!flow)
    {
        return f;
    }
    Ptr<NvLinkTransportPlane> nv = DynamicCast<NvLinkTransportPlane>(flow->GetPacketPlane());
    auto& a = f.answers;
    a.push_back("payload " + std::to_string(nv->GetMaxPayloadBytes()) + " burst " +
                std::to_string(nv->GetMaxBurstBytes()) + " overhead " +
                std::to_string(nv->GetPacketOverheadBytes()));
    for (uint32_t s = 0; s < 16; ++s)
    {
        std::ostringstream o;
        o << "rank " << s << " node " << nv->GetNodeId(s) << " line "
          << Exact(nv->GetLineRate_gbyte_per_s(s)) << " queue "
          << flow->GetTopology()->GetSourceQueueBytes(s);
        for (const auto& p : flow->GetTopology()->GetSwitchPlanes(s))
        {
            o << " plane " << p.upLinks << "/" << p.downLinks << " " << Exact(p.up.wire_byte_per_s)
              << " " << Exact(p.down.front().wire_byte_per_s) << " " << p.down.size() << " "
              << p.txQueueBytes << " " << p.engineRatePerLink_bps << " "
              << p.engineLatency.GetPicoSeconds();
        }
        a.push_back(o.str());
        for (uint32_t t = 0; t < 16; ++t)
        {
            std::ostringstream r;
            r << s << "->" << t << " reach " << nv->CanReach(s, t);
            if (nv->CanReach(s, t))
            {
                for (const auto& u : flow->GetPathUses(s, t))
                {
                    r << " " << u.link << ":" << Exact(u.share) << "@"
                      << Exact(flow->GetNetwork().GetCapacity(u.link));
                }
                r << " first " << flow->GetFirstPacketLatency(s, t, 4096).GetPicoSeconds()
                  << " tail " << flow->GetTailLatency(s, t, 4096).GetPicoSeconds();
            }
            a.push_back(r.str());
        }
    }
    for (uint32_t r : {0u, 13u})
    {
        const CollectiveCostModel m = CollectiveBenchNvLinkModel(cluster, transport, r);
        a.push_back("cost model " + Exact(m.Alpha()) + " " + Exact(m.Beta()));
    }
    std::vector<uint32_t> server0(8);
    std::iota(server0.begin(), server0.end(), 0);
    std::vector<uint32_t> both(16);
    std::iota(both.begin(), both.end(), 0);
    a.push_back("nvls " + std::to_string(nv->CanReduceInSwitch(server0)) + " " +
                std::to_string(nv->CanReduceInSwitch(both)));
    using Op = InSwitchReductionPlane::Op;
    for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather})
    {
        for (uint64_t bytes : {uint64_t{64} << 10, uint64_t{4} << 20, uint64_t{256} << 20})
        {
            const auto plan = nv->GetNvlsPlan(op, server0, bytes);
            std::ostringstream o;
            o << "plan " << int(op) << " " << bytes << ": " << plan.toAll << " " << plan.pieceBytes
              << " " << plan.loops << " " << plan.window << " " << plan.packetBytes << " "
              << plan.perPlane << " " << plan.stepDelay.GetPicoSeconds() << " "
              << Exact(plan.slotRate_byte_per_s) << " " << plan.scatterDelay.GetPicoSeconds() << " "
              << plan.gatherDelay.GetPicoSeconds();
            a.push_back(o.str());
        }
    }
    results_db_test::WrittenTopologyRows(cluster, f.nodes, f.links);
    f.describe = cluster.Describe();
    Simulator::Destroy();
    Names::Clear();
    return f;
}

// Routes, links, shares, capacities, latencies, source queues, switch planes, packet sizes,
// line rates, reach, NVLS cuts, collective-bench's NVLink cost model, rows and the
// description: all equal, at the preset's link
// rate and at a swept one.
TEST(FlowDescribedClusterTest, DescribedPlaneAnswersAsTheBuiltOne)
{
    for (double rate : {25.0, 12.5})
    {
        const Figures built = Capture(true, rate);
        const Figures described = Capture(false, rate);
        EXPECT_TRUE(built.devices);
        EXPECT_FALSE(described.devices);
        ASSERT_EQ(built.answers.size(), described.answers.size());
        for (std::size_t i = 0; i < built.answers.size(); ++i)
        {
            EXPECT_EQ(built.answers[i], described.answers[i]);
        }
        // 2 servers x 32 bundles, both directions, then the InfiniBand links.
        ASSERT_GT(built.links.size(), 128u);
        EXPECT_EQ(built.links, described.links);
        EXPECT_EQ(built.nodes, described.nodes);
        EXPECT_EQ(built.describe, described.describe);
    }
}

// The collectives of NVLink (NVLS as flows, ring) and across servers (hierarchical, NVLS
// tree), all planes fluid or NVLink only: the same time to the picosecond (tolerance 0).
TEST(FlowDescribedClusterTest, CollectiveTimesAreTheBuiltPlanes)
{
    struct Case
    {
        std::string fidelity;
        uint32_t servers;
        std::string algorithm;
        uint64_t bytes;
    };

    for (const Case& k : {Case{"flow", 1, "nvls", 16 << 20},
                          Case{"flow", 1, "nvls", 256 << 10},
                          Case{"flow", 1, "ring", 4 << 20},
                          Case{"flow", 2, "hierarchical", 4 << 20},
                          Case{"flow", 2, "nvlstree", 4 << 20},
                          Case{"nvlink:flow,infiniband:packet", 2, "ring", 1 << 20}})
    {
        const double built = RunDgxCollective_us(k.fidelity,
                                                 k.servers,
                                                 "allreduce",
                                                 k.algorithm,
                                                 k.bytes,
                                                 "auto",
                                                 nullptr,
                                                 nullptr,
                                                 KeepDevices);
        const double described =
            RunDgxCollective_us(k.fidelity, k.servers, "allreduce", k.algorithm, k.bytes);
        EXPECT_GT(built, 0) << k.algorithm;
        EXPECT_EQ(built, described) << k.fidelity << " " << k.algorithm << " " << k.bytes;
    }
}

} // namespace
