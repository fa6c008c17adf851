/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// collective-bench on ClusterHelper-built dgx-h100 clusters against the alpha-beta model
// (doc/collectives.md), and the scenario's input checks and database rows.
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/collective-cost-model.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <sqlite3.h>
#include <sstream>
#include <unistd.h>

using namespace ns3;

namespace
{

constexpr uint64_t MiB = 1 << 20;

class CollectiveBenchTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    // A dgx-h100 cluster with its transport and an engine that knows the NVLink domains.
    struct Bench
    {
        explicit Bench(uint32_t servers, const std::string& preset = "dgx-h100")
        {
            ClusterConfig c;
            EXPECT_EQ(c.ApplyPreset(preset), "");
            c.servers = servers;
            cluster = std::make_unique<ClusterHelper>(c);
            // As collective-bench: no CRC values, same wire bytes and timing.
            cluster->SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
            EXPECT_EQ(cluster->TryBuild(), "");
            transport = cluster->InstallTransport("world");
            engine = CreateObject<CollectiveEngine>();
            engine->SetTransport(transport);
            std::map<uint32_t, uint32_t> domains;
            for (uint32_t r = 0; r < cluster->GetNRanks(); ++r)
            {
                domains[r] = cluster->GetDomain(r);
                ranks.push_back(r);
            }
            engine->SetDomainMap(domains);
        }

        CollectiveBenchRow Run(const std::string& kind,
                               const std::string& algorithm,
                               uint64_t bytes) const
        {
            CollectiveBenchOptions o;
            o.collective = kind;
            o.algorithm = algorithm;
            return CollectiveBenchRun(o, ranks, {bytes}, engine).front();
        }

        CollectiveCostModel NvLinkModel() const
        {
            return CollectiveBenchNvLinkModel(*cluster, transport);
        }

        CollectiveCostModel IbModel(uint32_t src, uint32_t dst) const
        {
            return CollectiveBenchIbModel(*cluster, transport, src, dst);
        }

        std::unique_ptr<ClusterHelper> cluster;
        Ptr<GpuTransport> transport;
        Ptr<CollectiveEngine> engine;
        std::vector<uint32_t> ranks;
    };
};

// 1 x dgx-h100, 256 MiB: ring = 2(p−1)α + 2((p−1)/p)nβ with β = 1 / 423.5 GB/s of payload
// (18 x 25 GB/s x 4096/4352) = 1109 us; NVLS moves n up and n down at once, ≈ nβ = 634 us,
// so ring/NVLS ≈ 1.75 and must exceed 1.2.  256 MiB, not 1 GiB: the two runs take ~4x less
// wall (1 GiB ≈ 25 s) and both are in steady state long before 256 MiB (busbw flat test).
TEST_F(CollectiveBenchTest, NvlsBeatsRingOnOneDgxH100)
{
    Bench b(1);
    const uint64_t n = 256 * MiB;
    const CollectiveBenchRow ring = b.Run("allreduce", "ring", n);
    const CollectiveBenchRow nvls = b.Run("allreduce", "nvls", n);
    const double model_us = b.NvLinkModel().RingAllReduce(8, n) * 1e6;
    std::cout << "[bench] 1 x dgx-h100 256 MiB ring_us=" << ring.time_us << " model_us=" << model_us
              << " nvls_us=" << nvls.time_us << " ring/nvls=" << ring.time_us / nvls.time_us
              << "\n";
    EXPECT_EQ(ring.algorithm, "ring");
    EXPECT_EQ(nvls.algorithm, "nvls");
    EXPECT_NEAR(ring.time_us / model_us, 1.0, 0.03);
    EXPECT_GT(ring.time_us / nvls.time_us, 1.2);
}

