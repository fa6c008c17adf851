/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-switch.h"

#include "credit-link-header.h"
#include "credit-link-watchdog.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <iostream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreditSwitch");

NS_OBJECT_ENSURE_REGISTERED(CreditSwitch);

TypeId
CreditSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CreditSwitch")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<CreditSwitch>()
            // On by default: switch ASICs queue a packet by its output inside the shared
            // input buffer (Mellanox's InfiniBand flit-level model, ib_flit_sim ibuf.h:
            // one queue per VL and output port; NVSwitch and shared-buffer Ethernet
            // likewise), so a packet for a busy output does not hold those behind it for
            // idle ones. False gives a FIFO per (input, VC) for head-of-line studies.
            .AddAttribute("VirtualOutputQueues",
                          "One FIFO per (input, VC, output) over the input's shared receive "
                          "buffer; false: one FIFO per (input, VC), with head-of-line blocking",
                          BooleanValue(true),
                          MakeBooleanAccessor(&CreditSwitch::m_voq),
                          MakeBooleanChecker())
            .AddAttribute("DropUnroutable",
                          "Drop (and count) a packet without a route instead of a fatal "
                          "error, as an InfiniBand switch drops a DLID its LFT lacks",
                          BooleanValue(true),
                          MakeBooleanAccessor(&CreditSwitch::m_dropUnroutable),
                          MakeBooleanChecker())
            .AddAttribute("TraversalLatency",
                          "Time from a packet's arrival (its head when cut-through) until it "
                          "may leave",
                          TimeValue(NanoSeconds(0)),
                          MakeTimeAccessor(&CreditSwitch::m_latency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Forwarding",
                          "Default (the technology's: store-and-forward here, cut-through "
                          "on NvSwitch and InfinibandSwitch), CutThrough or StoreAndForward",
                          EnumValue(FORWARDING_DEFAULT),
                          MakeEnumAccessor(&CreditSwitch::m_forwarding),
                          MakeEnumChecker(FORWARDING_DEFAULT,
                                          "Default",
                                          FORWARDING_CUT_THROUGH,
                                          "CutThrough",
                                          FORWARDING_STORE_AND_FORWARD,
                                          "StoreAndForward"))
            .AddAttribute("CutThroughBytes",
                          "Bytes of a packet that must be in before it is routed when "
                          "cut-through; 0 = the technology's routing header",
                          UintegerValue(0),
                          MakeUintegerAccessor(&CreditSwitch::m_cutThroughBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("Forward",
                            "A packet leaves its input buffer: (packet, in port, out port)",
                            MakeTraceSourceAccessor(&CreditSwitch::m_forwardTrace),
                            "ns3::CreditSwitch::ForwardTracedCallback")
            .AddTraceSource("Drop",
                            "A packet without a route is dropped: (packet, in port)",
                            MakeTraceSourceAccessor(&CreditSwitch::m_dropTrace),
                            "ns3::CreditSwitch::DropTracedCallback");
    return tid;
}

CreditSwitch::CreditSwitch()
    : m_voq(true),
      m_dropUnroutable(true),
      m_forwarding(FORWARDING_DEFAULT),
      m_cutThroughBytes(0),
      m_frozen(false),
      m_numVcs(0),
      m_adaptiveTurn(0),
      m_buffered(0),
      m_forwarded(0),
      m_dropped(0)
{
    NS_LOG_FUNCTION(this);
}

CreditSwitch::~CreditSwitch() = default;

void
CreditSwitch::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_ports.clear();
    m_pool.clear();
    m_queues.clear();
    m_nextReady.clear();
    m_ready.clear();
    m_pipeEvent.Cancel();
    m_pipe.clear();
    m_pipeWakeups.clear();
    m_watchdog = nullptr;
    m_routeCallback = RouteCallback();
    Object::DoDispose();
}

uint32_t
CreditSwitch::AddPort(Ptr<CreditLinkNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    NS_ABORT_MSG_IF(m_frozen, "CreditSwitch::AddPort after traffic reached the switch");
    const auto port = static_cast<uint32_t>(m_ports.size());
    m_ports.push_back(device);
    device->AttachToSwitch(this, port);
    return port;
}

uint32_t
CreditSwitch::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

Ptr<CreditLinkNetDevice>
CreditSwitch::GetPort(uint32_t port) const
{
    return m_ports.at(port);
}

uint32_t
CreditSwitch::GetPortIndex(Ptr<const NetDevice> device) const
{
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        if (PeekPointer(m_ports[i]) == PeekPointer(device))
        {
            return i;
        }
    }
    return GetNPorts();
}

