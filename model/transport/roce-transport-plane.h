/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_TRANSPORT_PLANE_H
#define AI_FABRIC_ROCE_TRANSPORT_PLANE_H

#include "ns3/roce-net-device.h"
#include "ns3/transport-plane.h"

#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * TransportPlane over RoCEv2 NICs, one per rank: a transport packet is one RC SEND ONLY
 * packet (RoceNetDevice::SendPacket) of at most RoceMtu, or a burst of such packets, on the
 * QP (destination, collective channel): each channel has its own QP, so its own UDP
 * source port (ECMP entropy) and congestion-control state, as NCCL's channels have their
 * own QPs.  The TransportTag rides as a TransportPacketTag.  Any two ranks reach each
 * other; packets of a message may arrive in any order (spraying).
 */
class RoceTransportPlane : public TransportPlane
{
  public:
    static TypeId GetTypeId();
    RoceTransportPlane();

    /// \p nic must have its host id; one rank per NIC.
    void AddRank(uint32_t rank, Ptr<RoceNetDevice> nic);
    Ptr<RoceNetDevice> GetDevice(uint32_t rank) const;

    bool HasRank(uint32_t rank) const override;
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const override;
    uint32_t GetMaxPayloadBytes() const override;
    /// MaxBurstPackets x RoceMtu, fewer packets where a port's peer buffer would not hold it.
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
    void Ready(Ptr<RoceNetDevice> nic);
    void Receive(uint32_t srcHost, Ptr<Packet> packet);

    uint32_t m_mtu;
    uint32_t m_burstPackets;
    uint64_t m_burstRoom;
    std::vector<Ptr<RoceNetDevice>> m_nics; //!< by rank
    std::unordered_map<const RoceNetDevice*, uint32_t> m_rankOfNic;
};

} // namespace ns3

#endif
