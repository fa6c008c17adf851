/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_FLOW_TOPOLOGY_H
#define AI_FABRIC_FLOW_TOPOLOGY_H

#include "ns3/nstime.h"
#include "ns3/nvlink-fabric-preset.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class CreditLinkNetDevice;
class TransportPlane;

/**
 * \ingroup ai-fabric
 * Where FlowTransportPlane reads its links and routes from (a strategy, like
 * TcpCongestionOps): for a (source, destination) rank pair, the link directions a flow
 * crosses with the share of the flow on each, and the hops of its first branch (rate,
 * propagation, the far end's switch traversal and cut-through header), which set its
 * latency.  Links are named by the topology's own 64-bit keys; the plane makes one
 * FlowNetwork link per key on first use, in the order of the uses, so two topologies that
 * give the same uses in the same order give the same network.
 */
class FlowTopology : public Object
{
  public:
    struct Use
    {
        uint64_t link{0}; //!< the topology's key of one link direction
        double wire_byte_per_s{0};
        double share{0}; //!< of the flow's bytes
    };

    struct Hop
    {
        double wire_byte_per_s{0};
        Time propagation;
        Time traversal;              //!< of the switch at its far end; 0 at the destination
        uint32_t cutThroughBytes{0}; //!< of that switch; 0 = store-and-forward
    };

    struct Route
    {
        std::vector<Use> uses; //!< each link once, in the order a walk of the route meets them
        std::vector<Hop> hops; //!< of the first branch
    };

    /// One switch plane of an NVLink GPU as the in-switch reductions (FlowNvls) see it: the
    /// bundle up, the port(s) the switch routes to the GPU, the switch's NVLS engine.
    struct SwitchPlane
    {
        Use up;                   //!< share unused
        uint32_t upLinks{0};      //!< of the bundle up
        uint64_t txQueueBytes{0}; //!< of the bundle up
        std::vector<Use> down;    //!< one per port to the GPU; shares unused
        uint32_t downLinks{0};    //!< of those ports together
        uint64_t engineKey{0};    //!< the switch's engine towards the GPU, unique per topology
        uint64_t engineRatePerLink_bps{0}; //!< NvlsEngineRatePerLink; 0 = unlimited
        Time engineLatency;                //!< NvlsEngineLatency
    };

    static TypeId GetTypeId();
    ~FlowTopology() override;

    virtual Route GetRoute(uint32_t srcRank, uint32_t dstRank) const = 0;
    /// What \p srcRank's devices take before they refuse (FlowTransportPlane's SourceQueue).
    virtual uint64_t GetSourceQueueBytes(uint32_t srcRank) const = 0;
    /// \p rank's NVLink switch planes in order (those with a bundle); aborts where the
    /// topology has none (InfiniBand).
    virtual std::vector<SwitchPlane> GetSwitchPlanes(uint32_t rank) const;

  protected:
    /// A route longer than this many links loops: the subnet manager's tables never do.
    static constexpr uint32_t MAX_HOPS = 16;

    /// Adds \p share of \p link to \p route: a link met again (two branches that join)
    /// takes both shares in its first place.
    static void AddUse(Route& route, uint64_t link, double wire_byte_per_s, double share);
};

/**
 * \ingroup ai-fabric
 * The routes of a built packet-level plane (NvLinkTransportPlane or
 * InfinibandTransportPlane), walked over its devices: from the rank's device to its peer,
 * through each switch by the switch's own route for the destination (the subnet manager's
 * forwarding tables; several candidate ports, an adaptive group, split the flow evenly), and
 * over the GPU's NVLink bundles in the proportion the GPU sprays them.  A link's key is
 * GetLinkKey of the device transmitting on it.
 */
class PacketPlaneFlowTopology : public FlowTopology
{
  public:
    static TypeId GetTypeId();
    PacketPlaneFlowTopology();
    ~PacketPlaneFlowTopology() override;

    void SetPacketPlane(Ptr<TransportPlane> plane);
    static uint64_t GetLinkKey(Ptr<CreditLinkNetDevice> device);
    /// The wire rate of \p device's direction (data rate x line coding) in bytes/s.
    static double GetWireRate_byte_per_s(Ptr<CreditLinkNetDevice> device);

    Route GetRoute(uint32_t srcRank, uint32_t dstRank) const override;
    uint64_t GetSourceQueueBytes(uint32_t srcRank) const override;
    /// Over the GPU's bundles whose peer is a switch, the switch's route to the GPU.
    std::vector<SwitchPlane> GetSwitchPlanes(uint32_t rank) const override;

  protected:
    void DoDispose() override;

  private:
    void Walk(Ptr<CreditLinkNetDevice> device,
              uint32_t destination,
              uint32_t dstNode,
              double share,
              bool first,
              Route& route,
              uint32_t depth) const;

