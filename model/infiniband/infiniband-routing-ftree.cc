/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// OpenSM ftree (osm_ucast_ftree.c: fabric_route_to_cns, fabric_route_downgoing_by_going_up,
// fabric_route_upgoing_by_going_down): fat-tree routing by levels.
#include "ns3/infiniband-routing-engine.h"
#include "ns3/infiniband-routing-graph.h"
#include "ns3/log.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandFatTreeRouting");
NS_OBJECT_ENSURE_REGISTERED(InfinibandFatTreeRouting);

namespace
{

constexpr uint16_t kUnset = 0xffff;  // no route to the current destination yet
const std::vector<uint8_t> kNoGroup; // adaptive-routing groups are set once the walk is done

// A switch's parallel links to one neighbour switch (OpenSM's port group).
struct PortGroup
{
    uint32_t remote;    //!< neighbour's vertex
    uint32_t firstLink; //!< its links in FatTreeState::links[firstLink, lastLink)
    uint32_t lastLink;
    uint32_t counter; //!< routes assigned through the group (down- or up-going, by side)
};

// One link as seen from a switch: its own port, the peer's port, a route counter.
struct GroupLink
{
    uint8_t port;
    uint8_t remotePort;
    uint32_t counter;
};

/*
 * The fabric as ftree walks it, built once: per switch its up and down port
 * groups (ascending neighbour vertex, ports ascending), flat so that routing a
 * destination allocates nothing.  Up groups count the routes going down them
 * (OpenSM's counter_down on the lower switch's side), down groups the routes
 * going up them (counter_up on the upper switch's side).
 */
struct FatTreeState
{
    InfinibandRoutingContext& ctx;
    std::vector<uint32_t> upBegin;   //!< [vertex] first up group in groups; upEnd = downBegin
    std::vector<uint32_t> downBegin; //!< [vertex] first down group
    std::vector<uint32_t> downEnd;
    std::vector<bool> hasHcas;
    std::vector<std::vector<bool>> upPort; //!< [vertex][port]: towards the level above
    std::vector<PortGroup> groups;
    std::vector<uint32_t> order; //!< groups' indices, each switch's kept sorted by load
    std::vector<GroupLink> links;
    std::vector<uint16_t> hops;     //!< [vertex] hops to the current destination
    std::vector<uint32_t> touched;  //!< vertices whose hops are set, to reset them
    std::vector<uint8_t> arScratch; //!< adaptive-routing group being built

    explicit FatTreeState(InfinibandRoutingContext& c)
        : ctx(c)
    {
    }

    // The group's link with the fewest routes (the first of equals).
    uint32_t LeastLoaded(const PortGroup& g) const
    {
        uint32_t best = g.firstLink;
        for (uint32_t i = g.firstLink + 1; i < g.lastLink; ++i)
        {
            best = links[i].counter < links[best].counter ? i : best;
        }
        return best;
    }

    // Sorts order[first, last) by (counter, neighbour vertex), as OpenSM's
    // bubble sorts do; the order is kept between calls, so this is O(groups)
    // when few counters changed.
    void SortByLoad(uint32_t first, uint32_t last)
    {
        for (uint32_t i = first + 1; i < last; ++i)
        {
            const uint32_t g = order[i];
            uint32_t j = i;
            for (; j > first && Lighter(g, order[j - 1]); --j)
            {
                order[j] = order[j - 1];
            }
            order[j] = g;
        }
    }

    bool Lighter(uint32_t a, uint32_t b) const
    {
        return groups[a].counter != groups[b].counter ? groups[a].counter < groups[b].counter
                                                      : groups[a].remote < groups[b].remote;
    }

    void SetHops(uint32_t v, uint16_t h)
    {
        if (hops[v] == kUnset)
        {
            touched.push_back(v);
        }
        hops[v] = h;
    }

