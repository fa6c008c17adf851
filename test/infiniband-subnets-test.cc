/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// One InfiniBand subnet per rail (--ibSubnets=per-rail): shapes against the fat-tree
// figures, each rail's LIDs and routes, what Validate accepts and refuses, reach across
// rails, and collectives that stay on one rail timed as with one subnet.
#include "dgx-collective-run.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/infiniband-cluster-plane.h"
#include "ns3/infiniband-subnet-manager.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>

using namespace ns3;

namespace
{

class IbSubnets : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }
};

ClusterConfig
PerRail(uint32_t servers, const std::string& subnets = "per-rail")
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = servers;
    c.ibSubnets = subnets;
    return c;
}

std::string
Validate(const std::vector<std::string>& args, std::string* field = nullptr)
{
    ClusterConfig c;
    CommandLine cmd;
    c.AddCommandLineArguments(cmd);
    std::vector<std::string> argv = {"prog"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> ptrs;
    for (auto& a : argv)
    {
        ptrs.push_back(a.data());
    }
    cmd.Parse(static_cast<int>(ptrs.size()), ptrs.data());
    return c.ApplyCommandLine(field);
}

} // namespace

// 16,384 servers, radix 64, per rail: N = 16384 HCAs in a 3-tier non-blocking fat tree of
// k = 64 ports: N/(k/2) = 512 leaves, 512 aggregation switches (16 pods of 32 leaves x 32
// up ports), N/k x 4 = 1024 cores (32 groups of 32), 3N cables; the plane is 8 such trees.
TEST_F(IbSubnets, PerRailShapeIsOneRailsFatTreeTimesTheRails)
{
    const ClusterIbShape s = ClusterIbShape::Compute(PerRail(16384));
    ASSERT_EQ(s.error, "");
    EXPECT_EQ(s.subnets, 8u);
    EXPECT_EQ(s.rails, 8u);
    EXPECT_EQ(s.tiers, 3u);
    EXPECT_EQ(s.hostsPerLeaf, 32u);
    EXPECT_EQ(s.leavesPerRail, 512u);
    EXPECT_EQ(s.leafUplinks, 32u);
    EXPECT_EQ(s.leaves, 8u * 512);
    EXPECT_EQ(s.pods, 8u * 16);
    EXPECT_EQ(s.spines, 8u * 512);
    EXPECT_EQ(s.cores, 8u * 1024);
    EXPECT_EQ(s.switches, 8u * 2048);
    EXPECT_EQ(s.cables, 8u * 3 * 16384);
    const ClusterIbShape one = ClusterIbShape::ComputeSubnet(PerRail(16384));
    EXPECT_EQ(one.switches, 2048u);
    EXPECT_EQ(one.rails, 1u);

    // 64 servers fit one 64-port switch per rail: 1 tier, 8 switches, 512 HCA cables.
    const ClusterIbShape small = ClusterIbShape::Compute(PerRail(64));
    EXPECT_EQ(small.tiers, 1u);
    EXPECT_EQ(small.switches, 8u);
    EXPECT_EQ(small.cables, 512u);
    // 128 servers: 4 leaves of 32 per rail, 4 x 32 uplinks over 2 spines (16 cables per
    // leaf-spine pair), 2N cables per rail.
    const ClusterIbShape two = ClusterIbShape::Compute(PerRail(128));
    EXPECT_EQ(two.tiers, 2u);
    EXPECT_EQ(two.leaves, 8u * 4);
    EXPECT_EQ(two.spines, 8u * 2);
    EXPECT_EQ(two.linksPerLeafSpine, 16u);
    EXPECT_EQ(two.cables, 8u * 2 * 128);
    // One subnet: the same servers' 8 rails share spines (32 leaves x 32 uplinks / 64).
    const ClusterIbShape shared = ClusterIbShape::Compute(PerRail(128, "one"));
    EXPECT_EQ(shared.subnets, 1u);
    EXPECT_EQ(shared.leaves, 32u);
    EXPECT_EQ(shared.spines, 16u);
    EXPECT_EQ(shared.cables, 2048u);
}

