/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The packet headers an InfiniBand packet is built of: LRH (link), BTH and DETH
// (transport), the IPoIB encapsulation.  CRC trailers: infiniband-crc.cc; the
// link-level flow-control packet: infiniband-flow-control-packet.cc.
#include "infiniband-headers.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandHeaders");

NS_OBJECT_ENSURE_REGISTERED(InfinibandLrh);
NS_OBJECT_ENSURE_REGISTERED(InfinibandBth);
NS_OBJECT_ENSURE_REGISTERED(InfinibandDeth);
NS_OBJECT_ENSURE_REGISTERED(InfinibandIpoibHeader);

// ---------------------------------------------------------------- LRH

InfinibandLrh::InfinibandLrh()
    : m_vl(0),
      m_lver(0),
      m_sl(0),
      m_lnh(LNH_IBA_LOCAL),
      m_dlid(0),
      m_pktLenWords(0),
      m_slid(0)
{
}

TypeId
InfinibandLrh::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandLrh")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandLrh>();
    return tid;
}

TypeId
InfinibandLrh::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandLrh::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
InfinibandLrh::Serialize(Buffer::Iterator start) const
{
    start.WriteU8(static_cast<uint8_t>((m_vl << 4) | m_lver));
    start.WriteU8(static_cast<uint8_t>((m_sl << 4) | m_lnh)); // 2 reserved bits stay 0
    start.WriteHtonU16(m_dlid);
    start.WriteHtonU16(m_pktLenWords); // 5 reserved bits stay 0
    start.WriteHtonU16(m_slid);
}

uint32_t
InfinibandLrh::Deserialize(Buffer::Iterator start)
{
    uint8_t b0 = start.ReadU8();
    uint8_t b1 = start.ReadU8();
    m_vl = b0 >> 4;
    m_lver = b0 & 0x0f;
    m_sl = b1 >> 4;
    m_lnh = b1 & 0x03;
    m_dlid = start.ReadNtohU16();
    m_pktLenWords = start.ReadNtohU16() & MAX_PKTLEN_WORDS;
    m_slid = start.ReadNtohU16();
    return SIZE_BYTES;
}

void
InfinibandLrh::Print(std::ostream& os) const
{
    os << "LRH VL=" << unsigned(m_vl) << " LVer=" << unsigned(m_lver) << " SL=" << unsigned(m_sl)
       << " LNH=" << unsigned(m_lnh) << " DLID=" << m_dlid << " PktLen=" << m_pktLenWords
       << "w SLID=" << m_slid;
}

void
InfinibandLrh::SetVl(uint8_t vl)
{
    NS_ABORT_MSG_IF(vl > 15, "InfinibandLrh: VL " << unsigned(vl) << " does not fit 4 bits");
    m_vl = vl;
}

uint8_t
InfinibandLrh::GetVl() const
{
    return m_vl;
}

void
InfinibandLrh::SetLver(uint8_t lver)
{
    NS_ABORT_MSG_IF(lver > 15, "InfinibandLrh: LVer " << unsigned(lver) << " does not fit 4 bits");
    m_lver = lver;
}

uint8_t
InfinibandLrh::GetLver() const
{
    return m_lver;
}

void
InfinibandLrh::SetSl(uint8_t sl)
{
    NS_ABORT_MSG_IF(sl > 15, "InfinibandLrh: SL " << unsigned(sl) << " does not fit 4 bits");
    m_sl = sl;
}

uint8_t
InfinibandLrh::GetSl() const
{
    return m_sl;
}

void
InfinibandLrh::SetLnh(uint8_t lnh)
{
    NS_ABORT_MSG_IF(lnh > 3, "InfinibandLrh: LNH " << unsigned(lnh) << " does not fit 2 bits");
    m_lnh = lnh;
}

uint8_t
InfinibandLrh::GetLnh() const
{
    return m_lnh;
}

void
InfinibandLrh::SetDlid(uint16_t dlid)
{
    m_dlid = dlid;
}

uint16_t
InfinibandLrh::GetDlid() const
{
    return m_dlid;
}

void
InfinibandLrh::SetSlid(uint16_t slid)
{
    m_slid = slid;
}

