/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "instant-end-scheduler.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InstantEndScheduler");

InstantEndScheduler&
InstantEndScheduler::Get()
{
    static InstantEndScheduler scheduler; // one simulation per process at a time
    return scheduler;
}

uint64_t
InstantEndScheduler::StepKey(uint32_t major, uint32_t minor)
{
    NS_ABORT_MSG_IF(major >= (uint32_t{1} << 31),
                    "InstantEndScheduler::StepKey: major " << major << " >= 2^31");
    return uint64_t{major} << 32 | minor;
}

uint64_t
InstantEndScheduler::DeviceKey(uint32_t nodeId, uint32_t ifIndex)
{
    return (uint64_t{1} << 63) | uint64_t{nodeId} << 32 | ifIndex;
}

void
InstantEndScheduler::Add(uint64_t key, Callback<void> step)
{
    m_pending.emplace(key, step);
    if (!m_destroyHooked)
    {
        m_destroyHooked = true;
        Simulator::ScheduleDestroy(&InstantEndScheduler::Forget);
    }
    if (!m_scheduled)
    {
        // After every event of this instant that exists now: all arrivals of the instant do
        // (channel delays > 0), also those from other processes (inserted as the window
        // begins).
        m_scheduled = true;
        Simulator::ScheduleNow(&InstantEndScheduler::RunInstantEnd, this);
    }
}

std::size_t
InstantEndScheduler::GetNPending() const
{
    return m_pending.size();
}

void
InstantEndScheduler::RunInstantEnd()
{
    m_scheduled = false;
    NS_LOG_LOGIC(m_pending.size() << " steps at the end of the instant");
    // A step may let others start (a switch's next head, released credits): they join the
    // set and run in this same event.
    while (!m_pending.empty())
    {
        const Callback<void> step = m_pending.begin()->second;
        m_pending.erase(m_pending.begin());
        step();
    }
}

void
InstantEndScheduler::Forget()
{
    NS_LOG_FUNCTION_NOARGS();
    InstantEndScheduler& s = Get();
    s.m_pending.clear();
    s.m_scheduled = false;
    s.m_destroyHooked = false;
}

} // namespace ns3
