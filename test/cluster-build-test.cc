/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/infiniband-switch.h"
#include "ns3/names.h"
#include "ns3/node-list.h"
#include "ns3/nvswitch-core.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>
#include <regex>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

class Cluster : public ::testing::Test
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
Preset(const std::string& name, uint32_t servers)
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset(name), "");
    c.servers = servers;
    return c;
}

// Every HCA reaches every other HCA through the subnet manager's LFTs, ending at its HCA.
void
ExpectIbAllPairsReachable(const ClusterHelper& cluster)
{
    Ptr<InfinibandSubnetManager> sm = cluster.GetSubnetManager();
    for (uint32_t a = 0; a < cluster.GetNRanks(); ++a)
    {
        for (uint32_t b = 0; b < cluster.GetNRanks(); ++b)
        {
            if (a == b)
            {
                continue;
            }
            std::vector<InfinibandDirectedLink> path;
            const std::string e =
                sm->TracePath(cluster.GetHcaTopologyNode(a), 1, cluster.GetHcaLid(b), path);
            ASSERT_EQ(e, "") << a << " -> " << b;
            ASSERT_FALSE(path.empty());
            EXPECT_EQ(path.back().toNode, cluster.GetHcaTopologyNode(b)) << a << " -> " << b;
        }
    }
}

struct CountCase
{
    std::string preset;
    uint32_t servers;
    // Expected counts, each from the formula in the comment of the case.
    uint32_t gpus;
    uint32_t tors;
    uint32_t ibSwitches;
    uint32_t ibCables;
    uint32_t ethLinks;
    uint32_t nvswitches;
};

TEST_F(Cluster, NodeAndLinkCountsMatchFormulas)
{
    // gpus = servers x G; ToRs = ceil(servers / serversPerRack); front-end links (routed
    // default) = ToRs x aggs (2) + servers + storage (1); PCIe links = gpus.
    // InfiniBand, rail-optimised 2 tiers, radix k, down = k/2 (1:1): hosts per leaf
    // h = min(servers, k/2), leaves L = G x ceil(servers / h), uplinks U = h, spines
    // S = smallest divisor of U >= ceil(L x U / k); switches = L + S; cables = gpus + L x U.
    std::vector<CountCase> cases = {
        // dgx-h100 x 4: h = 4, L = 8, U = 4, S = 1: 9 switches, 32 + 32 cables
        // NVSwitches = domains x switches per domain: 4 x 4
        {"dgx-h100", 4, 32, 1, 9, 64, 1 * 2 + 4 + 1, 16},
        // dgx-a100 x 8 (k = 40): h = 8, L = 8, U = 8, S = ceil(64/40) = 2: 10 switches, 64 + 64
        {"dgx-a100", 8, 64, 2, 10, 128, 2 * 2 + 8 + 1, 8 * 6},
        // gb200-nvl72 x 18 trays (G = 4, 18 trays per rack): h = 18, L = 4, U = 18,
        // S = ceil(72/64) = 2 (divides 18): 6 switches, 72 + 72 cables; 1 ToR per rack
        {"gb200-nvl72", 18, 72, 1, 6, 144, 1 * 2 + 18 + 1, 18},
    };
    for (const auto& k : cases)
    {
        SCOPED_TRACE(k.preset);
        const uint32_t before = NodeList::GetNNodes();
        ClusterHelper cluster(Preset(k.preset, k.servers));
        ASSERT_EQ(cluster.TryBuild(), "");
        const ClusterConfig& c = cluster.GetConfig();
        auto counts = cluster.GetNodeCounts();
        EXPECT_EQ(counts["gpu"], k.gpus);
        EXPECT_EQ(counts["cpu"], k.servers);
        EXPECT_EQ(counts["storage"], 1u);
        EXPECT_EQ(counts["eth-switch"], k.tors + 2);
        EXPECT_EQ(counts["nvswitch"], k.nvswitches);
        EXPECT_EQ(counts["ib-switch"], k.ibSwitches);
        // NVLink bundles: one per (GPU, switch) pair of a domain (all presets link every GPU
        // to every switch of its domain).
        EXPECT_EQ(cluster.GetNvLinkDevices(0).size(), c.nvswitchesPerDomain);
        EXPECT_NE(cluster.GetHcaDevice(k.gpus - 1), nullptr);
        EXPECT_EQ(cluster.GetHcaDevice(k.gpus - 1)->GetLid(), k.gpus);
        EXPECT_EQ(NodeList::GetNNodes() - before,
                  k.gpus + k.servers + 1 + k.tors + 2 + counts["nvswitch"] + counts["ib-switch"]);
        EXPECT_EQ(cluster.GetNPcieLinks(), k.gpus);
        EXPECT_EQ(cluster.GetNEthernetLinks(), k.ethLinks);
        const InfinibandTopology& t = cluster.GetIbTopology();
        EXPECT_EQ(t.GetHcas().size(), k.gpus);
        EXPECT_EQ(t.GetSwitches().size(), k.ibSwitches);
        EXPECT_EQ(t.GetLinks().size(), k.ibCables);
        EXPECT_EQ(cluster.GetIbShape().tiers, 2u);
        EXPECT_EQ(c.GetNRanks(), k.gpus);
        // Names as documented.
        EXPECT_EQ(Names::Find<Node>("server0/gpu1"), cluster.GetGpuNode(1));
        EXPECT_EQ(Names::Find<Node>("server" + std::to_string(k.servers - 1) + "/cpu"),
                  cluster.GetCpuNode(k.servers - 1));
        EXPECT_NE(Names::Find<Node>("eth/agg1"), nullptr);
        EXPECT_NE(Names::Find<Node>("storage0"), nullptr);
        EXPECT_EQ(Names::Find<Node>("ib/leaf0"), cluster.GetIbSwitchNodes().Get(0));
        const std::string sw = c.serversPerDomain > 1 ? "rack0/nvswitch1" : "server0/nvswitch1";
        EXPECT_EQ(Names::Find<Node>(sw), cluster.GetNvSwitchNodes().Get(1));
        Simulator::Destroy();
        Names::Clear();
    }
}