void
CreditSwitch::SetRoute(uint32_t destination, const std::vector<uint32_t>& ports)
{
    NS_LOG_FUNCTION(this << destination << ports.size());
    NS_ABORT_MSG_IF(ports.empty(), "CreditSwitch::SetRoute: no port for " << destination);
    if (destination >= m_routes.size())
    {
        m_routes.resize(destination + 1);
    }
    m_routes[destination] = ports;
}

const std::vector<uint32_t>&
CreditSwitch::GetRoute(uint32_t destination) const
{
    static const std::vector<uint32_t> none;
    return destination < m_routes.size() ? m_routes[destination] : none;
}

void
CreditSwitch::ClearRoutes()
{
    NS_LOG_FUNCTION(this);
    m_routes.clear();
}

void
CreditSwitch::SetRouteCallback(RouteCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_routeCallback = cb;
}

void
CreditSwitch::SetWatchdog(Ptr<CreditLinkWatchdog> watchdog)
{
    NS_LOG_FUNCTION(this << watchdog);
    m_watchdog = watchdog;
}

Ptr<CreditLinkWatchdog>
CreditSwitch::GetWatchdog() const
{
    return m_watchdog;
}

uint64_t
CreditSwitch::GetHeldPackets() const
{
    return 0;
}

int64_t
CreditSwitch::GetNetAbsorbedPackets() const
{
    return 0;
}

uint64_t
CreditSwitch::GetDroppedPackets() const
{
    return m_dropped;
}

uint64_t
CreditSwitch::GetDroppedPackets(uint32_t port) const
{
    return port < m_droppedByPort.size() ? m_droppedByPort[port] : 0;
}

const std::string&
CreditSwitch::GetFirstDropReason() const
{
    return m_firstDropReason;
}

bool
CreditSwitch::DefaultCutThrough() const
{
    return false;
}

uint32_t
CreditSwitch::DefaultCutThroughBytes() const
{
    return CreditLinkHeader::SIZE_BYTES;
}

uint32_t
CreditSwitch::GetCutThroughBytes() const
{
    const bool cutThrough = m_forwarding == FORWARDING_DEFAULT
                                ? DefaultCutThrough()
                                : m_forwarding == FORWARDING_CUT_THROUGH;
    if (!cutThrough)
    {
        return 0;
    }
    return m_cutThroughBytes != 0 ? m_cutThroughBytes : DefaultCutThroughBytes();
}

uint64_t
CreditSwitch::GetBufferedPackets() const
{
    return m_buffered;
}

uint64_t
CreditSwitch::GetPeakBytesForOutput(uint32_t port) const
{
    return port < m_peakBytesForOutput.size() ? m_peakBytesForOutput[port] : 0;
}

uint64_t
CreditSwitch::GetForwardedPackets() const
{
    return m_forwarded;
}

uint32_t
CreditSwitch::ExtractDestination(Ptr<const Packet> packet) const
{
    CreditLinkHeader header;
    NS_ABORT_MSG_IF(packet->GetSize() < CreditLinkHeader::SIZE_BYTES,
                    "CreditSwitch: packet of " << packet->GetSize()
                                               << " B carries no CreditLinkHeader");
    packet->PeekHeader(header);
    return header.GetDestination();
}

void
CreditSwitch::OnForward(Ptr<const Packet> /* packet */,
                        uint32_t /* inPort */,
                        uint32_t /* outPort */)
{
}

uint32_t
CreditSwitch::Route(Ptr<const Packet> packet, uint32_t inPort, uint32_t vc)
{
    if (!m_routeCallback.IsNull())
    {
        return m_routeCallback(packet, inPort, vc);
    }
    return RouteTo(ExtractDestination(packet), inPort);
}

