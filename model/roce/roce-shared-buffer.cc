/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "roce-shared-buffer.h"

#include "ns3/credit-link-net-device.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceSharedBuffer");

NS_OBJECT_ENSURE_REGISTERED(RoceSharedBuffer);
NS_OBJECT_ENSURE_REGISTERED(RoceSharedBufferFlowControl);

TypeId
RoceSharedBuffer::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceSharedBuffer")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<RoceSharedBuffer>()
            .AddAttribute("SizeBytes",
                          "Bytes shared by the switch's ingress queues",
                          UintegerValue(16 << 20),
                          MakeUintegerAccessor(&RoceSharedBuffer::m_size),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("Alpha",
                          "Dynamic-threshold factor: a queue may hold Alpha x the free buffer "
                          "(Choudhury and Hahne: 1)",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&RoceSharedBuffer::m_alpha),
                          MakeDoubleChecker<double>(1.0 / 128, 128));
    return tid;
}

RoceSharedBuffer::RoceSharedBuffer()
    : m_size(16 << 20),
      m_alpha(1.0)
{
}

uint64_t
RoceSharedBuffer::GetSizeBytes() const
{
    return m_size;
}

uint64_t
RoceSharedBuffer::GetUsedBytes() const
{
    return m_used;
}

uint64_t
RoceSharedBuffer::GetPeakUsedBytes() const
{
    return m_peak;
}

uint64_t
RoceSharedBuffer::GetThresholdBytes() const
{
    const uint64_t free = m_used < m_size ? m_size - m_used : 0;
    return static_cast<uint64_t>(m_alpha * static_cast<double>(free));
}

void
RoceSharedBuffer::Add(int64_t delta)
{
    m_used = static_cast<uint64_t>(static_cast<int64_t>(m_used) + delta);
    m_peak = std::max(m_peak, m_used);
}

TypeId
RoceSharedBufferFlowControl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceSharedBufferFlowControl")
                            .SetParent<PriorityFlowControl>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<RoceSharedBufferFlowControl>();
    return tid;
}

void
RoceSharedBufferFlowControl::SetBuffer(Ptr<RoceSharedBuffer> buffer)
{
    m_buffer = buffer;
}

Ptr<RoceSharedBuffer>
RoceSharedBufferFlowControl::GetBuffer() const
{
    return m_buffer;
}

void
RoceSharedBufferFlowControl::DoDispose()
{
    m_buffer = nullptr;
    PriorityFlowControl::DoDispose();
}

std::string
RoceSharedBufferFlowControl::Validate(const CreditLinkNetDevice* device) const
{
    if (!m_buffer)
    {
        return "shared-buffer PFC on " + device->GetLinkName() + ": no RoceSharedBuffer set";
    }
    m_headroom = RequiredHeadroomBytes(device);
    if (m_buffer->GetSizeBytes() < 2 * m_headroom)
    {
        return "shared-buffer PFC on " + device->GetLinkName() + ": SizeBytes " +
               std::to_string(m_buffer->GetSizeBytes()) + " below twice the headroom " +
               std::to_string(m_headroom) + " B";
    }
    return PriorityFlowControl::Validate(device);
}

uint64_t
RoceSharedBufferFlowControl::GetLimitBytes(uint32_t vc) const
{
    if (!IsLossless())
    {
        return GetXoffNow(vc);
    }
    // Headroom is the queue's own: once paused, what is on the cable still fits whatever
    // the other queues take of the shared part meanwhile.
    // Not paused yet: the queue is below its last threshold, which the others may have
    // lowered since; its next packet fills from there into its headroom and pauses it.
    const uint64_t pausedAt = GetPausedAtBytes(vc);
    return (pausedAt != 0 ? pausedAt : std::max(GetXoffNow(vc), GetOccupancyBytes(vc))) +
           m_headroom;
}

uint64_t
RoceSharedBufferFlowControl::GetXoffNow(uint32_t /* vc */) const
{
    return m_buffer->GetThresholdBytes();
}

uint64_t
RoceSharedBufferFlowControl::GetXonNow(uint32_t vc) const
{
    const uint64_t offset = GetXoffBytes(vc) - GetXonBytes(vc);
    const uint64_t xoff = GetXoffNow(vc);
    return xoff > offset ? xoff - offset : 0;
}

void
RoceSharedBufferFlowControl::NotifyOccupancy(int64_t delta)
{
    m_buffer->Add(delta);
}

} // namespace ns3
