/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "results-database.h"

#include "collective-bandwidth.h"

#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>
#include <set>
#include <sqlite3.h>
#include <sstream>
#include <thread>
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

struct Column
{
    const char* name;
    const char* type; //!< type used by ALTER TABLE ADD COLUMN
};

struct Table
{
    const char* name;
    const char* firstColumnDef;  //!< full definition of the first column (may hold a key)
    std::vector<Column> columns; //!< all columns, first included
};

// The schema as data: creation and migration (add what is missing) both read it.
// Names of the contract columns must never change; append new ones at the end.
const std::vector<Table>&
SchemaTables()
{
    static const std::vector<Table> tables = {
        {"runs",
         "run_id INTEGER PRIMARY KEY AUTOINCREMENT",
         {{"run_id", "INTEGER"},
          {"label", "TEXT"},
          {"scenario", "TEXT"},
          {"status", "TEXT"},
          {"started_at", "TEXT"},
          {"wall_seconds", "REAL"},
          {"sim_end_ns", "INTEGER"},
          {"seed", "INTEGER"},
          {"ns3_version", "TEXT"},
          {"module_version", "TEXT"},
          {"params", "TEXT"},
          {"ended_at", "TEXT"},
          {"host", "TEXT"},
          {"pid", "INTEGER"}}},
        {"nodes",
         "run_id INTEGER NOT NULL",
         {{"run_id", "INTEGER"},
          {"node_id", "INTEGER"},
          {"name", "TEXT"},
          {"kind", "TEXT"},
          {"server", "INTEGER"},
          {"rank", "INTEGER"}}},
        {"links",
         "run_id INTEGER NOT NULL",
         {{"run_id", "INTEGER"},
          {"link_id", "INTEGER"},
          {"plane", "TEXT"},
          {"src_node", "INTEGER"},
          {"dst_node", "INTEGER"},
          {"rate_bps", "INTEGER"},
          {"tx_bytes", "INTEGER"},
          {"tx_packets", "INTEGER"},
          {"busy_ns", "INTEGER"},
          {"credit_stall_ns", "INTEGER"},
          {"peak_queue_bytes", "INTEGER"},
          {"drops", "INTEGER"}}},
        {"link_samples",
         "run_id INTEGER NOT NULL",
         {{"run_id", "INTEGER"},
          {"link_id", "INTEGER"},
          {"t_ns", "INTEGER"},
          {"tx_bytes", "INTEGER"}}},
        {"flows",
         "run_id INTEGER NOT NULL",
         {{"run_id", "INTEGER"},
          {"flow_id", "INTEGER"},
          {"plane", "TEXT"},
          {"src_node", "INTEGER"},
          {"dst_node", "INTEGER"},
          {"src_rank", "INTEGER"},
          {"dst_rank", "INTEGER"},
          {"bytes", "INTEGER"},
          {"packets", "INTEGER"},
          {"start_ns", "INTEGER"},
          {"end_ns", "INTEGER"},
          {"op_id", "INTEGER"},
          {"rx_bytes", "INTEGER"},
          {"lost_packets", "INTEGER"}}},
        {"collectives",
         "run_id INTEGER NOT NULL",
         {{"run_id", "INTEGER"},
          {"coll_id", "INTEGER"},
          {"kind", "TEXT"},
          {"algorithm", "TEXT"},
          {"group_name", "TEXT"},
          {"num_ranks", "INTEGER"},
          {"bytes", "INTEGER"},
          {"start_ns", "INTEGER"},
          {"end_ns", "INTEGER"},
          {"algbw_gbps", "REAL"},
          {"busbw_gbps", "REAL"}}},
        {"ops",
         "run_id INTEGER NOT NULL",
         {{"run_id", "INTEGER"},
          {"rank", "INTEGER"},
          {"op_id", "INTEGER"},
          {"label", "TEXT"},
          {"kind", "TEXT"},
          {"start_ns", "INTEGER"},
          {"end_ns", "INTEGER"}}},
        // Version 2: scripts/bench rows (runs.scenario = 'bench').
        {"bench_results",
         "run_id INTEGER NOT NULL",
         {{"run_id", "INTEGER"},
          {"benchmark", "TEXT"},
          {"figure", "TEXT"},
          {"target", "TEXT"},
          {"ratio_to_baseline", "REAL"},
          {"pass", "INTEGER"},
          {"wall_seconds", "REAL"},
          {"cpu_seconds", "REAL"},
          {"events", "INTEGER"},
          {"packet_hops", "INTEGER"},
          {"events_per_hop", "REAL"},
          {"packet_hops_per_s", "REAL"},
          {"peak_rss_bytes", "INTEGER"},
          {"sim_ns", "INTEGER"}}},
    };
    return tables;
}