// Two switches of two HCAs each, not cabled together: one subnet refuses them; one subnet
// per component numbers each HCA 1, 2 and its switch 3, and routes each on its own.
TEST_F(IbSubnets, SubnetManagerRoutesEachComponentAsItsOwnSubnet)
{
    InfinibandTopology t;
    const uint32_t a0 = t.AddHca("a0");
    const uint32_t a1 = t.AddHca("a1");
    const uint32_t b0 = t.AddHca("b0");
    const uint32_t b1 = t.AddHca("b1");
    const uint32_t sa = t.AddSwitch("sa", 4);
    const uint32_t sb = t.AddSwitch("sb", 4);
    t.Connect(a0, 1, sa, 1);
    t.Connect(a1, 1, sa, 2);
    t.Connect(b0, 1, sb, 1);
    t.Connect(b1, 1, sb, 2);
    Ptr<InfinibandSubnetManager> one = CreateObject<InfinibandSubnetManager>();
    one->SetTopology(t);
    EXPECT_NE(one->TryRoute().find("the fabric is disconnected"), std::string::npos);
    Ptr<InfinibandSubnetManager> sm = CreateObject<InfinibandSubnetManager>();
    sm->SetAttribute("SubnetPerComponent", BooleanValue(true));
    sm->SetTopology(t);
    ASSERT_EQ(sm->TryRoute(), "");
    EXPECT_EQ(sm->GetNSubnets(), 2u);
    EXPECT_EQ(sm->GetMaxLid(), 3);
    for (auto [node, subnet, lid] : {std::tuple<uint32_t, uint32_t, uint16_t>{a0, 0, 1},
                                     {a1, 0, 2},
                                     {sa, 0, 3},
                                     {b0, 1, 1},
                                     {b1, 1, 2},
                                     {sb, 1, 3}})
    {
        EXPECT_EQ(sm->GetSubnet(node), subnet) << t.Describe(node);
        EXPECT_EQ(sm->GetLid(node), lid) << t.Describe(node);
        uint32_t owner = 0;
        uint32_t port = 0;
        ASSERT_TRUE(sm->GetLidOwner(subnet, lid, owner, port));
        EXPECT_EQ(owner, node);
    }
    EXPECT_EQ(sm->GetForwardingTable(sb), (std::vector<uint8_t>{0xff, 1, 2, 0}));
    EXPECT_EQ(sm->GetPortRouteCount(sb, 1), 1u); // b0 only: a0's LID 1 is another subnet's
    std::vector<InfinibandDirectedLink> path;
    EXPECT_EQ(sm->TracePath(b1, 1, 1, path), "");
    EXPECT_EQ(path.back().toNode, b0);
}

// 16,384 dgx-h100 servers: one subnet needs 8 x 512 = 4,096 leaves, more than three tiers of
// radix 64 reach (64 pods of 32 leaves); per rail 512 leaves in 16 pods fit.  Validate
// refuses any cluster over 4,096 servers first for its front end's addresses, so the
// InfiniBand verdict is read from the shape Validate takes it from.
TEST_F(IbSubnets, SixteenThousandServersFitPerRailOnly)
{
    EXPECT_EQ(ClusterIbShape::Compute(PerRail(16384)).error, "");
    const ClusterIbShape one = ClusterIbShape::Compute(PerRail(16384, "one"));
    EXPECT_NE(one.error.find("131072 HCAs on 8 rails need 4096 leaves, more than 3 tiers reach"),
              std::string::npos)
        << one.error;
    EXPECT_NE(one.error.find("--ibSubnets=per-rail"), std::string::npos) << one.error;
    EXPECT_STREQ(one.errorField, "ibRadix");
    // 6,000 servers: 3 tiers hold them, the 49,151 LIDs of one subnet do not (48,000 HCAs
    // and 4,064 switches); per rail 6,000 HCAs and 1,404 switches do.
    const ClusterIbShape lids = ClusterIbShape::Compute(PerRail(6000, "one"));
    EXPECT_NE(lids.error.find("49151 unicast LIDs of one subnet"), std::string::npos) << lids.error;
    EXPECT_EQ(ClusterIbShape::Compute(PerRail(6000)).error, "");
    EXPECT_EQ(ClusterIbShape::Compute(PerRail(6000)).switches, 8u * 1404);

    // Through Validate, at radix 32 (3 tiers: 32 pods of 16 leaves, 8,192 HCAs per subnet):
    // 2,048 servers are 16,384 HCAs on 8 rails for one subnet, 2,048 per rail's.
    std::string field;
    const std::string refused =
        Validate({"--preset=dgx-h100", "--servers=2048", "--ibRadix=32"}, &field);
    EXPECT_NE(refused.find("16384 HCAs on 8 rails need 1024 leaves, more than 3 tiers reach"),
              std::string::npos)
        << refused;
    EXPECT_EQ(field, "ibRadix");
    EXPECT_EQ(
        Validate({"--preset=dgx-h100", "--servers=2048", "--ibRadix=32", "--ibSubnets=per-rail"}),
        "");
    // The limits still hold per rail: radix 8 reaches 8 pods of 4 leaves = 128 servers.
    const std::string tiny =
        Validate({"--preset=dgx-h100", "--servers=256", "--ibRadix=8", "--ibSubnets=per-rail"});
    EXPECT_NE(tiny.find("256 HCAs on 1 rail need 64 leaves, more than 3 tiers reach"),
              std::string::npos)
        << tiny;
}

