/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_COLLECTIVE_BANDWIDTH_H
#define AI_FABRIC_COLLECTIVE_BANDWIDTH_H

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * nccl-tests (doc/PERFORMANCE.md) bus-bandwidth factor of a collective on
 * \p numRanks ranks: 2(n-1)/n for allreduce; (n-1)/n for reducescatter,
 * allgather, alltoall; 1 for broadcast, reduce, sendrecv.  \p kind is matched
 * case-insensitively ignoring '_' and '-' ("reduce_scatter", "AllGather").
 * \throws std::invalid_argument for an unknown kind or numRanks == 0.
 */
double CollectiveBusBwFactor(const std::string& kind, uint32_t numRanks);

/// algbw in GB/s (1e9 bytes/s, nccl-tests' unit): per-rank bytes / duration.
/// Returns 0 for a non-positive duration.
double CollectiveAlgBw_gbyte_per_s(uint64_t bytesPerRank, int64_t durationNs);

/// busbw in GB/s = algbw x CollectiveBusBwFactor(kind, numRanks).
double CollectiveBusBw_gbyte_per_s(const std::string& kind,
                                   uint32_t numRanks,
                                   uint64_t bytesPerRank,
                                   int64_t durationNs);

} // namespace ns3

#endif
