/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_BACKGROUND_TICKER_H
#define AI_FABRIC_BACKGROUND_TICKER_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <functional>
#include <map>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * One event chain for all periodic observers (LinkSampler, ProgressReporter).
 *
 * A periodic observer that reschedules itself keeps Simulator::Run going
 * forever (ns-3's ShowProgress needs Simulator::Stop).  With all observers on
 * one chain, the chain sees when it is the only thing left
 * (Simulator::IsFinished() inside its own event) and stops, so observers never
 * extend a simulation.
 */
class BackgroundTicker
{
  public:
    /// Returns the delay until the task's next call; zero or negative removes it.
    using Task = std::function<Time()>;

    /// Call \p task after \p firstDelay and then as it asks. Returns a handle for Remove.
    static uint64_t Add(Time firstDelay, Task task);
    static void Remove(uint64_t handle);
    /// Number of registered tasks (for tests).
    static std::size_t GetTaskCount();

  private:
    struct Entry
    {
        Time due;
        Task task;
    };

    static void Fire();
    static void Reschedule();
    static void Reset();

    static std::map<uint64_t, Entry> s_tasks;
    static uint64_t s_nextHandle;
    static EventId s_event;
    static bool s_destroyHooked;
};

} // namespace ns3

#endif