// One index per table, led by run_id: every query selects one run.
const std::vector<std::string>&
SchemaIndexes()
{
    static const std::vector<std::string> indexes = {
        "CREATE INDEX IF NOT EXISTS nodes_run ON nodes(run_id, node_id)",
        "CREATE INDEX IF NOT EXISTS links_run ON links(run_id, link_id)",
        "CREATE INDEX IF NOT EXISTS link_samples_run ON link_samples(run_id, link_id, t_ns)",
        "CREATE INDEX IF NOT EXISTS flows_run ON flows(run_id, flow_id)",
        "CREATE INDEX IF NOT EXISTS collectives_run ON collectives(run_id, kind, bytes)",
        "CREATE INDEX IF NOT EXISTS ops_run ON ops(run_id, rank, start_ns)",
        "CREATE INDEX IF NOT EXISTS bench_results_run ON bench_results(run_id, benchmark)",
    };
    return indexes;
}

std::string
InsertSql(const char* table, const std::vector<const char*>& columns)
{
    std::ostringstream sql;
    sql << "INSERT INTO " << table << "(";
    for (std::size_t i = 0; i < columns.size(); ++i)
    {
        sql << (i ? "," : "") << columns[i];
    }
    sql << ") VALUES (";
    for (std::size_t i = 0; i < columns.size(); ++i)
    {
        sql << (i ? ",?" : "?");
    }
    sql << ")";
    return sql.str();
}

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

bool
IsBusy(int rc)
{
    return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

// Binding helpers: column numbers are 1-based; -1 means NULL for nullable fields.
class Binder
{
  public:
    explicit Binder(sqlite3_stmt* stmt)
        : m_stmt(stmt)
    {
    }

    Binder& Int(int64_t v)
    {
        sqlite3_bind_int64(m_stmt, ++m_col, v);
        return *this;
    }

    Binder& NullableInt(int64_t v)
    {
        if (v < 0)
        {
            sqlite3_bind_null(m_stmt, ++m_col);
        }
        else
        {
            sqlite3_bind_int64(m_stmt, ++m_col, v);
        }
        return *this;
    }

    Binder& Real(double v)
    {
        sqlite3_bind_double(m_stmt, ++m_col, v);
        return *this;
    }

    Binder& NullableReal(double v)
    {
        if (std::isnan(v))
        {
            sqlite3_bind_null(m_stmt, ++m_col);
        }
        else
        {
            sqlite3_bind_double(m_stmt, ++m_col, v);
        }
        return *this;
    }

    // SQLITE_STATIC: the string outlives the step that reads it.
    Binder& Text(const std::string& v)
    {
        sqlite3_bind_text(m_stmt, ++m_col, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
        return *this;
    }

  private:
    sqlite3_stmt* m_stmt;
    int m_col{0};
};

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
    : m_db(nullptr),
      m_runId(-1),
      m_batchRows(100000),
      m_busyTimeout(Seconds(5)),
      m_maxBusyWait(Seconds(600)),
      m_insNode(nullptr),
      m_insLink(nullptr),
      m_insSample(nullptr),
      m_insFlow(nullptr),
      m_insCollective(nullptr),
      m_insOp(nullptr),
      m_insBench(nullptr)
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
ResultsDatabase::Fail(const std::string& what, int rc) const
{
    std::ostringstream msg;
    msg << "results database '" << m_path << "': " << what;
    if (m_db)
    {
        msg << ": " << sqlite3_errmsg(m_db);
    }
    else
    {
        msg << ": " << sqlite3_errstr(rc);
    }
    throw ResultsDatabaseError(msg.str());
}

void
ResultsDatabase::Exec(const std::string& sql)
{
    char* err = nullptr;
    int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err);
    sqlite3_free(err);
    if (rc != SQLITE_OK)
    {
        Fail(sql, rc);
    }
}

void
ResultsDatabase::ExecRetry(const std::string& sql)
{
    // sqlite3_busy_timeout already waits BusyTimeout per attempt; on top of it,
    // back off with jitter so two writers that gave up together do not collide again.
    std::minstd_rand jitter(static_cast<unsigned>(getpid()) ^ static_cast<unsigned>(m_runId));
    auto start = std::chrono::steady_clock::now();
    auto backoff = std::chrono::milliseconds(1);
    while (true)
    {
        int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK)
        {
            return;
        }
        auto waited = std::chrono::steady_clock::now() - start;
        if (!IsBusy(rc) || std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count() >
                               m_maxBusyWait.GetNanoSeconds())
        {
            Fail(sql, rc);
        }
        NS_LOG_LOGIC("busy on '" << sql << "', retrying in " << backoff.count() << " ms");
        std::this_thread::sleep_for(backoff + std::chrono::milliseconds(jitter() % 4));
        backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
    }
}

