/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "background-ticker.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("BackgroundTicker");

std::map<uint64_t, BackgroundTicker::Entry> BackgroundTicker::s_tasks;
uint64_t BackgroundTicker::s_nextHandle = 1;
EventId BackgroundTicker::s_event;
bool BackgroundTicker::s_destroyHooked = false;

uint64_t
BackgroundTicker::Add(Time firstDelay, Task task)
{
    if (!s_destroyHooked)
    {
        // Simulator::Destroy drops pending events: forget ours with them so the
        // next simulation in the same process starts clean.
        Simulator::ScheduleDestroy(&BackgroundTicker::Reset);
        s_destroyHooked = true;
    }
    const uint64_t handle = s_nextHandle++;
    s_tasks[handle] = Entry{Simulator::Now() + Max(firstDelay, Time(0)), std::move(task)};
    Reschedule();
    return handle;
}

void
BackgroundTicker::Remove(uint64_t handle)
{
    s_tasks.erase(handle);
    if (s_tasks.empty())
    {
        Simulator::Cancel(s_event);
        s_event = EventId();
    }
}

std::size_t
BackgroundTicker::GetTaskCount()
{
    return s_tasks.size();
}

void
BackgroundTicker::Reset()
{
    s_tasks.clear();
    s_event = EventId();
    s_destroyHooked = false;
}

void
BackgroundTicker::Reschedule()
{
    Simulator::Cancel(s_event);
    s_event = EventId();
    if (s_tasks.empty())
    {
        return;
    }
    Time next = s_tasks.begin()->second.due;
    for (const auto& [handle, entry] : s_tasks)
    {
        next = Min(next, entry.due);
    }
    s_event = Simulator::Schedule(Max(next - Simulator::Now(), Time(0)), &BackgroundTicker::Fire);
}

void
BackgroundTicker::Fire()
{
    s_event = EventId();
    const Time now = Simulator::Now();
    std::vector<uint64_t> due;
    for (const auto& [handle, entry] : s_tasks)
    {
        if (entry.due <= now)
        {
            due.push_back(handle);
        }
    }
    for (uint64_t handle : due)
    {
        auto it = s_tasks.find(handle);
        if (it == s_tasks.end())
        {
            continue; // an earlier task removed it
        }
        Time delay = it->second.task();
        it = s_tasks.find(handle); // the task may have added or removed tasks
        if (it == s_tasks.end())
        {
            continue;
        }
        if (delay.IsStrictlyPositive())
        {
            it->second.due = now + delay;
        }
        else
        {
            s_tasks.erase(it);
        }
    }
    // Our own event is already off the queue: an empty queue means only
    // observers are left, and ticking on would never let Run() return.
    if (Simulator::IsFinished())
    {
        NS_LOG_LOGIC("simulation idle at " << now << ": background tasks stop");
        return;
    }
    Reschedule();
}

} // namespace ns3
