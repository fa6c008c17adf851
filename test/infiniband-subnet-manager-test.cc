/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/boolean.h"
#include "ns3/infiniband-subnet-manager.h"
#include "ns3/infiniband-topology.h"
#include "ns3/string.h"

#include <algorithm>
#include <deque>
#include <gtest/gtest.h>
#include <map>

using namespace ns3;

namespace
{

Ptr<InfinibandSubnetManager>
MakeSm(const InfinibandTopology& topo, const std::string& engine, bool allowLoops = false)
{
    auto sm = CreateObject<InfinibandSubnetManager>();
    sm->SetAttribute("RoutingEngine", StringValue(engine));
    sm->SetAttribute("AllowCreditLoops", BooleanValue(allowLoops));
    sm->SetTopology(topo);
    return sm;
}

// Independent BFS over the cables (HCAs do not forward): switch hops between
// the switches two HCAs hang off.
uint32_t
ShortestSwitchHops(const InfinibandTopology& t, uint32_t fromSwitch, uint32_t toSwitch)
{
    std::map<uint32_t, uint32_t> dist{{fromSwitch, 0}};
    std::deque<uint32_t> q{fromSwitch};
    while (!q.empty())
    {
        uint32_t x = q.front();
        q.pop_front();
        for (uint32_t p = 1; p <= t.GetNode(x).numPorts; ++p)
        {
            uint32_t peer = 0;
            uint32_t pp = 0;
            if (t.GetPeer(x, p, peer, pp) && t.IsSwitch(peer) && !dist.count(peer))
            {
                dist[peer] = dist[x] + 1;
                q.push_back(peer);
            }
        }
    }
    return dist.at(toSwitch);
}

// Every HCA reaches every other HCA by walking the LFTs; with \p minimal the
// path must also be a shortest one.
void
ExpectAllPairsReachable(const Ptr<InfinibandSubnetManager>& sm, bool minimal, const char* what)
{
    const auto& t = sm->GetTopology();
    const auto hcas = t.GetHcas();
    uint32_t checked = 0;
    for (uint32_t src : hcas)
    {
        for (uint32_t dst : hcas)
        {
            if (src == dst)
            {
                continue;
            }
            std::vector<InfinibandDirectedLink> path;
            const std::string err = sm->TracePath(src, 1, sm->GetLid(dst), path);
            ASSERT_EQ(err, "") << what << ": " << t.Describe(src) << " -> " << t.Describe(dst);
            ASSERT_GE(path.size(), 2U);
            EXPECT_EQ(path.back().toNode, dst);
            if (minimal)
            {
                uint32_t s1 = 0;
                uint32_t s2 = 0;
                uint32_t p = 0;
                t.GetPeer(src, 1, s1, p);
                t.GetPeer(dst, 1, s2, p);
                // links = HCA->switch + switch hops + switch->HCA
                EXPECT_EQ(path.size(), ShortestSwitchHops(t, s1, s2) + 2) << what;
            }
            ++checked;
        }
    }
    EXPECT_EQ(checked, hcas.size() * (hcas.size() - 1));
}

/*
 * A rail-optimised fat tree wired as the cluster builder wires one: servers
 * of \p rails HCAs, the HCAs added server by server (so LIDs interleave the
 * rails), leaf = (server / hostsPerLeaf) x rails + rail, radix-k switches with
 * k/2 hosts and k/2 up ports per leaf.  Two tiers: every leaf has \p linksPerSpine
 * parallel cables to each of k/(2 linksPerSpine) spines.  Three tiers: pods
 * of k/2 leaves, k/2 aggregation switches per pod, aggregation switch j of
 * every pod on the k/2 cores of group j.  \p leaf receives each HCA's leaf.
 */
InfinibandTopology
RailOptimisedFatTree(uint32_t k,
                     uint32_t servers,
                     uint32_t rails,
                     uint32_t tiers,
                     uint32_t linksPerSpine,
                     std::vector<uint32_t>& leafOfHca)
{
    const uint32_t half = k / 2;
    const uint32_t leaves = (servers + half - 1) / half * rails;
    InfinibandTopology t;
    leafOfHca.clear();
    for (uint32_t s = 0; s < servers; ++s)
    {
        for (uint32_t r = 0; r < rails; ++r)
        {
            t.AddHca("server" + std::to_string(s) + "/hca" + std::to_string(r));
            leafOfHca.push_back((s / half) * rails + r);
        }
    }
    std::vector<uint32_t> leaf;
    for (uint32_t l = 0; l < leaves; ++l)
    {
        leaf.push_back(t.AddSwitch("leaf" + std::to_string(l), k));
    }
    for (uint32_t h = 0; h < servers * rails; ++h)
    {
        t.Connect(h, 1, leaf[leafOfHca[h]], (h / rails) % half + 1);
    }
    if (tiers == 2)
    {
        for (uint32_t j = 0; j < half / linksPerSpine; ++j)
        {
            const uint32_t spine = t.AddSwitch("spine" + std::to_string(j), k);
            for (uint32_t l = 0; l < leaves; ++l)
            {
                for (uint32_t m = 0; m < linksPerSpine; ++m)
                {
                    t.Connect(leaf[l],
                              half + 1 + j * linksPerSpine + m,
                              spine,
                              l * linksPerSpine + m + 1);
                }
            }
        }
        return t;
    }
    const uint32_t pods = (leaves + half - 1) / half;
    std::vector<std::vector<uint32_t>> agg(pods);
    for (uint32_t p = 0; p < pods; ++p)
    {
        for (uint32_t j = 0; j < half; ++j)
        {
            agg[p].push_back(t.AddSwitch("agg" + std::to_string(p) + "_" + std::to_string(j), k));
        }
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t j = 0; j < half; ++j)
        {
            t.Connect(leaf[l], half + 1 + j, agg[l / half][j], l % half + 1);
        }
    }
    for (uint32_t j = 0; j < half; ++j)
    {
        for (uint32_t i = 0; i < half; ++i)
        {
            const uint32_t core =
                t.AddSwitch("core" + std::to_string(j) + "_" + std::to_string(i), k);
            for (uint32_t p = 0; p < pods; ++p)
            {
                t.Connect(agg[p][j], half + 1 + i, core, p + 1);
            }
        }
    }
    return t;
}

