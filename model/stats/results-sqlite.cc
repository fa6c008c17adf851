/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "results-sqlite.h"

#include "ns3/log.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <sqlite3.h>
#include <sstream>
#include <thread>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ResultsSqlite");

namespace
{

bool
IsBusy(int rc)
{
    return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

} // namespace

SqliteFile::~SqliteFile()
{
    Close();
}

void
SqliteFile::Open(const std::string& path, Time busyTimeout)
{
    NS_LOG_FUNCTION(this << path);
    Close();
    m_path = path;
    int rc = sqlite3_open_v2(path.c_str(),
                             &m_db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK)
    {
        std::string msg = "cannot open or create results database '" + path +
                          "': " + (m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc));
        Close();
        throw ResultsDatabaseError(msg);
    }
    try
    {
        sqlite3_extended_result_codes(m_db, 1);
        sqlite3_busy_timeout(m_db, static_cast<int>(busyTimeout.GetMilliSeconds()));
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
    }
    catch (...)
    {
        Close();
        throw;
    }
}

void
SqliteFile::Close() noexcept
{
    if (m_db)
    {
        sqlite3_close_v2(m_db);
        m_db = nullptr;
    }
}

bool
SqliteFile::IsOpen() const
{
    return m_db != nullptr;
}

const std::string&
SqliteFile::GetPath() const
{
    return m_path;
}

void
SqliteFile::SetMaxBusyWait(Time wait)
{
    m_maxBusyWait = wait;
}

void
SqliteFile::SetJitterSeed(unsigned seed)
{
    m_jitterSeed = seed;
}

void
SqliteFile::Fail(const std::string& what, int rc) const
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
SqliteFile::Exec(const std::string& sql)
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
SqliteFile::ExecRetry(const std::string& sql)
{
    // sqlite3_busy_timeout already waits BusyTimeout per attempt; on top of it,
    // back off with jitter so two writers that gave up together do not collide again.
    std::minstd_rand jitter(m_jitterSeed);
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
SqliteFile::BeginImmediate()
{
    // IMMEDIATE takes the write lock now: a deferred transaction that upgrades
    // later can fail with SQLITE_BUSY that no waiting resolves.
    ExecRetry("BEGIN IMMEDIATE");
}

void
SqliteFile::Commit()
{
    ExecRetry("COMMIT");
}

void
SqliteFile::Rollback() noexcept
{
    if (m_db && !sqlite3_get_autocommit(m_db))
    {
        sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

int
SqliteFile::GetUserVersion()
{
    sqlite3_stmt* raw = Prepare("PRAGMA user_version");
    int version = 0;
    if (sqlite3_step(raw) == SQLITE_ROW)
    {
        version = sqlite3_column_int(raw, 0);
    }
    sqlite3_finalize(raw);
    return version;
}

int64_t
SqliteFile::GetLastInsertRowId() const
{
    return sqlite3_last_insert_rowid(m_db);
}

sqlite3_stmt*
SqliteFile::Prepare(const std::string& sql)
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

Statement::Statement(SqliteFile& db, const std::string& sql)
{
    Prepare(db, sql);
}

Statement::~Statement()
{
    Finalize();
}

void
Statement::Prepare(SqliteFile& db, const std::string& sql)
{
    Finalize();
    m_db = &db;
    m_stmt = db.Prepare(sql);
}

void
Statement::Finalize() noexcept
{
    sqlite3_finalize(m_stmt);
    m_stmt = nullptr;
    m_col = 0;
}

Statement&
Statement::Int(int64_t v)
{
    sqlite3_bind_int64(m_stmt, ++m_col, v);
    return *this;
}

Statement&
Statement::Real(double v)
{
    sqlite3_bind_double(m_stmt, ++m_col, v);
    return *this;
}

// SQLITE_STATIC: the string outlives the step that reads it.
Statement&
Statement::Text(const std::string& v)
{
    sqlite3_bind_text(m_stmt, ++m_col, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
}

Statement&
Statement::Null()
{
    sqlite3_bind_null(m_stmt, ++m_col);
    return *this;
}

void
Statement::Run(const std::string& what)
{
    m_col = 0;
    int rc = sqlite3_step(m_stmt);
    sqlite3_reset(m_stmt);
    if (rc != SQLITE_DONE)
    {
        m_db->Fail(what, rc);
    }
}

} // namespace ns3