// 1 x dgx-h100, nvls reduce-scatter and all-gather of n = 64 MiB (nccl-tests' size: the
// whole input, the whole output): the reduce-scatter sends each GPU's whole input up
// once, the all-gather brings the whole output down once, so each takes n / 423.5 GB/s
// = 158.5 us; within 3% (pipeline fill of the first 1 MiB loop).
TEST_F(CollectiveBenchTest, NvlsReduceScatterAndAllGatherAtTheLinkRate)
{
    Bench b(1);
    const uint64_t n = 64 * MiB;
    const double model_us = n / (18 * 25e9 * 256 / 272) * 1e6;
    for (const char* kind : {"reducescatter", "allgather"})
    {
        const CollectiveBenchRow row = b.Run(kind, "nvls", n);
        std::cout << "[bench] 1 x dgx-h100 64 MiB nvls " << kind << "_us=" << row.time_us
                  << " model_us=" << model_us << "\n";
        EXPECT_EQ(row.algorithm, "nvls");
        EXPECT_NEAR(row.time_us / model_us, 1.0, 0.03) << kind;
    }
}

// 2 x dgx-h100, hierarchical allreduce of n = 128 MiB: reduce-scatter of n in each
// 8-GPU NVLink domain, (L−1)α + ((L−1)/L)nβ_nv; allreduce of n/L = 16 MiB between the two
// servers on each of the 8 NDR rails, 2(D−1)α_ib + 2((D−1)/D)(n/L)β_ib = 339 us with
// β_ib = 1 / (400 Gb/s x 4096/4122); allgather back, as the reduce-scatter.  Sum ≈ 893 us,
// tolerance 5% (phases chain per rank; the model ignores their small overlap).  The rails
// carry it: each HCA sends exactly its n/L share (one packet header per 4096 B).
TEST_F(CollectiveBenchTest, HierarchicalAllReduceBoundedByInfinibandRails)
{
    Bench b(2);
    const uint64_t n = 128 * MiB;
    const CollectiveBenchRow h = b.Run("allreduce", "hierarchical", n);
    const CollectiveCostModel nv = b.NvLinkModel();
    const CollectiveCostModel ib = b.IbModel(0, 8);
    const double model_us = CollectiveCostModel::HierarchicalAllReduce(nv, ib, 8, 2, n) * 1e6;
    const double ib_us = ib.RingAllReduce(2, n / 8.0) * 1e6;
    std::cout << "[bench] 2 x dgx-h100 hierarchical 128 MiB sim_us=" << h.time_us
              << " model_us=" << model_us << " of which ib_us=" << ib_us
              << " busbw_gbyte_per_s=" << h.busbw_gbyte_per_s << "\n";
    EXPECT_EQ(h.algorithm, "hierarchical");
    EXPECT_NEAR(h.time_us / model_us, 1.0, 0.05);
    for (uint32_t r = 0; r < 16; ++r)
    {
        // Bursts of MaxBurstPackets 4 x 4096 B, one LRH/BTH/ICRC/VCRC (26 B) in the
        // packet; the wire is charged the other three packets' headers too.
        EXPECT_EQ(b.cluster->GetHcaDevice(r)->GetCounters().txBytes, n / 8 / 16384 * 16410)
            << "rank " << r;
    }
}

// 2 x dgx-h100 alltoall, n = 32 MiB per rank: each rank sends n/16 to each of 15 peers, 7
// on NVLink (7n/16 at 423.5 GB/s = 35 us) and 8 through its HCA: n/2 = 16 MiB at NDR's
// 400 Gb/s x 4096/4122 = 49.7 GB/s of payload = 338 us.  The slower plane's injection limit
// sets the time: α_ib + (n/2)β_ib, tolerance 5% (queued messages hide the other peers' α).
TEST_F(CollectiveBenchTest, AllToAllAcrossServersAtInfinibandInjectionLimit)
{
    Bench b(2);
    const uint64_t n = 32 * MiB;
    const CollectiveBenchRow a = b.Run("alltoall", "auto", n);
    const CollectiveCostModel ib = b.IbModel(0, 9);
    const double model_us = (ib.Alpha() + n / 2.0 * ib.Beta()) * 1e6;
    std::cout << "[bench] 2 x dgx-h100 alltoall 32 MiB sim_us=" << a.time_us
              << " model_us=" << model_us << " busbw_gbyte_per_s=" << a.busbw_gbyte_per_s << "\n";
    EXPECT_EQ(a.algorithm, "direct");
    EXPECT_NEAR(a.time_us / model_us, 1.0, 0.05);
}