uint32_t
CreditSwitch::RouteTo(uint32_t destination, uint32_t inPort)
{
    if (destination >= m_routes.size() || m_routes[destination].empty())
    {
        Ptr<Node> node = m_ports[inPort]->GetNode();
        NS_ABORT_MSG_UNLESS(m_dropUnroutable,
                            "CreditSwitch on node " << (node ? node->GetId() : 0)
                                                    << ": no route for destination "
                                                    << destination);
        return NO_ROUTE;
    }
    const std::vector<uint32_t>& candidates = m_routes[destination];
    if (candidates.size() == 1)
    {
        return candidates[0];
    }
    // Least bytes waiting for the port; ties rotate so idle candidates share the load.
    const std::size_t n = candidates.size();
    const std::size_t start = m_adaptiveTurn++ % n;
    uint32_t best = candidates[start];
    for (std::size_t i = 1; i < n; ++i)
    {
        const uint32_t c = candidates[(start + i) % n];
        if (m_bytesForOutput[c] < m_bytesForOutput[best])
        {
            best = c;
        }
    }
    return best;
}

uint32_t
CreditSwitch::SelectOutputVc(Ptr<const Packet> packet,
                             uint32_t inPort,
                             uint32_t inVc,
                             uint32_t outPort)
{
    return inVc;
}

void
CreditSwitch::Freeze()
{
    NS_LOG_FUNCTION(this);
    m_frozen = true;
    for (const auto& port : m_ports)
    {
        m_numVcs = std::max(m_numVcs, port->GetNumVcs());
    }
    const std::size_t k = m_ports.size();
    m_queues.resize(k * m_numVcs * (m_voq ? k : 1));
    m_nextReady.assign(m_queues.size(), NIL);
    m_ready.resize(k * m_numVcs);
    m_bytesForOutput.assign(k, 0);
    m_peakBytesForOutput.assign(k, 0);
    m_droppedByPort.assign(k, 0);
    NS_LOG_LOGIC("frozen: " << k << " ports, " << m_numVcs << " VCs, " << m_queues.size()
                            << (m_voq ? " virtual output queues" : " input queues")
                            << ", cut-through after " << GetCutThroughBytes() << " B");
}

uint32_t
CreditSwitch::QueueIndex(uint32_t inPort, uint32_t inVc, uint32_t outPort) const
{
    const uint32_t fifo = inPort * m_numVcs + (inVc & ~NO_INPUT_BUFFER);
    return m_voq ? fifo * GetNPorts() + outPort : fifo;
}

uint32_t
CreditSwitch::RingIndex(uint32_t outPort, uint32_t outVc) const
{
    return outPort * m_numVcs + outVc;
}

void
CreditSwitch::ReceiveFromPort(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    Forward(inPort, packet, vc, tail, true);
}

void
CreditSwitch::ForwardCopy(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    Forward(inPort, packet, vc, tail, false);
}

void
CreditSwitch::Forward(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail, bool holdsInput)
{
    if (!m_frozen)
    {
        Freeze();
    }
    const uint32_t out = Route(packet, inPort, vc);
    if (out == NO_ROUTE)
    {
        Drop(inPort,
             packet,
             vc,
             "no route for destination " + std::to_string(ExtractDestination(packet)));
        return;
    }
    Enter(inPort, packet, vc, tail, holdsInput, out);
}

void
CreditSwitch::ForwardTo(uint32_t inPort,
                        Ptr<Packet> packet,
                        uint32_t vc,
                        Time tail,
                        bool holdsInput,
                        uint32_t destination)
{
    if (!m_frozen)
    {
        Freeze();
    }
    const uint32_t out = RouteTo(destination, inPort);
    if (out == NO_ROUTE)
    {
        Drop(inPort, packet, vc, "no route for destination " + std::to_string(destination));
        return;
    }
    Enter(inPort, packet, vc, tail, holdsInput, out);
}

