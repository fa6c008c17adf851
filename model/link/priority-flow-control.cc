/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "priority-flow-control.h"

#include "credit-link-channel.h"
#include "credit-link-net-device.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PriorityFlowControl");

NS_OBJECT_ENSURE_REGISTERED(PriorityFlowControl);

TypeId
PriorityFlowControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PriorityFlowControl")
            .SetParent<LinkFlowControl>()
            .SetGroupName("AiFabric")
            .AddConstructor<PriorityFlowControl>()
            .AddAttribute("Lossless",
                          "Send PAUSE at XOFF (lossless priority); false: lossy Ethernet, "
                          "a packet that does not fit the ingress buffer is dropped",
                          BooleanValue(true),
                          MakeBooleanAccessor(&PriorityFlowControl::m_lossless),
                          MakeBooleanChecker())
            .AddAttribute("PauseQuanta",
                          "pause_time of an XOFF entry, in quanta of 512 bit times "
                          "(IEEE 802.3 Annex 31D; 65535 is the largest and what switches send)",
                          UintegerValue(65535),
                          MakeUintegerAccessor(&PriorityFlowControl::m_quanta),
                          MakeUintegerChecker<uint32_t>(1, 65535))
            .AddAttribute("RefreshInterval",
                          "Time between XOFF refreshes while the queue stays above XON; "
                          "0 = half the pause time",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&PriorityFlowControl::m_refreshInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("HeadroomBytes",
                          "Ingress buffer kept above XOFF for data already on its way; 0 = "
                          "2 x cable delay x rate + 2 maximum frames + the PAUSE frame "
                          "(IEEE 802.1Qbb Annex N's delay budget without the PHY/MAC terms)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PriorityFlowControl::m_headroomBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("XoffBytes",
                          "Ingress queue bytes that trigger PAUSE; 0 = buffer - headroom "
                          "(mlx5 update_xoff_threshold)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PriorityFlowControl::m_xoffBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("XonOffsetBytes",
                          "XON = XOFF - this; 0 = one maximum frame (mlx5: xoff - max_mtu)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PriorityFlowControl::m_xonOffsetBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FrameBytes",
                          "Wire bytes of a PFC frame: the 64-byte MAC control frame (opcode "
                          "0x0101, class-enable vector, eight timers) + 8 preamble/SFD + 12 "
                          "inter-frame gap",
                          UintegerValue(84),
                          MakeUintegerAccessor(&PriorityFlowControl::m_frameBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("PauseSent",
                            "A PFC entry for a priority leaves (quanta; 0 = resume)",
                            MakeTraceSourceAccessor(&PriorityFlowControl::m_pauseSentTrace),
                            "ns3::PriorityFlowControl::PauseTracedCallback")
            .AddTraceSource("PauseReceived",
                            "A PFC entry for a priority arrives (quanta; 0 = resume)",
                            MakeTraceSourceAccessor(&PriorityFlowControl::m_pauseReceivedTrace),
                            "ns3::PriorityFlowControl::PauseTracedCallback")
            .AddTraceSource("Drop",
                            "An arriving packet did not fit its ingress buffer",
                            MakeTraceSourceAccessor(&PriorityFlowControl::m_dropTrace),
                            "ns3::PriorityFlowControl::DropTracedCallback");
    return tid;
}

PriorityFlowControl::PriorityFlowControl()
    : m_lossless(true),
      m_quanta(65535),
      m_headroomBytes(0),
      m_xoffBytes(0),
      m_xonOffsetBytes(0),
      m_frameBytes(84)
{
    NS_LOG_FUNCTION(this);
}

void
PriorityFlowControl::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& in : m_in)
    {
        in.refresh.Cancel();
    }
    m_in.clear();
    m_out.clear();
    m_device = nullptr;
    LinkFlowControl::DoDispose();
}

Time
PriorityFlowControl::QuantaTime(const CreditLinkNetDevice* device, uint32_t quanta)
{
    return device->GetClock().GetTransmitTime(uint64_t{quanta} * 64);
}

uint64_t
PriorityFlowControl::RequiredHeadroomBytes(const CreditLinkNetDevice* device) const
{
    if (m_headroomBytes != 0)
    {
        return m_headroomBytes;
    }
    Ptr<CreditLinkNetDevice> peer = device->GetPeer();
    const auto channel = DynamicCast<CreditLinkChannel>(device->GetChannel());
    const uint64_t largest =
        std::max(device->GetLargestPacketBytes(), peer ? peer->GetLargestPacketBytes() : 0u);
    const uint64_t frame = largest + device->GetOverheadBytes();
    const double cableBytes =
        channel ? channel->GetDelay().GetSeconds() *
                      static_cast<double>(device->GetClock().GetDataRateBps()) / 8.0
                : 0.0;
    return 2 * static_cast<uint64_t>(std::ceil(cableBytes)) + 2 * frame + m_frameBytes;
}

