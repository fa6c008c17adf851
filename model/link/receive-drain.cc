/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "receive-drain.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ReceiveDrain");

void
ReceiveDrain::SetConsumeCallback(ConsumeCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_consume = cb;
}

void
ReceiveDrain::SetRate(DataRate rate)
{
    NS_LOG_FUNCTION(this << rate);
    m_rate = rate;
}

DataRate
ReceiveDrain::GetRate() const
{
    return m_rate;
}

void
ReceiveDrain::Push(Ptr<Packet> packet, uint32_t vc)
{
    m_queue.emplace_back(packet, vc);
    if (!m_draining)
    {
        m_draining = true;
        m_event = Simulator::Schedule(m_rate.CalculateBytesTxTime(packet->GetSize()),
                                      &ReceiveDrain::Complete,
                                      this);
    }
}

bool
ReceiveDrain::IsEmpty() const
{
    return m_queue.empty();
}

void
ReceiveDrain::Clear()
{
    NS_LOG_FUNCTION(this);
    m_event.Cancel();
    m_queue.clear();
    m_draining = false;
    m_consume = ConsumeCallback();
}

void
ReceiveDrain::Complete()
{
    auto [packet, vc] = m_queue.front();
    m_queue.pop_front();
    m_consume(packet, vc);
    if (m_queue.empty())
    {
        m_draining = false;
        return;
    }
    m_event = Simulator::Schedule(m_rate.CalculateBytesTxTime(m_queue.front().first->GetSize()),
                                  &ReceiveDrain::Complete,
                                  this);
}

} // namespace ns3
