/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_WORKLOAD_REPLAY_H
#define AI_FABRIC_WORKLOAD_REPLAY_H

#include "ns3/collective-engine.h"
#include "ns3/event-id.h"
#include "ns3/front-end-transport.h"
#include "ns3/gpu-transport.h"
#include "ns3/loggops-cost.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "ns3/workload-trace.h"

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

class ResultsDatabase;

/// Time accounting of one rank, all in ns of simulated time.
struct ReplayBreakdown
{
    uint64_t computeNs{0};     ///< a compute kernel was running
    uint64_t commNs{0};        ///< at least one communication op was running
    uint64_t exposedCommNs{0}; ///< communication running, no compute
    std::array<uint64_t, kNumParallelismKinds> commByKindNs{};
    std::array<uint64_t, kNumParallelismKinds> exposedByKindNs{};
    /// Communication ops open, no compute and none of this rank's data moving: waiting for a
    /// peer or an upstream pipeline stage (the pipeline bubble is the PP part).
    uint64_t waitingNs{0};
    std::array<uint64_t, kNumParallelismKinds> waitingByKindNs{};
    /// Plane name -> time this rank had messages in flight on it (as source or
    /// destination), total and without compute.
    std::map<std::string, uint64_t> commByPlaneNs;
    std::map<std::string, uint64_t> exposedByPlaneNs;
};

/**
 * \ingroup ai-fabric
 * Executes a WorkloadTrace's per-rank DAGs over a GpuTransport and a
 * CollectiveEngine (rules: doc/workload.md, "Replay engine").  Trace rank r
 * is transport rank r.
 *
 * An op becomes ready when all its deps completed.  Compute ops then queue
 * on their rank's GPU, which runs one kernel at a time in ready order
 * (attribute ConcurrentCompute lifts that).  A send is submitted at once and
 * completes when the sender is done; a recv completes when it is ready and
 * its message has arrived.  A collective starts the transport's
 * NotificationLatency after its last member became ready; every member's op
 * ends when the engine reports the collective done (one NotificationLatency
 * after its last rank finished).  The sender learns of a send's completion
 * NotificationLatency after the receiver (GpuTransport).  A LogGOPS schedule (GOAL,
 * WorkloadTrace::logGops) runs its compute, send and recv ops on per-rank CPU and NIC
 * streams with a LogGopsCost instead, and matches its receives at run time.
 *
 * Split over processes (GpuTransport::SetDistributed), each process replays
 * the ops of its ranks and writes their rows; a collective's members notify
 * the other processes of the group when all of theirs are ready, and a p2p
 * message from another process completes its recv through the transport's
 * received handler.  Load and checkpoint ops are refused there (the
 * front-end is simulated by process 0 only); the breakdown then counts only
 * this process's ranks and a message's plane time only at its own end.
 * Collective ids (coll_id) are the trace's collective indices.
 *
 * Everything is event driven: O(1) work per op event plus the successors it
 * releases.  After Simulator::Run(), IsComplete() false means some
 * dependency could never be satisfied; GetStuckReport() names them.
 */
class WorkloadReplay : public Object
{
  public:
    /// (rank, op index, label)
    typedef void (*OpBeginTracedCallback)(uint32_t, uint32_t, const std::string&);
    /// (rank, op index, label, duration)
    typedef void (*OpEndTracedCallback)(uint32_t, uint32_t, const std::string&, Time);

    static TypeId GetTypeId();
    WorkloadReplay();
    ~WorkloadReplay() override;

    void SetTrace(WorkloadTrace trace);
    const WorkloadTrace& GetTrace() const;
    void SetTransport(Ptr<GpuTransport> transport);
    void SetCollectiveEngine(Ptr<CollectiveEngine> engine);
    /// Carries load and checkpoint ops; their time counts on plane "ethernet".
    void SetFrontEndTransport(Ptr<FrontEndTransport> frontEnd);
    /// Every completed op becomes an `ops` row; op_id = GetOpId(rank, index).
    void SetResultsDatabase(Ptr<ResultsDatabase> db);
    /// The host cost of a LogGOPS schedule (attribute LogGopsCost; created with its defaults
    /// at Start when none is set).  Null until then for other traces.
    Ptr<LogGopsCost> GetLogGopsCost() const;

    /**
     * Schedules the start of the replay at the current time.  Throws
     * std::invalid_argument when the trace is inconsistent (bad indices) or
     * names a rank the transport does not have.
     */
    void Start();

    bool IsComplete() const;
    uint64_t GetTotalOps() const;
    uint64_t GetCompletedOps() const;
    /// "" when complete; else which ops of which ranks are stuck and why.
    std::string GetStuckReport(uint32_t maxOpsPerRank = 3, uint32_t maxRanks = 16) const;
    /// Errors raised by the transport or engine for an op (that op then stays stuck).
    const std::vector<std::string>& GetErrors() const;

