/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/transport-packet-tag.h"

#include "ns3/abort.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TransportPacketTag);
NS_OBJECT_ENSURE_REGISTERED(TransportMessageTag);

namespace
{
// The 20 bytes are full: "a TransportMessageTag follows" is the sequence number's top bit.
constexpr uint32_t kRemoteBit = kTransportRemoteBit;
} // namespace

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
    buffer.WriteU32(tag.sequence | (tag.remote ? kRemoteBit : 0));
    buffer.WriteU32(srcRank);
    buffer.WriteU32(dstRank);
}

void
TransportPacketTag::Deserialize(TagBuffer buffer)
{
    tag.messageId = buffer.ReadU64();
    const uint32_t sequence = buffer.ReadU32();
    tag.sequence = sequence & ~kRemoteBit;
    tag.remote = (sequence & kRemoteBit) != 0;
    srcRank = buffer.ReadU32();
    dstRank = buffer.ReadU32();
}

void
TransportPacketTag::Print(std::ostream& os) const
{
    os << "msg=" << tag.messageId << " seq=" << tag.sequence << " " << srcRank << "->" << dstRank;
}

TypeId
TransportMessageTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TransportMessageTag")
                            .SetParent<Tag>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<TransportMessageTag>();
    return tid;
}

TypeId
TransportMessageTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
TransportMessageTag::GetSerializedSize() const
{
    return 29;
}

void
TransportMessageTag::Serialize(TagBuffer buffer) const
{
    buffer.WriteU64(bytes);
    buffer.WriteU64(key);
    buffer.WriteU8(client);
    buffer.WriteU32(sinkChannel);
    buffer.WriteU64(channelRate_bit_per_s);
}

void
TransportMessageTag::Deserialize(TagBuffer buffer)
{
    bytes = buffer.ReadU64();
    key = buffer.ReadU64();
    client = buffer.ReadU8();
    sinkChannel = buffer.ReadU32();
    channelRate_bit_per_s = buffer.ReadU64();
}

void
TransportMessageTag::Print(std::ostream& os) const
{
    os << "bytes=" << bytes << " client=" << uint32_t(client) << " key=" << key;
}

void
AddTransportMessageTag(Ptr<Packet> p, const TransportTag& tag)
{
    if (tag.remote)
    {
        TransportMessageTag m;
        m.bytes = tag.bytes;
        m.key = tag.key;
        m.client = tag.client;
        m.sinkChannel = tag.sinkChannel;
        m.channelRate_bit_per_s = tag.channelRate_bit_per_s;
        p->AddPacketTag(m);
    }
}

void
PeekTransportMessageTag(Ptr<const Packet> p, TransportTag& tag)
{
    TransportMessageTag m;
    NS_ABORT_MSG_UNLESS(p->PeekPacketTag(m),
                        "transport packet of message " << tag.messageId
                                                       << " lacks its TransportMessageTag");
    tag.remote = true;
    tag.bytes = m.bytes;
    tag.key = m.key;
    tag.client = m.client;
    tag.sinkChannel = m.sinkChannel;
    tag.channelRate_bit_per_s = m.channelRate_bit_per_s;
}

void
AddTransportTags(Ptr<Packet> p, uint32_t srcRank, uint32_t dstRank, const TransportTag& tag)
{
    p->AddPacketTag(TransportPacketTag(srcRank, dstRank, tag));
    AddTransportMessageTag(p, tag);
}

bool
PeekTransportTags(Ptr<const Packet> p, TransportPacketTag& out)
{
    if (!p->PeekPacketTag(out))
    {
        return false;
    }
    if (out.tag.remote)
    {
        PeekTransportMessageTag(p, out.tag);
    }
    return true;
}

} // namespace ns3