TEST_F(IbSubnets, BadValuesRefusedNamingTheFlag)
{
    std::string field;
    const std::string bad = Validate({"--ibSubnets=two"}, &field);
    EXPECT_NE(bad.find("unknown --ibSubnets 'two'; valid: one, per-rail"), std::string::npos)
        << bad;
    EXPECT_EQ(field, "ibSubnets");
    field.clear();
    const std::string roce = Validate({"--scaleOut=roce", "--ibSubnets=per-rail"}, &field);
    EXPECT_NE(roce.find("--ibSubnets=one"), std::string::npos) << roce;
    EXPECT_EQ(field, "ibSubnets");
}

// 64 servers at radix 8 per rail: 16 leaves of 4 hosts, 4 pods of 4 leaves, 16 aggregation
// switches, 16 cores: 48 switches per rail.  Each rail's subnet numbers its 64 HCAs 1..64 in
// rank order and its switches 65..112; every route between two HCAs stays in the rail.
TEST_F(IbSubnets, EachRailItsOwnLidsAndRoutes)
{
    ClusterConfig c = PerRail(64);
    c.ibSwitchRadix = 8;
    ASSERT_EQ(c.Validate(), "");
    InfinibandClusterPlane plane;
    ASSERT_EQ(plane.Prepare(c, c.GetLayout()), "");
    const ClusterLayout layout = c.GetLayout();
    Ptr<InfinibandSubnetManager> sm = plane.GetSubnetManager();
    ASSERT_EQ(sm->GetNSubnets(), 8u);
    EXPECT_EQ(plane.GetShape().switches, 8u * 48);
    EXPECT_EQ(sm->GetTopology().GetSwitches().size(), 8u * 48);
    EXPECT_EQ(sm->GetMaxLid(), 64 + 48);
    std::map<uint32_t, uint32_t> hcasOfRail;
    for (uint32_t r = 0; r < layout.GetNRanks(); ++r)
    {
        const uint32_t rail = layout.GetRail(r);
        const uint32_t node = plane.GetHcaTopologyNode(r);
        EXPECT_EQ(sm->GetSubnet(node), rail);
        EXPECT_EQ(sm->GetLid(node), ++hcasOfRail[rail]) << "rank " << r;
        uint32_t owner = 0;
        uint32_t port = 0;
        ASSERT_TRUE(sm->GetLidOwner(rail, sm->GetLid(node), owner, port));
        EXPECT_EQ(owner, node);
    }
    for (uint32_t sw : sm->GetTopology().GetSwitches())
    {
        const uint32_t rail = sm->GetSubnet(sw);
        EXPECT_EQ(plane.GetSwitchName(sw).rfind("ib/r" + std::to_string(rail) + "/", 0), 0u)
            << plane.GetSwitchName(sw);
        EXPECT_GT(sm->GetLid(sw), 64u);
        EXPECT_LE(sm->GetLid(sw), 112u);
        EXPECT_EQ(sm->GetForwardingTable(sw).size(), 113u); // LIDs 0..112 of its subnet
    }
    for (uint32_t src = 0; src < layout.GetNRanks(); ++src)
    {
        for (uint32_t dst = 0; dst < layout.GetNRanks(); ++dst)
        {
            if (src == dst || layout.GetRail(src) != layout.GetRail(dst))
            {
                continue;
            }
            std::vector<InfinibandDirectedLink> path;
            const uint32_t from = plane.GetHcaTopologyNode(src);
            const uint32_t to = plane.GetHcaTopologyNode(dst);
            ASSERT_EQ(sm->TracePath(from, 1, sm->GetLid(to), path), "");
            EXPECT_EQ(path.back().toNode, to);
            EXPECT_LE(path.size(), 6u); // at most leaf, agg, core, agg, leaf: 6 cables
            for (const auto& hop : path)
            {
                ASSERT_EQ(sm->GetSubnet(hop.toNode), layout.GetRail(src));
            }
        }
    }
}

