/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_PCAP_WRITER_H
#define AI_FABRIC_INFINIBAND_PCAP_WRITER_H

#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/pcap-file.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Writes InfiniBand packets the way Mellanox ibdump stores captures, which
 * Wireshark/tshark decode down to LRH/BTH: pcap link type ERF (197), each
 * record a 16-byte ERF header followed by the packet from the LRH on (with
 * ICRC and VCRC).  Debian 12's tshark does not read link type 247.
 *
 * ERF header (Wireshark wiretap/erf.h, Endace ERF spec): timestamp 64-bit
 * little-endian 32.32 fixed-point seconds; type (21 InfiniBand, 25 InfiniBand
 * link); flags (bits 0-1 interface, bit 2 varying length); then big-endian
 * rlen (record length incl. header), lctr (loss counter), wlen (wire length).
 */
class InfinibandPcapWriter : public SimpleRefCount<InfinibandPcapWriter>
{
  public:
    static constexpr uint32_t LINKTYPE_ERF = 197;
    static constexpr uint8_t ERF_TYPE_INFINIBAND = 21;
    static constexpr uint8_t ERF_TYPE_INFINIBAND_LINK = 25;
    static constexpr uint32_t ERF_HEADER_BYTES = 16;

    InfinibandPcapWriter() = default;
    ~InfinibandPcapWriter();

    /// Creates (truncates) \p filename; aborts if it cannot be written.
    void Open(const std::string& filename);
    bool IsOpen() const;
    void Close();

    /// One data packet starting with the LRH, at simulation time \p t;
    /// \p interface (0..3) tells ports apart in the ERF flags.
    void Write(Time t, Ptr<const Packet> packet, uint8_t interface = 0);
    /// One 6-byte link packet (flow control), ERF type InfiniBand link.  ibdump
    /// never sees these (the link layer consumes them), and Debian 12's
    /// tshark 4.0 reports 6-byte link records as malformed (its link dissector
    /// reads past them; it decodes the fields when 2 more bytes follow), so
    /// device tracing should leave them out by default.
    void WriteLinkPacket(Time t, Ptr<const Packet> packet, uint8_t interface = 0);

    /// The 16 bytes of an ERF record header.
    static std::vector<uint8_t> ErfHeader(Time t,
                                          uint8_t type,
                                          uint8_t interface,
                                          uint16_t wireBytes);

  private:
    void WriteRecord(Time t, uint8_t type, Ptr<const Packet> packet, uint8_t interface);

    PcapFile m_file;
    bool m_open = false;
};

} // namespace ns3

#endif
