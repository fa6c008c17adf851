/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-headers.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>
#include <array>
#include <iomanip>
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandHeaders");

NS_OBJECT_ENSURE_REGISTERED(InfinibandLrh);
NS_OBJECT_ENSURE_REGISTERED(InfinibandBth);
NS_OBJECT_ENSURE_REGISTERED(InfinibandIcrc);
NS_OBJECT_ENSURE_REGISTERED(InfinibandVcrc);
NS_OBJECT_ENSURE_REGISTERED(InfinibandFlowControlPacket);

namespace
{

// Bit-reflected CRC registers, LSB-first like the Ethernet FCS.  Byte-wise
// table lookup: the CRCs run over every packet at every hop, so the bit loop
// dominated InfiniBand-heavy runs.
template <typename T, T Poly>
constexpr std::array<T, 256>
ReflectedCrcTable()
{
    std::array<T, 256> table{};
    for (uint32_t b = 0; b < 256; ++b)
    {
        T crc = static_cast<T>(b);
        for (int bit = 0; bit < 8; ++bit)
        {
            crc = static_cast<T>((crc >> 1) ^ ((crc & 1U) ? Poly : 0U));
        }
        table[b] = crc;
    }
    return table;
}

constexpr auto kCrc32Table = ReflectedCrcTable<uint32_t, 0xedb88320U>(); // reflected 0x04C11DB7
constexpr auto kCrc16Table = ReflectedCrcTable<uint16_t, 0xd008U>();     // reflected 0x100B

uint32_t
Crc32Reflected(const uint8_t* data, size_t length)
{
    uint32_t crc = 0xffffffffU;
    for (size_t i = 0; i < length; ++i)
    {
        crc = (crc >> 8) ^ kCrc32Table[(crc ^ data[i]) & 0xffU];
    }
    return ~crc;
}

uint16_t
Crc16IbReflected(const uint8_t* data, size_t length)
{
    uint16_t crc = 0xffff;
    for (size_t i = 0; i < length; ++i)
    {
        crc = static_cast<uint16_t>((crc >> 8) ^ kCrc16Table[(crc ^ data[i]) & 0xffU]);
    }
    return static_cast<uint16_t>(~crc);
}

} // namespace

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

// ---------------------------------------------------------------- ICRC

InfinibandIcrc::InfinibandIcrc()
    : m_crc(0)
{
}

InfinibandIcrc::InfinibandIcrc(uint32_t crc)
    : m_crc(crc)
{
}

TypeId
InfinibandIcrc::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandIcrc")
                            .SetParent<Trailer>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandIcrc>();
    return tid;
}

TypeId
InfinibandIcrc::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandIcrc::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
InfinibandIcrc::Serialize(Buffer::Iterator end) const
{
    end.Prev(SIZE_BYTES);
    end.WriteHtolsbU32(m_crc); // little-endian, as the Ethernet FCS
}

uint32_t
InfinibandIcrc::Deserialize(Buffer::Iterator end)
{
    end.Prev(SIZE_BYTES);
    m_crc = end.ReadLsbtohU32();
    return SIZE_BYTES;
}

void
InfinibandIcrc::Print(std::ostream& os) const
{
    os << "ICRC=0x" << std::hex << std::setw(8) << std::setfill('0') << m_crc << std::dec
       << std::setfill(' ');
}

void
InfinibandIcrc::SetCrc(uint32_t crc)
{
    m_crc = crc;
}

uint32_t
InfinibandIcrc::GetCrc() const
{
    return m_crc;
}

uint32_t
InfinibandIcrc::Compute(const uint8_t* bytes, size_t length)
{
    NS_ABORT_MSG_IF(length < InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES,
                    "InfinibandIcrc: " << length << " bytes cannot hold LRH and BTH");
    std::vector<uint8_t> masked(bytes, bytes + length);
    masked[0] |= 0xf0; // LRH.VL
    const uint8_t lnh = masked[1] & 0x03;
    size_t bth = InfinibandLrh::SIZE_BYTES;
    if (lnh == InfinibandLrh::LNH_IBA_GLOBAL)
    {
        const size_t grh = InfinibandLrh::SIZE_BYTES;
        const size_t grhBytes = 40;
        NS_ABORT_MSG_IF(length < grh + grhBytes + InfinibandBth::SIZE_BYTES,
                        "InfinibandIcrc: " << length << " bytes cannot hold LRH, GRH and BTH");
        // Routers rewrite the LRH of a global packet: all of it is variant.
        std::fill(masked.begin(), masked.begin() + InfinibandLrh::SIZE_BYTES, 0xff);
        masked[grh] |= 0x0f;    // TClass high nibble
        masked[grh + 1] = 0xff; // TClass low nibble, FlowLabel
        masked[grh + 2] = 0xff;
        masked[grh + 3] = 0xff;
        masked[grh + 7] = 0xff; // HopLmt
        bth = grh + grhBytes;
    }
    else
    {
        NS_ABORT_MSG_IF(lnh != InfinibandLrh::LNH_IBA_LOCAL,
                        "InfinibandIcrc: LNH " << unsigned(lnh)
                                               << " packets carry no IBA transport and no ICRC");
    }
    masked[bth + 4] = 0xff; // BTH FECN, BECN and reserved bits (Annex A10)
    return Crc32Reflected(masked.data(), masked.size());
}

