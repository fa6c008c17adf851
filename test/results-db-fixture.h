/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The results-database tests' shared fixture: a fresh directory per test and a plain SQLite
// reader, so the files are checked as any SQL user would see them.
#ifndef AI_FABRIC_TEST_RESULTS_DB_FIXTURE_H
#define AI_FABRIC_TEST_RESULTS_DB_FIXTURE_H

#include "scratch-dir.h"

#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/results-database.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sqlite3.h>
#include <sstream>
#include <string>
#include <vector>

namespace ns3
{
namespace results_db_test
{

// A fresh directory per test so runs never see each other's files.
class ResultsDb : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        m_dir = m_scratch.Path();
        m_path = m_dir + "/results.db";
    }

    // Writes \p sql into m_path by hand, as another (older) program would.
    void RawSql(const std::string& sql)
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(m_path.c_str(), &raw), SQLITE_OK);
        char* err = nullptr;
        EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
        sqlite3_free(err);
        sqlite3_close(raw);
    }

    const test_util::ScratchDir m_scratch{"results-db"};
    std::string m_dir;
    std::string m_path;
};

// Read-only helper connection: the tests check the file as any SQL user would.
class Reader
{
  public:
    explicit Reader(const std::string& path)
    {
        sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE, nullptr);
        sqlite3_busy_timeout(m_db, 10000);
    }

    ~Reader()
    {
        sqlite3_close_v2(m_db);
    }

    void Exec(const std::string& sql)
    {
        char* err = nullptr;
        int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err);
        EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (err ? err : "");
        sqlite3_free(err);
    }

    // First column of the first row as text ("NULL" for NULL, "" for no row).
    std::string Text(const std::string& sql)
    {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
        {
            ADD_FAILURE() << sql << ": " << sqlite3_errmsg(m_db);
            return "";
        }
        std::string out;
        if (sqlite3_step(stmt) == SQLITE_ROW)
        {
            const unsigned char* t = sqlite3_column_text(stmt, 0);
            out = t ? reinterpret_cast<const char*>(t) : "NULL";
        }
        sqlite3_finalize(stmt);
        return out;
    }

    int64_t Int(const std::string& sql)
    {
        return std::stoll(Text(sql));
    }

    double Real(const std::string& sql)
    {
        return std::stod(Text(sql));
    }

    // Every row of \p table, its columns as text joined by '|', ordered by its second
    // column (the row's id after the run id).
    std::vector<std::string> Rows(const std::string& table)
    {
        sqlite3_stmt* stmt = nullptr;
        const std::string sql = "SELECT * FROM " + table + " ORDER BY 2";
        EXPECT_EQ(sqlite3_prepare_v2(m_db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
        std::vector<std::string> rows;
        while (stmt && sqlite3_step(stmt) == SQLITE_ROW)
        {
            std::ostringstream row;
            for (int i = 0; i < sqlite3_column_count(stmt); ++i)
            {
                const unsigned char* t = sqlite3_column_text(stmt, i);
                row << (t ? reinterpret_cast<const char*>(t) : "NULL") << "|";
            }
            rows.push_back(row.str());
        }
        sqlite3_finalize(stmt);
        return rows;
    }

    std::set<std::string> Columns(const std::string& table)
    {
        std::set<std::string> cols;
        sqlite3_stmt* stmt = nullptr;
        sqlite3_prepare_v2(m_db, ("PRAGMA table_info(" + table + ")").c_str(), -1, &stmt, nullptr);
        while (sqlite3_step(stmt) == SQLITE_ROW)
        {
            cols.insert(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)));
        }
        sqlite3_finalize(stmt);
        return cols;
    }

  private:
    sqlite3* m_db{nullptr};
};

inline std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// One complete run in a new database at \p path holding the nodes and links rows \p cluster
// writes (ClusterHelper::WriteNodes, WriteLinks).
template <typename Cluster>
void
WriteTopology(const Cluster& cluster, const std::string& path)
{
    Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
    db->Open(path);
    db->BeginRun("topology", "test", 1, "{}");
    cluster.WriteNodes(db);
    cluster.WriteLinks(db);
    db->EndRun("complete", NanoSeconds(1));
    db->Close();
}

// Those rows as Reader::Rows gives them, through a database in a directory of its own.
template <typename Cluster>
void
WrittenTopologyRows(const Cluster& cluster,
                    std::vector<std::string>& nodes,
                    std::vector<std::string>& links)
{
    const test_util::ScratchDir scratch("topology-rows");
    const std::string path = scratch.File("results.db");
    WriteTopology(cluster, path);
    Reader reader(path);
    nodes = reader.Rows("nodes");
    links = reader.Rows("links");
}

} // namespace results_db_test
} // namespace ns3

#endif
