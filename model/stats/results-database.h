/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RESULTS_DATABASE_H
#define AI_FABRIC_RESULTS_DATABASE_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ns3
{

/// Raised for any results-database failure; the message names the file.
class ResultsDatabaseError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// One row of `nodes`. server and rank: -1 is stored as NULL.
struct NodeRecord
{
    int64_t nodeId{0};
    std::string name;
    std::string kind; //!< gpu, cpu, nvswitch, ib-switch, eth-switch
    int64_t server{-1};
    int64_t rank{-1}; //!< GPU rank; -1 (NULL) for every other kind
};

/// One row of `links`: one direction of one link, counters at the end of the run.
struct LinkRecord
{
    int64_t linkId{0};
    std::string plane; //!< nvlink, infiniband, ethernet
    int64_t srcNode{0};
    int64_t dstNode{0};
    int64_t rateBps{0};
    int64_t txBytes{0};
    int64_t txPackets{0};
    int64_t busyNs{0};
    int64_t creditStallNs{0};
    int64_t peakQueueBytes{0};
    int64_t drops{0};
};

/// One row of `flows`. Fields documented as nullable store -1 as NULL.
struct FlowRecord
{
    int64_t flowId{0};
    std::string plane;
    int64_t srcNode{0};
    int64_t dstNode{0};
    int64_t srcRank{-1}; //!< nullable
    int64_t dstRank{-1}; //!< nullable
    int64_t bytes{0};
    int64_t packets{0};
    int64_t startNs{0};
    int64_t endNs{-1};       //!< nullable: flow never completed
    int64_t opId{-1};        //!< nullable: not part of a trace operation
    int64_t rxBytes{-1};     //!< nullable, extra column (FlowMonitor)
    int64_t lostPackets{-1}; //!< nullable, extra column (FlowMonitor)
};

/// One row of `collectives`; algbw/busbw are computed by AddCollective.
struct CollectiveRecord
{
    int64_t collId{0};
    std::string
        kind; //!< allreduce, reducescatter, allgather, alltoall, broadcast, reduce, sendrecv
    std::string algorithm;
    std::string groupName;
    int64_t numRanks{0};
    int64_t bytes{0}; //!< per rank, as nccl-tests' "size"
    int64_t startNs{0};
    int64_t endNs{0};
};

/// One row of `ops`: one trace operation of one rank.
struct OpRecord
{
    int64_t rank{0};
    int64_t opId{0};
    std::string label;
    std::string kind; //!< e.g. compute, collective, send, recv
    int64_t startNs{0};
    int64_t endNs{0};
};

/// One row of `bench_results` (scripts/bench).  NaN reals and negative integers are NULL.
struct BenchRecord
{
    std::string benchmark;
    std::string figure; //!< the headline figure as printed, e.g. "9.1x", "42.5 s"
    std::string target; //!< as printed, e.g. ">= 5x"; "" when none
    double ratioToBaseline{std::numeric_limits<double>::quiet_NaN()};
    int64_t pass{-1}; //!< 1 met, 0 missed, -1 (NULL) no target
    double wallSeconds{std::numeric_limits<double>::quiet_NaN()};
    double cpuSeconds{std::numeric_limits<double>::quiet_NaN()};
    int64_t events{-1};
    int64_t packetHops{-1};
    double eventsPerHop{std::numeric_limits<double>::quiet_NaN()};
    double packetHopsPerS{std::numeric_limits<double>::quiet_NaN()};
    int64_t peakRssBytes{-1};
    int64_t simNs{-1};
};

/**
 * \ingroup ai-fabric
 * Writer of the results database (schema: doc/results-database.md).
 *
 * Rows are buffered in memory and written by Flush in one `BEGIN IMMEDIATE`
 * transaction with prepared statements reused across rows, so the write lock
 * is held only while a batch is copied in: several processes can append to one
 * file.  WAL journal plus synchronous=NORMAL means a killed process loses at
 * most its unflushed rows, never the file; its run row stays `running`.
 * Every error throws ResultsDatabaseError naming the file.
 */
class ResultsDatabase : public Object
{
  public:
    /// Schema version written to PRAGMA user_version; older files are migrated.
    static constexpr int SCHEMA_VERSION = 2;

    static TypeId GetTypeId();
    ResultsDatabase();
    ~ResultsDatabase() override;

    /// Open or create \p path, create or migrate the schema.
    void Open(const std::string& path);
    /// Flush, mark an unfinished run `failed`, close.  Idempotent.
    void Close();
    bool IsOpen() const;
    const std::string& GetPath() const;

    /// Insert a `running` run row (committed at once) and make it current.
    int64_t BeginRun(const std::string& label,
                     const std::string& scenario,
                     int64_t seed,
                     const std::string& paramsJson);
    /**
     * Write the buffered rows and set status, sim_end_ns and wall_seconds of
     * the current run in one transaction, so a `complete` run has all its rows.
     * \param wallSeconds negative: measured since BeginRun.
     */
    void EndRun(const std::string& status, Time simEnd, double wallSeconds = -1.0);
    /**
     * End the current run `failed` without any of its rows (buffered rows are dropped,
     * flushed ones deleted) and with \p paramsJson as its params, in one transaction: a run
     * refused on bad input leaves only its `failed` run row.
     */
    void RejectRun(const std::string& paramsJson);

    /// Current run id, or -1 between runs.
    int64_t GetRunId() const;

    void AddNode(const NodeRecord& row);
    void AddLink(const LinkRecord& row);
    void AddLinkSample(int64_t linkId, int64_t tNs, int64_t txBytes);
    void AddFlow(const FlowRecord& row);
    void AddCollective(const CollectiveRecord& row);
    void AddOp(const OpRecord& row);
    void AddBenchResult(const BenchRecord& row);

    /// Write all buffered rows in one transaction (also done every BatchRows rows).
    void Flush();
    /// Rows buffered and not yet written.
    std::size_t GetPendingRows() const;

    /// ns-3 version this module was compiled against.
    static std::string GetNs3Version();
    /// ai-fabric module version.
    static std::string GetModuleVersion();

  protected:
    void DoDispose() override;

  private:
    struct Statement;
    void Exec(const std::string& sql);
    /// Exec retrying SQLITE_BUSY with exponential backoff up to m_maxBusyWait.
    void ExecRetry(const std::string& sql);
    void BeginImmediate();
    void Commit();
    void Rollback() noexcept;
    void CreateOrMigrateSchema();
    void PrepareStatements();
    void FinalizeStatements() noexcept;
    void WriteBuffered();
    void DropBuffered() noexcept;
    void MaybeFlush();
    void RequireRun(const char* what) const;
    [[noreturn]] void Fail(const std::string& what, int rc) const;
    sqlite3_stmt* Prepare(const std::string& sql);

    sqlite3* m_db;
    std::string m_path;
    int64_t m_runId;
    std::chrono::steady_clock::time_point m_runStartWall;

    uint32_t m_batchRows;
    Time m_busyTimeout;
    Time m_maxBusyWait;

    sqlite3_stmt* m_insNode;
    sqlite3_stmt* m_insLink;
    sqlite3_stmt* m_insSample;
    sqlite3_stmt* m_insFlow;
    sqlite3_stmt* m_insCollective;
    sqlite3_stmt* m_insOp;
    sqlite3_stmt* m_insBench;

    struct SampleRow
    {
        int64_t linkId;
        int64_t tNs;
        int64_t txBytes;
    };

    struct CollectiveRow
    {
        CollectiveRecord rec;
        double algbwGbps;
        double busbwGbps;
    };

    std::vector<NodeRecord> m_nodes;
    std::vector<LinkRecord> m_links;
    std::vector<SampleRow> m_samples;
    std::vector<FlowRecord> m_flows;
    std::vector<CollectiveRow> m_collectives;
    std::vector<OpRecord> m_ops;
    std::vector<BenchRecord> m_bench;
};

} // namespace ns3

#endif
