/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// collective-bench on ClusterHelper-built dgx-h100 clusters against the alpha-beta model
// (doc/collectives.md), and the scenario's input checks and database rows.
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/collective-cost-model.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <gtest/gtest.h>
#include <iostream>
#include <iterator>
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
            // The link physics against its alpha-beta model: no GPU/NCCL endpoint costs
            // (those are nccl-endpoint-test's).
            c.endpoint = "ideal";
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

        // The out-of-place pass alone: the model checks need one run per size.
        CollectiveBenchPass Run(const std::string& kind,
                                const std::string& algorithm,
                                uint64_t bytes) const
        {
            CollectiveBenchOptions o;
            o.collective = kind;
            o.algorithm = algorithm;
            o.inPlace = "out";
            return CollectiveBenchRun(o, ranks, {bytes}, engine).front().outOfPlace;
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
    const CollectiveBenchPass ring = b.Run("allreduce", "ring", n);
    const CollectiveBenchPass nvls = b.Run("allreduce", "nvls", n);
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
        const CollectiveBenchPass row = b.Run(kind, "nvls", n);
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
    const CollectiveBenchPass h = b.Run("allreduce", "hierarchical", n);
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

// The same with HierarchicalPipeline: slices of one NVLink ring loop (8 x 128 KiB = 1 MiB,
// HierarchicalChunkBytes, 128 slices).  Reduce-scatter and all-gather share the GPUs' NVLink ports,
// 2 x 277 us; the rails' allreduce of n/8 (339 us, plus one slice of each NVLink phase before and
// after it) runs beside them, so the NVLink phases bound the time: max(T_nvlink, T_ib +
// T_nvlink(n/K)) ≈ 554 us (CollectiveCostModel::PipelinedHierarchicalAllReduce), within 3%; the
// phases' sum (894 us, the unpipelined schedule) is over 25% longer.
TEST_F(CollectiveBenchTest, PipelinedHierarchicalAtTheMaxOfItsPhases)
{
    Bench b(2);
    b.engine->SetAttribute("HierarchicalPipeline", BooleanValue(true));
    const uint64_t n = 128 * MiB;
    const CollectiveBenchPass h = b.Run("allreduce", "hierarchical", n);
    const CollectiveCostModel nv = b.NvLinkModel();
    const CollectiveCostModel ib = b.IbModel(0, 8);
    const double slice = 8.0 * CollectiveBuild::HierarchicalChunkBytes(n, 8, 128 * 1024);
    const double model_us =
        CollectiveCostModel::PipelinedHierarchicalAllReduce(nv, ib, 8, 2, n, slice) * 1e6;
    const double sum_us = CollectiveCostModel::HierarchicalAllReduce(nv, ib, 8, 2, n) * 1e6;
    std::cout << "[bench] 2 x dgx-h100 pipelined hierarchical 128 MiB sim_us=" << h.time_us
              << " model_us=" << model_us << " unpipelined_model_us=" << sum_us
              << " busbw_gbyte_per_s=" << h.busbw_gbyte_per_s << "\n";
    EXPECT_EQ(h.algorithm, "hierarchical");
    EXPECT_NEAR(h.time_us / model_us, 1.0, 0.03);
    EXPECT_LT(h.time_us, 0.8 * sum_us);
}

// 2 x dgx-h100, forced ring allreduce of 256 MiB over the 16 GPUs with RingsAcrossDomains:
// channel c crosses between the servers from local c − 1 and back from local c, so with 8
// (or 16) channels each HCA sends the crossing of 1/8 of the buffer: every ring hop carries
// 2(15/16)(n/C), the busiest HCA ceil(C/8) of them at β_ib and the NVLink ports the others
// at β_nv (CollectiveCostModel::RingAllReduceAcrossDomains), 3%.  busbw then is 8 HCAs'
// worth, 8 / β_ib = 398 GB/s (3%), where one channel gets one HCA's (≈ 49.7 GB/s).
TEST_F(CollectiveBenchTest, RingChannelsCrossOnEveryHca)
{
    const uint64_t n = 256 * MiB;
    for (uint32_t channels : {8u, 16u})
    {
        Bench b(2);
        b.engine->SetAttribute("NumChannels", UintegerValue(channels));
        b.engine->SetAttribute("RingsAcrossDomains", BooleanValue(true));
        const CollectiveBenchPass r = b.Run("allreduce", "ring", n);
        const CollectiveCostModel nv = b.NvLinkModel();
        const CollectiveCostModel ib = b.IbModel(0, 8);
        const double model_us =
            CollectiveCostModel::RingAllReduceAcrossDomains(nv, ib, 16, 8, channels, n) * 1e6;
        const double eightHcas_gbyte_per_s = 8.0 / ib.Beta() * 1e-9;
        std::cout << "[bench] 2 x dgx-h100 ring C=" << channels << " 256 MiB sim_us=" << r.time_us
                  << " model_us=" << model_us << " busbw_gbyte_per_s=" << r.busbw_gbyte_per_s
                  << " eight_hcas_gbyte_per_s=" << eightHcas_gbyte_per_s << "\n";
        EXPECT_EQ(r.algorithm, "ring");
        EXPECT_NEAR(r.time_us / model_us, 1.0, 0.03) << channels;
        EXPECT_NEAR(r.busbw_gbyte_per_s / eightHcas_gbyte_per_s, 1.0, 0.03) << channels;
        Simulator::Destroy();
        Names::Clear();
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
    const CollectiveBenchPass a = b.Run("alltoall", "auto", n);
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
    o.inPlace = "out";
    const auto rows = CollectiveBenchRun(o, b.ranks, {256 * MiB, 384 * MiB, 512 * MiB}, b.engine);
    double lo = rows.front().outOfPlace.busbw_gbyte_per_s;
    double hi = lo;
    for (const auto& r : rows)
    {
        std::cout << "[bench] ring " << r.sizeBytes / MiB
                  << " MiB busbw_gbyte_per_s=" << r.outOfPlace.busbw_gbyte_per_s << "\n";
        lo = std::min(lo, r.outOfPlace.busbw_gbyte_per_s);
        hi = std::max(hi, r.outOfPlace.busbw_gbyte_per_s);
    }
    EXPECT_LT(hi / lo, 1.02);
    EXPECT_NEAR(rows.back().outOfPlace.busbw_gbyte_per_s / (1e-9 / b.NvLinkModel().Beta()),
                1.0,
                0.03);
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
    const test_util::ScratchDir scratch("collective-bench");
    const std::string path = scratch.File("runs.db");

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
    add("dgx-h100", "--inPlace=sideways is not both, out or in", [](auto& o) {
        o.inPlace = "sideways";
    });
    add("dgx-h100", "--gpusPerThread=9 is not 1 to the 8 GPUs", [](auto& o) {
        o.gpusPerThread = 9;
    });
    add("dgx-h100", "--iters must be at least 1", [](auto& o) { o.iters = 0; });
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
    // 1, 2, 4 MiB ring on 8 GPUs with the h100 endpoint: the tuner's Simple ring runs all
    // 24 channels from 768 KiB (24 x 512 threads x 64 B thread threshold), simulated
    // as 8 (MaxSimulatedChannels), so 1 loop of 8 x 8 pieces x 14 hops per size: 3 x 896
    // messages per pass, and two passes (out-of-place, in-place) per size.
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM collectives" + complete + " AND algorithm='ring'"),
              6);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM collectives" + complete + " AND in_place=1"), 3);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM flows" + complete), 2 * 3 * 896);
    EXPECT_GT(Count(db, "SELECT COUNT(*) FROM nodes" + complete), 8);
    EXPECT_GT(Count(db, "SELECT COUNT(*) FROM links" + complete), 0);
    EXPECT_EQ(Count(db,
                    "SELECT COUNT(*) FROM runs WHERE status='complete' AND "
                    "json_extract(params, '$.collective')='allreduce'"),
              1);
    sqlite3_close(db);
}

