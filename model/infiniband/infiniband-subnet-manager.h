/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_SUBNET_MANAGER_H
#define AI_FABRIC_INFINIBAND_SUBNET_MANAGER_H

#include "ns3/infiniband-routing-engine.h"
#include "ns3/infiniband-topology.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// One direction of a cable: leaves (fromNode, fromPort), enters (toNode, toPort).
struct InfinibandDirectedLink
{
    uint32_t fromNode;
    uint32_t fromPort;
    uint32_t toNode;
    uint32_t toPort;
};

/**
 * \ingroup ai-fabric
 * Subnet manager: assigns LIDs and computes every switch's linear forwarding
 * table (LFT) on an InfinibandTopology, like OpenSM (LMC 0).
 *
 * LIDs: from BaseLid, first every HCA port (node order, then port order),
 * then every switch (one LID, port 0), i.e. a deterministic order.
 *
 * Engines (OpenSM `man opensm`), each an InfinibandRoutingEngine in its own file,
 * chosen by RoutingEngine (parsed once into InfinibandRoutingEngineType): "minhop"
 * (shortest paths; among equal-cost ports the one with the fewest routes so far),
 * "updn" (up-then-down routes from root switches ranked by BFS distance; never down
 * then up), "ftree" (fat tree: levels from the leaves, destinations spread over up
 * and down ports in LID order).  After routing, the channel dependency graph of the
 * HCA-to-HCA routes is checked for a cycle (credit loop); Route() refuses
 * such a routing unless AllowCreditLoops is true.  Switch LIDs take min-hop
 * routes without counting towards balance: they only receive VL15 management
 * packets, which are not flow controlled and cannot take part in a credit loop.
 *
 * SubnetPerComponent: a topology of several connected components (the planes of a
 * multi-plane fabric, e.g. one fat tree per rail) is then several subnets, each as if it
 * had a subnet manager of its own: its own LIDs from BaseLid (HCAs then switches, in node
 * order within the component), its own routing and credit-loop check.  GetLid and
 * GetForwardingTable answer per node as before (an LFT is indexed by its subnet's LIDs);
 * LIDs repeat across subnets, so a LID names a port only with its subnet (GetSubnet).
 * Without it, a disconnected topology is refused.
 */
class InfinibandSubnetManager : public Object
{
  public:
    static constexpr uint8_t LFT_UNREACHABLE = 0xff; //!< LFT entry with no route
    static constexpr uint8_t LFT_SELF = 0;           //!< the switch's own LID: port 0

    static TypeId GetTypeId();
    InfinibandSubnetManager();

    void SetTopology(const InfinibandTopology& topology);
    const InfinibandTopology& GetTopology() const;
    /// Roots for updn.  Default: the switches farthest from the HCA-attached
    /// switches (the spines of a fat tree), or switch 0 if every switch has HCAs.
    void SetRootSwitches(const std::vector<uint32_t>& roots);
    /// The engine, as the RoutingEngine attribute names it.
    void SetRoutingEngine(InfinibandRoutingEngineType engine);
    InfinibandRoutingEngineType GetRoutingEngine() const;

    /// Assigns LIDs, routes, checks for credit loops.  Returns "" or the error.
    /// After a refused (credit-loop) routing the tables and the loop stay
    /// readable for diagnosis; program devices only after success.
    std::string TryRoute();
    /// As TryRoute, aborting on error.
    void Route();

    uint16_t GetLid(uint32_t node, uint32_t port = 1) const; //!< switch: port ignored
    /// The largest LID of any subnet.
    uint16_t GetMaxLid() const;
    /// Owner of a LID of subnet 0; false if the LID is unassigned.
    bool GetLidOwner(uint16_t lid, uint32_t& node, uint32_t& port) const;
    /// Owner of a LID of \p subnet; false if the LID is unassigned there.
    bool GetLidOwner(uint32_t subnet, uint16_t lid, uint32_t& node, uint32_t& port) const;
    /// Subnets routed: 1, or the connected components with SubnetPerComponent.
    uint32_t GetNSubnets() const;
    /// The subnet of \p node (0..GetNSubnets()-1, numbered by their lowest node).
    uint32_t GetSubnet(uint32_t node) const;

