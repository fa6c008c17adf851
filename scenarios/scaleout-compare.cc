/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The same jobs on an InfiniBand and a RoCE scale-out fabric of the same layout:
 *   scaleout-compare --servers=4 --db=runs.db
 * Jobs: a data-parallel gradient allreduce, an MoE all-to-all over every GPU, an incast
 * (one GPU per other server sends to GPU 0; with a victim flow, doc/roce.md), a GPT-like
 * TP 8 x PP 2 x DP job.  Fabrics: InfiniBand;
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

#include <algorithm>
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

// The victim: the second server's rail-0 GPU (an incast sender) sends victimBytes to the
// third server's rail-0 GPU on another stream, from the incast's start.
constexpr const char* kVictimLabel = "victim";

uint32_t
VictimSrc(uint32_t gpusPerServer)
{
    return gpusPerServer;
}

uint32_t
VictimDst(uint32_t gpusPerServer)
{
    return 2 * gpusPerServer;
}

// GPU 0 receives bytes from the first GPU of every other server (rail 0: one leaf port);
// with victimBytes > 0 also the victim flow; incast=false: the victim alone.
std::string
IncastTrace(uint32_t ranks,
            uint32_t gpusPerServer,
            uint64_t bytes,
            uint64_t victimBytes,
            bool incast = true)
{
    std::ostringstream os;
    os << "fabric-trace 1\nranks " << ranks << "\n";
    for (uint32_t r = gpusPerServer; incast && r < ranks; r += gpusPerServer)
    {
        os << r << " in" << r << " send to=0 bytes=" << bytes << "\n";
        os << "0 in" << r << " recv from=" << r << " bytes=" << bytes << "\n";
    }
    if (victimBytes > 0 && VictimDst(gpusPerServer) < ranks)
    {
        os << VictimSrc(gpusPerServer) << " " << kVictimLabel
           << " send stream=1 to=" << VictimDst(gpusPerServer) << " bytes=" << victimBytes << "\n";
        os << VictimDst(gpusPerServer) << " " << kVictimLabel
           << " recv stream=1 from=" << VictimSrc(gpusPerServer) << " bytes=" << victimBytes
           << "\n";
    }
    return os.str();
}

// Nearest-rank 99th percentile of the completion times of the messages on \p plane; 0: none.
int64_t
P99Completion_ns(const StudyResult& r, const std::string& plane)
{
    std::vector<int64_t> t;
    for (const StudyMessage& m : r.received)
    {
        if (m.plane == plane)
        {
            t.push_back(m.completion_ns);
        }
    }
    if (t.empty())
    {
        return 0;
    }
    const std::size_t k = (99 * t.size() + 99) / 100 - 1; // ceil(0.99 n) - 1
    std::nth_element(t.begin(), t.begin() + k, t.end());
    return t[k];
}

// The victim flow's completion time in \p r; -1 when it has none.
int64_t
VictimCompletion_ns(const StudyResult& r, uint32_t gpusPerServer)
{
    for (const StudyMessage& m : r.received)
    {
        if (m.srcRank == VictimSrc(gpusPerServer) && m.dstRank == VictimDst(gpusPerServer))
        {
            return m.completion_ns;
        }
    }
    return -1;
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
    uint64_t victimBytes = 16ull << 20;
    cmd.AddValue("victimBytes",
                 "bytes of the incast job's victim flow (0: none), doc/roce.md",
                 victimBytes);
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
    std::printf("%-12s %-14s %11s %13s %11s %11s %11s %9s %8s %8s\n",
                "job",
                "fabric",
                "time",
                "exposed comm",
                "p99 FCT",
                "victim x",
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
                trace = IncastTrace(ranks, config.gpusPerServer, incastBytes, victimBytes);
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
                },
                true); // every message: the p99 completion and the victim's
            if (!r.complete)
            {
                std::cerr << "scaleout-compare: " << job << " on " << f.label
                          << ": replay incomplete\n"
                          << r.stuckReport;
                return 2;
            }
            // The victim's slowdown: its completion here over its completion alone on the
            // same fabric (a run of the victim flow only).
            char victim[16] = "-";
            const int64_t victimNs =
                std::string(job) == "incast" ? VictimCompletion_ns(r, config.gpusPerServer) : -1;
            if (victimNs > 0)
            {
                const StudyResult alone = RunStudyCase(
                    run,
                    config,
                    NativeTraceParser::ParseString(
                        IncastTrace(ranks, config.gpusPerServer, incastBytes, victimBytes, false),
                        kVictimLabel),
                    kVictimLabel,
                    std::string(kVictimLabel) + "-alone/" + f.label,
                    seed,
                    params,
                    Time(0),
                    false,
                    {},
                    true);
                const int64_t aloneNs = VictimCompletion_ns(alone, config.gpusPerServer);
                if (aloneNs > 0)
                {
                    std::snprintf(victim, sizeof(victim), "%.2f", double(victimNs) / aloneNs);
                }
            }
            std::printf("%-12s %-14s %8.3f ms %10.3f ms %8.3f ms %11s %8.1f us %9llu %8llu "
                        "%8llu\n",
                        job,
                        f.label,
                        r.endNs / 1e6,
                        r.breakdown.exposedCommNs / 1e6,
                        P99Completion_ns(r, ClusterPlaneName(config.GetScaleOutPlane())) / 1e6,
                        victim,
                        roce.pausedNs / 1e3,
                        static_cast<unsigned long long>(roce.pauseFrames),
                        static_cast<unsigned long long>(roce.ecnMarked),
                        static_cast<unsigned long long>(roce.drops));
        }
    }
    std::cout << "(time: the job's last op; exposed comm: per rank, communication without "
                 "compute; p99 FCT: 99th percentile of the scale-out messages' submission to "
                 "receipt; victim x: the victim flow's completion over its completion alone; "
                 "PFC paused: time ports were paused, summed over ports; PAUSEs: XOFF "
                 "frames sent; ECN CE: packets the switches marked; drops: lossy overflow)\n";
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("scaleout-compare");
    return run.Main([&]() { return ScaleOutCompare(run, argc, argv); });
}
