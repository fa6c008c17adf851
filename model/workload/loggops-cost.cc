/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/loggops-cost.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("LogGopsCost");
NS_OBJECT_ENSURE_REGISTERED(LogGopsCost);

namespace
{

// (s-1)·perByte, rounded to the ns: LogGOPSim charges the first byte with o (or g) alone.
Time
PerByte(uint64_t bytes, double perByteNs)
{
    const double ns = bytes > 1 ? static_cast<double>(bytes - 1) * perByteNs : 0.0;
    return NanoSeconds(static_cast<int64_t>(std::llround(ns)));
}

} // namespace

TypeId
LogGopsCost::GetTypeId()
{
    // Defaults: LogGOPSim's loggopsim_cmdline.ggo (o 1500, O 0, g 1000, G 6, S 65535; ns).
    static TypeId tid =
        TypeId("ns3::LogGopsCost")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<LogGopsCost>()
            .AddAttribute("Overhead",
                          "o: CPU time per message, at the sender and at the receiver",
                          TimeValue(NanoSeconds(1500)),
                          MakeTimeAccessor(&LogGopsCost::m_overhead),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("OverheadPerByteNs",
                          "O: CPU time per byte after the first, ns",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&LogGopsCost::m_overheadPerByteNs),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("Gap",
                          "g: least time between the starts of two messages of one NIC",
                          TimeValue(NanoSeconds(1000)),
                          MakeTimeAccessor(&LogGopsCost::m_gap),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("GapPerByteNs",
                          "G: NIC gap per byte after the first, ns",
                          DoubleValue(6.0),
                          MakeDoubleAccessor(&LogGopsCost::m_gapPerByteNs),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("EagerLimitBytes",
                          "S: larger messages are sent by rendezvous (the send completes when "
                          "the receiver matched it)",
                          UintegerValue(65535),
                          MakeUintegerAccessor(&LogGopsCost::m_eagerLimitBytes),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

LogGopsCost::LogGopsCost()
    : m_overheadPerByteNs(0.0),
      m_gapPerByteNs(6.0),
      m_eagerLimitBytes(65535)
{
    NS_LOG_FUNCTION(this);
}

Time
LogGopsCost::CpuOverhead(uint64_t bytes) const
{
    return m_overhead + PerByte(bytes, m_overheadPerByteNs);
}

Time
LogGopsCost::NicGap(uint64_t bytes) const
{
    return m_gap + PerByte(bytes, m_gapPerByteNs);
}

bool
LogGopsCost::IsEager(uint64_t bytes) const
{
    return bytes <= m_eagerLimitBytes;
}

} // namespace ns3
