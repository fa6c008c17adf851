/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-flow-control-packet.h"

#include "ns3/abort.h"
#include "ns3/infiniband-crc.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandFlowControlPacket");

NS_OBJECT_ENSURE_REGISTERED(InfinibandFlowControlPacket);

// ---------------------------------------------------------------- flow control

InfinibandFlowControlPacket::InfinibandFlowControlPacket()
    : m_op(OP_NORMAL),
      m_fctbs(0),
      m_vl(0),
      m_fccl(0),
      m_receivedLpcrc(0),
      m_deserialized(false)
{
}

TypeId
InfinibandFlowControlPacket::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandFlowControlPacket")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandFlowControlPacket>();
    return tid;
}

TypeId
InfinibandFlowControlPacket::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandFlowControlPacket::GetSerializedSize() const
{
    return SIZE_BYTES;
}

uint16_t
InfinibandFlowControlPacket::ComputeLpcrc() const
{
    const uint8_t bytes[4] = {static_cast<uint8_t>((m_op << 4) | (m_fctbs >> 8)),
                              static_cast<uint8_t>(m_fctbs & 0xff),
                              static_cast<uint8_t>((m_vl << 4) | (m_fccl >> 8)),
                              static_cast<uint8_t>(m_fccl & 0xff)};
    return InfinibandVcrc::Compute(bytes, sizeof(bytes)); // the VCRC polynomial (IBA §7.9.4)
}

void
InfinibandFlowControlPacket::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU16(static_cast<uint16_t>((m_op << 12) | m_fctbs));
    start.WriteHtonU16(static_cast<uint16_t>((m_vl << 12) | m_fccl));
    start.WriteHtolsbU16(ComputeLpcrc()); // same byte order as the VCRC
}

uint32_t
InfinibandFlowControlPacket::Deserialize(Buffer::Iterator start)
{
    uint16_t w0 = start.ReadNtohU16();
    uint16_t w1 = start.ReadNtohU16();
    m_op = w0 >> 12;
    m_fctbs = w0 & 0x0fff;
    m_vl = w1 >> 12;
    m_fccl = w1 & 0x0fff;
    m_receivedLpcrc = start.ReadLsbtohU16();
    m_deserialized = true;
    return SIZE_BYTES;
}

void
InfinibandFlowControlPacket::Print(std::ostream& os) const
{
    os << "FC Op=" << unsigned(m_op) << " VL=" << unsigned(m_vl) << " FCTBS=" << m_fctbs
       << " FCCL=" << m_fccl << " LPCRC=0x" << std::hex << GetLpcrc() << std::dec;
}

void
InfinibandFlowControlPacket::SetOp(uint8_t op)
{
    NS_ABORT_MSG_IF(op > 15, "InfinibandFlowControlPacket: Op " << unsigned(op) << " > 15");
    m_op = op;
    m_deserialized = false;
}

uint8_t
InfinibandFlowControlPacket::GetOp() const
{
    return m_op;
}

void
InfinibandFlowControlPacket::SetFctbs(uint16_t blocks)
{
    m_fctbs = blocks & 0x0fff; // modulo 4096 by definition (IBA §7.9.4)
    m_deserialized = false;
}

uint16_t
InfinibandFlowControlPacket::GetFctbs() const
{
    return m_fctbs;
}

void
InfinibandFlowControlPacket::SetVl(uint8_t vl)
{
    NS_ABORT_MSG_IF(vl > 15, "InfinibandFlowControlPacket: VL " << unsigned(vl) << " > 15");
    m_vl = vl;
    m_deserialized = false;
}

uint8_t
InfinibandFlowControlPacket::GetVl() const
{
    return m_vl;
}

void
InfinibandFlowControlPacket::SetFccl(uint16_t blocks)
{
    m_fccl = blocks & 0x0fff;
    m_deserialized = false;
}

uint16_t
InfinibandFlowControlPacket::GetFccl() const
{
    return m_fccl;
}

uint16_t
InfinibandFlowControlPacket::GetLpcrc() const
{
    return m_deserialized ? m_receivedLpcrc : ComputeLpcrc();
}

bool
InfinibandFlowControlPacket::IsLpcrcOk() const
{
    return GetLpcrc() == ComputeLpcrc();
}

} // namespace ns3
