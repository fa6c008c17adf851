/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-subnet-manager.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/pending/queue.hpp>
#include <limits>
#include <map>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandSubnetManager");

NS_OBJECT_ENSURE_REGISTERED(InfinibandSubnetManager);

namespace
{

constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
constexpr uint16_t kMaxUnicastLid = 0xbfff; // IBA §4.1.3: 0xC000.. are multicast
constexpr uint32_t kNoSwitch = std::numeric_limits<uint32_t>::max();

using SwitchGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
using DirectedGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
// setS: one CDG edge per (link, link) pair however many routes create it.
using DependencyGraph = boost::adjacency_list<boost::setS, boost::vecS, boost::directedS>;

// Hop counts from a set of sources (Boost multi-source BFS).
template <typename Graph>
std::vector<uint32_t>
BfsHops(const Graph& g, const std::vector<uint32_t>& sources)
{
    using Vertex = typename boost::graph_traits<Graph>::vertex_descriptor;
    const size_t n = boost::num_vertices(g);
    std::vector<uint32_t> dist(n, kInf);
    if (sources.empty())
    {
        return dist;
    }
    std::vector<Vertex> src(sources.begin(), sources.end());
    for (auto s : src)
    {
        dist[s] = 0;
    }
    boost::queue<Vertex> q;
    std::vector<boost::default_color_type> color(n, boost::white_color);
    auto index = boost::get(boost::vertex_index, g);
    boost::breadth_first_search(g,
                                src.begin(),
                                src.end(),
                                q,
                                boost::make_bfs_visitor(boost::record_distances(
                                    boost::make_iterator_property_map(dist.begin(), index),
                                    boost::on_tree_edge())),
                                boost::make_iterator_property_map(color.begin(), index));
    return dist;
}

struct CycleFound
{
};

// Records DFS tree parents; on the first back edge u->v, the cycle is v..u.
class CycleRecorder : public boost::default_dfs_visitor
{
  public:
    CycleRecorder(std::vector<size_t>* parent, std::vector<size_t>* cycle)
        : m_parent(parent),
          m_cycle(cycle)
    {
    }

    template <typename Edge, typename Graph>
    void tree_edge(Edge e, const Graph& g) const
    {
        (*m_parent)[boost::target(e, g)] = boost::source(e, g);
    }

    template <typename Edge, typename Graph>
    void back_edge(Edge e, const Graph& g) const
    {
        const size_t u = boost::source(e, g);
        const size_t v = boost::target(e, g);
        std::vector<size_t> rev;
        for (size_t x = u; x != v; x = (*m_parent)[x])
        {
            rev.push_back(x);
        }
        rev.push_back(v);
        m_cycle->assign(rev.rbegin(), rev.rend());
        throw CycleFound();
    }

  private:
    std::vector<size_t>* m_parent;
    std::vector<size_t>* m_cycle;
};

} // namespace

TypeId
InfinibandSubnetManager::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandSubnetManager")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<InfinibandSubnetManager>()
            .AddAttribute("RoutingEngine",
                          "minhop, updn or ftree (OpenSM engine names)",
                          StringValue("minhop"),
                          MakeStringAccessor(&InfinibandSubnetManager::m_engine),
                          MakeStringChecker())
            .AddAttribute("AllowCreditLoops",
                          "Accept a routing whose channel dependency graph has a cycle",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSubnetManager::m_allowCreditLoops),
                          MakeBooleanChecker())
            .AddAttribute("AdaptiveRouting",
                          "Also compute, per (switch, DLID), all equal-cost legal output ports; "
                          "the credit-loop check then covers every port of each group",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSubnetManager::m_adaptiveRouting),
                          MakeBooleanChecker())
            .AddAttribute("BaseLid",
                          "First LID assigned",
                          UintegerValue(1),
                          MakeUintegerAccessor(&InfinibandSubnetManager::m_baseLid),
                          MakeUintegerChecker<uint16_t>(1, kMaxUnicastLid));
    return tid;
}

InfinibandSubnetManager::InfinibandSubnetManager()
    : m_engine("minhop"),
      m_allowCreditLoops(false),
      m_adaptiveRouting(false),
      m_baseLid(1),
      m_maxLid(0),
      m_dependencies(0),
      m_routed(false)
{
}