// One subnet keeps today's names and LIDs (rank r has LID r + 1 there, and only there).
TEST_F(IbSubnets, OneSubnetKeepsNamesAndLids)
{
    ClusterConfig c = PerRail(64, "one");
    InfinibandClusterPlane plane;
    ASSERT_EQ(plane.Prepare(c, c.GetLayout()), "");
    Ptr<InfinibandSubnetManager> sm = plane.GetSubnetManager();
    EXPECT_EQ(sm->GetNSubnets(), 1u);
    EXPECT_EQ(sm->GetLid(plane.GetHcaTopologyNode(511)), 512);
    EXPECT_EQ(plane.GetSwitchName(sm->GetTopology().GetSwitches().front()), "ib/leaf0");
}

TEST_F(IbSubnets, RanksOfDifferentRailsAndServersDoNotReach)
{
    ClusterConfig c = PerRail(2);
    c.endpoint = "ideal";
    ClusterHelper cluster(c);
    cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    EXPECT_TRUE(transport->CanReach(0, 8));  // rail 0 of both servers: InfiniBand
    EXPECT_TRUE(transport->CanReach(0, 1));  // one server: NVLink
    EXPECT_FALSE(transport->CanReach(0, 9)); // rail 0 to rail 1 of another server: none
    try
    {
        transport->SendMessage(0, 9, 4096, MakeNullCallback<void>(), MakeNullCallback<void>());
        ADD_FAILURE() << "a cross-rail message between servers was sent";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_STREQ(e.what(), "GpuTransport::SendMessage: no plane reaches rank 9 from rank 0");
    }
    // The alltoall's direct sends cross rails: refused before anything is sent (the ideal
    // endpoint has no NCCL, so no PXN relay: PxnRelaysCrossRailSends below).
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetTransport(transport);
    std::vector<uint32_t> ranks;
    for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
    {
        ranks.push_back(r);
    }
    CollectiveBenchOptions o;
    o.collective = "alltoall";
    o.inPlace = "out";
    try
    {
        CollectiveBenchRun(o, ranks, {1 << 20}, engine);
        ADD_FAILURE() << "a cross-rail alltoall ran";
    }
    catch (const CollectiveError& e)
    {
        EXPECT_NE(std::string(e.what()).find("which no plane reaches"), std::string::npos)
            << e.what();
    }
}

// 2 servers: one subnet puts each rail on its own leaf (8 leaves of 2 hosts under one
// spine), per rail each rail is one switch: the same HCA-leaf-HCA routes, so rings, the
// hierarchical allreduce, the NVLS tree and the allgather take the same time, to the
// picosecond (tolerance 0: the same events in the same order).
TEST_F(IbSubnets, CollectivesOnOneRailTimedAsWithOneSubnet)
{
    std::map<std::string, double> time_us[2];
    const std::string modes[2] = {"one", "per-rail"};
    for (uint32_t m = 0; m < 2; ++m)
    {
        ClusterConfig c = PerRail(2, modes[m]);
        ClusterHelper cluster(c);
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        ASSERT_EQ(cluster.TryBuild(), "");
        Ptr<GpuTransport> transport = cluster.InstallTransport("world");
        // The h100 endpoint's NCCL rings: one per channel, each crossing between servers on
        // its own rail (RingsAcrossDomains); a ring in rank order would cross rails.
        Ptr<CollectiveEngine> engine = cluster.InstallCollectiveEngine(transport);
        std::vector<uint32_t> ranks;
        for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
        {
            ranks.push_back(r);
        }
        for (auto [kind, algorithm] : {std::pair<const char*, const char*>{"allreduce", "ring"},
                                       {"allreduce", "hierarchical"},
                                       {"allreduce", "nvlstree"},
                                       {"allgather", "ring"}})
        {
            CollectiveBenchOptions o;
            o.collective = kind;
            o.algorithm = algorithm;
            o.inPlace = "out";
            const auto rows = CollectiveBenchRun(o, ranks, {1 << 20}, engine);
            time_us[m][std::string(kind) + "/" + algorithm] = rows.front().outOfPlace.time_us;
        }
        Simulator::Destroy();
        Names::Clear();
    }
    ASSERT_EQ(time_us[0].size(), 4u);
    for (const auto& [name, t] : time_us[0])
    {
        EXPECT_GT(t, 0.0) << name;
        EXPECT_EQ(time_us[1][name], t) << name;
    }
}

