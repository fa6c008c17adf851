/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "results-database.h"

#include "collective-bandwidth.h"
#include "results-migration.h"

#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <ctime>
#include <unistd.h>

#ifndef AI_FABRIC_VERSION
#define AI_FABRIC_VERSION "unknown"
#endif
#ifndef AI_FABRIC_NS3_VERSION
#define AI_FABRIC_NS3_VERSION "unknown"
#endif

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ResultsDatabase");
NS_OBJECT_ENSURE_REGISTERED(ResultsDatabase);

namespace
{

std::string
UtcNow()
{
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string
HostName()
{
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0)
    {
        return "";
    }
    return buf;
}

} // namespace

TypeId
ResultsDatabase::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ResultsDatabase")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<ResultsDatabase>()
            .AddAttribute("BatchRows",
                          "Buffered rows that trigger a Flush (one transaction per batch).",
                          UintegerValue(100000),
                          MakeUintegerAccessor(&ResultsDatabase::m_batchRows),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("BusyTimeout",
                          "Wall-clock time SQLite itself waits for another writer's lock "
                          "(sqlite3_busy_timeout) before each retry.",
                          TimeValue(Seconds(5)),
                          MakeTimeAccessor(&ResultsDatabase::m_busyTimeout),
                          MakeTimeChecker())
            .AddAttribute("MaxBusyWait",
                          "Total wall-clock time to keep retrying a busy database before "
                          "giving up with an error.",
                          TimeValue(Seconds(600)),
                          MakeTimeAccessor(&ResultsDatabase::m_maxBusyWait),
                          MakeTimeChecker());
    return tid;
}

ResultsDatabase::ResultsDatabase()
    : m_runId(-1),
      m_batchRows(100000),
      m_busyTimeout(Seconds(5)),
      m_maxBusyWait(Seconds(600))
{
    NS_LOG_FUNCTION(this);
}

ResultsDatabase::~ResultsDatabase()
{
    try
    {
        Close();
    }
    catch (const std::exception& e)
    {
        NS_LOG_ERROR("closing results database: " << e.what());
    }
}

void
ResultsDatabase::DoDispose()
{
    Close();
    Object::DoDispose();
}

std::string
ResultsDatabase::GetNs3Version()
{
    return AI_FABRIC_NS3_VERSION;
}

std::string
ResultsDatabase::GetModuleVersion()
{
    return AI_FABRIC_VERSION;
}

void
ResultsDatabase::SetRun(int64_t runId)
{
    m_runId = runId;
    m_file.SetJitterSeed(static_cast<unsigned>(getpid()) ^ static_cast<unsigned>(runId));
}

void
ResultsDatabase::Open(const std::string& path)
{
    NS_LOG_FUNCTION(this << path);
    if (m_file.IsOpen())
    {
        Close();
    }
    m_file.SetMaxBusyWait(m_maxBusyWait);
    SetRun(-1);
    m_file.Open(path, m_busyTimeout);
    try
    {
        CreateOrMigrateResultsSchema(m_file, GetModuleVersion());
        PrepareStatements();
    }
    catch (...)
    {
        FinalizeStatements();
        m_file.Close();
        throw;
    }
}

void
ResultsDatabase::PrepareStatements()
{
    m_batches.ForEach([this](auto& batch) { batch.Prepare(m_file); });
}

void
ResultsDatabase::FinalizeStatements() noexcept
{
    m_batches.ForEach([](auto& batch) { batch.Finalize(); });
}

void
ResultsDatabase::Close()
{
    if (!m_file.IsOpen())
    {
        return;
    }
    NS_LOG_FUNCTION(this << m_file.GetPath());
    std::exception_ptr error;
    try
    {
        if (m_runId >= 0)
        {
            // Closed without EndRun (an exception unwound the scenario): keep the
            // rows gathered so far but say that the run did not finish.
            EndRun("failed", Simulator::Now(), -1.0);
        }
        else
        {
            Flush();
        }
    }
    catch (...)
    {
        error = std::current_exception();
    }
    FinalizeStatements();
    m_file.Close();
    SetRun(-1);
    if (error)
    {
        std::rethrow_exception(error);
    }
}

bool
ResultsDatabase::IsOpen() const
{
    return m_file.IsOpen();
}

const std::string&
ResultsDatabase::GetPath() const
{
    return m_file.GetPath();
}

void
ResultsDatabase::RequireRun(const char* what) const
{
    if (!m_file.IsOpen())
    {
        throw ResultsDatabaseError(std::string("results database: ") + what + " before Open()");
    }
    if (m_runId < 0)
    {
        throw ResultsDatabaseError("results database '" + m_file.GetPath() + "': " + what +
                                   " outside BeginRun()/EndRun()");
    }
}