TEST_F(Cluster, LargeAndThreeTierShapesMatchFormulas)
{
    // dgx-h100 x 128 (k = 64): h = 32, L = 8 x 4 = 32, U = 32, S = ceil(1024/64) = 16 with
    // 2 cables per leaf-spine pair (the SuperPOD shape); cables = 1024 + 32 x 32.
    ClusterIbShape s = ClusterIbShape::Compute(Preset("dgx-h100", 128));
    EXPECT_EQ(s.error, "");
    EXPECT_EQ(s.tiers, 2u);
    EXPECT_EQ(s.leaves, 32u);
    EXPECT_EQ(s.spines, 16u);
    EXPECT_EQ(s.linksPerLeafSpine, 2u);
    EXPECT_EQ(s.cables, 1024u + 32 * 32);

    // Oversubscription 3:1 at k = 64: down = 48, h = 48, U = ceil(48/3) = 16.
    ClusterConfig os = Preset("dgx-h100", 96);
    os.oversubscription = 3;
    s = ClusterIbShape::Compute(os);
    EXPECT_EQ(s.hostsPerLeaf, 48u);
    EXPECT_EQ(s.leafUplinks, 16u);
    EXPECT_EQ(s.leaves, 8u * 2);

    // 3 tiers: k = 16, 64 servers: h = 8, L = 8 x 8 = 64 > 16; pods of P = 8 leaves: 8 pods;
    // aggregation = pods x U = 64, cores = U x P = 64; switches 192;
    // cables = 512 + L x U + aggregation x P = 512 + 512 + 512.
    ClusterConfig three = Preset("dgx-h100", 64);
    three.ibSwitchRadix = 16;
    ClusterHelper cluster(three);
    ASSERT_EQ(cluster.TryBuild(), "");
    s = cluster.GetIbShape();
    EXPECT_EQ(s.tiers, 3u);
    EXPECT_EQ(s.pods, 8u);
    EXPECT_EQ(s.switches, 192u);
    EXPECT_EQ(cluster.GetIbTopology().GetSwitches().size(), 192u);
    EXPECT_EQ(cluster.GetIbTopology().GetLinks().size(), 1536u);
    // Every pair routed, sampled: rank 0 and the last rank of each rail to all ranks.
    Ptr<InfinibandSubnetManager> sm = cluster.GetSubnetManager();
    for (uint32_t a : {0u, 7u, 511u, 300u})
    {
        for (uint32_t b = 0; b < cluster.GetNRanks(); ++b)
        {
            if (a == b)
            {
                continue;
            }
            std::vector<InfinibandDirectedLink> path;
            ASSERT_EQ(sm->TracePath(cluster.GetHcaTopologyNode(a), 1, cluster.GetHcaLid(b), path),
                      "");
            // HCA-leaf, then at most leaf-agg-core-agg-leaf, then leaf-HCA.
            EXPECT_LE(path.size(), 6u);
        }
    }
}

