/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-crc.h"

#include "ns3/abort.h"
#include "ns3/infiniband-headers.h"
#include "ns3/log.h"

#include <algorithm>
#include <array>
#include <iomanip>
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandCrc");

NS_OBJECT_ENSURE_REGISTERED(InfinibandIcrc);
NS_OBJECT_ENSURE_REGISTERED(InfinibandVcrc);

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

uint32_t
InfinibandIcrc::ComputeRoceV2(const uint8_t* bytes, size_t length)
{
    constexpr size_t ipv4 = 20;
    constexpr size_t udp = 8;
    NS_ABORT_MSG_IF(length < ipv4 + udp + InfinibandBth::SIZE_BYTES,
                    "InfinibandIcrc: " << length << " bytes cannot hold IPv4, UDP and BTH");
    std::vector<uint8_t> masked(8, 0xff);
    masked.insert(masked.end(), bytes, bytes + length);
    const size_t ip = 8;
    masked[ip + 1] = 0xff;  // TOS: DSCP and ECN
    masked[ip + 8] = 0xff;  // TTL
    masked[ip + 10] = 0xff; // header checksum
    masked[ip + 11] = 0xff;
    masked[ip + ipv4 + 6] = 0xff; // UDP checksum
    masked[ip + ipv4 + 7] = 0xff;
    masked[ip + ipv4 + udp + 4] = 0xff; // BTH FECN, BECN and reserved bits
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
