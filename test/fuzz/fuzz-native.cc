/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target for the native trace parser (scripts/fuzz-workload builds and runs it).
 * Only WorkloadError may leave the parser; anything else (another exception, a sanitizer
 * report, a hang) is a bug.  Every accepted input must also print to a fixed point.
 */
#include "ns3/trace-native.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace ns3;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    // Small limits keep every input fast; the code paths are the same.
    WorkloadTraceBuilder::SetLimits(256, 20000);
    try
    {
        const WorkloadTrace t =
            NativeTraceParser::ParseString(std::string(reinterpret_cast<const char*>(data), size),
                                           "fuzz");
        const std::string once = NativeTracePrinter::Print(t);
        const std::string twice =
            NativeTracePrinter::Print(NativeTraceParser::ParseString(once, "printed"));
        if (once != twice)
        {
            abort();
        }
    }
    catch (const WorkloadError&)
    {
    }
    return 0;
}
