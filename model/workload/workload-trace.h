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
#include <unordered_map>
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

/// One op of one rank, as a front end hands it to WorkloadTraceBuilder::AddOp (and as
/// WorkloadOpRef converts back to): every rank and index absolute.  Indices (deps, peers'
/// ops) refer to the rank's ops (WorkloadTrace::ops[rank]).
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

/**
 * One rank's op as readers see it: the op its rank class shares, with the rank's own peers,
 * group, root, collective and peer ops filled in (absolute, as in WorkloadOp).  The string
 * and vector members refer into the trace: valid while it lives unchanged.
 */
struct WorkloadOpRef
{
    const std::string& label;
    uint64_t timeNs;
    uint64_t bytes;
    uint32_t stream;
    int32_t group;
    int32_t to;
    int32_t from;
    int32_t root;
    int16_t storage;
    WorkloadOpKind kind;
    CollectiveAlgorithm algorithm;
    const std::vector<std::string>& after;
    const std::vector<uint32_t>& deps;
    int64_t collective;
    int64_t sendPeerOp;
    int64_t recvPeerOp;
    uint32_t line;
    uint32_t statement;
    uint64_t tag;
    uint8_t cpu;
    uint8_t nic;
    bool anyTag;
    bool unpaired;

    /// A copy with every field.
    WorkloadOp ToOp() const;
};

/**
 * \ingroup ai-fabric
 * The ops of every rank, kept once per rank class: ranks whose op sequences are the same up
 * to their own peers and groups (all DP replicas of a stage, all TP ranks of a stage) share
 * one program until they diverge.  A program's ops hold what the class has in common,
 * rank-relatively: to and from as offsets from the rank (INT32_MIN: none), group as a slot
 * of the rank's groups, root, collective, sendPeerOp and recvPeerOp as ordinals of the
 * rank's own values (-1: none).  A rank's binding holds those values.  ops[r][i] gives the
 * resolved op (WorkloadOpRef); memory grows with programs and ranks, not ranks x ops, but
 * for a rank's collectives and roots (one value per collective op) and point-to-point peers.
 */
class WorkloadOpTable
{
  public:
    /// One rank's ops, in program order.
    class Rank
    {
      public:
        class Iterator
        {
          public:
            Iterator(const Rank* rank, std::size_t i)
                : m_rank(rank),
                  m_i(i)
            {
            }

            WorkloadOpRef operator*() const
            {
                return (*m_rank)[m_i];
            }

            Iterator& operator++()
            {
                ++m_i;
                return *this;
            }

            bool operator!=(const Iterator& o) const
            {
                return m_i != o.m_i;
            }

          private:
            const Rank* m_rank;
            std::size_t m_i;
        };

        Rank(const WorkloadOpTable* table, uint32_t rank)
            : m_table(table),
              m_rank(rank)
        {
        }

        std::size_t size() const;
        bool empty() const;
        WorkloadOpRef operator[](std::size_t i) const;
        /// Throws std::out_of_range.
        WorkloadOpRef at(std::size_t i) const;
        WorkloadOpRef front() const;
        WorkloadOpRef back() const;

        Iterator begin() const
        {
            return Iterator(this, 0);
        }

        Iterator end() const
        {
            return Iterator(this, size());
        }

      private:
        const WorkloadOpTable* m_table;
        uint32_t m_rank;
    };

    class RankIterator
    {
      public:
        RankIterator(const WorkloadOpTable* table, uint32_t r)
            : m_table(table),
              m_r(r)
        {
        }

        Rank operator*() const
        {
            return Rank(m_table, m_r);
        }

        RankIterator& operator++()
        {
            ++m_r;
            return *this;
        }

        bool operator!=(const RankIterator& o) const
        {
            return m_r != o.m_r;
        }

      private:
        const WorkloadOpTable* m_table;
        uint32_t m_r;
    };

    /// Ranks.
    std::size_t size() const;
    bool empty() const;
    Rank operator[](uint32_t rank) const;
    Rank at(uint32_t rank) const;

    RankIterator begin() const
    {
        return RankIterator(this, 0);
    }

    RankIterator end() const
    {
        return RankIterator(this, static_cast<uint32_t>(size()));
    }

    // Hand-made traces (tests, tools): every rank changed here gets a program of its own.
    /// \p ranks ranks without ops.
    void resize(uint32_t ranks);
    void Append(uint32_t rank, const WorkloadOp& op);
    void SetRank(uint32_t rank, const std::vector<WorkloadOp>& ops);
    /// Replaces op \p index of \p rank (the rank leaves its class).
    void Set(uint32_t rank, uint32_t index, const WorkloadOp& op);

    /// Distinct programs (rank classes).
    uint32_t CountPrograms() const;
    uint32_t ProgramOf(uint32_t rank) const;
    /// A program's shared ops (rank-relative fields: see the class comment).
    const std::vector<WorkloadOp>& GetProgram(uint32_t program) const;
    /// Heap and object bytes of the table (programs, their strings and vectors, bindings).
    uint64_t MemoryBytes() const;

  private:
    friend class WorkloadTraceBuilder;

    /// What one rank adds to its program.
    struct Binding
    {
        uint32_t program = 0;
        std::vector<int32_t> groups;      ///< slot -> group
        std::vector<int32_t> roots;       ///< ordinal -> root rank
        std::vector<int64_t> collectives; ///< ordinal -> collective index
        std::vector<int64_t> peers;       ///< ordinal -> the peer's op index
    };

    /// \p op with absolute fields -> its program form for \p binding (slots and ordinals
    /// appended as needed).
    static WorkloadOp Encode(uint32_t rank, const WorkloadOp& op, Binding& binding);
    /// Gives \p rank a program of its own (a copy of its class's), returns it.
    std::vector<WorkloadOp>& Diverge(uint32_t rank);

    std::vector<std::vector<WorkloadOp>> m_programs;
    std::vector<Binding> m_ranks;
    std::vector<uint32_t> m_sharers; ///< ranks per program
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
    WorkloadOpTable ops; ///< ops[rank][i], in program order
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
    /// Ranks with equal op sequences -> one program each.
    void FormPrograms();
    /// The op of \p rank at \p index, to fill in what Build resolves.
    WorkloadOp& SharedOp(uint32_t rank, uint32_t index);

    WorkloadTrace m_trace;
    // Until Build: every distinct op once (without line and statement), each rank's
    // sequence of them.
    std::vector<WorkloadOp> m_pool;
    std::unordered_multimap<uint64_t, uint32_t> m_poolIndex;
    std::vector<std::vector<uint32_t>> m_sequence;
    std::vector<int64_t> m_lastStatement;
    bool m_haveRanks = false;
    uint64_t m_opCount = 0;
    std::map<std::string, int32_t> m_groupIndex;
};

} // namespace ns3

#endif
