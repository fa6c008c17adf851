/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_TRANSPORT_PLANE_H
#define AI_FABRIC_INFINIBAND_TRANSPORT_PLANE_H

#include "ns3/infiniband-fabric.h"
#include "ns3/infiniband-net-device.h"
#include "ns3/transport-plane.h"

#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * TransportPlane over InfiniBand HCAs: a transport packet is one RC SEND ONLY
 * packet (InfinibandNetDevice::SendPacket) of at most the IB MTU, to the
 * destination rank's LID and the plane's Qp on ServiceLevel; the TransportTag
 * rides as a TransportPacketTag, so the wire carries exactly LRH, BTH,
 * payload, ICRC and VCRC; a burst (HCA MaxBurstPackets > 1) stands for several
 * such packets back to back.  Any two ranks of the plane reach each other (the
 * subnet manager routed every LID); several ranks may share an HCA.
 */
class InfinibandTransportPlane : public TransportPlane
{
  public:
    static TypeId GetTypeId();
    InfinibandTransportPlane();

    /// \p hca must have its LID (subnet manager run).  Call before GpuTransport::AddPlane.
    void AddRank(uint32_t rank, Ptr<InfinibandNetDevice> hca);
    /// Host h of \p fabric serves rank rankOfHost[h] (its first port, fabric.hostLids[h]).
    void AddHosts(const InfinibandFabric& fabric, const std::vector<uint32_t>& rankOfHost);
    Ptr<InfinibandNetDevice> GetDevice(uint32_t rank) const;

    bool HasRank(uint32_t rank) const override;
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const override;
    uint32_t GetMaxPayloadBytes() const override;
    /// MaxBurstPackets x IbMtu (smallest over the ranks' HCAs), fewer packets where an
    /// HCA's TxQueueBytes or its peer's ReceiveBufferBytes would not hold the burst.
    uint32_t GetMaxBurstBytes() const override;
    bool Inject(uint32_t srcRank,
                uint32_t dstRank,
                uint32_t payloadBytes,
                const TransportTag& tag) override;
    int64_t GetNodeId(uint32_t rank) const override;
    uint32_t GetPacketOverheadBytes() const override;
    double GetLineRate_gbyte_per_s(uint32_t rank) const override;

  protected:
    void NotifyConstructionCompleted() override;
    void DoDispose() override;

  private:
    struct DeviceRanks
    {
        std::vector<uint32_t> ranks;
        uint32_t next{0}; //!< first to wake: ranks sharing an HCA take turns
    };

    struct RankEntry
    {
        Ptr<InfinibandNetDevice> device;
        uint16_t lid{0};
        DeviceRanks* shared{nullptr};
        uint32_t slot{0}; //!< index in shared->ranks
    };

    /// The HCA's PacketTxReady, bound to the ranks sharing it: each to NotifyTxReady.
    void DeviceReady(const DeviceRanks& d);
    void Receive(uint16_t slid, Ptr<Packet> packet);

    uint8_t m_sl;
    uint32_t m_qp;
    uint32_t m_mtu;          //!< smallest IbMtu of the ranks' HCAs
    uint32_t m_burstPackets; //!< smallest MaxBurstPackets of the ranks' HCAs
    uint64_t m_burstRoom;    //!< payload one packet may have in every HCA queue and peer buffer
    std::vector<RankEntry> m_ranks; //!< indexed by rank; null device = absent
    std::unordered_map<const InfinibandNetDevice*, DeviceRanks> m_ranksOfDevice;
};

} // namespace ns3

#endif
