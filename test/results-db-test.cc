/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
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

namespace
{

// Writes \p runs complete runs of one flow and one op each; used by the
// concurrency test in child processes (returns a process exit code).
int
WriteRuns(const std::string& path, int runs, int writer)
{
    try
    {
        auto db = CreateObject<ResultsDatabase>();
        db->Open(path);
        for (int i = 0; i < runs; ++i)
        {
            db->BeginRun("w" + std::to_string(writer), "concurrency", i, "{}");
            FlowRecord f;
            f.flowId = i;
            f.plane = "infiniband";
            f.bytes = 4096;
            f.packets = 1;
            f.endNs = 100;
            db->AddFlow(f);
            db->AddOp({writer, i, "op", "compute", 0, 100});
            db->EndRun("complete", NanoSeconds(100));
        }
        db->Close();
        return 0;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "writer %d: %s\n", writer, e.what());
        return 1;
    }
}

// A small run with every table filled; figures chosen so that the queries'
// results can be worked out by hand (see QueriesRunOnSampleRun).
void
WriteSampleRun(const std::string& path)
{
    auto db = CreateObject<ResultsDatabase>();
    db->Open(path);
    db->BeginRun("plot", "plot", 1, "{}");
    const char* planes[] = {"nvlink", "infiniband", "ethernet"};
    for (int l = 0; l < 3; ++l)
    {
        db->AddLink({l, planes[l], 0, 1, 100000000000, 1000000, 1000, 0, 0, 0, 0});
        for (int t = 0; t <= 10; ++t)
        {
            db->AddLinkSample(l, t * 10000, t * 40000 * (l + 1));
        }
    }
    for (int i = 0; i < 50; ++i)
    {
        db->AddFlow({i, planes[i % 3], 0, 1, 0, 1, 4096 * (i + 1), i + 1, i * 100, i * 250 + 500});
    }
    for (int s = 0; s < 6; ++s)
    {
        const int64_t bytes = int64_t(1024) << (2 * s);
        db->AddCollective({s, "allreduce", "ring", "world", 8, bytes, 0, 1000 + bytes / 10});
    }
    for (int rank = 0; rank < 4; ++rank)
    {
        db->AddOp({rank, 0, "fwd", "compute", 0, 4000});
        db->AddOp({rank, 1, "ar", "collective", 3000, 6000 + rank * 100});
    }
    db->EndRun("complete", NanoSeconds(100000));
    db->Close();
}

// Runs the one statement of a scenarios/queries file; rows as column -> text.
std::vector<std::map<std::string, std::string>>
RunQueryFile(const std::string& dbPath, const std::string& name)
{
    const std::string sql =
        ReadFile(std::string(AI_FABRIC_SOURCE_DIR) + "/scenarios/queries/" + name);
    std::vector<std::map<std::string, std::string>> rows;
    sqlite3* db = nullptr;
    sqlite3_open_v2(dbPath.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    {
        ADD_FAILURE() << name << ": " << sqlite3_errmsg(db);
    }
    while (stmt && sqlite3_step(stmt) == SQLITE_ROW)
    {
        std::map<std::string, std::string> row;
        for (int c = 0; c < sqlite3_column_count(stmt); ++c)
        {
            const unsigned char* t = sqlite3_column_text(stmt, c);
            row[sqlite3_column_name(stmt, c)] = t ? reinterpret_cast<const char*>(t) : "NULL";
        }
        rows.push_back(row);
    }
    sqlite3_finalize(stmt);
    sqlite3_close_v2(db);
    return rows;
}

} // namespace

// nccl-tests PERFORMANCE.md factors for n = 8.
TEST(CollectiveBandwidth, BusBwFactors)
{
    // allreduce: 2(n-1)/n = 14/8 = 1.75
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("allreduce", 8), 1.75);
    // reducescatter, allgather, alltoall: (n-1)/n = 7/8 = 0.875; spelling-insensitive
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("reduce_scatter", 8), 0.875);
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("AllGather", 8), 0.875);
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("alltoall", 8), 0.875);
    // broadcast, reduce, sendrecv: 1 whatever n
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("broadcast", 8), 1.0);
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("reduce", 3), 1.0);
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("sendrecv", 2), 1.0);
    // one rank moves nothing over the bus: 2(1-1)/1 = 0
    EXPECT_DOUBLE_EQ(CollectiveBusBwFactor("allreduce", 1), 0.0);
    EXPECT_THROW(CollectiveBusBwFactor("gossip", 8), std::invalid_argument);
    EXPECT_THROW(CollectiveBusBwFactor("allreduce", 0), std::invalid_argument);
}