    /// Global op id: ops of rank 0 first, then rank 1, ...
    uint64_t GetOpId(uint32_t rank, uint32_t index) const;
    /// -1 ns until the op started / ended.
    Time GetOpStart(uint32_t rank, uint32_t index) const;
    Time GetOpEnd(uint32_t rank, uint32_t index) const;
    /// LogGOPS schedule: (rank, op index) of the send whose message receive \p index of
    /// \p rank took; (-1, -1) while it has none.
    std::pair<int64_t, int64_t> GetMatchedSend(uint32_t rank, uint32_t index) const;
    Time GetStartTime() const;
    /// Latest op end (the job's makespan end).
    Time GetEndTime() const;

    /**
     * Iteration times.  With IterationMarker empty: one iteration, Start to the
     * last op's end.  Else each distinct label matching the glob is a marker
     * that completes when its last op (over all ranks) completed; markers
     * sorted by that time, iteration i spans marker i-1 (or Start) to marker i.
     */
    std::vector<Time> GetIterationTimes() const;
    std::vector<std::string> GetIterationMarkers() const;

    ReplayBreakdown GetBreakdown(uint32_t rank) const;
    /// Mean over ranks that have ops.
    ReplayBreakdown GetMeanBreakdown() const;

  protected:
    void DoDispose() override;

  private:
    enum class State : uint8_t
    {
        Waiting, ///< deps outstanding
        Queued,  ///< compute, waiting for the GPU
        Running,
        Done,
    };

    struct OpState
    {
        uint32_t pendingDeps{0};
        State state{State::Waiting};
        bool arrived{false};  ///< recv/sendrecv: the incoming message is here
        bool sent{false};     ///< sendrecv: the outgoing message is done
        bool hostDone{false}; ///< LogGOPS send: the sender's CPU overhead is over
        bool matched{false};  ///< LogGOPS rendezvous send: the receiver matched it
        ParallelismKind pkind{ParallelismKind::Other};
        int32_t marker{-1};
        int64_t startNs{-1};
        int64_t endNs{-1};
    };

    /// Work for one CPU stream of a LogGOPS schedule: an op, or the reception of a message.
    struct CpuJob
    {
        bool message;
        uint32_t index; ///< op index on the rank, or m_messages index
    };

    struct CpuStream
    {
        bool busy{false};
        std::deque<CpuJob> queue; ///< in arrival order; jobs whose NIC keeps its gap wait
        int64_t wakeNs{-1};       ///< a HostWake is scheduled then
    };

    /// A message of a LogGOPS schedule (its size and tag are its send op's).
    struct HostMessage
    {
        uint32_t src;
        uint32_t srcOp;
        uint32_t dst;
    };

    /// What the ranks of one program (WorkloadOpTable) share.
    struct ProgramState
    {
        bool built{false};
        std::vector<uint32_t> succOffset; ///< CSR: successors of op i
        std::vector<uint32_t> succ;
        std::vector<uint32_t> markerOps; ///< ops whose label matches IterationMarker
    };

    struct RankState
    {
        std::vector<OpState> ops;
        uint32_t program{0};                   ///< m_programs index
        std::vector<uint32_t> startSuccOffset; ///< CSR: ops waiting for op i's start
        std::vector<uint32_t> startSucc;
        // LogGOPS schedules only (vectors, not deques: a deque allocates when made, for
        // every rank of every trace).
        std::vector<CpuStream> cpus;
        std::vector<int64_t> nicSendFreeNs;
        std::vector<int64_t> nicRecvFreeNs;
        std::vector<uint32_t> posted;     ///< receives waiting for a message, in posting order
        std::vector<uint32_t> unexpected; ///< received messages no receive took yet
        std::vector<uint32_t> taken;      ///< per op: 1 + m_messages index a receive took, or 0
        std::deque<uint32_t> gpuQueue;
        uint32_t computeRunning{0};
        std::array<uint32_t, kNumParallelismKinds> commRunning{};
        uint32_t commRunningAny{0};
        std::vector<uint32_t> planeActive; ///< messages in flight per plane name
        std::vector<uint64_t> planeNs;
        std::vector<uint64_t> planeExposedNs;
        int64_t lastChangeNs{0};
        uint64_t done{0};
        ReplayBreakdown breakdown;
    };

    struct CollectiveState
    {
        uint32_t ready{0};
        int64_t lastReadyNs{-1};
        uint32_t localMembers{0};
        uint32_t localReady{0};
        std::vector<uint32_t> others; ///< other processes with members (distributed run)
        bool started{false};
        int32_t inSwitchPlane{-1}; ///< m_planeNames index of an NVLS run, else -1
    };

    /// What the trace needs of the cluster, as found by Validate().
    struct ReplayNeeds
    {
        bool transport{false}; ///< sends or receives messages
        bool engine{false};    ///< has collectives
        bool frontEnd{false};  ///< has load or checkpoint ops
    };

    // Validation (workload-replay-validation.cc).
    /// Throws std::invalid_argument when the trace is inconsistent or does not fit the
    /// transport, engine and front-end it is to run on.
    ReplayNeeds Validate() const;

