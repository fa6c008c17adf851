/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_WIRE_TIMING_H
#define AI_FABRIC_WIRE_TIMING_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Serialisation clock of one link direction.
 *
 * Rates in ai-fabric are *signalling* rates (what the PHY clocks out);
 * line coding (8b/10b, 64b/66b, PAM4+FEC) leaves EncodingEfficiency of them
 * for frames.  Packet durations are whole nanoseconds, and the fraction that
 * rounding drops is carried to the next packet, so a long transfer runs at
 * exactly the data rate while each packet is within 1 ns of its exact time.
 */
class SerializationClock
{
  public:
    SerializationClock();
    SerializationClock(DataRate signallingRate, double encodingEfficiency);

    void SetRate(DataRate signallingRate, double encodingEfficiency);

    /// Rate available to frames: signalling rate x encoding efficiency.
    uint64_t GetDataRateBps() const;
    DataRate GetSignallingRate() const;
    double GetEncodingEfficiency() const;

    /// Exact duration of \p wireBytes, rounded up to whole ns; stateless.
    Time GetTransmitTime(uint64_t wireBytes) const;

    /// Duration of the next frame of \p wireBytes, carrying the rounding remainder.
    Time NextTransmitTime(uint64_t wireBytes);

    /// Drop the carried remainder (the line went idle).
    void Reset();

  private:
    DataRate m_signallingRate;
    double m_encodingEfficiency;
    uint64_t m_dataRateBps;
    uint64_t m_remainder; //!< carried bit-nanoseconds not yet charged, < m_dataRateBps
};

} // namespace ns3

#endif