TEST(CollectiveBandwidth, AlgBwAndBusBw)
{
    // 1e9 bytes in 0.1 s = 10 GB/s algbw; allreduce on 8 ranks: x 1.75 = 17.5 GB/s.
    EXPECT_DOUBLE_EQ(CollectiveAlgBw_gbyte_per_s(1000000000, 100000000), 10.0);
    EXPECT_DOUBLE_EQ(CollectiveBusBw_gbyte_per_s("allreduce", 8, 1000000000, 100000000), 17.5);
    // 1 GiB allgather on 4 ranks in 1 ms: 1073741824/1e6 = 1073.741824 GB/s x 3/4.
    EXPECT_DOUBLE_EQ(CollectiveBusBw_gbyte_per_s("allgather", 4, 1073741824, 1000000),
                     1073.741824 * 0.75);
    // zero duration gives 0, not infinity.
    EXPECT_DOUBLE_EQ(CollectiveAlgBw_gbyte_per_s(1, 0), 0.0);
}

// Every table's row comes back as written, NULLs included.
TEST_F(ResultsDb, RowsRoundTrip)
{
    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    RunParameters params;
    params.Set("preset", "dgx-h100");
    params.Set("gpus", 16);
    params.Set("rate_gbit_per_s", 400.5);
    params.Set("trace", std::string("a \"quoted\"\\path\nline\x01"));
    params.Set("ecn", true);
    params.AddGlobalValues();
    const int64_t run = db->BeginRun("rt", "round-trip", 42, params.ToJson());
    db->AddNode({3, "gpu3", "gpu", 0, 3});
    db->AddNode({9, "sw0", "nvswitch", 0, -1});
    db->AddLink({5, "nvlink", 3, 9, 200000000000, 1 << 20, 256, 5000, 7, 65536, 0});
    db->AddLinkSample(5, 1000, 4096);
    FlowRecord f;
    f.flowId = 11;
    f.plane = "infiniband";
    f.srcNode = 3;
    f.dstNode = 4;
    f.srcRank = 0;
    f.bytes = 1 << 20;
    f.packets = 256;
    f.startNs = 10;
    f.endNs = 5010;
    db->AddFlow(f);
    db->AddCollective({1, "allreduce", "ring", "world", 8, 1000000000, 0, 100000000});
    db->AddOp({0, 1, "fwd", "compute", 0, 1500});
    db->EndRun("complete", NanoSeconds(123456), 2.5);

    Reader r(m_path);
    const std::string where = " WHERE run_id=" + std::to_string(run);
    EXPECT_EQ(r.Text("SELECT label||'|'||scenario||'|'||status||'|'||seed FROM runs" + where),
              "rt|round-trip|complete|42");
    EXPECT_EQ(r.Int("SELECT sim_end_ns FROM runs" + where), 123456);
    EXPECT_DOUBLE_EQ(r.Real("SELECT wall_seconds FROM runs" + where), 2.5);
    // versions come from the build: module 0.1.x, ns-3 3.x
    EXPECT_EQ(r.Text("SELECT module_version FROM runs" + where),
              ResultsDatabase::GetModuleVersion());
    EXPECT_EQ(r.Text("SELECT ns3_version FROM runs" + where), ResultsDatabase::GetNs3Version());
    EXPECT_NE(ResultsDatabase::GetNs3Version(), "unknown");
    // params is valid JSON and SQLite's JSON functions read the escaped string back exactly.
    EXPECT_EQ(r.Int("SELECT json_valid(params) FROM runs" + where), 1);
    EXPECT_EQ(r.Text("SELECT json_extract(params, '$.trace') FROM runs" + where),
              "a \"quoted\"\\path\nline\x01");
    EXPECT_EQ(r.Int("SELECT json_extract(params, '$.gpus') FROM runs" + where), 16);
    EXPECT_EQ(r.Text("SELECT json_extract(params, '$.preset') FROM runs" + where), "dgx-h100");
    // ns-3's GlobalValues ride along: RngSeed is 1 unless changed
    EXPECT_EQ(r.Text("SELECT json_extract(params, '$.\"global.RngSeed\"') FROM runs" + where), "1");
    // a status other than complete/failed is refused (the run stays open)
    db->BeginRun("bad", "round-trip", 1, "{}");
    EXPECT_THROW(db->EndRun("done", NanoSeconds(0)), ResultsDatabaseError);
    db->EndRun("failed", NanoSeconds(0));
    // rank NULL for a switch, 3 for gpu3
    EXPECT_EQ(r.Text("SELECT rank FROM nodes WHERE node_id=9 AND run_id=" + std::to_string(run)),
              "NULL");
    EXPECT_EQ(r.Int("SELECT rank FROM nodes WHERE node_id=3 AND run_id=" + std::to_string(run)), 3);
    EXPECT_EQ(r.Int("SELECT rate_bit_per_s FROM links" + where), 200000000000);
    EXPECT_EQ(r.Int("SELECT tx_bytes + credit_stall_ns FROM links" + where), (1 << 20) + 7);
    EXPECT_EQ(r.Int("SELECT tx_bytes FROM link_samples" + where + " AND t_ns=1000"), 4096);
    // dst_rank and op_id not given: NULL; src_rank 0 is a real rank, not NULL
    EXPECT_EQ(r.Text("SELECT coalesce(dst_rank,'NULL')||','||coalesce(op_id,'NULL')||','||src_rank "
                     "FROM flows" +
                     where),
              "NULL,NULL,0");
    EXPECT_EQ(r.Int("SELECT end_ns - start_ns FROM flows" + where), 5000);
    // 1e9 bytes in 0.1 s: algbw 10 GB/s, busbw 10 x 1.75 = 17.5 GB/s
    EXPECT_DOUBLE_EQ(r.Real("SELECT algbw_gbyte_per_s FROM collectives" + where), 10.0);
    EXPECT_DOUBLE_EQ(r.Real("SELECT busbw_gbyte_per_s FROM collectives" + where), 17.5);
    EXPECT_EQ(r.Text("SELECT label||','||kind||','||end_ns FROM ops" + where), "fwd,compute,1500");
}

