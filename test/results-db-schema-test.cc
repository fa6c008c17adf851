/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Results database: the schema as declared, its migration from older files, refused files.
#include "results-db-fixture.h"

#include "ns3/boolean.h"
#include "ns3/collective-bandwidth.h"
#include "ns3/flow-monitor-helper.h"
#include "ns3/flow-monitor-importer.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/link-sampler.h"
#include "ns3/progress-reporter.h"
#include "ns3/results-database.h"
#include "ns3/run-parameters.h"
#include "ns3/simple-net-device-helper.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/udp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sqlite3.h>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace ns3;
using namespace ns3::results_db_test;

// Every table and every contract column exists, WAL is on, version is current.
TEST_F(ResultsDb, SchemaCreated)
{
    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    Reader r(m_path);
    const std::map<std::string, std::vector<std::string>> contract = {
        {"runs",
         {"run_id",
          "label",
          "scenario",
          "status",
          "started_at",
          "wall_seconds",
          "sim_end_ns",
          "seed",
          "ns3_version",
          "module_version",
          "params"}},
        {"nodes", {"run_id", "node_id", "name", "kind", "server", "rank"}},
        {"links",
         {"run_id",
          "link_id",
          "plane",
          "src_node",
          "dst_node",
          "rate_bit_per_s",
          "tx_bytes",
          "tx_packets",
          "busy_ns",
          "credit_stall_ns",
          "peak_queue_bytes",
          "drops",
          "pfc_pause_ns",
          "pfc_pause_frames",
          "ecn_marked_packets"}},
        {"link_samples", {"run_id", "link_id", "t_ns", "tx_bytes"}},
        {"flows",
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
          "op_id"}},
        {"collectives",
         {"run_id",
          "coll_id",
          "kind",
          "algorithm",
          "group_name",
          "num_ranks",
          "bytes",
          "start_ns",
          "end_ns",
          "algbw_gbyte_per_s",
          "busbw_gbyte_per_s",
          "in_place"}},
        {"ops", {"run_id", "rank", "op_id", "label", "kind", "start_ns", "end_ns"}},
        {"bench_results",
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
          "sim_ns"}},
    };
    for (const auto& [table, columns] : contract)
    {
        const auto have = r.Columns(table);
        for (const auto& c : columns)
        {
            // The column names are a public contract: each must be present.
            EXPECT_TRUE(have.count(c)) << table << "." << c;
        }
    }
    // user_version is the schema version this build writes (3).
    EXPECT_EQ(r.Int("PRAGMA user_version"), ResultsDatabase::SCHEMA_VERSION);
    // WAL is persistent in the file: every later connection uses it too.
    EXPECT_EQ(r.Text("PRAGMA journal_mode"), "wal");
    // One (run_id, ...) index per data table: nodes, links, link_samples, flows, collectives, ops,
    // bench_results.
    EXPECT_EQ(r.Int("SELECT count(*) FROM sqlite_schema WHERE type='index' AND name LIKE '%_run'"),
              7);
}

// A pre-versioning file (user_version 0, runs without most columns, flows
// without op_id, no ops table, no index) gains what is missing and keeps its rows.
TEST_F(ResultsDb, MigratesOlderFile)
{
    RawSql("CREATE TABLE runs(run_id INTEGER PRIMARY KEY, label TEXT, status TEXT);"
           "INSERT INTO runs VALUES (7, 'old', 'complete');"
           "CREATE TABLE flows(run_id INTEGER, flow_id INTEGER, bytes INTEGER);"
           "INSERT INTO flows VALUES (7, 1, 4096);");

    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    const int64_t run = db->BeginRun("new", "migration", 1, "{}");
    FlowRecord f;
    f.flowId = 2;
    f.plane = "nvlink";
    f.bytes = 8192;
    f.opId = 3;
    db->AddFlow(f);
    db->EndRun("complete", NanoSeconds(5));
    db->Close();

    Reader r(m_path);
    // Migrated to the current version.
    EXPECT_EQ(r.Int("PRAGMA user_version"), ResultsDatabase::SCHEMA_VERSION);
    // The old run and flow survive unchanged.
    EXPECT_EQ(r.Text("SELECT label || '/' || status FROM runs WHERE run_id=7"), "old/complete");
    EXPECT_EQ(r.Int("SELECT bytes FROM flows WHERE run_id=7 AND flow_id=1"), 4096);
    // Added columns read NULL for old rows.
    EXPECT_EQ(r.Text("SELECT op_id FROM flows WHERE run_id=7"), "NULL");
    // New run ids continue after the old ones (8 > 7), and the new columns hold data.
    EXPECT_GT(run, 7);
    EXPECT_EQ(r.Int("SELECT op_id FROM flows WHERE flow_id=2"), 3);
    EXPECT_TRUE(r.Columns("runs").count("ns3_version"));
    EXPECT_TRUE(r.Columns("ops").count("start_ns")); // missing table created
    // Indexes added: 7 of them.
    EXPECT_EQ(r.Int("SELECT count(*) FROM sqlite_schema WHERE type='index' AND name LIKE '%_run'"),
              7);
}

