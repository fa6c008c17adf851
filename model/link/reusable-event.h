/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_REUSABLE_EVENT_H
#define AI_FABRIC_REUSABLE_EVENT_H

#include "ns3/event-id.h"
#include "ns3/make-event.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"

namespace ns3
{

/**
 * \ingroup ai-fabric
 * One EventImpl scheduled again and again.  ns-3 allocates an EventImpl per Schedule; a
 * device's transmit-complete and a channel direction's delivery are scheduled once or
 * twice per packet-hop but never twice at a time, so one bound event serves them all.
 * The owner guarantees that: at most one pending instance.  Cancel is final (ns-3 has
 * no un-cancel), for disposal only.
 */
class ReusableEvent
{
  public:
    template <typename MEM, typename OBJ, typename... Ts>
    void Bind(MEM method, OBJ object, Ts... args)
    {
        m_impl = Ptr<EventImpl>(MakeEvent(method, object, args...), false);
    }

    EventId Schedule(const Time& delay) const
    {
        return Simulator::Schedule(delay, m_impl);
    }

    void ScheduleWithContext(uint32_t context, const Time& delay) const
    {
        m_impl->Ref(); // the simulator releases its reference after the invocation
        Simulator::ScheduleWithContext(context, delay, PeekPointer(m_impl));
    }

    void Cancel()
    {
        if (m_impl)
        {
            m_impl->Cancel();
        }
    }

  private:
    Ptr<EventImpl> m_impl;
};

} // namespace ns3

#endif