// ---------------------------------------------------------------- VCRC

InfinibandVcrc::InfinibandVcrc()
    : m_crc(0)
{
}

InfinibandVcrc::InfinibandVcrc(uint16_t crc)
    : m_crc(crc)
{
}

TypeId
InfinibandVcrc::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandVcrc")
                            .SetParent<Trailer>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandVcrc>();
    return tid;
}

TypeId
InfinibandVcrc::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandVcrc::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
InfinibandVcrc::Serialize(Buffer::Iterator end) const
{
    end.Prev(SIZE_BYTES);
    end.WriteHtolsbU16(m_crc); // little-endian, same bit order as the ICRC
}

uint32_t
InfinibandVcrc::Deserialize(Buffer::Iterator end)
{
    end.Prev(SIZE_BYTES);
    m_crc = end.ReadLsbtohU16();
    return SIZE_BYTES;
}

void
InfinibandVcrc::Print(std::ostream& os) const
{
    os << "VCRC=0x" << std::hex << std::setw(4) << std::setfill('0') << m_crc << std::dec
       << std::setfill(' ');
}

void
InfinibandVcrc::SetCrc(uint16_t crc)
{
    m_crc = crc;
}

uint16_t
InfinibandVcrc::GetCrc() const
{
    return m_crc;
}

uint16_t
InfinibandVcrc::Compute(const uint8_t* bytes, size_t length)
{
    return Crc16IbReflected(bytes, length);
}

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
    return Crc16IbReflected(bytes, sizeof(bytes));
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

// ---------------------------------------------------------------- helpers

void
InfinibandAddCrcs(Ptr<Packet> packet)
{
    std::vector<uint8_t> bytes(packet->GetSize() + InfinibandIcrc::SIZE_BYTES);
    packet->CopyData(bytes.data(), packet->GetSize());
    InfinibandIcrc icrc(InfinibandIcrc::Compute(bytes.data(), packet->GetSize()));
    packet->AddTrailer(icrc);
    packet->CopyData(bytes.data(), packet->GetSize());
    packet->AddTrailer(InfinibandVcrc(InfinibandVcrc::Compute(bytes.data(), bytes.size())));
}

bool
InfinibandCheckCrcs(Ptr<const Packet> packet)
{
    const uint32_t trailers = InfinibandIcrc::SIZE_BYTES + InfinibandVcrc::SIZE_BYTES;
    if (packet->GetSize() < InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES + trailers)
    {
        return false;
    }
    std::vector<uint8_t> bytes(packet->GetSize());
    packet->CopyData(bytes.data(), bytes.size());
    const size_t icrcAt = bytes.size() - trailers;
    const size_t vcrcAt = bytes.size() - InfinibandVcrc::SIZE_BYTES;
    const uint32_t icrc = bytes[icrcAt] | (bytes[icrcAt + 1] << 8) | (bytes[icrcAt + 2] << 16) |
                          (static_cast<uint32_t>(bytes[icrcAt + 3]) << 24);
    const uint16_t vcrc = static_cast<uint16_t>(bytes[vcrcAt] | (bytes[vcrcAt + 1] << 8));
    const uint8_t lnh = bytes[1] & 0x03;
    if (lnh != InfinibandLrh::LNH_IBA_LOCAL && lnh != InfinibandLrh::LNH_IBA_GLOBAL)
    {
        return false;
    }
    return InfinibandIcrc::Compute(bytes.data(), icrcAt) == icrc &&
           InfinibandVcrc::Compute(bytes.data(), vcrcAt) == vcrc;
}

} // namespace ns3