// A version-1 file (before bench_results) gains the table; its runs stay; a bench row with
// only some figures stores the others as NULL.
TEST_F(ResultsDb, MigratesVersionOneAndStoresBenchRows)
{
    {
        auto db = CreateObject<ResultsDatabase>();
        db->Open(m_path);
        db->BeginRun("v1", "collective-bench", 1, "{}");
        db->EndRun("complete", NanoSeconds(1));
        db->Close();
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(m_path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw,
                           "DROP TABLE bench_results; PRAGMA user_version=1",
                           nullptr,
                           nullptr,
                           nullptr),
              SQLITE_OK);
    sqlite3_close(raw);

    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    db->BeginRun("machine", "bench", 1, "{\"nproc\": 2}");
    BenchRecord b;
    b.benchmark = "link-bench credit chain";
    b.figure = "9.1x";
    b.target = ">= 5x";
    b.ratioToBaseline = 9.1;
    b.pass = 1;
    b.eventsPerHop = 2.16;
    b.packetHops = 500000;
    db->AddBenchResult(b);
    db->EndRun("complete", Seconds(0));
    db->Close();

    Reader r(m_path);
    EXPECT_EQ(r.Int("PRAGMA user_version"), ResultsDatabase::SCHEMA_VERSION);
    EXPECT_EQ(r.Text("SELECT scenario FROM runs WHERE label='v1'"), "collective-bench");
    EXPECT_EQ(r.Text("SELECT figure || ' ' || target || ' ' || pass || ' ' || packet_hops "
                     "FROM bench_results JOIN runs USING (run_id) WHERE scenario='bench'"),
              "9.1x >= 5x 1 500000");
    // Figures not given are NULL, not 0.
    EXPECT_EQ(r.Text("SELECT wall_seconds FROM bench_results"), "NULL");
    EXPECT_EQ(r.Text("SELECT peak_rss_bytes FROM bench_results"), "NULL");
}

