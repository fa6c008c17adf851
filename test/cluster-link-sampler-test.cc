/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// ClusterHelper::InstallLinkSampler: link_samples use the link ids of the links table, and
// the last sample of every direction equals its end-of-run tx_bytes (the sampler takes one
// when only observers are left), so per-interval utilisation integrates to the links row.
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/trace-transformer-gen.h"
#include "ns3/workload-study.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <string>
#include <unistd.h>

using namespace ns3;

namespace
{

int64_t
Scalar(sqlite3* conn, const std::string& sql)
{
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(conn, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    int64_t v = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW)
    {
        v = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    return v;
}

TEST(ClusterLinkSampler, SamplesEveryLinkWithTheLinksTableIds)
{
    const test_util::ScratchDir scratch("link-sampler");
    const std::string path = scratch.File("results.db");
    ClusterConfig config;
    ASSERT_EQ(config.ApplyPreset("dgx-h100"), "");
    config.servers = 2;
    config.gpusPerServer = 4;
    // The DP pair's gradient allreduce on the tree, as NCCL_ALGO pins it: the tuner (NCCL's
    // formula) takes the ring there, whose one GPU per node posts every channel's steps
    // through its one proxy, so the NIC would idle between them and never read line rate.
    config.nccl.algo = "allreduce:tree";
    TransformerTraceConfig model;
    model.layers = 1;
    model.hidden = 512;
    model.seq = 512;
    model.vocab = 1024;
    model.microBatch = 2;
    model.tp = 4;
    model.dp = 2;
    model.globalBatch = model.microBatch * model.dp;
    Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
    db->Open(path);
    uint64_t samples = 0;
    uint64_t simEndNs = 0;
    double ibPeak = 0;
    {
        ClusterHelper cluster(config);
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        ASSERT_EQ(cluster.TryBuild(), "");
        db->BeginRun("sampler", "cluster-link-sampler-test", 1, "{}");
        Ptr<LinkSampler> sampler = cluster.InstallLinkSampler(db, MicroSeconds(5));
        const StudyResult r =
            RunWorkloadStudy(cluster, TransformerTraceGenerator(model).GenerateTrace(), "opt*", db);
        ASSERT_TRUE(r.complete) << r.stuckReport;
        samples = sampler->GetSampleCount();
        ibPeak = sampler->GetPeakUtilisation("infiniband");
        simEndNs = r.simEndNs;
        db->EndRun("complete", NanoSeconds(r.simEndNs));
    }
    db->Close();
    Simulator::Destroy();
    Config::Reset();
    Names::Clear();

    sqlite3* conn = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &conn), SQLITE_OK);
    const int64_t links = Scalar(conn, "SELECT count(*) FROM links");
    EXPECT_GT(links, 0);
    EXPECT_EQ(Scalar(conn, "SELECT count(DISTINCT link_id) FROM link_samples"), links);
    EXPECT_EQ(Scalar(conn, "SELECT count(*) FROM link_samples"), static_cast<int64_t>(samples));
    // One sample per link every 5 us of the run (the first at 0, the last at the end).
    EXPECT_GE(static_cast<int64_t>(samples), links * static_cast<int64_t>(simEndNs / 5000 + 1));
    EXPECT_EQ(Scalar(conn,
                     "SELECT count(*) FROM link_samples s LEFT JOIN links l "
                     "ON l.run_id = s.run_id AND l.link_id = s.link_id WHERE l.link_id IS NULL"),
              0);
    // Exactly equal: the last sample and the links row read the same counter at the same time.
    EXPECT_EQ(Scalar(conn,
                     "SELECT count(*) FROM links l JOIN (SELECT link_id, max(tx_bytes) AS m "
                     "FROM link_samples GROUP BY link_id) s USING (link_id) WHERE s.m != "
                     "l.tx_bytes"),
              0);
    EXPECT_GT(Scalar(conn, "SELECT count(*) FROM links WHERE tx_bytes > 0 AND plane = 'nvlink'"),
              0);
    EXPECT_GT(
        Scalar(conn, "SELECT count(*) FROM links WHERE tx_bytes > 0 AND plane = 'infiniband'"),
        0);
    // The ~1.8 MB gradient allreduce of each DP pair keeps an NDR link (50 GB/s) busy for
    // ~36 us, several 5 us intervals: the peak is line rate, above it by at most one
    // 16 KiB burst (MaxBurstPackets 4) counted early (330 ns of 5 us, 6.6 %).
    EXPECT_GT(ibPeak, 0.9);
    EXPECT_LT(ibPeak, 1.067);
    sqlite3_close(conn);
}

} // namespace
