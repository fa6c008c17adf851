/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * How much bandwidth each plane needs for one job: every plane's
 * bandwidth is scaled 0.25x ... 4x around the preset, one plane at a time, the others at
 * the preset; the knee of a plane is the smallest factor from which doubling its bandwidth
 * shortens the iteration by less than --threshold.
 *   plane-sizing --db=runs.db
 *   plane-sizing --planes=infiniband --factors=0.125,0.25,0.5,1,2,4,8 --threshold=0.02
 * Prints iteration time per point, the knees, and the per-GPU NVLink : InfiniBand :
 * Ethernet ratio at the knees next to the preset's and the 18 : 4 : 1 claim.  One run row
 * per replay (label <plane>-x<factor>; the preset point once, label preset).
 */
#include "ns3/plane-sizing.h"

#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/results-database.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/trace-transformer-gen.h"
#include "ns3/workload-study.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

using namespace ns3;

namespace
{

std::vector<std::string>
SplitList(const std::string& list)
{
    std::vector<std::string> items;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');)
    {
        items.push_back(item);
    }
    return items;
}

std::string
FactorName(double f)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%gx", f);
    return buf;
}

} // namespace

static int
PlaneSizing(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    ClusterConfig defaults = cluster.GetConfig();
    defaults.cli.servers = 2; // 2 x dgx-h100: TP 8 on NVLink, DP 2 on InfiniBand
    // Routed front-end: the bridged ToR's CSMA segments are half-duplex, TCP's ACKs collide
    // with its data and a checkpoint takes tens of ms at any rate (--ethFabric=bridged shows it).
    defaults.cli.ethFabric = "routed";
    cluster.SetConfig(defaults);
    TransformerTraceConfig model;
    model.layers = 2;
    model.hidden = 1024;
    model.seq = 1024;
    model.vocab = 51200;
    model.microBatch = 2;
    model.microBatches = 4; // gradient accumulation: DP reduces once per 4 micro-batches
    model.iterations = 1;
    uint32_t tp = 0;
    uint32_t checkpointInterval = 100;
    bool loadTokens = true;
    std::string planeList = "nvlink,infiniband,ethernet";
    std::string factorList = "0.25,0.5,1,2,4";
    double threshold = 0.05;
    std::string db;
    uint64_t seed = 1;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    model.AddModelArguments(cmd);
    cmd.AddValue("planes", "planes to sweep, comma-separated", planeList);
    cmd.AddValue("factors", "bandwidth factors around the preset, comma-separated", factorList);
    cmd.AddValue("threshold",
                 "knee: doubling the bandwidth gains less than this fraction of the iteration",
                 threshold);
    cmd.AddValue("tp", "tensor-parallel ranks (0: GPUs per NVLink domain)", tp);
    cmd.AddValue("checkpointInterval",
                 "iterations per full checkpoint (16 B per parameter: weights, fp32 master, "
                 "Adam moments), written synchronously, amortised per iteration; 0: none",
                 checkpointInterval);
    cmd.AddValue("loadTokens",
                 "load each iteration's token ids (4 B per token) from storage first",
                 loadTokens);
    cmd.AddValue("pp", "pipeline stages; DP = GPUs / (TP x PP)", model.pp);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters flags;
    flags.Set("planes", planeList);
    flags.Set("factors", factorList);
    flags.Set("threshold", threshold);
    flags.Set("seed", seed);
    run.SetRun("plane-sizing", seed, flags);
    cluster.ApplyCommandLine();
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(seed, 1)));
    const ClusterConfig base = cluster.GetConfig();

    std::vector<ClusterPlane> planes;
    for (const std::string& name : SplitList(planeList))
    {
        ClusterPlane plane;
        const std::string error = ClusterPlaneFromName(name, plane);
        if (!error.empty())
        {
            throw InputError::Flag("planes", error);
        }
        planes.push_back(plane);
    }
    std::vector<double> factors;
    for (const std::string& item : SplitList(factorList))
    {
        char* end = nullptr;
        const double f = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !(f > 0) || f > 1024)
        {
            throw InputError::Flag("factors",
                                   "expected factors like 0.25,0.5,1,2,4, got '" + item + "'");
        }
        factors.push_back(f);
    }
    std::sort(factors.begin(), factors.end());
    factors.erase(std::unique(factors.begin(), factors.end()), factors.end());
    if (planes.empty() || factors.empty())
    {
        throw InputError::Flag(planes.empty() ? "planes" : "factors", "empty list");
    }
    if (!(threshold > 0 && threshold < 1))
    {
        throw InputError::Flag("threshold", "expected 0 < threshold < 1");
    }

    model.tp = tp ? tp : base.GetGpusPerDomain();
    model.FitDp(base.GetNRanks());
    // The front-end's traffic: token ids in, the training state out (Megatron-style
    // checkpoint: every rank writes its own shard, 2 + 4 + 8 + 2 B per parameter).
    const uint32_t m = std::max<uint32_t>(model.microBatches, 1);
    model.loadBytes = loadTokens ? uint64_t(model.microBatch) * model.seq * m * 4 : 0;
    model.checkpointBytes =
        checkpointInterval
            ? TransformerTraceGenerator(model).DenseParamsPerRank(0) * 16 / checkpointInterval
            : 0;
    WorkloadTrace trace = TransformerTraceGenerator(model).GenerateTrace(); // throws InputError
    std::printf("plane-sizing: GPT-like %u layers, hidden %u, seq %u, micro-batch %u; TP %u x "
                "PP %u x DP %u on %s x %u, %u iteration(s); per first-stage GPU and iteration "
                "%llu B loaded, per GPU %llu B checkpointed; knee: next doubling gains < %g%%; "
                "fidelity %s\n",
                model.layers,
                model.hidden,
                model.seq,
                model.microBatch,
                model.tp,
                model.pp,
                model.dp,
                base.preset.c_str(),
                base.servers,
                model.iterations,
                static_cast<unsigned long long>(model.loadBytes),
                static_cast<unsigned long long>(model.checkpointBytes),
                100 * threshold,
                base.GetFidelityName().c_str());
    const auto wallStart = std::chrono::steady_clock::now();
    // One replay per (plane, factor); factor 1 is the same cluster for every plane: run once.
    std::map<std::pair<int, double>, StudyResult> runs;
    auto replay = [&](ClusterPlane plane, double factor) -> const StudyResult& {
        const std::pair<int, double> key{factor == 1 ? -1 : static_cast<int>(plane), factor};
        auto it = runs.find(key);
        if (it != runs.end())
        {
            return it->second;
        }
        ClusterConfig config = base;
        ScalePlaneBandwidth(config, plane, factor);
        const std::string label =
            factor == 1 ? "preset" : ClusterPlaneName(plane) + "-" + FactorName(factor);
        RunParameters params;
        params.Set("plane", factor == 1 ? "none" : ClusterPlaneName(plane));
        params.Set("factor", factor);
        model.AddToRunParameters(params);
        params.Set("threshold", threshold);
        params.Set("checkpointInterval", checkpointInterval);
        return runs[key] = RunStudyCase(run,
                                        config,
                                        WorkloadTrace(trace),
                                        model.IterationMarker(),
                                        label,
                                        seed,
                                        params);
    };

    std::printf("%-12s", "iteration");
    for (double f : factors)
    {
        std::printf(" %10s", FactorName(f).c_str());
    }
    std::printf("   knee\n");
    std::map<ClusterPlane, PlaneKnee> knees;
    std::map<ClusterPlane, bool> idle;
    for (ClusterPlane plane : planes)
    {
        std::vector<PlaneSweepPoint> points;
        std::printf("%-12s", ClusterPlaneName(plane).c_str());
        bool traffic = false;
        for (double f : factors)
        {
            const StudyResult& r = replay(plane, f);
            if (!r.complete)
            {
                std::cerr << "\nplane-sizing: " << ClusterPlaneName(plane) << " x" << f
                          << ": replay incomplete\n"
                          << r.stuckReport;
                return 2;
            }
            auto it = r.planes.find(ClusterPlaneName(plane));
            // A flow plane's devices count no bytes (doc/flow-mode.md): assume it carries some.
            traffic = traffic || base.IsFlowPlane(plane) ||
                      (it != r.planes.end() && it->second.txBytes > 0);
            points.push_back({f, r.meanIterationNs});
            std::printf(" %7.3f ms", r.meanIterationNs / 1e6);
            std::fflush(stdout);
        }
        const PlaneKnee knee = FindPlaneKnee(points, threshold);
        knees[plane] = knee;
        idle[plane] = !traffic;
        std::printf("   %s%s%s\n",
                    knee.inSweep ? "" : ">= ",
                    FactorName(knee.factor).c_str(),
                    traffic ? "" : " (no traffic on this plane in this job)");
    }

    // Per-GPU bandwidth at the preset and at each plane's knee (unswept planes: the preset).
    const ClusterPlane all[] = {ClusterPlane::NVLINK,
                                ClusterPlane::INFINIBAND,
                                ClusterPlane::ETHERNET};
    double preset[3];
    double atKnee[3];
    for (int i = 0; i < 3; ++i)
    {
        preset[i] = GetPlanePerGpu_gbit_per_s(base, all[i]);
        auto it = knees.find(all[i]);
        atKnee[i] = preset[i] * (it == knees.end() ? 1.0 : it->second.factor);
    }
    // The ratio as cluster-describe prints it (smallest = 1) and scaled to InfiniBand = 4,
    // the claim's form (an idle plane's knee at the smallest factor makes it the smallest).
    auto ibFour = [](const double* v) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.3g : 4 : %.3g", 4 * v[0] / v[1], 4 * v[2] / v[1]);
        return std::string(buf);
    };
    std::printf("\n%-14s %8s %11s %9s   %-22s %s\n",
                "per-GPU Gb/s",
                "nvlink",
                "infiniband",
                "ethernet",
                "nv : ib : eth",
                "same, ib = 4");
    std::printf("%-14s %8g %11g %9g   %-22s %s\n",
                "preset",
                preset[0],
                preset[1],
                preset[2],
                FormatPlaneRatio(preset[0], preset[1], preset[2]).c_str(),
                ibFour(preset).c_str());
    std::printf("%-14s %8g %11g %9g   %-22s %s\n",
                "at the knees",
                atKnee[0],
                atKnee[1],
                atKnee[2],
                FormatPlaneRatio(atKnee[0], atKnee[1], atKnee[2]).c_str(),
                ibFour(atKnee).c_str());
    std::printf("%-14s %8s %11s %9s   %-22s %s\n", "claim", "", "", "", "18 : 4 : 1", "18 : 4 : 1");
    for (const auto& [plane, knee] : knees)
    {
        if (!knee.inSweep)
        {
            std::printf("%s still gains >= %g%% at the largest factor: its knee lies beyond the "
                        "sweep\n",
                        ClusterPlaneName(plane).c_str(),
                        100 * threshold);
        }
        if (idle[plane])
        {
            std::printf("%s carries no traffic in this job: its knee is the smallest factor and "
                        "the ratio's %s term is meaningless\n",
                        ClusterPlaneName(plane).c_str(),
                        ClusterPlaneName(plane).c_str());
        }
    }
    std::printf(
        "(%zu replays, %.1f s wall)\n",
        runs.size(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count());
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("plane-sizing");
    return run.Main([&]() { return PlaneSizing(run, argc, argv); });
}
