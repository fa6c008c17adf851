/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/gpu-transport.h"

#include "ns3/boolean.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/instant-end-scheduler.h"
#include "ns3/log.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
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
            .AddAttribute("InstantEndInjection",
                          "Messages that become eligible in one instant join a rank's "
                          "injection ring in (destination, channel) order and inject at the "
                          "end of the instant, before the devices decide "
                          "(CreditLinkNetDevice::InstantEndDecisions), not in event order; "
                          "one event per busy instant.  DistributedRun::Enable turns it on "
                          "under mpirun",
                          BooleanValue(false),
                          MakeBooleanAccessor(&GpuTransport::m_instantEndInjection),
                          MakeBooleanChecker())
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
                          "bursts allow (larger packets for larger messages); a message the "
                          "plane stripes over its lanes goes in rounds of one packet per lane "
                          "instead (TransportPlane::GetStripeLinks); 0 = the plane's fine "
                          "packets only, never striped",
                          UintegerValue(32),
                          MakeUintegerAccessor(&GpuTransport::m_minPacketsPerMessage),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("MessageSent",
                            "A message was submitted (id, src, dst, bytes, plane index)",
                            MakeTraceSourceAccessor(&GpuTransport::m_sentTrace),
                            "ns3::GpuTransport::MessageTracedCallback")
            .AddTraceSource("MessageReceived",
                            "A message's last byte arrived (id, src, dst, bytes, plane index, "
                            "duration)",
                            MakeTraceSourceAccessor(&GpuTransport::m_receivedTrace),
                            "ns3::GpuTransport::MessageDoneTracedCallback");
    return tid;
}

GpuTransport::GpuTransport()
    : m_nextId(0),
      m_completed(0),
      m_minPacketsPerMessage(32)
{
    NS_LOG_FUNCTION(this);
    m_clients.push_back(
        Client{MakeCallback(&GpuTransport::Acknowledged, this), ReceivedCallback()});
}

GpuTransport::~GpuTransport() = default;

uint32_t
GpuTransport::AddPlane(Ptr<TransportPlane> plane)
{
    NS_LOG_FUNCTION(this << plane);
    NS_ABORT_MSG_IF(!plane, "GpuTransport::AddPlane: null plane");
    const uint32_t index = m_planes.size();
    m_planes.push_back(plane);
    m_planeUnits.emplace_back(plane->GetMaxPayloadBytes(), plane->GetMaxBurstBytes());
    plane->SetDeliverCallback(MakeCallback(&GpuTransport::Deliver, this).Bind(index));
    plane->SetTxReadyCallback(MakeCallback(&GpuTransport::PlaneReady, this).Bind(index));
    m_injectors.emplace_back();
    auto* fluid = dynamic_cast<FlowTransportPlane*>(PeekPointer(plane));
    m_fluid.push_back(fluid);
    if (fluid)
    {
        fluid->SetMessageCallbacks(MakeCallback(&GpuTransport::FluidFirstIn, this),
                                   MakeCallback(&GpuTransport::FluidDrained, this),
                                   MakeCallback(&GpuTransport::FluidDelivered, this));
    }
    return index;
}

bool
GpuTransport::IsFluid(uint32_t plane) const
{
    return plane < m_fluid.size() && m_fluid[plane];
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
    NS_LOG_FUNCTION(this << srcRank << dstRank << planeIndex);
    NS_ABORT_MSG_IF(planeIndex >= m_planes.size(), "SetPlaneForPair: no plane " << planeIndex);
    NS_ABORT_MSG_IF(!m_planes[planeIndex]->CanReach(srcRank, dstRank),
                    "SetPlaneForPair: plane " << m_planes[planeIndex]->GetPlaneName()
                                              << " cannot reach " << srcRank << " -> " << dstRank);
    m_pairPlane[{srcRank, dstRank}] = planeIndex;
}