// nccl-tests' busbw of ring allreduce is the per-GPU link rate once α is amortised:
// 2((p−1)/p)n / t → 1/β = 423.5 GB/s as n grows; from 256 MiB on, 2(p−1)α is < 0.2% of t,
// so busbw at 256, 384 and 512 MiB must agree within 2% (1 GiB too, but it alone takes
// ~10 s wall) and sit within 3% of 1/β.
TEST_F(CollectiveBenchTest, RingBusBwFlatFrom256MiB)
{
    Bench b(1);
    CollectiveBenchOptions o;
    o.algorithm = "ring";
    const auto rows = CollectiveBenchRun(o, b.ranks, {256 * MiB, 384 * MiB, 512 * MiB}, b.engine);
    double lo = rows.front().busbw_gbyte_per_s;
    double hi = lo;
    for (const auto& r : rows)
    {
        std::cout << "[bench] ring " << r.sizeBytes / MiB
                  << " MiB busbw_gbyte_per_s=" << r.busbw_gbyte_per_s << "\n";
        lo = std::min(lo, r.busbw_gbyte_per_s);
        hi = std::max(hi, r.busbw_gbyte_per_s);
    }
    EXPECT_LT(hi / lo, 1.02);
    EXPECT_NEAR(rows.back().busbw_gbyte_per_s / (1e-9 / b.NvLinkModel().Beta()), 1.0, 0.03);
}