namespace
{

// Every table of schema version 2 as that version created it (rate and bandwidth columns
// named rate_bps, algbw_gbps, busbw_gbps), with its indexes.
const char* const kSchemaVersion2 =
    "CREATE TABLE runs(run_id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT, scenario TEXT, "
    "status TEXT, started_at TEXT, wall_seconds REAL, sim_end_ns INTEGER, seed INTEGER, "
    "ns3_version TEXT, module_version TEXT, params TEXT, ended_at TEXT, host TEXT, pid INTEGER);"
    "CREATE TABLE nodes(run_id INTEGER NOT NULL, node_id INTEGER, name TEXT, kind TEXT, "
    "server INTEGER, rank INTEGER);"
    "CREATE TABLE links(run_id INTEGER NOT NULL, link_id INTEGER, plane TEXT, src_node INTEGER, "
    "dst_node INTEGER, rate_bps INTEGER, tx_bytes INTEGER, tx_packets INTEGER, busy_ns INTEGER, "
    "credit_stall_ns INTEGER, peak_queue_bytes INTEGER, drops INTEGER);"
    "CREATE TABLE link_samples(run_id INTEGER NOT NULL, link_id INTEGER, t_ns INTEGER, "
    "tx_bytes INTEGER);"
    "CREATE TABLE flows(run_id INTEGER NOT NULL, flow_id INTEGER, plane TEXT, src_node INTEGER, "
    "dst_node INTEGER, src_rank INTEGER, dst_rank INTEGER, bytes INTEGER, packets INTEGER, "
    "start_ns INTEGER, end_ns INTEGER, op_id INTEGER, rx_bytes INTEGER, lost_packets INTEGER);"
    "CREATE TABLE collectives(run_id INTEGER NOT NULL, coll_id INTEGER, kind TEXT, "
    "algorithm TEXT, group_name TEXT, num_ranks INTEGER, bytes INTEGER, start_ns INTEGER, "
    "end_ns INTEGER, algbw_gbps REAL, busbw_gbps REAL);"
    "CREATE TABLE ops(run_id INTEGER NOT NULL, rank INTEGER, op_id INTEGER, label TEXT, "
    "kind TEXT, start_ns INTEGER, end_ns INTEGER);"
    "CREATE TABLE bench_results(run_id INTEGER NOT NULL, benchmark TEXT, figure TEXT, "
    "target TEXT, ratio_to_baseline REAL, pass INTEGER, wall_seconds REAL, cpu_seconds REAL, "
    "events INTEGER, packet_hops INTEGER, events_per_hop REAL, packet_hops_per_s REAL, "
    "peak_rss_bytes INTEGER, sim_ns INTEGER);"
    "CREATE INDEX nodes_run ON nodes(run_id, node_id);"
    "CREATE INDEX links_run ON links(run_id, link_id);"
    "CREATE INDEX link_samples_run ON link_samples(run_id, link_id, t_ns);"
    "CREATE INDEX flows_run ON flows(run_id, flow_id);"
    "CREATE INDEX collectives_run ON collectives(run_id, kind, bytes);"
    "CREATE INDEX ops_run ON ops(run_id, rank, start_ns);"
    "CREATE INDEX bench_results_run ON bench_results(run_id, benchmark);"
    "PRAGMA user_version=2;";

std::string
DeclaredColumns(const TableDef& table)
{
    std::string names;
    for (const auto& c : table.columns)
    {
        names += (names.empty() ? "" : ",") + c.name;
    }
    return names;
}

} // namespace

// A version-2 file: the rate and bandwidth columns are renamed in place, so its rows read
// under the new names with the same values and every column keeps its position.
TEST_F(ResultsDb, MigratesVersionTwoRenamingUnitColumns)
{
    RawSql(std::string(kSchemaVersion2) +
           "INSERT INTO runs(run_id, label, status) VALUES (4, 'v2', 'complete');"
           "INSERT INTO links VALUES (4, 0, 'nvlink', 0, 1, 200000000000, 10, 1, 5, 0, 0, 0);"
           "INSERT INTO collectives VALUES (4, 0, 'allreduce', 'ring', 'world', 8, 1000000000, "
           "0, 100000000, 10.0, 17.5);");

    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    db->BeginRun("v3", "migration", 1, "{}");
    db->AddLink({0, "infiniband", 2, 3, 400000000000, 20, 2, 10, 0, 0, 0});
    LinkRecord roce{1, "roce", 3, 2, 400000000000, 20, 2, 10, 7, 0, 0};
    roce.pfcPauseNs = 7;
    roce.pfcPauseFrames = 2;
    roce.ecnMarkedPackets = 0;
    db->AddLink(roce);
    db->AddCollective({0, "allgather", "ring", "world", 4, 1073741824, 0, 1000000});
    db->EndRun("complete", NanoSeconds(5));
    db->Close();

    Reader r(m_path);
    EXPECT_EQ(r.Int("PRAGMA user_version"), ResultsDatabase::SCHEMA_VERSION);
    // The old rows under the new names, values unchanged (exact: SQLite copies no value).
    EXPECT_EQ(r.Int("SELECT rate_bit_per_s FROM links WHERE run_id=4"), 200000000000);
    EXPECT_EQ(r.Real("SELECT algbw_gbyte_per_s FROM collectives WHERE run_id=4"), 10.0);
    EXPECT_EQ(r.Real("SELECT busbw_gbyte_per_s FROM collectives WHERE run_id=4"), 17.5);
    // The old names are gone (no duplicate column) and every table has the declared columns in
    // the declared order, so SELECT * of a migrated file lines up with that of a new one.
    EXPECT_FALSE(r.Columns("links").count("rate_bps"));
    EXPECT_FALSE(r.Columns("collectives").count("busbw_gbps"));
    for (const TableDef* t : ResultsSchema())
    {
        EXPECT_EQ(
            r.Text("SELECT group_concat(name, ',') FROM pragma_table_info('" + t->name + "')"),
            DeclaredColumns(*t))
            << t->name;
    }
    // Version 5's PFC/ECN columns: NULL in the old row and for a plane without PFC, the
    // values (0 kept as 0, not NULL) for a RoCE direction.
    EXPECT_EQ(r.Int("SELECT count(*) FROM links WHERE pfc_pause_ns IS NULL AND pfc_pause_frames "
                    "IS NULL AND ecn_marked_packets IS NULL"),
              2);
    EXPECT_EQ(r.Text("SELECT pfc_pause_ns || ',' || pfc_pause_frames || ',' || ecn_marked_packets "
                     "FROM links WHERE plane='roce'"),
              "7,2,0");
    // The new run's rows follow the old ones; busbw = algbw x 3/4 for a 4-rank allgather.
    EXPECT_EQ(r.Int("SELECT count(*) FROM links"), 3);
    EXPECT_DOUBLE_EQ(r.Real("SELECT busbw_gbyte_per_s FROM collectives WHERE run_id<>4"),
                     1073.741824 * 0.75);
    // The index on a table with renamed columns survives the rename.
    EXPECT_EQ(r.Int("SELECT count(*) FROM sqlite_schema WHERE type='index' AND name LIKE '%_run'"),
              7);
    EXPECT_EQ(r.Text("PRAGMA integrity_check"), "ok");
}

