/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_COLLECTIVE_KIND_H
#define AI_FABRIC_COLLECTIVE_KIND_H

// The closed sets of the collectives layer.  Text enters once, at the edge (a trace
// parser, a command line, CollectiveSpec), and leaves as the names below, which are
// the text of the collectives rows.

#include <cstdint>
#include <string>

namespace ns3
{

enum class CollectiveKind : uint8_t
{
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    SendRecv,
};

enum class CollectiveAlgorithm : uint8_t
{
    Auto, ///< the engine picks (CollectiveEngine::Resolve)
    Ring,
    Tree,
    HalvingDoubling,
    Direct,
    Hierarchical,
    Nvls,     ///< in-switch reduction (InSwitchReductionPlane)
    NvlsTree, ///< NVLS inside each domain, network across (NCCL's NVLSTree)
    /// NVLink reduce-scatter to every GPU (a head with its NIC), SHARP allreduce of each
    /// head's share in the InfiniBand switches, NVLink all-gather (NCCL's CollNetDirect)
    CollNetDirect,
    /// A chain inside each domain up to the channel's head, SHARP across, the chain down
    /// (NCCL's CollNetChain)
    CollNetChain,
    /// Parallel aggregated trees, allgather and reducescatter at one rank per domain in
    /// log2(ranks) steps (NCCL's PAT)
    Pat,
};

/// "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv"
const char* CollectiveKindName(CollectiveKind kind);
/// "auto", "ring", "tree", "halvingdoubling", "direct", "hierarchical", "nvls",
/// "nvlstree", "collnetdirect", "collnetchain", "pat"
const char* CollectiveAlgorithmName(CollectiveAlgorithm algorithm);
/// Case, '_' and '-' ignored ("All_Reduce"); false for anything else, \p kind untouched.
/// Lower-case, without '_' and '-'; "hd" and "rabenseifner" become "halvingdoubling".
std::string CanonicalCollectiveName(const std::string& text);
bool ParseCollectiveKind(const std::string& text, CollectiveKind* kind);
/// As ParseCollectiveKind; "hd" and "rabenseifner" are halvingdoubling.
bool ParseCollectiveAlgorithm(const std::string& text, CollectiveAlgorithm* algorithm);
/// The names, ", "-separated, for error messages.
std::string CollectiveKindNames();
std::string CollectiveAlgorithmNames();
/// Broadcast and reduce have a root.
bool CollectiveHasRoot(CollectiveKind kind);

} // namespace ns3

#endif