TEST_F(Cluster, RailOptimisedAndEveryPairReachableOnInfiniband)
{
    ClusterHelper cluster(Preset("dgx-h100", 4));
    ASSERT_EQ(cluster.TryBuild(), "");
    ExpectIbAllPairsReachable(cluster);
    Ptr<InfinibandSubnetManager> sm = cluster.GetSubnetManager();
    for (uint32_t a = 0; a < cluster.GetNRanks(); ++a)
    {
        EXPECT_EQ(cluster.GetHcaLid(a), a + 1); // HCAs first, in rank order
        for (uint32_t b = 0; b < cluster.GetNRanks(); ++b)
        {
            if (a == b)
            {
                continue;
            }
            std::vector<InfinibandDirectedLink> path;
            ASSERT_EQ(sm->TracePath(cluster.GetHcaTopologyNode(a), 1, cluster.GetHcaLid(b), path),
                      "");
            // Same rail: one leaf (2 hops); other rail: leaf-spine-leaf (4 hops).
            EXPECT_EQ(path.size(), cluster.GetRail(a) == cluster.GetRail(b) ? 2u : 4u);
        }
    }
}

// Walks the LFTs programmed into the InfiniBand switch objects, device by device.
void
ExpectIbDevicesReachEveryPair(const ClusterHelper& cluster)
{
    for (uint32_t a = 0; a < cluster.GetNRanks(); ++a)
    {
        for (uint32_t b = 0; b < cluster.GetNRanks(); ++b)
        {
            if (a == b)
            {
                continue;
            }
            const uint16_t dlid = cluster.GetHcaDevice(b)->GetLid();
            Ptr<CreditLinkNetDevice> dev = cluster.GetHcaDevice(a)->GetPeer();
            uint32_t hops = 1;
            while (Ptr<InfinibandSwitch> sw = dev->GetNode()->GetObject<InfinibandSwitch>())
            {
                const uint8_t port = sw->GetLftEntry(dlid);
                ASSERT_NE(port, InfinibandSubnetManager::LFT_UNREACHABLE) << a << " -> " << b;
                dev = sw->GetPort(sw->IndexOfIbPort(port))->GetPeer();
                ASSERT_LT(++hops, 8u);
            }
            EXPECT_EQ(dev, cluster.GetHcaDevice(b)) << a << " -> " << b;
            EXPECT_EQ(dev->GetNode(), cluster.GetGpuNode(b));
        }
    }
}

TEST_F(Cluster, InfinibandDevicesForwardEveryPairByTheirLfts)
{
    ClusterHelper cluster(Preset("dgx-h100", 4));
    ASSERT_EQ(cluster.TryBuild(), "");
    ExpectIbDevicesReachEveryPair(cluster);
}

// Every ordered pair of a domain sends over NVLink (the transport's plane for it is the
// NVLink one); each message must complete.
void
ExpectNvLinkCarriesEveryPair(const ClusterHelper& cluster,
                             Ptr<GpuTransport> transport,
                             uint32_t domain,
                             uint64_t& done)
{
    const uint32_t g = cluster.GetConfig().GetGpusPerDomain();
    for (uint32_t a = domain * g; a < (domain + 1) * g; ++a)
    {
        for (uint32_t b = domain * g; b < (domain + 1) * g; ++b)
        {
            if (a != b)
            {
                const int32_t plane = transport->SelectPlane(a, b);
                ASSERT_GE(plane, 0) << a << " -> " << b;
                EXPECT_EQ(transport->GetPlane(plane)->GetPlaneName(), "nvlink") << a << " -> " << b;
                transport->SendMessage(a,
                                       b,
                                       8192,
                                       GpuTransport::DoneCallback(),
                                       Callback<void>([&done]() { ++done; }));
            }
        }
    }
}

