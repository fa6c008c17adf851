/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_COLLECTIVE_ENGINE_H
#define AI_FABRIC_COLLECTIVE_ENGINE_H

#include "ns3/callback.h"
#include "ns3/collective-kind.h"
#include "ns3/collective-schedule.h"
#include "ns3/gpu-transport.h"
#include "ns3/nccl-endpoint.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
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

/// The group, size and root of a collective call, however its kind and algorithm are given.
struct CollectiveOperands
{
    std::vector<uint32_t> ranks; //!< the group, in ring order
    uint64_t bytes{0};
    uint32_t root{0}; //!< broadcast / reduce root (a rank of the group)
    std::string groupName{"world"};
    std::map<uint32_t, uint32_t> domainOfRank; //!< NVLink domain per rank; empty: engine's map
    /// The output buffer holds the input (nccl-tests' in-place pass).  Recorded in the
    /// result and the collectives row; today's schedules move the same traffic either way,
    /// so an endpoint model can charge the out-of-place local copy on top.
    bool inPlace{false};
    /// nccl-tests' timing loop the call stands for (collective-bench -g and -n): one host
    /// thread issuing it on loopGpusPerThread GPUs, loopIterations times.  0 iterations: not
    /// a loop; the result's loop time is then the collective's own.
    uint32_t loopGpusPerThread{1};
    uint32_t loopIterations{0};
};

/**
 * One collective call.  bytes is nccl-tests' "size": the buffer of allreduce,
 * broadcast, reduce and sendrecv; the whole output of allgather; the whole
 * input of reducescatter; each rank's send buffer of alltoall.
 */
struct CollectiveCall : CollectiveOperands
{
    CollectiveKind kind{CollectiveKind::AllReduce};
    CollectiveAlgorithm algorithm{CollectiveAlgorithm::Auto};
};

/// A call with kind and algorithm as text (a command line): Parse() reads them once.
struct CollectiveSpec : CollectiveOperands
{
    std::string kind;              //!< allreduce, allgather, reducescatter, alltoall, ...
    std::string algorithm{"auto"}; //!< auto, ring, tree, halvingdoubling, direct, ...
    /// Throws CollectiveError naming an unknown kind or algorithm.
    CollectiveCall Parse() const;
};

/// How the engine runs a call: the algorithm, auto resolved, and for nvls the plane;
/// with an NcclEndpoint also the protocol and channels the tuner chose.
struct CollectiveResolution
{
    CollectiveAlgorithm algorithm{CollectiveAlgorithm::Ring};
    int32_t inSwitchPlane{-1}; //!< transport plane index reducing an nvls run, else -1
    NcclProtocolId protocol{NcclProtocolId::Simple};
    uint32_t channels{1};          //!< NCCL's channels (the row's figure)
    uint32_t simulatedChannels{1}; //!< the schedule's, each standing for channels / this
    double predicted_us{0};        //!< the tuner's predicted time; 0 without an endpoint
    /// NCCL's ring graph bandwidth per channel (GB/s): the ring's rate / channels; 0 = none
    double graphChannel_gbyte_per_s{0};
};

/// What ran, with kind and algorithm as the collectives row writes them.
struct CollectiveResult
{
    uint64_t id{0};
    std::string kind;
    std::string algorithm;          //!< the one that ran (auto resolved)
    std::string protocol{"simple"}; //!< NCCL protocol that ran: ll, ll128, simple
    uint32_t channels{1};           //!< channels (rings/trees) it ran on
    bool inPlace{false};            //!< the call's CollectiveOperands::inPlace
    uint32_t numRanks{0};
    uint64_t bytes{0};
    Time start;
    Time end;
    /// Time per iteration of the call's timing loop (NcclEndpoint::LoopIterationTime);
    /// end - start when the call is not in one or there is no endpoint
    Time loopTime;
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
 * With an NcclEndpoint (attribute Endpoint) the engine is NCCL's endpoint too: its
 * tuner picks algorithm, protocol and channels; the collective starts after the
 * protocol's base latency (NVLS: its latency), every message waits the protocol's hop
 * latency (NVLink or network, by the plane it takes), carries the protocol's line
 * format on the wire, and is taken at the receiver no faster than the protocol's
 * per-channel bandwidth.  Without one (the "ideal" model) it runs the physics alone.
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
    /// The GPU/NCCL endpoint model; null: physics only ("ideal").
    void SetEndpoint(Ptr<NcclEndpoint> endpoint);
    Ptr<NcclEndpoint> GetEndpoint() const;

