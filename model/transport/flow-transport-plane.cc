/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/flow-transport-plane.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/flow-nvls.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/log.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowTransportPlane");
NS_OBJECT_ENSURE_REGISTERED(FlowTransportPlane);

TypeId
FlowTransportPlane::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowTransportPlane")
            .SetParent<TransportPlane>()
            .SetGroupName("AiFabric")
            .AddConstructor<FlowTransportPlane>()
            .AddAttribute("SourceQueue",
                          "Messages to one destination (on any channel) that "
                          "fit what the rank's devices take before they "
                          "refuse (NVLink bundles' TxQueueBytes, the HCA's "
                          "MessageQueueBytes) with those queued before them drain "
                          "one after another, as whole messages do in those "
                          "first-in first-out queues; larger ones, and "
                          "messages to other destinations, share max-min",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowTransportPlane::m_sourceQueue),
                          MakeBooleanChecker())
            .AddAttribute("LastPacketInTurn",
                          "The last packet of each message that shares the "
                          "rank's devices (one outside SourceQueue) leaves in "
                          "turn with the last packets of the other messages to "
                          "the same destination, as the injector's round-robin "
                          "gives each its own slot: messages that drain together "
                          "complete one packet apart, not all at once",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowTransportPlane::m_lastPacketInTurn),
                          MakeBooleanChecker())
            .AddAttribute("NvlsFlows",
                          "In-switch reductions and multicasts (NVLS) of an NVLink "
                          "plane run as flows (FlowNvls): uploads, the switches' "
                          "engines and the multicast down share the links with the "
                          "messages; false: they run on the packet plane's devices",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowTransportPlane::m_nvlsFlows),
                          MakeBooleanChecker())
            .AddAttribute("LocalRefill",
                          "A start or drain refills the new flows and those its "
                          "links held back, the others held, growing that set "
                          "until every flow has a bottleneck (the same max-min "
                          "rates); false: every start or drain refills its whole "
                          "connected component",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowTransportPlane::SetLocalRefill,
                                              &FlowTransportPlane::GetLocalRefill),
                          MakeBooleanChecker());
    return tid;
}

FlowTransportPlane::FlowTransportPlane()
    : m_network(std::make_unique<FlowNetwork>())
{
    NS_LOG_FUNCTION(this);
}

FlowTransportPlane::~FlowTransportPlane() = default;

void
FlowTransportPlane::SetPacketPlane(Ptr<TransportPlane> plane)
{
    NS_LOG_FUNCTION(this << plane);
    NS_ABORT_MSG_UNLESS(DynamicCast<NvLinkTransportPlane>(plane) ||
                            DynamicCast<InfinibandTransportPlane>(plane),
                        "FlowTransportPlane: flows follow an NVLink or InfiniBand plane");
    m_packet = plane;
    if (!m_topology)
    {
        Ptr<PacketPlaneFlowTopology> devices = CreateObject<PacketPlaneFlowTopology>();
        devices->SetPacketPlane(plane);
        m_topology = devices;
    }
    m_inSwitch = dynamic_cast<InSwitchReductionPlane*>(PeekPointer(plane));
    SetPlaneName(plane->GetPlaneName());
    SetAttribute("SoftwareLatency", TimeValue(plane->GetSoftwareLatency()));
    SetAttribute("EndpointRate", DataRateValue(plane->GetEndpointRate()));
    m_fineBytes = plane->GetMaxPayloadBytes();
    m_overheadBytes = plane->GetPacketOverheadBytes();
}

Ptr<TransportPlane>
FlowTransportPlane::GetPacketPlane() const
{
    return m_packet;
}

void
FlowTransportPlane::SetTopology(Ptr<FlowTopology> topology)
{
    NS_LOG_FUNCTION(this << topology);
    NS_ABORT_MSG_UNLESS(m_paths.empty(), "FlowTransportPlane: SetTopology after the first flow");
    m_topology = topology;
}

Ptr<FlowTopology>
FlowTransportPlane::GetTopology() const
{
    return m_topology;
}

void
FlowTransportPlane::SetMessageCallbacks(MessageCallback firstIn,
                                        MessageCallback drained,
                                        MessageCallback delivered)
{
    m_firstIn = firstIn;
    m_drained = drained;
    m_delivered = delivered;
}

void
FlowTransportPlane::SetLocalRefill(bool local)
{
    m_localRefill = local;
    m_network->SetLocalRefill(local);
}

bool
FlowTransportPlane::GetLocalRefill() const
{
    return m_localRefill;
}