void
GpuTransport::SetPlaneSelector(PlaneSelector selector)
{
    NS_LOG_FUNCTION(this);
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
GpuTransport::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    return SelectPlane(srcRank, dstRank) >= 0;
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
    NS_LOG_FUNCTION(this << db);
    m_db = db;
}

GpuTransport::Injector*
GpuTransport::GetInjector(uint32_t plane, uint32_t src)
{
    auto& ofPlane = m_injectors[plane];
    if (ofPlane.size() <= src)
    {
        ofPlane.resize(src + 1);
    }
    auto& slot = ofPlane[src];
    if (!slot)
    {
        slot = std::make_unique<Injector>();
        slot->plane = plane;
        slot->src = src;
    }
    return slot.get();
}

GpuTransport::PairQueue*
GpuTransport::GetPair(Injector* inj, uint32_t dst, uint32_t channel)
{
    const uint64_t order = uint64_t{dst} << 32 | channel;
    if (inj->pairIndex.empty())
    {
        const auto it = std::find(inj->pairOrders.begin(), inj->pairOrders.end(), order);
        if (it != inj->pairOrders.end())
        {
            return inj->pairs[it - inj->pairOrders.begin()].get();
        }
    }
    else
    {
        const auto it = inj->pairIndex.find(order);
        if (it != inj->pairIndex.end())
        {
            return it->second;
        }
    }
    inj->pairs.push_back(std::make_unique<PairQueue>());
    PairQueue* pair = inj->pairs.back().get();
    pair->injector = inj;
    pair->order = order;
    inj->pairOrders.push_back(order);
    if (inj->pairs.size() > kPairScan)
    {
        if (inj->pairIndex.empty())
        {
            for (const auto& p : inj->pairs)
            {
                inj->pairIndex.emplace(p->order, p.get());
            }
        }
        else
        {
            inj->pairIndex.emplace(order, pair);
        }
    }
    return pair;
}