// For every ordered pair of leaves (same rail only with \p sameRail), the most
// destinations of the second leaf any one directed cable carries on the routes
// from the first: the load of a leaf-to-leaf permutation's busiest link.
uint32_t
MostDestinationsOfOneLeafPerLink(const Ptr<InfinibandSubnetManager>& sm,
                                 const std::vector<uint32_t>& leafOfHca,
                                 uint32_t rails,
                                 bool sameRail,
                                 bool crossPodOnly,
                                 uint32_t podLeaves)
{
    const auto& t = sm->GetTopology();
    const uint32_t leaves = *std::max_element(leafOfHca.begin(), leafOfHca.end()) + 1;
    std::vector<uint32_t> firstHca(leaves, UINT32_MAX);
    for (uint32_t h = 0; h < leafOfHca.size(); ++h)
    {
        firstHca[leafOfHca[h]] = std::min(firstHca[leafOfHca[h]], h);
    }
    uint32_t worst = 0;
    for (uint32_t a = 0; a < leaves; ++a)
    {
        for (uint32_t b = 0; b < leaves; ++b)
        {
            if (a == b || (sameRail && a % rails != b % rails) ||
                (crossPodOnly && a / podLeaves == b / podLeaves))
            {
                continue;
            }
            std::map<std::pair<uint32_t, uint32_t>, uint32_t> load; // (node, out port)
            for (uint32_t h = 0; h < leafOfHca.size(); ++h)
            {
                if (leafOfHca[h] != b)
                {
                    continue;
                }
                std::vector<InfinibandDirectedLink> path;
                EXPECT_EQ(sm->TracePath(firstHca[a], 1, sm->GetLid(h), path), "");
                for (const auto& l : path)
                {
                    if (t.IsSwitch(l.fromNode) && t.IsSwitch(l.toNode))
                    {
                        worst = std::max(worst, ++load[{l.fromNode, l.fromPort}]);
                    }
                }
            }
        }
    }
    return worst;
}

} // namespace