void
InfinibandSubnetManager::SetTopology(const InfinibandTopology& topology)
{
    m_topo = topology;
    m_routed = false;
}

const InfinibandTopology&
InfinibandSubnetManager::GetTopology() const
{
    return m_topo;
}

void
InfinibandSubnetManager::SetRootSwitches(const std::vector<uint32_t>& roots)
{
    m_roots = roots;
}

void
InfinibandSubnetManager::Route()
{
    const std::string error = TryRoute();
    NS_ABORT_MSG_IF(!error.empty(), "InfinibandSubnetManager: " << error);
}

std::string
InfinibandSubnetManager::TryRoute()
{
    m_routed = false;
    m_creditLoop.clear();
    m_dependencies = 0;
    if (m_engine != "minhop" && m_engine != "updn" && m_engine != "ftree")
    {
        return "unknown RoutingEngine \"" + m_engine + "\"; valid engines: minhop, updn, ftree";
    }
    std::string error = AssignLids();
    if (!error.empty())
    {
        return error;
    }

    // Switch graph and all-pairs hop counts (Boost BFS from each switch).
    const uint32_t n = m_topo.GetNNodes();
    m_swIndex.assign(n, kNoSwitch);
    m_swNode = m_topo.GetSwitches();
    for (uint32_t v = 0; v < m_swNode.size(); ++v)
    {
        m_swIndex[m_swNode[v]] = v;
    }
    SwitchGraph g(m_swNode.size());
    for (const auto& l : m_topo.GetLinks())
    {
        if (m_topo.IsSwitch(l.nodeA) && m_topo.IsSwitch(l.nodeB) && l.nodeA != l.nodeB)
        {
            boost::add_edge(m_swIndex[l.nodeA], m_swIndex[l.nodeB], g);
        }
    }
    m_hops.assign(m_swNode.size(), {});
    for (uint32_t v = 0; v < m_swNode.size(); ++v)
    {
        auto d = BfsHops(g, {v});
        m_hops[v].resize(d.size());
        std::transform(d.begin(), d.end(), m_hops[v].begin(), [](uint32_t x) {
            return static_cast<uint16_t>(std::min<uint32_t>(x, 0xffff));
        });
    }
    // The component holding most HCA ports is the fabric; name whatever is
    // cut off from it.
    if (!m_hcaDests.empty())
    {
        std::map<uint32_t, uint32_t> hcaPortsPerComponent; // lowest vertex -> count
        auto component = [&](uint32_t v) {
            uint32_t c = v;
            for (uint32_t u = 0; u < v; ++u)
            {
                if (m_hops[v][u] != 0xffff)
                {
                    c = u;
                    break;
                }
            }
            return c;
        };
        for (const auto& d : m_hcaDests)
        {
            ++hcaPortsPerComponent[component(m_swIndex[d.attachSwitch])];
        }
        uint32_t main = hcaPortsPerComponent.begin()->first;
        for (const auto& [c, count] : hcaPortsPerComponent)
        {
            main = count > hcaPortsPerComponent[main] ? c : main;
        }
        for (const auto& d : m_hcaDests)
        {
            if (component(m_swIndex[d.attachSwitch]) != main)
            {
                return Unreachable(m_swNode[main], d);
            }
        }
        for (uint32_t v = 0; v < m_swNode.size(); ++v)
        {
            if (component(v) != main)
            {
                return m_topo.Describe(m_swNode[v]) + " has no path to " +
                       m_topo.Describe(m_swNode[main]) + ": the fabric is disconnected";
            }
        }
    }

    m_lft.assign(n, {});
    m_ar.assign(n, {});
    m_portLoad.assign(n, {});
    for (uint32_t sw : m_swNode)
    {
        m_lft[sw].assign(m_maxLid + 1, LFT_UNREACHABLE);
        m_portLoad[sw].assign(m_topo.GetNode(sw).numPorts + 1, 0);
        if (m_adaptiveRouting)
        {
            m_ar[sw].assign(m_maxLid + 1, {});
        }
    }

    if (m_engine == "minhop")
    {
        error = RouteMinHop();
    }
    else if (m_engine == "updn")
    {
        error = RouteUpDown();
    }
    else
    {
        error = RouteFatTree();
    }
    if (!error.empty())
    {
        return error;
    }
    RouteSwitchLids();
    m_routed = true;
    return CheckCreditLoops();
}