void
CreditSwitch::Enter(uint32_t inPort,
                    Ptr<Packet> packet,
                    uint32_t vc,
                    Time tail,
                    bool holdsInput,
                    uint32_t out)
{
    NS_ABORT_MSG_IF(out >= m_ports.size(),
                    "CreditSwitch: route gave port " << out << " of " << m_ports.size());
    const uint32_t outVc = SelectOutputVc(packet, inPort, vc, out);
    NS_ABORT_MSG_IF(outVc >= m_ports[out]->GetNumVcs(),
                    "CreditSwitch: output VC " << outVc << " >= NumVcs of port " << out);
    const uint32_t bytes = packet->GetSize();
    const Ptr<CreditLinkNetDevice> outDevice = m_ports[out];
    NS_ABORT_MSG_IF(outDevice->GetInitialCredits(outVc) != 0 &&
                        outDevice->CreditsFor(bytes) > outDevice->GetInitialCredits(outVc),
                    "CreditSwitch: packet of " << bytes << " B can never pass "
                                               << outDevice->GetLinkName() << " VC " << outVc
                                               << ": the next ReceiveBufferBytes is smaller");
    m_buffered++;
    m_bytesForOutput[out] += bytes;
    m_peakBytesForOutput[out] = std::max(m_peakBytesForOutput[out], m_bytesForOutput[out]);
    if (m_watchdog)
    {
        m_watchdog->Arm();
    }
    Entry entry{packet,
                tail,
                inPort,
                out,
                bytes,
                static_cast<uint16_t>(holdsInput ? vc : vc | NO_INPUT_BUFFER),
                static_cast<uint16_t>(outVc)};
    if (m_latency.IsZero())
    {
        Enqueue(std::move(entry));
        return;
    }
    // Fixed latency: ready times follow arrival order, so one FIFO holds the packets of
    // every input.  No event per packet: a port calls Advance before it acts, and an
    // output sending data acts at its transmit-complete, then NotifyPortIdle asks for
    // the wake-ups of its packets if it has nothing to send.
    const Time ready = Simulator::Now() + m_latency;
    m_pipe.emplace_back(ready, std::move(entry));
    if (!outDevice->IsSendingData())
    {
        AddPipeWakeup(ready);
    }
}

void
CreditSwitch::Drop(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, const std::string& reason)
{
    NS_LOG_FUNCTION(this << inPort << packet << vc);
    const Ptr<CreditLinkNetDevice> in = m_ports[inPort];
    if (m_dropped == 0)
    {
        // Never a silent loss: the first drop of each switch is printed, all are counted.
        m_firstDropReason = reason;
        std::cerr << "CreditSwitch: dropped a packet from link "
                  << (in->GetPeer() ? in->GetPeer() : in)->GetLinkName() << " vc " << vc << ": "
                  << reason << " (further drops of this switch only counted)\n";
    }
    NS_LOG_WARN("drop from " << in->GetLinkName() << " vc " << vc << ": " << reason);
    m_dropped++;
    m_droppedByPort[inPort]++;
    m_dropTrace(packet, inPort);
    in->ReleaseReceiveBuffer(vc, packet->GetSize());
}

void
CreditSwitch::NotifyPortIdle(uint32_t outPort)
{
    for (const auto& [ready, entry] : m_pipe)
    {
        if (entry.outPort == outPort)
        {
            AddPipeWakeup(ready);
        }
    }
}

void
CreditSwitch::AddPipeWakeup(Time ready)
{
    m_pipeWakeups.insert(ready);
    if (!m_pipeEventPending || ready < m_pipeEventTime)
    {
        if (m_pipeEventPending)
        {
            m_pipeEvent.Cancel();
        }
        m_pipeEventPending = true;
        m_pipeEventTime = ready;
        m_pipeEvent =
            Simulator::Schedule(ready - Simulator::Now(), &CreditSwitch::PipeWakeup, this);
    }
}

void
CreditSwitch::PipeWakeup()
{
    m_pipeEventPending = false;
    const Time now = Simulator::Now();
    m_pipeWakeups.erase(m_pipeWakeups.begin(), m_pipeWakeups.upper_bound(now));
    Advance();
    if (!m_pipeWakeups.empty() && !m_pipeEventPending)
    {
        m_pipeEventPending = true;
        m_pipeEventTime = *m_pipeWakeups.begin();
        m_pipeEvent = Simulator::Schedule(m_pipeEventTime - now, &CreditSwitch::PipeWakeup, this);
    }
}

