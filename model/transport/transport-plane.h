/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRANSPORT_PLANE_H
#define AI_FABRIC_TRANSPORT_PLANE_H

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/link-stripe.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// Identifies one packet of a transport message; carried by the plane end to end.
struct TransportTag
{
    uint64_t messageId{0};
    uint32_t sequence{0}; //!< packet index within the message (< 2^31)
    /// The receiver is simulated by another process (distributed run): the message's
    /// size and the receiving client's key travel too, so that process can complete it.
    bool remote{false};
    uint8_t client{0};
    uint64_t bytes{0};
    uint64_t key{0};
    uint32_t channel{0}; //!< the sender's collective channel (a RoCE NIC's QP per channel)
    /// The receiving channel charged for the message (GpuTransport::SendMessage's
    /// sinkChannel); carried for a remote receiver only.
    uint32_t sinkChannel{0};
    uint64_t channelRate_bit_per_s{0}; //!< the sender's collective channel limit (0: none)
    /// The lane of a striped message this packet goes on (TransportPlane::GetStripeLinks);
    /// NO_LANE: the plane places it.  The sender's only: not carried to the receiver.
    uint32_t lane{NO_LANE};
    static constexpr uint32_t NO_LANE = UINT32_MAX;
};

/**
 * Payload of each simulated packet of a \p messageBytes message: ceil(messageBytes /
 * minPackets) rounded up to a multiple of \p fineBytes, within [fineBytes, burstBytes
 * rounded down to a multiple of fineBytes].  minPackets 0 gives fineBytes (no bursts).
 * Large messages get few large packets (fewer events), small ones keep fine packets.
 */
uint32_t AdaptivePacketBytes(uint64_t messageBytes,
                             uint32_t fineBytes,
                             uint32_t burstBytes,
                             uint32_t minPackets);

/**
 * \ingroup ai-fabric
 * One fabric a GpuTransport can move message packets over (NVLink domain,
 * InfiniBand rails, a generic credit-link network).  The transport does the
 * segmentation, per-peer ordering and round-robin interleaving; a plane only
 * injects one packet of at most GetMaxPayloadBytes() payload for a rank and
 * delivers it at the destination rank.
 *
 * Contract for an adapter (NVLink, InfiniBand):
 *  - Inject returns false, without side effects, when the rank's device cannot
 *    take the packet now; the plane then calls NotifyTxReady with that rank once
 *    it can (no polling: hook the device's own "room again" signal, bound to the
 *    rank when the rank is added, and call it in that signal's event).
 *  - Every accepted packet is delivered exactly once, with the same tag and
 *    payload byte count, through the Deliver callback (order may differ if the
 *    plane sprays; the transport counts bytes, it does not reorder).
 *  - Packets of one (src, dst) pair injected in order must not starve each other.
 *  - A payload above GetMaxPayloadBytes() (up to GetMaxBurstBytes()) is a burst: it
 *    costs the wire what its back-to-back fine packets would, headers included.
 *  - A plane with stripe lanes (GetStripeLinks) sends a packet whose tag.lane is set on
 *    that lane, whatever its own placement would be.
 */
class TransportPlane : public Object
{
  public:
    /// (srcRank, dstRank, payloadBytes, tag) at the destination.
    typedef Callback<void, uint32_t, uint32_t, uint32_t, TransportTag> DeliverCallback;
    /// (srcRank): that rank may inject again.
    typedef Callback<void, uint32_t> TxReadyCallback;

    static TypeId GetTypeId();
    TransportPlane();

    /// "nvlink", "infiniband", "ethernet" or "generic": the flows table's plane column.
    std::string GetPlaneName() const;
    void SetPlaneName(const std::string& name);
    /// Per-message software overhead (NCCL per-step cost) before the first packet.
    Time GetSoftwareLatency() const;
    /// Payload rate a GPU's endpoint sustains into this plane per direction (the SMs'
    /// NVLink stores, GPUDirect RDMA through PCIe to the HCA); 0 = no limit beyond the wire.
    DataRate GetEndpointRate() const;
    /// Payload GB/s of \p rank's links on this plane (all of them, one direction), from the
    /// devices' rates and packet overheads; 0 when the plane cannot tell.
    virtual double GetLineRate_gbyte_per_s(uint32_t rank) const;
    /// What \p rank can move on this plane per direction: the line rate capped by the
    /// endpoint rate (GB/s; 0 unknown).  The collective tuner's bandwidth figure.
    double GetRankRate_gbyte_per_s(uint32_t rank) const;

