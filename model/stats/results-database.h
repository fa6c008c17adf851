/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RESULTS_DATABASE_H
#define AI_FABRIC_RESULTS_DATABASE_H

#include "results-batch.h"
#include "results-records.h"
#include "results-schema.h"
#include "results-sqlite.h"

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Writer of the results database (schema: doc/results-database.md; declared in
 * results-schema.cc, migrated by results-migration.cc).
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
    static constexpr int SCHEMA_VERSION = RESULTS_SCHEMA_VERSION;

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
    void RequireRun(const char* what) const;
    void SetRun(int64_t runId);
    void MaybeFlush();
    void PrepareStatements();
    void FinalizeStatements() noexcept;
    void WriteBuffered();
    void DropBuffered() noexcept;

    template <typename Row>
    void Buffer(const char* what, Row row)
    {
        RequireRun(what);
        m_batches.Of<Row>().Add(std::move(row));
        MaybeFlush();
    }

    SqliteFile m_file;
    int64_t m_runId;
    std::chrono::steady_clock::time_point m_runStartWall;

    uint32_t m_batchRows;
    Time m_busyTimeout;
    Time m_maxBusyWait;

    /// Written in this order by every Flush.
    RowBatches<NodeRecord,
               LinkRecord,
               LinkSampleRecord,
               FlowRecord,
               CollectiveRow,
               OpRecord,
               BenchRecord>
        m_batches;
};

} // namespace ns3

#endif
