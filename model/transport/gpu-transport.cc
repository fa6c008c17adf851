/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/gpu-transport.h"

#include "ns3/log.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("GpuTransport");
NS_OBJECT_ENSURE_REGISTERED(GpuTransport);

TypeId
GpuTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::GpuTransport")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<GpuTransport>()
            .AddAttribute("FirstMessageId",
                          "Id of the first message (flows.flow_id); offset it when several "
                          "transports write one run",
                          UintegerValue(0),
                          MakeUintegerAccessor(&GpuTransport::m_nextId),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("NotificationLatency",
                          "One-way latency of a small notification between two ranks: a "
                          "message's completion back at its sender (RDMA ACK), a peer's "
                          "\"ready\" or \"done\" in a collective.  Default: the ~0.5 us "
                          "end-to-end small-message latency of an EDR/HDR fabric.  Must be at "
                          "least the lookahead of a distributed run",
                          TimeValue(NanoSeconds(500)),
                          MakeTimeAccessor(&GpuTransport::m_notificationLatency),
                          MakeTimeChecker(Time(0)))
            // Default from granularity-bench (doc/performance.md): 32 packets keep a
            // message's spray over the NVLink planes and its pipelining through the
            // switches within the fine packets' completion time, while a 512 KiB ring
            // chunk or an 8 MiB transfer needs 4x-64x fewer packets than 4 KiB ones.
            .AddAttribute("MinPacketsPerMessage",
                          "Cut a message into at least this many packets where the plane's "
                          "bursts allow (larger packets for larger messages); 0 = the "
                          "plane's fine packets only",
                          UintegerValue(32),
                          MakeUintegerAccessor(&GpuTransport::m_minPacketsPerMessage),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("MessageSent",
                            "A message was submitted (id, src, dst, bytes)",
                            MakeTraceSourceAccessor(&GpuTransport::m_sentTrace),
                            "ns3::GpuTransport::MessageTracedCallback")
            .AddTraceSource("MessageReceived",
                            "A message's last byte arrived (id, src, dst, bytes, duration)",
                            MakeTraceSourceAccessor(&GpuTransport::m_receivedTrace),
                            "ns3::GpuTransport::MessageDoneTracedCallback");
    return tid;
}

GpuTransport::GpuTransport()
    : m_nextId(0),
      m_completed(0),
      m_minPacketsPerMessage(32)
{
}

GpuTransport::~GpuTransport() = default;

uint32_t
GpuTransport::AddPlane(Ptr<TransportPlane> plane)
{
    NS_ABORT_MSG_IF(!plane, "GpuTransport::AddPlane: null plane");
    const uint32_t index = m_planes.size();
    m_planes.push_back(plane);
    m_planeUnits.emplace_back(plane->GetMaxPayloadBytes(), plane->GetMaxBurstBytes());
    plane->SetDeliverCallback(MakeCallback(&GpuTransport::Deliver, this).Bind(index));
    plane->SetTxReadyCallback(MakeCallback(&GpuTransport::PlaneReady, this).Bind(index));
    return index;
}

uint32_t
GpuTransport::GetNPlanes() const
{
    return m_planes.size();
}

Ptr<TransportPlane>
GpuTransport::GetPlane(uint32_t index) const
{
    return index < m_planes.size() ? m_planes[index] : nullptr;
}

void
GpuTransport::SetPlaneForPair(uint32_t srcRank, uint32_t dstRank, uint32_t planeIndex)
{
    NS_ABORT_MSG_IF(planeIndex >= m_planes.size(), "SetPlaneForPair: no plane " << planeIndex);
    NS_ABORT_MSG_IF(!m_planes[planeIndex]->CanReach(srcRank, dstRank),
                    "SetPlaneForPair: plane " << m_planes[planeIndex]->GetPlaneName()
                                              << " cannot reach " << srcRank << " -> " << dstRank);
    m_pairPlane[{srcRank, dstRank}] = planeIndex;
}

void
GpuTransport::SetPlaneSelector(PlaneSelector selector)
{
    m_selector = selector;
}

int32_t
GpuTransport::SelectPlane(uint32_t srcRank, uint32_t dstRank) const
{
    auto it = m_pairPlane.find({srcRank, dstRank});
    if (it != m_pairPlane.end())
    {
        return it->second;
    }
    if (!m_selector.IsNull())
    {
        const int32_t chosen = m_selector(srcRank, dstRank);
        if (chosen >= 0 && uint32_t(chosen) < m_planes.size() &&
            m_planes[chosen]->CanReach(srcRank, dstRank))
        {
            return chosen;
        }
    }
    for (uint32_t i = 0; i < m_planes.size(); ++i)
    {
        if (m_planes[i]->CanReach(srcRank, dstRank))
        {
            return i;
        }
    }
    return -1;
}

bool
GpuTransport::HasRank(uint32_t rank) const
{
    for (const auto& p : m_planes)
    {
        if (p->HasRank(rank))
        {
            return true;
        }
    }
    return false;
}

void
GpuTransport::SetResultsDatabase(Ptr<ResultsDatabase> db)
{
    m_db = db;
}

GpuTransport::Injector*
GpuTransport::GetInjector(uint32_t plane, uint32_t src)
{
    auto& slot = m_injectors[{plane, src}];
    if (!slot)
    {
        slot = std::make_unique<Injector>();
        slot->plane = plane;
        slot->src = src;
    }
    return slot.get();
}

uint64_t
GpuTransport::SendMessage(uint32_t srcRank,
                          uint32_t dstRank,
                          uint64_t bytes,
                          DoneCallback onSenderDone,
                          DoneCallback onReceiverDone,
                          uint32_t channel,
                          int64_t opId)
{
    if (srcRank == dstRank)
    {
        std::ostringstream os;
        os << "GpuTransport::SendMessage: source and destination are both rank " << srcRank;
        throw std::invalid_argument(os.str());
    }
    const int32_t plane = SelectPlane(srcRank, dstRank);
    if (plane < 0)
    {
        std::ostringstream os;
        os << "GpuTransport::SendMessage: no plane reaches rank " << dstRank << " from rank "
           << srcRank;
        throw std::invalid_argument(os.str());
    }
    const uint64_t packetBytes = AdaptivePacketBytes(bytes,
                                                     m_planeUnits[plane].first,
                                                     m_planeUnits[plane].second,
                                                     m_minPacketsPerMessage);
    auto msg = std::make_unique<Message>();
    Message* m = msg.get();
    m->id = m_nextId++;
    m->src = srcRank;
    m->dst = dstRank;
    m->plane = plane;
    m->bytes = bytes;
    // A zero-byte message is one header-only packet: a notification still costs a trip.
    m->packets = bytes == 0 ? 1 : (bytes + packetBytes - 1) / packetBytes;
    m->packetBytes = static_cast<uint32_t>(packetBytes);
    m->submitted = Simulator::Now();
    m->opId = opId;
    m->senderDone = onSenderDone;
    m->receiverDone = onReceiverDone;
    auto& pair = m_pairs[{static_cast<uint32_t>(plane), srcRank, dstRank, channel}];
    if (!pair)
    {
        pair = std::make_unique<PairQueue>();
        pair->injector = GetInjector(plane, srcRank);
    }
    m->pair = pair.get();
    pair->messages.push_back(m);
    m_messages.emplace(m->id, std::move(msg));
    m_sentTrace(m->id, srcRank, dstRank, bytes);
    NS_LOG_DEBUG("message " << m->id << " " << srcRank << "->" << dstRank << " " << bytes
                            << " B on " << m_planes[plane]->GetPlaneName());
    const Time latency = m_planes[plane]->GetSoftwareLatency();
    if (latency.IsStrictlyPositive())
    {
        Simulator::Schedule(latency, &GpuTransport::MakeEligible, this, m);
    }
    else
    {
        MakeEligible(m);
    }
    return m->id;
}

void
GpuTransport::MakeEligible(Message* m)
{
    m->eligible = true;
    PairQueue* pq = m->pair;
    if (pq->messages.front() == m && !pq->inRing)
    {
        pq->inRing = true;
        pq->injector->ring.push_back(pq);
        Pump(pq->injector);
    }
}

void
GpuTransport::Pump(Injector* inj)
{
    if (inj->blocked || inj->pumping)
    {
        return;
    }
    inj->pumping = true;
    TransportPlane* plane = PeekPointer(m_planes[inj->plane]);
    while (!inj->ring.empty())
    {
        PairQueue* pq = inj->ring.front();
        Message* m = pq->messages.front();
        const uint64_t left = m->bytes - m->injectedBytes;
        const auto seg = static_cast<uint32_t>(std::min<uint64_t>(left, m->packetBytes));
        if (!plane->Inject(m->src, m->dst, seg, TransportTag{m->id, uint32_t(m->nextSeq)}))
        {
            inj->blocked = true;
            break;
        }
        if (m->nextSeq == 0)
        {
            m->firstInjected = Simulator::Now();
        }
        ++m->nextSeq;
        m->injectedBytes += seg;
        inj->ring.pop_front();
        if (m->nextSeq < m->packets)
        {
            inj->ring.push_back(pq);
            continue;
        }
        pq->messages.pop_front();
        if (!pq->messages.empty() && pq->messages.front()->eligible)
        {
            inj->ring.push_back(pq);
        }
        else
        {
            pq->inRing = false;
        }
    }
    inj->pumping = false;
}

void
GpuTransport::PlaneReady(uint32_t plane, uint32_t srcRank)
{
    auto it = m_injectors.find({plane, srcRank});
    if (it == m_injectors.end())
    {
        return;
    }
    it->second->blocked = false;
    Pump(it->second.get());
}

void
GpuTransport::Deliver(uint32_t plane,
                      uint32_t srcRank,
                      uint32_t dstRank,
                      uint32_t payloadBytes,
                      TransportTag tag)
{
    auto it = m_messages.find(tag.messageId);
    NS_ABORT_MSG_IF(it == m_messages.end(),
                    "GpuTransport: packet of unknown message "
                        << tag.messageId << " from rank " << srcRank << " at rank " << dstRank);
    Message* m = it->second.get();
    if (m_rxBytes.size() <= dstRank)
    {
        m_rxBytes.resize(dstRank + 1, 0);
    }
    m_rxBytes[dstRank] += payloadBytes;
    if (++m->receivedPackets == m->packets)
    {
        Complete(m);
    }
}

void
GpuTransport::Complete(Message* m)
{
    const Time now = Simulator::Now();
    if (m_txBytes.size() <= m->src)
    {
        m_txBytes.resize(m->src + 1, 0);
    }
    m_txBytes[m->src] += m->bytes;
    ++m_completed;
    m_receivedTrace(m->id, m->src, m->dst, m->bytes, now - m->submitted);
    if (m_db)
    {
        const Ptr<TransportPlane>& plane = m_planes[m->plane];
        FlowRecord row;
        row.flowId = m->id;
        row.plane = plane->GetPlaneName();
        row.srcNode = plane->GetNodeId(m->src);
        row.dstNode = plane->GetNodeId(m->dst);
        row.srcRank = m->src;
        row.dstRank = m->dst;
        row.bytes = m->bytes;
        row.packets = m->packets;
        row.startNs = m->firstInjected.GetNanoSeconds();
        row.endNs = now.GetNanoSeconds();
        row.opId = m->opId;
        m_db->AddFlow(row);
    }
    DoneCallback senderDone = m->senderDone;
    DoneCallback receiverDone = m->receiverDone;
    m_messages.erase(m->id);
    if (!senderDone.IsNull())
    {
        Simulator::Schedule(m_notificationLatency, [senderDone]() { senderDone(); });
    }
    if (!receiverDone.IsNull())
    {
        receiverDone();
    }
}

Time
GpuTransport::GetNotificationLatency() const
{
    return m_notificationLatency;
}

uint64_t
GpuTransport::GetRxBytes(uint32_t rank) const
{
    return rank < m_rxBytes.size() ? m_rxBytes[rank] : 0;
}

uint64_t
GpuTransport::GetTxBytes(uint32_t rank) const
{
    return rank < m_txBytes.size() ? m_txBytes[rank] : 0;
}

uint64_t
GpuTransport::GetMessagesCompleted() const
{
    return m_completed;
}

uint64_t
GpuTransport::GetMessagesInFlight() const
{
    return m_messages.size();
}

void
GpuTransport::DoDispose()
{
    for (auto& p : m_planes)
    {
        p->SetDeliverCallback(TransportPlane::DeliverCallback());
        p->SetTxReadyCallback(TransportPlane::TxReadyCallback());
    }
    m_planes.clear();
    m_selector = PlaneSelector();
    m_messages.clear();
    m_pairs.clear();
    m_injectors.clear();
    m_db = nullptr;
    Object::DoDispose();
}

} // namespace ns3
