/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// FlowTopology: the routes of an NVLink domain from its description (NvLinkFlowTopology, no
// devices) against the walk of the devices NvLinkHelper builds from the same description
// (PacketPlaneFlowTopology): the same links in the same order, shares, capacities,
// latencies and source queues, for a DGX H100 and a GB200 NVL72 domain.
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/flow-topology.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/names.h"
#include "ns3/node-container.h"
#include "ns3/nvlink-cluster-plane.h"
#include "ns3/nvlink-helper.h"
#include "ns3/nvlink-net-device.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/nvswitch-core.h"
#include "ns3/simulator.h"

#include <cmath>
#include <gtest/gtest.h>
#include <numeric>
#include <vector>

using namespace ns3;

namespace
{

// NvLinkHelper's defaults, which the description restates: 5 ns channels, 100 ns switch
// traversal, cut-through after the 16 B NVLink header, 1 MiB transmit queue per bundle.
NvLinkFlowDomain
Describe(const NvLinkFabricSpec& spec, uint32_t gpus)
{
    std::vector<uint32_t> ranks(gpus);
    std::iota(ranks.begin(), ranks.end(), 0);
    NvLinkFlowDomain d = NvLinkFlowDomain::FromFabric(spec, ranks);
    d.propagation = NanoSeconds(5);
    d.traversal = NanoSeconds(100);
    d.cutThroughBytes = CreateObject<NvSwitch>()->GetCutThroughBytes();
    d.txQueueBytes = 1 << 20;
    return d;
}

class FlowTopologyTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }

    // Two flow planes over one domain of \p preset: one walking its devices, one reading
    // only its description; every pair's routes must agree exactly.
    void Build(const std::string& preset, uint32_t gpus)
    {
        NvLinkFindFabricPreset(preset, m_spec);
        m_helper.SetFabric(m_spec);
        NodeContainer nodes;
        nodes.Create(gpus);
        m_helper.Install(nodes);
        std::vector<uint32_t> ranks(gpus);
        std::iota(ranks.begin(), ranks.end(), 0);
        m_packet = CreateObject<NvLinkTransportPlane>();
        m_packet->AddDomain(m_helper.GetDomain(), ranks);
        m_walk = CreateObject<FlowTransportPlane>();
        m_walk->SetPacketPlane(m_packet);
        m_described = CreateObject<NvLinkFlowTopology>();
        m_described->AddDomain(Describe(m_spec, gpus));
        m_fromDescription = CreateObject<FlowTransportPlane>();
        m_fromDescription->SetTopology(m_described);
        m_fromDescription->SetPacketPlane(m_packet); // packet sizes only
    }

    void ExpectSameRoutes(uint32_t gpus)
    {
        for (uint32_t s = 0; s < gpus; ++s)
        {
            for (uint32_t t = 0; t < gpus; ++t)
            {
                if (s == t)
                {
                    continue;
                }
                const auto a = m_walk->GetPathUses(s, t);
                const auto b = m_fromDescription->GetPathUses(s, t);
                ASSERT_EQ(a.size(), b.size()) << s << "->" << t;
                for (std::size_t i = 0; i < a.size(); ++i)
                {
                    // Links made in the same order: the same indices, shares bit for bit.
                    EXPECT_EQ(a[i].link, b[i].link) << s << "->" << t << " use " << i;
                    EXPECT_EQ(a[i].share, b[i].share) << s << "->" << t << " use " << i;
                    EXPECT_EQ(m_walk->GetNetwork().GetCapacity(a[i].link),
                              m_fromDescription->GetNetwork().GetCapacity(b[i].link));
                }
                for (uint32_t bytes : {1u, 256u, 4096u, 65536u})
                {
                    EXPECT_EQ(m_walk->GetFirstPacketLatency(s, t, bytes),
                              m_fromDescription->GetFirstPacketLatency(s, t, bytes));
                    EXPECT_EQ(m_walk->GetTailLatency(s, t, bytes),
                              m_fromDescription->GetTailLatency(s, t, bytes));
                }
            }
            EXPECT_EQ(m_walk->GetTopology()->GetSourceQueueBytes(s),
                      m_described->GetSourceQueueBytes(s));
        }
        EXPECT_EQ(m_walk->GetNetwork().GetNLinks(), m_fromDescription->GetNetwork().GetNLinks());
    }

    NvLinkFabricSpec m_spec;
    NvLinkHelper m_helper;
    Ptr<NvLinkTransportPlane> m_packet;
    Ptr<FlowTransportPlane> m_walk;
    Ptr<NvLinkFlowTopology> m_described;
    Ptr<FlowTransportPlane> m_fromDescription;
};

