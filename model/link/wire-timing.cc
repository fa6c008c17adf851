/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "wire-timing.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SerializationClock");

SerializationClock::SerializationClock()
    : SerializationClock(DataRate("100Gbps"), 1.0)
{
}

SerializationClock::SerializationClock(DataRate signallingRate, double encodingEfficiency)
    : m_encodingEfficiency(1.0),
      m_dataRateBps(0),
      m_remainder(0)
{
    SetRate(signallingRate, encodingEfficiency);
}

void
SerializationClock::SetRate(DataRate signallingRate, double encodingEfficiency)
{
    NS_ABORT_MSG_IF(encodingEfficiency <= 0.0 || encodingEfficiency > 1.0,
                    "encoding efficiency must be in (0, 1], got " << encodingEfficiency);
    NS_ABORT_MSG_IF(signallingRate.GetBitRate() == 0, "link rate must be positive");
    m_signallingRate = signallingRate;
    m_encodingEfficiency = encodingEfficiency;
    m_dataRateBps = static_cast<uint64_t>(
        std::llround(static_cast<long double>(signallingRate.GetBitRate()) * encodingEfficiency));
    m_remainder = 0;
}

uint64_t
SerializationClock::GetDataRateBps() const
{
    return m_dataRateBps;
}

DataRate
SerializationClock::GetSignallingRate() const
{
    return m_signallingRate;
}

double
SerializationClock::GetEncodingEfficiency() const
{
    return m_encodingEfficiency;
}

Time
SerializationClock::GetTransmitTime(uint64_t wireBytes) const
{
    // 128-bit: bits x 1e9 overflows 64 bits beyond ~2 GB in one call.
    const unsigned __int128 bitNs = static_cast<unsigned __int128>(wireBytes) * 8u * 1000000000u;
    const unsigned __int128 ns = (bitNs + m_dataRateBps - 1) / m_dataRateBps;
    return NanoSeconds(static_cast<int64_t>(ns));
}

Time
SerializationClock::NextTransmitTime(uint64_t wireBytes)
{
    const unsigned __int128 bitNs =
        static_cast<unsigned __int128>(wireBytes) * 8u * 1000000000u + m_remainder;
    const auto ns = static_cast<int64_t>(bitNs / m_dataRateBps);
    m_remainder = static_cast<uint64_t>(bitNs % m_dataRateBps);
    return NanoSeconds(ns);
}

void
SerializationClock::Reset()
{
    m_remainder = 0;
}

} // namespace ns3
