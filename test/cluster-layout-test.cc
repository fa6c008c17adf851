/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// ClusterLayout: rank arithmetic and the split of a cluster over processes, against
// figures worked out by hand.  Every quantity is an integer: equality, no tolerance.
#include "ns3/cluster-config.h"
#include "ns3/cluster-layout.h"
#include "ns3/infiniband-topology.h"

#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

TEST(ClusterLayout, RanksGoServerByServerAndDomainByDomain)
{
    // 4 servers of 8 GPUs, NVLink domains of 2 servers: 32 ranks, 2 domains of 16.
    const ClusterLayout l(4, 8, 2);
    EXPECT_EQ(l.GetNRanks(), 32u);
    EXPECT_EQ(l.GetNServers(), 4u);
    EXPECT_EQ(l.GetGpusPerServer(), 8u);
    EXPECT_EQ(l.GetNDomains(), 2u);
    EXPECT_EQ(l.GetGpusPerDomain(), 16u);
    // rank 19 = server 2 (19 / 8), GPU 3 (19 % 8), domain 1 (server 2 / 2), GPU id 3 (19 % 16)
    EXPECT_EQ(l.GetServer(19), 2u);
    EXPECT_EQ(l.GetLocalIndex(19), 3u);
    EXPECT_EQ(l.GetRail(19), 3u);
    EXPECT_EQ(l.GetDomain(19), 1u);
    EXPECT_EQ(l.GetDomainGpuId(19), 3u);
    // rank 15 = last GPU of server 1, still domain 0: GPU id 15
    EXPECT_EQ(l.GetServer(15), 1u);
    EXPECT_EQ(l.GetDomain(15), 0u);
    EXPECT_EQ(l.GetDomainGpuId(15), 15u);
    for (uint32_t r = 0; r < l.GetNRanks(); ++r)
    {
        EXPECT_EQ(l.GetRank(l.GetServer(r), l.GetLocalIndex(r)), r);
        const std::vector<uint32_t> domain = l.GetDomainRanks(l.GetDomain(r));
        EXPECT_EQ(domain.at(l.GetDomainGpuId(r)), r);
    }
    std::vector<uint32_t> second;
    for (uint32_t r = 16; r < 32; ++r)
    {
        second.push_back(r);
    }
    EXPECT_EQ(l.GetDomainRanks(1), second);
}

TEST(ClusterLayout, Gb200TraysFormOneDomain)
{
    // GB200 NVL72: 18 trays of 4 GPUs in one NVLink domain of 72.
    const ClusterLayout l(18, 4, 18);
    EXPECT_EQ(l.GetNDomains(), 1u);
    EXPECT_EQ(l.GetGpusPerDomain(), 72u);
    EXPECT_EQ(l.GetServer(71), 17u);
    EXPECT_EQ(l.GetRail(71), 3u);
    EXPECT_EQ(l.GetDomain(71), 0u);
    EXPECT_EQ(l.GetDomainGpuId(71), 71u);
}

TEST(ClusterLayout, MatchesTheConfigItDescribes)
{
    ClusterConfig c;
    ASSERT_EQ(c.ApplyPreset("gb200-nvl72"), "");
    c.servers = 2 * c.serversPerDomain;
    ASSERT_EQ(c.Validate(), "");
    const ClusterLayout l = c.GetLayout();
    EXPECT_EQ(l.GetNRanks(), c.GetNRanks());
    EXPECT_EQ(l.GetNDomains(), 2u);
    EXPECT_EQ(l.GetGpusPerDomain(), c.GetGpusPerDomain());
}

TEST(ClusterLayout, RailOptimisedLeaves)
{
    // 8 rails, 2 servers per leaf of a rail: leaf = (server / 2) x 8 + rail, port server % 2 + 1.
    const ClusterLayout l(4, 8, 1);
    EXPECT_EQ(l.GetIbLeaf(19, 2, 8), 11u); // server 2, rail 3: 1 x 8 + 3
    EXPECT_EQ(l.GetIbLeafPort(19, 2), 1u);
    EXPECT_EQ(l.GetIbLeaf(11, 2, 8), 3u); // server 1, rail 3: 0 x 8 + 3
    EXPECT_EQ(l.GetIbLeafPort(11, 2), 2u);
    EXPECT_EQ(l.GetIbLeaf(31, 2, 8), 15u); // server 3, rail 7: 1 x 8 + 7
}

TEST(ClusterLayout, PartitionKeepsDomainsWhole)
{
    const ClusterLayout l(8, 8, 1); // 8 domains
    std::vector<uint32_t> system;
    ASSERT_EQ(l.PartitionDomains(3, "domain-blocks", system), "");
    // floor(d x 3 / 8)
    EXPECT_EQ(system, (std::vector<uint32_t>{0, 0, 0, 1, 1, 1, 2, 2}));
    ASSERT_EQ(l.PartitionDomains(3, "round-robin", system), "");
    EXPECT_EQ(system, (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 1}));
    EXPECT_NE(l.PartitionDomains(9, "domain-blocks", system).find("never split"),
              std::string::npos);
    EXPECT_NE(l.PartitionDomains(0, "domain-blocks", system).find("use 1 to 8"), std::string::npos);
}

TEST(ClusterLayout, SwitchesFollowTheirFirstHost)
{
    // 2 servers of 2 GPUs, one domain per server on process 0 and 1.  Rail leaves: leaf0
    // cabled to rank 2 first, leaf1 to rank 1 first; two spines without hosts.
    const ClusterLayout l(2, 2, 1);
    InfinibandTopology t;
    std::vector<uint32_t> hca;
    for (uint32_t r = 0; r < 4; ++r)
    {
        hca.push_back(t.AddHca("hca" + std::to_string(r)));
    }
    const uint32_t leaf0 = t.AddSwitch("leaf0", 4);
    const uint32_t leaf1 = t.AddSwitch("leaf1", 4);
    const uint32_t spine0 = t.AddSwitch("spine0", 4);
    const uint32_t spine1 = t.AddSwitch("spine1", 4);
    t.Connect(hca[2], 1, leaf0, 1);
    t.Connect(hca[0], 1, leaf0, 2);
    t.Connect(hca[1], 1, leaf1, 1);
    t.Connect(hca[3], 1, leaf1, 2);
    t.Connect(leaf0, 3, spine0, 1);
    t.Connect(leaf1, 3, spine0, 2);
    t.Connect(leaf0, 4, spine1, 1);
    t.Connect(leaf1, 4, spine1, 2);
    const std::vector<uint32_t> system = l.GetIbSwitchSystemIds(t, hca, {0, 1}, 2);
    ASSERT_EQ(system.size(), t.GetNNodes());
    EXPECT_EQ(system[leaf0], 1u);  // rank 2: server 1, domain 1
    EXPECT_EQ(system[leaf1], 0u);  // rank 1: server 0, domain 0
    EXPECT_EQ(system[spine0], 0u); // host-less switches round-robin: 0 % 2
    EXPECT_EQ(system[spine1], 1u); // 1 % 2
}

TEST(ClusterLayoutDeathTest, RankOutOfRangeAborts)
{
    const ClusterLayout l(2, 4, 1);
    EXPECT_DEATH(l.GetServer(8), "rank 8 out of range \\(8 ranks\\)");
    EXPECT_DEATH(l.GetDomainRanks(2), "no NVLink domain 2");
}

} // namespace
