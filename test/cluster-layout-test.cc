/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// ClusterLayout (where a rank sits, which process simulates a domain) and ClusterPlaneRules
// (which plane carries a pair) are pure: checked here against hand-computed figures, without
// building a cluster.
#include "ns3/cluster-layout.h"
#include "ns3/cluster-plane.h"

#include <gtest/gtest.h>

namespace ns3
{
namespace
{

// 4 servers x 8 GPUs, NVLink domains of 2 servers (16 GPUs): rank = server x 8 + local.
TEST(ClusterLayout, RankArithmetic)
{
    const ClusterLayout l(4, 8, 2);
    EXPECT_EQ(l.GetNRanks(), 32u);
    EXPECT_EQ(l.GetNDomains(), 2u);
    EXPECT_EQ(l.GetGpusPerDomain(), 16u);
    // Rank 13: server 13 / 8 = 1, local 13 mod 8 = 5 (= rail), domain 1 / 2 = 0, GPU id 13.
    EXPECT_EQ(l.GetServer(13), 1u);
    EXPECT_EQ(l.GetLocalIndex(13), 5u);
    EXPECT_EQ(l.GetRail(13), 5u);
    EXPECT_EQ(l.GetDomain(13), 0u);
    EXPECT_EQ(l.GetGpuIdInDomain(13), 13u);
    // Rank 16 opens domain 1 as its GPU 0.
    EXPECT_EQ(l.GetDomain(16), 1u);
    EXPECT_EQ(l.GetGpuIdInDomain(16), 0u);
    EXPECT_TRUE(l.SameDomain(0, 15));
    EXPECT_FALSE(l.SameDomain(15, 16));
    const std::vector<uint32_t> d1 = l.GetDomainRanks(1);
    ASSERT_EQ(d1.size(), 16u);
    EXPECT_EQ(d1.front(), 16u);
    EXPECT_EQ(d1.back(), 31u);
}

TEST(ClusterLayout, PartitionKeepsDomainsWhole)
{
    ClusterLayout l(8, 8, 1); // 8 domains of one server
    ClusterLayout::PartitionPolicy policy;
    ASSERT_EQ(ClusterLayout::ParsePartitionPolicy("domain-blocks", policy), "");
    ASSERT_EQ(l.Partition(3, policy), "");
    // Domain d on floor(d x 3 / 8): 0 0 0 1 1 1 2 2.
    const uint32_t blocks[] = {0, 0, 0, 1, 1, 1, 2, 2};
    for (uint32_t d = 0; d < 8; ++d)
    {
        EXPECT_EQ(l.GetDomainSystemId(d), blocks[d]) << d;
    }
    EXPECT_EQ(l.GetRankSystemId(8 * 5 + 3), 1u); // a GPU of domain 5
    ASSERT_EQ(ClusterLayout::ParsePartitionPolicy("round-robin", policy), "");
    ASSERT_EQ(l.Partition(3, policy), "");
    for (uint32_t d = 0; d < 8; ++d)
    {
        EXPECT_EQ(l.GetDomainSystemId(d), d % 3) << d;
    }
    EXPECT_EQ(l.GetNSystems(), 3u);
    // More processes than domains would split a domain: refused, everything on process 0.
    EXPECT_NE(l.Partition(9, policy).find("a domain is never split"), std::string::npos);
    EXPECT_EQ(l.GetDomainSystemId(7), 0u);
    EXPECT_NE(ClusterLayout::ParsePartitionPolicy("by-rail", policy).find("valid:"),
              std::string::npos);
}

TEST(ClusterPlaneRules, DefaultTable)
{
    const ClusterLayout l(4, 8, 1);
    ClusterPlaneRules rules(l, ClusterPlaneRules::DefaultRows());
    ClusterPlane p;
    ASSERT_EQ(rules.TrySelect(0, 7, p, ""), "");
    EXPECT_EQ(p, ClusterPlane::NVLINK);
    ASSERT_EQ(rules.TrySelect(0, 8, p, ""), "");
    EXPECT_EQ(p, ClusterPlane::INFINIBAND);
    rules.SetAvailable({{ClusterPlane::INFINIBAND, 0}, {ClusterPlane::NVLINK, 1}});
    EXPECT_EQ(rules.SelectIndex(0, 7, ""), 1);
    EXPECT_EQ(rules.SelectIndex(0, 8, ""), 0);
    EXPECT_EQ(rules.SelectIndex(3, 3, ""), -1);
    EXPECT_EQ(rules.GetCatchAll(), ClusterPlane::INFINIBAND);
    // Without an NVLink transport (1-GPU domains) the NVLink row is skipped.
    rules.SetAvailable({{ClusterPlane::INFINIBAND, 0}});
    EXPECT_EQ(rules.SelectIndex(0, 7, ""), 0);
}

TEST(ClusterPlaneRules, ForcedGroups)
{
    const ClusterLayout l(4, 8, 1);
    ClusterPlaneRules rules(l, ClusterPlaneRules::DefaultRows());
    rules.SetAvailable({{ClusterPlane::INFINIBAND, 0}, {ClusterPlane::NVLINK, 1}});
    rules.Force("dp", ClusterPlane::INFINIBAND);
    rules.Force("tp", ClusterPlane::NVLINK);
    rules.Force("ckpt", ClusterPlane::ETHERNET);
    ClusterPlane p;
    ASSERT_EQ(rules.TrySelect(0, 1, p, "dp"), "");
    EXPECT_EQ(p, ClusterPlane::INFINIBAND);
    EXPECT_EQ(rules.SelectIndex(0, 1, "dp"), 0);
    // NVLink reaches only inside a domain: an error for the rule, no plane for the transport.
    EXPECT_NE(rules.TrySelect(0, 8, p, "tp").find("forced onto nvlink"), std::string::npos);
    EXPECT_EQ(rules.SelectIndex(0, 8, "tp"), -1);
    // Ethernet reaches every pair (through the CPUs) but has no GPU transport plane.
    ASSERT_EQ(rules.TrySelect(0, 9, p, "ckpt"), "");
    EXPECT_EQ(p, ClusterPlane::ETHERNET);
    EXPECT_EQ(rules.SelectIndex(0, 9, "ckpt"), -1);
    // A selector copies the rules: later changes do not reach it.
    auto selector = rules.MakeSelector("dp");
    rules.ClearForced();
    EXPECT_EQ(selector(0, 1), 0);
    EXPECT_EQ(rules.SelectIndex(0, 1, "dp"), 1);
}

// The table is data: a scale-out-only table sends every pair over InfiniBand.
TEST(ClusterPlaneRules, CustomTable)
{
    const ClusterLayout l(2, 8, 1);
    ClusterPlaneRules rules(l, {{ClusterPlane::INFINIBAND, ClusterPlaneReach::ANY_PAIR}});
    rules.SetAvailable({{ClusterPlane::INFINIBAND, 0}, {ClusterPlane::NVLINK, 1}});
    for (uint32_t a = 0; a < 16; ++a)
    {
        for (uint32_t b = 0; b < 16; ++b)
        {
            EXPECT_EQ(rules.SelectIndex(a, b, ""), a == b ? -1 : 0) << a << " " << b;
        }
    }
}

} // namespace
} // namespace ns3