namespace
{
// The schedule of \p kind over every rank of a cluster built from \p c: its network sends
// (between servers) and how many of them cross rails.
std::pair<uint64_t, uint64_t>
NetworkSends(const ClusterConfig& c, const std::string& kind, uint64_t bytes)
{
    ClusterHelper cluster(c);
    cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
    EXPECT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    Ptr<CollectiveEngine> engine = cluster.InstallCollectiveEngine(transport);
    CollectiveSpec spec;
    spec.kind = kind;
    spec.bytes = bytes;
    for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
    {
        spec.ranks.push_back(r);
    }
    uint64_t network = 0;
    uint64_t crossRail = 0;
    // Held: GetSteps refers into the schedule, which must outlive the loop.
    const CollectiveSchedule schedule = engine->BuildSchedule(spec);
    for (const auto& step : schedule.GetSteps())
    {
        if (!step.join && step.src / 8 != step.dst / 8)
        {
            ++network;
            crossRail += step.src % 8 != step.dst % 8;
        }
    }
    Simulator::Destroy();
    Names::Clear();
    return {network, crossRail};
}

// NCCL_P2P_PXN_LEVEL=0 (Never) on per-rail subnets: a send across rails and servers has no
// plane, and the collective is refused naming the pair.
void
ExpectRefusedWithoutPxn(const std::string& kind, uint64_t bytes)
{
    ClusterConfig off = PerRail(2);
    off.nccl.pxnLevel = "0";
    try
    {
        RunCollective_us(off, kind, "auto", bytes);
        ADD_FAILURE() << "a cross-rail " << kind << " ran without PXN on per-rail subnets";
    }
    catch (const CollectiveError& e)
    {
        EXPECT_NE(std::string(e.what()).find("which no plane reaches"), std::string::npos)
            << e.what();
    }
    Simulator::Destroy();
    Names::Clear();
}
} // namespace

