/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/transport-packet-tag.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TransportPacketTag);

TransportPacketTag::TransportPacketTag() = default;

TransportPacketTag::TransportPacketTag(uint32_t src, uint32_t dst, const TransportTag& t)
    : srcRank(src),
      dstRank(dst),
      tag(t)
{
}

TypeId
TransportPacketTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TransportPacketTag")
                            .SetParent<Tag>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<TransportPacketTag>();
    return tid;
}

TypeId
TransportPacketTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
TransportPacketTag::GetSerializedSize() const
{
    return 20;
}

void
TransportPacketTag::Serialize(TagBuffer buffer) const
{
    buffer.WriteU64(tag.messageId);
    buffer.WriteU32(tag.sequence);
    buffer.WriteU32(srcRank);
    buffer.WriteU32(dstRank);
}

void
TransportPacketTag::Deserialize(TagBuffer buffer)
{
    tag.messageId = buffer.ReadU64();
    tag.sequence = buffer.ReadU32();
    srcRank = buffer.ReadU32();
    dstRank = buffer.ReadU32();
}

void
TransportPacketTag::Print(std::ostream& os) const
{
    os << "msg=" << tag.messageId << " seq=" << tag.sequence << " " << srcRank << "->" << dstRank;
}

} // namespace ns3