uint16_t
InfinibandLrh::GetSlid() const
{
    return m_slid;
}

void
InfinibandLrh::SetPacketLengthWords(uint16_t words)
{
    NS_ABORT_MSG_IF(words > MAX_PKTLEN_WORDS,
                    "InfinibandLrh: PktLen " << words << " words does not fit 11 bits");
    m_pktLenWords = words;
}

uint16_t
InfinibandLrh::GetPacketLengthWords() const
{
    return m_pktLenWords;
}

void
InfinibandLrh::SetPacketLengthFromBytes(uint32_t lrhThroughIcrcBytes)
{
    NS_ABORT_MSG_IF(lrhThroughIcrcBytes % 4 != 0,
                    "InfinibandLrh: packet length " << lrhThroughIcrcBytes
                                                    << " bytes is not a multiple of 4 (pad it)");
    NS_ABORT_MSG_IF(lrhThroughIcrcBytes / 4 > MAX_PKTLEN_WORDS,
                    "InfinibandLrh: packet length " << lrhThroughIcrcBytes
                                                    << " bytes exceeds PktLen's 11 bits");
    m_pktLenWords = static_cast<uint16_t>(lrhThroughIcrcBytes / 4);
}

// ---------------------------------------------------------------- BTH

InfinibandBth::InfinibandBth()
    : m_opcode(RC_SEND_ONLY),
      m_se(false),
      m_m(false),
      m_padCnt(0),
      m_tver(0),
      m_pkey(DEFAULT_PKEY),
      m_fecn(false),
      m_becn(false),
      m_destQp(0),
      m_ackReq(false),
      m_psn(0)
{
}

TypeId
InfinibandBth::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandBth")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandBth>();
    return tid;
}

TypeId
InfinibandBth::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandBth::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
InfinibandBth::Serialize(Buffer::Iterator start) const
{
    start.WriteU8(m_opcode);
    start.WriteU8(
        static_cast<uint8_t>((m_se ? 0x80 : 0) | (m_m ? 0x40 : 0) | (m_padCnt << 4) | m_tver));
    start.WriteHtonU16(m_pkey);
    start.WriteU8(static_cast<uint8_t>((m_fecn ? 0x80 : 0) | (m_becn ? 0x40 : 0)));
    start.WriteU8(static_cast<uint8_t>(m_destQp >> 16));
    start.WriteHtonU16(static_cast<uint16_t>(m_destQp & 0xffff));
    start.WriteU8(m_ackReq ? 0x80 : 0);
    start.WriteU8(static_cast<uint8_t>(m_psn >> 16));
    start.WriteHtonU16(static_cast<uint16_t>(m_psn & 0xffff));
}

uint32_t
InfinibandBth::Deserialize(Buffer::Iterator start)
{
    m_opcode = start.ReadU8();
    uint8_t b1 = start.ReadU8();
    m_se = (b1 & 0x80) != 0;
    m_m = (b1 & 0x40) != 0;
    m_padCnt = (b1 >> 4) & 0x03;
    m_tver = b1 & 0x0f;
    m_pkey = start.ReadNtohU16();
    uint8_t b4 = start.ReadU8();
    m_fecn = (b4 & 0x80) != 0;
    m_becn = (b4 & 0x40) != 0;
    m_destQp = static_cast<uint32_t>(start.ReadU8()) << 16;
    m_destQp |= start.ReadNtohU16();
    m_ackReq = (start.ReadU8() & 0x80) != 0;
    m_psn = static_cast<uint32_t>(start.ReadU8()) << 16;
    m_psn |= start.ReadNtohU16();
    return SIZE_BYTES;
}

void
InfinibandBth::Print(std::ostream& os) const
{
    os << "BTH OpCode=0x" << std::hex << unsigned(m_opcode) << std::dec << " SE=" << m_se
       << " M=" << m_m << " PadCnt=" << unsigned(m_padCnt) << " TVer=" << unsigned(m_tver)
       << " P_Key=0x" << std::hex << m_pkey << std::dec << " FECN=" << m_fecn << " BECN=" << m_becn
       << " DestQP=0x" << std::hex << m_destQp << std::dec << " A=" << m_ackReq << " PSN=" << m_psn;
}

