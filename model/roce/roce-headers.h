/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_HEADERS_H
#define AI_FABRIC_ROCE_HEADERS_H

#include "ns3/infiniband-headers.h"
#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/packet.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * RoCEv2 framing: Ethernet II | IPv4 | UDP (destination port 4791) | InfiniBand BTH |
 * payload | ICRC | Ethernet FCS (IBA Annex A17).  Host h of a RoCE fabric has IPv4
 * 10.0.0.0 + h + 1 and MAC 02:00:00:hh:hh:hh.  The UDP source port is the QP's entropy
 * (switches hash it into ECMP); the UDP checksum is 0, as RoCEv2 allows.
 */
struct RoceFraming
{
    static constexpr uint16_t UDP_PORT = 4791;
    static constexpr uint32_t ETHERNET_BYTES = 14;
    static constexpr uint32_t IPV4_BYTES = 20;
    static constexpr uint32_t UDP_BYTES = 8;
    static constexpr uint32_t HEADER_BYTES =
        ETHERNET_BYTES + IPV4_BYTES + UDP_BYTES + InfinibandBth::SIZE_BYTES; // 54
    static constexpr uint32_t FCS_BYTES = 4;
    static constexpr uint32_t TRAILER_BYTES = InfinibandIcrc::SIZE_BYTES + FCS_BYTES; // 8
    /// Preamble + SFD (8) and the minimum inter-frame gap (12): wire time, not buffer.
    static constexpr uint32_t FRAMING_BYTES = 20;
    /// Bytes a switch needs to route and hash: through the UDP header.
    static constexpr uint32_t ROUTING_BYTES = ETHERNET_BYTES + IPV4_BYTES + UDP_BYTES;
    /// Reserved payload of a CNP (IBA Annex A17.9.3).
    static constexpr uint32_t CNP_PAYLOAD_BYTES = 16;

    /// IPv4 ECN codepoints (RFC 3168).
    enum Ecn : uint8_t
    {
        NOT_ECT = 0,
        ECT1 = 1,
        ECT0 = 2,
        CE = 3,
    };
};

/// What a switch or NIC reads of a RoCEv2 packet without taking it apart.
struct RoceFlowKey
{
    uint32_t srcIp{0};
    uint32_t dstIp{0};
    uint16_t srcPort{0};
    uint16_t dstPort{0};
    uint8_t protocol{0};
    uint8_t ecn{0};
};

Ipv4Address RoceHostAddress(uint32_t host);
/// Host index of a RoCE fabric address (RoceHostAddress's inverse).
uint32_t RoceHostOf(uint32_t ipv4);
Mac48Address RoceHostMac(uint32_t host);

/// Reads the five-tuple and ECN field of \p packet (which starts with the Ethernet
/// header); false when it is too short or not IPv4.
bool RocePeekFlow(Ptr<const Packet> packet, RoceFlowKey& key);
/// Deterministic five-tuple hash (FNV-1a over the tuple and \p seed), as switches hash
/// for ECMP; \p seed differs per switch so that tiers do not correlate.
uint32_t RoceFiveTupleHash(const RoceFlowKey& key, uint32_t seed);

/// Wraps \p payload into a RoCEv2 packet (everything above, ICRC computed when
/// \p computeIcrc, else zero; FCS zero).
Ptr<Packet> RoceBuildPacket(Ptr<const Packet> payload,
                            uint32_t srcHost,
                            uint32_t dstHost,
                            uint16_t udpSrcPort,
                            uint8_t dscp,
                            uint8_t ecn,
                            const InfinibandBth& bth,
                            bool computeIcrc);
/// Rewrites the IPv4 ECN field of \p packet (the only reference) to CE, checksum too.
void RoceMarkCe(Ptr<Packet> packet);
/// Removes the framing: \p packet becomes the payload; \p key and \p bth are filled.
void RoceStrip(Ptr<Packet> packet, RoceFlowKey& key, InfinibandBth& bth);

} // namespace ns3

#endif
