/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-pcap-writer.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandPcapWriter");

InfinibandPcapWriter::~InfinibandPcapWriter()
{
    Close();
}

void
InfinibandPcapWriter::Open(const std::string& filename)
{
    NS_LOG_FUNCTION(this << filename);
    Close();
    m_file.Open(filename, std::ios::out | std::ios::binary);
    NS_ABORT_MSG_IF(m_file.Fail(), "InfinibandPcapWriter: cannot create " << filename);
    // 65535: a 4 KiB-MTU packet plus ERF header fits with room to spare.
    m_file.Init(LINKTYPE_ERF, 65535, 0, false, false);
    NS_ABORT_MSG_IF(m_file.Fail(), "InfinibandPcapWriter: cannot write " << filename);
    m_open = true;
}

bool
InfinibandPcapWriter::IsOpen() const
{
    return m_open;
}

void
InfinibandPcapWriter::Close()
{
    NS_LOG_FUNCTION(this);
    if (m_open)
    {
        m_file.Close();
        m_open = false;
    }
}

std::vector<uint8_t>
InfinibandPcapWriter::ErfHeader(Time t, uint8_t type, uint8_t interface, uint16_t wireBytes)
{
    NS_ABORT_MSG_IF(interface > 3,
                    "InfinibandPcapWriter: ERF has 2 interface bits, not " << unsigned(interface));
    NS_ABORT_MSG_IF(t.IsStrictlyNegative(), "InfinibandPcapWriter: negative time " << t);
    const uint64_t ns = static_cast<uint64_t>(t.GetNanoSeconds());
    const uint64_t seconds = ns / 1000000000ULL;
    // Binary fraction of a second: (ns mod 1e9) * 2^32 / 1e9 fits in 64 bits.
    const uint64_t fraction = ((ns % 1000000000ULL) << 32) / 1000000000ULL;
    const uint64_t ts = (seconds << 32) | fraction;
    const uint16_t rlen = static_cast<uint16_t>(ERF_HEADER_BYTES + wireBytes);
    std::vector<uint8_t> h(ERF_HEADER_BYTES);
    for (int i = 0; i < 8; ++i)
    {
        h[i] = static_cast<uint8_t>(ts >> (8 * i)); // little-endian
    }
    h[8] = type;
    h[9] = static_cast<uint8_t>(0x04 | interface); // varying-length record
    h[10] = static_cast<uint8_t>(rlen >> 8);       // big-endian from here on
    h[11] = static_cast<uint8_t>(rlen & 0xff);
    h[12] = 0; // lctr: no loss
    h[13] = 0;
    h[14] = static_cast<uint8_t>(wireBytes >> 8);
    h[15] = static_cast<uint8_t>(wireBytes & 0xff);
    return h;
}

void
InfinibandPcapWriter::WriteRecord(Time t, uint8_t type, Ptr<const Packet> packet, uint8_t interface)
{
    NS_ABORT_MSG_IF(!m_open, "InfinibandPcapWriter: Write before Open");
    const uint32_t size = packet->GetSize();
    NS_ABORT_MSG_IF(size + ERF_HEADER_BYTES > 0xffff,
                    "InfinibandPcapWriter: " << size << "-byte packet exceeds an ERF record");
    std::vector<uint8_t> record = ErfHeader(t, type, interface, static_cast<uint16_t>(size));
    record.resize(ERF_HEADER_BYTES + size);
    packet->CopyData(record.data() + ERF_HEADER_BYTES, size);
    const uint64_t us = static_cast<uint64_t>(t.GetMicroSeconds());
    m_file.Write(static_cast<uint32_t>(us / 1000000),
                 static_cast<uint32_t>(us % 1000000),
                 record.data(),
                 static_cast<uint32_t>(record.size()));
    NS_ABORT_MSG_IF(m_file.Fail(), "InfinibandPcapWriter: write failed");
}

void
InfinibandPcapWriter::Write(Time t, Ptr<const Packet> packet, uint8_t interface)
{
    WriteRecord(t, ERF_TYPE_INFINIBAND, packet, interface);
}

void
InfinibandPcapWriter::WriteLinkPacket(Time t, Ptr<const Packet> packet, uint8_t interface)
{
    WriteRecord(t, ERF_TYPE_INFINIBAND_LINK, packet, interface);
}

} // namespace ns3