// LIDs: HCA ports first, then switches, from BaseLid (1), in node order.
TEST(InfinibandSubnetManager, AssignsLidsDeterministically)
{
    auto topo = InfinibandTopology::Ring(5);
    auto sm = MakeSm(topo, "updn");
    ASSERT_EQ(sm->TryRoute(), "");
    const auto hcas = topo.GetHcas();
    const auto sws = topo.GetSwitches();
    for (uint32_t i = 0; i < hcas.size(); ++i)
    {
        EXPECT_EQ(sm->GetLid(hcas[i]), i + 1);
    }
    for (uint32_t i = 0; i < sws.size(); ++i)
    {
        EXPECT_EQ(sm->GetLid(sws[i]), hcas.size() + i + 1);
        EXPECT_EQ(sm->GetForwardingTable(sws[i])[sm->GetLid(sws[i])],
                  InfinibandSubnetManager::LFT_SELF);
    }
    EXPECT_EQ(sm->GetMaxLid(), 10);
    uint32_t node = 0;
    uint32_t port = 0;
    ASSERT_TRUE(sm->GetLidOwner(3, node, port));
    EXPECT_EQ(node, hcas[2]);
    EXPECT_EQ(port, 1U);
    EXPECT_FALSE(sm->GetLidOwner(11, node, port));
}

// On a 5-switch ring shortest paths are unique and a destination two hops
// clockwise makes every switch depend on its clockwise neighbour's link:
// min-hop must report a 5-link credit loop; up/down cannot have one.
TEST(InfinibandSubnetManager, MinHopRingHasCreditLoopUpDownDoesNot)
{
    auto topo = InfinibandTopology::Ring(5);

    auto refused = MakeSm(topo, "minhop");
    const std::string err = refused->TryRoute();
    EXPECT_NE(err.find("credit loop"), std::string::npos) << err;
    EXPECT_NE(err.find("AllowCreditLoops"), std::string::npos) << err;

    auto minhop = MakeSm(topo, "minhop", true);
    ASSERT_EQ(minhop->TryRoute(), "");
    ASSERT_TRUE(minhop->HasCreditLoop());
    const auto& loop = minhop->GetCreditLoop();
    ASSERT_EQ(loop.size(), 5U);
    for (size_t i = 0; i < loop.size(); ++i)
    {
        EXPECT_TRUE(topo.IsSwitch(loop[i].fromNode));
        EXPECT_EQ(loop[i].toNode, loop[(i + 1) % loop.size()].fromNode); // a closed chain
    }
    ExpectAllPairsReachable(minhop, true, "minhop ring");

    auto updn = MakeSm(topo, "updn");
    ASSERT_EQ(updn->TryRoute(), "");
    EXPECT_FALSE(updn->HasCreditLoop()) << updn->DescribeCreditLoop();
    EXPECT_GT(updn->GetChannelDependencyCount(), 0U);
    ExpectAllPairsReachable(updn, false, "updn ring");
}

TEST(InfinibandSubnetManager, UpDownWithExplicitRootAndAdaptiveGroups)
{
    auto topo = InfinibandTopology::Ring(6, 2);
    auto sm = MakeSm(topo, "updn");
    sm->SetAttribute("AdaptiveRouting", BooleanValue(true));
    sm->SetRootSwitches({topo.GetSwitches()[3]});
    ASSERT_EQ(sm->TryRoute(), "");
    // The check covers every port of every AR group, so this is stronger.
    EXPECT_FALSE(sm->HasCreditLoop()) << sm->DescribeCreditLoop();
    ExpectAllPairsReachable(sm, false, "updn ring root 3");
    for (uint32_t sw : topo.GetSwitches())
    {
        const auto& lft = sm->GetForwardingTable(sw);
        for (uint32_t h : topo.GetHcas())
        {
            const auto& group = sm->GetAdaptiveRoutingGroup(sw, sm->GetLid(h));
            ASSERT_FALSE(group.empty());
            EXPECT_NE(std::find(group.begin(), group.end(), lft[sm->GetLid(h)]), group.end());
        }
    }
    sm->SetRootSwitches({topo.GetHcas()[0]});
    EXPECT_NE(sm->TryRoute().find("not a switch"), std::string::npos);
}

