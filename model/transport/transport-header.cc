/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/transport-header.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TransportHeader);

TransportHeader::TransportHeader()
    : TransportHeader(0, 0, 0, 0)
{
}

TransportHeader::TransportHeader(uint64_t messageId,
                                 uint32_t srcRank,
                                 uint32_t dstRank,
                                 uint32_t sequence)
    : m_messageId(messageId),
      m_srcRank(srcRank),
      m_dstRank(dstRank),
      m_sequence(sequence)
{
}

TypeId
TransportHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TransportHeader")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<TransportHeader>();
    return tid;
}

TypeId
TransportHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
TransportHeader::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
TransportHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU64(m_messageId);
    start.WriteHtonU32(m_srcRank);
    start.WriteHtonU32(m_dstRank);
    start.WriteHtonU32(m_sequence);
}

uint32_t
TransportHeader::Deserialize(Buffer::Iterator start)
{
    m_messageId = start.ReadNtohU64();
    m_srcRank = start.ReadNtohU32();
    m_dstRank = start.ReadNtohU32();
    m_sequence = start.ReadNtohU32();
    return SIZE_BYTES;
}

void
TransportHeader::Print(std::ostream& os) const
{
    os << "msg=" << m_messageId << " " << m_srcRank << "->" << m_dstRank << " seq=" << m_sequence;
}

uint64_t
TransportHeader::GetMessageId() const
{
    return m_messageId;
}

uint32_t
TransportHeader::GetSrcRank() const
{
    return m_srcRank;
}

uint32_t
TransportHeader::GetDstRank() const
{
    return m_dstRank;
}

uint32_t
TransportHeader::GetSequence() const
{
    return m_sequence;
}

} // namespace ns3
