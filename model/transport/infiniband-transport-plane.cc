/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-transport-plane.h"

#include "ns3/abort.h"
#include "ns3/infiniband-headers.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/transport-packet-tag.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandTransportPlane");
NS_OBJECT_ENSURE_REGISTERED(InfinibandTransportPlane);

TypeId
InfinibandTransportPlane::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandTransportPlane")
            .SetParent<TransportPlane>()
            .SetGroupName("AiFabric")
            .AddConstructor<InfinibandTransportPlane>()
            .AddAttribute("ServiceLevel",
                          "SL of the plane's packets (the HCA's SL->VL table picks the VL)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&InfinibandTransportPlane::m_sl),
                          MakeUintegerChecker<uint8_t>(0, InfinibandNetDevice::NUM_SLS - 1))
            .AddAttribute("Qp",
                          "Destination QP of the plane's RC packets; the plane receives on it "
                          "at every HCA (not 0/1, the SMI/GSI QPs, nor an HCA's LocalQp)",
                          UintegerValue(0x4754),
                          MakeUintegerAccessor(&InfinibandTransportPlane::m_qp),
                          MakeUintegerChecker<uint32_t>(2, 0xffffff));
    return tid;
}

InfinibandTransportPlane::InfinibandTransportPlane()
    : m_sl(0),
      m_qp(0x4754),
      m_mtu(std::numeric_limits<uint32_t>::max()),
      m_burstPackets(std::numeric_limits<uint32_t>::max()),
      m_burstRoom(std::numeric_limits<uint64_t>::max())
{
    NS_LOG_FUNCTION(this);
}

void
InfinibandTransportPlane::NotifyConstructionCompleted()
{
    TransportPlane::NotifyConstructionCompleted();
    if (GetPlaneName() == "generic")
    {
        SetPlaneName("infiniband");
    }
}

void
InfinibandTransportPlane::AddRank(uint32_t rank, Ptr<InfinibandNetDevice> hca)
{
    NS_LOG_FUNCTION(this << rank << hca);
    NS_ABORT_MSG_IF(!hca, "InfinibandTransportPlane::AddRank: null HCA for rank " << rank);
    NS_ABORT_MSG_IF(HasRank(rank), "InfinibandTransportPlane: rank " << rank << " added twice");
    NS_ABORT_MSG_IF(hca->GetLid() == 0,
                    "InfinibandTransportPlane: HCA of rank " << rank << " has no LID");
    UintegerValue localQp;
    hca->GetAttribute("LocalQp", localQp);
    NS_ABORT_MSG_IF(localQp.Get() == m_qp,
                    "InfinibandTransportPlane: Qp " << m_qp << " is the HCA's LocalQp");
    if (m_ranks.size() <= rank)
    {
        m_ranks.resize(rank + 1);
    }
    m_mtu = std::min(m_mtu, hca->GetIbMtu());
    m_burstPackets = std::min(m_burstPackets, hca->GetMaxBurstPackets());
    // A burst must fit the HCA's transmit queue and its peer's receive buffer on every VL.
    UintegerValue queue;
    hca->GetAttribute("TxQueueBytes", queue);
    uint64_t room = queue.Get();
    for (uint32_t vl = 0; hca->GetPeer() && vl < hca->GetNumVcs(); ++vl)
    {
        room = std::min<uint64_t>(room, hca->GetPeer()->GetReceiveBufferBytes(vl));
    }
    const uint64_t headers = InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES +
                             InfinibandIcrc::SIZE_BYTES + InfinibandVcrc::SIZE_BYTES;
    m_burstRoom = std::min<uint64_t>(m_burstRoom, room > headers ? room - headers : 0);
    DeviceRanks& shared = m_ranksOfDevice[PeekPointer(hca)]; // nodes: stable addresses
    std::vector<uint32_t>& ranks = shared.ranks;
    m_ranks[rank] = RankEntry{hca, hca->GetLid(), &shared, static_cast<uint32_t>(ranks.size())};
    if (ranks.empty())
    {
        hca->SetPacketTxReadyCallback(
            m_qp,
            InfinibandNetDevice::PacketTxReadyCallback(
                [this, &shared](Ptr<InfinibandNetDevice>) { DeviceReady(shared); }));
        hca->SetPacketReceivedCallback(m_qp,
                                       MakeCallback(&InfinibandTransportPlane::Receive, this));
    }
    ranks.push_back(rank);
}

void
InfinibandTransportPlane::AddHosts(const InfinibandFabric& fabric,
                                   const std::vector<uint32_t>& rankOfHost)
{
    NS_ABORT_MSG_IF(rankOfHost.size() > fabric.hosts.GetN(),
                    "InfinibandTransportPlane::AddHosts: " << rankOfHost.size() << " ranks for "
                                                           << fabric.hosts.GetN() << " hosts");
    for (uint32_t h = 0; h < rankOfHost.size(); ++h)
    {
        Ptr<InfinibandNetDevice> hca = fabric.GetHostDevice(h);
        NS_ABORT_MSG_IF(h < fabric.hostLids.size() && hca->GetLid() != fabric.hostLids[h],
                        "InfinibandTransportPlane: host " << h << " LID mismatch");
        AddRank(rankOfHost[h], hca);
    }
}

