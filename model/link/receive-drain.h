/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RECEIVE_DRAIN_H
#define AI_FABRIC_RECEIVE_DRAIN_H

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/packet.h"

#include <deque>
#include <utility>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * A host that consumes received packets at a finite rate (CreditLinkNetDevice's
 * ReceiveDrainRate): they wait in arrival order and leave one at a time, each its bytes
 * at the rate after the previous one left (after its own arrival for the first).  A
 * consumed packet goes to the consume callback, which frees its receive buffer: a slow
 * host thus holds credits and paces its sender.  One event per packet.
 */
class ReceiveDrain
{
  public:
    /// (packet, VC it arrived on)
    typedef Callback<void, Ptr<Packet>, uint32_t> ConsumeCallback;

    void SetConsumeCallback(ConsumeCallback cb);
    void SetRate(DataRate rate);
    DataRate GetRate() const;

    /// Rate 0: the host takes packets at once and Push is not used.
    bool IsImmediate() const
    {
        return m_rate.GetBitRate() == 0;
    }

    void Push(Ptr<Packet> packet, uint32_t vc);
    bool IsEmpty() const;
    /// Drops the waiting packets and the pending event (disposal).
    void Clear();

  private:
    void Complete();

    DataRate m_rate{0};
    std::deque<std::pair<Ptr<Packet>, uint32_t>> m_queue;
    bool m_draining{false};
    EventId m_event;
    ConsumeCallback m_consume;
};

} // namespace ns3

#endif
