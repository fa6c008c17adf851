/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// OpenSM minhop (osm_ucast_mgr.c): shortest paths balanced over equal-cost ports.
#include "ns3/infiniband-routing-engine.h"
#include "ns3/infiniband-routing-graph.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandMinHopRouting");
NS_OBJECT_ENSURE_REGISTERED(InfinibandMinHopRouting);

TypeId
InfinibandMinHopRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandMinHopRouting")
                            .SetParent<InfinibandRoutingEngine>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandMinHopRouting>();
    return tid;
}

InfinibandRoutingEngineType
InfinibandMinHopRouting::GetType() const
{
    return InfinibandRoutingEngineType::MINHOP;
}

std::string
InfinibandMinHopRouting::Route(InfinibandRoutingContext& ctx)
{
    NS_LOG_FUNCTION(this << ctx.hcaDests.size());
    for (const auto& d : ctx.hcaDests)
    {
        const uint32_t a = ctx.swIndex[d.attachSwitch];
        for (uint32_t v = 0; v < ctx.swNode.size(); ++v)
        {
            const uint32_t sw = ctx.swNode[v];
            if (v == a)
            {
                ctx.SetEntry(sw, d, static_cast<uint8_t>(d.attachPort), {uint8_t(d.attachPort)});
                continue;
            }
            std::vector<uint8_t> candidates;
            for (const auto& [port, u] : ctx.SwitchNeighbours(sw))
            {
                if (ctx.hops[u][a] + 1 == ctx.hops[v][a])
                {
                    candidates.push_back(port);
                }
            }
            if (candidates.empty())
            {
                return ctx.Unreachable(sw, d);
            }
            ctx.SetEntry(sw, d, ctx.PickLeastLoaded(sw, candidates), candidates);
        }
    }
    return "";
}

} // namespace ns3
