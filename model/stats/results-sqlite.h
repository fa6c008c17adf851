/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RESULTS_SQLITE_H
#define AI_FABRIC_RESULTS_SQLITE_H

#include "ns3/nstime.h"

#include <cstdint>
#include <stdexcept>
#include <string>

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

/**
 * The results database's SQLite connection: opened read-write in WAL mode after checking
 * that the file is a writable database, with transactions that wait out other writers.
 * Every failure throws ResultsDatabaseError naming the file.
 */
class SqliteFile
{
  public:
    SqliteFile() = default;
    ~SqliteFile();
    SqliteFile(const SqliteFile&) = delete;
    SqliteFile& operator=(const SqliteFile&) = delete;

    /// Open or create \p path; \p busyTimeout is SQLite's own wait per attempt.
    void Open(const std::string& path, Time busyTimeout);
    void Close() noexcept;
    bool IsOpen() const;
    const std::string& GetPath() const;

    /// Total time ExecRetry keeps retrying a busy database.
    void SetMaxBusyWait(Time wait);
    /// Seeds the retry jitter, so two writers that gave up together do not collide again.
    void SetJitterSeed(unsigned seed);

    void Exec(const std::string& sql);
    /// Exec retrying SQLITE_BUSY with exponential backoff up to the max busy wait.
    void ExecRetry(const std::string& sql);
    void BeginImmediate();
    void Commit();
    void Rollback() noexcept;

    /// Runs \p body inside one BEGIN IMMEDIATE transaction, rolled back if it throws.
    template <typename Body>
    void Transaction(Body&& body)
    {
        BeginImmediate();
        try
        {
            body();
            Commit();
        }
        catch (...)
        {
            Rollback();
            throw;
        }
    }

    /// PRAGMA user_version.
    int GetUserVersion();
    int64_t GetLastInsertRowId() const;
    sqlite3_stmt* Prepare(const std::string& sql);
    [[noreturn]] void Fail(const std::string& what, int rc) const;

  private:
    sqlite3* m_db{nullptr};
    std::string m_path;
    Time m_maxBusyWait{Seconds(600)};
    unsigned m_jitterSeed{0};
};

/// A prepared statement bound column by column, reusable across rows (SQLITE_PREPARE_PERSISTENT).
class Statement
{
  public:
    Statement() = default;
    Statement(SqliteFile& db, const std::string& sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    void Prepare(SqliteFile& db, const std::string& sql);
    void Finalize() noexcept;

    // Bind the next parameter (1, 2, ... since the last Run).  Text is not copied: it must
    // outlive Run.
    Statement& Int(int64_t v);
    Statement& Real(double v);
    Statement& Text(const std::string& v);
    Statement& Null();

    /// Steps to SQLITE_DONE and resets for the next row; failure: "\p what: <sqlite error>".
    void Run(const std::string& what);

  private:
    SqliteFile* m_db{nullptr};
    sqlite3_stmt* m_stmt{nullptr};
    int m_col{0};
};

} // namespace ns3

#endif