TEST_F(Cluster, NvLinkCarriesEveryPairInsideEachDomain)
{
    for (const auto& [preset, servers] :
         std::vector<std::pair<std::string, uint32_t>>{{"dgx-h100", 2}, {"gb200-nvl72", 18}})
    {
        SCOPED_TRACE(preset);
        ClusterHelper cluster(Preset(preset, servers));
        ASSERT_EQ(cluster.TryBuild(), "");
        uint64_t done = 0;
        const uint32_t g = cluster.GetConfig().GetGpusPerDomain();
        const uint32_t domains = cluster.GetConfig().GetNDomains();
        Ptr<GpuTransport> transport = cluster.InstallTransport();
        for (uint32_t d = 0; d < domains; ++d)
        {
            ExpectNvLinkCarriesEveryPair(cluster, transport, d, done);
        }
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        EXPECT_EQ(done, uint64_t(domains) * g * (g - 1));
        // Each NVLink device of a rank ends at an NVSwitch of the rank's own domain.
        for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
        {
            for (const auto& dev : cluster.GetNvLinkDevices(r))
            {
                const std::string name = Names::FindPath(dev->GetPeer()->GetNode());
                const std::string parent =
                    cluster.GetConfig().serversPerDomain > 1 ? "rack" : "server";
                EXPECT_EQ(name.find("/Names/" + parent + std::to_string(cluster.GetDomain(r)) +
                                    "/nvswitch"),
                          0u)
                    << name;
            }
        }
        Simulator::Destroy();
        Names::Clear();
    }
}

uint64_t
NvLinkTxBytes(const ClusterHelper& cluster, uint32_t rank)
{
    uint64_t bytes = 0;
    for (const auto& dev : cluster.GetNvLinkDevices(rank))
    {
        bytes += dev->GetCounters().txBytes;
    }
    return bytes;
}

TEST_F(Cluster, TransportSendsOverTheSelectedPlane)
{
    // Rank 0 sends 1 MiB to rank 1 (same server) and to rank 8 (next server): by default the
    // first goes over NVLink, the second over InfiniBand; with group "dp" forced onto
    // InfiniBand both leave through rank 0's HCA.
    const uint64_t bytes = 1 << 20;
    for (bool forced : {false, true})
    {
        SCOPED_TRACE(forced ? "dp forced onto infiniband" : "default rule");
        ClusterHelper cluster(Preset("dgx-h100", 2));
        ASSERT_EQ(cluster.TryBuild(), "");
        if (forced)
        {
            cluster.ForcePlane("dp", ClusterPlane::INFINIBAND);
        }
        Ptr<GpuTransport> transport = cluster.InstallTransport("dp");
        uint32_t done = 0;
        auto count = MakeBoundCallback(
            +[](uint32_t* n) { ++*n; },
            &done);
        transport->SendMessage(0, 1, bytes, GpuTransport::DoneCallback(), count);
        transport->SendMessage(0, 8, bytes, GpuTransport::DoneCallback(), count);
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        EXPECT_EQ(done, 2u);
        EXPECT_EQ(transport->GetRxBytes(1), bytes);
        EXPECT_EQ(transport->GetRxBytes(8), bytes);
        EXPECT_EQ(transport->GetPlane(transport->SelectPlane(0, 8))->GetPlaneName(), "infiniband");
        EXPECT_EQ(transport->GetPlane(transport->SelectPlane(0, 1))->GetPlaneName(),
                  forced ? "infiniband" : "nvlink");
        const uint64_t hca = cluster.GetHcaDevice(0)->GetCounters().txBytes;
        const uint64_t nvlink = NvLinkTxBytes(cluster, 0);
        if (forced)
        {
            EXPECT_GE(hca, 2 * bytes);
            EXPECT_LT(nvlink, bytes / 100); // nothing but credits
        }
        else
        {
            EXPECT_GE(hca, bytes);
            EXPECT_LT(hca, 2 * bytes);
            EXPECT_GE(nvlink, bytes);
        }
        Simulator::Destroy();
        Names::Clear();
    }
}