std::string
InfinibandSubnetManager::AssignLids()
{
    m_lidOf.assign(m_topo.GetNNodes(), {});
    m_lidOwner.assign(1, {0, 0}); // LID 0 is reserved
    m_hcaDests.clear();
    m_switchDests.clear();
    uint32_t next = m_baseLid;
    m_lidOwner.resize(m_baseLid, {0, 0});
    auto take = [&](uint32_t node, uint32_t port) {
        m_lidOf[node][port] = static_cast<uint16_t>(next);
        m_lidOwner.emplace_back(node, port);
        return static_cast<uint16_t>(next++);
    };
    for (uint32_t h : m_topo.GetHcas())
    {
        const auto& node = m_topo.GetNode(h);
        m_lidOf[h].assign(node.numPorts + 1, 0);
        bool connected = false;
        for (uint32_t p = 1; p <= node.numPorts; ++p)
        {
            uint32_t peer = 0;
            uint32_t peerPort = 0;
            if (!m_topo.GetPeer(h, p, peer, peerPort))
            {
                continue; // no LID for an inactive port, as OpenSM
            }
            connected = true;
            if (next > kMaxUnicastLid)
            {
                return "LID space exhausted at " + m_topo.Describe(h);
            }
            const uint16_t lid = take(h, p);
            if (m_topo.IsSwitch(peer))
            {
                m_hcaDests.push_back(Dest{lid, h, peer, peerPort});
            }
        }
        if (!connected)
        {
            return m_topo.Describe(h) +
                   " has no connected port: a disconnected host cannot be routed";
        }
    }
    for (uint32_t s : m_topo.GetSwitches())
    {
        m_lidOf[s].assign(1, 0);
        if (next > kMaxUnicastLid)
        {
            return "LID space exhausted at " + m_topo.Describe(s);
        }
        const uint16_t lid = take(s, 0);
        m_switchDests.push_back(Dest{lid, s, s, 0});
    }
    m_maxLid = static_cast<uint16_t>(next - 1);
    return "";
}

std::string
InfinibandSubnetManager::Unreachable(uint32_t sw, const Dest& d) const
{
    return m_topo.Describe(d.node) + " (LID " + std::to_string(d.lid) + ") is unreachable from " +
           m_topo.Describe(sw) + " with routing engine " + m_engine +
           ": the fabric is disconnected";
}

uint8_t
InfinibandSubnetManager::PickLeastLoaded(uint32_t sw, const std::vector<uint8_t>& candidates)
{
    NS_ASSERT(!candidates.empty());
    uint8_t best = candidates.front();
    for (uint8_t p : candidates)
    {
        if (m_portLoad[sw][p] < m_portLoad[sw][best])
        {
            best = p;
        }
    }
    ++m_portLoad[sw][best];
    return best;
}

void
InfinibandSubnetManager::SetEntry(uint32_t sw,
                                  const Dest& d,
                                  uint8_t port,
                                  const std::vector<uint8_t>& group)
{
    m_lft[sw][d.lid] = port;
    if (m_adaptiveRouting)
    {
        m_ar[sw][d.lid] = group;
    }
}

std::string
InfinibandSubnetManager::RouteMinHop()
{
    for (const auto& d : m_hcaDests)
    {
        const uint32_t a = m_swIndex[d.attachSwitch];
        for (uint32_t v = 0; v < m_swNode.size(); ++v)
        {
            const uint32_t sw = m_swNode[v];
            if (v == a)
            {
                SetEntry(sw, d, static_cast<uint8_t>(d.attachPort), {uint8_t(d.attachPort)});
                continue;
            }
            std::vector<uint8_t> candidates;
            for (uint32_t p = 1; p <= m_topo.GetNode(sw).numPorts; ++p)
            {
                uint32_t peer = 0;
                uint32_t peerPort = 0;
                if (m_topo.GetPeer(sw, p, peer, peerPort) && m_topo.IsSwitch(peer) &&
                    m_hops[m_swIndex[peer]][a] + 1 == m_hops[v][a])
                {
                    candidates.push_back(static_cast<uint8_t>(p));
                }
            }
            if (candidates.empty())
            {
                return Unreachable(sw, d);
            }
            SetEntry(sw, d, PickLeastLoaded(sw, candidates), candidates);
        }
    }
    return "";
}