// Builders: sizes from the construction rules in infiniband-topology.h.
TEST(InfinibandTopology, BuildersHaveExpectedShape)
{
    auto one = InfinibandTopology::FatTree(8, 8);
    EXPECT_EQ(one.GetTiers(), 1U);
    EXPECT_EQ(one.GetSwitches().size(), 1U);

    auto two = InfinibandTopology::FatTree(8, 32); // 8 leaves x 4 hosts, 4 spines
    EXPECT_EQ(two.GetTiers(), 2U);
    EXPECT_EQ(two.GetSwitches().size(), 12U);
    EXPECT_EQ(two.GetLinks().size(), 32U + 8U * 4U);

    // 40 hosts: 10 leaves > 8 spine ports -> 3 tiers: 3 pods of 4 leaves,
    // 4 aggregation switches per pod, 4 groups of 4 cores.
    auto three = InfinibandTopology::FatTree(8, 40);
    EXPECT_EQ(three.GetTiers(), 3U);
    EXPECT_EQ(three.GetSwitches().size(), 10U + 12U + 16U);

    // 2:1 oversubscription with radix 12: 8 hosts and 4 up ports per leaf.
    auto over = InfinibandTopology::FatTree(12, 40, 2.0);
    EXPECT_EQ(over.GetTiers(), 2U);
    EXPECT_EQ(over.GetSwitches().size(), 5U + 4U);

    InfinibandTopology tooBig;
    const std::string err = InfinibandTopology::TryFatTree(4, 100, 1.0, tooBig);
    EXPECT_NE(err.find("do not fit"), std::string::npos) << err;

    auto kary = InfinibandTopology::KaryNTree(4, 3); // 64 hosts, 3 x 16 switches
    EXPECT_EQ(kary.GetHcas().size(), 64U);
    EXPECT_EQ(kary.GetSwitches().size(), 48U);
    EXPECT_EQ(kary.GetLinks().size(), 64U + 2U * 16U * 4U);
}

TEST(InfinibandSubnetManager, EveryEngineReachesEveryHcaOnEveryBuilder)
{
    struct Case
    {
        const char* name;
        InfinibandTopology topo;
        bool fatTree;
    };

    std::vector<Case> cases = {{"ring", InfinibandTopology::Ring(6, 2), false},
                               {"leaf-spine", InfinibandTopology::FatTree(8, 30), true},
                               {"3-tier", InfinibandTopology::FatTree(8, 40), true},
                               {"4-ary 2-tree", InfinibandTopology::KaryNTree(4, 2), true},
                               {"2-ary 3-tree", InfinibandTopology::KaryNTree(2, 3), true}};
    for (auto& c : cases)
    {
        for (const char* engine : {"minhop", "updn", "ftree"})
        {
            if (!c.fatTree && std::string(engine) == "ftree")
            {
                auto sm = MakeSm(c.topo, engine);
                EXPECT_NE(sm->TryRoute().find("not a fat tree"), std::string::npos);
                continue;
            }
            auto sm = MakeSm(c.topo, engine, true);
            ASSERT_EQ(sm->TryRoute(), "") << c.name << " " << engine;
            const std::string what = std::string(c.name) + " " + engine;
            // On fat trees all three engines give shortest paths and, being
            // up/down, no credit loop.
            ExpectAllPairsReachable(sm, c.fatTree, what.c_str());
            if (c.fatTree)
            {
                EXPECT_FALSE(sm->HasCreditLoop()) << what << ": " << sm->DescribeCreditLoop();
            }
        }
    }
}

// OpenSM ftree goal: on a k-ary n-tree every switch spreads the destinations
// evenly over its up ports, max/min route count <= 1 + 1/k (here exactly
// equal: a leaf sends the k^n - k remote hosts over k up ports).
TEST(InfinibandSubnetManager, FatTreeSpreadsDestinationsOverUpPorts)
{
    for (auto [k, n] : {std::make_pair(4U, 2U),
                        std::make_pair(4U, 3U),
                        std::make_pair(3U, 3U),
                        std::make_pair(2U, 4U)})
    {
        auto topo = InfinibandTopology::KaryNTree(k, n);
        auto sm = MakeSm(topo, "ftree");
        ASSERT_EQ(sm->TryRoute(), "");
        uint32_t checkedSwitches = 0;
        for (uint32_t sw : topo.GetSwitches())
        {
            if (topo.GetNode(sw).numPorts != 2 * k)
            {
                continue; // top level: no up ports
            }
            uint32_t lo = UINT32_MAX;
            uint32_t hi = 0;
            uint32_t total = 0;
            for (uint32_t p = k + 1; p <= 2 * k; ++p)
            {
                const uint32_t c = sm->GetPortRouteCount(sw, p);
                lo = std::min(lo, c);
                hi = std::max(hi, c);
                total += c;
            }
            ASSERT_GT(lo, 0U);
            EXPECT_LE(static_cast<double>(hi) / lo, 1.0 + 1.0 / k) << topo.Describe(sw);
            // Stronger: the spread is exact (each leaf's hosts take the up groups in turn).
            EXPECT_EQ(hi, lo) << topo.Describe(sw);
            // Every destination not below the switch leaves through an up port.
            uint32_t below = 0;
            for (uint32_t p = 1; p <= k; ++p)
            {
                below += sm->GetPortRouteCount(sw, p);
            }
            EXPECT_EQ(total + below, topo.GetHcas().size());
            ++checkedSwitches;
        }
        EXPECT_GT(checkedSwitches, 0U);
    }
}

