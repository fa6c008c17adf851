/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRANSPORT_PACKET_TAG_H
#define AI_FABRIC_TRANSPORT_PACKET_TAG_H

#include "ns3/tag.h"
#include "ns3/transport-plane.h"

namespace ns3
{

/**
 * \ingroup ai-fabric
 * TransportTag and ranks of one transport packet, as an ns-3 PacketTag: the
 * NVLink and InfiniBand planes carry it out of band because their real headers
 * (NVLink write address, RC BTH/PSN) already pay for this information on the
 * wire, so the simulated wire bytes stay those of the real packet.
 */
class TransportPacketTag : public Tag
{
  public:
    TransportPacketTag();
    TransportPacketTag(uint32_t srcRank, uint32_t dstRank, const TransportTag& tag);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer buffer) const override;
    void Deserialize(TagBuffer buffer) override;
    void Print(std::ostream& os) const override;

    uint32_t srcRank{0};
    uint32_t dstRank{0};
    TransportTag tag;
};

} // namespace ns3

#endif
