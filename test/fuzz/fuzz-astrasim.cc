/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target for the ASTRA-sim 1.0 loops and SimAI pipeline of the layer-file importer
 * (scripts/fuzz-workload): the first two bytes choose the rank count, the first network
 * dimension and the passes, the rest is the file.  Only WorkloadError may leave the importer.
 */
#include "ns3/trace-simai.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace ns3;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
    {
        return 0;
    }
    WorkloadTraceBuilder::SetLimits(256, 20000);
    try
    {
        const SimAiWorkload w = SimAiWorkloadImporter::ParseString(
            std::string(reinterpret_cast<const char*>(data + 2), size - 2),
            "fuzz");
        SimAiImportOptions options;
        options.ranks = (data[0] & 0x3f) + 1; // 1..64, whatever the header says
        options.firstDimension = data[1] & 0x0f;
        options.passes = 1 + (data[1] >> 7);
        options.nsPerTick = (data[0] & 0x40) ? 0.5 : 1.0;
        SimAiWorkloadImporter::ToTrace(w, options, "fuzz");
    }
    catch (const WorkloadError&)
    {
    }
    return 0;
}
