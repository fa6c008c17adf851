/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Direction checks of the studies moe-alltoall and frontend-interference on tiny
// configurations, through the same trace builders and RunWorkloadStudy as the scenarios.
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/study-traces.h"
#include "ns3/trace-native.h"
#include "ns3/workload-study.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class ScenarioMoeFrontEnd : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    static StudyResult Run(const ClusterConfig& config,
                           const std::string& trace,
                           const std::string& marker)
    {
        StudyResult r;
        {
            ClusterHelper cluster(config);
            cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
            EXPECT_EQ(cluster.TryBuild(), "");
            r = RunWorkloadStudy(cluster, NativeTraceParser::ParseString(trace, "t"), marker);
        }
        Simulator::Destroy();
        Names::Clear();
        EXPECT_TRUE(r.complete) << r.stuckReport;
        // RunWorkloadStudy's end-of-run conservation check ran (a violation fails r.complete).
        EXPECT_FALSE(r.conservation.planes.empty());
        return r;
    }

    static double AllToAllNs(const StudyResult& r, const MoeAllToAllConfig& moe)
    {
        return double(r.breakdown.commByKindNs[static_cast<std::size_t>(ParallelismKind::Ep)]) /
               (4.0 * moe.layers * moe.iterations);
    }
};

} // namespace

// EP 8, 8 MiB per rank (1 MiB per peer).  One NVLink5 domain of 8 GPUs (2 GB200 trays):
// 7 MiB leave each GPU at 900 GB/s x 256/272 = 8.7 us.  2 dgx-h100-like servers of 4 GPUs:
// 4 MiB per GPU cross InfiniBand at 400 Gb/s x 4096/4122 = 84 us (the 3 MiB on NVLink4 go
// in parallel, 7 us).  Model ratio 9.7 = the per-GPU bandwidth ratio 17 x the inter-server
// share 4/7.  Tolerance: each simulated all-to-all within -5 %/+40 % of its bandwidth term
// (the model has no latency: NVLink's hops and software latency are a large share of 9 us),
// and the NVL72 speed-up at least 70 % of the model's.
TEST_F(ScenarioMoeFrontEnd, MoeAllToAllFasterOnNvl72ByTheBandwidthRatio)
{
    MoeAllToAllConfig moe;
    moe.ep = 8;
    moe.tokens = 1024;
    moe.hidden = 2048;
    moe.topk = 2;
    ASSERT_EQ(moe.AllToAllBytes(), 8u << 20);
    ClusterConfig nvl;
    ASSERT_EQ(nvl.ApplyPreset("gb200-nvl72"), "");
    nvl.servers = 2;
    nvl.serversPerDomain = 2;
    nvl.endpoint = "ideal"; // the model is the links' bandwidth term alone
    ClusterConfig dgx;
    ASSERT_EQ(dgx.ApplyPreset("dgx-h100"), "");
    dgx.endpoint = "ideal";
    dgx.servers = 2;
    dgx.gpusPerServer = 4;
    const double nvlModel = MoeAllToAllModelNs(nvl, 8, moe.AllToAllBytes());
    const double dgxModel = MoeAllToAllModelNs(dgx, 8, moe.AllToAllBytes());
    EXPECT_NEAR(nvlModel, 7.0 * (1 << 20) / (900e9 * 256 / 272) * 1e9, 1);
    EXPECT_NEAR(dgxModel, 4.0 * (1 << 20) / (50e9 * 4096 / 4122) * 1e9, 1);

    const StudyResult a = Run(nvl, moe.Trace(), "bdisp0.*");
    const StudyResult b = Run(dgx, moe.Trace(), "bdisp0.*");
    const double nvlNs = AllToAllNs(a, moe);
    const double dgxNs = AllToAllNs(b, moe);
    std::cout << "[study] EP 8 all-to-all: nvl72 " << nvlNs << " ns (model " << nvlModel
              << "), dgx-h100 over IB " << dgxNs << " ns (model " << dgxModel << ")\n";
    EXPECT_GT(nvlNs / nvlModel, 0.95);
    EXPECT_LT(nvlNs / nvlModel, 1.4);
    EXPECT_GT(dgxNs / dgxModel, 0.95);
    EXPECT_LT(dgxNs / dgxModel, 1.4);
    EXPECT_GT(dgxNs / nvlNs, 0.7 * dgxModel / nvlModel);
    EXPECT_LT(a.meanIterationNs, b.meanIterationNs);
    // The NVL72 run never touches InfiniBand; the DGX run sends 4 of 7 peers' bytes over it.
    EXPECT_EQ(a.planes.at("infiniband").txBytes, 0u);
    EXPECT_GT(b.planes.at("infiniband").txBytes, 4 * 8 * (4u << 20));
}

