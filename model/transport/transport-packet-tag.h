/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRANSPORT_PACKET_TAG_H
#define AI_FABRIC_TRANSPORT_PACKET_TAG_H

#include "ns3/packet.h"
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
    TransportTag tag; //!< without the remote fields: see TransportMessageTag
};

/**
 * \ingroup ai-fabric
 * The remote fields of a TransportTag (bytes, client, key), on the packets of a
 * message whose receiver is simulated by another process: a second tag because
 * ns-3 packet tags hold at most 21 bytes.  Local messages do not carry it.
 */
class TransportMessageTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer buffer) const override;
    void Deserialize(TagBuffer buffer) override;
    void Print(std::ostream& os) const override;

    uint64_t bytes{0};
    uint64_t key{0};
    uint8_t client{0};
    uint32_t sinkChannel{0}; //!< the receiving channel charged (TransportTag::sinkChannel)
    uint64_t channelRate_bit_per_s{0};
};

/// Top bit of a packet's sequence number as carried (tag or header): a TransportMessageTag
/// with the remote fields follows.
constexpr uint32_t kTransportRemoteBit = 1U << 31;
/// Adds the TransportMessageTag of \p tag when it is remote (nothing for a local message).
void AddTransportMessageTag(Ptr<Packet> p, const TransportTag& tag);
/// Fills the remote fields of \p tag from \p p's TransportMessageTag (aborts without one).
void PeekTransportMessageTag(Ptr<const Packet> p, TransportTag& tag);
/// Tags \p p with \p tag (both tags when it is remote).
void AddTransportTags(Ptr<Packet> p, uint32_t srcRank, uint32_t dstRank, const TransportTag& tag);
/// The TransportPacketTag of \p p with the remote fields filled in; false without one.
bool PeekTransportTags(Ptr<const Packet> p, TransportPacketTag& out);

} // namespace ns3

#endif