TEST_F(Cluster, PlaneSelectionAndForcedPlanes)
{
    ClusterHelper cluster(Preset("dgx-h100", 4));
    ASSERT_EQ(cluster.TryBuild(), "");
    for (uint32_t a = 0; a < 32; ++a)
    {
        for (uint32_t b = 0; b < 32; ++b)
        {
            if (a == b)
            {
                continue;
            }
            // NVLink inside a server (= domain for DGX), InfiniBand between.
            const ClusterPlane expected =
                a / 8 == b / 8 ? ClusterPlane::NVLINK : ClusterPlane::INFINIBAND;
            EXPECT_EQ(cluster.SelectPlane(a, b), expected) << a << " " << b;
            EXPECT_EQ(cluster.GetDomain(a), a / 8);
            EXPECT_EQ(cluster.GetRail(a), a % 8);
        }
    }
    cluster.ForcePlane("dp", ClusterPlane::INFINIBAND);
    EXPECT_EQ(cluster.SelectPlane(0, 1, "dp"), ClusterPlane::INFINIBAND);
    EXPECT_EQ(cluster.SelectPlane(0, 1, "tp"), ClusterPlane::NVLINK);
    cluster.ForcePlane("ckpt", ClusterPlane::ETHERNET);
    EXPECT_EQ(cluster.SelectPlane(0, 9, "ckpt"), ClusterPlane::ETHERNET);
    cluster.ForcePlane("bad", ClusterPlane::NVLINK);
    ClusterPlane p;
    EXPECT_EQ(cluster.TrySelectPlane(0, 1, p, "bad"), "");
    EXPECT_EQ(p, ClusterPlane::NVLINK);
    EXPECT_NE(cluster.TrySelectPlane(0, 8, p, "bad").find("forced onto nvlink"), std::string::npos);
    EXPECT_NE(cluster.TrySelectPlane(3, 3, p).find("itself"), std::string::npos);
    EXPECT_NE(cluster.TrySelectPlane(0, 32, p).find("out of range"), std::string::npos);
    // As a GpuTransport plane selector: plane indices 0 = InfiniBand, 1 = NVLink.
    const std::map<ClusterPlane, int32_t> index = {{ClusterPlane::INFINIBAND, 0},
                                                   {ClusterPlane::NVLINK, 1}};
    GpuTransport::PlaneSelector tp = cluster.MakePlaneSelector(index, "tp");
    GpuTransport::PlaneSelector dp = cluster.MakePlaneSelector(index, "dp");
    GpuTransport::PlaneSelector bad = cluster.MakePlaneSelector(index, "bad");
    GpuTransport::PlaneSelector ckpt = cluster.MakePlaneSelector(index, "ckpt");
    for (uint32_t a = 0; a < 32; ++a)
    {
        for (uint32_t b = 0; b < 32; ++b)
        {
            if (a == b)
            {
                EXPECT_EQ(tp(a, b), -1);
                continue;
            }
            const bool sameServer = a / 8 == b / 8;
            EXPECT_EQ(tp(a, b), sameServer ? 1 : 0);
            EXPECT_EQ(dp(a, b), 0);
            EXPECT_EQ(bad(a, b), sameServer ? 1 : -1);
            EXPECT_EQ(ckpt(a, b), -1); // no Ethernet plane in the transport
        }
    }
    cluster.ClearForcedPlanes();
    EXPECT_EQ(cluster.SelectPlane(0, 1, "dp"), ClusterPlane::NVLINK);
    EXPECT_EQ(dp(0, 1), 0); // a selector keeps the rule it was made with
}

TEST_F(Cluster, Nvl72DomainSpansTheRack)
{
    // 2 racks x 18 trays x 4 GPUs: NVLink within 72 ranks, InfiniBand between racks.
    ClusterHelper cluster(Preset("gb200-nvl72", 36));
    ASSERT_EQ(cluster.TryBuild(), "");
    EXPECT_EQ(cluster.GetNRanks(), 144u);
    EXPECT_EQ(cluster.SelectPlane(0, 71), ClusterPlane::NVLINK);
    EXPECT_EQ(cluster.SelectPlane(3, 4), ClusterPlane::NVLINK); // different trays, same rack
    EXPECT_EQ(cluster.SelectPlane(71, 72), ClusterPlane::INFINIBAND);
    EXPECT_EQ(cluster.GetDomain(143), 1u);
    EXPECT_EQ(cluster.GetNDomains(), 2u);
    const std::vector<uint32_t> ranks = cluster.GetDomainRanks(1);
    ASSERT_EQ(ranks.size(), 72u);
    EXPECT_EQ(ranks.front(), 72u);
    EXPECT_EQ(cluster.GetNvLinkGpuId(ranks.back()), 71u);
    EXPECT_EQ(cluster.GetRail(5), 1u);
    ExpectIbAllPairsReachable(cluster);
    ExpectIbDevicesReachEveryPair(cluster);
}

