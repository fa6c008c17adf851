/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// OpenSM ftree (osm_ucast_ftree.c): fat-tree routing by levels.
#include "ns3/infiniband-routing-engine.h"
#include "ns3/infiniband-routing-graph.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandFatTreeRouting");
NS_OBJECT_ENSURE_REGISTERED(InfinibandFatTreeRouting);

TypeId
InfinibandFatTreeRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandFatTreeRouting")
                            .SetParent<InfinibandRoutingEngine>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandFatTreeRouting>();
    return tid;
}

InfinibandRoutingEngineType
InfinibandFatTreeRouting::GetType() const
{
    return InfinibandRoutingEngineType::FTREE;
}

std::string
InfinibandFatTreeRouting::Route(InfinibandRoutingContext& ctx)
{
    NS_LOG_FUNCTION(this << ctx.hcaDests.size());
    const uint32_t nsw = static_cast<uint32_t>(ctx.swNode.size());
    const std::vector<uint32_t> leaves = ctx.LeafSwitches();
    if (leaves.empty())
    {
        return "ftree: no HCA is attached to a switch";
    }
    // Levels from the leaves (OpenSM ftree ranks from the roots; same thing on
    // a fat tree, and it needs no root list).
    const auto level = InfinibandBfsHops(InfinibandAdjacentSwitches(ctx.hops), leaves);
    uint32_t maxLevel = 0;
    for (uint32_t v = 0; v < nsw; ++v)
    {
        maxLevel = std::max(maxLevel, level[v]);
    }
    for (const auto& l : ctx.topology.GetLinks())
    {
        if (ctx.topology.IsSwitch(l.nodeA) && ctx.topology.IsSwitch(l.nodeB))
        {
            const uint32_t la = level[ctx.swIndex[l.nodeA]];
            const uint32_t lb = level[ctx.swIndex[l.nodeB]];
            if (la + 1 != lb && lb + 1 != la)
            {
                return "ftree: the link between " + ctx.topology.Describe(l.nodeA) + " (level " +
                       std::to_string(la) + ") and " + ctx.topology.Describe(l.nodeB) + " (level " +
                       std::to_string(lb) + ") does not join adjacent levels: not a fat tree " +
                       "(use updn)";
            }
        }
    }
    std::vector<std::vector<uint32_t>> byLevel(maxLevel + 1);
    for (uint32_t v = 0; v < nsw; ++v)
    {
        byLevel[level[v]].push_back(v);
    }
    auto neighbours = [&](uint32_t v, uint32_t atLevel) {
        std::vector<std::pair<uint8_t, uint32_t>> out; // (port, switch vertex)
        for (const auto& [port, u] : ctx.SwitchNeighbours(ctx.swNode[v]))
        {
            if (level[u] == atLevel)
            {
                out.emplace_back(port, u);
            }
        }
        return out;
    };

    // Per destination in LID order: first the down-going routes, from the
    // leaf upwards, spread over the down ports; then the up-going routes of all
    // other switches, from the top downwards, spread over the up ports.  Every
    // switch balances with its own per-port route counters, so the sources of
    // one leaf pick the same top switch for a destination, as ftree's do.
    for (const auto& d : ctx.hcaDests)
    {
        const uint32_t a = ctx.swIndex[d.attachSwitch];
        std::vector<uint32_t> hops(nsw, INFINIBAND_NO_HOPS);
        std::vector<bool> down(nsw, false);
        hops[a] = 0;
        down[a] = true;
        ctx.SetEntry(d.attachSwitch,
                     d,
                     static_cast<uint8_t>(d.attachPort),
                     {uint8_t(d.attachPort)});
        for (uint32_t l = 1; l <= maxLevel; ++l)
        {
            for (uint32_t v : byLevel[l])
            {
                std::vector<uint8_t> candidates;
                for (const auto& [port, u] : neighbours(v, l - 1))
                {
                    if (down[u])
                    {
                        candidates.push_back(port);
                    }
                }
                if (!candidates.empty())
                {
                    down[v] = true;
                    hops[v] = l;
                    ctx.SetEntry(ctx.swNode[v],
                                 d,
                                 ctx.PickLeastLoaded(ctx.swNode[v], candidates),
                                 candidates);
                }
            }
        }
        for (uint32_t l = maxLevel + 1; l-- > 0;)
        {
            for (uint32_t v : byLevel[l])
            {
                if (down[v])
                {
                    continue;
                }
                uint32_t best = INFINIBAND_NO_HOPS;
                const auto ups = neighbours(v, l + 1);
                for (const auto& [port, u] : ups)
                {
                    best = std::min(best, hops[u]);
                }
                if (best == INFINIBAND_NO_HOPS)
                {
                    return ctx.Unreachable(ctx.swNode[v], d) + " (ftree: no up port leads to it)";
                }
                std::vector<uint8_t> candidates;
                for (const auto& [port, u] : ups)
                {
                    if (hops[u] == best)
                    {
                        candidates.push_back(port);
                    }
                }
                hops[v] = best + 1;
                ctx.SetEntry(ctx.swNode[v],
                             d,
                             ctx.PickLeastLoaded(ctx.swNode[v], candidates),
                             candidates);
            }
        }
    }
    return "";
}

} // namespace ns3