void
InfinibandBth::SetOpcode(uint8_t opcode)
{
    m_opcode = opcode;
}

uint8_t
InfinibandBth::GetOpcode() const
{
    return m_opcode;
}

void
InfinibandBth::SetSolicitedEvent(bool se)
{
    m_se = se;
}

bool
InfinibandBth::GetSolicitedEvent() const
{
    return m_se;
}

void
InfinibandBth::SetMigReq(bool m)
{
    m_m = m;
}

bool
InfinibandBth::GetMigReq() const
{
    return m_m;
}

void
InfinibandBth::SetPadCount(uint8_t padBytes)
{
    NS_ABORT_MSG_IF(padBytes > 3, "InfinibandBth: PadCnt " << unsigned(padBytes) << " exceeds 3");
    m_padCnt = padBytes;
}

uint8_t
InfinibandBth::GetPadCount() const
{
    return m_padCnt;
}

void
InfinibandBth::SetTver(uint8_t tver)
{
    NS_ABORT_MSG_IF(tver > 15, "InfinibandBth: TVer " << unsigned(tver) << " does not fit 4 bits");
    m_tver = tver;
}

uint8_t
InfinibandBth::GetTver() const
{
    return m_tver;
}

void
InfinibandBth::SetPartitionKey(uint16_t pkey)
{
    m_pkey = pkey;
}

uint16_t
InfinibandBth::GetPartitionKey() const
{
    return m_pkey;
}

void
InfinibandBth::SetFecn(bool fecn)
{
    m_fecn = fecn;
}

bool
InfinibandBth::GetFecn() const
{
    return m_fecn;
}

void
InfinibandBth::SetBecn(bool becn)
{
    m_becn = becn;
}

bool
InfinibandBth::GetBecn() const
{
    return m_becn;
}

void
InfinibandBth::SetDestQp(uint32_t qp)
{
    NS_ABORT_MSG_IF(qp > 0xffffff, "InfinibandBth: DestQP " << qp << " does not fit 24 bits");
    m_destQp = qp;
}

uint32_t
InfinibandBth::GetDestQp() const
{
    return m_destQp;
}

void
InfinibandBth::SetAckReq(bool a)
{
    m_ackReq = a;
}

bool
InfinibandBth::GetAckReq() const
{
    return m_ackReq;
}

void
InfinibandBth::SetPsn(uint32_t psn)
{
    NS_ABORT_MSG_IF(psn > 0xffffff, "InfinibandBth: PSN " << psn << " does not fit 24 bits");
    m_psn = psn;
}

uint32_t
InfinibandBth::GetPsn() const
{
    return m_psn;
}

uint8_t
InfinibandBth::PadBytesFor(uint32_t payloadBytes)
{
    return static_cast<uint8_t>((4 - payloadBytes % 4) % 4);
}

// ---------------------------------------------------------------- DETH, IPoIB

TypeId
InfinibandDeth::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandDeth")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandDeth>();
    return tid;
}

TypeId
InfinibandDeth::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandDeth::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
InfinibandDeth::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU32(qkey);
    start.WriteHtonU32(srcQp & 0xffffff);
}

uint32_t
InfinibandDeth::Deserialize(Buffer::Iterator start)
{
    qkey = start.ReadNtohU32();
    srcQp = start.ReadNtohU32() & 0xffffff;
    return SIZE_BYTES;
}

void
InfinibandDeth::Print(std::ostream& os) const
{
    os << "Q_Key=0x" << std::hex << qkey << std::dec << " SrcQP=" << srcQp;
}

TypeId
InfinibandIpoibHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandIpoibHeader")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandIpoibHeader>();
    return tid;
}

TypeId
InfinibandIpoibHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandIpoibHeader::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
InfinibandIpoibHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU16(etherType);
    start.WriteHtonU16(0);
}

uint32_t
InfinibandIpoibHeader::Deserialize(Buffer::Iterator start)
{
    etherType = start.ReadNtohU16();
    start.ReadNtohU16();
    return SIZE_BYTES;
}

void
InfinibandIpoibHeader::Print(std::ostream& os) const
{
    os << "IPoIB type=0x" << std::hex << etherType << std::dec;
}

} // namespace ns3