double
RatioTerm(const std::string& describe, int i)
{
    std::smatch m;
    std::regex re("ratio nvlink : infiniband : front-end = ([0-9.]+) : ([0-9.]+) : ([0-9.]+)");
    EXPECT_TRUE(std::regex_search(describe, m, re)) << describe;
    return m.size() > 3 ? std::stod(m[i + 1]) : -1;
}

TEST_F(Cluster, DescribeRatiosMatchFactSheet)
{
    // Fact sheet: H100 450 GB/s NVLink, 50 GB/s NDR, 2 x 400 GbE / 8 GPUs = 12.5 GB/s: 36:4:1.
    // A100: 300 GB/s, 25 GB/s HDR, 2 x 200 GbE / 8 = 6.25 GB/s: 48:4:1.
    // GB200: 900 GB/s, 50 GB/s, 2 x 400 GbE / 4 GPUs per tray = 25 GB/s: 36:2:1.
    struct
    {
        const char* preset;
        uint32_t servers;
        double nv, ib, eth;
    } cases[] = {{"dgx-h100", 4, 36, 4, 1},
                 {"dgx-a100", 2, 48, 4, 1},
                 {"gb200-nvl72", 18, 36, 2, 1}};

    for (const auto& k : cases)
    {
        SCOPED_TRACE(k.preset);
        ClusterHelper cluster(Preset(k.preset, k.servers));
        ASSERT_EQ(cluster.TryBuild(), "");
        const std::string d = cluster.Describe();
        EXPECT_DOUBLE_EQ(RatioTerm(d, 0), k.nv);
        EXPECT_DOUBLE_EQ(RatioTerm(d, 1), k.ib);
        EXPECT_DOUBLE_EQ(RatioTerm(d, 2), k.eth);
        Simulator::Destroy();
        Names::Clear();
    }
    ClusterHelper h100(Preset("dgx-h100", 4));
    ASSERT_EQ(h100.TryBuild(), "");
    const std::string d = h100.Describe();
    EXPECT_NE(d.find("nvlink      450 GB/s"), std::string::npos) << d;
    EXPECT_NE(d.find("infiniband  50 GB/s"), std::string::npos) << d;
    EXPECT_NE(d.find("front-end   12.5 GB/s"), std::string::npos) << d;
    // Bisection: NVLink 8/2 x 450 GB/s per domain; IB 32/2 x 50 GB/s; Ethernet 4 x 100 GB/s / 2.
    EXPECT_DOUBLE_EQ(h100.GetNvLinkBisectionPerDomain_gbit_per_s(), 4 * 3600.0);
    EXPECT_DOUBLE_EQ(h100.GetIbBisection_gbit_per_s(), 16 * 400.0);
    EXPECT_DOUBLE_EQ(h100.GetEthBisection_gbit_per_s(), 4 * 800.0 / 2);
}

TEST_F(Cluster, OversubscriptionHalvesIbBisection)
{
    // 2:1 at k = 64: down = 42, h = min(84, 42) = 42, U = 21; bisection = leaves x U / 2 x rate.
    ClusterConfig c = Preset("dgx-h100", 84);
    c.oversubscription = 2;
    const ClusterIbShape s = ClusterIbShape::Compute(c);
    EXPECT_EQ(s.hostsPerLeaf, 42u);
    EXPECT_EQ(s.leafUplinks, 21u);
    EXPECT_EQ(s.leaves, 16u);
    // Shape only: the bisection formula, as ClusterHelper computes it after Build.
    EXPECT_EQ(s.leaves * s.leafUplinks * 2, c.GetNRanks()); // exactly half the HCAs' rate goes up
}

struct RejectCase
{
    std::vector<std::string> args;
    std::string message;
};