int64_t
ResultsDatabase::BeginRun(const std::string& label,
                          const std::string& scenario,
                          int64_t seed,
                          const std::string& paramsJson)
{
    NS_LOG_FUNCTION(this << label << scenario << seed);
    if (!m_file.IsOpen())
    {
        throw ResultsDatabaseError("results database: BeginRun() before Open()");
    }
    if (m_runId >= 0)
    {
        throw ResultsDatabaseError("results database '" + m_file.GetPath() +
                                   "': BeginRun() while run " + std::to_string(m_runId) +
                                   " is open");
    }
    const RunRecord run{label,
                        scenario,
                        "running",
                        UtcNow(),
                        seed,
                        GetNs3Version(),
                        GetModuleVersion(),
                        paramsJson,
                        HostName(),
                        getpid()};
    const auto& table = TableOf<RunRecord>();
    Statement insert(m_file, table.Def().InsertSql());
    try
    {
        m_file.Transaction([&] {
            table.Bind(run, -1, insert);
            insert.Run("inserting run");
            SetRun(m_file.GetLastInsertRowId());
        });
    }
    catch (...)
    {
        SetRun(-1);
        throw;
    }
    m_runStartWall = std::chrono::steady_clock::now();
    return m_runId;
}

void
ResultsDatabase::EndRun(const std::string& status, Time simEnd, double wallSeconds)
{
    NS_LOG_FUNCTION(this << status << simEnd << wallSeconds);
    RequireRun("EndRun()");
    if (status != "complete" && status != "failed")
    {
        throw ResultsDatabaseError("results database '" + m_file.GetPath() + "': EndRun status '" +
                                   status + "' is neither 'complete' nor 'failed'");
    }
    if (wallSeconds < 0)
    {
        wallSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - m_runStartWall)
                .count();
    }
    const std::string endedAt = UtcNow();
    Statement update(m_file,
                     "UPDATE runs SET status=?, sim_end_ns=?, wall_seconds=?, "
                     "ended_at=? WHERE run_id=?");
    m_file.Transaction([&] {
        WriteBuffered();
        update.Text(status)
            .Int(simEnd.GetNanoSeconds())
            .Real(wallSeconds)
            .Text(endedAt)
            .Int(m_runId)
            .Run("updating run " + std::to_string(m_runId));
    });
    SetRun(-1);
}

void
ResultsDatabase::RejectRun(const std::string& paramsJson)
{
    NS_LOG_FUNCTION(this);
    RequireRun("RejectRun()");
    DropBuffered();
    const double wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_runStartWall).count();
    const std::string endedAt = UtcNow();
    const std::string run = std::to_string(m_runId);
    Statement update(m_file,
                     "UPDATE runs SET status='failed', sim_end_ns=0, wall_seconds=?, "
                     "ended_at=?, params=? WHERE run_id=?");
    m_file.Transaction([&] {
        for (const TableDef* t : ResultsSchema())
        {
            if (t->key == RunKey::REFERENCE)
            {
                m_file.Exec("DELETE FROM " + t->name + " WHERE run_id=" + run);
            }
        }
        update.Real(wallSeconds)
            .Text(endedAt)
            .Text(paramsJson)
            .Int(m_runId)
            .Run("rejecting run " + run);
    });
    SetRun(-1);
}

int64_t
ResultsDatabase::GetRunId() const
{
    return m_runId;
}

std::size_t
ResultsDatabase::GetPendingRows() const
{
    return m_batches.Size();
}

void
ResultsDatabase::MaybeFlush()
{
    if (GetPendingRows() >= m_batchRows)
    {
        Flush();
    }
}

void
ResultsDatabase::AddNode(const NodeRecord& row)
{
    Buffer("AddNode()", row);
}

void
ResultsDatabase::AddLink(const LinkRecord& row)
{
    Buffer("AddLink()", row);
}

void
ResultsDatabase::AddLinkSample(int64_t linkId, int64_t tNs, int64_t txBytes)
{
    Buffer("AddLinkSample()", LinkSampleRecord{linkId, tNs, txBytes});
}

void
ResultsDatabase::AddFlow(const FlowRecord& row)
{
    Buffer("AddFlow()", row);
}

void
ResultsDatabase::AddCollective(const CollectiveRecord& row)
{
    CollectiveRow c;
    static_cast<CollectiveRecord&>(c) = row;
    const int64_t durationNs = row.endNs - row.startNs;
    c.algbw_gbyte_per_s = CollectiveAlgBw_gbyte_per_s(static_cast<uint64_t>(row.bytes), durationNs);
    c.busbw_gbyte_per_s =
        c.algbw_gbyte_per_s * CollectiveBusBwFactor(row.kind, static_cast<uint32_t>(row.numRanks));
    Buffer("AddCollective()", std::move(c));
}

void
ResultsDatabase::AddOp(const OpRecord& row)
{
    Buffer("AddOp()", row);
}

void
ResultsDatabase::AddBenchResult(const BenchRecord& row)
{
    Buffer("AddBenchResult()", row);
}

void
ResultsDatabase::Flush()
{
    if (!m_file.IsOpen() || GetPendingRows() == 0)
    {
        return;
    }
    NS_LOG_FUNCTION(this << GetPendingRows());
    m_file.Transaction([this] { WriteBuffered(); });
}

void
ResultsDatabase::WriteBuffered()
{
    // Called inside a transaction. Buffers are cleared only after every row is
    // in, so a failed batch can be retried by a later Flush.
    m_batches.ForEach([this](auto& batch) { batch.Write(m_runId); });
    DropBuffered();
}

void
ResultsDatabase::DropBuffered() noexcept
{
    m_batches.ForEach([](auto& batch) { batch.Clear(); });
}

} // namespace ns3