// A new file has exactly the declared columns, in order; each column's name carries its unit.
TEST_F(ResultsDb, SchemaIsTheDeclaration)
{
    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    db->Close();
    Reader r(m_path);
    EXPECT_EQ(ResultsSchema().size(), 8u);
    for (const TableDef* t : ResultsSchema())
    {
        EXPECT_EQ(
            r.Text("SELECT group_concat(name, ',') FROM pragma_table_info('" + t->name + "')"),
            DeclaredColumns(*t))
            << t->name;
        for (const auto& c : t->columns)
        {
            EXPECT_TRUE(ColumnNameShowsUnit(c.name, c.unit)) << t->name << "." << c.name;
            // bps / Bps, gbps / GBps: a unit told apart only by letter case.
            std::string lower = c.name;
            std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
            EXPECT_EQ(lower.find("bps"), std::string::npos) << t->name << "." << c.name;
        }
    }
    // The check refuses what version 2 had and unit-less names that look like a unit.
    EXPECT_FALSE(ColumnNameShowsUnit("busbw_gbps", Unit::GBYTE_PER_S));
    EXPECT_FALSE(ColumnNameShowsUnit("rate_bps", Unit::BIT_PER_S));
    EXPECT_FALSE(ColumnNameShowsUnit("rate_gbyte_per_s", Unit::BIT_PER_S));
    EXPECT_FALSE(ColumnNameShowsUnit("delay_ns", Unit::NONE));
    EXPECT_TRUE(ColumnNameShowsUnit("bytes", Unit::BYTES));
    // INSERT and binding order follow the declaration: run_id first where it is bound; the
    // runs key and the columns EndRun sets are not inserted.
    EXPECT_EQ(TableOf<LinkSampleRecord>().Def().InsertSql(),
              "INSERT INTO link_samples(run_id,link_id,t_ns,tx_bytes) VALUES (?,?,?,?)");
    EXPECT_EQ(TableOf<RunRecord>().Def().InsertSql(),
              "INSERT INTO runs(label,scenario,status,started_at,seed,ns3_version,"
              "module_version,params,host,pid) VALUES (?,?,?,?,?,?,?,?,?,?)");
    EXPECT_EQ(TableOf<CollectiveRow>().Def().CreateSql(),
              "CREATE TABLE collectives(run_id INTEGER NOT NULL, coll_id INTEGER, kind TEXT, "
              "algorithm TEXT, group_name TEXT, num_ranks INTEGER, bytes INTEGER, start_ns "
              "INTEGER, end_ns INTEGER, algbw_gbyte_per_s REAL, busbw_gbyte_per_s REAL, in_place "
              "INTEGER, loop_time_ns INTEGER)");
}

