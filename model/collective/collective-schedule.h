/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_COLLECTIVE_SCHEDULE_H
#define AI_FABRIC_COLLECTIVE_SCHEDULE_H

#include "ns3/transport-plane.h"

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * A collective decomposed into transport messages with dependencies (a DAG).
 * A step is a message (src rank -> dst rank, bytes, channel) or a join (no
 * traffic, completes as soon as its dependencies did: "rank r finished phase
 * k").  A step starts when all its dependencies completed; a message
 * completes when its receiver holds the last byte.  Every step happens at a
 * rank: a message starts at src and completes at dst, a join is at its rank;
 * a dependency completing at another rank than where its successor starts is
 * a cross-rank dependency, which the engine delivers as a notification.
 *
 * An in-switch operation (AddInSwitch) is one start step at the group's first rank
 * and one completion step per rank; the switches move its bytes (the engine hands it
 * to an InSwitchReductionPlane), and a completion step completes when the plane says
 * its rank holds the result, never by its dependency on the start.
 */
class CollectiveSchedule
{
  public:
    static constexpr int64_t NONE = -1;

    static constexpr uint32_t kNoEdge = 0xffffffff;

    /// Successors are a list in the schedule's edge pool (ForEachSuccessor), not a vector
    /// per step: a large collective has millions of steps, most with one or two successors.
    struct Step
    {
        uint64_t bytes{0};
        uint32_t src{0}; //!< a join: the rank that joins
        uint32_t dst{0}; //!< a join: the same rank
        uint32_t channel{0};
        uint32_t numDeps{0};
        int32_t inSwitch{-1}; //!< the in-switch operation it starts or completes, else -1
        uint32_t firstSuccessor{kNoEdge};
        uint32_t lastSuccessor{kNoEdge};
        bool join{false};
        bool inSwitchStart{false}; //!< the start step (bytes 0), else a completion (bytes: rx)
        uint8_t lanes{1};          //!< an aggregate: consecutive channels from `channel` on
        bool aggregate{false};     //!< a ring's consecutive steps (GetAggregateSteps)
    };

    /// One operation the switches run over a group (an NVLink domain).
    struct InSwitch
    {
        InSwitchReductionPlane::Op op{InSwitchReductionPlane::Op::AllReduce};
        std::vector<uint32_t> ranks;
        uint64_t bytes{0};              //!< as InSwitchReductionPlane::StartInSwitch
        uint32_t start{0};              //!< its start step
        std::vector<uint32_t> complete; //!< its completion step per position in ranks
        bool scaleOut{false}; //!< across domains (SHARP in the network), else in one domain
    };

    /// Whether a ring (its ranks in ring order) may move its steps in aggregate; empty: no.
    typedef std::function<bool(const std::vector<uint32_t>& ring)> RingAggregation;

    /// Dependencies equal to NONE are ignored.  \return the step index.
    uint32_t AddMessage(uint32_t src,
                        uint32_t dst,
                        uint64_t bytes,
                        uint32_t channel,
                        const std::vector<int64_t>& deps);
    /**
     * One message standing for \p steps consecutive steps of a ring from \p src to its
     * next rank \p dst, each of \p loops pieces (the ring's loops, queued one after
     * another), on \p lanes consecutive channels from \p channel on, \p bytes in all
     * (GpuTransport::Aggregate).  It counts as steps x lanes x loops messages.
     * \p pieceBytes: a ring's uneven loop (its pieces differ): the largest piece, as
     * long as each lockstep step lasts; \p bytes is then the rank's own sum.  0: the
     * pieces are equal (bytes / (steps x lanes x loops)).
     */
    uint32_t AddAggregate(uint32_t src,
                          uint32_t dst,
                          uint64_t bytes,
                          uint32_t channel,
                          uint32_t steps,
                          uint32_t lanes,
                          const std::vector<int64_t>& deps,
                          uint32_t loops = 1,
                          uint64_t pieceBytes = 0);
    /// The ring steps step \p step stands for: 1 unless an aggregate.
    uint32_t GetAggregateSteps(uint32_t step) const;
    /// The pieces per lane of each of those steps: 1 unless an aggregate of several loops.
    uint32_t GetAggregateLoops(uint32_t step) const;
    /// An uneven loop's largest piece (AddAggregate's pieceBytes); 0 unless one.
    uint64_t GetAggregatePiece(uint32_t step) const;
    /// The builders' ring passes ask \p allow whether a ring moves in aggregate (the engine:
    /// every hop on one flow-level plane); unset: never.
    void SetRingAggregation(RingAggregation allow);
    bool CanAggregateRing(const std::vector<uint32_t>& ring) const;
    /// Messages the schedule stands for: an aggregate counts its steps x lanes.
    uint64_t GetNumStepMessages() const;

    /// NCCL's PXN: the rank whose NIC sends src's data to dst (src copies it there over
    /// NVLink first), or -1 for src's own.
    typedef std::function<int64_t(uint32_t src, uint32_t dst)> PairRelay;
    /// The point-to-point builders (DirectAllToAll, RingSendRecv) ask \p relay for each pair and
    /// move a relayed pair's bytes in chunks of at least \p chunkBytes and at most \p maxChunks per
    /// piece, each chunk's network send after its NVLink copy; unset: every pair direct.
    void SetPairRelay(PairRelay relay, uint64_t chunkBytes, uint32_t maxChunks);
    int64_t RelayOf(uint32_t src, uint32_t dst) const;
    /// The chunk a relayed piece of \p bytes moves in.
    uint64_t GetRelayChunkBytes(uint64_t bytes) const;

    /// A join is "rank \p rank finished something": it happens at that rank.
    uint32_t AddJoin(uint32_t rank, const std::vector<int64_t>& deps);
    /**
     * \p op over \p ranks in the switches, started once every rank's \p entry step (NONE:
     * none; empty: none at all) completed.  \p rxBytes per position: what that rank
     * receives (GetRxBytesPerRank); empty: nothing counted.  \return per position the
     * completion step of that rank.
     */
    std::vector<int64_t> AddInSwitch(InSwitchReductionPlane::Op op,
                                     const std::vector<uint32_t>& ranks,
                                     uint64_t bytes,
                                     const std::vector<int64_t>& entry,
                                     const std::vector<uint64_t>& rxBytes = {},
                                     bool scaleOut = false);
    const std::vector<InSwitch>& GetInSwitch() const;

    const std::vector<Step>& GetSteps() const;
    std::vector<Step>& GetSteps();

    /// Calls \p f(successor) for each step that depends on \p step, in the order added.
    template <typename F>
    void ForEachSuccessor(uint32_t step, F&& f) const
    {
        for (uint32_t e = m_steps[step].firstSuccessor; e != kNoEdge; e = m_edges[e].next)
        {
            f(m_edges[e].to);
        }
    }

    std::vector<uint32_t> GetSuccessors(uint32_t step) const;
    uint64_t GetNumMessages() const;
    /// Bytes each rank receives, indexed by rank (size: largest rank + 1).
    std::vector<uint64_t> GetRxBytesPerRank() const;

  private:
    struct Edge
    {
        uint32_t to;
        uint32_t next;
    };

    uint32_t Add(Step&& step, const std::vector<int64_t>& deps);
    std::vector<Step> m_steps;
    std::vector<Edge> m_edges;
    std::vector<InSwitch> m_inSwitch;
    uint64_t m_messages{0};
    uint64_t m_stepMessages{0};

    struct AggregateOf
    {
        uint32_t step;
        uint32_t steps; //!< the ring steps it stands for
        uint32_t loops; //!< the pieces per lane of each
    };

    const AggregateOf& FindAggregate(uint32_t step) const;
    /// Per aggregate, in the order of their steps (AddAggregate appends): 12 bytes each, not a
    /// hash node, as a ring pass in aggregate is one step per rank.
    std::vector<AggregateOf> m_aggregateSteps;
    /// step -> largest piece, for the aggregates of uneven loops only
    std::unordered_map<uint32_t, uint64_t> m_aggregatePiece;
    RingAggregation m_ringAggregation;
    PairRelay m_pairRelay;
    uint64_t m_relayChunkBytes{1};
    uint32_t m_relayMaxChunks{1};
};

/// NCCL's split parameters: ChunkBytes per step, channels, element granularity.
struct CollectiveSplit
{
    uint64_t chunkBytes{512 * 1024};
    uint32_t numChannels{1};
    uint32_t elementBytes{4};
    uint32_t pipelineSlots{8}; //!< NCCL_STEPS: chunks a tree connection may run ahead
    /// Ring pieces cut into this many slices of at least minSliceBytes (1: whole chunks).
    uint32_t slicesPerChunk{1};
    uint64_t minSliceBytes{0};
};

/**
 * One piece of a ring pass: channel, index j of the piece among the p ring
 * positions, bytes.  Follows NCCL's ring loop: the buffer is walked in loops
 * of numChannels x p x chunkBytes; in each loop the chunk is
 * min(chunkBytes, ceil(remaining / (numChannels x p))) rounded up to whole
 * elements, piece j of channel c starts at loop + (c x p + j) x chunk, and
 * pieces past the end are short or empty.  With slicesPerChunk > 1 each piece is
 * cut into consecutive slices of max(chunk / slicesPerChunk, minSliceBytes), each
 * a RingPiece of its own (NCCL Simple's slices, one flag and fence each).
 */
struct RingPiece
{
    uint32_t channel;
    uint32_t index;
    uint64_t bytes;
};

std::vector<RingPiece> SplitRing(uint64_t bytes, uint32_t p, const CollectiveSplit& split);

/// Element-granular split of \p bytes into \p parts: ceil share each, the last ones short.
std::vector<uint64_t> SplitEven(uint64_t bytes, uint32_t parts, uint32_t elementBytes);

/**
 * Builders append one algorithm to a schedule over \p ranks (group order).
 * entry[i] is the step rank i must wait for before sending (NONE: at once);
 * the return value is, per position, a join step completing when that rank
 * has received everything of this phase.
 */
namespace CollectiveBuild
{
typedef std::vector<int64_t> PerRank;
/// One ring per channel, each a permutation of the group: channel c runs on ring c mod size.
typedef std::vector<std::vector<uint32_t>> ChannelRings;

/// Ring passes; \p rings empty: every channel on \p ranks in group order.  entry and the
/// result stay indexed by position in \p ranks whatever the rings.
PerRank RingReduceScatter(CollectiveSchedule& s,
                          const std::vector<uint32_t>& ranks,
                          uint64_t bytes,
                          const CollectiveSplit& split,
                          const PerRank& entry,
                          const ChannelRings& rings = {});
PerRank RingAllGather(CollectiveSchedule& s,
                      const std::vector<uint32_t>& ranks,
                      uint64_t bytes,
                      const CollectiveSplit& split,
                      const PerRank& entry,
                      const ChannelRings& rings = {});
PerRank RingAllReduce(CollectiveSchedule& s,
                      const std::vector<uint32_t>& ranks,
                      uint64_t bytes,
                      const CollectiveSplit& split,
                      const PerRank& entry,
                      const ChannelRings& rings = {});
/**
 * NCCL's rings over several domains (graph/search.cc, connect.cc): channel c visits the
 * domains in order and enters each at a local index rotated by c, so the hops between
 * domains of different channels leave from different GPUs (different HCAs).  Even domains
 * are walked forward from local c, odd ones backward from local c - 1: the ring leaves a
 * domain at the local index where it enters the next (one rail per crossing) for an even
 * number of equal domains.  \p domains: the group's ranks per domain, in visiting order.
 */
ChannelRings RingsAcrossDomains(const std::vector<std::vector<uint32_t>>& domains,
                                uint32_t numChannels);
/// Recursive halving then doubling; non-power-of-two: see doc/collectives.md.
PerRank HalvingDoublingAllReduce(CollectiveSchedule& s,
                                 const std::vector<uint32_t>& ranks,
                                 uint64_t bytes,
                                 const CollectiveSplit& split,
                                 const PerRank& entry);
/// A double binary tree over the ranks, reduce up and broadcast down, pipelined per chunk.
PerRank DoubleBinaryTreeAllReduce(CollectiveSchedule& s,
                                  const std::vector<uint32_t>& ranks,
                                  uint64_t bytes,
                                  const CollectiveSplit& split,
                                  const PerRank& entry);
/**
 * NCCL's trees over several domains (src/graph/connect.cc, trees.cc; the tree graph of
 * src/graph/search.cc, pattern TREE: all NIC traffic at one GPU): lane c runs a chain
 * through each domain from its head, local index c mod the domain's size, and the heads
 * form the double binary tree over the domains, tree c mod 2 (BinaryTreeParents,
 * ComplementaryTreeParents), so the lanes' network hops leave from different GPUs (their
 * own HCAs).  \p domains: positions in the group per domain.  Returns each lane's parents
 * by position (-1: the lane's root).
 */
std::vector<std::vector<int32_t>> NcclTreesAcrossDomains(
    const std::vector<std::vector<uint32_t>>& domains,
    uint32_t lanes);
/// Reduce up and broadcast down NCCL's trees over \p domains (the group's ranks per domain,
/// as CollectiveEngine::Domains gives them), lane c on channel c with an even share of the
/// buffer, pipelined per chunk.
PerRank NcclTreeAllReduce(CollectiveSchedule& s,
                          const std::vector<uint32_t>& ranks,
                          const std::vector<std::vector<uint32_t>>& domains,
                          uint64_t bytes,
                          uint32_t lanes,
                          const CollectiveSplit& split,
                          const PerRank& entry);
PerRank DirectAllToAll(CollectiveSchedule& s,
                       const std::vector<uint32_t>& ranks,
                       uint64_t bytes,
                       const CollectiveSplit& split,
                       const PerRank& entry);
PerRank DirectAllGather(CollectiveSchedule& s,
                        const std::vector<uint32_t>& ranks,
                        uint64_t bytes,
                        const CollectiveSplit& split,
                        const PerRank& entry);
PerRank DirectReduceScatter(CollectiveSchedule& s,
                            const std::vector<uint32_t>& ranks,
                            uint64_t bytes,
                            const CollectiveSplit& split,
                            const PerRank& entry);
/// Pipelined chain root -> root+1 -> ... (broadcast) or, \p toRoot, root+1 -> ... -> root
/// (reduce), in group order or, given \p rings, along channel c's ring (rings[c mod size]).
PerRank ChainBroadcast(CollectiveSchedule& s,
                       const std::vector<uint32_t>& ranks,
                       uint64_t bytes,
                       uint32_t rootPosition,
                       const CollectiveSplit& split,
                       const PerRank& entry,
                       const ChannelRings& rings = {},
                       bool toRoot = false);
/// nccl-tests sendrecv: every rank sends \p bytes to the next and receives from the previous.
PerRank RingSendRecv(CollectiveSchedule& s,
                     const std::vector<uint32_t>& ranks,
                     uint64_t bytes,
                     const CollectiveSplit& split,
                     const PerRank& entry);
/**
 * Reduce-scatter inside each domain, ring allreduce across domains among the
 * ranks of equal local index (a rail), allgather inside.  \p domains lists the
 * group's ranks per domain, all of equal size.
 */
PerRank HierarchicalAllReduce(CollectiveSchedule& s,
                              const std::vector<std::vector<uint32_t>>& domains,
                              uint64_t bytes,
                              const CollectiveSplit& split);

/**
 * An intra-domain phase of a hierarchical collective over one slice: \p slice lists the
 * slice's pieces in ring layout (piece index i is local position i's share), \p entry per
 * local position the step that rank waits for (empty: none); returns per local position a
 * join when that rank's part of the phase is done.  Ring phases today; an in-switch phase
 * (reduce-scatter / all-gather by the NVSwitches) plugs in the same way.
 */
typedef std::function<PerRank(CollectiveSchedule& s,
                              const std::vector<uint32_t>& domain,
                              const std::vector<RingPiece>& slice,
                              const PerRank& entry)>
    DomainPhase;
DomainPhase RingDomainReduceScatter();
DomainPhase RingDomainAllGather();
/**
 * The slice's reduce-scatter or all-gather (\p op) done by the domain's switches as one
 * in-switch operation over the slice's bytes: a rank receives its share (the slice's
 * pieces of its index) from a reduce-scatter, the whole slice from an all-gather (its own
 * share too, back through the switch, as NVLS's multimem.st).
 */
DomainPhase InSwitchDomainPhase(InSwitchReductionPlane::Op op);
/// Reduce-scatter / all-gather of the slice by direct NVLink writes, every rank to every
/// other at once (NCCL's CollNetDirect scatter and gather to the heads).
DomainPhase DirectDomainReduceScatter();
DomainPhase DirectDomainAllGather();

/**
 * The network phase of a hierarchical allreduce: the allreduce of \p bytes over one
 * rail (rank i of every domain) after \p entry; per rail position a join.
 */
typedef std::function<PerRank(CollectiveSchedule& s,
                              const std::vector<uint32_t>& rail,
                              uint64_t bytes,
                              const CollectiveSplit& split,
                              const PerRank& entry)>
    RailPhase;
/// The rail's ring allreduce (hierarchical).
RailPhase RingRailAllReduce();
/**
 * NCCL's NVLSTree network part: channel c's share of a slice goes up tree c mod 2 of the
 * double binary tree over the rail and comes back down, a tree's channels as one message per
 * edge on channel t of tree t, which the receiving rank takes at its share of NCCL's per-head cap
 * (NcclEndpoint::NvlsTreeRailRate_gbyte_per_s) (src/graph/connect.cc, connectNvls: ncclGetDtree
 * over the nodes; src/device/all_reduce.h: the reduce warps take the children's and send up, the
 * broadcast warps send down).  The phase keeps NCCL_STEPS across slices itself: a slice's message
 * goes to a peer once that peer passed on its message of pipelineSlots slices before (the tree
 * schedule's rule), so its pipeline needs no window of whole slices
 * (PipelinedHierarchicalAllReduce, railWindow).
 */
RailPhase TreeRailAllReduce();
/// The rail's allreduce in the network's switches, one scale-out in-switch operation
/// (SHARP; CollNet): each rank receives the reduced bytes.
RailPhase InSwitchRailAllReduce();

/**
 * HierarchicalAllReduce pipelined slice by slice, as NCCL runs multi-level algorithms: the
 * buffer is cut in the loops of the intra-domain ring (numChannels x ranks per domain x
 * split.chunkBytes); slice k's ring allreduce across domains on rail i waits only for slice k's
 * reduce-scatter at local i, and its all-gather only for that, so the phases of different
 * slices overlap.  A phase runs at most a window of slices ahead of its own completion at
 * a rank: the ring's slots allow (pipelineSlots / (ranks per domain - 1) slices), or
 * \p domainWindow for the intra-domain phases when not 0 (an in-switch phase: 1, as the
 * switches hold a reduction's contributions until every member's came, and one operation
 * already fills their buffers).  The network phase keeps the ring's window unless
 * \p railWindow is not 0 (a phase that holds its connections' slots itself, as
 * TreeRailAllReduce: UINT32_MAX).  Returns per rank (domain by domain) a join on all its
 * slices.
 */
PerRank PipelinedHierarchicalAllReduce(CollectiveSchedule& s,
                                       const std::vector<std::vector<uint32_t>>& domains,
                                       uint64_t bytes,
                                       const CollectiveSplit& split,
                                       const DomainPhase& reduceScatter,
                                       const DomainPhase& allGather,
                                       uint32_t domainWindow = 0,
                                       const RailPhase& acrossDomains = RingRailAllReduce(),
                                       uint32_t railWindow = 0);

/**
 * NCCL's CollNetChain allreduce: channel c's head is local index c mod L of every domain;
 * per chunk of its share of the buffer the domain's chain reduces up to the head
 * (head + 1 -> head + 2 -> ... -> head), the heads allreduce it in the network's switches
 * (one scale-out in-switch operation over the rail), the chain broadcasts it down again.
 * A connection holds split.pipelineSlots chunks: chunk k goes on to a peer once that peer
 * passed chunk k - slots on.  \p chunkBytes as CollNetChainChunkBytes.
 */
PerRank CollNetChainAllReduce(CollectiveSchedule& s,
                              const std::vector<std::vector<uint32_t>>& domains,
                              uint64_t bytes,
                              const CollectiveSplit& split,
                              uint64_t chunkBytes);
/// NCCL's CollNetChain chunk (enqueue.cc): 256 KiB, halved while a channel's share holds
/// fewer than 64·depth chunks (down to 128 KiB), 8·depth (64 KiB), depth (32 KiB).
uint64_t CollNetChainChunkBytes(uint64_t bytes, uint32_t channels, uint32_t depth);

/**
 * PAT allgather (NCCL 2.23+, src/device/all_gather.h): ceil(log2 p) steps; in step k every
 * rank sends the min(2^k, p - 2^k) pieces it holds to the rank 2^k before it, after it got
 * the previous step's (Bruck's dissemination, the aggregation of NCCL's trees).
 */
PerRank PatAllGather(CollectiveSchedule& s,
                     const std::vector<uint32_t>& ranks,
                     uint64_t bytes,
                     const CollectiveSplit& split,
                     const PerRank& entry);
/// PAT reduce-scatter: the same steps in reverse order (distance 2^(K-1) first), every
/// rank sending the partial sums of the min(2^k, p - 2^k) pieces it does not keep.
PerRank PatReduceScatter(CollectiveSchedule& s,
                         const std::vector<uint32_t>& ranks,
                         uint64_t bytes,
                         const CollectiveSplit& split,
                         const PerRank& entry);

/// Parent of each position in NCCL's binary tree (ncclGetBtree); -1 for the root.
std::vector<int32_t> BinaryTreeParents(uint32_t p);
/// The complementary tree of NCCL's double binary tree (mirror for even p, shift for odd).
std::vector<int32_t> ComplementaryTreeParents(uint32_t p);
/// Tree pipeline chunk NCCL uses for \p bytes on trees of \p depth levels: the
/// configured chunk, halved while there are fewer than 8·depth (then 4·depth, then
/// depth) chunks per tree, down to 128 KiB (then 64 KiB, then 32 KiB).
uint64_t TreeChunkBytes(uint64_t bytes, uint32_t depth, uint64_t maxChunkBytes);
/**
 * Chunk of a pipelined hierarchical allreduce, NCCL's NVLS-tree rule (enqueue.cc) with
 * \p concurrentOps = channels x ranks per domain: from \p maxChunkBytes, at most 256 KiB
 * below 32·ops chunks in the buffer, 128 KiB below 16·ops, 64 KiB below 4·ops, 32 KiB below
 * ops, so that small buffers still give the pipeline several slices.
 */
uint64_t HierarchicalChunkBytes(uint64_t bytes, uint64_t concurrentOps, uint64_t maxChunkBytes);
/// Edges from the root to the deepest leaf.
uint32_t TreeDepth(const std::vector<int32_t>& parents);
} // namespace CollectiveBuild

} // namespace ns3

#endif