// The printed table: lines that are not comments, split at blanks.
std::vector<std::vector<std::string>>
TableRows(const std::string& text)
{
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
    {
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::istringstream fields(line);
        rows.emplace_back(std::istream_iterator<std::string>(fields),
                          std::istream_iterator<std::string>());
    }
    return rows;
}

// The value after "<name> : " on a footer line, or "" when absent.
std::string
FooterValue(const std::string& text, const std::string& name)
{
    const std::size_t at = text.find("# " + name);
    if (at == std::string::npos)
    {
        return "";
    }
    const std::size_t colon = text.find(" : ", at);
    return text.substr(colon + 3, text.find('\n', colon) - colon - 3);
}

// A 1 x dgx-h100 run of \p o through the whole scenario; its output, exit code 0 expected.
std::string
RunMain(CollectiveBenchOptions o)
{
    ClusterConfig config;
    EXPECT_EQ(config.ApplyPreset("dgx-h100"), "");
    config.servers = 1;
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(CollectiveBenchMain(config, o, out, err), 0) << err.str();
    Simulator::Destroy();
    Names::Clear();
    return out.str();
}

// nccl-tests' table: per size, out-of-place and in-place time / algbw / busbw / #wrong (N/A:
// no data is moved), then the algorithm, protocol and channels the engine ran; the footer's
// average busbw is the mean of every printed busbw (both passes), within the 0.005 GB/s of
// the printed rounding; in-place rows are separate runs (in_place = 1), as many as the
// out-of-place ones, with the same algorithm.
TEST_F(CollectiveBenchTest, PrintsOutOfPlaceAndInPlaceColumnsAndTheAverage)
{
    const test_util::ScratchDir scratch("collective-bench-passes");
    const std::string path = scratch.File("runs.db");
    CollectiveBenchOptions o;
    o.collective = "all_reduce"; // nccl-tests' name
    o.algorithm = "ring";
    o.minBytes = "1K";
    o.maxBytes = "256K";
    o.stepFactor = 4;
    o.db = path;
    const std::string text = RunMain(o);
    std::cout << text;
    EXPECT_NE(text.find("out-of-place"), std::string::npos);
    EXPECT_NE(text.find("#wrong     time   algbw   busbw  #wrong   algorithm  protocol  channels"),
              std::string::npos);
    const auto rows = TableRows(text);
    ASSERT_EQ(rows.size(), 5u); // 1K, 4K, 16K, 64K, 256K
    double sum = 0;
    for (const auto& f : rows)
    {
        // size count type redop root, time algbw busbw #wrong twice, algorithm protocol channels
        ASSERT_EQ(f.size(), 16u);
        EXPECT_EQ(std::stoull(f[1]), std::stoull(f[0]) / 4); // count: float elements
        EXPECT_EQ(f[2], "float");
        EXPECT_EQ(f[3], "sum");
        EXPECT_EQ(f[4], "-1");
        EXPECT_EQ(f[8], "N/A");
        EXPECT_EQ(f[12], "N/A");
        EXPECT_EQ(f[13], "ring");
        // The h100 endpoint's tuner: a protocol of NCCL's, 1 to 24 channels.
        EXPECT_TRUE(f[14] == "ll" || f[14] == "ll128" || f[14] == "simple") << f[14];
        EXPECT_GE(std::stoul(f[15]), 1u);
        EXPECT_LE(std::stoul(f[15]), 24u);
        for (std::size_t pass : {5, 9})
        {
            // busbw = algbw x 2(p−1)/p = 1.75 algbw, within the printed rounding: 0.005 on
            // busbw plus 1.75 x 0.005 on algbw = 0.014.
            EXPECT_GT(std::stod(f[pass]), 0);
            EXPECT_NEAR(std::stod(f[pass + 2]), 1.75 * std::stod(f[pass + 1]), 0.014) << f[0];
            sum += std::stod(f[pass + 2]);
        }
    }
    EXPECT_EQ(FooterValue(text, "Out of bounds values"), "0 OK");
    EXPECT_NEAR(std::stod(FooterValue(text, "Avg bus bandwidth")), sum / 10, 0.005);

    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM collectives WHERE in_place=0"), 5);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM collectives WHERE in_place=1"), 5);
    // Each size: the out-of-place call, then the in-place one, which starts after it ended.
    EXPECT_EQ(Count(db,
                    "SELECT COUNT(*) FROM collectives a JOIN collectives b ON b.coll_id = "
                    "a.coll_id + 1 AND b.bytes = a.bytes AND b.algorithm = a.algorithm WHERE "
                    "a.in_place=0 AND b.in_place=1 AND b.start_ns >= a.end_ns"),
              5);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM runs WHERE json_extract(params, '$.inPlace')='both'"),
              1);
    sqlite3_close(db);
}

