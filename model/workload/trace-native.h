/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRACE_NATIVE_H
#define AI_FABRIC_TRACE_NATIVE_H

#include "ns3/workload-trace.h"

#include <string>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Reader of the native "fabric-trace 1" format (doc/workload.md).  Throws
 * WorkloadError naming file, line, column or field on any bad input.
 */
class NativeTraceParser
{
  public:
    static WorkloadTrace ParseFile(const std::string& path);
    /// \p sourceName is only used in messages.
    static WorkloadTrace ParseString(const std::string& text, const std::string& sourceName);

    static constexpr uint32_t MAX_NESTING = 32;
};

/**
 * \ingroup ai-fabric
 * Writes a WorkloadTrace in canonical native form: repeat blocks expanded,
 * one line per source statement and set of identical ops, ranks as ranges,
 * units chosen as the largest exact one, keys in a fixed order.  Parsing the
 * output and printing again gives the same text.
 */
class NativeTracePrinter
{
  public:
    static std::string Print(const WorkloadTrace& trace);
    static void WriteFile(const WorkloadTrace& trace, const std::string& path);
};

} // namespace ns3

#endif