namespace
{

// 1 dgx-h100-like server of 2 GPUs, routed front-end with one aggregation switch (the ToR's
// uplink then has the server's whole capacity): server link and storage at 10 Gb/s,
// PCIe at 100 Gb/s (its stage is 10x shorter than the storage link's).
ClusterConfig
TinyFrontEnd()
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 1;
    c.gpusPerServer = 2;
    c.ethFabric = "routed";
    c.ethAggSwitches = 1; // static routes use one uplink per destination: no ECMP split
    c.ethPortsPerServer = 1;
    c.ethRate_gbit_per_s = 10;
    c.storageRate_gbit_per_s = 10;
    c.pcieRate_gbit_per_s = 100;
    return c;
}

FrontEndJobConfig
TinyJob()
{
    FrontEndJobConfig j;
    j.ranks = 2;
    j.iterations = 2;
    j.forwardNs = 1000000;
    j.backwardNs = 2000000;
    j.optimizerNs = 200000;
    j.gradientBytes = 1 << 20;
    return j;
}

} // namespace

// Two GPUs load 1 MB each per iteration through the 10 Gb/s storage link: 2 MB at 10 Gb/s x
// 1448/1502 = 1.66 ms, fetched while the previous iteration's backward, allreduce and
// optimizer run (2.2 ms): at this rate the loading is hidden, the iteration within 1 % of
// the one without front-end traffic.  A synchronous checkpoint of 1 MB per GPU blocks the
// step for at least 2 MB / 10 Gb/s = 1.6 ms (plus the PCIe stage), at most 15 % above
// 2 MB at TCP's goodput + 1 MB at PCIe's; an asynchronous one delays less than that.
TEST_F(ScenarioMoeFrontEnd, FrontEndDelaysOnlyWhatItGates)
{
    const ClusterConfig c = TinyFrontEnd();
    FrontEndJobConfig j = TinyJob();
    const uint64_t none = Run(c, j.Trace(), "opt*").iterations.back().GetNanoSeconds();
    j.loadBytes = 1000000;
    const StudyResult loading = Run(c, j.Trace(), "opt*");
    const uint64_t load = loading.iterations.back().GetNanoSeconds();
    j.checkpointBytes = 1000000;
    j.syncCheckpoint = false;
    const uint64_t async = Run(c, j.Trace(), "opt*").iterations.back().GetNanoSeconds();
    j.syncCheckpoint = true;
    const uint64_t sync = Run(c, j.Trace(), "opt*").iterations.back().GetNanoSeconds();
    std::cout << "[study] iteration: none " << none << " load " << load << " +async " << async
              << " +sync " << sync << " ns\n";
    EXPECT_NEAR(double(load), double(none), 0.01 * none);
    // The first iteration waits for its batch: that wait is the exposed front-end time.
    const double tcp = 1448.0 / 1502;
    const double loadNs = 2e6 * 8 / (10e9 * tcp) * 1e9 + 1e6 * 8 / (100e9 * tcp) * 1e9;
    EXPECT_NEAR(
        loading.breakdown.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::FrontEnd)],
        loadNs,
        0.05 * loadNs);
    const double ckptNs = loadNs; // same bytes, reverse direction
    EXPECT_GE(double(sync), none + 2e6 * 8 / 10e9 * 1e9);
    EXPECT_LE(double(sync), none + 1.15 * ckptNs);
    EXPECT_LT(async, sync);
    EXPECT_GE(async, none);
}

// At a tenth of the rate the same batch (16.6 ms) no longer fits the 2.2 ms window: the
// loading sets the iteration (within 5 %).
TEST_F(ScenarioMoeFrontEnd, SlowFrontEndExposesLoading)
{
    ClusterConfig c = TinyFrontEnd();
    c.ethRate_gbit_per_s = 1;
    c.storageRate_gbit_per_s = 1;
    FrontEndJobConfig j = TinyJob();
    const uint64_t none = Run(c, j.Trace(), "opt*").iterations.back().GetNanoSeconds();
    j.loadBytes = 1000000;
    const uint64_t load = Run(c, j.Trace(), "opt*").iterations.back().GetNanoSeconds();
    const double tcp = 1448.0 / 1502;
    const double loadNs = 2e6 * 8 / (1e9 * tcp) * 1e9 + 1e6 * 8 / (100e9 * tcp) * 1e9;
    // Batch i starts when fwd i-1 ends, fwd i when it has arrived: opt i-1 to opt i is
    // load + fwd + (bwd + grad + opt) - (bwd + grad + opt) = load + fwd.
    const double expected = loadNs + 1e6;
    std::cout << "[study] slow front-end: none " << none << " load " << load << " ns\n";
    EXPECT_GT(double(load), double(none) + 0.5 * (loadNs - 2.2e6));
    EXPECT_NEAR(double(load), expected, 0.05 * expected);
}
