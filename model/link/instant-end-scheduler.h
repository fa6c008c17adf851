/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INSTANT_END_SCHEDULER_H
#define AI_FABRIC_INSTANT_END_SCHEDULER_H

#include "ns3/callback.h"

#include <cstdint>
#include <map>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Steps run at the end of the current instant in a fixed order, not in the order of the
 * events that asked for them: ns-3's distributed simulator delivers same-time events from
 * other processes in another order than a single process would, so decisions that depend
 * on which of them came first are deferred to here (doc/cluster.md, "Same rows for any
 * number of processes").
 *
 * Ordering rule: one event per busy instant, scheduled (ScheduleNow) by the first Add of
 * the instant, so it runs after every event of the instant that exists by then.  It runs
 * the pending steps in increasing key order; a step may add others, which join the same
 * event: a key below the ones left runs next, one above them in its turn.  A key already
 * pending keeps its first step (the later Add is ignored).  Transport steps take keys
 * below 2^63 (StepKey), device decisions above (DeviceKey), so every transport injection
 * of the instant happens before any device picks its next frame.
 *
 * One simulation per process at a time: the pending set is forgotten at
 * Simulator::Destroy.
 */
class InstantEndScheduler
{
  public:
    /// The process's scheduler.
    static InstantEndScheduler& Get();

    /// Key of a step that runs before every device decision: (major, minor), major < 2^31.
    static uint64_t StepKey(uint32_t major, uint32_t minor);
    /// Key of a device decision: devices in (node, interface) order, after every StepKey.
    static uint64_t DeviceKey(uint32_t nodeId, uint32_t ifIndex);

    /// Runs \p step in this instant's instant-end event, in \p key order.
    void Add(uint64_t key, Callback<void> step);
    /// Steps waiting for the instant-end event.
    std::size_t GetNPending() const;

  private:
    InstantEndScheduler() = default;
    void RunInstantEnd();
    static void Forget();

    std::map<uint64_t, Callback<void>> m_pending;
    bool m_scheduled{false};
    bool m_destroyHooked{false};
};

} // namespace ns3

#endif