// Dropping the database without EndRun keeps the rows and marks the run failed.
TEST_F(ResultsDb, CloseWithoutEndRunMarksFailed)
{
    int64_t run;
    {
        auto db = CreateObject<ResultsDatabase>();
        db->Open(m_path);
        run = db->BeginRun("x", "unfinished", 1, "{}");
        db->AddOp({0, 1, "a", "compute", 0, 10});
        db->Close();
    }
    Reader r(m_path);
    EXPECT_EQ(r.Text("SELECT status FROM runs WHERE run_id=" + std::to_string(run)), "failed");
    // the one op buffered before Close was written
    EXPECT_EQ(r.Int("SELECT count(*) FROM ops WHERE run_id=" + std::to_string(run)), 1);
}

// Two processes, each with its own connection, each writing 10,000 complete
// runs at the same time: 20,000 runs, 20,000 flows, 20,000 ops, none lost.
TEST_F(ResultsDb, TwoProcessesLoseNothing)
{
    {
        // Create the schema first so that both writers only append.
        auto db = CreateObject<ResultsDatabase>();
        db->Open(m_path);
    }
    const int runs = 10000;
    pid_t pids[2];
    for (int w = 0; w < 2; ++w)
    {
        pids[w] = fork();
        ASSERT_GE(pids[w], 0);
        if (pids[w] == 0)
        {
            _exit(WriteRuns(m_path, runs, w));
        }
    }
    for (pid_t pid : pids)
    {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        // each writer exits 0: no SQLITE_BUSY escaped the retry logic
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    }
    Reader r(m_path);
    EXPECT_EQ(r.Int("SELECT count(*) FROM runs WHERE status='complete'"), 2 * runs);
    EXPECT_EQ(r.Int("SELECT count(*) FROM flows"), 2 * runs);
    EXPECT_EQ(r.Int("SELECT count(*) FROM ops"), 2 * runs);
    // each writer's runs are all there: 10,000 distinct seeds per label
    EXPECT_EQ(r.Int("SELECT count(DISTINCT seed) FROM runs WHERE label='w0'"), runs);
    EXPECT_EQ(r.Int("SELECT count(DISTINCT seed) FROM runs WHERE label='w1'"), runs);
    EXPECT_EQ(r.Text("PRAGMA integrity_check"), "ok");
}

