/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/roce-transport-plane.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/transport-packet-tag.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceTransportPlane");

NS_OBJECT_ENSURE_REGISTERED(RoceTransportPlane);

TypeId
RoceTransportPlane::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceTransportPlane")
                            .SetParent<TransportPlane>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<RoceTransportPlane>();
    return tid;
}

RoceTransportPlane::RoceTransportPlane()
    : m_mtu(std::numeric_limits<uint32_t>::max()),
      m_burstPackets(std::numeric_limits<uint32_t>::max()),
      m_burstRoom(std::numeric_limits<uint64_t>::max())
{
    NS_LOG_FUNCTION(this);
}

void
RoceTransportPlane::NotifyConstructionCompleted()
{
    TransportPlane::NotifyConstructionCompleted();
    if (GetPlaneName() == "generic")
    {
        SetPlaneName("roce");
    }
}

void
RoceTransportPlane::AddRank(uint32_t rank, Ptr<RoceNetDevice> nic)
{
    NS_LOG_FUNCTION(this << rank << nic);
    NS_ABORT_MSG_IF(!nic, "RoceTransportPlane::AddRank: null NIC for rank " << rank);
    NS_ABORT_MSG_IF(HasRank(rank), "RoceTransportPlane: rank " << rank << " added twice");
    NS_ABORT_MSG_IF(m_rankOfNic.count(PeekPointer(nic)) != 0,
                    "RoceTransportPlane: rank " << rank << " shares a NIC (one per GPU)");
    if (m_nics.size() <= rank)
    {
        m_nics.resize(rank + 1);
    }
    m_nics[rank] = nic;
    m_rankOfNic[PeekPointer(nic)] = rank;
    m_mtu = std::min(m_mtu, nic->GetRoceMtu());
    m_burstPackets = std::min(m_burstPackets, nic->GetMaxBurstPackets());
    if (Ptr<CreditLinkNetDevice> peer = nic->GetPeer())
    {
        constexpr uint32_t framing = RoceFraming::HEADER_BYTES + RoceFraming::TRAILER_BYTES;
        for (uint32_t vc = 0; vc < peer->GetNumVcs(); ++vc)
        {
            const uint64_t buffer = peer->GetReceiveBufferBytes(vc);
            m_burstRoom = std::min<uint64_t>(m_burstRoom, buffer > framing ? buffer - framing : 0);
        }
    }
    nic->SetPacketTxReadyCallback(MakeCallback(&RoceTransportPlane::Ready, this));
    nic->SetPacketReceivedCallback(MakeCallback(&RoceTransportPlane::Receive, this));
}

Ptr<RoceNetDevice>
RoceTransportPlane::GetDevice(uint32_t rank) const
{
    return HasRank(rank) ? m_nics[rank] : nullptr;
}

bool
RoceTransportPlane::HasRank(uint32_t rank) const
{
    return rank < m_nics.size() && m_nics[rank];
}

bool
RoceTransportPlane::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    return srcRank != dstRank && HasRank(srcRank) && HasRank(dstRank);
}

uint32_t
RoceTransportPlane::GetMaxPayloadBytes() const
{
    NS_ABORT_MSG_IF(m_rankOfNic.empty(), "RoceTransportPlane: no rank added");
    return m_mtu;
}

uint32_t
RoceTransportPlane::GetMaxBurstBytes() const
{
    const uint32_t mtu = GetMaxPayloadBytes();
    const uint64_t fits = std::max<uint64_t>(1, m_burstRoom / mtu);
    return mtu * static_cast<uint32_t>(std::min<uint64_t>(m_burstPackets, fits));
}

uint32_t
RoceTransportPlane::GetPacketOverheadBytes() const
{
    return RoceFraming::HEADER_BYTES + RoceFraming::TRAILER_BYTES + RoceFraming::FRAMING_BYTES;
}

int64_t
RoceTransportPlane::GetNodeId(uint32_t rank) const
{
    return HasRank(rank) ? static_cast<int64_t>(m_nics[rank]->GetNode()->GetId()) : -1;
}

bool
RoceTransportPlane::Inject(uint32_t srcRank,
                           uint32_t dstRank,
                           uint32_t payloadBytes,
                           const TransportTag& tag)
{
    Ptr<Packet> p = Create<Packet>(payloadBytes);
    AddTransportTags(p, srcRank, dstRank, tag);
    // One QP per (destination, channel): the channel's own UDP source port and rate.
    return m_nics[srcRank]->SendPacket(p, m_nics[dstRank]->GetHostId(), tag.channel);
}

void
RoceTransportPlane::Ready(Ptr<RoceNetDevice> nic)
{
    NotifyTxReady(m_rankOfNic.at(PeekPointer(nic)));
}

void
RoceTransportPlane::Receive(uint32_t srcHost, Ptr<Packet> packet)
{
    TransportPacketTag t;
    const bool found = PeekTransportTags(packet, t);
    NS_ABORT_MSG_IF(!found, "RoceTransportPlane: packet without TransportPacketTag");
    NotifyDelivered(t.srcRank, t.dstRank, packet->GetSize(), t.tag);
}

void
RoceTransportPlane::DoDispose()
{
    for (auto& nic : m_nics)
    {
        if (nic)
        {
            nic->SetPacketTxReadyCallback(RoceNetDevice::PacketTxReadyCallback());
            nic->SetPacketReceivedCallback(RoceNetDevice::PacketReceivedCallback());
        }
    }
    m_nics.clear();
    m_rankOfNic.clear();
    TransportPlane::DoDispose();
}

double
RoceTransportPlane::GetLineRate_gbyte_per_s(uint32_t rank) const
{
    if (!HasRank(rank))
    {
        return 0;
    }
    const double payload = GetMaxPayloadBytes();
    const double share = payload / (payload + GetPacketOverheadBytes());
    return static_cast<double>(m_nics[rank]->GetClock().GetDataRateBps()) * share / 8e9;
}

} // namespace ns3
