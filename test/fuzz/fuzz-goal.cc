/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target for the GOAL schedule importer (scripts/fuzz-workload).  Only
 * WorkloadError may leave the importer.
 */
#include "ns3/trace-goal.h"

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
        GoalScheduleImporter::ImportString(std::string(reinterpret_cast<const char*>(data), size),
                                           "fuzz");
    }
    catch (const WorkloadError&)
    {
    }
    return 0;
}
