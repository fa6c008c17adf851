/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Distributed runs without MPI: the partition of NVLink domains over processes, the
// single-process answers of DistributedRun, and scripts/merge-db on per-rank databases.
// The runs across processes themselves are checked by scripts/check-mpi.
#include "scratch-dir.h"

#include "ns3/cluster-config.h"
#include "ns3/distributed-run.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

ClusterConfig
Domains(uint32_t servers, const std::string& partition)
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = servers; // one NVLink domain per DGX
    c.partition = partition;
    EXPECT_EQ(c.Validate(), "");
    return c;
}

TEST(DistributedRun, DomainBlocksAreContiguousAndBalanced)
{
    std::vector<uint32_t> system;
    ASSERT_EQ(Domains(8, "domain-blocks").PartitionDomains(3, system), "");
    // floor(d x 3 / 8): blocks of 3, 3 and 2 domains, in domain order
    EXPECT_EQ(system, (std::vector<uint32_t>{0, 0, 0, 1, 1, 1, 2, 2}));
    ASSERT_EQ(Domains(8, "domain-blocks").PartitionDomains(1, system), "");
    EXPECT_EQ(system, std::vector<uint32_t>(8, 0));
}

TEST(DistributedRun, RoundRobinDealsDomains)
{
    std::vector<uint32_t> system;
    ASSERT_EQ(Domains(8, "round-robin").PartitionDomains(3, system), "");
    EXPECT_EQ(system, (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 1}));
}

TEST(DistributedRun, NeverSplitsADomain)
{
    std::vector<uint32_t> system;
    const std::string error = Domains(4, "domain-blocks").PartitionDomains(5, system);
    EXPECT_NE(error.find("never split"), std::string::npos) << error;
    ClusterConfig c = Domains(4, "domain-blocks");
    c.partition = "by-hand";
    EXPECT_NE(c.Validate().find("unknown partition"), std::string::npos);
}

TEST(DistributedRun, SingleProcessWithoutMpirun)
{
    // ctest does not start the test under mpirun: one process, rank 0, plain paths.
    EXPECT_FALSE(DistributedRun::IsEnabled());
    EXPECT_EQ(DistributedRun::GetRank(), 0u);
    EXPECT_EQ(DistributedRun::GetSize(), 1u);
    EXPECT_EQ(DistributedRun::GetDatabasePath("runs.db"), "runs.db");
    Ptr<Node> n = CreateObject<Node>();
    EXPECT_TRUE(DistributedRun::IsLocal(n));
    Simulator::Destroy();
}

class MergeDb : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        m_dir = m_scratch.Path();
        m_db = m_dir + "/run.db";
    }

    /// Rank \p k's file: node k, link k, flow k (flow \p dupFlow instead when >= 0).
    void WriteRank(uint32_t k, int64_t simEndNs, int64_t dupFlow = -1)
    {
        Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
        db->Open(m_db + ".rank" + std::to_string(k));
        db->BeginRun("split", "mpi-incast", 7, "{}");
        NodeRecord node;
        node.nodeId = k;
        node.name = "gpu" + std::to_string(k);
        node.kind = "gpu";
        node.rank = k;
        db->AddNode(node);
        LinkRecord link;
        link.linkId = k;
        link.plane = "infiniband";
        link.txBytes = 1000 * (k + 1);
        db->AddLink(link);
        FlowRecord flow;
        flow.flowId = dupFlow >= 0 ? dupFlow : k;
        flow.plane = "infiniband";
        flow.bytes = 4096;
        flow.endNs = simEndNs;
        db->AddFlow(flow);
        db->EndRun("complete", NanoSeconds(simEndNs));
        db->Close();
    }

    int Merge() const
    {
        const std::string python =
            access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
        const std::string cmd = python + " '" + AI_FABRIC_SOURCE_DIR + "/scripts/merge-db' '" +
                                m_db + "' --remove >/dev/null 2>&1";
        return std::system(cmd.c_str());
    }

    int64_t Int(const std::string& sql) const
    {
        sqlite3* db = nullptr;
        sqlite3_open_v2(m_db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
        sqlite3_stmt* st = nullptr;
        int64_t v = -1;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
        {
            v = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        sqlite3_close_v2(db);
        return v;
    }

    const test_util::ScratchDir m_scratch{"merge-db"};
    std::string m_dir;
    std::string m_db;
};

// Three rank files fold into one run row holding every rank's rows.
TEST_F(MergeDb, FoldsRankFilesIntoOneRun)
{
    WriteRank(0, 500);
    WriteRank(1, 900);
    WriteRank(2, 700);
    ASSERT_EQ(Merge(), 0);
    EXPECT_EQ(Int("SELECT count(*) FROM runs"), 1);
    // the run ends when its last process ends
    EXPECT_EQ(Int("SELECT sim_end_ns FROM runs"), 900);
    EXPECT_EQ(Int("SELECT count(*) FROM runs WHERE status = 'complete' AND label = 'split'"), 1);
    EXPECT_EQ(Int("SELECT count(*) FROM nodes"), 3);
    // link tx_bytes 1000 + 2000 + 3000
    EXPECT_EQ(Int("SELECT sum(tx_bytes) FROM links"), 6000);
    EXPECT_EQ(Int("SELECT count(DISTINCT flow_id) FROM flows"), 3);
    EXPECT_EQ(Int("SELECT count(*) FROM flows WHERE run_id != (SELECT run_id FROM runs)"), 0);
    EXPECT_EQ(Int("PRAGMA user_version"), ResultsDatabase::SCHEMA_VERSION);

    // --remove deleted the rank files
    struct stat st
    {
    };

    EXPECT_NE(stat((m_db + ".rank0").c_str(), &st), 0);
    // a second distributed run (2 processes) appends a second run row
    WriteRank(0, 100);
    WriteRank(1, 200);
    ASSERT_EQ(Merge(), 0);
    EXPECT_EQ(Int("SELECT count(*) FROM runs"), 2);
    EXPECT_EQ(Int("SELECT count(*) FROM flows"), 5);
}

// A row key written by two ranks is an error, and the merge leaves no database behind.
TEST_F(MergeDb, RefusesRowsWrittenTwice)
{
    WriteRank(0, 500);
    WriteRank(1, 500, 0); // flow 0 again
    EXPECT_NE(Merge(), 0);

    struct stat st
    {
    };

    EXPECT_NE(stat(m_db.c_str(), &st), 0) << "partial merged database left behind";
}

// A missing rank file (rank 1 of 0..2) is an error.
TEST_F(MergeDb, RefusesMissingRank)
{
    WriteRank(0, 500);
    WriteRank(2, 500);
    EXPECT_NE(Merge(), 0);
}

} // namespace