// The front end's address plan: a /22 per server while 8,192 of them fit in 10.0.0.0/9, then
// the fewest bits holding (GPUs + 1) /30s (exact: powers of two).
TEST_F(Cluster, FrontEndServerBlocksShrinkBeyondEightThousandServers)
{
    ClusterConfig c;
    c.ApplyPreset("dgx-h100");
    for (uint32_t servers : {1u, 4096u, 8192u})
    {
        c.servers = servers;
        EXPECT_EQ(c.GetFrontEndServerBlockBits(), 10u) << servers << " servers";
    }
    c.servers = 8193;
    EXPECT_EQ(c.GetFrontEndServerBlockBits(), 6u); // 9 /30s = 36 addresses -> 64
    c.gpusPerServer = 15;
    EXPECT_EQ(c.GetFrontEndServerBlockBits(), 6u); // 16 /30s = 64 addresses exactly
    c.gpusPerServer = 16;
    EXPECT_EQ(c.GetFrontEndServerBlockBits(), 7u); // 17 /30s = 68 -> 128
    // 2^17 servers of 8 GPUs fill 10.0.0.0/9 exactly; one more does not fit.
    c.gpusPerServer = 8;
    c.servers = 1u << 17;
    std::string field;
    EXPECT_EQ(c.Validate(&field).find("front-end addressing"), std::string::npos);
    c.servers = (1u << 17) + 1;
    EXPECT_NE(c.Validate(&field).find("front-end addressing"), std::string::npos);
    EXPECT_EQ(field, "servers");
}

TEST_F(Cluster, ImpossibleRequestsRejectedBeforeBuilding)
{
    std::vector<RejectCase> cases = {
        {{"--preset=dgx-h100", "--gpusPerServer=72"}, "72 GPUs per NVLink domain"},
        {{"--preset=dgx-h100", "--gpusPerServer=72"}, "at most 12 GPUs"},
        {{"--servers=0", "--preset=dgx-a100"}, "servers must be at least 1"},
        {{"--servers=-1", "--preset=dgx-a100"}, ""}, // -1: the preset's value
        {{"--servers=-3"}, "--servers=-3: expected a count >= 0"},
        {{"--ethRouting=ospf"}, "unknown front-end routing 'ospf'"},
        {{"--preset=dgx-x100"},
         "unknown preset 'dgx-x100'; valid: dgx-a100 dgx-h100 dgx-b200 gb200-nvl72"},
        {{"--preset=dgx-h100", "--servers=64", "--ibRadix=16", "--ibTiers=2"},
         "InfiniBand switch radix 16 too small for 512 HCAs on 8 rails in 2 tier(s): they need 3"},
        {{"--preset=dgx-h100", "--servers=4096", "--ibRadix=8"}, "more than 3 tiers reach"},
        {{"--preset=gb200-nvl72", "--servers=20"}, "multiple of serversPerDomain (18)"},
        {{"--preset=dgx-h100", "--nvlinkGen=7"}, "unknown NVLink generation 7"},
        {{"--preset=dgx-h100", "--oversubscription=0.5"}, "oversubscription 0.5 must be >= 1"},
        {{"--preset=dgx-h100", "--ibRouting=lash"}, "InfiniBand: unknown RoutingEngine \"lash\""},
    };
    for (const auto& k : cases)
    {
        ClusterConfig c;
        CommandLine cmd;
        c.AddCommandLineArguments(cmd);
        std::vector<std::string> argv = {"prog"};
        argv.insert(argv.end(), k.args.begin(), k.args.end());
        cmd.Parse(argv);
        const std::string e = c.ApplyCommandLine();
        if (k.message.empty())
        {
            EXPECT_EQ(e, "");
            continue;
        }
        EXPECT_NE(e.find(k.message), std::string::npos) << "got: " << e;
    }
    ClusterConfig zero;
    zero.servers = 0;
    EXPECT_EQ(zero.Validate(), "servers must be at least 1");
    // Nothing is built on a refused request.
    const uint32_t before = NodeList::GetNNodes();
    ClusterConfig bad;
    bad.gpusPerServer = 72;
    ClusterHelper cluster(bad);
    EXPECT_NE(cluster.TryBuild().find("do not fit"), std::string::npos);
    EXPECT_FALSE(cluster.IsBuilt());
    EXPECT_EQ(NodeList::GetNNodes(), before);
    EXPECT_DEATH(bad.ValidateOrAbort(), "72 GPUs per NVLink domain");
}