// NCCL's PXN (NcclEndpoint Pxn, NCCL_P2P_PXN_LEVEL): a send to a GPU of another server on
// another rail leaves from the NIC of the sender's server-mate on the peer's rail, copied
// there over NVLink.  2 servers, h100 endpoint, alltoall of 64 MiB per rank (4 MiB per
// peer): each HCA sends its own piece to its rail peer and the 7 pieces its server-mates
// relay to that peer, 8 x 4 MiB, as each HCA does with one subnet (relayed the same way by
// default, or through the spine with Pxn Unreachable).  So the per-rail run takes the
// one-subnet time within 5 % (what PXN adds: each relayed piece's first 256 KiB chunk over
// NVLink, about 1 us, and the NVLink copies, 28 MiB per GPU beside its own 28 MiB to its
// server-mates, at about 370 GB/s: 0.15 ms overlapped with 0.7 ms of InfiniBand), and
// neither beats the HCA's wire: 32 MiB at 50 GB/s (400 Gb/s) = 671 us.
TEST_F(IbSubnets, PxnRelaysCrossRailSends)
{
    const uint64_t bytes = 64 << 20;
    ClusterConfig one = PerRail(2, "one");
    ClusterConfig perRail = PerRail(2);
    const double one_us = RunCollective_us(one, "alltoall", "auto", bytes);
    const double pxn_us = RunCollective_us(perRail, "alltoall", "auto", bytes);
    const double wire_us = 8.0 * 4 * (1 << 20) / 50e9 * 1e6;
    EXPECT_GT(one_us, wire_us);
    EXPECT_GT(pxn_us, wire_us);
    EXPECT_NEAR(pxn_us, one_us, 0.05 * one_us);

    // CrossRail (the default, and NCCL's levels 1 and 2) relays on one subnet too: every
    // network send of the schedule then stays on its rail; Unreachable leaves the
    // cross-rail sends direct there, through the spine.
    struct Case
    {
        const char* level; // NCCL_P2P_PXN_LEVEL ("": unset)
        const char* pxn;   // NcclEndpoint Pxn ("": the default)
        uint64_t crossRail;
    };

    // Unreachable: 16 ranks x 7 peers on another server and rail, one send each.
    for (const Case& k :
         {Case{"", "", 0}, Case{"1", "", 0}, Case{"2", "", 0}, Case{"", "Unreachable", 16 * 7}})
    {
        ClusterConfig c = PerRail(2, "one");
        c.nccl.pxnLevel = k.level;
        if (*k.pxn)
        {
            Config::SetDefault("ns3::NcclEndpoint::Pxn", StringValue(k.pxn));
        }
        const auto [network, crossRail] = NetworkSends(c, "alltoall", bytes);
        SCOPED_TRACE(std::string(k.level) + "/" + k.pxn);
        EXPECT_GT(network, 0u);
        EXPECT_EQ(crossRail, k.crossRail);
        Config::Reset();
    }
    // Without the relay each HCA still carries 8 x 4 MiB, the cross-rail ones through the
    // spine: the same wire-bound time within 5 %.
    Config::SetDefault("ns3::NcclEndpoint::Pxn", StringValue("Unreachable"));
    const double direct_us = RunCollective_us(one, "alltoall", "auto", bytes);
    Config::Reset();
    EXPECT_NEAR(direct_us, one_us, 0.05 * one_us);
    std::cout << "[pxn] alltoall 64 MiB, 2 servers: one subnet CrossRail " << one_us
              << " us, Unreachable " << direct_us << " us; per-rail " << pxn_us << " us; wire "
              << wire_us << " us\n";

    // NCCL_P2P_PXN_LEVEL=0 (Never): no relay, so the per-rail fabric cannot run the alltoall.
    ExpectRefusedWithoutPxn("alltoall", bytes);
}

// A sendrecv (nccl-tests sendrecv_perf: rank r sends to r + 1) crosses rails between the two
// servers at 7 -> 8 and 15 -> 0, and NCCL relays those sends as it does an alltoall's: 7's
// bytes go over NVLink to rank 0 and leave from rail 0's HCA.  So with PXN the schedule has
// no network send across rails, the per-rail fabric runs it, both fabrics take the same
// time, and no time beats the HCA's wire: 64 MiB at 50 GB/s (400 Gb/s) = 1342 us.
TEST_F(IbSubnets, PxnRelaysCrossRailSendRecv)
{
    const uint64_t bytes = 64 << 20;
    EXPECT_EQ(NetworkSends(PerRail(2, "one"), "sendrecv", bytes).second, 0u);
    // Unreachable: the one subnet reaches rank 8 from rank 7's own HCA, through the spine.
    Config::SetDefault("ns3::NcclEndpoint::Pxn", StringValue("Unreachable"));
    EXPECT_EQ(NetworkSends(PerRail(2, "one"), "sendrecv", bytes).second, 2u);
    Config::Reset();

    const double one_us = RunCollective_us(PerRail(2, "one"), "sendrecv", "auto", bytes);
    const double perRail_us = RunCollective_us(PerRail(2), "sendrecv", "auto", bytes);
    const double wire_us = double(bytes) / 50e9 * 1e6;
    EXPECT_GT(one_us, wire_us);
    // The same relays on the same rails: the same time within 1 %.
    EXPECT_NEAR(perRail_us, one_us, 0.01 * one_us);
    std::cout << "[pxn] sendrecv 64 MiB, 2 servers: one subnet " << one_us << " us, per-rail "
              << perRail_us << " us; wire " << wire_us << " us\n";

    ExpectRefusedWithoutPxn("sendrecv", bytes);
}