    /**
     * The one place a call is checked and its algorithm chosen: auto resolved, an nvls
     * run's in-switch plane found.  Throws CollectiveError if the call is invalid.
     */
    CollectiveResolution Resolve(const CollectiveCall& call) const;
    /// Name of the algorithm Resolve picks; throws CollectiveError if invalid.
    std::string ResolveAlgorithm(const CollectiveSpec& spec) const;
    /**
     * The endpoint's tuner table for the group \p ranks in the layout NCCL prints it
     * (NCCL_DEBUG=INFO): latency (us) / bandwidth (GB/s) per collective, algorithm and
     * protocol, 0.0 / 0.0 where the fabric cannot run the algorithm or the tuner gives it
     * no bandwidth; each line begins with \p prefix.  Empty without an endpoint.
     */
    std::string FormatTunerTable(const std::vector<uint32_t>& ranks,
                                 const std::string& prefix = "") const;
    /// The schedule a call would run (not for nvls); throws CollectiveError if invalid.
    CollectiveSchedule BuildSchedule(const CollectiveCall& call) const;
    CollectiveSchedule BuildSchedule(const CollectiveSpec& spec) const;
    /**
     * Start now; \p done the transport's NotificationLatency after the last rank
     * finished (the collectives row ends when it finished), never within Start.
     * \p id: the collective's id (coll_id), -1 for the next one.  \p resolution, if
     * given, receives how the call runs.  \return the collective id.
     */
    uint64_t Start(const CollectiveCall& call,
                   DoneCallback done,
                   int64_t id = -1,
                   CollectiveResolution* resolution = nullptr);
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
        CollectiveCall call;
        CollectiveResolution how;
        CollectiveSchedule schedule;
        Time ringHop[2]; //!< the protocol's per-message latency over NVLink, network
        Time treeHop[2];
        DataRate channelRate; //!< per (receiver, channel); 0 = none
        /// The receiving channel every message is charged to, whatever its own
        /// (GpuTransport::SendMessage's sinkChannel): a rate per rank, not per channel.
        uint32_t sinkChannel{GpuTransport::SAME_CHANNEL};
        Time channelStep;        //!< NVLink messages: the receiving channel's time per message
        bool oneDomain{false};   //!< every rank in one NVLink domain
        Time proxyStep;          //!< one NCCL channel step at the sender's proxy; 0 = none
        uint32_t proxyFold{1};   //!< NCCL channels a simulated channel stands for
        uint32_t p2pChannels{0}; //!< a direct alltoall's or sendrecv's p2p channels; 0 = none
        uint64_t proxyPiece{1};  //!< bytes of one NCCL channel's step of this call
        /// [sending rank]: when its proxy is free.
        std::vector<Time> proxyFree;
        /// Per sending rank: when the proxy has posted each running aggregate's steps.
        std::unordered_map<uint32_t, std::vector<Time>> proxyAggregates;
        uint64_t remaining{0}; //!< steps completing at this process's ranks
        Time start;
        DoneCallback done;
        std::vector<uint32_t> others; //!< other processes with ranks in the group
        uint32_t partsPending{0};     //!< of those, the ones whose part did not end yet
        Time lastPartEnd;
        bool localDone{false};
        std::map<std::vector<uint32_t>, int32_t> inSwitchPlanes; //!< per domain, its plane
    };

    void Validate(const CollectiveCall& call) const;
    std::vector<std::vector<uint32_t>> Domains(const CollectiveCall& call) const;
    /// Transport plane index of an InSwitchReductionPlane reducing \p ranks, else -1: an
    /// NVLink plane (NVLS), or with \p scaleOut a network plane (SHARP).
    int32_t FindInSwitchPlane(const std::vector<uint32_t>& ranks, bool scaleOut = false) const;
    /// Why CollNet (SHARP across domains) cannot run \p call ("" when it can).
    std::string CollNetRefusal(const CollectiveCall& call,
                               const std::vector<std::vector<uint32_t>>& domains) const;
    /// Why nvlstree cannot run \p call over \p domains ("" when it can).
    std::string NvlsTreeRefusal(const CollectiveCall& call,
                                const std::vector<std::vector<uint32_t>>& domains) const;
    /// \p split with the pipelined hierarchical chunk for \p bytes, \p perDomain ranks: at
    /// most HierarchicalChunkBytes (and \p maxChunkBytes when not 0), shrunk for small
    /// buffers by NCCL's NVLS-tree rule.
    CollectiveSplit Sliced(const CollectiveSplit& split,
                           uint64_t bytes,
                           uint32_t perDomain,
                           uint64_t maxChunkBytes = 0) const;
    /// NCCL's PXN for \p call's point-to-point pairs (NcclEndpoint Pxn): the rank of
    /// the sender's domain at the peer's local index (its rail), where the mode asks for
    /// one and both legs reach; empty when the call spans one domain.
    CollectiveSchedule::PairRelay PxnRelay(const CollectiveCall& call) const;
    CollectiveSchedule Build(const CollectiveCall& call, const CollectiveResolution& how) const;
    /// The tuner's view of \p call: ranks, domains, the fabric's per-rank rates.
    /// The algorithms the tuner weighs for \p call (the one asked for, or every one the
    /// fabric can run); an NVLS plane found is put in \p nvlsPlane, reasons for the ones
    /// left out appended to \p why.  Needs the endpoint.
    std::vector<CollectiveAlgorithm> TunerCandidates(
        const CollectiveCall& call,
        const std::vector<std::vector<uint32_t>>& domains,
        int32_t* nvlsPlane,
        std::string* why) const;
    NcclTuneInput TuneInput(const CollectiveCall& call,
                            const std::vector<std::vector<uint32_t>>& domains,
                            const std::vector<CollectiveAlgorithm>& runnable) const;
    /// The protocol's costs of a run, once at its start.
    void SetCosts(Running* run, uint32_t nodes) const;
    /// AggregateRingSteps' test for \p ring (ranks in ring order).
    bool CanAggregateRing(const std::vector<uint32_t>& ring) const;
    /// True when \p plane is not NVLink: a message over it pays the network hop latency.
    bool IsNetPlane(int32_t plane) const;
    /// The launch of a run's first steps, after the base latency.
    void LaunchRoots(Running* run, const std::vector<uint32_t>& roots);
    void Launch(Running* run, uint32_t step);
    /// Hands in-switch operation \p index of the run's schedule to its plane.
    void LaunchInSwitch(Running* run, int32_t index);
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
    Ptr<NcclEndpoint> m_endpoint;
    std::map<uint32_t, uint32_t> m_domainOfRank;
    uint64_t m_chunkBytes;
    uint64_t m_treeChunkBytes;
    uint32_t m_numChannels;
    uint32_t m_elementBytes;
    uint32_t m_pipelineSlots;
    uint32_t m_nvlsMinRanks;
    uint64_t m_treeMaxBytes;
    uint32_t m_treeMinRanks;
    bool m_hierarchicalPipeline;
    uint64_t m_hierarchicalChunkBytes;
    uint64_t m_nvlsTreeMaxChunkBytesN4;
    bool m_ringsAcrossDomains;
    bool m_treesAcrossDomains;
    bool m_aggregateRingSteps;
    uint64_t m_nextId;
    std::map<uint64_t, std::unique_ptr<Running>> m_running;
    uint8_t m_client{0};

    TracedCallback<uint64_t, std::string, std::string, uint32_t, uint64_t> m_beginTrace;
    TracedCallback<uint64_t, Time, double> m_endTrace;
};

} // namespace ns3

#endif