TEST_F(FlowTopologyTest, DgxH100DescriptionGivesTheDeviceWalksRoutes)
{
    Build("dgx-h100", 8);
    ExpectSameRoutes(8);
    // GPU 0 -> 1: up each of the 4 NVSwitch planes and down to GPU 1, shares in proportion
    // to the 5 + 4 + 4 + 5 = 18 links: 5/18, 4/18, 4/18, 5/18 (to 4 ulp).
    const auto uses = m_fromDescription->GetPathUses(0, 1);
    ASSERT_EQ(uses.size(), 8u);
    const double expected[] =
        {5.0 / 18, 5.0 / 18, 4.0 / 18, 4.0 / 18, 4.0 / 18, 4.0 / 18, 5.0 / 18, 5.0 / 18};
    const NvLinkGeneration& g = GetNvLinkGeneration(4);
    const double perLink_byte_per_s = g.linkDataRateBps / 8.0; // 25 GB/s
    const uint32_t links[] = {5, 5, 4, 4, 4, 4, 5, 5};
    for (std::size_t i = 0; i < uses.size(); ++i)
    {
        EXPECT_DOUBLE_EQ(uses[i].share, expected[i]);
        // A bundle of n links: n x 25 GB/s, 1 ppm (signalling x line coding in doubles).
        EXPECT_NEAR(m_fromDescription->GetNetwork().GetCapacity(uses[i].link),
                    links[i] * perLink_byte_per_s,
                    1e-6 * links[i] * perLink_byte_per_s);
    }
    // A 256 B packet (w wire bytes) from a 5-link bundle (125 GB/s) to the next 5-link one:
    // 5 ns + 100 ns + the 16 B cut-through header (0.128 ns) + 5 ns = 110.128 ns -> 110 ns
    // tail, whatever w; its first packet in w / 125 GB/s earlier (rounded to the ns).
    const double w = m_fromDescription->GetWireBytes(256);
    EXPECT_EQ(m_fromDescription->GetTailLatency(0, 1, 256), NanoSeconds(110));
    EXPECT_EQ(m_fromDescription->GetFirstPacketLatency(0, 1, 256),
              NanoSeconds(110 + std::llround(w / 125.0)));
    // Four bundles of 1 MiB transmit queue each.
    EXPECT_EQ(m_described->GetSourceQueueBytes(0), 4u << 20);
}

TEST_F(FlowTopologyTest, Gb200Nvl72DescriptionGivesTheDeviceWalksRoutes)
{
    Build("gb200-nvl72", 72);
    ExpectSameRoutes(72);
    // 18 switch planes of one link each: 36 uses (up, down per plane), each 1/18.
    const auto uses = m_fromDescription->GetPathUses(3, 70);
    ASSERT_EQ(uses.size(), 36u);
    for (const auto& u : uses)
    {
        EXPECT_DOUBLE_EQ(u.share, 1.0 / 18);
    }
    EXPECT_EQ(m_described->GetSourceQueueBytes(3), 18u << 20);
    // Every GPU's 18 bundles, both directions: 72 x 18 x 2 links once every pair is asked.
    EXPECT_EQ(m_fromDescription->GetNetwork().GetNLinks(), 72u * 18 * 2);
}

