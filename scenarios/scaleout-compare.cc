/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The same jobs on an InfiniBand and a RoCE scale-out fabric of the same layout:
 *   scaleout-compare --servers=4 --db=runs.db
 * Jobs: a data-parallel gradient allreduce, an MoE all-to-all over every GPU, an incast
 * (one GPU per other server sends to GPU 0), a GPT-like TP 8 x PP 2 x DP job.  Fabrics: InfiniBand;
 * RoCE with PFC, ECN and DCQCN and ECMP by hash, by per-packet spraying, adaptive; RoCE lossy (no
 * PFC, go-back-N). Cluster flags (--preset, --ibRate_gbit_per_s, ...) apply to every case; one run
 * row per (job, fabric).
 */
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/roce-cluster-plane.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/study-traces.h"
#include "ns3/trace-native.h"
#include "ns3/trace-transformer-gen.h"
#include "ns3/workload-study.h"

#include <cstdio>
#include <iostream>
#include <sstream>

using namespace ns3;

namespace
{

struct Fabric
{
    const char* label;
    const char* scaleOut;
    const char* pfc;
    const char* ecmp;
};

// GPU 0 receives bytes from the first GPU of every other server (rail 0: one leaf port).
std::string
IncastTrace(uint32_t ranks, uint32_t gpusPerServer, uint64_t bytes)
{
    std::ostringstream os;
    os << "fabric-trace 1\nranks " << ranks << "\n";
    for (uint32_t r = gpusPerServer; r < ranks; r += gpusPerServer)
    {
        os << r << " in" << r << " send to=0 bytes=" << bytes << "\n";
        os << "0 in" << r << " recv from=" << r << " bytes=" << bytes << "\n";
    }
    return os.str();
}

} // namespace

static int
ScaleOutCompare(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    std::string db;
    uint64_t seed = 1;
    uint64_t gradientBytes = 256ull << 20;
    uint64_t incastBytes = 64ull << 20;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    cmd.AddValue("gradientBytes", "allreduce bytes of the data-parallel job", gradientBytes);
    cmd.AddValue("incastBytes", "bytes each incast sender sends", incastBytes);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters flags;
    flags.Set("seed", seed);
    run.SetRun("scaleout-compare", seed, flags);
    const Fabric fabrics[] = {{"infiniband", "infiniband", "1", "hash"},
                              {"roce-hash", "roce", "1", "hash"},
                              {"roce-spray", "roce", "1", "spray"},
                              {"roce-adaptive", "roce", "1", "adaptive"},
                              {"roce-lossy", "roce", "0", "hash"}};
    std::printf("%-12s %-14s %11s %13s %11s %9s %8s %8s\n",
                "job",
                "fabric",
                "time",
                "exposed comm",
                "PFC paused",
                "PAUSEs",
                "ECN CE",
                "drops");
    for (const char* job : {"dp-allreduce", "moe-alltoall", "incast", "tp-pp-dp"})
    {
        for (const Fabric& f : fabrics)
        {
            ClusterConfig config;
            config.cli = cluster.GetConfig().cli;
            config.cli.scaleOut = f.scaleOut;
            config.cli.pfc = f.pfc;
            config.cli.ecmp = f.ecmp;
            std::string field;
            const std::string error = config.ApplyCommandLine(&field);
            if (!error.empty())
            {
                throw InputError::Flag(field, error);
            }
            const uint32_t ranks = config.GetNRanks();
            std::string trace;
            std::string marker;
            WorkloadTrace generated;
            if (std::string(job) == "dp-allreduce")
            {
                FrontEndJobConfig dp;
                dp.ranks = ranks;
                dp.iterations = 1;
                dp.gradientBytes = gradientBytes;
                trace = dp.Trace();
                marker = "opt*";
            }
            else if (std::string(job) == "moe-alltoall")
            {
                MoeAllToAllConfig moe;
                moe.ep = ranks;
                trace = moe.Trace();
                marker = "bdisp0.*";
            }
            else if (std::string(job) == "incast")
            {
                trace = IncastTrace(ranks, config.gpusPerServer, incastBytes);
                marker = "in*";
            }
            else
            {
                // TP inside a server, two pipeline stages, DP over the rest (tp-pp-dp's model).
                TransformerTraceConfig model;
                model.tp = config.gpusPerServer;
                model.pp = 2;
                if (ranks % (model.tp * model.pp) != 0)
                {
                    continue; // needs whole pairs of servers
                }
                model.dp = ranks / (model.tp * model.pp);
                model.globalBatch = 4 * model.dp;
                generated = TransformerTraceGenerator(model).GenerateTrace();
                marker = model.IterationMarker();
            }
            RunParameters params;
            params.Set("job", job);
            params.Set("fabric", f.label);
            RoceClusterPlane::Totals roce;
            const StudyResult r = RunStudyCase(
                run,
                config,
                trace.empty() ? std::move(generated) : NativeTraceParser::ParseString(trace, job),
                marker,
                std::string(job) + "/" + f.label,
                seed,
                params,
                Time(0),
                false,
                [&roce](const ClusterHelper& c) {
                    if (c.GetConfig().GetScaleOutPlane() == ClusterPlane::ROCE)
                    {
                        roce = dynamic_cast<const RoceClusterPlane&>(
                                   c.GetPlaneBuilder(ClusterPlane::ROCE))
                                   .GetTotals();
                    }
                });
            if (!r.complete)
            {
                std::cerr << "scaleout-compare: " << job << " on " << f.label
                          << ": replay incomplete\n"
                          << r.stuckReport;
                return 2;
            }
            std::printf("%-12s %-14s %8.3f ms %10.3f ms %8.1f us %9llu %8llu %8llu\n",
                        job,
                        f.label,
                        r.endNs / 1e6,
                        r.breakdown.exposedCommNs / 1e6,
                        roce.pausedNs / 1e3,
                        static_cast<unsigned long long>(roce.pauseFrames),
                        static_cast<unsigned long long>(roce.ecnMarked),
                        static_cast<unsigned long long>(roce.drops));
        }
    }
    std::cout << "(time: the job's last op; exposed comm: per rank, communication without "
                 "compute; PFC paused: time ports were paused, summed over ports; PAUSEs: XOFF "
                 "frames sent; ECN CE: packets the switches marked; drops: lossy overflow)\n";
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("scaleout-compare");
    return run.Main([&]() { return ScaleOutCompare(run, argc, argv); });
}
