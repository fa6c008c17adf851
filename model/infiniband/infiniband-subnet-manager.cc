/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-subnet-manager.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/infiniband-routing-graph.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <limits>
#include <map>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandSubnetManager");

NS_OBJECT_ENSURE_REGISTERED(InfinibandSubnetManager);

namespace
{

constexpr uint16_t kMaxUnicastLid = 0xbfff; // IBA §4.1.3: 0xC000.. are multicast
constexpr uint32_t kNoSwitch = std::numeric_limits<uint32_t>::max();

// setS: one CDG edge per (link, link) pair however many routes create it.
using DependencyGraph = boost::adjacency_list<boost::setS, boost::vecS, boost::directedS>;

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
                          "minhop, updn or ftree (OpenSM engine names); an unknown name makes "
                          "TryRoute fail naming the valid ones",
                          StringValue("minhop"),
                          MakeStringAccessor(&InfinibandSubnetManager::SetRoutingEngineName,
                                             &InfinibandSubnetManager::GetRoutingEngineName),
                          MakeStringChecker())
            .AddAttribute("AllowCreditLoops",
                          "Accept a routing whose channel dependency graph has a cycle",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSubnetManager::m_allowCreditLoops),
                          MakeBooleanChecker())
            .AddAttribute("CheckCreditLoops",
                          "Build the channel dependency graph of the routes and look for a "
                          "cycle (O(LIDs x links)); false leaves it out for a fabric without "
                          "credits (a flow-level plane), which cannot deadlock on them",
                          BooleanValue(true),
                          MakeBooleanAccessor(&InfinibandSubnetManager::m_checkCreditLoops),
                          MakeBooleanChecker())
            .AddAttribute("AdaptiveRouting",
                          "Also compute, per (switch, DLID), all equal-cost legal output ports; "
                          "the credit-loop check then covers every port of each group",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSubnetManager::m_adaptiveRouting),
                          MakeBooleanChecker())
            .AddAttribute("SubnetPerComponent",
                          "Route each connected component of the topology as a subnet of its "
                          "own (LIDs from BaseLid, routing and credit-loop check per "
                          "component), as the planes of a multi-plane fabric; false refuses a "
                          "disconnected topology",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSubnetManager::m_subnetPerComponent),
                          MakeBooleanChecker())
            .AddAttribute("BaseLid",
                          "First LID assigned",
                          UintegerValue(1),
                          MakeUintegerAccessor(&InfinibandSubnetManager::m_baseLid),
                          MakeUintegerChecker<uint16_t>(1, kMaxUnicastLid));
    return tid;
}

InfinibandSubnetManager::InfinibandSubnetManager()
    : m_engine(InfinibandRoutingEngineType::MINHOP),
      m_engineName("minhop"),
      m_allowCreditLoops(false),
      m_checkCreditLoops(true),
      m_adaptiveRouting(false),
      m_subnetPerComponent(false),
      m_baseLid(1),
      m_maxLid(0),
      m_dependencies(0),
      m_routed(false)
{
}

void
InfinibandSubnetManager::SetTopology(const InfinibandTopology& topology)
{
    NS_LOG_FUNCTION(this << topology.GetNNodes());
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
    NS_LOG_FUNCTION(this << roots.size());
    m_roots = roots;
}

void
InfinibandSubnetManager::SetRoutingEngine(InfinibandRoutingEngineType engine)
{
    NS_LOG_FUNCTION(this << InfinibandRoutingEngineName(engine));
    m_engine = engine;
    m_engineName = InfinibandRoutingEngineName(engine);
    m_engineError.clear();
    m_routed = false;
}

InfinibandRoutingEngineType
InfinibandSubnetManager::GetRoutingEngine() const
{
    return m_engine;
}

void
InfinibandSubnetManager::SetRoutingEngineName(std::string name)
{
    NS_LOG_FUNCTION(this << name);
    // Parsed here, once; a bad name is reported by TryRoute, which returns errors.
    InfinibandRoutingEngineType engine = m_engine;
    const std::string error = InfinibandParseRoutingEngine(name, engine);
    SetRoutingEngine(engine);
    m_engineName = name;
    m_engineError = error;
}