    // Execution (workload-replay-execution.cc).
    void Begin();
    void Drain();
    void MakeReady(uint32_t rank, uint32_t index);
    void StartOp(uint32_t rank, uint32_t index);
    void StartCompute(uint32_t rank, uint32_t index);
    void ComputeDone(uint32_t rank, uint32_t index);
    void MemberReady(uint32_t c);
    void CheckCollectiveStart(uint32_t c);
    /// Notification: \p count members of collective \p c became ready in another process.
    void Notified(uint64_t c, uint64_t count);
    /// A p2p message from another process: key = (rank << 32) | recv op index.
    void Received(uint64_t key);
    void StartCollective(uint32_t c);
    void CollectiveDone(uint32_t c);
    void SendDone(uint32_t rank, uint32_t index);
    void Arrived(uint32_t rank, uint32_t index);
    void FrontEndDone(uint32_t rank, uint32_t index);
    void MaybeFinishP2p(uint32_t rank, uint32_t index);
    void Finish(uint32_t rank, uint32_t index);
    void Fail(uint32_t rank, uint32_t index, const std::string& why);
    /// The op began: releases the ops that wait for its start (irequires).
    void Started(uint32_t rank, uint32_t index);

    // LogGOPS schedules (workload-replay-loggops.cc).
    void HostStartOp(uint32_t rank, uint32_t index);
    /// Runs the jobs of one CPU stream until it is busy or empty.
    void HostRun(uint32_t rank, uint32_t cpu);
    /// A NIC's gap ended: the CPU's waiting jobs may go on.
    void HostWake(uint32_t rank, uint32_t cpu);
    void HostBegin(uint32_t rank, uint32_t index);
    void HostCpuDone(uint32_t rank, uint32_t cpu, CpuJob job);
    void HostArrived(uint32_t message);
    bool HostMatches(const WorkloadOpRef& recv, uint32_t message) const;
    void HostDeliver(uint32_t message, uint32_t recvIndex);
    void HostSendDone(uint32_t rank, uint32_t index);
    void HostMaybeFinishSend(uint32_t rank, uint32_t index);
    /// Messages received that no receive took (a LogGOPS schedule ends with none).
    uint64_t CountUnexpected() const;

    // Accounting (workload-replay-accounting.cc).
    /// The op's `ops` row, when a database is attached.
    void WriteOpRow(uint32_t rank, uint32_t index, int64_t endNs) const;
    /// Adds the time since the rank's last change to its breakdown.
    void Account(uint32_t rank);
    void MessageSent(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, uint32_t plane);
    void MessageReceived(uint64_t id,
                         uint32_t src,
                         uint32_t dst,
                         uint64_t bytes,
                         uint32_t plane,
                         Time duration);
    /// \p plane: the transport's plane index of the message (its traces carry it).
    void PlaneChange(uint32_t src, uint32_t dst, uint32_t plane, int delta);
    /// In-switch (NVLS) runs send no transport messages: the plane is busy for every member.
    void InSwitchChange(uint32_t c, int delta);

    // Stuck report (workload-replay-stuck-report.cc).
    std::string Describe(uint32_t rank, uint32_t index) const;

    WorkloadTrace m_trace;
    Ptr<GpuTransport> m_transport;
    Ptr<CollectiveEngine> m_engine;
    Ptr<FrontEndTransport> m_frontEnd;
    int32_t m_frontEndPlane{-1}; ///< m_planeNames index of "ethernet"
    Ptr<ResultsDatabase> m_db;
    std::string m_marker;
    bool m_concurrentCompute;
    uint32_t m_p2pChannel;
    Ptr<LogGopsCost> m_logGops;
    std::vector<HostMessage> m_messages;

    bool m_started{false};
    std::vector<RankState> m_ranks;
    std::vector<ProgramState> m_programs;
    std::vector<bool> m_local; ///< rank simulated by this process (all in one process)
    uint8_t m_client{0};
    std::vector<uint64_t> m_opIdBase;
    std::vector<CollectiveState> m_collectives;
    std::vector<std::string> m_markerLabels;
    std::vector<uint32_t> m_markerRemaining;
    std::vector<int64_t> m_markerEndNs;
    std::deque<std::pair<uint32_t, uint32_t>> m_readyQueue; ///< released, not yet started
    bool m_draining{false};
    uint64_t m_totalOps{0};
    uint64_t m_completed{0};
    int64_t m_startNs{0};
    int64_t m_endNs{0};
    std::vector<std::string> m_planeNames;    ///< distinct plane names
    std::vector<uint32_t> m_planeNameOfIndex; ///< transport plane index -> m_planeNames
    std::vector<std::string> m_errors;
    std::map<std::pair<uint32_t, uint32_t>, std::string> m_opError;

    TracedCallback<uint32_t, uint32_t, const std::string&> m_opBeginTrace;
    TracedCallback<uint32_t, uint32_t, const std::string&, Time> m_opEndTrace;
};

} // namespace ns3

#endif