std::string
PriorityFlowControl::Validate(const CreditLinkNetDevice* device) const
{
    const uint32_t frame = device->GetLargestPacketBytes();
    for (uint32_t vc = 0; vc < device->GetNumVcs(); ++vc)
    {
        const uint64_t buffer = device->GetReceiveBufferBytes(vc);
        std::ostringstream os;
        os << "PFC on " << device->GetLinkName() << " priority " << vc << ": ";
        if (buffer < frame)
        {
            os << "ReceiveBufferBytes " << buffer << " holds no " << frame << "-byte frame";
            return os.str();
        }
        if (!m_lossless)
        {
            continue;
        }
        const uint64_t headroom = RequiredHeadroomBytes(device);
        const uint64_t xoff =
            m_xoffBytes != 0 ? m_xoffBytes : (buffer > headroom ? buffer - headroom : 0);
        const uint64_t offset = m_xonOffsetBytes != 0 ? m_xonOffsetBytes : frame;
        if (xoff + headroom > buffer || xoff == 0)
        {
            os << "XoffBytes " << xoff << " + headroom " << headroom
               << " B (HeadroomBytes: cable delay, two frames, the PAUSE) exceed "
                  "ReceiveBufferBytes "
               << buffer;
            return os.str();
        }
        if (offset >= xoff)
        {
            os << "XonOffsetBytes " << offset << " leaves no XON below XoffBytes " << xoff;
            return os.str();
        }
    }
    return "";
}

std::string
PriorityFlowControl::Setup(CreditLinkNetDevice* device)
{
    NS_LOG_FUNCTION(this << device);
    if (std::string error = Validate(device); !error.empty())
    {
        return error;
    }
    m_device = device;
    const uint32_t vcs = device->GetNumVcs();
    m_in.assign(vcs, Ingress{});
    m_out.assign(vcs, Egress{});
    const uint64_t headroom = RequiredHeadroomBytes(device);
    const uint64_t offset =
        m_xonOffsetBytes != 0 ? m_xonOffsetBytes : device->GetLargestPacketBytes();
    for (uint32_t vc = 0; vc < vcs; ++vc)
    {
        const uint64_t buffer = device->GetReceiveBufferBytes(vc);
        Ingress& in = m_in[vc];
        in.xoff = m_xoffBytes != 0 ? m_xoffBytes : buffer - std::min(buffer, headroom);
        in.xon = in.xoff > offset ? in.xoff - offset : 0;
    }
    m_pauseTime = QuantaTime(device, m_quanta);
    if (m_refreshInterval.IsZero())
    {
        m_refreshInterval = m_pauseTime / 2;
    }
    NS_LOG_LOGIC(device->GetLinkName()
                 << ": PFC " << (m_lossless ? "lossless" : "lossy") << ", XOFF " << m_in[0].xoff
                 << " B, XON " << m_in[0].xon << " B, headroom " << headroom << " B, pause "
                 << m_pauseTime.As(Time::US));
    return "";
}

bool
PriorityFlowControl::MaySend(uint32_t vc, Time now) const
{
    return now >= m_out[vc].pausedUntil;
}

Time
PriorityFlowControl::GetResumeTime(uint32_t vc) const
{
    return m_out[vc].pausedUntil;
}

void
PriorityFlowControl::CloseExpired(Egress& e, Time now) const
{
    if (e.open && e.pausedUntil <= now)
    {
        m_pausedTime += e.pausedUntil - e.pauseStart;
        e.open = false;
    }
}

void
PriorityFlowControl::ReceiveFrame(uint32_t vc, uint32_t quanta)
{
    const Time now = Simulator::Now();
    Egress& e = m_out[vc];
    CloseExpired(e, now);
    m_pauseReceivedTrace(vc, quanta);
    if (quanta == 0)
    {
        if (e.open)
        {
            m_pausedTime += now - e.pauseStart;
            e.open = false;
        }
        e.pausedUntil = now;
        return;
    }
    m_counters.pauseFramesReceived++;
    if (!e.open)
    {
        e.open = true;
        e.pauseStart = now;
    }
    e.pausedUntil = now + QuantaTime(m_device, quanta);
}

Time
PriorityFlowControl::GetPausedTime() const
{
    const Time now = Simulator::Now();
    Time open;
    for (auto& e : m_out)
    {
        CloseExpired(e, now);
        if (e.open)
        {
            open += now - e.pauseStart;
        }
    }
    return m_pausedTime + open;
}

uint64_t
PriorityFlowControl::GetLimitBytes(uint32_t vc) const
{
    return m_device->GetReceiveBufferBytes(vc);
}

