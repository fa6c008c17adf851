/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target for the workload parsers; built and run by scripts/fuzz-workload.
 * WORKLOAD_FUZZ_FORMAT selects the front end: 0 native, 1 SimAI, 2 GOAL.
 * Only WorkloadError may escape a parser; anything else (another exception,
 * a sanitizer report, a hang) is a bug.
 */
#include "ns3/trace-goal.h"
#include "ns3/trace-native.h"
#include "ns3/trace-simai.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#ifndef WORKLOAD_FUZZ_FORMAT
#define WORKLOAD_FUZZ_FORMAT 0
#endif

using namespace ns3;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    // Small limits keep every input fast; the code paths are the same.
    WorkloadTraceBuilder::SetLimits(256, 20000);
    const std::string text(reinterpret_cast<const char*>(data), size);
    try
    {
#if WORKLOAD_FUZZ_FORMAT == 0
        WorkloadTrace t = NativeTraceParser::ParseString(text, "fuzz");
        // Printing must give a trace that parses to the same print.
        const std::string once = NativeTracePrinter::Print(t);
        const std::string twice =
            NativeTracePrinter::Print(NativeTraceParser::ParseString(once, "printed"));
        if (once != twice)
        {
            abort();
        }
#elif WORKLOAD_FUZZ_FORMAT == 1
        SimAiWorkload w = SimAiWorkloadImporter::ParseString(text, "fuzz");
        SimAiImportOptions options;
        options.ranks = w.allGpus ? 0 : 8;
        SimAiWorkloadImporter::ToTrace(w, options, "fuzz");
#else
        GoalScheduleImporter::ImportString(text, "fuzz");
#endif
    }
    catch (const WorkloadError&)
    {
    }
    return 0;
}