TEST_F(CollectiveBenchTest, ParsesSizesRanksAndSteps)
{
    uint64_t bytes = 0;
    EXPECT_EQ(CollectiveBenchParseSize("8G", bytes), "");
    EXPECT_EQ(bytes, 8ULL << 30);
    EXPECT_EQ(CollectiveBenchParseSize("256k", bytes), "");
    EXPECT_EQ(bytes, 256ULL << 10);
    EXPECT_NE(CollectiveBenchParseSize("1.5M", bytes), "");
    EXPECT_NE(CollectiveBenchParseSize("-8", bytes), "");
    std::vector<uint32_t> ranks;
    EXPECT_EQ(CollectiveBenchParseRanks("0-3,8,10-11", ranks), "");
    EXPECT_EQ(ranks, (std::vector<uint32_t>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_NE(CollectiveBenchParseRanks("3-1", ranks), "");
    EXPECT_NE(CollectiveBenchParseRanks("0,,1", ranks), "");
    // all_reduce_perf -b 8 -e 128 -f 4: 8 32 128; -e 100: 8 32.
    EXPECT_EQ(CollectiveBenchSizes(8, 128, 4), (std::vector<uint64_t>{8, 32, 128}));
    EXPECT_EQ(CollectiveBenchSizes(8, 100, 4), (std::vector<uint64_t>{8, 32}));
}

int64_t
Count(sqlite3* db, const std::string& sql)
{
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    int64_t n = -1;
    if (sqlite3_step(st) == SQLITE_ROW)
    {
        n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return n;
}

// Each bad input: a message naming the problem, exit code 1, one `failed` run row and no
// other row.  Then a good run writes complete rows.
TEST_F(CollectiveBenchTest, RejectsBadInputWithOnlyAFailedRun)
{
    const std::string path =
        testing::TempDir() + "collective-bench-test-" + std::to_string(getpid()) + ".db";
    std::remove(path.c_str());

    struct Case
    {
        std::string preset;
        CollectiveBenchOptions o;
        std::string expected; // in the message
    };

    std::vector<Case> cases;
    auto add = [&](const std::string& preset,
                   const std::string& expected,
                   const std::function<void(CollectiveBenchOptions&)>& edit) {
        Case c{preset, {}, expected};
        c.o.db = path;
        c.o.maxBytes = "1M";
        edit(c.o);
        cases.push_back(c);
    };
    add("dgx-h100", "outside the cluster", [](auto& o) { o.ranks = "0-8"; });
    add("dgx-h100", "appears twice", [](auto& o) { o.ranks = "0,1,1"; });
    add("dgx-a100", "NVSwitch gen3", [](auto& o) { o.algorithm = "nvls"; });
    add("dgx-h100", "unknown collective", [](auto& o) { o.collective = "allscatter"; });
    add("dgx-h100", "unknown algorithm", [](auto& o) { o.algorithm = "butterfly"; });
    add("dgx-h100", "larger than --maxBytes", [](auto& o) { o.minBytes = "2M"; });
    add("dgx-h100", "cannot run alltoall", [](auto& o) {
        o.collective = "alltoall";
        o.algorithm = "ring";
    });
    for (const auto& c : cases)
    {
        SCOPED_TRACE(c.expected);
        ClusterConfig config;
        ASSERT_EQ(config.ApplyPreset(c.preset), "");
        config.servers = 1;
        std::ostringstream out;
        std::ostringstream err;
        EXPECT_EQ(CollectiveBenchMain(config, c.o, out, err), 1);
        EXPECT_NE(err.str().find(c.expected), std::string::npos) << err.str();
        EXPECT_EQ(out.str(), "");
        Simulator::Destroy();
        Names::Clear();
    }

    ClusterConfig config;
    ASSERT_EQ(config.ApplyPreset("dgx-h100"), "");
    config.servers = 1;
    CollectiveBenchOptions good;
    good.db = path;
    good.algorithm = "ring";
    good.minBytes = "1M";
    good.maxBytes = "4M";
    std::ostringstream out;
    std::ostringstream err;
    ASSERT_EQ(CollectiveBenchMain(config, good, out, err), 0) << err.str();
    std::cout << out.str();
    EXPECT_NE(out.str().find("     1048576        262144     float     sum      -1"),
              std::string::npos);
    EXPECT_NE(out.str().find("# Avg bus bandwidth"), std::string::npos);

    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const auto n = static_cast<int64_t>(cases.size());
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM runs WHERE status='failed'"), n);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM runs WHERE status='complete'"), 1);
    const std::string failed = " WHERE run_id IN (SELECT run_id FROM runs WHERE status='failed')";
    for (const char* table : {"nodes", "links", "flows", "collectives"})
    {
        EXPECT_EQ(Count(db, std::string("SELECT COUNT(*) FROM ") + table + failed), 0) << table;
    }
    const std::string complete =
        " WHERE run_id IN (SELECT run_id FROM runs WHERE status='complete')";
    // 1, 2, 4 MiB ring on 8 GPUs: with 512 KiB chunks, 1 loop of 8 pieces x 14 hops at
    // 1 MiB (pieces of 128 KiB), likewise at 2 and 4 MiB: 3 x 112 messages.
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM collectives" + complete + " AND algorithm='ring'"),
              3);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM flows" + complete), 3 * 112);
    EXPECT_GT(Count(db, "SELECT COUNT(*) FROM nodes" + complete), 8);
    EXPECT_GT(Count(db, "SELECT COUNT(*) FROM links" + complete), 0);
    EXPECT_EQ(Count(db,
                    "SELECT COUNT(*) FROM runs WHERE status='complete' AND "
                    "json_extract(params, '$.collective')='allreduce'"),
              1);
    sqlite3_close(db);
    std::remove(path.c_str());
}

} // namespace
