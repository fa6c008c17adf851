/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_PLANE_H
#define AI_FABRIC_CREDIT_LINK_PLANE_H

#include "ns3/credit-link-net-device.h"
#include "ns3/transport-plane.h"

#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * TransportPlane over generic CreditLinkNetDevices (one device per rank, a
 * CreditSwitch fabric routing on CreditLinkHeader destinations).  A packet is
 * CreditLinkHeader(destination id of the rank, Vc, Protocol) +
 * TransportHeader + payload.  Ranks are reachable from each other when both
 * were added: give disjoint networks their own plane.
 */
class CreditLinkPlane : public TransportPlane
{
  public:
    static TypeId GetTypeId();
    CreditLinkPlane();

    /// \p destinationId is what the switches route on (SetRoute); default the rank.
    void AddRank(uint32_t rank, Ptr<CreditLinkNetDevice> device, uint32_t destinationId);
    void AddRank(uint32_t rank, Ptr<CreditLinkNetDevice> device);
    Ptr<CreditLinkNetDevice> GetDevice(uint32_t rank) const;

    bool HasRank(uint32_t rank) const override;
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const override;
    uint32_t GetMaxPayloadBytes() const override;
    bool Inject(uint32_t srcRank,
                uint32_t dstRank,
                uint32_t payloadBytes,
                const TransportTag& tag) override;
    int64_t GetNodeId(uint32_t rank) const override;
    uint32_t GetPacketOverheadBytes() const override;

  protected:
    void DoDispose() override;

  private:
    struct RankEntry
    {
        Ptr<CreditLinkNetDevice> device;
        uint32_t destinationId{0};
    };

    /// The device's TxReady, bound to its rank: straight to NotifyTxReady for our VC.
    void DeviceReady(uint32_t rank, uint32_t vc);
    void Receive(Ptr<NetDevice> device,
                 Ptr<const Packet> packet,
                 uint16_t protocol,
                 const Address& from,
                 const Address& to,
                 NetDevice::PacketType type);

    uint32_t m_maxPayloadBytes;
    uint32_t m_vc;
    uint16_t m_protocol;
    std::vector<RankEntry> m_ranks; //!< indexed by rank; null device = absent
    std::unordered_map<const CreditLinkNetDevice*, uint32_t> m_rankOfDevice;
};

} // namespace ns3

#endif
