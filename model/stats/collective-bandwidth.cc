/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "collective-bandwidth.h"

#include <cctype>
#include <stdexcept>

namespace ns3
{

namespace
{

std::string
NormaliseKind(const std::string& kind)
{
    std::string out;
    for (char c : kind)
    {
        if (c != '_' && c != '-' && c != ' ')
        {
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        }
    }
    return out;
}

} // namespace

double
CollectiveBusBwFactor(const std::string& kind, uint32_t numRanks)
{
    if (numRanks == 0)
    {
        throw std::invalid_argument("collective '" + kind + "' on 0 ranks");
    }
    const double n = numRanks;
    const std::string k = NormaliseKind(kind);
    if (k == "allreduce")
    {
        return 2.0 * (n - 1.0) / n;
    }
    if (k == "reducescatter" || k == "allgather" || k == "alltoall")
    {
        return (n - 1.0) / n;
    }
    if (k == "broadcast" || k == "reduce" || k == "sendrecv")
    {
        return 1.0;
    }
    throw std::invalid_argument("unknown collective kind '" + kind + "'");
}

double
CollectiveAlgBw_gbyte_per_s(uint64_t bytesPerRank, int64_t durationNs)
{
    // bytes per nanosecond is exactly 1e9 bytes per second.
    return durationNs > 0 ? static_cast<double>(bytesPerRank) / static_cast<double>(durationNs)
                          : 0.0;
}

double
CollectiveBusBw_gbyte_per_s(const std::string& kind,
                            uint32_t numRanks,
                            uint64_t bytesPerRank,
                            int64_t durationNs)
{
    return CollectiveAlgBw_gbyte_per_s(bytesPerRank, durationNs) *
           CollectiveBusBwFactor(kind, numRanks);
}

} // namespace ns3