Ptr<InfinibandNetDevice>
InfinibandTransportPlane::GetDevice(uint32_t rank) const
{
    return HasRank(rank) ? m_ranks[rank].device : nullptr;
}

bool
InfinibandTransportPlane::HasRank(uint32_t rank) const
{
    return rank < m_ranks.size() && m_ranks[rank].device;
}

bool
InfinibandTransportPlane::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    return srcRank != dstRank && HasRank(srcRank) && HasRank(dstRank);
}

uint32_t
InfinibandTransportPlane::GetMaxPayloadBytes() const
{
    NS_ABORT_MSG_IF(m_ranksOfDevice.empty(), "InfinibandTransportPlane: no rank added");
    return m_mtu;
}

uint32_t
InfinibandTransportPlane::GetMaxBurstBytes() const
{
    const uint32_t mtu = GetMaxPayloadBytes();
    const uint64_t fits = std::max<uint64_t>(1, m_burstRoom / mtu);
    return mtu * static_cast<uint32_t>(std::min<uint64_t>(m_burstPackets, fits));
}

uint32_t
InfinibandTransportPlane::GetPacketOverheadBytes() const
{
    uint32_t framing = 0;
    if (!m_ranksOfDevice.empty())
    {
        UintegerValue v;
        m_ranks[m_ranksOfDevice.begin()->second.ranks.front()].device->GetAttribute("OverheadBytes",
                                                                                    v);
        framing = static_cast<uint32_t>(v.Get());
    }
    // A full packet (MTU, a multiple of 4) has no pad.
    return InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES + InfinibandIcrc::SIZE_BYTES +
           InfinibandVcrc::SIZE_BYTES + framing;
}

int64_t
InfinibandTransportPlane::GetNodeId(uint32_t rank) const
{
    return HasRank(rank) ? static_cast<int64_t>(m_ranks[rank].device->GetNode()->GetId()) : -1;
}

bool
InfinibandTransportPlane::Inject(uint32_t srcRank,
                                 uint32_t dstRank,
                                 uint32_t payloadBytes,
                                 const TransportTag& tag)
{
    Ptr<Packet> p = Create<Packet>(payloadBytes);
    AddTransportTags(p, srcRank, dstRank, tag);
    const RankEntry& src = m_ranks[srcRank];
    if (!src.device->SendPacket(p, m_ranks[dstRank].lid, m_sl, m_qp))
    {
        NS_LOG_LOGIC("rank " << srcRank << ": HCA refused the packet to rank " << dstRank);
        return false;
    }
    // Ranks sharing the HCA: the next wake-up starts after the one that got in.
    src.shared->next = src.slot + 1 == src.shared->ranks.size() ? 0 : src.slot + 1;
    return true;
}

void
InfinibandTransportPlane::DeviceReady(const DeviceRanks& d)
{
    // The first woken rank takes the room, so start after the last one that got in.
    const auto n = static_cast<uint32_t>(d.ranks.size());
    const uint32_t first = d.next;
    NS_LOG_LOGIC(n << " ranks of the HCA ready, from rank " << d.ranks[first]);
    for (uint32_t i = 0; i < n; ++i)
    {
        NotifyTxReady(d.ranks[(first + i) % n]);
    }
}

void
InfinibandTransportPlane::Receive(uint16_t slid, Ptr<Packet> packet)
{
    TransportPacketTag t;
    const bool found = PeekTransportTags(packet, t);
    NS_ABORT_MSG_IF(!found, "InfinibandTransportPlane: packet without TransportPacketTag");
    NS_ASSERT_MSG(HasRank(t.srcRank) && m_ranks[t.srcRank].lid == slid,
                  "rank " << t.srcRank << " does not have LID " << slid);
    NotifyDelivered(t.srcRank, t.dstRank, packet->GetSize(), t.tag);
}

void
InfinibandTransportPlane::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& r : m_ranks)
    {
        if (r.device)
        {
            r.device->SetPacketTxReadyCallback(m_qp, InfinibandNetDevice::PacketTxReadyCallback());
            r.device->SetPacketReceivedCallback(m_qp,
                                                InfinibandNetDevice::PacketReceivedCallback());
        }
    }
    m_ranks.clear();
    m_ranksOfDevice.clear();
    TransportPlane::DoDispose();
}

double
InfinibandTransportPlane::GetLineRate_gbyte_per_s(uint32_t rank) const
{
    if (rank >= m_ranks.size() || !m_ranks[rank].device)
    {
        return 0;
    }
    Ptr<InfinibandNetDevice> dev = m_ranks[rank].device;
    const double payload = GetMaxPayloadBytes();
    const double share = payload / (payload + GetPacketOverheadBytes());
    return dev->GetDataRate().GetBitRate() * dev->GetEncodingEfficiency() * share / 8e9;
}

} // namespace ns3