    Ptr<TransportPlane> m_packet;
};

/// One NVLink domain as its description gives it, the parameters NvLinkHelper gives the
/// devices it would build: GPUs, switch planes, links per GPU-switch bundle and direct
/// bundle, the link rate and line coding, the channel delay, the switches' traversal and
/// cut-through header and NVLS engine, the bundles' transmit queue, packet sizes and
/// receive buffers.  Enough to route flows (NvLinkFlowTopology), to answer for the
/// plane's ranks and cut its in-switch operations (NvLinkTransportPlane::AddDescribedDomain)
/// and to list its links, with no device built.
struct NvLinkFlowDomain
{
    struct Direct
    {
        uint32_t gpuA{0};
        uint32_t gpuB{0};
        uint32_t links{0};
    };

    std::vector<uint32_t> ranks; //!< by GPU id
    uint32_t switches{0};
    /// [GPU id][switch plane]: links of the bundle (0 = none).
    std::vector<std::vector<uint32_t>> linksPerPair;
    std::vector<Direct> directLinks;
    uint64_t linkSignalling_bps{0}; //!< per link: a bundle of n runs at n times this
    double encodingEfficiency{1.0};
    /// A per-link data rate that overrides the generation's (a bandwidth sweep); 0 = none.
    /// A bundle of n links then signals at round(n x this / encodingEfficiency) bit/s.
    double linkData_bps{0};
    Time propagation;
    Time traversal;
    uint32_t cutThroughBytes{0};     //!< 0 = store-and-forward
    uint64_t txQueueBytes{0};        //!< per bundle direction
    uint32_t granularityBytes{0};    //!< the devices' Granularity (a transport packet)
    uint32_t maxBurstBytes{0};       //!< the devices' MaxBurstBytes
    uint32_t packetOverheadBytes{0}; //!< of a Granularity packet: headers and framing
    uint32_t rxBufferBytes{0};       //!< a bundle end's receive buffer on the GPUs' VC
    bool nvls{false};                //!< the switches support NVLS
    uint64_t nvlsEngineRatePerLink_bps{0};
    Time nvlsEngineLatency;

    /// The signalling rate of a bundle of \p links, as NvLinkNetDevice runs it (or as the
    /// cluster sets it for a swept per-link rate), in bit/s.
    uint64_t GetSignalling_bps(uint32_t links) const;
    /// Bundles between GPU \p gpu and a switch plane.
    uint32_t GetNSwitchBundles(uint32_t gpu) const;
    /// Every bundle of GPU \p gpu (switch planes, then direct bundles), by their links.
    std::vector<uint32_t> GetBundleLinks(uint32_t gpu) const;
    /// GPU \p a reaches GPU \p b (a direct bundle, or a switch plane of a's).
    bool HasPath(uint32_t a, uint32_t b) const;

    /// GPUs, switch planes, bundles and the link rate of \p spec's fabric for the GPUs of
    /// \p ranks (by GPU id); the caller sets the timings and queue, as it would set the
    /// helper's channel, switch and device attributes.
    static NvLinkFlowDomain FromFabric(const NvLinkFabricSpec& spec, std::vector<uint32_t> ranks);
};

/**
 * \ingroup ai-fabric
 * The routes of NVLink domains from their descriptions, without devices: the same links,
 * shares and hops as PacketPlaneFlowTopology walking the devices NvLinkHelper would build
 * from the same description.  A GPU sprays a direct bundle to the destination if it has
 * one, else its switch planes in proportion to their links (NvLinkGpu's smooth weighted
 * round-robin); a switch plane routes to the destination over its one bundle down.
 */
class NvLinkFlowTopology : public FlowTopology
{
  public:
    static TypeId GetTypeId();
    NvLinkFlowTopology();
    ~NvLinkFlowTopology() override;

    void AddDomain(const NvLinkFlowDomain& domain);
    uint32_t GetNDomains() const;
    bool HasRank(uint32_t rank) const;
    /// Both ranks in one domain.
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const;

    Route GetRoute(uint32_t srcRank, uint32_t dstRank) const override;
    uint64_t GetSourceQueueBytes(uint32_t srcRank) const override;
    std::vector<SwitchPlane> GetSwitchPlanes(uint32_t rank) const override;

  private:
    struct Place
    {
        uint32_t domain{0};
        uint32_t gpu{0};
    };

    const Place& GetPlace(uint32_t rank) const;
    double Wire(const NvLinkFlowDomain& d, uint32_t links) const;

    std::vector<NvLinkFlowDomain> m_domains;
    std::vector<Place> m_places; //!< by rank
    std::vector<bool> m_known;   //!< by rank
};

} // namespace ns3

#endif