std::string
InfinibandSubnetManager::RouteUpDown()
{
    const uint32_t nsw = static_cast<uint32_t>(m_swNode.size());
    std::vector<uint32_t> roots;
    if (m_roots.empty())
    {
        // Default: switches farthest from the HCA-attached ones (fat-tree spines).
        std::vector<uint32_t> leaves;
        for (const auto& d : m_hcaDests)
        {
            leaves.push_back(m_swIndex[d.attachSwitch]);
        }
        std::sort(leaves.begin(), leaves.end());
        leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
        SwitchGraph g(nsw);
        for (uint32_t v = 0; v < nsw; ++v)
        {
            for (uint32_t u = v + 1; u < nsw; ++u)
            {
                if (m_hops[v][u] == 1)
                {
                    boost::add_edge(v, u, g);
                }
            }
        }
        auto fromLeaves = BfsHops(g, leaves);
        uint32_t far = 0;
        for (auto x : fromLeaves)
        {
            far = std::max(far, x == kInf ? 0 : x);
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
        for (uint32_t r : m_roots)
        {
            if (r >= m_topo.GetNNodes() || !m_topo.IsSwitch(r))
            {
                return "updn root " + m_topo.Describe(r) + " is not a switch";
            }
            roots.push_back(m_swIndex[r]);
        }
    }
    // Ranks: min hops to any root.  A move u->v goes up if v has a lower
    // (rank, index): index breaks ties between equal ranks as OpenSM's GUIDs do.
    std::vector<uint32_t> rank(nsw, kInf);
    for (uint32_t v = 0; v < nsw; ++v)
    {
        for (uint32_t r : roots)
        {
            rank[v] = std::min<uint32_t>(rank[v], m_hops[v][r]);
        }
    }
    auto isUp = [&](uint32_t from, uint32_t to) {
        return rank[to] < rank[from] || (rank[to] == rank[from] && to < from);
    };
    // upGraph: edge x->p for each up move; BFS on it from the destination's
    // switch gives the down-only distance from every switch to it.
    DirectedGraph upGraph(nsw);
    for (const auto& l : m_topo.GetLinks())
    {
        if (m_topo.IsSwitch(l.nodeA) && m_topo.IsSwitch(l.nodeB) && l.nodeA != l.nodeB)
        {
            const uint32_t a = m_swIndex[l.nodeA];
            const uint32_t b = m_swIndex[l.nodeB];
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

    for (const auto& d : m_hcaDests)
    {
        const uint32_t a = m_swIndex[d.attachSwitch];
        const auto downHops = BfsHops(upGraph, {a});
        std::vector<uint32_t> hops(nsw, kInf);
        // A switch that can reach the destination going only down must do so:
        // its LFT entry also serves packets that arrived going down, and those
        // may not turn up again.  Others go up, towards the nearest such switch.
        for (uint32_t v : order)
        {
            const uint32_t sw = m_swNode[v];
            if (v == a)
            {
                hops[v] = 0;
                SetEntry(sw, d, static_cast<uint8_t>(d.attachPort), {uint8_t(d.attachPort)});
                continue;
            }
            std::vector<std::pair<uint8_t, uint32_t>> options; // (port, hops after it)
            for (uint32_t p = 1; p <= m_topo.GetNode(sw).numPorts; ++p)
            {
                uint32_t peer = 0;
                uint32_t peerPort = 0;
                if (!m_topo.GetPeer(sw, p, peer, peerPort) || !m_topo.IsSwitch(peer) || peer == sw)
                {
                    continue;
                }
                const uint32_t u = m_swIndex[peer];
                if (downHops[v] != kInf)
                {
                    if (!isUp(v, u) && downHops[u] + 1 == downHops[v])
                    {
                        options.emplace_back(static_cast<uint8_t>(p), downHops[u]);
                    }
                }
                else if (isUp(v, u) && hops[u] != kInf)
                {
                    options.emplace_back(static_cast<uint8_t>(p), hops[u]);
                }
            }
            if (options.empty())
            {
                return Unreachable(sw, d) + " (no legal up/down path)";
            }
            uint32_t best = kInf;
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
            SetEntry(sw, d, PickLeastLoaded(sw, candidates), candidates);
        }
    }
    return "";
}

std::string
InfinibandSubnetManager::RouteFatTree()
{
    const uint32_t nsw = static_cast<uint32_t>(m_swNode.size());
    std::vector<uint32_t> leaves;
    for (const auto& d : m_hcaDests)
    {
        leaves.push_back(m_swIndex[d.attachSwitch]);
    }
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    if (leaves.empty())
    {
        return "ftree: no HCA is attached to a switch";
    }
    SwitchGraph g(nsw);
    for (uint32_t v = 0; v < nsw; ++v)
    {
        for (uint32_t u = v + 1; u < nsw; ++u)
        {
            if (m_hops[v][u] == 1)
            {
                boost::add_edge(v, u, g);
            }
        }
    }
    // Levels from the leaves (OpenSM ftree ranks from the roots; same thing on
    // a fat tree, and it needs no root list).
    const auto level = BfsHops(g, leaves);
    uint32_t maxLevel = 0;
    for (uint32_t v = 0; v < nsw; ++v)
    {
        maxLevel = std::max(maxLevel, level[v]);
    }
    for (const auto& l : m_topo.GetLinks())
    {
        if (m_topo.IsSwitch(l.nodeA) && m_topo.IsSwitch(l.nodeB))
        {
            const uint32_t la = level[m_swIndex[l.nodeA]];
            const uint32_t lb = level[m_swIndex[l.nodeB]];
            if (la + 1 != lb && lb + 1 != la)
            {
                return "ftree: the link between " + m_topo.Describe(l.nodeA) + " (level " +
                       std::to_string(la) + ") and " + m_topo.Describe(l.nodeB) + " (level " +
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
        const uint32_t sw = m_swNode[v];
        for (uint32_t p = 1; p <= m_topo.GetNode(sw).numPorts; ++p)
        {
            uint32_t peer = 0;
            uint32_t peerPort = 0;
            if (m_topo.GetPeer(sw, p, peer, peerPort) && m_topo.IsSwitch(peer) &&
                level[m_swIndex[peer]] == atLevel)
            {
                out.emplace_back(static_cast<uint8_t>(p), m_swIndex[peer]);
            }
        }
        return out;
    };

    // Per destination in LID order: first the down-going routes, from the
    // leaf upwards, spread over the down ports; then the up-going routes of all
    // other switches, from the top downwards, spread over the up ports.  Every
    // switch balances with its own per-port route counters, so the sources of
    // one leaf pick the same top switch for a destination, as ftree's do.
    for (const auto& d : m_hcaDests)
    {
        const uint32_t a = m_swIndex[d.attachSwitch];
        std::vector<uint32_t> hops(nsw, kInf);
        std::vector<bool> down(nsw, false);
        hops[a] = 0;
        down[a] = true;
        SetEntry(d.attachSwitch, d, static_cast<uint8_t>(d.attachPort), {uint8_t(d.attachPort)});
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
                    SetEntry(m_swNode[v], d, PickLeastLoaded(m_swNode[v], candidates), candidates);
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
                uint32_t best = kInf;
                const auto ups = neighbours(v, l + 1);
                for (const auto& [port, u] : ups)
                {
                    best = std::min(best, hops[u]);
                }
                if (best == kInf)
                {
                    return Unreachable(m_swNode[v], d) + " (ftree: no up port leads to it)";
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
                SetEntry(m_swNode[v], d, PickLeastLoaded(m_swNode[v], candidates), candidates);
            }
        }
    }
    return "";
}

void
InfinibandSubnetManager::RouteSwitchLids()
{
    for (const auto& d : m_switchDests)
    {
        const uint32_t a = m_swIndex[d.node];
        for (uint32_t v = 0; v < m_swNode.size(); ++v)
        {
            const uint32_t sw = m_swNode[v];
            if (v == a)
            {
                SetEntry(sw, d, LFT_SELF, {LFT_SELF});
                continue;
            }
            if (m_hops[v][a] == 0xffff)
            {
                continue; // isolated switch without HCAs: stays unreachable
            }
            std::vector<uint8_t> candidates;
            for (uint32_t p = 1; p <= m_topo.GetNode(sw).numPorts; ++p)
            {
                uint32_t peer = 0;
                uint32_t peerPort = 0;
                if (m_topo.GetPeer(sw, p, peer, peerPort) && m_topo.IsSwitch(peer) &&
                    m_hops[m_swIndex[peer]][a] + 1 == m_hops[v][a])
                {
                    candidates.push_back(static_cast<uint8_t>(p));
                }
            }
            SetEntry(sw, d, candidates.front(), candidates);
        }
    }
}

std::string
InfinibandSubnetManager::CheckCreditLoops()
{
    const auto& links = m_topo.GetLinks();
    auto linkId = [&](uint32_t node, uint32_t port) -> size_t {
        const int64_t l = m_topo.GetNode(node).linkOfPort[port];
        const bool fromA = links[l].nodeA == node && links[l].portA == port;
        return 2 * static_cast<size_t>(l) + (fromA ? 0 : 1);
    };
    DependencyGraph cdg(2 * links.size());
    std::vector<size_t> injection;
    for (const auto& src : m_hcaDests)
    {
        injection.push_back(linkId(src.node, m_lidOwner[src.lid].second));
    }
    for (const auto& d : m_hcaDests)
    {
        std::vector<bool> seen(2 * links.size(), false);
        std::vector<size_t> work;
        for (size_t i = 0; i < m_hcaDests.size(); ++i)
        {
            if (m_hcaDests[i].lid != d.lid)
            {
                seen[injection[i]] = true;
                work.push_back(injection[i]);
            }
        }
        while (!work.empty())
        {
            const size_t in = work.back();
            work.pop_back();
            const auto& l = links[in / 2];
            const uint32_t sw = (in % 2 == 0) ? l.nodeB : l.nodeA;
            if (!m_topo.IsSwitch(sw))
            {
                continue;
            }
            std::vector<uint8_t> ports;
            if (m_adaptiveRouting && !m_ar[sw][d.lid].empty())
            {
                ports = m_ar[sw][d.lid];
            }
            else
            {
                ports = {m_lft[sw][d.lid]};
            }
            for (uint8_t p : ports)
            {
                if (p == LFT_UNREACHABLE || p == LFT_SELF)
                {
                    continue;
                }
                const size_t out = linkId(sw, p);
                boost::add_edge(in, out, cdg);
                if (!seen[out])
                {
                    seen[out] = true;
                    work.push_back(out);
                }
            }
        }
    }
    m_dependencies = boost::num_edges(cdg);

    std::vector<size_t> parent(boost::num_vertices(cdg));
    std::vector<size_t> cycle;
    try
    {
        boost::depth_first_search(cdg, boost::visitor(CycleRecorder(&parent, &cycle)));
    }
    catch (const CycleFound&)
    {
        for (size_t id : cycle)
        {
            const auto& l = links[id / 2];
            m_creditLoop.push_back(
                id % 2 == 0 ? InfinibandDirectedLink{l.nodeA, l.portA, l.nodeB, l.portB}
                            : InfinibandDirectedLink{l.nodeB, l.portB, l.nodeA, l.portA});
        }
    }
    if (!m_creditLoop.empty())
    {
        NS_LOG_WARN("routing engine " << m_engine << ": " << DescribeCreditLoop());
        if (!m_allowCreditLoops)
        {
            return "routing engine " + m_engine + " produced a " + DescribeCreditLoop() +
                   "; this routing can deadlock: use updn or ftree, or set AllowCreditLoops";
        }
    }
    return "";
}

std::string
InfinibandSubnetManager::DescribeLink(const InfinibandDirectedLink& l) const
{
    return m_topo.GetNode(l.fromNode).name + ":" + std::to_string(l.fromPort) + "->" +
           m_topo.GetNode(l.toNode).name + ":" + std::to_string(l.toPort);
}

std::string
InfinibandSubnetManager::DescribeCreditLoop() const
{
    if (m_creditLoop.empty())
    {
        return "no credit loop";
    }
    std::ostringstream os;
    os << "credit loop (cycle in the channel dependency graph) over " << m_creditLoop.size()
       << " links:";
    for (const auto& l : m_creditLoop)
    {
        os << " " << DescribeLink(l);
    }
    return os.str();
}

bool
InfinibandSubnetManager::HasCreditLoop() const
{
    return !m_creditLoop.empty();
}

const std::vector<InfinibandDirectedLink>&
InfinibandSubnetManager::GetCreditLoop() const
{
    return m_creditLoop;
}

uint64_t
InfinibandSubnetManager::GetChannelDependencyCount() const
{
    return m_dependencies;
}

uint16_t
InfinibandSubnetManager::GetLid(uint32_t node, uint32_t port) const
{
    NS_ABORT_MSG_IF(node >= m_lidOf.size(),
                    "InfinibandSubnetManager: no LIDs assigned to node " << node
                                                                         << " (call Route)");
    const auto& lids = m_lidOf[node];
    if (m_topo.IsSwitch(node))
    {
        return lids.at(0);
    }
    NS_ABORT_MSG_IF(port >= lids.size() || lids[port] == 0,
                    "InfinibandSubnetManager: " << m_topo.Describe(node) << " port " << port
                                                << " has no LID");
    return lids[port];
}

uint16_t
InfinibandSubnetManager::GetMaxLid() const
{
    return m_maxLid;
}

bool
InfinibandSubnetManager::GetLidOwner(uint16_t lid, uint32_t& node, uint32_t& port) const
{
    if (lid < m_baseLid || lid >= m_lidOwner.size())
    {
        return false;
    }
    node = m_lidOwner[lid].first;
    port = m_lidOwner[lid].second;
    return true;
}

const std::vector<uint8_t>&
InfinibandSubnetManager::GetForwardingTable(uint32_t switchNode) const
{
    NS_ABORT_MSG_IF(!m_routed, "InfinibandSubnetManager: Route() has not succeeded");
    NS_ABORT_MSG_IF(switchNode >= m_lft.size() || !m_topo.IsSwitch(switchNode),
                    "InfinibandSubnetManager: " << m_topo.Describe(switchNode)
                                                << " is not a switch");
    return m_lft[switchNode];
}

const std::vector<uint8_t>&
InfinibandSubnetManager::GetAdaptiveRoutingGroup(uint32_t switchNode, uint16_t dlid) const
{
    static const std::vector<uint8_t> empty;
    if (!m_adaptiveRouting || switchNode >= m_ar.size() || dlid >= m_ar[switchNode].size())
    {
        return empty;
    }
    return m_ar[switchNode][dlid];
}

uint32_t
InfinibandSubnetManager::GetPortRouteCount(uint32_t switchNode, uint32_t port) const
{
    const auto& lft = GetForwardingTable(switchNode);
    uint32_t count = 0;
    for (const auto& d : m_hcaDests)
    {
        count += lft[d.lid] == port ? 1 : 0;
    }
    return count;
}

std::string
InfinibandSubnetManager::TracePath(uint32_t srcHca,
                                   uint32_t srcPort,
                                   uint16_t dlid,
                                   std::vector<InfinibandDirectedLink>& path) const
{
    path.clear();
    if (!m_routed)
    {
        return "Route() has not succeeded";
    }
    uint32_t node = 0;
    uint32_t port = 0;
    if (!m_topo.GetPeer(srcHca, srcPort, node, port))
    {
        return m_topo.Describe(srcHca) + " port " + std::to_string(srcPort) + " is not connected";
    }
    path.push_back({srcHca, srcPort, node, port});
    // A route longer than the number of switches revisits one: a forwarding loop.
    for (size_t hop = 0; hop <= m_swNode.size(); ++hop)
    {
        if (!m_topo.IsSwitch(node))
        {
            if (m_lidOf[node].size() > port && m_lidOf[node][port] == dlid)
            {
                return "";
            }
            return "DLID " + std::to_string(dlid) + " was delivered to " + m_topo.Describe(node) +
                   " port " + std::to_string(port);
        }
        const uint8_t out = m_lft[node][dlid];
        if (out == LFT_SELF)
        {
            return m_lidOf[node][0] == dlid ? ""
                                            : "LFT of " + m_topo.Describe(node) + " sends DLID " +
                                                  std::to_string(dlid) + " to port 0";
        }
        if (out == LFT_UNREACHABLE)
        {
            return "LFT of " + m_topo.Describe(node) + " has no entry for DLID " +
                   std::to_string(dlid);
        }
        uint32_t next = 0;
        uint32_t nextPort = 0;
        if (!m_topo.GetPeer(node, out, next, nextPort))
        {
            return "LFT of " + m_topo.Describe(node) + " sends DLID " + std::to_string(dlid) +
                   " to unconnected port " + std::to_string(out);
        }
        path.push_back({node, out, next, nextPort});
        node = next;
        port = nextPort;
    }
    return "forwarding loop for DLID " + std::to_string(dlid) + " from " + m_topo.Describe(srcHca);
}

} // namespace ns3
