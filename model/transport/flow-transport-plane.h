/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_FLOW_TRANSPORT_PLANE_H
#define AI_FABRIC_FLOW_TRANSPORT_PLANE_H

#include "ns3/flow-network.h"
#include "ns3/flow-topology.h"
#include "ns3/transport-plane.h"

#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ns3
{

class CreditLinkNetDevice;
class FlowNvls;

/**
 * \ingroup ai-fabric
 * Flow-level fidelity of a plane: a message is one fluid flow, not packets.  It follows the
 * routes of a packet-level plane (SetPacketPlane: NvLinkTransportPlane or
 * InfinibandTransportPlane) as its FlowTopology gives them: the built devices walked
 * (PacketPlaneFlowTopology), or the plane's description where no device is built
 * (NvLinkFlowTopology, InfinibandFlowTopology), with the same links and shares: from the
 * rank's device to its peer, through each switch by its route for the destination (the
 * subnet manager's forwarding tables; several candidate ports, an adaptive group, split the
 * flow evenly), and over the GPU's NVLink bundles in the proportion the GPU sprays them.
 * Every link direction is one FlowNetwork link whose capacity is the device's wire rate;
 * a message puts its payload plus one packet overhead per fine packet on it, so the wire
 * efficiency is the packet model's.  Flows share links max-min fairly, weight 1 each: the
 * transport interleaves a rank's active (destination, channel) queues round-robin and all
 * GPU traffic rides one virtual lane, so the packet model arbitrates them equally.
 *
 * Timing of one message of first packet p (the packet model's segmentation): its first
 * packet is in at start + the path's latency (propagation, switch traversal, p serialised on
 * the first link and, per switch, again after a store-and-forward switch or from the
 * cut-through header on), which starts the receiver's endpoint charge as in packet mode;
 * its last byte leaves the source when the fluid flow has drained, and arrives one path
 * latency less the first link's serialisation later (no earlier than the first packet).
 * Messages of one (source, destination, channel) queue drain in order (GpuTransport starts
 * the next when one has drained); with SourceQueue, messages to one destination that fit
 * what the source's devices take before they refuse (NVLink bundles' TxQueueBytes, the HCA's
 * MessageQueueBytes) drain in order across channels too, as whole messages leave those
 * first-in first-out queues in packet mode.  With LastPacketInTurn, the other messages
 * share the wire for all but their last packet; the last packets of the messages to one
 * destination then leave one after another, as the injector's round-robin gives each its
 * own turn, so messages that started together complete one packet apart.
 *
 * In-switch reductions of an NVLink plane (NVLS) run as flows too (FlowNvls, NvlsFlows);
 * without NvlsFlows, and for other planes, on the packet plane's devices.
 *
 * What only the packet model has: credit stalls and buffer occupancy, head-of-line
 * blocking, switch arbitration order, congestion control and link counters (the packet
 * plane's devices see no flow bytes).
 */
class FlowTransportPlane : public TransportPlane, public InSwitchReductionPlane
{
  public:
    /// (message id)
    typedef Callback<void, uint64_t> MessageCallback;

    static TypeId GetTypeId();
    FlowTransportPlane();
    ~FlowTransportPlane() override;

    /// The packet-level plane whose devices and routes the flows follow; this plane takes its
    /// PlaneName, SoftwareLatency and EndpointRate.  Call before GpuTransport::AddPlane.
    void SetPacketPlane(Ptr<TransportPlane> plane);
    Ptr<TransportPlane> GetPacketPlane() const;
    /// Where the links and routes come from; SetPacketPlane sets a PacketPlaneFlowTopology
    /// over the packet plane's devices unless one was set before.  Call before any flow.
    void SetTopology(Ptr<FlowTopology> topology);
    Ptr<FlowTopology> GetTopology() const;

    /// GpuTransport's message hooks: first packet in, last byte left the source, last byte in.
    void SetMessageCallbacks(MessageCallback firstIn,
                             MessageCallback drained,
                             MessageCallback delivered);
    /// One message as one flow; \p packetBytes: its packets' payload in packet mode;
    /// \p weight: its share of max-min (the lanes of a GpuTransport::Aggregate, else 1).
    void StartMessage(uint32_t srcRank,
                      uint32_t dstRank,
                      uint64_t bytes,
                      uint32_t packetBytes,
                      uint64_t messageId,
                      double weight = 1.0);

    bool HasRank(uint32_t rank) const override;
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const override;
    uint32_t GetMaxPayloadBytes() const override;
    uint32_t GetMaxBurstBytes() const override;
    /// One packet as its own flow (always accepted), delivered when its last byte is in.
    bool Inject(uint32_t srcRank,
                uint32_t dstRank,
                uint32_t payloadBytes,
                const TransportTag& tag) override;
    int64_t GetNodeId(uint32_t rank) const override;
    uint32_t GetPacketOverheadBytes() const override;
    double GetLineRate_gbyte_per_s(uint32_t rank) const override;

    bool CanReduceInSwitch(const std::vector<uint32_t>& ranks) const override;
    void StartInSwitch(Op op,
                       const std::vector<uint32_t>& ranks,
                       uint64_t bytes,
                       Callback<void, uint32_t> rankDone) override;

    const FlowNetwork& GetNetwork() const;
    /// FlowNetwork::SetLocalRefill (attribute LocalRefill).
    void SetLocalRefill(bool local);
    bool GetLocalRefill() const;
    /// The links (FlowNetwork::Use) a flow from \p srcRank to \p dstRank crosses.
    std::vector<FlowNetwork::Use> GetPathUses(uint32_t srcRank, uint32_t dstRank);
    /// When the first packet of \p payloadBytes is in, after it started (no contention).
    Time GetFirstPacketLatency(uint32_t srcRank, uint32_t dstRank, uint32_t payloadBytes);
    /// When the last byte is in after it left the source, for packets of \p payloadBytes.
    Time GetTailLatency(uint32_t srcRank, uint32_t dstRank, uint32_t payloadBytes);
    /// The FlowNetwork link of \p device's direction (added on first use).
    uint32_t GetLinkOf(Ptr<CreditLinkNetDevice> device);
    /// The FlowNetwork link of the topology's link \p key (added on first use).
    uint32_t GetLinkOf(uint64_t key, double wire_byte_per_s);
    /// Bytes a message of \p payloadBytes puts on the wire (one overhead per fine packet).
    double GetWireBytes(uint64_t payloadBytes) const;
    /// In-switch operations running as flows (NvlsFlows), not finished by every member.
    uint32_t GetInSwitchInFlight() const;

  protected:
    void DoDispose() override;

  private:
    using Hop = FlowTopology::Hop;

    struct Path
    {
        std::vector<FlowNetwork::Use> uses;
        std::vector<Hop> hops; //!< of the first branch
    };

    struct Pending
    {
        uint32_t src{0};
        uint32_t dst{0};
        uint64_t bytes{0};
        uint32_t packetBytes{0};
        uint64_t messageId{0};
        double weight{1.0};
    };

    /// A (source, destination)'s share of the source's first-in first-out transmit queue
    /// (SourceQueue).
    struct Source
    {
        bool busy{false};
        uint64_t queuedBytes{0}; //!< of the message draining and those waiting behind it
        std::deque<Pending> waiting;
    };

    /// A shared message's last packet (LastPacketInTurn): it leaves after the message's
    /// other packets, in turn with the last packets to the same destination.
    struct Tail
    {
        uint32_t src{0};
        uint32_t dst{0};
        uint64_t bytes{0};
        uint32_t firstPacketBytes{0};
        uint64_t messageId{0};
        Time firstInAt; //!< the message's first packet is in; delivered no earlier
    };

    struct TailTurns
    {
        bool busy{false};
        std::deque<Tail> waiting;
    };

    uint64_t GetSourceQueueBytes(uint32_t srcRank);
    /// Starts \p p's flow; \p queued: it is the head of its rank's transmit queue.
    void Launch(const Pending& p, bool queued);
    void NextQueued(uint32_t srcRank, uint32_t dstRank, uint64_t drainedBytes);
    /// LastPacketInTurn: all but the last packet as one shared flow, then the last packet.
    void LaunchBodyThenTail(const Pending& p, const Path& path, uint32_t firstPacketBytes);
    void QueueTail(const Tail& tail);
    void StartTail(const Tail& tail);
    /// One flow of \p bytes over \p path: \p drained when its last byte has left, \p delivered
    /// when it is in (the tail latency later, no earlier than its first packet).
    void Move(const Path& path,
              uint64_t bytes,
              uint32_t firstPacketBytes,
              std::function<void()> drained,
              std::function<void()> delivered,
              double weight = 1.0);
    const Path& GetPath(uint32_t srcRank, uint32_t dstRank);
    /// The FlowNetwork link of the topology's link \p key (added on first use).
    uint32_t LinkOf(uint64_t key, double wire_byte_per_s);
    double WireBytes(uint64_t payloadBytes) const;
    Time FirstIn(const Path& path, uint32_t payloadBytes) const;
    Time TailLatency(const Path& path, uint32_t payloadBytes) const;

    Ptr<TransportPlane> m_packet;
    InSwitchReductionPlane* m_inSwitch{nullptr};
    bool m_nvlsFlows{true};
    std::unique_ptr<FlowNetwork> m_network;
    std::unique_ptr<FlowNvls> m_nvls; //!< made on the first in-switch operation; uses m_network
    Ptr<FlowTopology> m_topology;
    std::unordered_map<uint64_t, uint32_t> m_linkOf; //!< topology's link key -> FlowNetwork link
    std::unordered_map<uint64_t, Path> m_paths;      //!< (src << 32 | dst)
    uint32_t m_fineBytes{0};
    uint32_t m_overheadBytes{0};
    bool m_sourceQueue{true};
    bool m_lastPacketInTurn{true};
    bool m_localRefill{true};
    std::unordered_map<uint64_t, TailTurns> m_tails; //!< (src << 32 | dst)
    std::unordered_map<uint64_t, Source> m_sources;  //!< (src << 32 | dst)
    std::unordered_map<uint32_t, uint64_t> m_queueBytes;
    MessageCallback m_firstIn;
    MessageCallback m_drained;
    MessageCallback m_delivered;
};

} // namespace ns3

#endif
