/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/transport-plane.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/log.h"
#include "ns3/string.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TransportPlane");
NS_OBJECT_ENSURE_REGISTERED(TransportPlane);

uint32_t
AdaptivePacketBytes(uint64_t messageBytes,
                    uint32_t fineBytes,
                    uint32_t burstBytes,
                    uint32_t minPackets)
{
    NS_ABORT_MSG_IF(fineBytes == 0, "AdaptivePacketBytes: fine packet unit of 0 bytes");
    const uint64_t fine = fineBytes;
    const uint64_t burst = std::max<uint64_t>(fine, burstBytes / fine * fine);
    if (minPackets == 0 || burst == fine)
    {
        return fineBytes;
    }
    const uint64_t share = (messageBytes + minPackets - 1) / minPackets;
    const uint64_t rounded = (share + fine - 1) / fine * fine;
    return static_cast<uint32_t>(std::clamp(rounded, fine, burst));
}

TypeId
TransportPlane::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TransportPlane")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddAttribute(
                "PlaneName",
                "Plane name in the flows table: nvlink, infiniband, ethernet, generic",
                StringValue("generic"),
                MakeStringAccessor(&TransportPlane::SetPlaneName, &TransportPlane::GetPlaneName),
                MakeStringChecker())
            .AddAttribute("SoftwareLatency",
                          "Software overhead of each message before its first packet "
                          "(NCCL per-step cost, order of 1 us)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&TransportPlane::m_softwareLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("EndpointRate",
                          "Payload rate a GPU's endpoint sustains into this plane, charged at "
                          "the receiving rank: a message completes no earlier than its first "
                          "packet's arrival plus bytes / rate after the rank's previous "
                          "messages on the plane; 0 = no limit beyond the wire",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&TransportPlane::m_endpointRate),
                          MakeDataRateChecker());
    return tid;
}

TransportPlane::TransportPlane()
    : m_name("generic"),
      m_endpointRate(0)
{
    NS_LOG_FUNCTION(this);
}

uint32_t
TransportPlane::GetMaxBurstBytes() const
{
    return GetMaxPayloadBytes();
}

const std::vector<uint32_t>&
TransportPlane::GetStripeLinks(uint32_t /* srcRank */, uint32_t /* dstRank */) const
{
    static const std::vector<uint32_t> none;
    return none;
}

double
TransportPlane::GetStripeLaneRate_gbyte_per_s(uint32_t /* srcRank */,
                                              uint32_t /* dstRank */,
                                              uint32_t /* lane */) const
{
    return 0;
}

std::string
TransportPlane::GetPlaneName() const
{
    return m_name;
}

void
TransportPlane::SetPlaneName(const std::string& name)
{
    NS_LOG_FUNCTION(this << name);
    m_name = name;
}

Time
TransportPlane::GetSoftwareLatency() const
{
    return m_softwareLatency;
}

void
TransportPlane::SetDeliverCallback(DeliverCallback cb)
{
    m_deliver = cb;
}

void
TransportPlane::SetTxReadyCallback(TxReadyCallback cb)
{
    m_txReady = cb;
}

void
TransportPlane::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_deliver = DeliverCallback();
    m_txReady = TxReadyCallback();
    Object::DoDispose();
}

void
TransportPlane::NotifyDelivered(uint32_t srcRank,
                                uint32_t dstRank,
                                uint32_t payloadBytes,
                                const TransportTag& tag)
{
    if (!m_deliver.IsNull())
    {
        m_deliver(srcRank, dstRank, payloadBytes, tag);
    }
}

void
TransportPlane::NotifyTxReady(uint32_t srcRank)
{
    if (!m_txReady.IsNull())
    {
        m_txReady(srcRank);
    }
}

} // namespace ns3

namespace ns3
{

DataRate
TransportPlane::GetEndpointRate() const
{
    return m_endpointRate;
}

double
TransportPlane::GetLineRate_gbyte_per_s(uint32_t /* rank */) const
{
    return 0;
}

double
TransportPlane::GetRankRate_gbyte_per_s(uint32_t rank) const
{
    const double line = GetLineRate_gbyte_per_s(rank);
    const double endpoint = m_endpointRate.GetBitRate() / 8e9;
    if (line <= 0 || endpoint <= 0)
    {
        return std::max(line, endpoint);
    }
    return std::min(line, endpoint);
}

} // namespace ns3
