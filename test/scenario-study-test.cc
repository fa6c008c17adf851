/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Direction checks of the studies (scenarios/mapping-study, dp-scaling) on tiny
// configurations, through RunWorkloadStudy as the scenarios use it.
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/trace-transformer-gen.h"
#include "ns3/workload-study.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class ScenarioStudy : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    // One replay on a fresh dgx-h100 cluster; the simulator is reset afterwards.
    static StudyResult Run(uint32_t servers, uint32_t gpusPerServer, TransformerTraceConfig model)
    {
        ClusterConfig config;
        EXPECT_EQ(config.ApplyPreset("dgx-h100"), "");
        config.servers = servers;
        config.gpusPerServer = gpusPerServer;
        StudyResult r;
        {
            ClusterHelper cluster(config);
            cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
            EXPECT_EQ(cluster.TryBuild(), "");
            TransformerTraceGenerator gen(model);
            r = RunWorkloadStudy(cluster, gen.GenerateTrace(), "opt*");
        }
        Simulator::Destroy();
        Names::Clear();
        EXPECT_TRUE(r.complete) << r.stuckReport;
        // RunWorkloadStudy's end-of-run conservation check ran on both credit planes.
        EXPECT_TRUE(r.conservation.Ok()) << r.conservation.Describe();
        EXPECT_EQ(r.conservation.planes.count("nvlink"), 1u);
        EXPECT_EQ(r.conservation.planes.count("infiniband"), 1u);
        return r;
    }

    static uint64_t Exposed(const StudyResult& r, ParallelismKind kind)
    {
        return r.breakdown.exposedByKindNs[static_cast<std::size_t>(kind)];
    }
};

// TP 4 x DP 2 on 2 servers of 4 GPUs.  Per rank and iteration TP moves 4 allreduces per
// layer of microBatch x seq x hidden x 2 B = 4 x 4 MiB; DP reduces the rank's gradients,
// (12 h^2 + vocab h) x 2 B / tp ~ 1.8 MiB with the small vocabulary: TP traffic is ~9x
// larger.  tp-inner keeps each TP ring inside one NVLink domain (450 GB/s per GPU);
// dp-inner spreads it over both servers, so every TP ring has InfiniBand hops (50 GB/s per
// GPU) and runs several times slower: tp-inner must expose less TP time.
TEST_F(ScenarioStudy, MappingTpOnNvlinkExposesLessTp)
{
    TransformerTraceConfig model;
    model.layers = 1;
    model.hidden = 512;
    model.seq = 1024;
    model.vocab = 1024;
    model.microBatch = 4;
    model.tp = 4;
    model.dp = 2;
    model.globalBatch = model.microBatch * model.dp;

    // The premise: TP bytes per rank much larger than DP bytes in the generated trace.
    const WorkloadTrace trace = TransformerTraceGenerator(model).GenerateTrace();
    uint64_t tpBytes = 0;
    uint64_t dpBytes = 0;
    for (const auto& c : trace.collectives)
    {
        const ParallelismKind k = ParallelismKindOfGroup(trace.groups[c.group].name);
        if (k == ParallelismKind::Tp)
        {
            tpBytes += c.bytes * c.members.size();
        }
        else if (k == ParallelismKind::Dp)
        {
            dpBytes += c.bytes * c.members.size();
        }
    }
    ASSERT_GT(tpBytes, 4 * dpBytes);

    model.mapping = "tp-inner";
    const StudyResult tpInner = Run(2, 4, model);
    model.mapping = "dp-inner";
    const StudyResult dpInner = Run(2, 4, model);
    std::cout << "[study] exposed TP: tp-inner " << Exposed(tpInner, ParallelismKind::Tp)
              << " ns, dp-inner " << Exposed(dpInner, ParallelismKind::Tp) << " ns; iteration "
              << tpInner.meanIterationNs << " vs " << dpInner.meanIterationNs << " ns\n";
    EXPECT_GT(Exposed(tpInner, ParallelismKind::Tp), 0u);
    EXPECT_LT(Exposed(tpInner, ParallelismKind::Tp), Exposed(dpInner, ParallelismKind::Tp));
    EXPECT_LT(tpInner.meanIterationNs, dpInner.meanIterationNs);
    // tp-inner: no TP byte leaves a server, so InfiniBand carries only the small DP part.
    EXPECT_LT(tpInner.planes.at("infiniband").txBytes, dpInner.planes.at("infiniband").txBytes);
}

// Pure DP over 1, 2 and 4 dgx-h100 servers, fixed per-GPU batch (compute per iteration is
// constant).  A ring allreduce of n bytes over p ranks takes 2(p-1)/p x n/B plus 2(p-1)
// step latencies: from 1 to 2 servers B drops from NVLink (450 GB/s) to InfiniBand
// (50 GB/s), from 2 to 4 the factor 2(p-1)/p and the latency term still grow.  So the
// exposed allreduce time per iteration must grow with the server count.
TEST_F(ScenarioStudy, DpScalingExposesMoreAllreduce)
{
    TransformerTraceConfig model;
    model.layers = 1;
    model.hidden = 512;
    model.seq = 512;
    model.vocab = 8192;
    model.tp = 1;
    std::vector<uint64_t> exposed;
    for (uint32_t servers : {1u, 2u, 4u})
    {
        model.dp = servers * 8;
        model.globalBatch = model.microBatch * model.dp;
        const StudyResult r = Run(servers, 8, model);
        exposed.push_back(Exposed(r, ParallelismKind::Dp));
        std::cout << "[study] " << servers << " servers: exposed DP " << exposed.back()
                  << " ns, iteration " << r.meanIterationNs << " ns\n";
    }
    EXPECT_GT(exposed[0], 0u);
    EXPECT_LT(exposed[0], exposed[1]);
    EXPECT_LT(exposed[1], exposed[2]);
}

} // namespace
