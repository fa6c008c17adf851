/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-routing-engine.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>
#include <array>
#include <utility>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandRoutingEngine");
NS_OBJECT_ENSURE_REGISTERED(InfinibandRoutingEngine);

namespace
{

constexpr std::array<std::pair<const char*, InfinibandRoutingEngineType>, 3> kEngines{{
    {"minhop", InfinibandRoutingEngineType::MINHOP},
    {"updn", InfinibandRoutingEngineType::UPDN},
    {"ftree", InfinibandRoutingEngineType::FTREE},
}};

} // namespace

std::string
InfinibandParseRoutingEngine(const std::string& name, InfinibandRoutingEngineType& type)
{
    std::string valid;
    for (const auto& [engineName, engine] : kEngines)
    {
        if (name == engineName)
        {
            type = engine;
            return "";
        }
        valid += (valid.empty() ? "" : ", ") + std::string(engineName);
    }
    return "unknown RoutingEngine \"" + name + "\"; valid engines: " + valid;
}

std::string
InfinibandRoutingEngineName(InfinibandRoutingEngineType type)
{
    for (const auto& [engineName, engine] : kEngines)
    {
        if (engine == type)
        {
            return engineName;
        }
    }
    NS_ABORT_MSG("InfinibandRoutingEngineName: engine " << static_cast<int>(type));
    return "";
}

TypeId
InfinibandRoutingEngine::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandRoutingEngine").SetParent<Object>().SetGroupName("AiFabric");
    return tid;
}

Ptr<InfinibandRoutingEngine>
InfinibandRoutingEngine::Create(InfinibandRoutingEngineType type)
{
    switch (type)
    {
    case InfinibandRoutingEngineType::MINHOP:
        return CreateObject<InfinibandMinHopRouting>();
    case InfinibandRoutingEngineType::UPDN:
        return CreateObject<InfinibandUpDownRouting>();
    case InfinibandRoutingEngineType::FTREE:
        return CreateObject<InfinibandFatTreeRouting>();
    }
    NS_ABORT_MSG("InfinibandRoutingEngine::Create: engine " << static_cast<int>(type));
    return nullptr;
}

uint8_t
InfinibandRoutingContext::PickLeastLoaded(uint32_t sw, const std::vector<uint8_t>& candidates)
{
    NS_ASSERT(!candidates.empty());
    uint8_t best = candidates.front();
    for (uint8_t p : candidates)
    {
        if (portLoad[sw][p] < portLoad[sw][best])
        {
            best = p;
        }
    }
    ++portLoad[sw][best];
    return best;
}

void
InfinibandRoutingContext::SetEntry(uint32_t sw,
                                   const InfinibandRouteDestination& d,
                                   uint8_t port,
                                   const std::vector<uint8_t>& group)
{
    lft[sw][d.lid] = port;
    if (adaptive)
    {
        ar[sw][d.lid] = group;
    }
}

std::string
InfinibandRoutingContext::Unreachable(uint32_t sw, const InfinibandRouteDestination& d) const
{
    return topology.Describe(d.node) + " (LID " + std::to_string(d.lid) + ") is unreachable from " +
           topology.Describe(sw) + " with routing engine " + engineName +
           ": the fabric is disconnected";
}

std::vector<uint32_t>
InfinibandRoutingContext::LeafSwitches() const
{
    std::vector<uint32_t> leaves;
    for (const auto& d : hcaDests)
    {
        leaves.push_back(swIndex[d.attachSwitch]);
    }
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    return leaves;
}

const std::vector<std::pair<uint8_t, uint32_t>>&
InfinibandRoutingContext::SwitchNeighbours(uint32_t sw) const
{
    if (neighbours.empty())
    {
        neighbours.resize(topology.GetNNodes());
        for (uint32_t node = 0; node < topology.GetNNodes(); ++node)
        {
            auto& out = neighbours[node];
            for (uint32_t p = 1; p <= topology.GetNode(node).numPorts; ++p)
            {
                uint32_t peer = 0;
                uint32_t peerPort = 0;
                if (topology.GetPeer(node, p, peer, peerPort) && topology.IsSwitch(peer))
                {
                    out.emplace_back(static_cast<uint8_t>(p), swIndex[peer]);
                }
            }
        }
    }
    return neighbours.at(sw);
}

} // namespace ns3