uint64_t
GpuTransport::SendMessage(uint32_t srcRank,
                          uint32_t dstRank,
                          uint64_t bytes,
                          DoneCallback onSenderDone,
                          DoneCallback onReceiverDone,
                          uint32_t channel,
                          int64_t opId,
                          uint8_t client,
                          uint64_t key,
                          Time delay,
                          DataRate channelRate,
                          Time channelStep,
                          const Aggregate& aggregate,
                          uint32_t sinkChannel)
{
    NS_LOG_FUNCTION(this << srcRank << dstRank << bytes << channel << opId);
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
    NS_ABORT_MSG_IF((aggregate.steps > 1 || aggregate.lanes > 1) && !m_fluid[plane],
                    "GpuTransport: an aggregate of ring steps on packet plane "
                        << m_planes[plane]->GetPlaneName());
    const uint32_t steps = std::max<uint32_t>(aggregate.steps, 1);
    const uint32_t lanes = std::max<uint32_t>(aggregate.lanes, 1);
    // An aggregate's packets are those of one message: one loop of one step of one lane.
    const uint64_t loopsPerStep = std::max<uint32_t>(aggregate.loops, 1);
    const uint64_t piece = aggregate.pieceBytes > 0
                               ? aggregate.pieceBytes
                               : bytes / (uint64_t(steps) * lanes * loopsPerStep);
    const Segmentation cut = Segment(plane, srcRank, dstRank, piece);
    const uint64_t packetBytes = cut.packetBytes;
    auto msg = std::make_unique<Message>();
    Message* m = msg.get();
    m->id = m_nextId;
    m_nextId += m_idStride;
    m->src = srcRank;
    m->dst = dstRank;
    m->plane = plane;
    m->bytes = bytes;
    m->packets = cut.packets;
    m->packetBytes = cut.packetBytes;
    m->stripe = cut.stripe;
    m->stripeLinks = cut.stripeLinks;
    m->rounds = cut.rounds;
    m->channel = channel;
    m->sinkChannel = sinkChannel == SAME_CHANNEL ? channel : sinkChannel;
    m->channelRate_bit_per_s = channelRate.GetBitRate() * lanes;
    // A Simple step's loops are slices, each ending with its fence and flag at the receiving
    // channel: the aggregate's first step pays them in series as its later steps do.
    m->channelStep = channelStep * static_cast<int64_t>(loopsPerStep);
    m->lanes = lanes;
    if (steps > 1)
    {
        // Each further step pays what a step pays besides its bytes (on the wire, or at the
        // receiving channel's rate when slower): a message's software latency, the sender's
        // step cost and its first packet's way through the path, while the loops queued
        // behind it do not fill the wire; or the sender's serial posting, or the channel's
        // per-message steps, less the step's transfer they overlap.
        const uint32_t first = static_cast<uint32_t>(std::min<uint64_t>(bytes, packetBytes));
        const Time tail = m_fluid[plane]->GetTailLatency(srcRank, dstRank, first);
        const Time fixed = m_planes[plane]->GetSoftwareLatency() + aggregate.stepLatency + tail;
        const double line = m_planes[plane]->GetLineRate_gbyte_per_s(srcRank);
        // One step's bytes on all lanes: an uneven loop's steps last as its largest pieces.
        const double stepBytes = aggregate.pieceBytes > 0
                                     ? double(aggregate.pieceBytes) * lanes * loopsPerStep
                                     : double(bytes) / steps;
        // The slower of the line and the receiving channel (which takes a lane's messages
        // one after another, each at its rate and then its fixed step, channelStep; the
        // endpoint's charge already holds the aggregate to the rate) for \p b bytes.
        auto covering = [line, m](double b) {
            const Time transfer = line > 0 ? NanoSeconds(static_cast<int64_t>(b / line)) : Time(0);
            const Time channelBytes =
                m->channelRate_bit_per_s > 0
                    ? NanoSeconds(static_cast<int64_t>(b * 8e9 / double(m->channelRate_bit_per_s)))
                    : Time(0);
            return std::make_pair(std::max(transfer, channelBytes), channelBytes);
        };
        const auto loops = static_cast<int64_t>(loopsPerStep);
        const auto [covered, channelBytes] = covering(stepBytes);
        // The receiving channel starts on a message when its first packet is in: bound by
        // the channel, a message takes that packet's way through the path (its injection
        // besides the tail), then the channel's time.
        const Time firstIn = m_fluid[plane]->GetFirstPacketLatency(srcRank, dstRank, first);
        const Time lineStep =
            line > 0 ? NanoSeconds(static_cast<int64_t>(stepBytes / line)) : Time(0);
        const bool channelBound = aggregate.channelPaced && channelBytes > lineStep;
        const Time period =
            std::max({fixed + covered / loops,
                      channelBound ? fixed - tail + firstIn + channelBytes / loops : Time(0),
                      covered,
                      aggregate.stepPosting,
                      channelBytes + channelStep * loops});
        m->aggregateLatency = (period - covered) * static_cast<int64_t>(steps - 1);
        if (channelBound && lanes > 1)
        {
            // The rank's lanes' first messages leave in turn, a lane's piece at the line rate
            // each (the flow plane's source), so lane k's channel starts k such times after
            // the first's.  Each lane's later steps wait for its own previous ones and its
            // channel binds, not the shared line: the offset lasts to the pass's end, which
            // the last lane's chain sets.
            const Time turn =
                line > 0 ? NanoSeconds(static_cast<int64_t>(double(piece) / line)) : Time(0);
            m->aggregateLatency += turn * static_cast<int64_t>(lanes - 1);
        }
        if (aggregate.pieceBytes > 0)
        {
            // The flow carries the rank's own bytes; the lockstep steps wait for the largest.
            m->aggregateLatency +=
                std::max(Time(0),
                         covered * static_cast<int64_t>(steps) - covering(double(bytes)).first);
        }
    }
    m->submitted = Simulator::Now();
    m->opId = opId;
    m->senderDone = onSenderDone;
    m->receiverDone = onReceiverDone;
    m->remote = !IsLocal(dstRank);
    NS_ABORT_MSG_IF(m->remote && m_fluid[plane],
                    "GpuTransport: flow fidelity on plane " << m_planes[plane]->GetPlaneName()
                                                            << " needs one process");
    if (m_fluid[plane])
    {
        m->packets = 1; // the whole message as one flow
    }
    m->client = client;
    m->key = key;
    PairQueue* pair = GetPair(GetInjector(plane, srcRank), dstRank, channel);
    m->pair = pair;
    pair->messages.push_back(m);
    m_messages.emplace(m->id, std::move(msg));
    m_sentTrace(m->id, srcRank, dstRank, bytes, m->plane);
    NS_LOG_DEBUG("message " << m->id << " " << srcRank << "->" << dstRank << " " << bytes
                            << " B on " << m_planes[plane]->GetPlaneName());
    const Time latency = m_planes[plane]->GetSoftwareLatency() + delay;
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

GpuTransport::Segmentation
GpuTransport::Segment(uint32_t plane, uint32_t src, uint32_t dst, uint64_t bytes) const
{
    Segmentation cut;
    const uint32_t fine = m_planeUnits[plane].first;
    const std::vector<uint32_t>& links = m_planes[plane]->GetStripeLinks(src, dst);
    if (!links.empty() && m_minPacketsPerMessage > 0) // 0: fine packets only
    {
        uint64_t total = 0;
        for (uint32_t l : links)
        {
            total += l;
        }
        const uint32_t fewest = *std::min_element(links.begin(), links.end());
        if (total > 0 && fewest > 0 && bytes * fewest / total >= fine)
        {
            cut.stripe = &links;
            cut.stripeLinks = static_cast<uint32_t>(total);
            cut.rounds = StripeRounds(bytes, links, total, m_planeUnits[plane].second);
            cut.packets = uint64_t(cut.rounds) * links.size();
            return cut;
        }
    }
    cut.packetBytes =
        AdaptivePacketBytes(bytes, fine, m_planeUnits[plane].second, m_minPacketsPerMessage);
    // A zero-byte message is one header-only packet: a notification still costs a trip.
    cut.packets = bytes == 0 ? 1 : (bytes + cut.packetBytes - 1) / cut.packetBytes;
    return cut;
}

void
GpuTransport::MakeEligible(Message* m)
{
    m->eligible = true;
    PairQueue* pq = m->pair;
    if (pq->messages.front() == m && !pq->inRing)
    {
        pq->inRing = true;
        if (m_fluid[m->plane])
        {
            StartFluid(m); // inRing: the queue's head is a flow until it has drained
            return;
        }
        if (m_instantEndInjection)
        {
            // Same-instant arrivals (a notification from another process among them) must
            // not inject in event order: doc/cluster.md, "Same rows for any number of
            // processes".
            Injector* inj = pq->injector;
            inj->arriving.push_back(pq);
            if (!inj->flushPending)
            {
                inj->flushPending = true;
                InstantEndScheduler::Get().Add(
                    InstantEndScheduler::StepKey(inj->plane, inj->src),
                    Callback<void>([this, inj]() { FlushArrivals(inj); }));
            }
            return;
        }
        pq->injector->ring.push_back(pq);
        Pump(pq->injector);
    }
}

void
GpuTransport::FlushArrivals(Injector* inj)
{
    NS_LOG_LOGIC("rank " << inj->src << " plane " << inj->plane << ": " << inj->arriving.size()
                         << " same-instant arrivals join the ring by (destination, channel)");
    inj->flushPending = false;
    std::sort(inj->arriving.begin(), inj->arriving.end(), [](PairQueue* a, PairQueue* b) {
        return a->order < b->order;
    });
    for (PairQueue* pq : inj->arriving)
    {
        inj->ring.push_back(pq);
    }
    inj->arriving.clear();
    Pump(inj);
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
        TransportTag tag{m->id, uint32_t(m->nextSeq)};
        uint32_t seg;
        if (m->stripe)
        {
            seg = StripePacketBytes(m->bytes, *m->stripe, m->stripeLinks, m->rounds, m->nextSeq);
            tag.lane = static_cast<uint32_t>(m->nextSeq % m->stripe->size());
        }
        else
        {
            seg = static_cast<uint32_t>(std::min<uint64_t>(left, m->packetBytes));
        }
        tag.channel = m->channel;
        if (m->remote)
        {
            tag.remote = true;
            tag.client = m->client;
            tag.bytes = m->bytes;
            tag.key = m->key;
            tag.sinkChannel = m->sinkChannel;
            tag.channelRate_bit_per_s = m->channelRate_bit_per_s;
        }
        if (!plane->Inject(m->src, m->dst, seg, tag))
        {
            NS_LOG_LOGIC("rank " << inj->src << " blocked on plane " << plane->GetPlaneName()
                                 << " at message " << m->id << " packet " << m->nextSeq);
            inj->blocked = true;
            break;
        }
        if (m->nextSeq == 0)
        {
            m->firstInjected = Simulator::Now();
        }
        ++m->nextSeq;
        m->injectedBytes += seg;
        if (m->nextSeq < m->packets && m->stripe && m->nextSeq % m->stripe->size() != 0)
        {
            // A striped round goes out whole, one packet on every lane, before the next
            // pair's turn: the lanes fill in proportion to their links, as a spray does.
            continue;
        }
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
    const auto& ofPlane = m_injectors[plane];
    if (srcRank >= ofPlane.size() || !ofPlane[srcRank])
    {
        return; // the rank never sent on this plane
    }
    NS_LOG_LOGIC("rank " << srcRank << " ready again on plane " << plane);
    Injector* inj = ofPlane[srcRank].get();
    inj->blocked = false;
    Pump(inj);
}

void
GpuTransport::Deliver(uint32_t plane,
                      uint32_t srcRank,
                      uint32_t dstRank,
                      uint32_t payloadBytes,
                      TransportTag tag)
{
    if (tag.remote)
    {
        DeliverRemote(plane, srcRank, dstRank, payloadBytes, tag);
        return;
    }
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
    if (!m->reserved)
    {
        m->reserved = true;
        m->notBefore = ReserveEndpoint(plane,
                                       dstRank,
                                       m->bytes,
                                       m->sinkChannel,
                                       m->channelRate_bit_per_s,
                                       m->channelStep,
                                       FirstByteIn(m, payloadBytes, tag.sequence));
    }
    if (++m->receivedPackets == m->packets)
    {
        AtOrNow(m->notBefore, [this, m]() { Complete(m); });
    }
}

void
GpuTransport::StartFluid(Message* m)
{
    m->firstInjected = Simulator::Now();
    m_fluid[m->plane]->StartMessage(m->src, m->dst, m->bytes, m->packetBytes, m->id, m->lanes);
}

GpuTransport::Message*
GpuTransport::FluidMessage(uint64_t messageId)
{
    auto it = m_messages.find(messageId);
    NS_ABORT_MSG_IF(it == m_messages.end(), "GpuTransport: flow of unknown message " << messageId);
    return it->second.get();
}

void
GpuTransport::FluidFirstIn(uint64_t messageId)
{
    // The packet mode's first-packet event: the receiving endpoint starts taking the message.
    Message* m = FluidMessage(messageId);
    m->reserved = true;
    m->notBefore = ReserveEndpoint(m->plane,
                                   m->dst,
                                   m->bytes,
                                   m->sinkChannel,
                                   m->channelRate_bit_per_s,
                                   m->channelStep,
                                   Simulator::Now());
}

void
GpuTransport::FluidDrained(uint64_t messageId)
{
    Message* m = FluidMessage(messageId);
    PairQueue* pq = m->pair;
    NS_ASSERT(pq->messages.front() == m);
    m->injectedBytes = m->bytes;
    m->nextSeq = 1;
    pq->messages.pop_front();
    if (!pq->messages.empty() && pq->messages.front()->eligible)
    {
        StartFluid(pq->messages.front());
    }
    else
    {
        pq->inRing = false;
    }
}

void
GpuTransport::FluidDelivered(uint64_t messageId)
{
    Message* m = FluidMessage(messageId);
    if (m_rxBytes.size() <= m->dst)
    {
        m_rxBytes.resize(m->dst + 1, 0);
    }
    m_rxBytes[m->dst] += m->bytes;
    m->receivedPackets = 1;
    AtOrNow(std::max(m->notBefore, Simulator::Now()) + m->aggregateLatency,
            [this, m]() { Complete(m); });
}

Time
GpuTransport::ReserveEndpoint(uint32_t plane,
                              uint32_t dstRank,
                              uint64_t bytes,
                              uint32_t channel,
                              uint64_t channelRate_bit_per_s,
                              Time channelStep,
                              Time firstByte)
{
    // Sinks of a limited rate behind the wire: each starts on a message when its first
    // byte is in and the messages before it are taken.  The plane's EndpointRate is the
    // receiving GPU's; the channel rate that of the collective channel receiving it.
    const Time start = firstByte;
    auto take = [start, bytes](Time& free, uint64_t bps) {
        // In double: bytes x 8e9 overflows 64 bits from 2 GiB up.
        free = std::max(free, start) +
               NanoSeconds(static_cast<int64_t>(std::ceil(double(bytes) * 8e9 / double(bps))));
        return free;
    };
    Time ready = start;
    const uint64_t bps = m_planes[plane]->GetEndpointRate().GetBitRate();
    if (bps > 0)
    {
        if (m_endpointFree.size() <= plane)
        {
            m_endpointFree.resize(plane + 1);
        }
        auto& free = m_endpointFree[plane];
        if (free.size() <= dstRank)
        {
            free.resize(dstRank + 1, Time(0));
        }
        ready = std::max(ready, take(free[dstRank], bps));
    }
    if (channelRate_bit_per_s > 0 || channelStep.IsStrictlyPositive())
    {
        // The channel's fixed time per message follows its bytes: the next message of the
        // channel starts after it (a Simple step's fence and flag end the step).
        if (m_channelFree.size() <= dstRank)
        {
            m_channelFree.resize(dstRank + 1);
        }
        auto& ofRank = m_channelFree[dstRank];
        if (ofRank.size() <= channel)
        {
            ofRank.resize(channel + 1, Time(0));
        }
        Time& free = ofRank[channel];
        if (channelRate_bit_per_s > 0)
        {
            take(free, channelRate_bit_per_s);
        }
        free = std::max(free, start) + channelStep;
        ready = std::max(ready, free);
    }
    return ready;
}

Time
GpuTransport::FirstByteIn(const Message* m, uint32_t payloadBytes, uint32_t sequence) const
{
    const Time now = Simulator::Now();
    if (!m->stripe)
    {
        return now; // a fine packet or a burst of the plane's placing: taken as it is in
    }
    const double lane_gbyte_per_s = m_planes[m->plane]->GetStripeLaneRate_gbyte_per_s(
        m->src,
        m->dst,
        static_cast<uint32_t>(sequence % m->stripe->size()));
    if (lane_gbyte_per_s <= 0)
    {
        return now;
    }
    return now - NanoSeconds(static_cast<int64_t>(payloadBytes / lane_gbyte_per_s));
}

void
GpuTransport::AtOrNow(Time notBefore, std::function<void()> fn)
{
    const Time now = Simulator::Now();
    if (notBefore > now)
    {
        Simulator::Schedule(notBefore - now, fn);
    }
    else
    {
        fn();
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
    NS_LOG_LOGIC("message " << m->id << " " << m->src << "->" << m->dst << " complete after "
                            << (now - m->submitted).As(Time::US));
    m_receivedTrace(m->id, m->src, m->dst, m->bytes, m->plane, now - m->submitted);
    WriteFlow(m, now);
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

void
GpuTransport::WriteFlow(const Message* m, Time end)
{
    if (!m_db)
    {
        return;
    }
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
    row.endNs = end.GetNanoSeconds();
    row.opId = m->opId;
    row.fidelity = m_fluid[m->plane] ? "flow" : "packet";
    m_db->AddFlow(row);
}

void
GpuTransport::DeliverRemote(uint32_t plane,
                            uint32_t srcRank,
                            uint32_t dstRank,
                            uint32_t payloadBytes,
                            const TransportTag& tag)
{
    RemoteRx& rx = m_remoteRx[tag.messageId];
    if (rx.packets == 0)
    {
        // The sender's segmentation, from the same attributes in every process.
        rx.bytes = tag.bytes;
        rx.packets = Segment(plane, srcRank, dstRank, tag.bytes).packets;
        rx.notBefore = ReserveEndpoint(plane,
                                       dstRank,
                                       tag.bytes,
                                       tag.sinkChannel,
                                       tag.channelRate_bit_per_s,
                                       Time(0),
                                       Simulator::Now());
    }
    if (m_rxBytes.size() <= dstRank)
    {
        m_rxBytes.resize(dstRank + 1, 0);
    }
    m_rxBytes[dstRank] += payloadBytes;
    if (++rx.received < rx.packets)
    {
        return;
    }
    const uint64_t bytes = rx.bytes;
    const Time notBefore = rx.notBefore;
    m_remoteRx.erase(tag.messageId);
    AtOrNow(notBefore, [this, plane, srcRank, dstRank, tag, bytes]() {
        CompleteRemote(plane, srcRank, dstRank, tag, bytes);
    });
}

void
GpuTransport::CompleteRemote(uint32_t plane,
                             uint32_t srcRank,
                             uint32_t dstRank,
                             const TransportTag& tag,
                             uint64_t bytes)
{
    NS_LOG_LOGIC("remote message " << tag.messageId << " " << srcRank << "->" << dstRank
                                   << " complete; acknowledged to its process");
    // The submission time stays with the sender: the duration is unknown here (-1 ns).
    m_receivedTrace(tag.messageId, srcRank, dstRank, bytes, plane, NanoSeconds(-1));
    Notify(GetSystemOf(srcRank), 0, tag.messageId, Simulator::Now().GetNanoSeconds());
    NS_ABORT_MSG_IF(tag.client >= m_clients.size() || m_clients[tag.client].received.IsNull(),
                    "GpuTransport: message " << tag.messageId << " from rank " << srcRank
                                             << " for unknown client " << uint32_t(tag.client));
    m_clients[tag.client].received(tag.key);
}

void
GpuTransport::Acknowledged(uint64_t messageId, uint64_t endNs)
{
    NS_LOG_FUNCTION(this << messageId << endNs);
    auto it = m_messages.find(messageId);
    NS_ABORT_MSG_IF(it == m_messages.end(),
                    "GpuTransport: acknowledgement of unknown message " << messageId);
    Message* m = it->second.get();
    if (m_txBytes.size() <= m->src)
    {
        m_txBytes.resize(m->src + 1, 0);
    }
    m_txBytes[m->src] += m->bytes;
    ++m_completed;
    WriteFlow(m, NanoSeconds(endNs));
    DoneCallback senderDone = m->senderDone;
    m_messages.erase(it);
    if (!senderDone.IsNull())
    {
        senderDone();
    }
}

uint8_t
GpuTransport::AddClient(NotifiedCallback notified, ReceivedCallback received)
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_clients.size() > 255, "GpuTransport: too many notification clients");
    m_clients.push_back(Client{notified, received});
    return static_cast<uint8_t>(m_clients.size() - 1);
}

void
GpuTransport::Dispatch(uint8_t client, uint64_t a, uint64_t b)
{
    m_clients[client].notified(a, b);
}

void
GpuTransport::Notify(uint32_t systemId, uint8_t client, uint64_t a, uint64_t b)
{
    if (systemId == Simulator::GetSystemId())
    {
        Simulator::Schedule(m_notificationLatency, &GpuTransport::Dispatch, this, client, a, b);
        return;
    }
    NS_ABORT_MSG_IF(m_remoteSender.IsNull(),
                    "GpuTransport: notification for process " << systemId
                                                              << " in a single-process run");
    uint8_t buffer[17];
    buffer[0] = client;
    for (int i = 0; i < 8; ++i)
    {
        buffer[1 + i] = static_cast<uint8_t>(a >> (8 * i));
        buffer[9 + i] = static_cast<uint8_t>(b >> (8 * i));
    }
    m_remoteSender(systemId, m_notificationLatency, Create<Packet>(buffer, sizeof(buffer)));
}

void
GpuTransport::ReceiveRemote(Ptr<Packet> packet)
{
    uint8_t buffer[17];
    NS_ABORT_MSG_IF(packet->CopyData(buffer, sizeof(buffer)) != sizeof(buffer),
                    "GpuTransport: short notification packet");
    uint64_t a = 0;
    uint64_t b = 0;
    for (int i = 0; i < 8; ++i)
    {
        a |= uint64_t(buffer[1 + i]) << (8 * i);
        b |= uint64_t(buffer[9 + i]) << (8 * i);
    }
    NS_ABORT_MSG_IF(buffer[0] >= m_clients.size(),
                    "GpuTransport: notification for unknown client " << uint32_t(buffer[0]));
    Dispatch(buffer[0], a, b);
}

void
GpuTransport::SetDistributed(uint32_t nSystems, RemoteSender sender)
{
    NS_LOG_FUNCTION(this << nSystems);
    NS_ABORT_MSG_IF(nSystems == 0, "GpuTransport::SetDistributed: no process");
    m_nSystems = nSystems;
    m_idStride = nSystems;
    m_nextId += Simulator::GetSystemId();
    m_remoteSender = sender;
}

void
GpuTransport::SetRankSystems(const std::vector<uint32_t>& systemOfRank)
{
    NS_LOG_FUNCTION(this << systemOfRank.size());
    m_systemOfRank = systemOfRank;
}

uint32_t
GpuTransport::GetSystemOf(uint32_t rank) const
{
    if (m_nSystems == 1)
    {
        return 0;
    }
    if (rank >= m_systemOfRank.size())
    {
        m_systemOfRank.resize(rank + 1, UINT32_MAX);
    }
    uint32_t& system = m_systemOfRank[rank];
    if (system == UINT32_MAX)
    {
        system = 0;
        for (const auto& plane : m_planes)
        {
            if (plane->HasRank(rank) && plane->GetNodeId(rank) >= 0)
            {
                system = NodeList::GetNode(plane->GetNodeId(rank))->GetSystemId();
                break;
            }
        }
    }
    return system;
}

uint32_t
GpuTransport::GetNSystems() const
{
    return m_nSystems;
}

bool
GpuTransport::IsLocal(uint32_t rank) const
{
    return m_nSystems == 1 || GetSystemOf(rank) == Simulator::GetSystemId();
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
    NS_LOG_FUNCTION(this);
    for (auto& p : m_planes)
    {
        p->SetDeliverCallback(TransportPlane::DeliverCallback());
        p->SetTxReadyCallback(TransportPlane::TxReadyCallback());
    }
    m_planes.clear();
    m_selector = PlaneSelector();
    m_messages.clear();
    m_channelFree.clear();
    m_injectors.clear();
    m_db = nullptr;
    m_clients.clear();
    m_remoteSender = RemoteSender();
    m_remoteRx.clear();
    Object::DoDispose();
}

} // namespace ns3