// --inPlace=out / in: only that pass runs (the other's columns blank, so 12 fields), and the
// footer averages the printed busbw of that pass alone.  The flag is recorded, not charged:
// today's schedules move the same traffic, so the in-place-only run prints the out-of-place-
// only run's figures exactly.
TEST_F(CollectiveBenchTest, InPlaceOptionSkipsAPass)
{
    std::map<std::string, std::vector<std::vector<std::string>>> printed;
    for (const std::string pass : {"out", "in"})
    {
        SCOPED_TRACE(pass);
        CollectiveBenchOptions o;
        o.algorithm = "ring";
        o.minBytes = "4K";
        o.maxBytes = "64K";
        o.stepFactor = 4;
        o.inPlace = pass;
        const std::string text = RunMain(o);
        const auto rows = TableRows(text);
        ASSERT_EQ(rows.size(), 3u);
        double sum = 0;
        for (const auto& f : rows)
        {
            ASSERT_EQ(f.size(), 12u);
            EXPECT_EQ(f[8], "N/A");
            sum += std::stod(f[7]);
        }
        EXPECT_NEAR(std::stod(FooterValue(text, "Avg bus bandwidth")), sum / 3, 0.005);
        // The skipped pass is 32 blanks, so the columns stay in place: a row is size count
        // type redop root (52 characters), out-of-place [52, 84), in-place [84, 116).
        const std::string blank(32, ' ');
        const std::size_t row = text.find("        4096          1024");
        ASSERT_NE(row, std::string::npos);
        const std::string line = text.substr(row, text.find('\n', row) - row);
        EXPECT_EQ(line.substr(pass == "out" ? 84 : 52, 32), blank) << line;
        printed[pass] = rows;
    }
    EXPECT_EQ(printed["out"], printed["in"]);
}