void
ResultsDatabase::BeginImmediate()
{
    // IMMEDIATE takes the write lock now: a deferred transaction that upgrades
    // later can fail with SQLITE_BUSY that no waiting resolves.
    ExecRetry("BEGIN IMMEDIATE");
}

void
ResultsDatabase::Commit()
{
    ExecRetry("COMMIT");
}

void
ResultsDatabase::Rollback() noexcept
{
    if (m_db && !sqlite3_get_autocommit(m_db))
    {
        sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

sqlite3_stmt*
ResultsDatabase::Prepare(const std::string& sql)
{
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(m_db,
                                sql.c_str(),
                                static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT,
                                &stmt,
                                nullptr);
    if (rc != SQLITE_OK)
    {
        Fail("preparing " + sql, rc);
    }
    return stmt;
}

void
ResultsDatabase::Open(const std::string& path)
{
    NS_LOG_FUNCTION(this << path);
    if (m_db)
    {
        Close();
    }
    m_path = path;
    int rc = sqlite3_open_v2(path.c_str(),
                             &m_db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK)
    {
        std::string msg = "cannot open or create results database '" + path +
                          "': " + (m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc));
        sqlite3_close_v2(m_db);
        m_db = nullptr;
        throw ResultsDatabaseError(msg);
    }
    try
    {
        sqlite3_extended_result_codes(m_db, 1);
        sqlite3_busy_timeout(m_db, static_cast<int>(m_busyTimeout.GetMilliSeconds()));
        // Reading the schema first fails cleanly (SQLITE_NOTADB) on a file that
        // is not a database, before anything could be written to it.
        sqlite3_stmt* probe = nullptr;
        rc = sqlite3_prepare_v2(m_db, "SELECT count(*) FROM sqlite_schema", -1, &probe, nullptr);
        if (rc == SQLITE_OK)
        {
            do
            {
                rc = sqlite3_step(probe);
            } while (IsBusy(rc));
        }
        sqlite3_finalize(probe);
        if (rc != SQLITE_ROW)
        {
            Fail("not a usable SQLite database", rc);
        }
        // SQLite silently opens a write-protected file read-only; say so now
        // rather than at the first insert in the middle of a run.
        if (sqlite3_db_readonly(m_db, "main") == 1)
        {
            throw ResultsDatabaseError("results database '" + path +
                                       "' is read-only (no write permission)");
        }
        // WAL: readers never block the writer and a killed writer leaves the
        // main file consistent. NORMAL sync is corruption-safe under WAL.
        ExecRetry("PRAGMA journal_mode=WAL");
        ExecRetry("PRAGMA synchronous=NORMAL");
        // 32 MiB page cache: batches of 1e5 rows and their index pages stay in memory.
        Exec("PRAGMA cache_size=-32768");
        CreateOrMigrateSchema();
        PrepareStatements();
    }
    catch (...)
    {
        FinalizeStatements();
        sqlite3_close_v2(m_db);
        m_db = nullptr;
        throw;
    }
}

void
ResultsDatabase::CreateOrMigrateSchema()
{
    // One write transaction: two processes opening a new file at once cannot
    // both create tables, and an interrupted migration leaves the old schema.
    BeginImmediate();
    try
    {
        sqlite3_stmt* stmt = Prepare("PRAGMA user_version");
        int version = 0;
        if (sqlite3_step(stmt) == SQLITE_ROW)
        {
            version = sqlite3_column_int(stmt, 0);
        }
        sqlite3_finalize(stmt);
        if (version > SCHEMA_VERSION)
        {
            std::ostringstream msg;
            msg << "results database '" << m_path << "' has schema version " << version
                << ", newer than this ai-fabric (" << GetModuleVersion() << ") supports ("
                << SCHEMA_VERSION << "); use a newer ai-fabric or another file";
            throw ResultsDatabaseError(msg.str());
        }
        for (const auto& table : SchemaTables())
        {
            std::set<std::string> existing;
            stmt = Prepare(std::string("PRAGMA table_info(") + table.name + ")");
            while (sqlite3_step(stmt) == SQLITE_ROW)
            {
                existing.insert(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)));
            }
            sqlite3_finalize(stmt);
            if (existing.empty())
            {
                std::ostringstream sql;
                sql << "CREATE TABLE " << table.name << "(" << table.firstColumnDef;
                for (std::size_t i = 1; i < table.columns.size(); ++i)
                {
                    sql << ", " << table.columns[i].name << " " << table.columns[i].type;
                }
                sql << ")";
                Exec(sql.str());
                continue;
            }
            for (const auto& column : table.columns)
            {
                if (!existing.count(column.name))
                {
                    NS_LOG_INFO("migrating " << m_path << ": adding " << table.name << "."
                                             << column.name);
                    Exec(std::string("ALTER TABLE ") + table.name + " ADD COLUMN " + column.name +
                         " " + column.type);
                }
            }
        }
        for (const auto& index : SchemaIndexes())
        {
            Exec(index);
        }
        if (version != SCHEMA_VERSION)
        {
            Exec("PRAGMA user_version=" + std::to_string(SCHEMA_VERSION));
        }
        Commit();
    }
    catch (...)
    {
        Rollback();
        throw;
    }
}

