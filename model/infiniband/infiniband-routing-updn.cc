/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// OpenSM updn (osm_ucast_updn.c): up*/down* routing from ranked root switches.
#include "ns3/infiniband-routing-engine.h"
#include "ns3/infiniband-routing-graph.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandUpDownRouting");
NS_OBJECT_ENSURE_REGISTERED(InfinibandUpDownRouting);

TypeId
InfinibandUpDownRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandUpDownRouting")
                            .SetParent<InfinibandRoutingEngine>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandUpDownRouting>();
    return tid;
}

InfinibandRoutingEngineType
InfinibandUpDownRouting::GetType() const
{
    return InfinibandRoutingEngineType::UPDN;
}

std::string
InfinibandUpDownRouting::Route(InfinibandRoutingContext& ctx)
{
    NS_LOG_FUNCTION(this << ctx.hcaDests.size());
    const uint32_t nsw = static_cast<uint32_t>(ctx.swNode.size());
    std::vector<uint32_t> roots;
    if (ctx.roots.empty())
    {
        // Default: switches farthest from the HCA-attached ones (fat-tree spines).
        auto fromLeaves =
            InfinibandBfsHops(InfinibandAdjacentSwitches(ctx.hops), ctx.LeafSwitches());
        uint32_t far = 0;
        for (auto x : fromLeaves)
        {
            far = std::max(far, x == INFINIBAND_NO_HOPS ? 0 : x);
        }
        for (uint32_t v = 0; v < nsw; ++v)
        {
            if (far > 0 && fromLeaves[v] == far)
            {
                roots.push_back(v);
            }
        }
        if (roots.empty() && nsw > 0)
        {
            roots.push_back(0);
        }
    }
    else
    {
        for (uint32_t r : ctx.roots)
        {
            if (r >= ctx.topology.GetNNodes() || !ctx.topology.IsSwitch(r))
            {
                return "updn root " + ctx.topology.Describe(r) + " is not a switch";
            }
            roots.push_back(ctx.swIndex[r]);
        }
    }
    // Ranks: min hops to any root.  A move u->v goes up if v has a lower
    // (rank, index): index breaks ties between equal ranks as OpenSM's GUIDs do.
    std::vector<uint32_t> rank(nsw, INFINIBAND_NO_HOPS);
    for (uint32_t v = 0; v < nsw; ++v)
    {
        for (uint32_t r : roots)
        {
            rank[v] = std::min<uint32_t>(rank[v], ctx.hops[v][r]);
        }
    }
    auto isUp = [&](uint32_t from, uint32_t to) {
        return rank[to] < rank[from] || (rank[to] == rank[from] && to < from);
    };
    // upGraph: edge x->p for each up move; BFS on it from the destination's
    // switch gives the down-only distance from every switch to it.
    InfinibandDirectedSwitchGraph upGraph(nsw);
    for (const auto& l : ctx.topology.GetLinks())
    {
        if (ctx.topology.IsSwitch(l.nodeA) && ctx.topology.IsSwitch(l.nodeB) && l.nodeA != l.nodeB)
        {
            const uint32_t a = ctx.swIndex[l.nodeA];
            const uint32_t b = ctx.swIndex[l.nodeB];
            if (isUp(a, b))
            {
                boost::add_edge(a, b, upGraph);
            }
            else
            {
                boost::add_edge(b, a, upGraph);
            }
        }
    }
    std::vector<uint32_t> order(nsw);
    for (uint32_t v = 0; v < nsw; ++v)
    {
        order[v] = v;
    }
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        return rank[x] != rank[y] ? rank[x] < rank[y] : x < y;
    });

    for (const auto& d : ctx.hcaDests)
    {
        const uint32_t a = ctx.swIndex[d.attachSwitch];
        const auto downHops = InfinibandBfsHops(upGraph, {a});
        std::vector<uint32_t> hops(nsw, INFINIBAND_NO_HOPS);
        // A switch that can reach the destination going only down must do so:
        // its LFT entry also serves packets that arrived going down, and those
        // may not turn up again.  Others go up, towards the nearest such switch.
        for (uint32_t v : order)
        {
            const uint32_t sw = ctx.swNode[v];
            if (v == a)
            {
                hops[v] = 0;
                ctx.SetEntry(sw, d, static_cast<uint8_t>(d.attachPort), {uint8_t(d.attachPort)});
                continue;
            }
            std::vector<std::pair<uint8_t, uint32_t>> options; // (port, hops after it)
            for (const auto& [port, u] : ctx.SwitchNeighbours(sw))
            {
                if (u == v)
                {
                    continue; // a cable looped back to the same switch
                }
                if (downHops[v] != INFINIBAND_NO_HOPS)
                {
                    if (!isUp(v, u) && downHops[u] + 1 == downHops[v])
                    {
                        options.emplace_back(port, downHops[u]);
                    }
                }
                else if (isUp(v, u) && hops[u] != INFINIBAND_NO_HOPS)
                {
                    options.emplace_back(port, hops[u]);
                }
            }
            if (options.empty())
            {
                return ctx.Unreachable(sw, d) + " (no legal up/down path)";
            }
            uint32_t best = INFINIBAND_NO_HOPS;
            for (const auto& o : options)
            {
                best = std::min(best, o.second);
            }
            std::vector<uint8_t> candidates;
            for (const auto& o : options)
            {
                if (o.second == best)
                {
                    candidates.push_back(o.first);
                }
            }
            hops[v] = best + 1;
            ctx.SetEntry(sw, d, ctx.PickLeastLoaded(sw, candidates), candidates);
        }
    }
    return "";
}

} // namespace ns3
