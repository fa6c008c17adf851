/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-topology.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <cmath>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandTopology");

uint32_t
InfinibandTopology::AddHca(const std::string& name, uint32_t numPorts)
{
    NS_LOG_FUNCTION(this << name << numPorts);
    NS_ABORT_MSG_IF(numPorts < 1 || numPorts > MAX_PORTS,
                    "InfinibandTopology: HCA " << name << " numPorts " << numPorts << " outside 1.."
                                               << MAX_PORTS);
    m_nodes.push_back(Node{NodeKind::HCA, name, numPorts, std::vector<int64_t>(numPorts + 1, -1)});
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

uint32_t
InfinibandTopology::AddSwitch(const std::string& name, uint32_t numPorts)
{
    NS_LOG_FUNCTION(this << name << numPorts);
    NS_ABORT_MSG_IF(numPorts < 1 || numPorts > MAX_PORTS,
                    "InfinibandTopology: switch " << name << " numPorts " << numPorts
                                                  << " outside 1.." << MAX_PORTS);
    m_nodes.push_back(
        Node{NodeKind::SWITCH, name, numPorts, std::vector<int64_t>(numPorts + 1, -1)});
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

std::string
InfinibandTopology::TryConnect(uint32_t nodeA, uint32_t portA, uint32_t nodeB, uint32_t portB)
{
    NS_LOG_FUNCTION(this << nodeA << portA << nodeB << portB);
    for (auto [node, port] : {std::make_pair(nodeA, portA), std::make_pair(nodeB, portB)})
    {
        if (node >= m_nodes.size())
        {
            return "InfinibandTopology: no node " + std::to_string(node);
        }
        if (port < 1 || port > m_nodes[node].numPorts)
        {
            return "InfinibandTopology: " + Describe(node) + " has no port " +
                   std::to_string(port) + " (ports 1.." + std::to_string(m_nodes[node].numPorts) +
                   ")";
        }
        if (m_nodes[node].linkOfPort[port] >= 0)
        {
            return "InfinibandTopology: " + Describe(node) + " port " + std::to_string(port) +
                   " is already connected";
        }
    }
    if (nodeA == nodeB && portA == portB)
    {
        return "InfinibandTopology: cannot connect " + Describe(nodeA) + " port " +
               std::to_string(portA) + " to itself";
    }
    m_links.push_back(Link{nodeA, portA, nodeB, portB});
    m_nodes[nodeA].linkOfPort[portA] = static_cast<int64_t>(m_links.size() - 1);
    m_nodes[nodeB].linkOfPort[portB] = static_cast<int64_t>(m_links.size() - 1);
    return "";
}

void
InfinibandTopology::Connect(uint32_t nodeA, uint32_t portA, uint32_t nodeB, uint32_t portB)
{
    const std::string error = TryConnect(nodeA, portA, nodeB, portB);
    NS_ABORT_MSG_IF(!error.empty(), error);
}

uint32_t
InfinibandTopology::GetNNodes() const
{
    return static_cast<uint32_t>(m_nodes.size());
}

const InfinibandTopology::Node&
InfinibandTopology::GetNode(uint32_t node) const
{
    NS_ABORT_MSG_IF(node >= m_nodes.size(), "InfinibandTopology: no node " << node);
    return m_nodes[node];
}

const std::vector<InfinibandTopology::Link>&
InfinibandTopology::GetLinks() const
{
    return m_links;
}

bool
InfinibandTopology::IsSwitch(uint32_t node) const
{
    return GetNode(node).kind == NodeKind::SWITCH;
}

bool
InfinibandTopology::GetPeer(uint32_t node,
                            uint32_t port,
                            uint32_t& peerNode,
                            uint32_t& peerPort) const
{
    const Node& n = GetNode(node);
    if (port < 1 || port > n.numPorts || n.linkOfPort[port] < 0)
    {
        return false;
    }
    const Link& l = m_links[n.linkOfPort[port]];
    const bool isA = l.nodeA == node && l.portA == port;
    peerNode = isA ? l.nodeB : l.nodeA;
    peerPort = isA ? l.portB : l.portA;
    return true;
}

std::vector<uint32_t>
InfinibandTopology::GetHcas() const
{
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
    {
        if (m_nodes[i].kind == NodeKind::HCA)
        {
            out.push_back(i);
        }
    }
    return out;
}

std::vector<uint32_t>
InfinibandTopology::GetSwitches() const
{
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
    {
        if (m_nodes[i].kind == NodeKind::SWITCH)
        {
            out.push_back(i);
        }
    }
    return out;
}

std::string
InfinibandTopology::Describe(uint32_t node) const
{
    if (node >= m_nodes.size())
    {
        return "node " + std::to_string(node);
    }
    return (m_nodes[node].kind == NodeKind::HCA ? "HCA " : "switch ") + m_nodes[node].name +
           " (node " + std::to_string(node) + ")";
}

uint32_t
InfinibandTopology::GetTiers() const
{
    return m_tiers;
}

InfinibandTopology
InfinibandTopology::Ring(uint32_t numSwitches, uint32_t hostsPerSwitch)
{
    NS_LOG_FUNCTION(numSwitches << hostsPerSwitch);
    NS_ABORT_MSG_IF(numSwitches < 3,
                    "InfinibandTopology::Ring: numSwitches " << numSwitches << " < 3");
    InfinibandTopology t;
    std::vector<uint32_t> sw;
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        for (uint32_t h = 0; h < hostsPerSwitch; ++h)
        {
            t.AddHca("h" + std::to_string(i * hostsPerSwitch + h));
        }
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        sw.push_back(t.AddSwitch("sw" + std::to_string(i), 2 + hostsPerSwitch));
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        t.Connect(sw[i], 1, sw[(i + 1) % numSwitches], 2);
        for (uint32_t h = 0; h < hostsPerSwitch; ++h)
        {
            t.Connect(i * hostsPerSwitch + h, 1, sw[i], 3 + h);
        }
    }
    return t;
}

InfinibandTopology
InfinibandTopology::KaryNTree(uint32_t k, uint32_t n)
{
    NS_LOG_FUNCTION(k << n);
    NS_ABORT_MSG_IF(k < 2 || n < 1, "InfinibandTopology::KaryNTree: k " << k << " n " << n);
    NS_ABORT_MSG_IF(2 * k > MAX_PORTS, "InfinibandTopology::KaryNTree: 2k = " << 2 * k << " ports");
    uint64_t perLevel = 1;
    for (uint32_t i = 0; i + 1 < n; ++i)
    {
        perLevel *= k;
    }
    NS_ABORT_MSG_IF(perLevel * k > 49151, "InfinibandTopology::KaryNTree: too many hosts");
    InfinibandTopology t;
    const uint32_t hosts = static_cast<uint32_t>(perLevel * k);
    for (uint32_t h = 0; h < hosts; ++h)
    {
        t.AddHca("h" + std::to_string(h));
    }
    std::vector<std::vector<uint32_t>> sw(n);
    for (uint32_t l = 0; l < n; ++l)
    {
        for (uint64_t w = 0; w < perLevel; ++w)
        {
            sw[l].push_back(t.AddSwitch("s" + std::to_string(l) + "_" + std::to_string(w),
                                        l + 1 < n ? 2 * k : k));
        }
    }
    for (uint32_t h = 0; h < hosts; ++h)
    {
        t.Connect(h, 1, sw[0][h / k], h % k + 1);
    }
    uint64_t digitWeight = 1; // k^l
    for (uint32_t l = 0; l + 1 < n; ++l)
    {
        for (uint64_t w = 0; w < perLevel; ++w)
        {
            const uint64_t digit = (w / digitWeight) % k;
            for (uint32_t i = 0; i < k; ++i)
            {
                const uint64_t upper = w - digit * digitWeight + i * digitWeight;
                t.Connect(sw[l][w], k + 1 + i, sw[l + 1][upper], static_cast<uint32_t>(digit) + 1);
            }
        }
        digitWeight *= k;
    }
    t.m_tiers = n;
    return t;
}

std::string
InfinibandTopology::TryFatTree(uint32_t switchRadix,
                               uint32_t numHosts,
                               double oversubscription,
                               InfinibandTopology& topology)
{
    NS_LOG_FUNCTION(switchRadix << numHosts << oversubscription);
    std::ostringstream why;
    if (switchRadix < 2 || switchRadix > MAX_PORTS)
    {
        why << "fat tree: switch radix " << switchRadix << " outside 2.." << MAX_PORTS;
        return why.str();
    }
    if (numHosts < 1 || numHosts > 49151)
    {
        why << "fat tree: number of hosts " << numHosts << " outside 1..49151 (unicast LIDs)";
        return why.str();
    }
    if (!(oversubscription >= 1.0) || !std::isfinite(oversubscription))
    {
        why << "fat tree: oversubscription " << oversubscription << " must be >= 1";
        return why.str();
    }
    InfinibandTopology t;
    for (uint32_t h = 0; h < numHosts; ++h)
    {
        t.AddHca("h" + std::to_string(h));
    }
    if (numHosts <= switchRadix)
    {
        uint32_t s = t.AddSwitch("leaf0", switchRadix);
        for (uint32_t h = 0; h < numHosts; ++h)
        {
            t.Connect(h, 1, s, h + 1);
        }
        t.m_tiers = 1;
        topology = t;
        return "";
    }
    // Leaf ports: down / up = oversubscription.
    uint32_t down = static_cast<uint32_t>(
        std::floor(switchRadix * oversubscription / (1.0 + oversubscription) + 1e-9));
    down = std::min(std::max(down, 1U), switchRadix - 1);
    const uint32_t up = switchRadix - down;
    const uint32_t leaves = (numHosts + down - 1) / down;
    std::vector<uint32_t> leaf;
    for (uint32_t i = 0; i < leaves; ++i)
    {
        leaf.push_back(t.AddSwitch("leaf" + std::to_string(i), switchRadix));
    }
    for (uint32_t h = 0; h < numHosts; ++h)
    {
        t.Connect(h, 1, leaf[h / down], h % down + 1);
    }
    if (leaves <= switchRadix)
    {
        for (uint32_t j = 0; j < up; ++j)
        {
            uint32_t spine = t.AddSwitch("spine" + std::to_string(j), switchRadix);
            for (uint32_t i = 0; i < leaves; ++i)
            {
                t.Connect(leaf[i], down + 1 + j, spine, i + 1);
            }
        }
        t.m_tiers = 2;
        topology = t;
        return "";
    }
    const uint32_t half = switchRadix / 2;
    const uint32_t pods = (leaves + half - 1) / half;
    if (half < 1 || pods > switchRadix)
    {
        why << "fat tree: " << numHosts << " hosts need " << leaves << " leaves in " << pods
            << " pods of " << half << ", more than the " << switchRadix << " a radix-"
            << switchRadix << " core switch can reach; 3 tiers do not fit";
        return why.str();
    }
    std::vector<std::vector<uint32_t>> agg(pods);
    for (uint32_t p = 0; p < pods; ++p)
    {
        for (uint32_t j = 0; j < up; ++j)
        {
            agg[p].push_back(
                t.AddSwitch("agg" + std::to_string(p) + "_" + std::to_string(j), switchRadix));
        }
    }
    for (uint32_t i = 0; i < leaves; ++i)
    {
        const uint32_t p = i / half;
        for (uint32_t j = 0; j < up; ++j)
        {
            t.Connect(leaf[i], down + 1 + j, agg[p][j], i % half + 1);
        }
    }
    for (uint32_t j = 0; j < up; ++j)
    {
        for (uint32_t c = 0; c < switchRadix - half; ++c)
        {
            uint32_t core =
                t.AddSwitch("core" + std::to_string(j) + "_" + std::to_string(c), switchRadix);
            for (uint32_t p = 0; p < pods; ++p)
            {
                t.Connect(agg[p][j], half + 1 + c, core, p + 1);
            }
        }
    }
    t.m_tiers = 3;
    topology = t;
    return "";
}

InfinibandTopology
InfinibandTopology::FatTree(uint32_t switchRadix, uint32_t numHosts, double oversubscription)
{
    InfinibandTopology t;
    const std::string error = TryFatTree(switchRadix, numHosts, oversubscription, t);
    NS_ABORT_MSG_IF(!error.empty(), error);
    return t;
}

} // namespace ns3