void
ResultsDatabase::PrepareStatements()
{
    m_insNode =
        Prepare(InsertSql("nodes", {"run_id", "node_id", "name", "kind", "server", "rank"}));
    m_insLink = Prepare(InsertSql("links",
                                  {"run_id",
                                   "link_id",
                                   "plane",
                                   "src_node",
                                   "dst_node",
                                   "rate_bps",
                                   "tx_bytes",
                                   "tx_packets",
                                   "busy_ns",
                                   "credit_stall_ns",
                                   "peak_queue_bytes",
                                   "drops"}));
    m_insSample = Prepare(InsertSql("link_samples", {"run_id", "link_id", "t_ns", "tx_bytes"}));
    m_insFlow = Prepare(InsertSql("flows",
                                  {"run_id",
                                   "flow_id",
                                   "plane",
                                   "src_node",
                                   "dst_node",
                                   "src_rank",
                                   "dst_rank",
                                   "bytes",
                                   "packets",
                                   "start_ns",
                                   "end_ns",
                                   "op_id",
                                   "rx_bytes",
                                   "lost_packets"}));
    m_insCollective = Prepare(InsertSql("collectives",
                                        {"run_id",
                                         "coll_id",
                                         "kind",
                                         "algorithm",
                                         "group_name",
                                         "num_ranks",
                                         "bytes",
                                         "start_ns",
                                         "end_ns",
                                         "algbw_gbps",
                                         "busbw_gbps"}));
    m_insOp = Prepare(
        InsertSql("ops", {"run_id", "rank", "op_id", "label", "kind", "start_ns", "end_ns"}));
    m_insBench = Prepare(InsertSql("bench_results",
                                   {"run_id",
                                    "benchmark",
                                    "figure",
                                    "target",
                                    "ratio_to_baseline",
                                    "pass",
                                    "wall_seconds",
                                    "cpu_seconds",
                                    "events",
                                    "packet_hops",
                                    "events_per_hop",
                                    "packet_hops_per_s",
                                    "peak_rss_bytes",
                                    "sim_ns"}));
}

