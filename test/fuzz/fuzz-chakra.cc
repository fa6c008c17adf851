/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target for the Chakra execution-trace importer (scripts/fuzz-workload).  Input:
 * one byte giving the rank count (1 + byte % 4), then for every rank but the last a 16-bit
 * little-endian length and that many bytes of its .et file, the last rank taking the rest.
 * Only WorkloadError may leave the importer; what it accepts, written by ChakraTraceWriter
 * and read again, must write the same bytes (the writer's output is a fixed point).
 */
#include "ns3/trace-chakra.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace ns3;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
    {
        return 0;
    }
    WorkloadTraceBuilder::SetLimits(256, 20000);
    const size_t ranks = 1 + data[0] % 4;
    size_t pos = 1;
    std::vector<std::string> streams;
    for (size_t r = 0; r < ranks; ++r)
    {
        size_t len = size - pos;
        if (r + 1 < ranks)
        {
            if (size - pos < 2)
            {
                return 0;
            }
            len = std::min<size_t>(data[pos] | (data[pos + 1] << 8), size - pos - 2);
            pos += 2;
        }
        streams.emplace_back(reinterpret_cast<const char*>(data + pos), len);
        pos += len;
    }
    WorkloadTrace t;
    try
    {
        t = ChakraTraceImporter::ImportStreams(streams, {}, "fuzz");
    }
    catch (const WorkloadError&)
    {
        return 0;
    }
    const auto once = ChakraTraceWriter::Serialize(t);
    const auto twice =
        ChakraTraceWriter::Serialize(ChakraTraceImporter::ImportStreams(once, {}, "fuzz"));
    if (once != twice)
    {
        std::abort(); // the writer's output did not read back as the same trace
    }
    return 0;
}