    // A switch reached going down from one that has the destination's route
    // routes it up there, unless it already has a route as short.
    // OpenSM's fabric_route_upgoing_by_going_down.
    bool RouteUpgoingByGoingDown(uint32_t v, uint32_t from, const InfinibandRouteDestination& d);
    // From the destination's side upwards: the main path takes the up group
    // with the fewest down-going routes and counts it; the other up groups
    // lead down to the destination where nothing shorter does yet.
    // OpenSM's fabric_route_downgoing_by_going_up.
    void RouteDowngoingByGoingUp(uint32_t v,
                                 uint32_t from,
                                 bool mainPath,
                                 const InfinibandRouteDestination& d);
};

bool
FatTreeState::RouteUpgoingByGoingDown(uint32_t v,
                                      uint32_t from,
                                      const InfinibandRouteDestination& d)
{
    bool created = hasHcas[v];
    const uint16_t next = static_cast<uint16_t>(hops[v] + 1);
    SortByLoad(downBegin[v], downEnd[v]);
    for (uint32_t oi = downBegin[v]; oi < downEnd[v]; ++oi)
    {
        PortGroup& g = groups[order[oi]];
        if (g.remote == from || (hops[g.remote] != kUnset && next >= hops[g.remote]))
        {
            continue;
        }
        const uint32_t li = LeastLoaded(g);
        ctx.SetEntry(ctx.swNode[g.remote], d, links[li].remotePort, kNoGroup);
        SetHops(g.remote, next);
        if (RouteUpgoingByGoingDown(g.remote, UINT32_MAX, d))
        {
            // Counted only where the subtree holds hosts, as OpenSM.
            ++links[li].counter;
            ++g.counter;
            created = true;
        }
    }
    return created;
}

void
FatTreeState::RouteDowngoingByGoingUp(uint32_t v,
                                      uint32_t from,
                                      bool mainPath,
                                      const InfinibandRouteDestination& d)
{
    RouteUpgoingByGoingDown(v, from, d);
    const uint32_t first = upBegin[v];
    const uint32_t last = downBegin[v];
    if (first == last)
    {
        return; // a top switch
    }
    const uint16_t next = static_cast<uint16_t>(hops[v] + 1);
    // Fewest down-going routes first, then the lowest neighbour vertex.
    // OpenSM's tie-break on the neighbour's least-loaded down group reads
    // counters it never increments, so it is always a tie.
    SortByLoad(first, last);
    if (mainPath)
    {
        PortGroup& g = groups[order[first]];
        const uint32_t li = LeastLoaded(g);
        ++links[li].counter;
        ++g.counter;
        if (hops[g.remote] == kUnset || next < hops[g.remote])
        {
            ctx.SetEntry(ctx.swNode[g.remote], d, links[li].remotePort, kNoGroup);
            SetHops(g.remote, next);
        }
        RouteDowngoingByGoingUp(g.remote, v, true, d);
    }
    for (uint32_t oi = mainPath ? first + 1 : first; oi < last; ++oi)
    {
        const PortGroup& g = groups[order[oi]];
        if (hops[g.remote] != kUnset && next >= hops[g.remote])
        {
            continue;
        }
        const uint32_t li = LeastLoaded(g);
        ctx.SetEntry(ctx.swNode[g.remote], d, links[li].remotePort, kNoGroup);
        SetHops(g.remote, next);
        RouteDowngoingByGoingUp(g.remote, v, false, d);
    }
}

} // namespace

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

    FatTreeState s(ctx);
    s.upBegin.resize(nsw);
    s.downBegin.resize(nsw);
    s.downEnd.resize(nsw);
    s.hasHcas.assign(nsw, false);
    s.upPort.resize(nsw);
    s.hops.assign(nsw, kUnset);
    for (const auto& d : ctx.hcaDests)
    {
        s.hasHcas[ctx.swIndex[d.attachSwitch]] = true;
    }
    std::vector<std::tuple<uint32_t, uint8_t, uint8_t>> peers; // (vertex, port, peer port)
    for (uint32_t v = 0; v < nsw; ++v)
    {
        const uint32_t sw = ctx.swNode[v];
        s.upPort[v].assign(ctx.topology.GetNode(sw).numPorts + 1, false);
        for (bool up : {true, false})
        {
            (up ? s.upBegin : s.downBegin)[v] = static_cast<uint32_t>(s.groups.size());
            peers.clear();
            for (uint32_t p = 1; p <= ctx.topology.GetNode(sw).numPorts; ++p)
            {
                uint32_t peer = 0;
                uint32_t peerPort = 0;
                if (ctx.topology.GetPeer(sw, p, peer, peerPort) && ctx.topology.IsSwitch(peer) &&
                    level[ctx.swIndex[peer]] == (up ? level[v] + 1 : level[v] - 1))
                {
                    peers.emplace_back(ctx.swIndex[peer], p, peerPort);
                    s.upPort[v][p] = up;
                }
            }
            std::sort(peers.begin(), peers.end());
            for (const auto& [u, port, peerPort] : peers)
            {
                if (s.groups.empty() || s.groups.back().remote != u ||
                    s.groups.size() == (up ? s.upBegin : s.downBegin)[v])
                {
                    const auto at = static_cast<uint32_t>(s.links.size());
                    s.groups.push_back(PortGroup{u, at, at, 0});
                }
                s.links.push_back(GroupLink{port, peerPort, 0});
                s.groups.back().lastLink = static_cast<uint32_t>(s.links.size());
            }
        }
        s.downEnd[v] = static_cast<uint32_t>(s.groups.size());
    }

    // Destinations leaf by leaf, each leaf's HCA ports in port order, as
    // OpenSM's fabric_route_to_cns: the hosts of one leaf take consecutive
    // turns at every counter above it, whatever their LIDs.
    std::vector<const InfinibandRouteDestination*> order;
    order.reserve(ctx.hcaDests.size());
    for (const auto& d : ctx.hcaDests)
    {
        order.push_back(&d);
    }
    std::stable_sort(order.begin(), order.end(), [&](const auto* x, const auto* y) {
        return std::make_pair(ctx.swIndex[x->attachSwitch], x->attachPort) <
               std::make_pair(ctx.swIndex[y->attachSwitch], y->attachPort);
    });
    s.order.resize(s.groups.size());
    std::iota(s.order.begin(), s.order.end(), 0);
    s.touched.reserve(nsw);
    for (const InfinibandRouteDestination* dp : order)
    {
        const auto& d = *dp;
        const uint32_t a = ctx.swIndex[d.attachSwitch];
        ctx.SetEntry(d.attachSwitch, d, static_cast<uint8_t>(d.attachPort), kNoGroup);
        s.SetHops(a, 0);
        s.RouteDowngoingByGoingUp(a, UINT32_MAX, true, d);
        if (s.touched.size() != nsw)
        {
            for (uint32_t v = 0; v < nsw; ++v)
            {
                if (s.hops[v] == kUnset)
                {
                    return ctx.Unreachable(ctx.swNode[v], d) + " (ftree: no up port leads to it)";
                }
            }
        }
        for (uint32_t v = 0; ctx.adaptive && v < nsw; ++v)
        {
            // Every port the same way (up or down) as the LFT's towards a
            // switch one hop nearer: up* down* still, so no credit loop.
            const uint32_t sw = ctx.swNode[v];
            const uint8_t port = ctx.lft[sw][d.lid];
            s.arScratch.clear();
            if (v == a)
            {
                s.arScratch.push_back(port);
            }
            const bool up = s.upPort[v][port];
            const uint32_t first = up ? s.upBegin[v] : s.downBegin[v];
            const uint32_t last = up ? s.downBegin[v] : s.downEnd[v];
            for (uint32_t gi = first; v != a && gi < last; ++gi)
            {
                const PortGroup& g = s.groups[gi];
                for (uint32_t li = g.firstLink;
                     s.hops[g.remote] + 1 == s.hops[v] && li < g.lastLink;
                     ++li)
                {
                    s.arScratch.push_back(s.links[li].port);
                }
            }
            std::sort(s.arScratch.begin(), s.arScratch.end());
            ctx.SetEntry(sw, d, port, s.arScratch);
        }
        for (uint32_t v : s.touched)
        {
            s.hops[v] = kUnset;
        }
        s.touched.clear();
    }
    return "";
}

} // namespace ns3
