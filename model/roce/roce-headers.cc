/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "roce-headers.h"

#include "ns3/abort.h"
#include "ns3/ethernet-header.h"
#include "ns3/ethernet-trailer.h"
#include "ns3/infiniband-crc.h"
#include "ns3/ipv4-header.h"
#include "ns3/udp-header.h"

#include <vector>

namespace ns3
{

namespace
{
constexpr uint32_t kFabricBase = 0x0A000000; // 10.0.0.0
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint8_t kProtocolUdp = 17;
constexpr uint8_t kTtl = 64;
} // namespace

Ipv4Address
RoceHostAddress(uint32_t host)
{
    return Ipv4Address(kFabricBase + host + 1);
}

uint32_t
RoceHostOf(uint32_t ipv4)
{
    return ipv4 - kFabricBase - 1;
}

Mac48Address
RoceHostMac(uint32_t host)
{
    uint8_t mac[6] = {0x02,
                      0,
                      0,
                      static_cast<uint8_t>(host >> 16),
                      static_cast<uint8_t>(host >> 8),
                      static_cast<uint8_t>(host)};
    Mac48Address a;
    a.CopyFrom(mac);
    return a;
}

bool
RocePeekFlow(Ptr<const Packet> packet, RoceFlowKey& key)
{
    uint8_t b[RoceFraming::ROUTING_BYTES];
    if (packet->GetSize() < sizeof(b) || packet->CopyData(b, sizeof(b)) != sizeof(b))
    {
        return false;
    }
    constexpr uint32_t ip = RoceFraming::ETHERNET_BYTES;
    if ((b[12] << 8 | b[13]) != kEtherTypeIpv4)
    {
        return false;
    }
    auto be32 = [&](uint32_t i) {
        return static_cast<uint32_t>(b[i]) << 24 | static_cast<uint32_t>(b[i + 1]) << 16 |
               static_cast<uint32_t>(b[i + 2]) << 8 | b[i + 3];
    };
    constexpr uint32_t udp = ip + RoceFraming::IPV4_BYTES;
    key.ecn = b[ip + 1] & 0x03;
    key.protocol = b[ip + 9];
    key.srcIp = be32(ip + 12);
    key.dstIp = be32(ip + 16);
    key.srcPort = static_cast<uint16_t>(b[udp] << 8 | b[udp + 1]);
    key.dstPort = static_cast<uint16_t>(b[udp + 2] << 8 | b[udp + 3]);
    return true;
}

uint32_t
RoceFiveTupleHash(const RoceFlowKey& key, uint32_t seed)
{
    uint32_t h = 2166136261u ^ seed;
    auto mix = [&h](uint32_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
        {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 16777619u;
        }
    };
    mix(key.srcIp, 4);
    mix(key.dstIp, 4);
    mix(key.protocol, 1);
    mix(key.srcPort, 2);
    mix(key.dstPort, 2);
    // FNV's low bits are weak for small moduli: fold the high half in.
    return h ^ (h >> 16);
}

Ptr<Packet>
RoceBuildPacket(Ptr<const Packet> payload,
                uint32_t srcHost,
                uint32_t dstHost,
                uint16_t udpSrcPort,
                uint8_t dscp,
                uint8_t ecn,
                const InfinibandBth& bth,
                bool computeIcrc)
{
    Ptr<Packet> p = payload->Copy();
    p->AddHeader(bth);
    UdpHeader udp;
    udp.SetSourcePort(udpSrcPort);
    udp.SetDestinationPort(RoceFraming::UDP_PORT);
    p->AddHeader(udp);
    Ipv4Header ip;
    ip.SetSource(RoceHostAddress(srcHost));
    ip.SetDestination(RoceHostAddress(dstHost));
    ip.SetProtocol(kProtocolUdp);
    ip.SetTtl(kTtl);
    ip.SetDscp(static_cast<Ipv4Header::DscpType>(dscp));
    ip.SetEcn(static_cast<Ipv4Header::EcnType>(ecn));
    ip.SetPayloadSize(p->GetSize() + InfinibandIcrc::SIZE_BYTES);
    ip.SetDontFragment();
    ip.EnableChecksum();
    p->AddHeader(ip);
    uint32_t icrc = 0;
    if (computeIcrc)
    {
        std::vector<uint8_t> bytes(p->GetSize());
        p->CopyData(bytes.data(), bytes.size());
        icrc = InfinibandIcrc::ComputeRoceV2(bytes.data(), bytes.size());
    }
    p->AddTrailer(InfinibandIcrc(icrc));
    EthernetHeader eth(false);
    eth.SetSource(RoceHostMac(srcHost));
    eth.SetDestination(RoceHostMac(dstHost));
    eth.SetLengthType(kEtherTypeIpv4);
    p->AddHeader(eth);
    EthernetTrailer fcs;
    p->AddTrailer(fcs);
    return p;
}

void
RoceMarkCe(Ptr<Packet> packet)
{
    EthernetHeader eth(false);
    packet->RemoveHeader(eth);
    Ipv4Header ip;
    ip.EnableChecksum();
    packet->RemoveHeader(ip);
    ip.SetEcn(Ipv4Header::ECN_CE);
    packet->AddHeader(ip);
    packet->AddHeader(eth);
}

void
RoceStrip(Ptr<Packet> packet, RoceFlowKey& key, InfinibandBth& bth)
{
    const bool ok = RocePeekFlow(packet, key);
    NS_ABORT_MSG_IF(!ok, "RoceStrip: not a RoCEv2 packet");
    EthernetHeader eth(false);
    packet->RemoveHeader(eth);
    EthernetTrailer fcs;
    packet->RemoveTrailer(fcs);
    Ipv4Header ip;
    packet->RemoveHeader(ip);
    UdpHeader udp;
    packet->RemoveHeader(udp);
    packet->RemoveHeader(bth);
    InfinibandIcrc icrc;
    packet->RemoveTrailer(icrc);
}

} // namespace ns3
