/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_WORKLOAD_TRACE_H
#define AI_FABRIC_WORKLOAD_TRACE_H

#include "ns3/collective-kind.h"
#include "ns3/input-error.h"
#include "ns3/trace-values.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3
{

/// Bad workload input (file, line, field, detail: see InputError).
class WorkloadError : public InputError
{
  public:
    using InputError::InputError;
};

/// The whole text of a workload file (binary mode: CRLF stays for the parser to handle);
/// throws WorkloadError(path, line 0) when it cannot be opened.
std::string ReadWorkloadFile(const std::string& path);

enum class WorkloadOpKind : uint8_t
{
    Compute,
    Send,
    Recv,
    SendRecv,
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    /// Front-end: storage -> the rank's CPU (Ethernet), then CPU -> GPU (PCIe).
    Load,
    /// Front-end: GPU -> CPU (PCIe), then CPU -> storage (Ethernet).
    Checkpoint,
};

const char* WorkloadOpKindName(WorkloadOpKind kind);
/// False for unknown names; \p kind is then untouched.
bool WorkloadOpKindFromName(const std::string& name, WorkloadOpKind* kind);
bool IsCollective(WorkloadOpKind kind);
/// The collectives layer's kind of a collective op (IsCollective).
CollectiveKind CollectiveKindOf(WorkloadOpKind kind);
/// Load and checkpoint: traffic between a GPU and a storage node over the front-end.
bool IsFrontEnd(WorkloadOpKind kind);

/// Parallelism kind of a group and of the communication ops on it: send/recv/sendrecv are
/// PP, load and checkpoint FrontEnd.
enum class ParallelismKind : uint8_t
{
    Tp,
    Pp,
    Dp,
    Ep,
    Other,
    FrontEnd,
};

constexpr std::size_t kNumParallelismKinds = 6;
/// "TP", "PP", "DP", "EP", "other", "front-end"
const char* ParallelismKindName(ParallelismKind kind);
/// A group's kind when its trace does not say: from the name prefix tp*, pp*, dp* / xdp*
/// (and dpep*), ep*; anything else (world) Other.
ParallelismKind ParallelismKindOfGroup(const std::string& groupName);
/// The native format's spelling of a group kind: "tp", "pp", "dp", "ep", "other".
const char* ParallelismKindKey(ParallelismKind kind);
/// Inverse of ParallelismKindKey; false for anything else (front-end is no group kind).
bool ParseParallelismKind(const std::string& text, ParallelismKind* kind);

/// One op of one rank.  Indices (deps, peers' ops) refer to WorkloadTrace::ops[rank].
struct WorkloadOp
{
    std::string label;   ///< expanded label, unique per rank ("fwd0.3")
    uint64_t timeNs = 0; ///< compute only
    uint64_t bytes = 0;
    uint32_t stream = 0;
    int32_t group = -1;   ///< collectives: index into WorkloadTrace::groups
    int32_t to = -1;      ///< send, sendrecv: destination rank
    int32_t from = -1;    ///< recv, sendrecv: source rank
    int32_t root = -1;    ///< broadcast/reduce root rank (-1: group's first member)
    int16_t storage = -1; ///< load, checkpoint: storage node index (parsers allow up to 32767)
    WorkloadOpKind kind = WorkloadOpKind::Compute; ///< here, not first: no padding (168 bytes)
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto; ///< collectives only
    std::vector<std::string> after; ///< explicit dependencies as written (expanded labels)

    // Resolved by WorkloadTraceBuilder::Build().
    std::vector<uint32_t> deps; ///< same-stream predecessor first, then after= labels
    int64_t collective = -1;    ///< index into WorkloadTrace::collectives
    int64_t sendPeerOp = -1;    ///< send/sendrecv: index of the matching op in ops[to]
    int64_t recvPeerOp = -1;    ///< recv/sendrecv: index of the matching op in ops[from]

    uint32_t line = 0;      ///< source line, for diagnostics
    uint32_t statement = 0; ///< ops created by one source line (instance) share this

    // LogGOPS schedules (WorkloadTrace::logGops) only.
    uint64_t tag = 0;    ///< send/recv: the MPI tag the replay matches on
    uint8_t cpu = 0;     ///< the rank's CPU stream the op runs on
    uint8_t nic = 0;     ///< send/recv: the rank's NIC (gap g, G)
    bool anyTag = false; ///< recv: matches every tag
    /// send/recv the builder leaves unpaired (sendPeerOp, recvPeerOp -1): the replay matches
    /// it by source and tag; a recv with from -1 takes any source.
    bool unpaired = false;
};

/// "op starts only after op \p started has started" (GOAL's irequires), on one rank.
struct WorkloadStartDependency
{
    uint32_t rank;
    uint32_t op;
    uint32_t started;
    uint32_t line;
};

struct WorkloadGroup
{
    std::string name;
    std::vector<uint32_t> ranks; ///< sorted, unique
    ParallelismKind kind = ParallelismKind::Other;
};

/// One collective call: the same label on every member of a group.
struct WorkloadCollective
{
    WorkloadOpKind kind;
    int32_t group;
    std::string label;
    uint64_t bytes;
    /// (rank, index into ops[rank]) in group order
    std::vector<std::pair<uint32_t, uint32_t>> members;
};

/**
 * \ingroup ai-fabric
 * A workload as per-rank DAGs.  Every op of ops[r] depends on the ops listed
 * in deps (all of rank r) and starts after those of startDeps started; a recv additionally
 * waits for its matched send (sends are eager: they complete without the receiver, except
 * above a LogGOPS schedule's eager limit); the members of one
 * WorkloadCollective start it together.  Build() guarantees all of this is
 * consistent and acyclic.
 */
struct WorkloadTrace
{
    std::string source; ///< file name used in messages
    uint32_t numRanks = 0;
    std::vector<WorkloadGroup> groups;
    std::vector<std::vector<WorkloadOp>> ops; ///< [rank][i], in program order
    std::vector<WorkloadCollective> collectives;
    std::vector<std::string> warnings; ///< "file:line: ..." accepted but suspicious input
    /// Sorted by (rank, op); each a second kind of dependency (the replay counts it with deps).
    std::vector<WorkloadStartDependency> startDeps;
    /**
     * A LogGOPS schedule (GOAL): compute, send and recv ops run on their rank's CPU stream
     * op.cpu (one at a time per stream) and NIC op.nic; receives match sends by source and tag
     * in arrival order at run time (MPI); the replay charges its LogGopsCost.
     */
    bool logGops = false;

    int32_t FindGroup(const std::string& name) const;
    uint64_t CountOps() const;
    /// Sum of bytes over ops of \p kind on rank \p rank.
    uint64_t SumBytes(uint32_t rank, WorkloadOpKind kind) const;
    /// Some op is a load or a checkpoint.
    bool HasFrontEndOps() const;
    /// Throws WorkloadError (line, field from/to) for the first load or checkpoint that
    /// names a storage node at or above \p storageNodes.
    void CheckStorageNodes(uint32_t storageNodes) const;
};

/**
 * \ingroup ai-fabric
 * Collects groups and ops from any front end, then resolves labels into
 * dependencies, matches collectives and send/recv and checks for cycles.
 */
class WorkloadTraceBuilder
{
  public:
    explicit WorkloadTraceBuilder(std::string source);

    void SetNumRanks(uint32_t ranks, uint32_t line);
    uint32_t GetNumRanks() const;
    /// Returns the group's index; a duplicate name is an error.  Without \p kind, the
    /// group's kind is guessed from its name (ParallelismKindOfGroup).
    int32_t AddGroup(const std::string& name, std::vector<uint32_t> ranks, uint32_t line);
    int32_t AddGroup(const std::string& name,
                     std::vector<uint32_t> ranks,
                     uint32_t line,
                     ParallelismKind kind);
    int32_t FindGroup(const std::string& name) const;
    const WorkloadGroup& GetGroup(int32_t index) const;
    void AddOp(uint32_t rank, WorkloadOp op);
    /// Capacity for \p perRank[r] ops on rank r (a front end that knows the counts saves
    /// the unused half of vectors grown by doubling).
    void ReserveOps(const std::vector<uint64_t>& perRank);
    void AddWarning(uint32_t line, const std::string& text);
    /// Op \p op of \p rank starts only after op \p started of the same rank started.
    void AddStartDependency(uint32_t rank, uint32_t op, uint32_t started, uint32_t line);
    /// Marks the trace a LogGOPS schedule (WorkloadTrace::logGops).
    void SetLogGops();
    /// Throws WorkloadError on the first inconsistency.
    WorkloadTrace Build();

    /// Memory guards for hostile input: every front end refuses more ranks or
    /// ops than this (defaults 1000000 ranks, 20000000 ops: under 6 GB at the peak of a parse).
    static void SetLimits(uint32_t maxRanks, uint64_t maxOps);
    static uint32_t GetMaxRanks();
    static uint64_t GetMaxOps();

  private:
    [[noreturn]] void Fail(uint32_t line, const std::string& field, const std::string& message);
    void ResolveDependencies();
    void MatchCollectives();
    void MatchPointToPoint();
    void CheckAcyclic();

    WorkloadTrace m_trace;
    bool m_haveRanks = false;
    uint64_t m_opCount = 0;
    std::map<std::string, int32_t> m_groupIndex;
};

} // namespace ns3

#endif