std::string
InfinibandSubnetManager::GetRoutingEngineName() const
{
    return m_engineName;
}

void
InfinibandSubnetManager::Route()
{
    NS_LOG_FUNCTION(this);
    const std::string error = TryRoute();
    NS_ABORT_MSG_IF(!error.empty(), "InfinibandSubnetManager: " << error);
}

std::string
InfinibandSubnetManager::TryRoute()
{
    m_routed = false;
    m_creditLoop.clear();
    m_dependencies = 0;
    NS_LOG_FUNCTION(this);
    if (!m_engineError.empty())
    {
        return m_engineError;
    }
    m_subnetLidOwner.clear();
    m_subnetOf.clear();
    if (m_subnetPerComponent)
    {
        std::vector<uint32_t> componentOf;
        const uint32_t count = FindComponents(componentOf);
        if (count > 1)
        {
            return RouteComponents(componentOf, count);
        }
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
    InfinibandRoutingContext ctx{m_topo,
                                 m_hcaDests,
                                 m_swIndex,
                                 m_swNode,
                                 m_hops,
                                 m_roots,
                                 m_adaptiveRouting,
                                 m_engineName,
                                 m_lft,
                                 m_ar,
                                 m_portLoad,
                                 {}};
    InfinibandSwitchGraph g(m_swNode.size());
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
        auto d = InfinibandBfsHops(g, {v});
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
                if (m_hops[v][u] != InfinibandRoutingContext::NO_PATH)
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
                return ctx.Unreachable(m_swNode[main], d);
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

    NS_LOG_LOGIC("routing " << m_hcaDests.size() << " HCA LIDs over " << m_swNode.size()
                            << " switches with " << m_engineName);
    error = InfinibandRoutingEngine::Create(m_engine)->Route(ctx);
    if (!error.empty())
    {
        return error;
    }
    RouteSwitchLids(ctx);
    m_routed = true;
    return m_checkCreditLoops ? CheckCreditLoops() : "";
}

uint32_t
InfinibandSubnetManager::FindComponents(std::vector<uint32_t>& componentOf) const
{
    const uint32_t n = m_topo.GetNNodes();
    std::vector<uint32_t> parent(n);
    for (uint32_t v = 0; v < n; ++v)
    {
        parent[v] = v;
    }
    auto root = [&](uint32_t v) {
        while (parent[v] != v)
        {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        return v;
    };
    for (const auto& l : m_topo.GetLinks())
    {
        const uint32_t a = root(l.nodeA);
        const uint32_t b = root(l.nodeB);
        parent[std::max(a, b)] = std::min(a, b); // the root stays the lowest node
    }
    componentOf.assign(n, 0);
    std::vector<uint32_t> idOfRoot(n, kNoSwitch);
    uint32_t count = 0;
    for (uint32_t v = 0; v < n; ++v)
    {
        const uint32_t r = root(v);
        if (idOfRoot[r] == kNoSwitch)
        {
            idOfRoot[r] = count++;
        }
        componentOf[v] = idOfRoot[r];
    }
    return count;
}

std::string
InfinibandSubnetManager::RouteComponents(const std::vector<uint32_t>& componentOf, uint32_t count)
{
    NS_LOG_FUNCTION(this << count);
    const uint32_t n = m_topo.GetNNodes();
    std::vector<std::vector<uint32_t>> nodesOf(count);
    std::vector<uint32_t> local(n);
    for (uint32_t v = 0; v < n; ++v)
    {
        local[v] = nodesOf[componentOf[v]].size();
        nodesOf[componentOf[v]].push_back(v);
    }
    std::vector<std::vector<const InfinibandTopology::Link*>> linksOf(count);
    for (const auto& l : m_topo.GetLinks())
    {
        linksOf[componentOf[l.nodeA]].push_back(&l);
    }
    m_subnetOf = componentOf;
    m_lidOf.assign(n, {});
    m_lft.assign(n, {});
    m_ar.assign(n, {});
    m_portLoad.assign(n, {});
    m_hops.clear(); // per subnet only, and not needed once routed
    m_hcaDests.clear();
    m_switchDests.clear();
    m_lidOwner.clear();
    m_subnetLidOwner.assign(count, {});
    m_maxLid = 0;
    m_swNode = m_topo.GetSwitches();
    m_swIndex.assign(n, kNoSwitch);
    for (uint32_t v = 0; v < m_swNode.size(); ++v)
    {
        m_swIndex[m_swNode[v]] = v;
    }
    std::string failure;
    for (uint32_t c = 0; c < count && failure.empty(); ++c)
    {
        const std::vector<uint32_t>& nodes = nodesOf[c];
        // The component as a topology of its own, nodes and ports in the same order.
        InfinibandTopology sub;
        bool hasHca = false;
        for (uint32_t v : nodes)
        {
            const auto& node = m_topo.GetNode(v);
            hasHca = hasHca || !m_topo.IsSwitch(v);
            if (m_topo.IsSwitch(v))
            {
                sub.AddSwitch(node.name, node.numPorts);
            }
            else
            {
                sub.AddHca(node.name, node.numPorts);
            }
        }
        if (!hasHca)
        {
            return "subnet " + std::to_string(c) + " of " + m_topo.Describe(nodes.front()) +
                   " has no HCA: the fabric is disconnected";
        }
        for (const auto* l : linksOf[c])
        {
            sub.Connect(local[l->nodeA], l->portA, local[l->nodeB], l->portB);
        }
        Ptr<InfinibandSubnetManager> sm = CreateObject<InfinibandSubnetManager>();
        sm->m_engine = m_engine;
        sm->m_engineName = m_engineName;
        sm->m_allowCreditLoops = m_allowCreditLoops;
        sm->m_checkCreditLoops = m_checkCreditLoops;
        sm->m_adaptiveRouting = m_adaptiveRouting;
        sm->m_baseLid = m_baseLid;
        for (uint32_t r : m_roots)
        {
            if (r < n && componentOf[r] == c)
            {
                sm->m_roots.push_back(local[r]);
            }
        }
        sm->SetTopology(sub);
        const std::string error = sm->TryRoute();
        if (!error.empty())
        {
            failure = "subnet " + std::to_string(c) + " of " + m_topo.Describe(nodes.front()) +
                      ": " + error;
        }
        // Its results, node for node: tables and LIDs are per node already.
        for (uint32_t i = 0; i < nodes.size(); ++i)
        {
            const uint32_t v = nodes[i];
            if (i < sm->m_lidOf.size())
            {
                m_lidOf[v] = std::move(sm->m_lidOf[i]);
            }
            if (m_topo.IsSwitch(v) && i < sm->m_lft.size())
            {
                m_lft[v] = std::move(sm->m_lft[i]);
                m_ar[v] = std::move(sm->m_ar[i]);
                m_portLoad[v] = std::move(sm->m_portLoad[i]);
            }
        }
        for (const auto& d : sm->m_hcaDests)
        {
            m_hcaDests.push_back({d.lid, nodes[d.node], nodes[d.attachSwitch], d.attachPort});
        }
        auto& owners = m_subnetLidOwner[c];
        owners.assign(sm->m_lidOwner.size(), {0, 0});
        for (uint32_t lid = m_baseLid; lid < sm->m_lidOwner.size(); ++lid)
        {
            owners[lid] = {nodes[sm->m_lidOwner[lid].first], sm->m_lidOwner[lid].second};
        }
        m_maxLid = std::max(m_maxLid, sm->m_maxLid);
        m_dependencies += sm->m_dependencies;
        if (m_creditLoop.empty())
        {
            for (const auto& l : sm->m_creditLoop)
            {
                m_creditLoop.push_back({nodes[l.fromNode], l.fromPort, nodes[l.toNode], l.toPort});
            }
        }
    }
    if (!failure.empty())
    {
        return failure;
    }
    NS_LOG_LOGIC(count << " subnets routed, largest LID " << m_maxLid);
    m_routed = true;
    return "";
}

std::string
InfinibandSubnetManager::AssignLids()
{
    NS_LOG_FUNCTION(this);
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
                m_hcaDests.push_back(InfinibandRouteDestination{lid, h, peer, peerPort});
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
        m_switchDests.push_back(InfinibandRouteDestination{lid, s, s, 0});
    }
    m_maxLid = static_cast<uint16_t>(next - 1);
    NS_LOG_LOGIC(m_hcaDests.size() << " HCA ports and " << m_switchDests.size()
                                   << " switches take LIDs " << m_baseLid << ".." << m_maxLid);
    return "";
}

void
InfinibandSubnetManager::RouteSwitchLids(InfinibandRoutingContext& ctx)
{
    NS_LOG_FUNCTION(this);
    // The context keeps each switch's neighbours: this loop is quadratic in the switches.
    std::vector<uint8_t> candidates;
    for (const auto& d : m_switchDests)
    {
        const uint32_t a = m_swIndex[d.node];
        for (uint32_t v = 0; v < m_swNode.size(); ++v)
        {
            const uint32_t sw = m_swNode[v];
            if (v == a)
            {
                ctx.SetEntry(sw, d, LFT_SELF, {LFT_SELF});
                continue;
            }
            if (m_hops[v][a] == InfinibandRoutingContext::NO_PATH)
            {
                continue; // isolated switch without HCAs: stays unreachable
            }
            candidates.clear();
            for (const auto& [port, u] : ctx.SwitchNeighbours(sw))
            {
                if (m_hops[u][a] + 1 == m_hops[v][a])
                {
                    candidates.push_back(port);
                }
            }
            ctx.SetEntry(sw, d, candidates.front(), candidates);
        }
    }
}

std::string
InfinibandSubnetManager::CheckCreditLoops()
{
    NS_LOG_FUNCTION(this);
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
    NS_LOG_LOGIC(m_dependencies << " channel dependencies between " << boost::num_vertices(cdg)
                                << " directed links");

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
        NS_LOG_WARN("routing engine " << m_engineName << ": " << DescribeCreditLoop());
        if (!m_allowCreditLoops)
        {
            return "routing engine " + m_engineName + " produced a " + DescribeCreditLoop() +
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
    return GetLidOwner(0, lid, node, port);
}

bool
InfinibandSubnetManager::GetLidOwner(uint32_t subnet,
                                     uint16_t lid,
                                     uint32_t& node,
                                     uint32_t& port) const
{
    if (m_subnetLidOwner.empty() && subnet != 0)
    {
        return false;
    }
    const auto& owners = m_subnetLidOwner.empty() ? m_lidOwner : m_subnetLidOwner.at(subnet);
    if (lid < m_baseLid || lid >= owners.size())
    {
        return false;
    }
    node = owners[lid].first;
    port = owners[lid].second;
    return true;
}

uint32_t
InfinibandSubnetManager::GetNSubnets() const
{
    return m_subnetLidOwner.empty() ? 1 : m_subnetLidOwner.size();
}

uint32_t
InfinibandSubnetManager::GetSubnet(uint32_t node) const
{
    return node < m_subnetOf.size() ? m_subnetOf[node] : 0;
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
        count += lft[d.lid] == port && GetSubnet(d.node) == GetSubnet(switchNode) ? 1 : 0;
    }
    return count;
}

std::string
InfinibandSubnetManager::TracePath(uint32_t srcHca,
                                   uint32_t srcPort,
                                   uint16_t dlid,
                                   std::vector<InfinibandDirectedLink>& path) const
{
    NS_LOG_FUNCTION(this << srcHca << srcPort << dlid);
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
