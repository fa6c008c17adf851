/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-link-channel.h"

#include "credit-link-net-device.h"
#include "credit-switch.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

#include <iterator>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreditLinkChannel");

NS_OBJECT_ENSURE_REGISTERED(CreditLinkChannel);

TypeId
CreditLinkChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CreditLinkChannel")
                            .SetParent<Channel>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<CreditLinkChannel>()
                            .AddAttribute("Delay",
                                          "Propagation delay of each direction",
                                          TimeValue(NanoSeconds(0)),
                                          MakeTimeAccessor(&CreditLinkChannel::m_delay),
                                          MakeTimeChecker(Time(0)));
    return tid;
}

CreditLinkChannel::CreditLinkChannel()
    : m_nDevices(0)
{
    NS_LOG_FUNCTION(this);
    for (uint32_t dir = 0; dir < 2; ++dir)
    {
        m_directions[dir].delivery.Bind(&CreditLinkChannel::Deliver, this, dir);
    }
}

void
CreditLinkChannel::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& d : m_directions)
    {
        d.delivery.Cancel();
        d.scheduled = false;
        d.wire.clear();
    }
    m_devices = {nullptr, nullptr};
    Channel::DoDispose();
}

void
CreditLinkChannel::Attach(Ptr<CreditLinkNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    NS_ABORT_MSG_IF(m_nDevices == 2, "CreditLinkChannel already connects two devices");
    m_devices[m_nDevices++] = device;
    if (m_nDevices == 2)
    {
        NS_LOG_LOGIC("connects " << m_devices[0]->GetLinkName() << " with delay "
                                 << m_delay.As(Time::NS));
    }
}

std::size_t
CreditLinkChannel::GetNDevices() const
{
    return m_nDevices;
}

Ptr<NetDevice>
CreditLinkChannel::GetDevice(std::size_t i) const
{
    return i < m_nDevices ? m_devices[i] : nullptr;
}

uint32_t
CreditLinkChannel::IndexOf(const CreditLinkNetDevice* device) const
{
    return PeekPointer(m_devices[0]) == device ? 0 : 1;
}

Ptr<CreditLinkNetDevice>
CreditLinkChannel::GetPeer(const CreditLinkNetDevice* self) const
{
    NS_ABORT_MSG_IF(m_nDevices != 2, "CreditLinkChannel used with only one device attached");
    return m_devices[1 - IndexOf(self)];
}

Time
CreditLinkChannel::GetDelay() const
{
    return m_delay;
}

void
CreditLinkChannel::WireFifo::push_back(InFlight&& frame)
{
    if (m_size == Capacity())
    {
        std::vector<InFlight> bigger(2 * Capacity());
        for (uint32_t i = 0; i < m_size; ++i)
        {
            bigger[i] = std::move(At(i));
        }
        m_spill.swap(bigger);
        m_head = 0;
    }
    At(m_size) = std::move(frame);
    ++m_size;
}

void
CreditLinkChannel::WireFifo::insert_before_back(InFlight&& frame)
{
    push_back(std::move(frame));
    std::swap(At(m_size - 1), At(m_size - 2));
}

void
CreditLinkChannel::WireFifo::pop_front()
{
    At(0).packet = nullptr; // the delivered packet is not kept alive by its old slot
    m_head = (m_head + 1) & (Capacity() - 1);
    if (--m_size == 0)
    {
        m_head = 0;
        if (!m_spill.empty())
        {
            m_spill.clear();
            m_spill.shrink_to_fit();
        }
    }
}

void
CreditLinkChannel::WireFifo::clear()
{
    while (!empty())
    {
        pop_front();
    }
}

void
CreditLinkChannel::Push(uint32_t dir, InFlight&& frame)
{
    Direction& d = m_directions[dir];
    if (!d.wire.empty() && frame.arrival < d.wire.back().arrival)
    {
        // A flow-control frame cannot overtake the frame ahead of it on the wire: it is
        // delivered just before it, with its head.  An event is pending already.  (The device
        // sends held flow-control frames before their data frame, so this is only a guard.)
        NS_ASSERT_MSG(!frame.packet, "a data frame would overtake the frame before it");
        frame.arrival = d.wire.back().arrival;
        frame.tail = frame.arrival;
        d.wire.insert_before_back(std::move(frame));
        return;
    }
    const Time arrival = frame.arrival;
    d.wire.push_back(std::move(frame));
    if (!d.scheduled)
    {
        d.scheduled = true;
        if (d.context == NO_CONTEXT)
        {
            const Ptr<Node> node = m_devices[1 - dir]->GetNode();
            if (!node)
            {
                d.delivery.ScheduleWithContext(0, arrival - Simulator::Now());
                return;
            }
            d.context = node->GetId();
        }
        d.delivery.ScheduleWithContext(d.context, arrival - Simulator::Now());
    }
}

void
CreditLinkChannel::TransmitData(const CreditLinkNetDevice* from,
                                Ptr<Packet> packet,
                                uint32_t vc,
                                Time headTime,
                                Time txTime)
{
    NS_ABORT_MSG_IF(m_nDevices != 2, "CreditLinkChannel used with only one device attached");
    const Time now = Simulator::Now();
    Push(IndexOf(from), InFlight{now + headTime + m_delay, now + txTime + m_delay, packet, vc, 0});
}

void
CreditLinkChannel::TransmitCredits(const CreditLinkNetDevice* from,
                                   uint32_t vc,
                                   uint32_t credits,
                                   Time txTime)
{
    const Time arrival = Simulator::Now() + txTime + m_delay;
    Push(IndexOf(from), InFlight{arrival, arrival, nullptr, vc, credits});
}

uint32_t
CreditLinkChannel::GetPeerReceiveBufferBytes(const CreditLinkNetDevice* from, uint32_t vc) const
{
    return GetPeer(from)->GetReceiveBufferBytes(vc);
}

uint32_t
CreditLinkChannel::GetPeerCutThroughBytes(const CreditLinkNetDevice* from) const
{
    const Ptr<CreditSwitch> sw = GetPeer(from)->GetSwitch();
    return sw ? sw->GetCutThroughBytes() : 0;
}

bool
CreditLinkChannel::HasFramesInFlight() const
{
    return !m_directions[0].wire.empty() || !m_directions[1].wire.empty();
}

std::vector<CreditLinkChannel::WireFrame>
CreditLinkChannel::GetFramesInFlight(const CreditLinkNetDevice* from) const
{
    std::vector<WireFrame> frames;
    if (m_nDevices != 2)
    {
        return frames;
    }
    m_directions[IndexOf(from)].wire.ForEach([&frames](const InFlight& f) {
        frames.push_back(WireFrame{f.packet, f.vc, f.credits});
    });
    return frames;
}

void
CreditLinkChannel::Deliver(uint32_t dir)
{
    Direction& d = m_directions[dir];
    Ptr<CreditLinkNetDevice> dst = m_devices[1 - dir];
    const Time now = Simulator::Now();
    d.scheduled = false;
    while (!d.wire.empty() && d.wire.front().arrival <= now)
    {
        InFlight frame = std::move(d.wire.front());
        d.wire.pop_front();
        if (frame.packet)
        {
            dst->ReceiveData(frame.packet, frame.vc, frame.tail);
        }
        else
        {
            dst->ReceiveCredits(frame.vc, frame.credits);
        }
    }
    if (!d.wire.empty() && !d.scheduled)
    {
        d.scheduled = true;
        d.delivery.Schedule(d.wire.front().arrival - now);
    }
}

} // namespace ns3