TEST_F(FlowTopologyTest, DescriptionWithDirectLinksSpraysTheDirectBundles)
{
    // Two GPUs joined by two direct bundles of 2 and 1 links, no switch: the walk and the
    // description both put 2/3 and 1/3 of the flow on them, in the spec's order.
    m_spec.name = "direct";
    m_spec.generation = 4;
    m_spec.switches = 0;
    m_spec.directLinks = {{0, 1, 2}, {0, 1, 1}};
    m_helper.SetFabric(m_spec);
    NodeContainer nodes;
    nodes.Create(2);
    m_helper.Install(nodes);
    m_packet = CreateObject<NvLinkTransportPlane>();
    m_packet->AddDomain(m_helper.GetDomain(), {0, 1});
    m_walk = CreateObject<FlowTransportPlane>();
    m_walk->SetPacketPlane(m_packet);
    m_described = CreateObject<NvLinkFlowTopology>();
    m_described->AddDomain(Describe(m_spec, 2));
    m_fromDescription = CreateObject<FlowTransportPlane>();
    m_fromDescription->SetTopology(m_described);
    m_fromDescription->SetPacketPlane(m_packet);
    ExpectSameRoutes(2);
    const auto uses = m_fromDescription->GetPathUses(1, 0);
    ASSERT_EQ(uses.size(), 2u);
    EXPECT_DOUBLE_EQ(uses[0].share, 2.0 / 3);
    EXPECT_DOUBLE_EQ(uses[1].share, 1.0 / 3);
}

// The cluster's description of its NVLink domains (NvLinkClusterPlane::MakeFlowTopology)
// against the walk of the domains it built, at the preset's link rate and at a swept one.
TEST_F(FlowTopologyTest, ClusterDescriptionGivesTheBuiltDomainsRoutes)
{
    for (double rate_gbyte_per_s : {25.0, 12.5})
    {
        ClusterConfig c;
        ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
        c.servers = 2;
        c.nvlinkLinkRate_gbyte_per_s = rate_gbyte_per_s;
        c.fidelity = "nvlink:flow,infiniband:packet";
        ClusterHelper cluster(c);
        // The devices to walk (a flow plane is described only by default).
        cluster.GetNvLinkPlane().SetAttribute("flow", "BuildDevices", BooleanValue(true));
        ASSERT_EQ(cluster.TryBuild(), "");
        Ptr<TransportPlane> packet =
            cluster.GetNvLinkPlane().MakeTransportPlane(cluster.GetLayout());
        m_walk = CreateObject<FlowTransportPlane>();
        m_walk->SetPacketPlane(packet);
        m_described =
            cluster.GetNvLinkPlane().MakeFlowTopology(cluster.GetConfig(), cluster.GetLayout());
        ASSERT_EQ(m_described->GetNDomains(), 2u);
        m_fromDescription = CreateObject<FlowTransportPlane>();
        m_fromDescription->SetTopology(m_described);
        m_fromDescription->SetPacketPlane(packet);
        EXPECT_FALSE(m_described->CanReach(0, 8)); // servers' domains are apart
        EXPECT_TRUE(m_described->CanReach(8, 15));
        for (uint32_t s = 0; s < 16; ++s)
        {
            for (uint32_t t = s / 8 * 8; t < s / 8 * 8 + 8; ++t)
            {
                if (s == t)
                {
                    continue;
                }
                const auto a = m_walk->GetPathUses(s, t);
                const auto b = m_fromDescription->GetPathUses(s, t);
                ASSERT_EQ(a.size(), b.size());
                for (std::size_t i = 0; i < a.size(); ++i)
                {
                    EXPECT_EQ(a[i].link, b[i].link);
                    EXPECT_EQ(a[i].share, b[i].share);
                    EXPECT_EQ(m_walk->GetNetwork().GetCapacity(a[i].link),
                              m_fromDescription->GetNetwork().GetCapacity(b[i].link));
                }
                EXPECT_EQ(m_walk->GetFirstPacketLatency(s, t, 4096),
                          m_fromDescription->GetFirstPacketLatency(s, t, 4096));
                EXPECT_EQ(m_walk->GetTailLatency(s, t, 4096),
                          m_fromDescription->GetTailLatency(s, t, 4096));
            }
            EXPECT_EQ(m_walk->GetTopology()->GetSourceQueueBytes(s),
                      m_described->GetSourceQueueBytes(s));
        }
        // A 5-link bundle at the configured rate per link, 1 ppm.
        const auto uses = m_fromDescription->GetPathUses(8, 9);
        ASSERT_EQ(uses.size(), 8u);
        EXPECT_NEAR(m_fromDescription->GetNetwork().GetCapacity(uses[0].link),
                    5 * rate_gbyte_per_s * 1e9,
                    5e-6 * rate_gbyte_per_s * 1e9);
        Simulator::Destroy();
        Names::Clear();
    }
}

} // namespace
