/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_ROUTING_ENGINE_H
#define AI_FABRIC_INFINIBAND_ROUTING_ENGINE_H

#include "ns3/infiniband-topology.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// The unicast routing engines, by their OpenSM names (`man opensm`).
enum class InfinibandRoutingEngineType : uint8_t
{
    MINHOP, //!< "minhop"
    UPDN,   //!< "updn"
    FTREE   //!< "ftree"
};

/// Parses an OpenSM engine name: "" with \p type set, or why \p name is no engine.
std::string InfinibandParseRoutingEngine(const std::string& name,
                                         InfinibandRoutingEngineType& type);
/// The OpenSM name of \p type.
std::string InfinibandRoutingEngineName(InfinibandRoutingEngineType type);

/// A LID the subnet manager routes to and where the fabric delivers it.
struct InfinibandRouteDestination
{
    uint16_t lid;
    uint32_t node;         //!< owner (HCA or switch)
    uint32_t attachSwitch; //!< switch that delivers it
    uint32_t attachPort;   //!< output port there (0 for the switch itself)
};

/**
 * \ingroup ai-fabric
 * What a routing engine reads (the subnet as InfinibandSubnetManager prepared
 * it: LIDs, switch vertices, all-pairs switch hop counts) and what it writes
 * (every switch's LFT and adaptive-routing groups, and the per-port route
 * counts that balance them).  Switch vertices number the topology's switches
 * in order; tables are indexed by topology node.
 */
struct InfinibandRoutingContext
{
    static constexpr uint16_t NO_PATH = 0xffff; //!< hops between disconnected switches

    const InfinibandTopology& topology;
    const std::vector<InfinibandRouteDestination>& hcaDests; //!< HCA ports, in LID order
    const std::vector<uint32_t>& swIndex;                    //!< node -> vertex (or UINT32_MAX)
    const std::vector<uint32_t>& swNode;                     //!< vertex -> node
    const std::vector<std::vector<uint16_t>>& hops;          //!< [vertex][vertex]
    const std::vector<uint32_t>& roots;                      //!< switch nodes the user chose
    const bool adaptive;                                     //!< fill the AR groups
    const std::string engineName;

    std::vector<std::vector<uint8_t>>& lft;             //!< [node][lid]
    std::vector<std::vector<std::vector<uint8_t>>>& ar; //!< [node][lid] -> ports
    std::vector<std::vector<uint32_t>>& portLoad;       //!< [node][port]

    /// The candidate port with the fewest routes so far (the first of equals); counts it.
    uint8_t PickLeastLoaded(uint32_t sw, const std::vector<uint8_t>& candidates);
    /// LFT entry of switch node \p sw for \p d, and its AR group when adaptive.
    void SetEntry(uint32_t sw,
                  const InfinibandRouteDestination& d,
                  uint8_t port,
                  const std::vector<uint8_t>& group);
    /// Why \p d cannot be reached from switch node \p sw.
    std::string Unreachable(uint32_t sw, const InfinibandRouteDestination& d) const;
    /// Vertices of the switches HCAs hang off, ascending.
    std::vector<uint32_t> LeafSwitches() const;
    /// Ports of switch node \p sw towards switches, with the peer's vertex (the engines ask
    /// per destination: made once per switch, kept for the context's life).
    const std::vector<std::pair<uint8_t, uint32_t>>& SwitchNeighbours(uint32_t sw) const;

    /// SwitchNeighbours by node, filled on the first call.
    mutable std::vector<std::vector<std::pair<uint8_t, uint32_t>>> neighbours{};
};

/**
 * \ingroup ai-fabric
 * A unicast routing engine: fills the LFT entry of every switch for every HCA
 * destination (switch LIDs and the credit-loop check are the subnet manager's).
 * One class per OpenSM engine, each in its own file like OpenSM's osm_ucast_*.c.
 */
class InfinibandRoutingEngine : public Object
{
  public:
    static TypeId GetTypeId();

    virtual InfinibandRoutingEngineType GetType() const = 0;
    /// Routes every HCA destination of \p ctx; "" or why the fabric cannot be routed.
    virtual std::string Route(InfinibandRoutingContext& ctx) = 0;

    /// The engine class of \p type.
    static Ptr<InfinibandRoutingEngine> Create(InfinibandRoutingEngineType type);
};

/**
 * \ingroup ai-fabric
 * "minhop": shortest paths; among equal-cost ports the one with the fewest routes
 * so far.  On a graph with cycles it may form credit loops.
 */
class InfinibandMinHopRouting : public InfinibandRoutingEngine
{
  public:
    static TypeId GetTypeId();
    InfinibandRoutingEngineType GetType() const override;
    std::string Route(InfinibandRoutingContext& ctx) override;
};

/**
 * \ingroup ai-fabric
 * "updn": up-then-down routes from root switches ranked by BFS distance, never
 * down then up, so deadlock free on any topology.  Roots: the subnet manager's
 * root switches, by default the switches farthest from the HCA-attached ones.
 */
class InfinibandUpDownRouting : public InfinibandRoutingEngine
{
  public:
    static TypeId GetTypeId();
    InfinibandRoutingEngineType GetType() const override;
    std::string Route(InfinibandRoutingContext& ctx) override;
};

/**
 * \ingroup ai-fabric
 * "ftree": fat tree; levels from the leaves, destinations leaf by leaf, each
 * given its path to the top going up from its own leaf (the up group with the
 * fewest down-going routes) and reached from every other switch through the
 * first ancestor on that path, as OpenSM's osm_ucast_ftree.c.  Refuses a
 * topology whose switch links skip a level.
 */
class InfinibandFatTreeRouting : public InfinibandRoutingEngine
{
  public:
    static TypeId GetTypeId();
    InfinibandRoutingEngineType GetType() const override;
    std::string Route(InfinibandRoutingContext& ctx) override;
};

} // namespace ns3

#endif