// SIGKILL while a run is writing batches: the file stays sound, the earlier run
// is complete with all its rows, the killed run is still 'running'.
TEST_F(ResultsDb, KilledRunLeavesSoundFile)
{
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
    {
        close(ready[0]);
        try
        {
            auto db = CreateObject<ResultsDatabase>();
            db->SetAttribute("BatchRows", UintegerValue(500)); // many commits to interrupt
            db->Open(m_path);
            db->BeginRun("before", "kill", 1, "{}");
            for (int i = 0; i < 1000; ++i)
            {
                db->AddFlow({i, "nvlink", 0, 1, 0, 1, 4096, 1, 0, 10});
            }
            db->EndRun("complete", NanoSeconds(10));
            db->BeginRun("killed", "kill", 2, "{}");
            for (int64_t i = 0;; ++i)
            {
                db->AddFlow({i, "nvlink", 0, 1, 0, 1, 4096, 1, 0, 10});
                if (i == 5000)
                {
                    [[maybe_unused]] auto n = write(ready[1], "r", 1);
                }
            }
        }
        catch (...)
        {
        }
        _exit(3);
    }
    close(ready[1]);
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // mid-batch, most likely
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    // it died of SIGKILL, not by finishing
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    Reader r(m_path);
    EXPECT_EQ(r.Text("PRAGMA integrity_check"), "ok");
    // the first run: complete with exactly the 1000 flows it wrote
    EXPECT_EQ(r.Text("SELECT status FROM runs WHERE label='before'"), "complete");
    EXPECT_EQ(r.Int("SELECT count(*) FROM flows f JOIN runs USING(run_id) WHERE label='before'"),
              1000);
    // the killed run stays 'running', with whole batches of 500 only (>= 5000 flushed)
    EXPECT_EQ(r.Text("SELECT status FROM runs WHERE label='killed'"), "running");
    const int64_t killedRows =
        r.Int("SELECT count(*) FROM flows f JOIN runs USING(run_id) WHERE label='killed'");
    EXPECT_GE(killedRows, 5000);
    EXPECT_EQ(killedRows % 500, 0);
    // and the file takes new runs
    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    db->BeginRun("after", "kill", 3, "{}");
    db->EndRun("complete", NanoSeconds(0));
}

