/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_FLOW_TOPOLOGY_H
#define AI_FABRIC_INFINIBAND_FLOW_TOPOLOGY_H

#include "ns3/flow-topology.h"
#include "ns3/infiniband-subnet-manager.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/// One routed InfiniBand subnet as its description gives it, with the parameters
/// InfinibandHelper gives the devices it would build from it: the subnet manager (its
/// topology, LIDs, forwarding tables and adaptive-routing groups: the one copy of the
/// routes), the HCA of each rank, the wire rate and line coding, the cable delay, the
/// switches' traversal and cut-through header and whether they route adaptively, and the
/// HCAs' packet sizes and queues.  Enough to route flows (InfinibandFlowTopology), to answer
/// for the plane's ranks (InfinibandTransportPlane::AddDescribedRanks) and to list its
/// links, with no device built.
struct InfinibandFlowFabric
{
    Ptr<InfinibandSubnetManager> subnetManager; //!< routed
    std::vector<uint32_t> hcaNodes;             //!< by rank: its HCA (topology node, port 1)
    std::vector<int64_t> nodeIds;               //!< by rank: the ns-3 node of its HCA
    uint64_t signalling_bps{0};                 //!< every port's DataRate
    double encodingEfficiency{1.0};
    Time propagation;            //!< the channels' Delay
    Time traversal;              //!< the switches' TraversalLatency
    uint32_t cutThroughBytes{0}; //!< of the switches; 0 = store-and-forward
    /// The switches take the subnet manager's adaptive-routing groups (both the switch's
    /// and the subnet manager's AdaptiveRouting).
    bool adaptiveRouting{false};
    uint32_t ibMtu{0};
    uint32_t maxBurstPackets{0};
    uint64_t txQueueBytes{0};
    uint64_t messageQueueBytes{0};
    uint32_t rxBufferBytes{0}; //!< a port's receive buffer, smallest over its VLs
    uint32_t framingBytes{0};  //!< a port's OverheadBytes
    uint32_t localQp{0};

    /// Every port's wire rate (data rate x line coding) in bytes/s, as a device gives it.
    double GetWire_byte_per_s() const;
    /// The frame rate of a `links` row (signalling x line coding) in bit/s.
    int64_t GetFrameRate_bps() const;
};

/**
 * \ingroup ai-fabric
 * The routes of an InfiniBand subnet from its description, without devices: the same links,
 * shares and hops as PacketPlaneFlowTopology walking the devices InfinibandHelper would
 * build from it.  From the source's HCA, over each cable to its peer, through each switch by
 * the subnet manager's forwarding table for the destination's LID (with adaptive routing,
 * its group of ports, the flow split evenly), depth first.  A link's key is the
 * transmitting end's (topology node, port).
 */
class InfinibandFlowTopology : public FlowTopology
{
  public:
    static TypeId GetTypeId();
    InfinibandFlowTopology();
    ~InfinibandFlowTopology() override;

    void SetFabric(const InfinibandFlowFabric& fabric);
    const InfinibandFlowFabric& GetFabric() const;
    /// The key of the direction (topology node \p node, port \p port) transmits on.
    static uint64_t GetLinkKey(uint32_t node, uint32_t port);

    Route GetRoute(uint32_t srcRank, uint32_t dstRank) const override;
    uint64_t GetSourceQueueBytes(uint32_t srcRank) const override;

  protected:
    void DoDispose() override;

  private:
    void Walk(uint32_t node,
              uint32_t port,
              uint16_t dlid,
              uint32_t dstNode,
              double share,
              bool first,
              Route& route,
              uint32_t depth) const;

    InfinibandFlowFabric m_fabric;
};

} // namespace ns3

#endif
