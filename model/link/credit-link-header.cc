/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-link-header.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CreditLinkHeader);

CreditLinkHeader::CreditLinkHeader()
    : CreditLinkHeader(0, 0, 0)
{
}

CreditLinkHeader::CreditLinkHeader(uint32_t destination, uint8_t vc, uint16_t protocol)
    : m_destination(destination),
      m_vc(vc),
      m_protocol(protocol)
{
}

TypeId
CreditLinkHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CreditLinkHeader")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<CreditLinkHeader>();
    return tid;
}

TypeId
CreditLinkHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
CreditLinkHeader::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
CreditLinkHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU32(m_destination);
    start.WriteU8(m_vc);
    start.WriteU8(0); // reserved
    start.WriteHtonU16(m_protocol);
}

uint32_t
CreditLinkHeader::Deserialize(Buffer::Iterator start)
{
    m_destination = start.ReadNtohU32();
    m_vc = start.ReadU8();
    start.ReadU8();
    m_protocol = start.ReadNtohU16();
    return SIZE_BYTES;
}

void
CreditLinkHeader::Print(std::ostream& os) const
{
    os << "dst=" << m_destination << " vc=" << static_cast<uint32_t>(m_vc)
       << " proto=" << m_protocol;
}

uint32_t
CreditLinkHeader::GetDestination() const
{
    return m_destination;
}

void
CreditLinkHeader::SetDestination(uint32_t destination)
{
    m_destination = destination;
}

uint8_t
CreditLinkHeader::GetVc() const
{
    return m_vc;
}

void
CreditLinkHeader::SetVc(uint8_t vc)
{
    m_vc = vc;
}

uint16_t
CreditLinkHeader::GetProtocol() const
{
    return m_protocol;
}

void
CreditLinkHeader::SetProtocol(uint16_t protocol)
{
    m_protocol = protocol;
}

} // namespace ns3