// A version-3 file gains collectives.in_place and loop_time_ns at the end: its rows read NULL
// there (not known then), new rows their values, and every other value is untouched.
TEST_F(ResultsDb, MigratesVersionThreeAddingInPlace)
{
    std::string v3 = kSchemaVersion2;
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"rate_bps", "rate_bit_per_s"},
                                                          {"algbw_gbps", "algbw_gbyte_per_s"},
                                                          {"busbw_gbps", "busbw_gbyte_per_s"},
                                                          {"user_version=2", "user_version=3"}})
    {
        v3.replace(v3.find(from), from.size(), to);
    }
    RawSql(v3 + "INSERT INTO runs(run_id, label, status) VALUES (4, 'v3', 'complete');"
                "INSERT INTO collectives VALUES (4, 0, 'allreduce', 'ring', 'world', 8, "
                "1000000000, 0, 100000000, 10.0, 17.5);");

    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    db->BeginRun("v4", "migration", 1, "{}");
    CollectiveRecord out{0, "allreduce", "ring", "world", 8, 1 << 20, 0, 1000};
    out.loopTimeNs = 1000;
    CollectiveRecord in = out;
    in.collId = 1;
    in.inPlace = 1;
    in.loopTimeNs = 1250;
    db->AddCollective(out);
    db->AddCollective(in);
    db->EndRun("complete", NanoSeconds(5));
    db->Close();

    Reader r(m_path);
    EXPECT_EQ(r.Int("PRAGMA user_version"), ResultsDatabase::SCHEMA_VERSION);
    // Version 5 appends flows.fidelity after the FlowMonitor columns.
    EXPECT_EQ(r.Text("SELECT name FROM pragma_table_info('flows') ORDER BY cid DESC LIMIT 1"),
              "fidelity");
    EXPECT_EQ(r.Int("SELECT count(*) FROM collectives WHERE run_id=4 AND in_place IS NULL"), 1);
    EXPECT_EQ(r.Int("SELECT count(*) FROM collectives WHERE run_id=4 AND loop_time_ns IS NULL"), 1);
    EXPECT_EQ(r.Text("SELECT group_concat(loop_time_ns, ',') FROM (SELECT loop_time_ns FROM "
                     "collectives WHERE run_id<>4 ORDER BY coll_id)"),
              "1000,1250");
    EXPECT_EQ(r.Real("SELECT busbw_gbyte_per_s FROM collectives WHERE run_id=4"), 17.5);
    EXPECT_EQ(r.Text("SELECT group_concat(in_place, ',') FROM (SELECT in_place FROM collectives "
                     "WHERE run_id<>4 ORDER BY coll_id)"),
              "0,1");
    EXPECT_EQ(r.Text("SELECT group_concat(name, ',') FROM pragma_table_info('collectives')"),
              DeclaredColumns(TableOf<CollectiveRow>().Def()));
    EXPECT_EQ(r.Text("PRAGMA integrity_check"), "ok");
}

// A file from a newer ai-fabric is refused untouched.
TEST_F(ResultsDb, RejectsNewerSchema)
{
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(m_path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);

    auto db = CreateObject<ResultsDatabase>();
    try
    {
        db->Open(m_path);
        FAIL() << "Open accepted schema version 99";
    }
    catch (const ResultsDatabaseError& e)
    {
        // The message names the file and both versions.
        EXPECT_NE(std::string(e.what()).find(m_path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(db->IsOpen());
    Reader r(m_path);
    // Still version 99 and no table was created in it.
    EXPECT_EQ(r.Int("PRAGMA user_version"), 99);
    EXPECT_EQ(r.Int("SELECT count(*) FROM sqlite_schema"), 0);
}

// A text file is not a database: refused with its name, its bytes unchanged.
TEST_F(ResultsDb, RejectsNonDatabaseFile)
{
    const std::string content = "this is a CSV file, not SQLite\n1,2,3\n";
    std::ofstream(m_path) << content;
    auto db = CreateObject<ResultsDatabase>();
    try
    {
        db->Open(m_path);
        FAIL() << "Open accepted a text file";
    }
    catch (const ResultsDatabaseError& e)
    {
        EXPECT_NE(std::string(e.what()).find(m_path), std::string::npos) << e.what();
    }
    EXPECT_EQ(ReadFile(m_path), content);
}

// A path in a directory that does not exist cannot be created: error names it.
TEST_F(ResultsDb, RejectsUnwritablePath)
{
    const std::string bad = m_dir + "/no/such/dir/results.db";
    auto db = CreateObject<ResultsDatabase>();
    try
    {
        db->Open(bad);
        FAIL() << "Open created " << bad;
    }
    catch (const ResultsDatabaseError& e)
    {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
}
