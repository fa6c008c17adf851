/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/credit-link-plane.h"

#include "ns3/abort.h"
#include "ns3/credit-link-header.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/transport-header.h"
#include "ns3/transport-packet-tag.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreditLinkPlane");
NS_OBJECT_ENSURE_REGISTERED(CreditLinkPlane);

TypeId
CreditLinkPlane::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CreditLinkPlane")
            .SetParent<TransportPlane>()
            .SetGroupName("AiFabric")
            .AddConstructor<CreditLinkPlane>()
            .AddAttribute("MaxPayloadBytes",
                          "Message payload per packet (segment size); headers come on top "
                          "and must fit the device Mtu",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&CreditLinkPlane::m_maxPayloadBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Vc",
                          "Virtual channel of the transport's packets",
                          UintegerValue(0),
                          MakeUintegerAccessor(&CreditLinkPlane::m_vc),
                          MakeUintegerChecker<uint32_t>(0, 31))
            .AddAttribute("Protocol",
                          "CreditLinkHeader protocol number the receive handler is bound to",
                          UintegerValue(0x4754),
                          MakeUintegerAccessor(&CreditLinkPlane::m_protocol),
                          MakeUintegerChecker<uint16_t>());
    return tid;
}

CreditLinkPlane::CreditLinkPlane()
    : m_maxPayloadBytes(4096),
      m_vc(0),
      m_protocol(0x4754)
{
    NS_LOG_FUNCTION(this);
}

void
CreditLinkPlane::AddRank(uint32_t rank, Ptr<CreditLinkNetDevice> device)
{
    AddRank(rank, device, rank);
}

void
CreditLinkPlane::AddRank(uint32_t rank, Ptr<CreditLinkNetDevice> device, uint32_t destinationId)
{
    NS_LOG_FUNCTION(this << rank << device << destinationId);
    NS_ABORT_MSG_IF(!device, "CreditLinkPlane::AddRank: null device for rank " << rank);
    NS_ABORT_MSG_IF(HasRank(rank), "CreditLinkPlane::AddRank: rank " << rank << " added twice");
    NS_ABORT_MSG_IF(m_rankOfDevice.count(PeekPointer(device)),
                    "CreditLinkPlane::AddRank: device of rank " << rank
                                                                << " already serves a rank");
    NS_ABORT_MSG_IF(!device->GetNode(), "CreditLinkPlane::AddRank: device not on a node");
    if (m_ranks.size() <= rank)
    {
        m_ranks.resize(rank + 1);
    }
    m_ranks[rank] = RankEntry{device, destinationId};
    m_rankOfDevice[PeekPointer(device)] = rank;
    device->SetTxReadyCallback(CreditLinkNetDevice::TxReadyCallback(
        [this, rank](Ptr<CreditLinkNetDevice>, uint32_t vc) { DeviceReady(rank, vc); }));
    device->GetNode()->RegisterProtocolHandler(MakeCallback(&CreditLinkPlane::Receive, this),
                                               m_protocol,
                                               device);
}

Ptr<CreditLinkNetDevice>
CreditLinkPlane::GetDevice(uint32_t rank) const
{
    return HasRank(rank) ? m_ranks[rank].device : nullptr;
}

bool
CreditLinkPlane::HasRank(uint32_t rank) const
{
    return rank < m_ranks.size() && m_ranks[rank].device;
}

bool
CreditLinkPlane::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    return srcRank != dstRank && HasRank(srcRank) && HasRank(dstRank);
}

uint32_t
CreditLinkPlane::GetMaxPayloadBytes() const
{
    return m_maxPayloadBytes;
}

bool
CreditLinkPlane::Inject(uint32_t srcRank,
                        uint32_t dstRank,
                        uint32_t payloadBytes,
                        const TransportTag& tag)
{
    const RankEntry& src = m_ranks[srcRank];
    Ptr<Packet> p = Create<Packet>(payloadBytes);
    AddTransportMessageTag(p, tag);
    p->AddHeader(TransportHeader(tag.messageId,
                                 srcRank,
                                 dstRank,
                                 tag.sequence | (tag.remote ? kTransportRemoteBit : 0)));
    p->AddHeader(CreditLinkHeader(m_ranks[dstRank].destinationId, m_vc, m_protocol));
    const bool accepted = src.device->SendOnVc(p, m_vc);
    if (!accepted)
    {
        NS_LOG_LOGIC("rank " << srcRank << ": device queue full, packet to rank " << dstRank
                             << " refused");
    }
    return accepted;
}

int64_t
CreditLinkPlane::GetNodeId(uint32_t rank) const
{
    return HasRank(rank) ? static_cast<int64_t>(m_ranks[rank].device->GetNode()->GetId()) : -1;
}

uint32_t
CreditLinkPlane::GetPacketOverheadBytes() const
{
    uint32_t linkOverhead = 0;
    for (const auto& r : m_ranks)
    {
        if (r.device)
        {
            UintegerValue v;
            r.device->GetAttribute("OverheadBytes", v);
            linkOverhead = v.Get();
            break;
        }
    }
    return CreditLinkHeader::SIZE_BYTES + TransportHeader::SIZE_BYTES + linkOverhead;
}

void
CreditLinkPlane::DeviceReady(uint32_t rank, uint32_t vc)
{
    if (vc == m_vc)
    {
        NS_LOG_LOGIC("rank " << rank << " ready: its device has room on VC " << vc);
        NotifyTxReady(rank);
    }
}

void
CreditLinkPlane::Receive(Ptr<NetDevice> device,
                         Ptr<const Packet> packet,
                         uint16_t protocol,
                         const Address& from,
                         const Address& to,
                         NetDevice::PacketType type)
{
    Ptr<Packet> p = packet->Copy();
    CreditLinkHeader link;
    p->RemoveHeader(link);
    TransportHeader th;
    p->RemoveHeader(th);
    NS_ASSERT_MSG(HasRank(th.GetDstRank()) && m_ranks[th.GetDstRank()].device == device,
                  "packet for rank " << th.GetDstRank() << " arrived at another device");
    TransportTag tag{th.GetMessageId(), th.GetSequence() & ~kTransportRemoteBit};
    if (th.GetSequence() & kTransportRemoteBit)
    {
        PeekTransportMessageTag(p, tag);
    }
    NotifyDelivered(th.GetSrcRank(), th.GetDstRank(), p->GetSize(), tag);
}

void
CreditLinkPlane::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& r : m_ranks)
    {
        if (r.device)
        {
            r.device->SetTxReadyCallback(CreditLinkNetDevice::TxReadyCallback());
        }
    }
    m_ranks.clear();
    m_rankOfDevice.clear();
    TransportPlane::DoDispose();
}

} // namespace ns3