void
ResultsDatabase::FinalizeStatements() noexcept
{
    for (sqlite3_stmt** s : {&m_insNode,
                             &m_insLink,
                             &m_insSample,
                             &m_insFlow,
                             &m_insCollective,
                             &m_insOp,
                             &m_insBench})
    {
        sqlite3_finalize(*s);
        *s = nullptr;
    }
}

void
ResultsDatabase::Close()
{
    if (!m_db)
    {
        return;
    }
    NS_LOG_FUNCTION(this << m_path);
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
    sqlite3_close_v2(m_db);
    m_db = nullptr;
    m_runId = -1;
    if (error)
    {
        std::rethrow_exception(error);
    }
}

bool
ResultsDatabase::IsOpen() const
{
    return m_db != nullptr;
}

const std::string&
ResultsDatabase::GetPath() const
{
    return m_path;
}

void
ResultsDatabase::RequireRun(const char* what) const
{
    if (!m_db)
    {
        throw ResultsDatabaseError(std::string("results database: ") + what + " before Open()");
    }
    if (m_runId < 0)
    {
        throw ResultsDatabaseError("results database '" + m_path + "': " + what +
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
    if (!m_db)
    {
        throw ResultsDatabaseError("results database: BeginRun() before Open()");
    }
    if (m_runId >= 0)
    {
        throw ResultsDatabaseError("results database '" + m_path + "': BeginRun() while run " +
                                   std::to_string(m_runId) + " is open");
    }
    const std::string startedAt = UtcNow();
    const std::string host = HostName();
    const std::string ns3Version = GetNs3Version();
    const std::string moduleVersion = GetModuleVersion();
    sqlite3_stmt* stmt =
        Prepare("INSERT INTO runs(label, scenario, status, started_at, seed, ns3_version, "
                "module_version, params, host, pid) VALUES (?,?,'running',?,?,?,?,?,?,?)");
    BeginImmediate();
    try
    {
        Binder(stmt)
            .Text(label)
            .Text(scenario)
            .Text(startedAt)
            .Int(seed)
            .Text(ns3Version)
            .Text(moduleVersion)
            .Text(paramsJson)
            .Text(host)
            .Int(getpid());
        int rc = sqlite3_step(stmt);
        if (rc != SQLITE_DONE)
        {
            Fail("inserting run", rc);
        }
        m_runId = sqlite3_last_insert_rowid(m_db);
        sqlite3_finalize(stmt);
        stmt = nullptr;
        Commit();
    }
    catch (...)
    {
        sqlite3_finalize(stmt);
        Rollback();
        m_runId = -1;
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
        throw ResultsDatabaseError("results database '" + m_path + "': EndRun status '" + status +
                                   "' is neither 'complete' nor 'failed'");
    }
    if (wallSeconds < 0)
    {
        wallSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - m_runStartWall)
                .count();
    }
    const std::string endedAt = UtcNow();
    sqlite3_stmt* stmt = Prepare("UPDATE runs SET status=?, sim_end_ns=?, wall_seconds=?, "
                                 "ended_at=? WHERE run_id=?");
    BeginImmediate();
    try
    {
        WriteBuffered();
        Binder(stmt)
            .Text(status)
            .Int(simEnd.GetNanoSeconds())
            .Real(wallSeconds)
            .Text(endedAt)
            .Int(m_runId);
        int rc = sqlite3_step(stmt);
        if (rc != SQLITE_DONE)
        {
            Fail("updating run " + std::to_string(m_runId), rc);
        }
        sqlite3_finalize(stmt);
        stmt = nullptr;
        Commit();
    }
    catch (...)
    {
        sqlite3_finalize(stmt);
        Rollback();
        throw;
    }
    m_runId = -1;
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
    sqlite3_stmt* stmt = Prepare("UPDATE runs SET status='failed', sim_end_ns=0, wall_seconds=?, "
                                 "ended_at=?, params=? WHERE run_id=?");
    BeginImmediate();
    try
    {
        for (const Table& t : SchemaTables())
        {
            if (std::string(t.name) != "runs")
            {
                Exec(std::string("DELETE FROM ") + t.name + " WHERE run_id=" + run);
            }
        }
        Binder(stmt).Real(wallSeconds).Text(endedAt).Text(paramsJson).Int(m_runId);
        int rc = sqlite3_step(stmt);
        if (rc != SQLITE_DONE)
        {
            Fail("rejecting run " + run, rc);
        }
        sqlite3_finalize(stmt);
        stmt = nullptr;
        Commit();
    }
    catch (...)
    {
        sqlite3_finalize(stmt);
        Rollback();
        throw;
    }
    m_runId = -1;
}

int64_t
ResultsDatabase::GetRunId() const
{
    return m_runId;
}

std::size_t
ResultsDatabase::GetPendingRows() const
{
    return m_nodes.size() + m_links.size() + m_samples.size() + m_flows.size() +
           m_collectives.size() + m_ops.size() + m_bench.size();
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
    RequireRun("AddNode()");
    m_nodes.push_back(row);
    MaybeFlush();
}

void
ResultsDatabase::AddLink(const LinkRecord& row)
{
    RequireRun("AddLink()");
    m_links.push_back(row);
    MaybeFlush();
}

void
ResultsDatabase::AddLinkSample(int64_t linkId, int64_t tNs, int64_t txBytes)
{
    RequireRun("AddLinkSample()");
    m_samples.push_back({linkId, tNs, txBytes});
    MaybeFlush();
}

void
ResultsDatabase::AddFlow(const FlowRecord& row)
{
    RequireRun("AddFlow()");
    m_flows.push_back(row);
    MaybeFlush();
}

void
ResultsDatabase::AddCollective(const CollectiveRecord& row)
{
    RequireRun("AddCollective()");
    const int64_t durationNs = row.endNs - row.startNs;
    const double algbw = CollectiveAlgBwGbps(static_cast<uint64_t>(row.bytes), durationNs);
    const double busbw =
        algbw * CollectiveBusBwFactor(row.kind, static_cast<uint32_t>(row.numRanks));
    m_collectives.push_back({row, algbw, busbw});
    MaybeFlush();
}

void
ResultsDatabase::AddOp(const OpRecord& row)
{
    RequireRun("AddOp()");
    m_ops.push_back(row);
    MaybeFlush();
}

void
ResultsDatabase::AddBenchResult(const BenchRecord& row)
{
    RequireRun("AddBenchResult()");
    m_bench.push_back(row);
    MaybeFlush();
}

void
ResultsDatabase::Flush()
{
    if (!m_db || GetPendingRows() == 0)
    {
        return;
    }
    NS_LOG_FUNCTION(this << GetPendingRows());
    BeginImmediate();
    try
    {
        WriteBuffered();
        Commit();
    }
    catch (...)
    {
        Rollback();
        throw;
    }
}

void
ResultsDatabase::WriteBuffered()
{
    // Called inside a transaction. Buffers are cleared only after every row is
    // in, so a failed batch can be retried by a later Flush.
    auto step = [this](sqlite3_stmt* stmt, const char* table) {
        int rc = sqlite3_step(stmt);
        sqlite3_reset(stmt);
        if (rc != SQLITE_DONE)
        {
            Fail(std::string("inserting into ") + table, rc);
        }
    };
    const int64_t run = m_runId;
    for (const auto& r : m_nodes)
    {
        Binder(m_insNode)
            .Int(run)
            .Int(r.nodeId)
            .Text(r.name)
            .Text(r.kind)
            .NullableInt(r.server)
            .NullableInt(r.rank);
        step(m_insNode, "nodes");
    }
    for (const auto& r : m_links)
    {
        Binder(m_insLink)
            .Int(run)
            .Int(r.linkId)
            .Text(r.plane)
            .Int(r.srcNode)
            .Int(r.dstNode)
            .Int(r.rateBps)
            .Int(r.txBytes)
            .Int(r.txPackets)
            .Int(r.busyNs)
            .Int(r.creditStallNs)
            .Int(r.peakQueueBytes)
            .Int(r.drops);
        step(m_insLink, "links");
    }
    for (const auto& r : m_samples)
    {
        Binder(m_insSample).Int(run).Int(r.linkId).Int(r.tNs).Int(r.txBytes);
        step(m_insSample, "link_samples");
    }
    for (const auto& r : m_flows)
    {
        Binder(m_insFlow)
            .Int(run)
            .Int(r.flowId)
            .Text(r.plane)
            .NullableInt(r.srcNode)
            .NullableInt(r.dstNode)
            .NullableInt(r.srcRank)
            .NullableInt(r.dstRank)
            .Int(r.bytes)
            .Int(r.packets)
            .Int(r.startNs)
            .NullableInt(r.endNs)
            .NullableInt(r.opId)
            .NullableInt(r.rxBytes)
            .NullableInt(r.lostPackets);
        step(m_insFlow, "flows");
    }
    for (const auto& c : m_collectives)
    {
        const auto& r = c.rec;
        Binder(m_insCollective)
            .Int(run)
            .Int(r.collId)
            .Text(r.kind)
            .Text(r.algorithm)
            .Text(r.groupName)
            .Int(r.numRanks)
            .Int(r.bytes)
            .Int(r.startNs)
            .Int(r.endNs)
            .Real(c.algbwGbps)
            .Real(c.busbwGbps);
        step(m_insCollective, "collectives");
    }
    for (const auto& r : m_ops)
    {
        Binder(m_insOp)
            .Int(run)
            .Int(r.rank)
            .Int(r.opId)
            .Text(r.label)
            .Text(r.kind)
            .Int(r.startNs)
            .Int(r.endNs);
        step(m_insOp, "ops");
    }
    for (const auto& r : m_bench)
    {
        Binder(m_insBench)
            .Int(run)
            .Text(r.benchmark)
            .Text(r.figure)
            .Text(r.target)
            .NullableReal(r.ratioToBaseline)
            .NullableInt(r.pass)
            .NullableReal(r.wallSeconds)
            .NullableReal(r.cpuSeconds)
            .NullableInt(r.events)
            .NullableInt(r.packetHops)
            .NullableReal(r.eventsPerHop)
            .NullableReal(r.packetHopsPerS)
            .NullableInt(r.peakRssBytes)
            .NullableInt(r.simNs);
        step(m_insBench, "bench_results");
    }
    DropBuffered();
}

void
ResultsDatabase::DropBuffered() noexcept
{
    m_nodes.clear();
    m_links.clear();
    m_samples.clear();
    m_flows.clear();
    m_collectives.clear();
    m_ops.clear();
    m_bench.clear();
}

} // namespace ns3