uint64_t
PriorityFlowControl::GetXoffNow(uint32_t vc) const
{
    return m_in[vc].xoff;
}

uint64_t
PriorityFlowControl::GetXonNow(uint32_t vc) const
{
    return m_in[vc].xon;
}

void
PriorityFlowControl::NotifyOccupancy(int64_t /* delta */)
{
}

uint64_t
PriorityFlowControl::GetPausedAtBytes(uint32_t vc) const
{
    return m_in[vc].paused ? m_in[vc].pausedAt : 0;
}

CreditLinkNetDevice*
PriorityFlowControl::GetDevice() const
{
    return m_device;
}

bool
PriorityFlowControl::Admit(uint32_t vc, uint32_t bytes)
{
    Ingress& in = m_in[vc];
    if (in.occupied + bytes > GetLimitBytes(vc))
    {
        NS_LOG_LOGIC(m_device->GetLinkName() << " priority " << vc << ": " << bytes
                                             << " B do not fit (" << in.occupied << " held)");
        m_counters.droppedPackets++;
        m_counters.droppedBytes += bytes;
        m_dropTrace(vc, bytes);
        return false;
    }
    in.occupied += bytes;
    NotifyOccupancy(bytes);
    m_counters.peakOccupancyBytes = std::max(m_counters.peakOccupancyBytes, in.occupied);
    if (m_lossless && !in.paused && in.occupied >= GetXoffNow(vc))
    {
        NS_LOG_LOGIC(m_device->GetLinkName()
                     << " priority " << vc << " XOFF at " << in.occupied << " B");
        in.paused = true;
        in.pausedAt = in.occupied;
        m_device->RequestFlowControlFrame(vc);
    }
    return true;
}

void
PriorityFlowControl::Release(uint32_t vc, uint32_t bytes)
{
    Ingress& in = m_in[vc];
    in.occupied -= bytes;
    NotifyOccupancy(-static_cast<int64_t>(bytes));
    if (in.paused && in.occupied <= GetXonNow(vc))
    {
        NS_LOG_LOGIC(m_device->GetLinkName()
                     << " priority " << vc << " XON at " << in.occupied << " B");
        in.paused = false;
        in.refresh.Cancel();
        m_device->RequestFlowControlFrame(vc);
    }
}

void
PriorityFlowControl::Refresh(uint32_t vc)
{
    if (m_in[vc].paused)
    {
        m_device->RequestFlowControlFrame(vc);
    }
}

uint32_t
PriorityFlowControl::TakeFrameValue(uint32_t vc)
{
    Ingress& in = m_in[vc];
    const uint32_t quanta = in.paused ? m_quanta : 0;
    if (quanta != 0)
    {
        m_counters.pauseFramesSent++;
        in.refresh.Cancel();
        in.refresh =
            Simulator::Schedule(m_refreshInterval, &PriorityFlowControl::Refresh, this, vc);
    }
    else
    {
        m_counters.resumeFramesSent++;
    }
    m_pauseSentTrace(vc, quanta);
    return quanta;
}

uint32_t
PriorityFlowControl::GetFrameBytes() const
{
    return m_frameBytes;
}

uint64_t
PriorityFlowControl::GetDroppedPackets() const
{
    return m_counters.droppedPackets;
}

uint64_t
PriorityFlowControl::GetDroppedBytes() const
{
    return m_counters.droppedBytes;
}

bool
PriorityFlowControl::IsLossless() const
{
    return m_lossless;
}

uint64_t
PriorityFlowControl::GetOccupancyBytes(uint32_t vc) const
{
    return m_in.empty() ? 0 : m_in.at(vc).occupied;
}

uint64_t
PriorityFlowControl::GetXoffBytes(uint32_t vc) const
{
    return m_in.at(vc).xoff;
}

uint64_t
PriorityFlowControl::GetXonBytes(uint32_t vc) const
{
    return m_in.at(vc).xon;
}

const PriorityFlowControl::Counters&
PriorityFlowControl::GetCounters() const
{
    return m_counters;
}

void
PriorityFlowControl::DescribeBlocked(std::ostream& os, uint32_t vc) const
{
    const Ptr<CreditLinkNetDevice> peer = m_device->GetPeer();
    Ptr<PriorityFlowControl> peerPfc =
        peer ? DynamicCast<PriorityFlowControl>(peer->GetFlowControl()) : nullptr;
    os << "paused by PFC until " << m_out[vc].pausedUntil.As(Time::US);
    if (peerPfc && !peerPfc->m_in.empty())
    {
        os << ", peer ingress queue " << peerPfc->m_in[vc].occupied << " B (XOFF "
           << peerPfc->m_in[vc].xoff << ", XON " << peerPfc->m_in[vc].xon << ")";
    }
}

} // namespace ns3