TEST(InfinibandSubnetManager, LeafSpineFtreeBalancesSpines)
{
    auto topo = InfinibandTopology::FatTree(8, 32); // 4 up ports per leaf
    auto sm = MakeSm(topo, "ftree");
    ASSERT_EQ(sm->TryRoute(), "");
    for (uint32_t sw : topo.GetSwitches())
    {
        if (topo.GetNode(sw).name.rfind("leaf", 0) != 0)
        {
            continue;
        }
        for (uint32_t p = 5; p <= 8; ++p)
        {
            EXPECT_EQ(sm->GetPortRouteCount(sw, p), 7U); // 28 remote hosts / 4 spines
        }
    }
}

// On a rail-optimised fabric the hosts of one leaf are every rails-th LID.
// OpenSM's ftree takes them leaf by leaf and gives each its spine going up
// from its own leaf, so the k/2 hosts of a leaf arrive over k/2 different
// cables from any other leaf: a leaf-to-leaf permutation (pipeline sends
// between two servers' groups) loads no switch-to-switch cable with more than
// ceil(k/2 hosts / k/2 up ports) = 1 flow.  Routing in LID order put them on
// 1 up port in 4 here.
TEST(InfinibandSubnetManager, FtreeSpreadsOneLeafOverUpPortsOnRailOptimisedTwoTiers)
{
    for (uint32_t linksPerSpine : {1U, 2U})
    {
        std::vector<uint32_t> leafOfHca;
        // 16 servers x 4 rails = 64 HCAs on 8 leaves of 8 hosts, 2 per rail.
        auto topo = RailOptimisedFatTree(16, 16, 4, 2, linksPerSpine, leafOfHca);
        auto sm = MakeSm(topo, "ftree");
        sm->SetAttribute("AdaptiveRouting", BooleanValue(true));
        ASSERT_EQ(sm->TryRoute(), "");
        EXPECT_FALSE(sm->HasCreditLoop()) << sm->DescribeCreditLoop();
        ExpectAllPairsReachable(sm, true, "rail-optimised 2 tiers");
        // Exact: 8 destinations over 8 up cables and 8 spine down cables.
        EXPECT_EQ(MostDestinationsOfOneLeafPerLink(sm, leafOfHca, 4, true, false, 0), 1U)
            << linksPerSpine << " cables per leaf and spine";
        // Leaves of different rails too (every leaf pair).
        EXPECT_EQ(MostDestinationsOfOneLeafPerLink(sm, leafOfHca, 4, false, false, 0), 1U);
    }
}

// The same on three tiers, across pods: the k/2 hosts of a leaf in another
// pod go up through k/2 aggregation switches and k/2 different cores, so again
// at most ceil(k/2 / k/2) = 1 destination per cable.  Taking the destinations
// leaf by leaf with per-switch counters put host j of every leaf on one core
// per aggregation switch.
TEST(InfinibandSubnetManager, FtreeSpreadsOneLeafOverCoresOnRailOptimisedThreeTiers)
{
    std::vector<uint32_t> leafOfHca;
    // 32 servers x 4 rails = 128 HCAs, 32 leaves of 4 hosts, 8 pods, 16 cores.
    auto topo = RailOptimisedFatTree(8, 32, 4, 3, 1, leafOfHca);
    auto sm = MakeSm(topo, "ftree");
    sm->SetAttribute("AdaptiveRouting", BooleanValue(true));
    ASSERT_EQ(sm->TryRoute(), "");
    EXPECT_FALSE(sm->HasCreditLoop()) << sm->DescribeCreditLoop();
    ExpectAllPairsReachable(sm, true, "rail-optimised 3 tiers");
    // Exact: 4 destinations over 4 leaf up cables, 4 aggregation-to-core cables.
    EXPECT_EQ(MostDestinationsOfOneLeafPerLink(sm, leafOfHca, 4, true, true, 4), 1U);
    EXPECT_EQ(MostDestinationsOfOneLeafPerLink(sm, leafOfHca, 4, false, false, 4), 1U);
}

