/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-flow-topology.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandFlowTopology");
NS_OBJECT_ENSURE_REGISTERED(InfinibandFlowTopology);

double
InfinibandFlowFabric::GetWire_byte_per_s() const
{
    // As PacketPlaneFlowTopology::GetWireRate_byte_per_s of a device at this rate.
    return signalling_bps * encodingEfficiency / 8.0;
}

int64_t
InfinibandFlowFabric::GetFrameRate_bps() const
{
    return static_cast<int64_t>(signalling_bps * encodingEfficiency);
}

TypeId
InfinibandFlowTopology::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandFlowTopology")
                            .SetParent<FlowTopology>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandFlowTopology>();
    return tid;
}

InfinibandFlowTopology::InfinibandFlowTopology()
{
    NS_LOG_FUNCTION(this);
}

InfinibandFlowTopology::~InfinibandFlowTopology() = default;

void
InfinibandFlowTopology::SetFabric(const InfinibandFlowFabric& fabric)
{
    NS_LOG_FUNCTION(this << fabric.hcaNodes.size());
    NS_ABORT_MSG_UNLESS(fabric.subnetManager, "InfinibandFlowTopology: no subnet manager");
    NS_ABORT_MSG_UNLESS(fabric.nodeIds.size() == fabric.hcaNodes.size(),
                        "InfinibandFlowTopology: " << fabric.nodeIds.size() << " nodes for "
                                                   << fabric.hcaNodes.size() << " HCAs");
    m_fabric = fabric;
}

const InfinibandFlowFabric&
InfinibandFlowTopology::GetFabric() const
{
    return m_fabric;
}

uint64_t
InfinibandFlowTopology::GetLinkKey(uint32_t node, uint32_t port)
{
    return uint64_t{node} << 8 | port; // ports fit 8 bits (IBA)
}

void
InfinibandFlowTopology::Walk(uint32_t node,
                             uint32_t port,
                             uint16_t dlid,
                             uint32_t dstNode,
                             double share,
                             bool first,
                             Route& route,
                             uint32_t depth) const
{
    const InfinibandSubnetManager& sm = *m_fabric.subnetManager;
    const InfinibandTopology& t = sm.GetTopology();
    NS_ABORT_MSG_IF(depth > MAX_HOPS,
                    "InfinibandFlowTopology: route to LID "
                        << dlid << " loops at " << t.Describe(node) << " port " << port);
    const double wire = m_fabric.GetWire_byte_per_s();
    AddUse(route, GetLinkKey(node, port), wire, share);
    uint32_t peer = 0;
    uint32_t peerPort = 0;
    NS_ABORT_MSG_UNLESS(t.GetPeer(node, port, peer, peerPort),
                        "InfinibandFlowTopology: " << t.Describe(node) << " port " << port
                                                   << " is not cabled");
    Hop hop;
    if (first)
    {
        hop.wire_byte_per_s = wire;
        hop.propagation = m_fabric.propagation;
    }
    if (!t.IsSwitch(peer))
    {
        NS_ABORT_MSG_UNLESS(peer == dstNode,
                            "InfinibandFlowTopology: " << t.Describe(node) << " port " << port
                                                       << " ends at " << t.Describe(peer)
                                                       << ", not the destination "
                                                       << t.Describe(dstNode));
        if (first)
        {
            route.hops.push_back(hop);
        }
        return;
    }
    if (first)
    {
        hop.traversal = m_fabric.traversal;
        hop.cutThroughBytes = m_fabric.cutThroughBytes;
        route.hops.push_back(hop);
    }
    // InfinibandSwitch::SetForwardingTable's routes: the LFT port, or the adaptive group
    // when the switches take it and it has a choice.
    const std::vector<uint8_t>& lft = sm.GetForwardingTable(peer);
    const uint8_t out = dlid < lft.size() ? lft[dlid] : InfinibandSubnetManager::LFT_UNREACHABLE;
    NS_ABORT_MSG_IF(
        out == InfinibandSubnetManager::LFT_SELF || out == InfinibandSubnetManager::LFT_UNREACHABLE,
        "InfinibandFlowTopology: " << t.Describe(peer) << " has no route to LID " << dlid);
    const std::vector<uint8_t>* group =
        m_fabric.adaptiveRouting ? &sm.GetAdaptiveRoutingGroup(peer, dlid) : nullptr;
    if (!group || group->size() <= 1)
    {
        Walk(peer, out, dlid, dstNode, share, first, route, depth + 1);
        return;
    }
    // An adaptive group's least-loaded choice, in the fluid limit: an even split.
    for (std::size_t i = 0; i < group->size(); ++i)
    {
        Walk(peer,
             (*group)[i],
             dlid,
             dstNode,
             share / group->size(),
             first && i == 0,
             route,
             depth + 1);
    }
}

FlowTopology::Route
InfinibandFlowTopology::GetRoute(uint32_t srcRank, uint32_t dstRank) const
{
    NS_ABORT_MSG_UNLESS(srcRank < m_fabric.hcaNodes.size() && dstRank < m_fabric.hcaNodes.size(),
                        "InfinibandFlowTopology: no HCA for rank "
                            << (srcRank < m_fabric.hcaNodes.size() ? dstRank : srcRank));
    const uint32_t dstNode = m_fabric.hcaNodes[dstRank];
    Route route;
    Walk(m_fabric.hcaNodes[srcRank],
         1,
         m_fabric.subnetManager->GetLid(dstNode, 1),
         dstNode,
         1.0,
         true,
         route,
         0);
    return route;
}

uint64_t
InfinibandFlowTopology::GetSourceQueueBytes(uint32_t srcRank) const
{
    NS_ABORT_MSG_UNLESS(srcRank < m_fabric.hcaNodes.size(),
                        "InfinibandFlowTopology: no HCA for rank " << srcRank);
    return m_fabric.messageQueueBytes; // the HCA's MessageQueueBytes
}

void
InfinibandFlowTopology::DoDispose()
{
    m_fabric.subnetManager = nullptr;
    FlowTopology::DoDispose();
}

} // namespace ns3