const FlowNetwork&
FlowTransportPlane::GetNetwork() const
{
    return *m_network;
}

bool
FlowTransportPlane::HasRank(uint32_t rank) const
{
    return m_packet->HasRank(rank);
}

bool
FlowTransportPlane::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    return m_packet->CanReach(srcRank, dstRank);
}

uint32_t
FlowTransportPlane::GetMaxPayloadBytes() const
{
    return m_packet->GetMaxPayloadBytes();
}

uint32_t
FlowTransportPlane::GetMaxBurstBytes() const
{
    return m_packet->GetMaxBurstBytes();
}

int64_t
FlowTransportPlane::GetNodeId(uint32_t rank) const
{
    return m_packet->GetNodeId(rank);
}

uint32_t
FlowTransportPlane::GetPacketOverheadBytes() const
{
    return m_packet->GetPacketOverheadBytes();
}

double
FlowTransportPlane::GetLineRate_gbyte_per_s(uint32_t rank) const
{
    return m_packet->GetLineRate_gbyte_per_s(rank);
}

bool
FlowTransportPlane::CanReduceInSwitch(const std::vector<uint32_t>& ranks) const
{
    return m_inSwitch && m_inSwitch->CanReduceInSwitch(ranks);
}

void
FlowTransportPlane::StartInSwitch(Op op,
                                  const std::vector<uint32_t>& ranks,
                                  uint64_t bytes,
                                  Callback<void, uint32_t> rankDone)
{
    NS_ABORT_MSG_UNLESS(m_inSwitch, "FlowTransportPlane: the packet plane does not reduce");
    auto nvlink = DynamicCast<NvLinkTransportPlane>(m_packet);
    if (!m_nvlsFlows || !nvlink)
    {
        m_inSwitch->StartInSwitch(op, ranks, bytes, rankDone);
        return;
    }
    if (!m_nvls)
    {
        m_nvls = std::make_unique<FlowNvls>(*this, *m_network, nvlink, m_topology);
    }
    m_nvls->Start(op, ranks, bytes, rankDone);
}

uint32_t
FlowTransportPlane::GetInSwitchInFlight() const
{
    return m_nvls ? m_nvls->GetNInFlight() : 0;
}

uint32_t
FlowTransportPlane::GetLinkOf(Ptr<CreditLinkNetDevice> device)
{
    return LinkOf(PacketPlaneFlowTopology::GetLinkKey(device),
                  PacketPlaneFlowTopology::GetWireRate_byte_per_s(device));
}

uint32_t
FlowTransportPlane::GetLinkOf(uint64_t key, double wire_byte_per_s)
{
    return LinkOf(key, wire_byte_per_s);
}

uint32_t
FlowTransportPlane::LinkOf(uint64_t key, double wire_byte_per_s)
{
    auto it = m_linkOf.find(key);
    if (it != m_linkOf.end())
    {
        return it->second;
    }
    const uint32_t link = m_network->AddLink(wire_byte_per_s);
    m_linkOf.emplace(key, link);
    return link;
}

const FlowTransportPlane::Path&
FlowTransportPlane::GetPath(uint32_t srcRank, uint32_t dstRank)
{
    const uint64_t key = uint64_t{srcRank} << 32 | dstRank;
    auto it = m_paths.find(key);
    if (it != m_paths.end())
    {
        return it->second;
    }
    NS_ABORT_MSG_UNLESS(m_topology,
                        "FlowTransportPlane: no topology (SetPacketPlane or SetTopology)");
    FlowTopology::Route route = m_topology->GetRoute(srcRank, dstRank);
    Path path;
    path.uses.reserve(route.uses.size());
    // In the order of the uses: the same network from every topology that gives them.
    for (const auto& u : route.uses)
    {
        path.uses.push_back({LinkOf(u.link, u.wire_byte_per_s), u.share});
    }
    path.hops = std::move(route.hops);
    return m_paths.emplace(key, std::move(path)).first->second;
}

std::vector<FlowNetwork::Use>
FlowTransportPlane::GetPathUses(uint32_t srcRank, uint32_t dstRank)
{
    return GetPath(srcRank, dstRank).uses;
}

double
FlowTransportPlane::GetWireBytes(uint64_t payloadBytes) const
{
    return WireBytes(payloadBytes);
}