// Every nccl-tests collective runs under its nccl-tests name, with nccl-tests' count, redop
// and root columns, and busbw = algbw x nccl-tests' factor for p = 8 (2(p−1)/p = 1.75
// allreduce; (p−1)/p = 0.875 allgather, reducescatter, alltoall; 1 broadcast, reduce,
// sendrecv), tolerance 1 % (algbw printed with 2 decimals, > 5 GB/s at 1 MiB).
TEST_F(CollectiveBenchTest, RunsEveryNcclTestsCollective)
{
    struct Expect
    {
        const char* name;
        uint64_t count; // of 1 MiB of floats on 8 ranks
        const char* redop;
        const char* root;
        double factor;
    };

    const uint64_t elements = MiB / 4;
    for (const Expect& e : std::vector<Expect>{
             {"all_reduce", elements, "sum", "-1", 1.75},
             {"all_gather", elements / 8, "none", "-1", 0.875},
             {"reduce_scatter", elements / 8, "sum", "-1", 0.875},
             {"alltoall", elements / 8, "none", "-1", 0.875},
             {"broadcast", elements, "none", "3", 1.0},
             {"reduce", elements, "sum", "3", 1.0},
             {"sendrecv", elements, "sum", "-1", 1.0},
         })
    {
        SCOPED_TRACE(e.name);
        CollectiveBenchOptions o;
        o.collective = e.name;
        o.minBytes = "1M";
        o.maxBytes = "1M";
        o.root = 3;
        const auto rows = TableRows(RunMain(o));
        ASSERT_EQ(rows.size(), 1u);
        const auto& f = rows.front();
        ASSERT_EQ(f.size(), 16u);
        EXPECT_EQ(f[0], "1048576");
        EXPECT_EQ(std::stoull(f[1]), e.count);
        EXPECT_EQ(f[3], e.redop);
        EXPECT_EQ(f[4], e.root);
        for (std::size_t pass : {5, 9})
        {
            EXPECT_GT(std::stod(f[pass + 1]), 5.0);
            EXPECT_NEAR(std::stod(f[pass + 2]) / std::stod(f[pass + 1]), e.factor, 0.01 * e.factor);
        }
        EXPECT_FALSE(f[13].empty());
    }
}

// nccl-tests' figures: the most decimals (2, 1, 0) that fit the column, then an exponent;
// passes that ran with different algorithms, protocols or channels show both.
TEST_F(CollectiveBenchTest, FormatsFiguresAsNcclTests)
{
    CollectiveBenchRow row;
    row.sizeBytes = 8;
    row.count = 2;
    row.outOfPlace = {true, "ring", "ll", 2, 12345.678, 999.994, 1234.5};
    row.inPlace = {true, "tree", "ll", 4, 123456.7, 12345678.0, 0.5};
    EXPECT_EQ(CollectiveBenchFormatRow(row),
              "           8             2     float     sum      -1  12345.7  999.99  "
              "1234.5    N/A   123457   1e+07    0.50    N/A     ring/tree        ll       "
              "2/4\n");
    std::vector<CollectiveBenchRow> rows{row};
    // (1234.5 + 0.5) / 2
    EXPECT_DOUBLE_EQ(CollectiveBenchAverageBusBw(rows), 617.5);
    rows.front().inPlace.ran = false;
    EXPECT_DOUBLE_EQ(CollectiveBenchAverageBusBw(rows), 1234.5);
    EXPECT_EQ(CollectiveBenchFooter(rows),
              "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1234.5 \n#\n");
}

} // namespace