TEST_F(Cluster, CommandLineOverridesPresetWhateverTheOrder)
{
    ClusterConfig c;
    CommandLine cmd;
    c.AddCommandLineArguments(cmd);
    cmd.Parse(std::vector<std::string>{"prog",
                                       "--ibRate=800",
                                       "--servers=2",
                                       "--preset=dgx-a100",
                                       "--nvlinkGen=4",
                                       "--racksPerTor=2",
                                       "--pcieRate_gbit_per_s=100"});
    ASSERT_EQ(c.ApplyCommandLine(), "");
    EXPECT_EQ(c.preset, "dgx-a100");
    EXPECT_EQ(c.servers, 2u);
    EXPECT_DOUBLE_EQ(c.ibRate_gbit_per_s, 800); // --ibRate: the deprecated alias still works
    EXPECT_EQ(c.nvlinkLinksPerGpu, 18u);        // NVLink4 figures replace NVLink3's
    EXPECT_EQ(c.nvswitchesPerDomain, 6u);       // the chassis keeps its switches
    EXPECT_EQ(c.racksPerTor, 2u);
    EXPECT_DOUBLE_EQ(c.pcieRate_gbit_per_s, 100);
    EXPECT_EQ(c.ibSwitchRadix, 40u); // preset value kept
}

} // namespace

// The h100 endpoint set derives the engines' rates: NVSwitch 0.85 (nvlsEfficiency) x 20.6
// GB/s a link, SHARP 0.85 (CollNet) x 48 GB/s a port; the program's own value wins, set
// through the cluster's setter or as the type's default (--ns3::NvSwitch::...), and a
// rebuild does not overwrite it.  Exact (DataRate in bit/s).
TEST_F(Cluster, EndpointEngineRatesYieldToTheProgramsOwn)
{
    const auto rates = [](ClusterHelper& cluster) {
        EXPECT_EQ(cluster.TryBuild(), "");
        DataRateValue nvls;
        DataRateValue sharp;
        for (uint32_t i = 0; i < NodeList::GetNNodes(); ++i)
        {
            const Ptr<Node> node = NodeList::GetNode(i);
            if (const Ptr<NvSwitch> sw = node->GetObject<NvSwitch>())
            {
                sw->GetAttribute("NvlsEngineRatePerLink", nvls);
            }
            if (const Ptr<InfinibandSwitch> sw = node->GetObject<InfinibandSwitch>())
            {
                sw->GetAttribute("SharpEngineRatePerPort", sharp);
            }
        }
        return std::make_pair(nvls.Get().GetBitRate(), sharp.Get().GetBitRate());
    };
    ClusterConfig c = Preset("dgx-h100", 2);
    c.sharp = true;
    c.endpoint = "h100";
    {
        ClusterHelper cluster(c);
        const auto derived = rates(cluster);
        EXPECT_EQ(derived.first, static_cast<uint64_t>(0.85 * 20.6 * 8e9));
        EXPECT_EQ(derived.second, static_cast<uint64_t>(0.85 * 48 * 8e9));
    }
    Simulator::Destroy();
    Names::Clear();
    {
        ClusterHelper cluster(c);
        cluster.SetNvSwitchAttribute("NvlsEngineRatePerLink", DataRateValue(DataRate("100Gbps")));
        cluster.SetIbSwitchAttribute("SharpEngineRatePerPort", DataRateValue(DataRate("200Gbps")));
        cluster.SetConfig(c); // as TryBuild does again
        const auto set = rates(cluster);
        EXPECT_EQ(set.first, 100'000'000'000u);
        EXPECT_EQ(set.second, 200'000'000'000u);
    }
    Simulator::Destroy();
    Names::Clear();
    Config::SetDefault("ns3::NvSwitch::NvlsEngineRatePerLink", DataRateValue(DataRate("300Gbps")));
    {
        ClusterHelper cluster(c);
        const auto defaults = rates(cluster);
        EXPECT_EQ(defaults.first, 300'000'000'000u);
        EXPECT_EQ(defaults.second, static_cast<uint64_t>(0.85 * 48 * 8e9));
    }
}