double
FlowTransportPlane::WireBytes(uint64_t payloadBytes) const
{
    // One overhead per fine packet, as a burst costs its back-to-back fine packets; a
    // zero-byte message is one header-only packet.
    const uint64_t packets = std::max<uint64_t>(1, (payloadBytes + m_fineBytes - 1) / m_fineBytes);
    return double(payloadBytes) + double(packets) * m_overheadBytes;
}

Time
FlowTransportPlane::TailLatency(const Path& path, uint32_t payloadBytes) const
{
    // After the first link: propagation, each switch's traversal, and the packet again
    // after a store-and-forward switch, or from its cut-through header on (at the slower
    // of the two links).
    const double w = WireBytes(payloadBytes);
    double s = 0;
    for (std::size_t j = 0; j < path.hops.size(); ++j)
    {
        const Hop& h = path.hops[j];
        s += h.propagation.GetSeconds();
        if (j + 1 < path.hops.size())
        {
            const Hop& next = path.hops[j + 1];
            s += h.traversal.GetSeconds();
            if (h.cutThroughBytes == 0)
            {
                s += w / next.wire_byte_per_s;
            }
            else
            {
                s += h.cutThroughBytes / h.wire_byte_per_s +
                     std::max(0.0, w / next.wire_byte_per_s - w / h.wire_byte_per_s);
            }
        }
    }
    return NanoSeconds(static_cast<int64_t>(std::llround(s * 1e9)));
}

Time
FlowTransportPlane::FirstIn(const Path& path, uint32_t payloadBytes) const
{
    const double first = WireBytes(payloadBytes) / path.hops.front().wire_byte_per_s;
    return NanoSeconds(static_cast<int64_t>(std::llround(first * 1e9))) +
           TailLatency(path, payloadBytes);
}

Time
FlowTransportPlane::GetFirstPacketLatency(uint32_t srcRank, uint32_t dstRank, uint32_t payloadBytes)
{
    return FirstIn(GetPath(srcRank, dstRank), payloadBytes);
}

Time
FlowTransportPlane::GetTailLatency(uint32_t srcRank, uint32_t dstRank, uint32_t payloadBytes)
{
    return TailLatency(GetPath(srcRank, dstRank), payloadBytes);
}

void
FlowTransportPlane::StartMessage(uint32_t srcRank,
                                 uint32_t dstRank,
                                 uint64_t bytes,
                                 uint32_t packetBytes,
                                 uint64_t messageId,
                                 double weight)
{
    NS_LOG_FUNCTION(this << srcRank << dstRank << bytes << messageId << weight);
    const Pending p{srcRank, dstRank, bytes, packetBytes, messageId, weight};
    const uint64_t room = m_sourceQueue ? GetSourceQueueBytes(srcRank) : 0;
    if (bytes > room)
    {
        Launch(p, false); // bulk: interleaved packet by packet with the rank's others
        return;
    }
    Source& s = m_sources[uint64_t{srcRank} << 32 | dstRank];
    if (!s.busy)
    {
        s.busy = true;
        s.queuedBytes = bytes;
        Launch(p, true);
    }
    else if (s.queuedBytes + bytes <= room)
    {
        s.queuedBytes += bytes;
        s.waiting.push_back(p);
    }
    else
    {
        Launch(p, false);
    }
}

uint64_t
FlowTransportPlane::GetSourceQueueBytes(uint32_t srcRank)
{
    auto it = m_queueBytes.find(srcRank);
    if (it != m_queueBytes.end())
    {
        return it->second;
    }
    const uint64_t bytes = m_topology->GetSourceQueueBytes(srcRank);
    m_queueBytes.emplace(srcRank, bytes);
    return bytes;
}

void
FlowTransportPlane::Launch(const Pending& p, bool queued)
{
    const uint32_t srcRank = p.src;
    const uint32_t dstRank = p.dst;
    const uint64_t bytes = p.bytes;
    const uint32_t packetBytes = p.packetBytes;
    const uint64_t messageId = p.messageId;
    const Path& path = GetPath(srcRank, dstRank);
    const auto first = static_cast<uint32_t>(std::min<uint64_t>(bytes, packetBytes));
    Simulator::Schedule(FirstIn(path, first), [this, messageId]() { m_firstIn(messageId); });
    if (!queued && m_lastPacketInTurn)
    {
        LaunchBodyThenTail(p, path, first);
        return;
    }
    Move(
        path,
        bytes,
        first,
        [=]() {
            if (queued)
            {
                NextQueued(srcRank, dstRank, bytes);
            }
            m_drained(messageId);
        },
        [this, messageId]() { m_delivered(messageId); },
        p.weight);
}