// The sampler writes one row per link per Interval and, with the progress
// reporter also ticking, neither keeps Simulator::Run from returning.
TEST_F(ResultsDb, LinkSamplerStopsWhenIdle)
{
    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    const int64_t run = db->BeginRun("s", "sampler", 1, "{}");
    auto sampler = CreateObject<LinkSampler>();
    sampler->SetAttribute("Interval", TimeValue(MicroSeconds(10)));
    // 1 byte per ns on link 0, constant 7 on link 1
    sampler->AddLink(0, MakeCallback(+[]() -> uint64_t {
                         return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
                     }));
    sampler->AddLink(1, MakeCallback(+[]() -> uint64_t { return 7; }));
    std::ostringstream progressOut;
    auto progress = CreateObject<ProgressReporter>();
    progress->SetAttribute("Force", BooleanValue(true));
    progress->SetAttribute("WallInterval", TimeValue(MilliSeconds(1)));
    progress->SetStream(&progressOut);
    Simulator::Schedule(
        MicroSeconds(95),
        +[]() {});
    sampler->Start(db);
    progress->Start(MicroSeconds(95));
    Simulator::Run(); // returns: the observers stop once only they are left
    progress->Stop();
    db->EndRun("complete", Simulator::Now());
    Simulator::Destroy();

    Reader r(m_path);
    const std::string where = " WHERE run_id=" + std::to_string(run);
    // samples at 0, 10, ..., 100 us: 11 per link (the 100 us one sees the idle queue)
    EXPECT_EQ(r.Int("SELECT count(*) FROM link_samples" + where + " AND link_id=0"), 11);
    EXPECT_EQ(r.Int("SELECT count(*) FROM link_samples" + where + " AND link_id=1"), 11);
    // link 0's counter equals the sample time in ns
    EXPECT_EQ(r.Int("SELECT count(*) FROM link_samples" + where +
                    " AND link_id=0 AND "
                    "tx_bytes=t_ns"),
              11);
    EXPECT_EQ(r.Int("SELECT max(t_ns) FROM link_samples" + where), 100000);
    // the final line is always printed by Stop
    EXPECT_GE(progress->GetReportCount(), 1u);
    EXPECT_NE(progressOut.str().find("events/s"), std::string::npos);
}