TEST(InfinibandSubnetManager, RejectsDisconnectedHostsAndBadEngines)
{
    auto topo = InfinibandTopology::Ring(4);
    topo.AddHca("lonely");
    auto sm = MakeSm(topo, "updn");
    std::string err = sm->TryRoute();
    EXPECT_NE(err.find("HCA lonely"), std::string::npos) << err;

    // A host on a switch that is cut off from the rest.
    auto island = InfinibandTopology::Ring(4);
    uint32_t h = island.AddHca("far");
    uint32_t s = island.AddSwitch("isle", 4);
    island.Connect(h, 1, s, 1);
    for (const char* engine : {"minhop", "updn", "ftree"})
    {
        err = MakeSm(island, engine)->TryRoute();
        EXPECT_NE(err.find("HCA far"), std::string::npos) << engine << ": " << err;
    }

    err = MakeSm(InfinibandTopology::Ring(4), "lash")->TryRoute();
    EXPECT_NE(err.find("lash"), std::string::npos) << err;

    InfinibandTopology t;
    uint32_t a = t.AddSwitch("a", 2);
    EXPECT_NE(t.TryConnect(a, 3, a, 1).find("no port 3"), std::string::npos);
}

// The RoutingEngine attribute is parsed once into InfinibandRoutingEngineType; every
// OpenSM name round-trips, each type creates its own engine class, and an unknown name
// (also a wrongly cased one) is refused by TryRoute naming the valid engines.
TEST(InfinibandSubnetManager, RoutingEngineNamesParseIntoTheEnum)
{
    const std::map<std::string, std::pair<InfinibandRoutingEngineType, std::string>> engines{
        {"minhop", {InfinibandRoutingEngineType::MINHOP, "ns3::InfinibandMinHopRouting"}},
        {"updn", {InfinibandRoutingEngineType::UPDN, "ns3::InfinibandUpDownRouting"}},
        {"ftree", {InfinibandRoutingEngineType::FTREE, "ns3::InfinibandFatTreeRouting"}}};
    for (const auto& [name, expected] : engines)
    {
        InfinibandRoutingEngineType type = InfinibandRoutingEngineType::MINHOP;
        EXPECT_EQ(InfinibandParseRoutingEngine(name, type), "");
        EXPECT_EQ(type, expected.first) << name;
        EXPECT_EQ(InfinibandRoutingEngineName(type), name);
        Ptr<InfinibandRoutingEngine> engine = InfinibandRoutingEngine::Create(type);
        EXPECT_EQ(engine->GetType(), type);
        EXPECT_EQ(engine->GetInstanceTypeId().GetName(), expected.second);

        auto sm = MakeSm(InfinibandTopology::FatTree(8, 16), name);
        EXPECT_EQ(sm->GetRoutingEngine(), type);
        StringValue attribute;
        sm->GetAttribute("RoutingEngine", attribute);
        EXPECT_EQ(attribute.Get(), name);
        EXPECT_EQ(sm->TryRoute(), "") << name;
    }
    for (const std::string bad : {"lash", "MinHop", ""})
    {
        InfinibandRoutingEngineType type = InfinibandRoutingEngineType::UPDN;
        const std::string error = InfinibandParseRoutingEngine(bad, type);
        EXPECT_EQ(error,
                  "unknown RoutingEngine \"" + bad + "\"; valid engines: minhop, updn, ftree");
        EXPECT_EQ(type, InfinibandRoutingEngineType::UPDN) << "a refused name leaves the type";
        auto sm = MakeSm(InfinibandTopology::FatTree(8, 16), bad);
        EXPECT_EQ(sm->TryRoute(), error);
        // A valid engine set afterwards clears the refusal.
        sm->SetRoutingEngine(InfinibandRoutingEngineType::FTREE);
        EXPECT_EQ(sm->TryRoute(), "");
    }
}
