/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_COLLECTIVE_ENGINE_H
#define AI_FABRIC_COLLECTIVE_ENGINE_H

#include "ns3/callback.h"
#include "ns3/collective-schedule.h"
#include "ns3/gpu-transport.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3
{

class ResultsDatabase;

/// Raised for a collective the engine refuses; the message says why.
class CollectiveError : public std::invalid_argument
{
  public:
    using std::invalid_argument::invalid_argument;
};

/**
 * One collective call.  bytes is nccl-tests' "size": the buffer of allreduce,
 * broadcast, reduce and sendrecv; the whole output of allgather; the whole
 * input of reducescatter; each rank's send buffer of alltoall.
 */
struct CollectiveSpec
{
    std::string kind; //!< allreduce, allgather, reducescatter, alltoall, ...
    std::string algorithm{
        "auto"};                 //!< auto, ring, tree, halvingdoubling, direct, hierarchical, nvls
    std::vector<uint32_t> ranks; //!< the group, in ring order
    uint64_t bytes{0};
    uint32_t root{0}; //!< broadcast / reduce root (a rank of the group)
    std::string groupName{"world"};
    std::map<uint32_t, uint32_t> domainOfRank; //!< NVLink domain per rank; empty: engine's map
};

struct CollectiveResult
{
    uint64_t id{0};
    std::string kind;
    std::string algorithm; //!< the one that ran (auto resolved)
    uint32_t numRanks{0};
    uint64_t bytes{0};
    Time start;
    Time end;
    uint64_t messages{0};
    double algbw_gbyte_per_s{0};
    double busbw_gbyte_per_s{0};
};

/**
 * \ingroup ai-fabric
 * Runs NCCL-style collectives over a GpuTransport: each call becomes a
 * CollectiveSchedule (messages with dependencies) executed as a DAG, a
 * message starting when all its dependencies were received (a dependency
 * received at another rank than the sender's arrives the transport's
 * NotificationLatency later); "nvls" instead
 * hands the whole allreduce to an InSwitchReductionPlane.  Every collective
 * is a `collectives` row when a ResultsDatabase is attached.  Invalid calls
 * throw CollectiveError before any message is sent.
 *
 * Split over processes (GpuTransport::SetDistributed), every process with a
 * rank in the group calls Start at the same simulated time: each runs the
 * steps of its ranks, cross-process dependencies and "my ranks finished" go
 * as transport notifications, and the process of the group's first rank
 * writes the row.
 */
class CollectiveEngine : public Object
{
  public:
    typedef Callback<void, const CollectiveResult&> DoneCallback;
    /// (id, kind, algorithm, numRanks, bytes)
    typedef void (*BeginTracedCallback)(uint64_t, std::string, std::string, uint32_t, uint64_t);
    /// (id, duration, busbw GB/s)
    typedef void (*EndTracedCallback)(uint64_t, Time, double);

    static TypeId GetTypeId();
    CollectiveEngine();
    ~CollectiveEngine() override;

    void SetTransport(Ptr<GpuTransport> transport);
    Ptr<GpuTransport> GetTransport() const;
    void SetResultsDatabase(Ptr<ResultsDatabase> db);
    /// Default rank -> NVLink domain map (the cluster builder sets it).
    void SetDomainMap(const std::map<uint32_t, uint32_t>& domainOfRank);

    /// The algorithm a call would run (auto resolved); throws CollectiveError if invalid.
    std::string ResolveAlgorithm(const CollectiveSpec& spec) const;
    /// The schedule a call would run (not for nvls); throws CollectiveError if invalid.
    CollectiveSchedule BuildSchedule(const CollectiveSpec& spec) const;
    /// Start now; \p done the transport's NotificationLatency after the last rank
    /// finished (the collectives row ends when it finished).  \p id: the collective's id
    /// (coll_id), -1 for the next one.  \return the collective id.
    uint64_t Start(const CollectiveSpec& spec, DoneCallback done, int64_t id = -1);

    CollectiveSplit GetSplit() const;
    /// Lower-case, without '_' and '-': "Reduce_Scatter" -> "reducescatter".
    static std::string Canonical(const std::string& name);

  protected:
    void DoDispose() override;

  private:
    struct Running
    {
        uint64_t id{0};
        CollectiveSpec spec;
        std::string algorithm;
        CollectiveSchedule schedule;
        uint64_t remaining{0}; //!< steps completing at this process's ranks
        Time start;
        DoneCallback done;
        std::vector<uint32_t> others; //!< other processes with ranks in the group
        uint32_t partsPending{0};     //!< of those, the ones whose part did not end yet
        Time lastPartEnd;
        bool localDone{false};
    };

    std::string Validate(const CollectiveSpec& spec) const;
    std::vector<std::vector<uint32_t>> Domains(const CollectiveSpec& spec) const;
    InSwitchReductionPlane* FindInSwitchPlane(const std::vector<uint32_t>& ranks) const;
    CollectiveSchedule Build(const CollectiveSpec& spec, const std::string& algorithm) const;
    void Launch(Running* run, uint32_t step);
    void StepDone(Running* run, uint32_t step);
    /// One dependency of \p step is satisfied.
    void Release(Running* run, uint32_t step);
    /// This process's ranks finished their part: tell the other processes.
    void LocalPartDone(Running* run);
    void TryFinish(Running* run);
    void Finish(Running* run, Time end);
    /// Notifications: (collective id, step to release | kPartDone).
    void Notified(uint64_t id, uint64_t what);
    /// A message of step (key & 0xffffffff) of collective (key >> 32) from another process.
    void Received(uint64_t key);

    Ptr<GpuTransport> m_transport;
    Ptr<ResultsDatabase> m_db;
    std::map<uint32_t, uint32_t> m_domainOfRank;
    uint64_t m_chunkBytes;
    uint64_t m_treeChunkBytes;
    uint32_t m_numChannels;
    uint32_t m_elementBytes;
    uint32_t m_pipelineSlots;
    uint32_t m_nvlsMinRanks;
    uint64_t m_treeMaxBytes;
    uint32_t m_treeMinRanks;
    uint64_t m_nextId;
    std::map<uint64_t, std::unique_ptr<Running>> m_running;
    uint8_t m_client{0};

    TracedCallback<uint64_t, std::string, std::string, uint32_t, uint64_t> m_beginTrace;
    TracedCallback<uint64_t, Time, double> m_endTrace;
};

} // namespace ns3

#endif
