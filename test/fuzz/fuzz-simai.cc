/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target for the SimAI / ASTRA-sim 1.0 importer (scripts/fuzz-workload): parse,
 * then expand to a trace.  Only WorkloadError may leave the importer.
 */
#include "ns3/trace-simai.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace ns3;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    WorkloadTraceBuilder::SetLimits(256, 20000);
    try
    {
        const SimAiWorkload w = SimAiWorkloadImporter::ParseString(
            std::string(reinterpret_cast<const char*>(data), size),
            "fuzz");
        SimAiImportOptions options;
        options.ranks = w.allGpus ? 0 : 8;
        SimAiWorkloadImporter::ToTrace(w, options, "fuzz");
    }
    catch (const WorkloadError&)
    {
    }
    return 0;
}
