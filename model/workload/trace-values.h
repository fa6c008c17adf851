/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRACE_VALUES_H
#define AI_FABRIC_TRACE_VALUES_H

// The value syntax shared by the trace formats and the generator: durations, sizes,
// unsigned numbers and rank lists, parsed exactly and printed in their shortest form.

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// "1.5ms" -> 1500000; false on a bad unit, syntax or overflow.
bool ParseTimeNs(const std::string& text, uint64_t* timeNs);
/// "64MiB" -> 67108864; false on a bad unit, syntax or overflow.
bool ParseBytes(const std::string& text, uint64_t* bytes);
/// Shortest exact spelling: 1500000 -> "1500us", 67108864 -> "64MiB".
std::string FormatTimeNs(uint64_t timeNs);
std::string FormatBytes(uint64_t bytes);
/// Decimal without sign; false on anything else or overflow of uint64.
bool ParseUnsigned(const std::string& text, uint64_t* value);
/// "0-7,9,12-15" -> sorted unique ranks; false with \p why on error.
bool ParseRankList(const std::string& text,
                   uint32_t numRanks,
                   std::vector<uint32_t>* ranks,
                   std::string* why);
/// Inverse of ParseRankList: "0-7,9,12-15".
std::string FormatRankList(const std::vector<uint32_t>& sortedRanks);

} // namespace ns3

#endif