    virtual bool HasRank(uint32_t rank) const = 0;
    virtual bool CanReach(uint32_t srcRank, uint32_t dstRank) const = 0;
    /// The fine packet unit: payload of one real packet (IB MTU) or the NVLink Granularity.
    virtual uint32_t GetMaxPayloadBytes() const = 0;
    /// Largest payload Inject accepts: one simulated packet standing for several
    /// back-to-back fine ones (a burst); default GetMaxPayloadBytes(), no bursts.
    virtual uint32_t GetMaxBurstBytes() const;
    /// Links of each lane that a message from \p srcRank to \p dstRank is striped over:
    /// the parallel paths the hardware stripes every transfer over (an NVLink GPU's switch
    /// planes).  A message whose narrowest lane's share fills a fine packet then goes as
    /// StripePacketBytes, one packet per lane and round, and Inject gets each packet's
    /// tag.lane.  Empty (default): packets of one size, which the plane places itself.  The
    /// messages keep the reference: it must stay valid while the plane's devices do.
    virtual const std::vector<uint32_t>& GetStripeLinks(uint32_t srcRank, uint32_t dstRank) const;
    /// Payload GB/s of lane \p lane of GetStripeLinks(srcRank, dstRank), one direction (0
    /// when the plane cannot tell, as without lanes).
    virtual double GetStripeLaneRate_gbyte_per_s(uint32_t srcRank,
                                                 uint32_t dstRank,
                                                 uint32_t lane) const;
    virtual bool Inject(uint32_t srcRank,
                        uint32_t dstRank,
                        uint32_t payloadBytes,
                        const TransportTag& tag) = 0;
    /// Node of a rank's device (flows table), or -1 if unknown.
    virtual int64_t GetNodeId(uint32_t rank) const = 0;
    /// Wire bytes a packet of \p payloadBytes occupies beyond the payload (headers, framing).
    virtual uint32_t GetPacketOverheadBytes() const = 0;

    void SetDeliverCallback(DeliverCallback cb);
    void SetTxReadyCallback(TxReadyCallback cb);

  protected:
    void DoDispose() override;
    void NotifyDelivered(uint32_t srcRank,
                         uint32_t dstRank,
                         uint32_t payloadBytes,
                         const TransportTag& tag);
    /// The plane's only way to say "this rank may inject again": the adapter calls it
    /// from the device's own room signal, with the rank (the device -> rank mapping is
    /// the adapter's), and it calls the transport's TxReady hook in the same event.
    void NotifyTxReady(uint32_t srcRank);

  private:
    std::string m_name;
    Time m_softwareLatency;
    DataRate m_endpointRate;
    DeliverCallback m_deliver;
    TxReadyCallback m_txReady;
};

/**
 * \ingroup ai-fabric
 * Capability of a plane whose switches reduce in the fabric (NVSwitch gen3+
 * SHARP, NCCL's NVLS).  A TransportPlane that also derives from this class
 * lets the collective engine run algorithm "nvls"; when no plane of the
 * transport does, "nvls" is rejected.  The NVLink plane implements it with
 * NvSwitch's reduction/multicast engines (multimem.ld_reduce and multimem.st).
 */
class InSwitchReductionPlane
{
  public:
    /**
     * What the switches do with a group's buffers.  bytes as nccl-tests' size: AllReduce
     * the buffer of every rank; ReduceScatter every rank's whole input (each ends with its
     * 1/p share reduced); AllGather the whole output (each rank contributes its 1/p share).
     */
    enum class Op
    {
        AllReduce,
        ReduceScatter,
        AllGather,
    };

    virtual ~InSwitchReductionPlane() = default;
    /// True when the switches can reduce over exactly these ranks (one NVLink domain).
    virtual bool CanReduceInSwitch(const std::vector<uint32_t>& ranks) const = 0;
    /// Runs \p op over \p bytes (as Op says) in the switches; \p rankDone(rank) once that
    /// rank holds its result.  Called only after CanReduceInSwitch(ranks) returned true;
    /// any byte count, and several at once on the same ranks.
    virtual void StartInSwitch(Op op,
                               const std::vector<uint32_t>& ranks,
                               uint64_t bytes,
                               Callback<void, uint32_t> rankDone) = 0;
};

} // namespace ns3

#endif
