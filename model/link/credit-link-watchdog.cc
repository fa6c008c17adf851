/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-link-watchdog.h"

#include "credit-link-net-device.h"
#include "credit-switch.h"
#include "link-flow-control.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <iostream>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreditLinkWatchdog");

NS_OBJECT_ENSURE_REGISTERED(CreditLinkWatchdog);

TypeId
CreditLinkWatchdog::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CreditLinkWatchdog")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<CreditLinkWatchdog>()
            .AddAttribute("Timeout",
                          "Simulated time without any frame sent, while packets are queued, "
                          "that counts as a deadlock",
                          TimeValue(MicroSeconds(100)),
                          MakeTimeAccessor(&CreditLinkWatchdog::m_timeout),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("LivelockTimeout",
                          "Simulated time with packets moving but none reaching a host or "
                          "dropped that counts as a livelock (forwarding loop); 0 = off",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&CreditLinkWatchdog::m_livelockTimeout),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("StopSimulation",
                          "Call Simulator::Stop when a deadlock is found",
                          BooleanValue(true),
                          MakeBooleanAccessor(&CreditLinkWatchdog::m_stop),
                          MakeBooleanChecker())
            .AddAttribute("AbortOnDeadlock",
                          "End the process with the report (NS_FATAL_ERROR)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&CreditLinkWatchdog::m_abort),
                          MakeBooleanChecker())
            .AddTraceSource("Deadlock",
                            "The report naming the stuck links and VCs",
                            MakeTraceSourceAccessor(&CreditLinkWatchdog::m_deadlockTrace),
                            "ns3::CreditLinkWatchdog::ReportTracedCallback");
    return tid;
}

CreditLinkWatchdog::CreditLinkWatchdog()
    : m_abort(false),
      m_stop(true),
      m_armed(false),
      m_fired(false),
      m_lastProgress(0),
      m_lastDeliveries(0)
{
    NS_LOG_FUNCTION(this);
}

void
CreditLinkWatchdog::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_devices.clear();
    m_switches.clear();
    Object::DoDispose();
}

void
CreditLinkWatchdog::Watch(Ptr<CreditLinkNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    m_devices.push_back(device);
    device->SetWatchdog(this);
}

void
CreditLinkWatchdog::Watch(Ptr<CreditSwitch> sw)
{
    NS_LOG_FUNCTION(this << sw);
    m_switches.push_back(sw);
    sw->SetWatchdog(this);
}

void
CreditLinkWatchdog::Arm()
{
    if (m_armed || m_fired)
    {
        return;
    }
    NS_LOG_FUNCTION(this);
    NS_LOG_LOGIC("armed: first check in " << m_timeout.As(Time::US));
    m_armed = true;
    m_lastProgress = Progress();
    m_lastDeliveries = Deliveries();
    m_lastDeliveryTime = Simulator::Now();
    m_lastTxPackets.clear();
    Simulator::Schedule(m_timeout, &CreditLinkWatchdog::Check, this);
}

uint64_t
CreditLinkWatchdog::Deliveries() const
{
    uint64_t n = 0;
    for (const auto& d : m_devices)
    {
        n += d->GetSwitch() ? 0 : d->GetCounters().rxPackets;
    }
    for (const auto& s : m_switches)
    {
        n += s->GetDroppedPackets();
    }
    return n;
}

uint64_t
CreditLinkWatchdog::Progress() const
{
    uint64_t frames = 0;
    for (const auto& d : m_devices)
    {
        // PFC frames are no progress: a paused fabric keeps refreshing its PAUSEs.
        frames += d->GetCounters().txPackets +
                  (d->GetFlowControl() ? 0 : d->GetCounters().txFlowControlFrames);
    }
    return frames;
}

bool
CreditLinkWatchdog::HasPendingWork() const
{
    for (const auto& s : m_switches)
    {
        if (s->GetBufferedPackets() != 0)
        {
            return true;
        }
    }
    for (const auto& d : m_devices)
    {
        if (d->HasPendingWork())
        {
            return true;
        }
    }
    return false;
}

void
CreditLinkWatchdog::Check()
{
    NS_LOG_FUNCTION(this);
    m_armed = false;
    if (m_devices.empty() || !HasPendingWork())
    {
        NS_LOG_LOGIC("idle: disarmed until the next queued packet");
        return;
    }
    const uint64_t progress = Progress();
    if (progress == m_lastProgress)
    {
        NS_LOG_LOGIC("no frame sent since the last check: deadlock");
        Fire();
        return;
    }
    NS_LOG_LOGIC(progress - m_lastProgress << " frames since the last check");
    m_lastProgress = progress;
    if (m_livelockTimeout.IsStrictlyPositive())
    {
        const uint64_t deliveries = Deliveries();
        if (deliveries != m_lastDeliveries)
        {
            m_lastDeliveries = deliveries;
            m_lastDeliveryTime = Simulator::Now();
        }
        else if (Simulator::Now() - m_lastDeliveryTime >= m_livelockTimeout &&
                 !m_lastTxPackets.empty())
        {
            NS_LOG_LOGIC("frames sent but nothing delivered for "
                         << (Simulator::Now() - m_lastDeliveryTime).As(Time::US) << ": livelock");
            FireLivelock();
            return;
        }
        m_lastTxPackets.resize(m_devices.size());
        for (std::size_t i = 0; i < m_devices.size(); ++i)
        {
            m_lastTxPackets[i] = m_devices[i]->GetCounters().txPackets;
        }
    }
    m_armed = true;
    Simulator::Schedule(m_timeout, &CreditLinkWatchdog::Check, this);
}

void
CreditLinkWatchdog::FireLivelock()
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "livelock: packets moved for " << (Simulator::Now() - m_lastDeliveryTime).As(Time::US)
       << " but none reached a host or was dropped (a forwarding loop?) at t="
       << Simulator::Now().As(Time::US) << "; links that carried packets in the last "
       << m_timeout.As(Time::US) << ":\n";
    for (std::size_t i = 0; i < m_devices.size(); ++i)
    {
        const uint64_t tx = m_devices[i]->GetCounters().txPackets;
        if (tx != m_lastTxPackets[i])
        {
            os << "  link " << m_devices[i]->GetLinkName() << ": " << tx - m_lastTxPackets[i]
               << " packets\n";
        }
    }
    Report(os.str());
}

void
CreditLinkWatchdog::Fire()
{
    NS_LOG_FUNCTION(this);
    std::ostringstream os;
    os << "credit deadlock: nothing sent for " << m_timeout.As(Time::US)
       << " at t=" << Simulator::Now().As(Time::US)
       << " with packets queued; stuck links and VCs:\n";
    uint32_t stuck = 0;
    for (const auto& d : m_devices)
    {
        stuck += d->ReportStuckVcs(os);
    }
    if (stuck == 0)
    {
        os << "  none waits for credits (check arbitration tables and receive drain)\n";
    }
    Report(os.str());
}

void
CreditLinkWatchdog::Report(const std::string& report)
{
    NS_LOG_FUNCTION(this);
    m_report = report;
    m_fired = true;
    m_deadlockTrace(m_report);
    NS_ABORT_MSG_IF(m_abort, m_report);
    std::cerr << "CreditLinkWatchdog: " << m_report;
    if (m_stop)
    {
        Simulator::Stop();
    }
}

bool
CreditLinkWatchdog::HasFired() const
{
    return m_fired;
}

const std::string&
CreditLinkWatchdog::GetReport() const
{
    return m_report;
}

} // namespace ns3