    /// Output port per DLID (index = LID); LFT_SELF, LFT_UNREACHABLE.
    const std::vector<uint8_t>& GetForwardingTable(uint32_t switchNode) const;
    /// Equal-cost legal output ports for (switch, DLID), for adaptive routing;
    /// empty unless AdaptiveRouting is true.  The LFT port is one of them.
    const std::vector<uint8_t>& GetAdaptiveRoutingGroup(uint32_t switchNode, uint16_t dlid) const;
    /// HCA destinations whose LFT entry at this switch is this port.
    uint32_t GetPortRouteCount(uint32_t switchNode, uint32_t port) const;

    bool HasCreditLoop() const;
    /// The directed links of one cycle of the channel dependency graph, in order.
    const std::vector<InfinibandDirectedLink>& GetCreditLoop() const;
    std::string DescribeCreditLoop() const;
    /// Edges of the channel dependency graph.
    uint64_t GetChannelDependencyCount() const;

    /// Walks the LFTs from an HCA port to \p dlid; returns "" or why it fails.
    std::string TracePath(uint32_t srcHca,
                          uint32_t srcPort,
                          uint16_t dlid,
                          std::vector<InfinibandDirectedLink>& path) const;

  private:
    void SetRoutingEngineName(std::string name);
    std::string GetRoutingEngineName() const;
    std::string AssignLids();
    /// The connected component of each node, numbered by their lowest node; their count.
    uint32_t FindComponents(std::vector<uint32_t>& componentOf) const;
    /// SubnetPerComponent: each component routed by a subnet manager of its own, its
    /// tables, LIDs and any credit loop then taken over node for node.
    std::string RouteComponents(const std::vector<uint32_t>& componentOf, uint32_t count);
    void RouteSwitchLids(InfinibandRoutingContext& ctx);
    std::string CheckCreditLoops();
    std::string DescribeLink(const InfinibandDirectedLink& l) const;

    // Attributes
    InfinibandRoutingEngineType m_engine;
    std::string m_engineName;  //!< as the user gave it
    std::string m_engineError; //!< why m_engineName is no engine, or empty
    bool m_allowCreditLoops;
    bool m_checkCreditLoops;
    bool m_adaptiveRouting;
    bool m_subnetPerComponent;
    uint16_t m_baseLid;

    InfinibandTopology m_topo;
    std::vector<uint32_t> m_roots;
    std::vector<std::vector<uint16_t>> m_lidOf; //!< [node][port]; switches use [0]
    std::vector<std::pair<uint32_t, uint32_t>> m_lidOwner;
    /// Several subnets: per subnet, LID -> (node, port); m_lidOwner is then unused.
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_subnetLidOwner;
    std::vector<uint32_t> m_subnetOf; //!< node -> subnet; empty with one subnet
    std::vector<InfinibandRouteDestination> m_hcaDests;
    std::vector<InfinibandRouteDestination> m_switchDests;
    uint16_t m_maxLid;
    std::vector<uint32_t> m_swIndex;                     //!< node -> switch vertex, or UINT32_MAX
    std::vector<uint32_t> m_swNode;                      //!< switch vertex -> node
    std::vector<std::vector<uint16_t>> m_hops;           //!< [vertex][vertex] min hops
    std::vector<std::vector<uint8_t>> m_lft;             //!< [node][lid]
    std::vector<std::vector<std::vector<uint8_t>>> m_ar; //!< [node][lid] -> ports
    std::vector<std::vector<uint32_t>> m_portLoad;       //!< [node][port]
    std::vector<InfinibandDirectedLink> m_creditLoop;
    uint64_t m_dependencies;
    bool m_routed;
};

} // namespace ns3

#endif
