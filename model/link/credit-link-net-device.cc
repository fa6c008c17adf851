/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// One class, over 800 lines on purpose: configuration, transmit (VC arbitration, credit
// checks, frame timing, cut-through tails), receive (credit return, switch hand-off) and the
// ns-3 NetDevice interface all read and write the same per-VC state on every packet, and
// splitting them across files would only hide that sharing.  What stands on its own lives
// beside it: InstantEndScheduler, ReceiveDrain, ReusableEvent, CreditArbiter, WireTiming.
#include "credit-link-net-device.h"

#include "credit-link-header.h"
#include "credit-link-watchdog.h"
#include "credit-switch.h"
#include "instant-end-scheduler.h"
#include "link-flow-control.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreditLinkNetDevice");

NS_OBJECT_ENSURE_REGISTERED(CreditLinkNetDevice);

TypeId
CreditLinkNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CreditLinkNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("AiFabric")
            .AddConstructor<CreditLinkNetDevice>()
            .AddAttribute("NumVcs",
                          "Number of virtual channels (1-32); both ends must agree",
                          UintegerValue(1),
                          MakeUintegerAccessor(&CreditLinkNetDevice::SetNumVcs,
                                               &CreditLinkNetDevice::GetNumVcs),
                          MakeUintegerChecker<uint32_t>(1, 32))
            .AddAttribute("TxQueueBytes",
                          "Bound of each VC's transmit queue; a Send beyond it is refused",
                          UintegerValue(1 << 20),
                          MakeUintegerAccessor(&CreditLinkNetDevice::m_txQueueBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("ReceiveBufferBytes",
                          "Receive buffer of every VC; the peer's initial credits",
                          UintegerValue(65536),
                          MakeUintegerAccessor(&CreditLinkNetDevice::SetReceiveBufferAll,
                                               &CreditLinkNetDevice::GetReceiveBufferAll),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("CreditUnitBytes",
                          "Bytes of receive buffer one credit stands for (InfiniBand: 64)",
                          UintegerValue(64),
                          MakeUintegerAccessor(&CreditLinkNetDevice::m_creditUnitBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("DataRate",
                          "Signalling rate; frames get DataRate x EncodingEfficiency",
                          DataRateValue(DataRate("100Gbps")),
                          MakeDataRateAccessor(&CreditLinkNetDevice::SetDataRate,
                                               &CreditLinkNetDevice::GetDataRate),
                          MakeDataRateChecker())
            .AddAttribute("EncodingEfficiency",
                          "Share of the signalling rate left to frames by line coding",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&CreditLinkNetDevice::SetEncodingEfficiency,
                                             &CreditLinkNetDevice::GetEncodingEfficiency),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("OverheadBytes",
                          "Wire bytes per data packet beyond the packet (framing, link CRC)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&CreditLinkNetDevice::m_overheadBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FlowControlFrameBytes",
                          "Wire bytes of one per-VC flow-control frame (InfiniBand: 6)",
                          UintegerValue(6),
                          MakeUintegerAccessor(&CreditLinkNetDevice::m_fcFrameBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("CreditUpdatePolicy",
                          "When released receive buffer is reported to the peer",
                          EnumValue(CREDIT_UPDATE_IMMEDIATE),
                          MakeEnumAccessor(&CreditLinkNetDevice::m_creditPolicy),
                          MakeEnumChecker(CREDIT_UPDATE_IMMEDIATE,
                                          "Immediate",
                                          CREDIT_UPDATE_PERIODIC,
                                          "Periodic"))
            .AddAttribute("CreditUpdateInterval",
                          "Minimum time between flow-control frames with policy Periodic",
                          TimeValue(NanoSeconds(100)),
                          MakeTimeAccessor(&CreditLinkNetDevice::m_creditInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("ReceiveDrainRate",
                          "Rate at which a host consumes received packets; 0 = at once",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&CreditLinkNetDevice::SetReceiveDrainRate,
                                               &CreditLinkNetDevice::GetReceiveDrainRate),
                          MakeDataRateChecker())
            .AddAttribute("Mtu",
                          "Largest packet Send accepts, bytes",
                          UintegerValue(4096 + 128),
                          MakeUintegerAccessor(&CreditLinkNetDevice::m_mtu),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("InstantEndDecisions",
                          "Start frames only after every event of the instant, devices in "
                          "(node, interface) order, so that the order of same-time events "
                          "(another one for events from other processes in ns-3's "
                          "distributed simulator) does not change results; one event per "
                          "busy instant.  DistributedRun::Enable turns it on under mpirun",
                          BooleanValue(false),
                          MakeBooleanAccessor(&CreditLinkNetDevice::m_instantEndDecisions),
                          MakeBooleanChecker())
            .AddAttribute("Arbiter",
                          "VC arbiter; a RoundRobinArbiter when unset",
                          PointerValue(),
                          MakePointerAccessor(&CreditLinkNetDevice::m_arbiter),
                          MakePointerChecker<CreditArbiter>())
            .AddAttribute("FlowControl",
                          "Flow-control discipline other than credits (a LinkFlowControl, "
                          "e.g. ns3::PriorityFlowControl); unset = credits.  One per device",
                          PointerValue(),
                          MakePointerAccessor(&CreditLinkNetDevice::m_flowControl),
                          MakePointerChecker<LinkFlowControl>())
            .AddTraceSource("TxBegin",
                            "A data packet starts on the wire",
                            MakeTraceSourceAccessor(&CreditLinkNetDevice::m_txBeginTrace),
                            "ns3::CreditLinkNetDevice::PacketVcTracedCallback")
            .AddTraceSource("TxEnd",
                            "A data packet's last bit left",
                            MakeTraceSourceAccessor(&CreditLinkNetDevice::m_txEndTrace),
                            "ns3::CreditLinkNetDevice::PacketVcTracedCallback")
            .AddTraceSource("Rx",
                            "A data packet received: fully, or on a cut-through switch port "
                            "once its head is in",
                            MakeTraceSourceAccessor(&CreditLinkNetDevice::m_rxTrace),
                            "ns3::CreditLinkNetDevice::PacketVcTracedCallback")
            .AddTraceSource("QueueLength",
                            "Transmit queue bytes of a VC after a change",
                            MakeTraceSourceAccessor(&CreditLinkNetDevice::m_queueLengthTrace),
                            "ns3::CreditLinkNetDevice::VcBytesTracedCallback")
            .AddTraceSource(
                "CreditStallBegin",
                "A VC's head packet waits for credits (its own previous packet is off the wire)",
                MakeTraceSourceAccessor(&CreditLinkNetDevice::m_creditStallBeginTrace),
                "ns3::CreditLinkNetDevice::VcTracedCallback")
            .AddTraceSource("CreditStallEnd",
                            "A VC's head packet is covered again; with the stall duration",
                            MakeTraceSourceAccessor(&CreditLinkNetDevice::m_creditStallEndTrace),
                            "ns3::CreditLinkNetDevice::VcTimeTracedCallback")
            .AddTraceSource("Backpressure",
                            "Send refused a packet because its VC queue is full",
                            MakeTraceSourceAccessor(&CreditLinkNetDevice::m_backpressureTrace),
                            "ns3::CreditLinkNetDevice::PacketVcTracedCallback")
            .AddTraceSource("CreditUpdate",
                            "A flow-control frame returns credits on a VC",
                            MakeTraceSourceAccessor(&CreditLinkNetDevice::m_creditUpdateTrace),
                            "ns3::CreditLinkNetDevice::VcCreditsTracedCallback");
    return tid;
}

CreditLinkNetDevice::CreditLinkNetDevice()
    : m_numVcs(1),
      m_txQueueBytes(1 << 20),
      m_creditUnitBytes(64),
      m_signallingRate(DataRate("100Gbps")),
      m_encodingEfficiency(1.0),
      m_overheadBytes(0),
      m_fcFrameBytes(6),
      m_creditPolicy(CREDIT_UPDATE_IMMEDIATE),
      m_mtu(4096 + 128),
      m_vcs(1),
      m_creditsReady(false),
      m_busy(false),
      m_currentVc(0),
      m_pendingFcMask(0),
      m_lastFcTime(Seconds(-1)),
      m_peerCutThroughBytes(0),
      m_ownQueueBytes(0),
      m_linkStalled(false),
      m_address(Mac48Address::Allocate()),
      m_ifIndex(0),
      m_switchPort(0)
{
    NS_LOG_FUNCTION(this);
    m_txComplete.Bind(&CreditLinkNetDevice::TransmitComplete, this);
    m_drain.SetConsumeCallback(MakeCallback(&CreditLinkNetDevice::Consume, this));
}

void
CreditLinkNetDevice::RequestDecision()
{
    // The Ptr in the step keeps the device until its decision, as a pending frame would.
    InstantEndScheduler::Get().Add(
        InstantEndScheduler::DeviceKey(m_node ? m_node->GetId() : 0, m_ifIndex),
        MakeCallback(&CreditLinkNetDevice::DecideAtInstantEnd, Ptr<CreditLinkNetDevice>(this)));
}

void
CreditLinkNetDevice::DecideAtInstantEnd()
{
    if (!m_channel)
    {
        NS_LOG_LOGIC("instant-end decision of a disposed device skipped");
        return;
    }
    if (m_switch)
    {
        m_switch->Advance();
    }
    m_deciding = true;
    TryTransmit();
    m_deciding = false;
    if (m_switch && !m_busy)
    {
        m_switch->NotifyPortIdle(m_switchPort);
    }
}

CreditLinkNetDevice::~CreditLinkNetDevice() = default;

void
CreditLinkNetDevice::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_txComplete.Cancel();
    m_fcTimer.Cancel();
    m_wakeup.Cancel();
    m_resumeWakeup.Cancel();
    if (m_flowControl)
    {
        m_flowControl->Dispose();
        m_flowControl = nullptr;
    }
    m_drain.Clear();
    m_vcs.clear();
    m_heldFlowControl.clear();
    m_current = nullptr;
    m_channel = nullptr;
    m_node = nullptr;
    m_switch = nullptr;
    m_watchdog = nullptr;
    m_arbiter = nullptr;
    m_rxCallback = NetDevice::ReceiveCallback();
    m_promiscCallback = NetDevice::PromiscReceiveCallback();
    m_txReadyCallback = TxReadyCallback();
    m_classifyCallback = ClassifyCallback();
    NetDevice::DoDispose();
}

void
CreditLinkNetDevice::DoInitialize()
{
    NS_LOG_FUNCTION(this);
    EnsureCredits();
    NetDevice::DoInitialize();
}

void
CreditLinkNetDevice::SetNumVcs(uint32_t n)
{
    NS_LOG_FUNCTION(this << n);
    NS_ABORT_MSG_IF(m_creditsReady, "CreditLinkNetDevice NumVcs changed after traffic started");
    const uint32_t buffer = m_vcs.empty() ? 0 : m_vcs[0].receiveBufferBytes;
    m_numVcs = n;
    m_vcs.resize(n);
    for (auto& v : m_vcs)
    {
        v.receiveBufferBytes = buffer;
    }
}

uint32_t
CreditLinkNetDevice::GetNumVcs() const
{
    return m_numVcs;
}

void
CreditLinkNetDevice::SetDataRate(DataRate signallingRate)
{
    NS_LOG_FUNCTION(this << signallingRate);
    m_signallingRate = signallingRate;
    m_clock.SetRate(m_signallingRate, m_encodingEfficiency);
}

DataRate
CreditLinkNetDevice::GetDataRate() const
{
    return m_signallingRate;
}

void
CreditLinkNetDevice::SetEncodingEfficiency(double efficiency)
{
    NS_LOG_FUNCTION(this << efficiency);
    NS_ABORT_MSG_IF(efficiency <= 0.0 || efficiency > 1.0,
                    "CreditLinkNetDevice EncodingEfficiency must be in (0, 1], got " << efficiency);
    m_encodingEfficiency = efficiency;
    m_clock.SetRate(m_signallingRate, m_encodingEfficiency);
}

double
CreditLinkNetDevice::GetEncodingEfficiency() const
{
    return m_encodingEfficiency;
}

void
CreditLinkNetDevice::SetReceiveBufferAll(uint32_t bytes)
{
    NS_LOG_FUNCTION(this << bytes);
    for (auto& v : m_vcs)
    {
        v.receiveBufferBytes = bytes;
    }
}

uint32_t
CreditLinkNetDevice::GetReceiveBufferAll() const
{
    return m_vcs.empty() ? 0 : m_vcs[0].receiveBufferBytes;
}

void
CreditLinkNetDevice::SetReceiveDrainRate(DataRate rate)
{
    NS_LOG_FUNCTION(this << rate);
    m_drain.SetRate(rate);
}

DataRate
CreditLinkNetDevice::GetReceiveDrainRate() const
{
    return m_drain.GetRate();
}

void
CreditLinkNetDevice::SetReceiveBufferBytes(uint32_t vc, uint32_t bytes)
{
    NS_LOG_FUNCTION(this << vc << bytes);
    NS_ABORT_MSG_IF(vc >= m_numVcs, "ReceiveBufferBytes: VC " << vc << " >= NumVcs " << m_numVcs);
    m_vcs[vc].receiveBufferBytes = bytes;
}

uint32_t
CreditLinkNetDevice::GetReceiveBufferBytes(uint32_t vc) const
{
    NS_ABORT_MSG_IF(vc >= m_numVcs,
                    "CreditLinkNetDevice: VC " << vc << " >= NumVcs " << m_numVcs
                                               << " (both ends of a link need the same NumVcs)");
    return m_vcs[vc].receiveBufferBytes;
}

uint32_t
CreditLinkNetDevice::GetCreditUnitBytes() const
{
    return m_creditUnitBytes;
}

uint32_t
CreditLinkNetDevice::CreditsFor(uint32_t packetBytes) const
{
    return (packetBytes + m_creditUnitBytes - 1) / m_creditUnitBytes;
}

uint32_t
CreditLinkNetDevice::GetCredits(uint32_t vc) const
{
    return m_vcs.at(vc).credits;
}

uint32_t
CreditLinkNetDevice::GetInitialCredits(uint32_t vc) const
{
    return m_vcs.at(vc).initialCredits;
}

uint64_t
CreditLinkNetDevice::GetQueueBytes(uint32_t vc) const
{
    return m_vcs.at(vc).queueBytes;
}

uint32_t
CreditLinkNetDevice::GetReceiveOccupancy(uint32_t vc) const
{
    return m_vcs.at(vc).rxOccupiedCredits;
}

uint32_t
CreditLinkNetDevice::GetPendingCreditReturn(uint32_t vc) const
{
    return m_vcs.at(vc).pendingCreditReturn;
}

uint64_t
CreditLinkNetDevice::GetReceiveDiscards() const
{
    return 0;
}

const CreditLinkNetDevice::Counters&
CreditLinkNetDevice::GetCounters() const
{
    return m_counters;
}

const SerializationClock&
CreditLinkNetDevice::GetClock() const
{
    return m_clock;
}

Ptr<CreditLinkNetDevice>
CreditLinkNetDevice::GetPeer() const
{
    return m_channel ? m_channel->GetPeer(this) : nullptr;
}

std::string
CreditLinkNetDevice::GetLinkName() const
{
    std::ostringstream os;
    os << "n" << (m_node ? m_node->GetId() : 0) << "/" << m_ifIndex;
    if (m_channel && m_channel->GetNDevices() == 2)
    {
        Ptr<CreditLinkNetDevice> peer = GetPeer();
        os << "-n" << (peer->GetNode() ? peer->GetNode()->GetId() : 0) << "/" << peer->GetIfIndex();
    }
    return os.str();
}

bool
CreditLinkNetDevice::Attach(Ptr<CreditLinkChannel> channel)
{
    NS_LOG_FUNCTION(this << channel);
    m_channel = channel;
    m_channel->Attach(this);
    return true;
}

void
CreditLinkNetDevice::EnsureCredits()
{
    if (m_creditsReady || !m_channel || m_channel->GetNDevices() != 2)
    {
        return;
    }
    NS_LOG_FUNCTION(this);
    Ptr<CreditLinkNetDevice> peer = GetPeer();
    NS_ABORT_MSG_IF(peer->GetNumVcs() != m_numVcs,
                    "CreditLinkNetDevice NumVcs differ across link "
                        << GetLinkName() << ": " << m_numVcs << " vs " << peer->GetNumVcs());
    NS_ABORT_MSG_IF(peer->GetCreditUnitBytes() != m_creditUnitBytes,
                    "CreditLinkNetDevice CreditUnitBytes differ across link " << GetLinkName());
    for (uint32_t vc = 0; vc < m_numVcs; ++vc)
    {
        Vc& v = m_vcs[vc];
        v.initialCredits = m_channel->GetPeerReceiveBufferBytes(this, vc) / m_creditUnitBytes;
        v.credits = v.initialCredits;
    }
    m_peerCutThroughBytes = m_channel->GetPeerCutThroughBytes(this);
    if (!m_arbiter)
    {
        m_arbiter = CreateObject<RoundRobinArbiter>();
    }
    m_creditsReady = true;
    if (m_flowControl)
    {
        const std::string error = m_flowControl->Setup(this);
        NS_ABORT_MSG_IF(!error.empty(), error);
    }
    NS_LOG_LOGIC("link up " << GetLinkName() << ": " << m_numVcs << " VCs, "
                            << m_vcs[0].initialCredits << " credits of " << m_creditUnitBytes
                            << " B on VC 0, peer cut-through after " << m_peerCutThroughBytes
                            << " B, arbiter " << m_arbiter->GetInstanceTypeId().GetName());
}

void
CreditLinkNetDevice::SetTxReadyCallback(TxReadyCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_txReadyCallback = cb;
}

void
CreditLinkNetDevice::SetClassifyCallback(ClassifyCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_classifyCallback = cb;
}

void
CreditLinkNetDevice::AttachToSwitch(Ptr<CreditSwitch> sw, uint32_t port)
{
    NS_LOG_FUNCTION(this << sw << port);
    m_switch = sw;
    m_switchPort = port;
}

Ptr<CreditSwitch>
CreditLinkNetDevice::GetSwitch() const
{
    return m_switch;
}

void
CreditLinkNetDevice::SetWatchdog(Ptr<CreditLinkWatchdog> watchdog)
{
    NS_LOG_FUNCTION(this << watchdog);
    m_watchdog = watchdog;
}

Ptr<CreditLinkWatchdog>
CreditLinkNetDevice::GetWatchdog() const
{
    return m_watchdog;
}

bool
CreditLinkNetDevice::SendOnVc(Ptr<Packet> packet, uint32_t vc)
{
    NS_ABORT_MSG_IF(vc >= m_numVcs, "SendOnVc: VC " << vc << " >= NumVcs " << m_numVcs);
    NS_ABORT_MSG_IF(m_switch,
                    "SendOnVc on switch port " << GetLinkName() << ": the switch feeds it");
    EnsureCredits();
    const uint32_t size = packet->GetSize();
    NS_ABORT_MSG_IF(size > GetMaxPacketBytes(),
                    "packet of " << size << " B exceeds Mtu " << GetMaxPacketBytes());
    NS_ABORT_MSG_IF(size > m_txQueueBytes,
                    "packet of " << size << " B exceeds TxQueueBytes " << m_txQueueBytes);
    NS_ABORT_MSG_IF(m_creditsReady && CreditsFor(size) > m_vcs[vc].initialCredits,
                    "packet of " << size << " B needs " << CreditsFor(size)
                                 << " credits but the peer's ReceiveBufferBytes on VC " << vc
                                 << " gives " << m_vcs[vc].initialCredits << " on "
                                 << GetLinkName());
    Vc& v = m_vcs[vc];
    if (v.queueBytes + size > m_txQueueBytes)
    {
        NS_LOG_LOGIC(GetLinkName() << " VC " << vc << " queue full (" << v.queueBytes << " of "
                                   << m_txQueueBytes << " B): " << size << " B refused");
        v.refused = true;
        m_backpressureTrace(packet, vc);
        return false;
    }
    const bool wasEmpty = v.queue.empty();
    v.queue.push_back(packet);
    if (wasEmpty)
    {
        v.headBytes = size;
    }
    v.queueBytes += size;
    m_ownQueueBytes += size;
    if (m_ownQueueBytes > m_counters.peakQueueBytes)
    {
        m_counters.peakQueueBytes = m_ownQueueBytes;
    }
    m_queueLengthTrace(vc, v.queueBytes);
    if (m_watchdog)
    {
        m_watchdog->Arm();
    }
    if (wasEmpty)
    {
        UpdateVcStall(vc, size);
    }
    TryTransmit();
    return true;
}

bool
CreditLinkNetDevice::IsSendingData() const
{
    return m_busy;
}

void
CreditLinkNetDevice::NotifyDataAvailable(uint32_t vc)
{
    UpdateVcStall(vc, HeadBytes(vc));
    TryTransmit();
}

uint32_t
CreditLinkNetDevice::HeadBytes(uint32_t vc) const
{
    if (m_switch)
    {
        return m_switch->PeekHeadBytes(m_switchPort, vc);
    }
    const Vc& v = m_vcs[vc];
    return v.headBytes;
}

void
CreditLinkNetDevice::UpdateVcStall(uint32_t vc, uint32_t headBytes)
{
    if (!m_creditsReady)
    {
        return;
    }
    Vc& v = m_vcs[vc];
    // A VC is not stalled while its own previous packet is still on the wire.
    const bool blocked = m_flowControl ? !m_flowControl->MaySend(vc, Simulator::Now())
                                       : v.credits < CreditsFor(headBytes);
    const bool stalled = headBytes != 0 && blocked && !(m_busy && m_currentVc == vc);
    if (stalled == v.stalled)
    {
        return;
    }
    v.stalled = stalled;
    if (stalled)
    {
        NS_LOG_LOGIC(GetLinkName() << " VC " << vc << " stalls: head " << headBytes << " B needs "
                                   << CreditsFor(headBytes) << " credits, has " << v.credits);
        v.stallStart = Simulator::Now();
        m_creditStallBeginTrace(vc);
    }
    else
    {
        NS_LOG_LOGIC(GetLinkName() << " VC " << vc << " unstalls after "
                                   << (Simulator::Now() - v.stallStart).As(Time::NS));
        m_creditStallEndTrace(vc, Simulator::Now() - v.stallStart);
    }
}

bool
CreditLinkNetDevice::MayStart(uint32_t vc, uint32_t headBytes, Time now) const
{
    return m_flowControl ? m_flowControl->MaySend(vc, now)
                         : m_vcs[vc].credits >= CreditsFor(headBytes);
}

void
CreditLinkNetDevice::ScheduleResume(uint32_t waiting)
{
    Time resume = Time::Max();
    for (uint32_t mask = waiting; mask != 0; mask &= mask - 1)
    {
        resume = std::min(resume, m_flowControl->GetResumeTime(__builtin_ctz(mask)));
    }
    const Time now = Simulator::Now();
    if (resume == Time::Max() || resume <= now)
    {
        return;
    }
    m_resumeWakeup.Cancel();
    m_resumeWakeup = Simulator::Schedule(resume - now, &CreditLinkNetDevice::TimerExpired, this);
}

Ptr<LinkFlowControl>
CreditLinkNetDevice::GetFlowControl() const
{
    return m_flowControl;
}

void
CreditLinkNetDevice::RequestFlowControlFrame(uint32_t vc)
{
    m_pendingFcMask |= 1u << vc;
    TryTransmit();
}

uint32_t
CreditLinkNetDevice::GetOverheadBytes() const
{
    return m_overheadBytes;
}

uint32_t
CreditLinkNetDevice::GetLargestPacketBytes() const
{
    return GetMaxPacketBytes();
}

void
CreditLinkNetDevice::TimerExpired()
{
    if (m_switch)
    {
        m_switch->Advance();
    }
    TryTransmit();
}

void
CreditLinkNetDevice::TryTransmit()
{
    if (m_instantEndDecisions && !m_deciding && CanStartFrame())
    {
        RequestDecision();
        return;
    }
    TransmitNext();
    // Flow-control frames held back by SendFlowControl and not followed by a data frame.
    for (const auto& [vc, credits] : m_heldFlowControl)
    {
        m_channel->TransmitCredits(this, vc, credits, Time(0));
    }
    m_heldFlowControl.clear();
}

bool
CreditLinkNetDevice::CanStartFrame() const
{
    // Otherwise TransmitNext only notes stalls, which it may do at once: that needs no event.
    if (m_busy || !m_creditsReady || Simulator::Now() < m_fcBusyUntil)
    {
        return false;
    }
    if (m_pendingFcMask != 0)
    {
        return true;
    }
    for (uint32_t vc = 0; vc < m_numVcs; ++vc)
    {
        const uint32_t head = HeadBytes(vc);
        if (head != 0 && MayStart(vc, head, Simulator::Now()))
        {
            return true;
        }
    }
    return false;
}

void
CreditLinkNetDevice::TransmitNext()
{
    if (m_busy || !m_creditsReady)
    {
        return;
    }
    const Time now = Simulator::Now();
    if (m_pendingFcMask != 0 && now >= m_fcBusyUntil)
    {
        if (m_creditPolicy == CREDIT_UPDATE_IMMEDIATE || m_flowControl ||
            now >= m_lastFcTime + m_creditInterval)
        {
            SendFlowControl();
        }
        else if (!m_fcTimer.IsRunning())
        {
            m_fcTimer = Simulator::Schedule(m_lastFcTime + m_creditInterval - now,
                                            &CreditLinkNetDevice::TimerExpired,
                                            this);
        }
    }
    if (now < m_fcBusyUntil)
    {
        // A flow-control frame holds the wire.  It ends without an event of its
        // own (the reverse direction of a one-way flow carries nothing else), so
        // wake up only if something waits for the wire.
        if (!m_wakeup.IsRunning() && (m_pendingFcMask != 0 || HasDataWaiting()))
        {
            m_wakeup =
                Simulator::Schedule(m_fcBusyUntil - now, &CreditLinkNetDevice::TimerExpired, this);
        }
        return;
    }
    uint32_t eligible = 0;
    uint32_t waiting = 0;
    for (uint32_t vc = 0; vc < m_numVcs; ++vc)
    {
        const uint32_t head = HeadBytes(vc);
        if (head == 0)
        {
            continue;
        }
        waiting |= 1u << vc;
        if (MayStart(vc, head, now))
        {
            eligible |= 1u << vc;
        }
        UpdateVcStall(vc, head);
    }
    if (eligible == 0)
    {
        // The clock keeps its remainder across idle time: otherwise every lone
        // 6-byte flow-control frame (0.48 ns at 100 Gb/s) would round to 0 ns.
        if (waiting != 0 && !m_linkStalled)
        {
            NS_LOG_LOGIC(GetLinkName() << " idle with data waiting: no VC has credits");
            m_linkStalled = true;
            m_linkStallStart = Simulator::Now();
        }
        if (m_flowControl && waiting != 0)
        {
            ScheduleResume(waiting);
        }
        return;
    }
    const int32_t chosen = m_arbiter->Select(eligible);
    if (chosen < 0)
    {
        NS_LOG_LOGIC(GetLinkName() << " arbiter serves none of the eligible VCs 0x" << std::hex
                                   << eligible << std::dec);
        return;
    }
    const auto vc = static_cast<uint32_t>(chosen);
    if (m_linkStalled)
    {
        NS_LOG_LOGIC(GetLinkName() << " link stall ends after "
                                   << (Simulator::Now() - m_linkStallStart).As(Time::NS));
        m_linkStalled = false;
        m_counters.creditStallTime += Simulator::Now() - m_linkStallStart;
    }
    // Busy before dequeuing: the switch may call back into this device.
    m_busy = true;
    m_currentVc = vc;
    Vc& v = m_vcs[vc];
    Ptr<Packet> packet;
    Time tail = now; // when the packet's last bit is in this node
    bool wakeSender = false;
    if (m_switch)
    {
        packet = m_switch->Dequeue(m_switchPort, vc, tail);
    }
    else
    {
        packet = v.queue.front();
        v.queue.pop_front();
        v.queueBytes -= v.headBytes;
        m_ownQueueBytes -= v.headBytes;
        v.headBytes = v.queue.empty() ? 0 : v.queue.front()->GetSize();
        m_queueLengthTrace(vc, v.queueBytes);
        wakeSender = v.refused;
        v.refused = false;
    }
    const uint32_t size = packet->GetSize();
    if (!m_flowControl)
    {
        v.credits -= CreditsFor(size);
    }
    m_arbiter->NotifySent(vc, size);
    UpdateVcStall(vc, HeadBytes(vc));
    Time txTime = m_clock.NextTransmitTime(size + GetWireOverheadBytes(packet));
    m_counters.txPackets++;
    m_counters.txBytes += size;
    // The packet's own serialisation only: a transmission stretched below (idles while
    // the tail comes in from a slower input) is busy for the port, not utilised wire.
    m_counters.busyTime += txTime;
    if (now + txTime < tail)
    {
        // Cut-through from a slower input: the last bit cannot leave before it arrives.
        txTime = tail - now;
    }
    // A cut-through switch takes the packet once its routing header is in.
    const Time headTime = m_peerCutThroughBytes == 0
                              ? txTime
                              : std::min(m_clock.GetTransmitTime(m_peerCutThroughBytes), txTime);
    m_current = packet;
    m_txBeginTrace(packet, vc);
    // Flow-control frames SendFlowControl held back go first and arrive with this frame's
    // head, also through a CreditLinkRemoteChannel, which cannot reorder what it has sent.
    for (const auto& [fcVc, credits] : m_heldFlowControl)
    {
        m_channel->TransmitCredits(this, fcVc, credits, headTime);
    }
    m_heldFlowControl.clear();
    m_channel->TransmitData(this, packet, vc, headTime, txTime);
    m_txComplete.Schedule(txTime);
    if (wakeSender && !m_txReadyCallback.IsNull())
    {
        m_txReadyCallback(this, vc);
    }
}

void
CreditLinkNetDevice::SendFlowControl()
{
    // Credits: one frame per VC.  A flow-control discipline's frame carries every VC
    // (a PFC frame has all eight priorities' timers).
    const uint32_t frames = m_flowControl ? 1 : __builtin_popcount(m_pendingFcMask);
    const uint64_t frameBytes = m_flowControl ? m_flowControl->GetFrameBytes()
                                              : static_cast<uint64_t>(frames) * m_fcFrameBytes;
    const Time txTime = m_clock.NextTransmitTime(frameBytes);
    // To a cut-through switch a data frame is taken at its head, so a flow-control frame
    // ending as the next data frame starts would need a delivery event of its own (behind a
    // store-and-forward frame it shares the tail's).  Held back, it rides with that head:
    // at most the header's serialisation late (1 ns in practice).  Kept: the per-hop events.
    const bool hold = m_peerCutThroughBytes != 0 && txTime.IsZero();
    for (uint32_t mask = m_pendingFcMask; mask != 0; mask &= mask - 1)
    {
        const uint32_t vc = __builtin_ctz(mask);
        const uint32_t value =
            m_flowControl ? m_flowControl->TakeFrameValue(vc) : m_vcs[vc].pendingCreditReturn;
        if (hold)
        {
            m_heldFlowControl.emplace_back(vc, value);
        }
        else
        {
            m_channel->TransmitCredits(this, vc, value, txTime);
        }
        m_creditUpdateTrace(vc, value);
        m_vcs[vc].pendingCreditReturn = 0;
    }
    m_pendingFcMask = 0;
    m_lastFcTime = Simulator::Now();
    m_counters.txFlowControlFrames += frames;
    m_counters.busyTime += txTime;
    m_fcBusyUntil = Simulator::Now() + txTime;
}

bool
CreditLinkNetDevice::HasDataWaiting() const
{
    if (!m_switch)
    {
        return m_ownQueueBytes != 0;
    }
    for (uint32_t vc = 0; vc < m_numVcs; ++vc)
    {
        if (HeadBytes(vc) != 0)
        {
            return true;
        }
    }
    return false;
}

void
CreditLinkNetDevice::TransmitComplete()
{
    if (m_switch)
    {
        m_switch->Advance();
    }
    m_busy = false;
    Ptr<Packet> done = m_current;
    m_current = nullptr;
    TxEnded(done, m_currentVc);
    m_txEndTrace(done, m_currentVc);
    UpdateVcStall(m_currentVc, HeadBytes(m_currentVc));
    TryTransmit();
    if (m_switch && !m_busy)
    {
        m_switch->NotifyPortIdle(m_switchPort);
    }
}

void
CreditLinkNetDevice::ReceiveCredits(uint32_t vc, uint32_t credits)
{
    if (m_switch)
    {
        m_switch->Advance();
    }
    EnsureCredits();
    if (m_flowControl)
    {
        m_flowControl->ReceiveFrame(vc, credits);
        UpdateVcStall(vc, HeadBytes(vc));
        TryTransmit();
        return;
    }
    Vc& v = m_vcs[vc];
    v.credits += credits;
    NS_ABORT_MSG_IF(v.credits > v.initialCredits,
                    "credit accounting broken on " << GetLinkName() << " VC " << vc << ": "
                                                   << v.credits << " > initial "
                                                   << v.initialCredits);
    UpdateVcStall(vc, HeadBytes(vc));
    TryTransmit();
}

void
CreditLinkNetDevice::ReceiveData(Ptr<Packet> packet, uint32_t vc, Time tail)
{
    if (m_switch)
    {
        m_switch->Advance();
    }
    EnsureCredits();
    const uint32_t size = packet->GetSize();
    Vc& v = m_vcs[vc];
    if (m_flowControl && !m_flowControl->Admit(vc, size))
    {
        // Counted as received (the link delivered it) and dropped by the discipline.
        m_counters.rxPackets++;
        m_counters.rxBytes += size;
        return;
    }
    v.rxOccupiedCredits += CreditsFor(size);
    NS_ABORT_MSG_IF(!m_flowControl &&
                        static_cast<uint64_t>(v.rxOccupiedCredits) * m_creditUnitBytes >
                            v.receiveBufferBytes,
                    "receive buffer overflow on " << GetLinkName() << " VC " << vc
                                                  << ": the sender ignored credits");
    m_counters.rxPackets++;
    m_counters.rxBytes += size;
    m_rxTrace(packet, vc);
    if (m_switch)
    {
        m_switch->ReceiveFromPort(m_switchPort, packet, vc, tail);
    }
    else if (m_drain.IsImmediate())
    {
        DeliverUp(packet);
        ReleaseReceiveBuffer(vc, size);
    }
    else
    {
        m_drain.Push(packet, vc);
    }
}

void
CreditLinkNetDevice::Consume(Ptr<Packet> packet, uint32_t vc)
{
    DeliverUp(packet);
    ReleaseReceiveBuffer(vc, packet->GetSize());
}

void
CreditLinkNetDevice::DeliverUp(Ptr<Packet> packet)
{
    if (m_rxCallback.IsNull() && m_promiscCallback.IsNull())
    {
        return;
    }
    const uint16_t protocol = ExtractProtocol(packet);
    const Address from = GetPeer()->GetAddress();
    if (!m_promiscCallback.IsNull())
    {
        m_promiscCallback(this, packet, protocol, from, m_address, NetDevice::PACKET_HOST);
    }
    if (!m_rxCallback.IsNull())
    {
        m_rxCallback(this, packet, protocol, from);
    }
}

void
CreditLinkNetDevice::ReleaseReceiveBuffer(uint32_t vc, uint32_t packetBytes)
{
    Vc& v = m_vcs[vc];
    const uint32_t credits = CreditsFor(packetBytes);
    NS_ABORT_MSG_IF(credits > v.rxOccupiedCredits,
                    "ReleaseReceiveBuffer on " << GetLinkName() << " VC " << vc << " frees "
                                               << credits << " credits, only "
                                               << v.rxOccupiedCredits << " held");
    v.rxOccupiedCredits -= credits;
    if (m_flowControl)
    {
        m_flowControl->Release(vc, packetBytes);
        return;
    }
    v.pendingCreditReturn += credits;
    m_pendingFcMask |= 1u << vc;
    TryTransmit();
}

bool
CreditLinkNetDevice::HasPendingWork() const
{
    // Frames on the wire count: a packet between two switches is still in the fabric.
    return m_ownQueueBytes != 0 || m_busy || m_pendingFcMask != 0 || !m_drain.IsEmpty() ||
           Simulator::Now() < m_fcBusyUntil || (m_channel && m_channel->HasFramesInFlight());
}

uint32_t
CreditLinkNetDevice::ReportStuckVcs(std::ostream& os) const
{
    uint32_t stuck = 0;
    for (uint32_t vc = 0; vc < m_numVcs; ++vc)
    {
        const uint32_t head = HeadBytes(vc);
        if (m_flowControl && head != 0 && !m_flowControl->MaySend(vc, Simulator::Now()))
        {
            os << "  link " << GetLinkName() << " vc " << vc << ": head packet " << head << " B ";
            m_flowControl->DescribeBlocked(os, vc);
            os << "\n";
            ++stuck;
        }
        else if (!m_flowControl && head != 0 && m_vcs[vc].credits < CreditsFor(head))
        {
            os << "  link " << GetLinkName() << " vc " << vc << ": head packet " << head
               << " B needs " << CreditsFor(head) << " credits, has " << m_vcs[vc].credits << " of "
               << m_vcs[vc].initialCredits << "\n";
            ++stuck;
        }
    }
    return stuck;
}

uint32_t
CreditLinkNetDevice::ClassifyVc(Ptr<const Packet> packet) const
{
    if (packet->GetSize() < CreditLinkHeader::SIZE_BYTES)
    {
        return 0;
    }
    CreditLinkHeader header;
    packet->PeekHeader(header);
    return header.GetVc();
}

CreditLinkNetDevice::BurstShape
CreditLinkNetDevice::GetBurstShape(Ptr<const Packet> /* packet */) const
{
    return BurstShape{};
}

uint32_t
CreditLinkNetDevice::GetWireOverheadBytes(Ptr<const Packet> packet) const
{
    const BurstShape b = GetBurstShape(packet);
    return b.realPackets * (b.realHeaderBytes + m_overheadBytes) - b.headerBytesInPacket;
}

uint32_t
CreditLinkNetDevice::GetMaxPacketBytes() const
{
    return m_mtu;
}

void
CreditLinkNetDevice::TxEnded(Ptr<const Packet> /* packet */, uint32_t /* vc */)
{
}

uint16_t
CreditLinkNetDevice::ExtractProtocol(Ptr<const Packet> packet) const
{
    if (packet->GetSize() < CreditLinkHeader::SIZE_BYTES)
    {
        return 0;
    }
    CreditLinkHeader header;
    packet->PeekHeader(header);
    return header.GetProtocol();
}

void
CreditLinkNetDevice::SetIfIndex(const uint32_t index)
{
    NS_LOG_FUNCTION(this << index);
    m_ifIndex = index;
}

uint32_t
CreditLinkNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
CreditLinkNetDevice::GetChannel() const
{
    return m_channel;
}

void
CreditLinkNetDevice::SetAddress(Address address)
{
    NS_LOG_FUNCTION(this << address);
    m_address = Mac48Address::ConvertFrom(address);
}

Address
CreditLinkNetDevice::GetAddress() const
{
    return m_address;
}

bool
CreditLinkNetDevice::SetMtu(const uint16_t mtu)
{
    NS_LOG_FUNCTION(this << mtu);
    m_mtu = mtu;
    return true;
}

uint16_t
CreditLinkNetDevice::GetMtu() const
{
    return m_mtu;
}

bool
CreditLinkNetDevice::IsLinkUp() const
{
    return m_channel != nullptr;
}

void
CreditLinkNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
    NS_LOG_FUNCTION(this);
}

bool
CreditLinkNetDevice::IsBroadcast() const
{
    return true;
}

Address
CreditLinkNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
CreditLinkNetDevice::IsMulticast() const
{
    return true;
}

Address
CreditLinkNetDevice::GetMulticast(Ipv4Address multicastGroup) const
{
    return Mac48Address::GetMulticast(multicastGroup);
}

Address
CreditLinkNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
CreditLinkNetDevice::IsPointToPoint() const
{
    return true;
}

bool
CreditLinkNetDevice::IsBridge() const
{
    return false;
}

bool
CreditLinkNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber)
{
    const uint32_t vc =
        m_classifyCallback.IsNull() ? ClassifyVc(packet) : m_classifyCallback(packet);
    return SendOnVc(packet, vc);
}

bool
CreditLinkNetDevice::SendFrom(Ptr<Packet> packet,
                              const Address& source,
                              const Address& dest,
                              uint16_t protocolNumber)
{
    return Send(packet, dest, protocolNumber);
}

Ptr<Node>
CreditLinkNetDevice::GetNode() const
{
    return m_node;
}

void
CreditLinkNetDevice::SetNode(Ptr<Node> node)
{
    NS_LOG_FUNCTION(this << node);
    m_node = node;
}

bool
CreditLinkNetDevice::NeedsArp() const
{
    return false;
}

void
CreditLinkNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_rxCallback = cb;
}

void
CreditLinkNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_promiscCallback = cb;
}

bool
CreditLinkNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ns3