void
CreditSwitch::Advance()
{
    if (m_pipe.empty() || m_advancing)
    {
        return;
    }
    const Time now = Simulator::Now();
    // Enqueue wakes output ports, which call back here: they see the packets moved so
    // far, as they would between two events of the same instant.
    m_advancing = true;
    Time sorted = Time::Min(); // start of the run of equal ready times already sorted
    while (!m_pipe.empty() && m_pipe.front().first <= now)
    {
        // Packets ready in the same instant arrived in the same instant (fixed latency), all
        // before it, but in event order, which ns-3's distributed simulator gives otherwise
        // for packets from another process: they enter by input port and VC instead, so an
        // idle output takes the same one and its ring holds them in the same order.
        const Time ready = m_pipe.front().first;
        if (ready != sorted && m_pipe.size() > 1 && m_pipe[1].first == ready)
        {
            sorted = ready;
            auto end = m_pipe.begin() + 2;
            while (end != m_pipe.end() && end->first == ready)
            {
                ++end;
            }
            std::stable_sort(m_pipe.begin(), end, [](const auto& a, const auto& b) {
                return a.second.inPort != b.second.inPort ? a.second.inPort < b.second.inPort
                                                          : a.second.inVc < b.second.inVc;
            });
        }
        Entry entry = std::move(m_pipe.front().second);
        m_pipe.pop_front();
        Enqueue(std::move(entry));
    }
    m_advancing = false;
}

void
CreditSwitch::Enqueue(Entry&& entry)
{
    const uint32_t q = QueueIndex(entry.inPort, entry.inVc, entry.outPort);
    const uint32_t out = entry.outPort;
    const uint32_t outVc = entry.outVc;
    uint32_t node = m_freeNode;
    if (node == NIL)
    {
        node = static_cast<uint32_t>(m_pool.size());
        m_pool.push_back(PoolNode{std::move(entry), NIL});
    }
    else
    {
        m_freeNode = m_pool[node].next;
        m_pool[node] = PoolNode{std::move(entry), NIL};
    }
    Fifo& queue = m_queues[q];
    if (queue.head != NIL)
    {
        m_pool[queue.tail].next = node;
        queue.tail = node;
        return;
    }
    queue.head = queue.tail = node;
    PushReady(RingIndex(out, outVc), q);
    m_ports[out]->NotifyDataAvailable(outVc);
}

void
CreditSwitch::PushReady(uint32_t ring, uint32_t q)
{
    Ring& r = m_ready[ring];
    m_nextReady[q] = NIL;
    if (r.head == NIL)
    {
        r.head = r.tail = q;
        r.headBytes = m_pool[m_queues[q].head].entry.bytes;
    }
    else
    {
        m_nextReady[r.tail] = q;
        r.tail = q;
    }
}

uint32_t
CreditSwitch::PeekHeadBytes(uint32_t outPort, uint32_t outVc) const
{
    return m_frozen ? m_ready[RingIndex(outPort, outVc)].headBytes : 0;
}

Ptr<Packet>
CreditSwitch::Dequeue(uint32_t outPort, uint32_t outVc, Time& tail)
{
    Ring& ring = m_ready[RingIndex(outPort, outVc)];
    NS_ABORT_MSG_IF(ring.head == NIL, "CreditSwitch::Dequeue with nothing for port " << outPort);
    const uint32_t q = ring.head;
    ring.head = m_nextReady[q];
    if (ring.head == NIL)
    {
        ring.tail = NIL;
        ring.headBytes = 0;
    }
    else
    {
        ring.headBytes = m_pool[m_queues[ring.head].head].entry.bytes;
    }
    Fifo& queue = m_queues[q];
    const uint32_t node = queue.head;
    Entry entry = std::move(m_pool[node].entry);
    queue.head = m_pool[node].next;
    m_pool[node].next = m_freeNode;
    m_freeNode = node;
    m_buffered--;
    m_forwarded++;
    m_bytesForOutput[outPort] -= entry.bytes;
    if (queue.head != NIL)
    {
        // Back of the ring it now belongs to: round-robin among inputs.
        const Entry& head = m_pool[queue.head].entry;
        const uint32_t headOut = head.outPort;
        const uint32_t headVc = head.outVc;
        PushReady(RingIndex(headOut, headVc), q);
        if (headOut != outPort || headVc != outVc)
        {
            m_ports[headOut]->NotifyDataAvailable(headVc);
        }
    }
    else
    {
        queue.tail = NIL;
    }
    OnForward(entry.packet, entry.inPort, outPort);
    m_forwardTrace(entry.packet, entry.inPort, outPort);
    // Released as the output starts, also before a cut-through packet's tail is in (the
    // upstream is still sending it, so its credits cannot be used earlier than that).
    if ((entry.inVc & NO_INPUT_BUFFER) == 0)
    {
        m_ports[entry.inPort]->ReleaseReceiveBuffer(entry.inVc, entry.bytes);
    }
    tail = entry.tail;
    return entry.packet;
}

} // namespace ns3