// scripts/plot draws four non-empty PNGs from a small database.
TEST_F(ResultsDb, PlotScriptWritesPngs)
{
    const std::string python =
        access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    if (std::system((python + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) != 0)
    {
        GTEST_SKIP() << python << " has no matplotlib (apt-get install python3-matplotlib)";
    }
    WriteSampleRun(m_path);

    const std::string out = m_dir + "/plots";
    const std::string cmd = python + " '" + AI_FABRIC_SOURCE_DIR + "/scripts/plot' '" + m_path +
                            "' --out '" + out + "'";
    // exit status 0
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    for (const char* png : {"link-utilisation.png",
                            "flow-completion-cdf.png",
                            "collective-busbw.png",
                            "rank-timeline.png"})
    {
        struct stat st
        {
        };

        // each PNG exists and holds an image (a blank 1x1 PNG is ~70 bytes; a plot is kBs)
        ASSERT_EQ(stat((out + "/" + png).c_str(), &st), 0) << png;
        EXPECT_GT(st.st_size, 1000) << png;
    }
}

// Every query of scenarios/queries runs on the sample run and gives the
// figures worked out by hand from WriteSampleRun.
TEST_F(ResultsDb, QueriesRunOnSampleRun)
{
    WriteSampleRun(m_path);

    auto planes = RunQueryFile(m_path, "plane-traffic.sql");
    // one row per plane: nvlink, infiniband, ethernet
    ASSERT_EQ(planes.size(), 3u);
    for (const auto& row : planes)
    {
        // 1e6 bytes x 8 over 100 Gb/s x 100 us = 8e6 / 1e7 = 0.8
        EXPECT_DOUBLE_EQ(std::stod(row.at("mean_util")), 0.8) << row.at("plane");
        if (row.at("plane") == "infiniband")
        {
            // samples grow 2 x 40000 bytes per 10 us: 640 kbit / 1 Mbit = 0.64
            EXPECT_DOUBLE_EQ(std::stod(row.at("peak_util")), 0.64);
        }
    }

    auto slow = RunQueryFile(m_path, "slowest-flows.sql");
    // 50 flows, top 20; the slowest is flow 49: (49 x 250 + 500) - 49 x 100 = 7850 ns
    ASSERT_EQ(slow.size(), 20u);
    EXPECT_EQ(slow.front().at("flow_id"), "49");
    EXPECT_EQ(slow.front().at("fct_ns"), "7850");

    auto busbw = RunQueryFile(m_path, "collective-busbw.sql");
    // six sizes of allreduce, 1 KiB .. 1 MiB in steps of 4x
    ASSERT_EQ(busbw.size(), 6u);
    // 1 KiB in 1000 + 102 ns: 1024/1102 GB/s x 1.75 = 1.626 GB/s
    EXPECT_NEAR(std::stod(busbw.front().at("busbw_gbyte_per_s")), 1024.0 / 1102 * 1.75, 1e-3);

    auto timeline = RunQueryFile(m_path, "rank-timeline.sql");
    // 4 ranks x 2 ops
    ASSERT_EQ(timeline.size(), 8u);

    auto breakdown = RunQueryFile(m_path, "iteration-breakdown.sql");
    ASSERT_EQ(breakdown.size(), 4u);
    // rank 0: compute 0-4000, collective 3000-6000: compute 4000 ns, hidden
    // communication 1000 ns (3000-4000), exposed 2000 ns (4000-6000), no idle.
    EXPECT_EQ(breakdown[0].at("span_ns"), "6000");
    EXPECT_EQ(breakdown[0].at("compute_ns"), "4000");
    EXPECT_EQ(breakdown[0].at("overlapped_comm_ns"), "1000");
    EXPECT_EQ(breakdown[0].at("exposed_comm_ns"), "2000");
    EXPECT_EQ(breakdown[0].at("idle_ns"), "0");
    // rank 3's collective ends 300 ns later: exposed 2300 ns
    EXPECT_EQ(breakdown[3].at("exposed_comm_ns"), "2300");
}

// FlowMonitor's IP flows become 'ethernet' flows rows with node ids and ranks.
TEST_F(ResultsDb, FlowMonitorImport)
{
    NodeContainer nodes;
    nodes.Create(2);
    SimpleNetDeviceHelper link;
    NetDeviceContainer devices = link.Install(nodes);
    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifaces = addresses.Assign(devices);
    FlowMonitorHelper flowHelper;
    Ptr<FlowMonitor> monitor = flowHelper.InstallAll();

    Ptr<Socket> sink = Socket::CreateSocket(nodes.Get(1), UdpSocketFactory::GetTypeId());
    sink->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
    Ptr<Socket> source = Socket::CreateSocket(nodes.Get(0), UdpSocketFactory::GetTypeId());
    source->Connect(InetSocketAddress(ifaces.GetAddress(1), 9));
    // 5 ms apart: ARP's request jitter (up to 10 ms) then holds at most 3 packets,
    // which its pending queue (3) keeps, so all 10 arrive.
    for (int i = 0; i < 10; ++i)
    {
        Simulator::Schedule(MilliSeconds(1 + 5 * i),
                            [source]() { source->Send(Create<Packet>(1000)); });
    }
    Simulator::Stop(MilliSeconds(100));
    Simulator::Run();

    auto db = CreateObject<ResultsDatabase>();
    db->Open(m_path);
    const int64_t run = db->BeginRun("fm", "flow-monitor", 1, "{}");
    const auto rows =
        FlowMonitorImporter::Import(*db,
                                    monitor,
                                    DynamicCast<Ipv4FlowClassifier>(flowHelper.GetClassifier()),
                                    {{1, 5}},
                                    1000);
    db->EndRun("complete", Simulator::Now());
    Simulator::Destroy();

    // one UDP flow, node 0 -> node 1
    EXPECT_EQ(rows, 1u);
    Reader r(m_path);
    const std::string where = " FROM flows WHERE run_id=" + std::to_string(run);
    // id offset 1000 + FlowMonitor's first id 1; IP flows are the ethernet plane
    EXPECT_EQ(r.Text("SELECT flow_id||','||plane||','||src_node||','||dst_node" + where),
              "1001,ethernet,0,1");
    // node 0 has no rank (NULL); node 1 was given rank 5
    EXPECT_EQ(r.Text("SELECT coalesce(src_rank,'NULL')||','||dst_rank" + where), "NULL,5");
    // 10 packets of 1000 B payload + 8 B UDP + 20 B IPv4 = 10,280 B sent and received, none lost
    EXPECT_EQ(r.Text("SELECT packets||','||bytes||','||rx_bytes||','||lost_packets" + where),
              "10,10280,10280,0");
    // first sent at 1 ms (start_ns is the IP send time); the last is sent at 46 ms
    EXPECT_EQ(r.Int("SELECT start_ns" + where), 1000000);
    EXPECT_GE(r.Int("SELECT end_ns" + where), 46000000);
}