void
FlowTransportPlane::Move(const Path& path,
                         uint64_t bytes,
                         uint32_t firstPacketBytes,
                         std::function<void()> drained,
                         std::function<void()> delivered,
                         double weight)
{
    const Time tail = TailLatency(path, firstPacketBytes);
    const Time firstInAt = Simulator::Now() + FirstIn(path, firstPacketBytes);
    m_network->Start(path.uses, WireBytes(bytes), weight, [=]() {
        if (drained)
        {
            drained();
        }
        // A message of few packets sprayed over several bundles drains faster than its first
        // packet crosses one bundle: it is in no earlier than that packet.
        const Time at = std::max(Simulator::Now() + tail, firstInAt);
        Simulator::Schedule(at - Simulator::Now(), delivered);
    });
}

void
FlowTransportPlane::LaunchBodyThenTail(const Pending& p,
                                       const Path& path,
                                       uint32_t firstPacketBytes)
{
    // The injector hands the rank's active messages one packet per turn: n equal messages
    // of k packets each put their first k - 1 packets on the wire interleaved (the fluid
    // share) and then their last packets one per turn, so they complete one packet apart
    // from ((k - 1) n + 1) packets on, not all at n k.
    const uint64_t packetBytes = std::max<uint32_t>(p.packetBytes, 1);
    const uint64_t packets = std::max<uint64_t>(1, (p.bytes + packetBytes - 1) / packetBytes);
    const uint64_t tailBytes = p.bytes - (packets - 1) * packetBytes;
    const uint64_t bodyBytes = p.bytes - tailBytes;
    const Tail tail{p.src,
                    p.dst,
                    tailBytes,
                    firstPacketBytes,
                    p.messageId,
                    Simulator::Now() + FirstIn(path, firstPacketBytes)};
    if (bodyBytes == 0)
    {
        QueueTail(tail);
        return;
    }
    // Whole packets of fine units: body and tail put exactly the message's wire bytes on.
    m_network->Start(path.uses, WireBytes(bodyBytes), p.weight, [this, tail]() {
        QueueTail(tail);
    });
}

void
FlowTransportPlane::QueueTail(const Tail& tail)
{
    TailTurns& turns = m_tails[uint64_t{tail.src} << 32 | tail.dst];
    if (turns.busy)
    {
        turns.waiting.push_back(tail);
        return;
    }
    turns.busy = true;
    StartTail(tail);
}

void
FlowTransportPlane::StartTail(const Tail& tail)
{
    const Path& path = GetPath(tail.src, tail.dst);
    const Time latency = TailLatency(path, tail.firstPacketBytes);
    m_network->Start(path.uses, WireBytes(tail.bytes), 1.0, [this, tail, latency]() {
        TailTurns& turns = m_tails[uint64_t{tail.src} << 32 | tail.dst];
        if (turns.waiting.empty())
        {
            turns.busy = false;
        }
        else
        {
            const Tail next = turns.waiting.front();
            turns.waiting.pop_front();
            StartTail(next);
        }
        m_drained(tail.messageId);
        const Time at = std::max(Simulator::Now() + latency, tail.firstInAt);
        const uint64_t id = tail.messageId;
        Simulator::Schedule(at - Simulator::Now(), [this, id]() { m_delivered(id); });
    });
}

void
FlowTransportPlane::NextQueued(uint32_t srcRank, uint32_t dstRank, uint64_t drainedBytes)
{
    Source& s = m_sources[uint64_t{srcRank} << 32 | dstRank];
    s.queuedBytes -= drainedBytes;
    if (s.waiting.empty())
    {
        s.busy = false;
        return;
    }
    const Pending next = s.waiting.front();
    s.waiting.pop_front();
    Launch(next, true);
}

bool
FlowTransportPlane::Inject(uint32_t srcRank,
                           uint32_t dstRank,
                           uint32_t payloadBytes,
                           const TransportTag& tag)
{
    Move(GetPath(srcRank, dstRank),
         payloadBytes,
         payloadBytes,
         nullptr,
         [this, srcRank, dstRank, payloadBytes, tag]() {
             NotifyDelivered(srcRank, dstRank, payloadBytes, tag);
         });
    return true;
}

void
FlowTransportPlane::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_nvls.reset();
    m_network.reset();
    m_packet = nullptr;
    m_topology = nullptr;
    m_inSwitch = nullptr;
    m_firstIn = MessageCallback();
    m_drained = MessageCallback();
    m_delivered = MessageCallback();
    TransportPlane::DoDispose();
}

} // namespace ns3
