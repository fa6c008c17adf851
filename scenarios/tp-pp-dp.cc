/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A hybrid 3D-parallel GPT-3-like job: TP inside each NVLink domain,
 * PP stages and DP replicas across InfiniBand, 1F1B pipeline.
 *   tp-pp-dp --db=runs.db                   # scaled GPT-3 shape on 16 x dgx-h100, minutes
 *   tp-pp-dp --gpt3                         # the full 175B shape: ~400x the traffic, hours
 * Prints compute, exposed TP / PP / DP time, the pipeline bubble against (p-1)/(m+p-1), and
 * per-plane bytes, busy utilisation and exposed time; one run row (label tp-pp-dp).
 */
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
#include <iostream>

using namespace ns3;

static int
TpPpDp(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    ClusterConfig defaults = cluster.GetConfig();
    defaults.cli.servers = 16; // 16 x dgx-h100 = 128 GPUs; --servers overrides
    cluster.SetConfig(defaults);
    // GPT-3 175B: 96 layers, hidden 12288 (96 heads of 128), seq 2048, 32 micro-batches per
    // pipeline.  The default keeps the head size (hidden 3072 = 24 heads of 128), the
    // TP 8 x PP 8 layout and 1F1B, with fewer layers, a shorter sequence and 8 micro-batches
    // so that one iteration replays in minutes.
    TransformerTraceConfig model;
    model.layers = 16;
    model.hidden = 3072;
    model.seq = 512;
    model.vocab = 51200;
    model.microBatch = 1;
    model.microBatches = 8;
    model.pp = 8;
    model.iterations = 1;
    model.pipelineScatterGather = true; // Megatron-LM's default without sequence parallelism
    uint32_t tp = 0;
    bool gpt3 = false;
    std::string db;
    uint64_t seed = 1;
    Time sampleInterval = MicroSeconds(10);
    bool linkSamples = false;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    model.AddModelArguments(cmd);
    cmd.AddValue("gpt3",
                 "the full GPT-3 175B shape: 96 layers, hidden 12288, seq 2048, 32 micro-batches",
                 gpt3);
    cmd.AddValue("tp", "tensor-parallel ranks (0: GPUs per NVLink domain)", tp);
    cmd.AddValue("pp", "pipeline stages; DP = GPUs / (TP x PP)", model.pp);
    cmd.AddValue("scatterGather",
                 "pipeline tensors split over the TP ranks, all-gathered on NVLink (Megatron)",
                 model.pipelineScatterGather);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("seed", "RNG seed", seed);
    AddSamplingArguments(cmd, sampleInterval, linkSamples);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters flags;
    flags.Set("seed", seed);
    run.SetRun("tp-pp-dp", seed, flags);
    cluster.ApplyCommandLine();
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(seed, 1)));
    const ClusterConfig config = cluster.GetConfig();
    if (gpt3)
    {
        model.layers = 96;
        model.hidden = 12288;
        model.seq = 2048;
        model.microBatches = 32;
    }
    model.tp = tp ? tp : config.GetGpusPerDomain();
    const uint32_t gpus = config.GetNRanks();
    model.FitDp(gpus);
    WorkloadTrace trace = TransformerTraceGenerator(model).GenerateTrace(); // throws InputError

    RunParameters params;
    model.AddToRunParameters(params);
    params.Set("gpt3", gpt3);
    params.Set("linkSamples", linkSamples);
    const auto wallStart = std::chrono::steady_clock::now();
    const StudyResult r = RunStudyCase(run,
                                       config,
                                       std::move(trace),
                                       model.IterationMarker(),
                                       "tp-pp-dp",
                                       seed,
                                       params,
                                       sampleInterval,
                                       linkSamples);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    if (!r.complete)
    {
        std::cerr << "tp-pp-dp: replay incomplete\n" << r.stuckReport;
        return 2;
    }

    const double iters = std::max<std::size_t>(r.iterations.size(), 1);
    const double iteration = r.meanIterationNs;
    const ReplayBreakdown& b = r.breakdown;
    auto kind = [](ParallelismKind k) { return static_cast<std::size_t>(k); };
    std::printf("tp-pp-dp: GPT-like %u layers, hidden %u, seq %u, vocab %u, %u micro-batch(es) "
                "of %u; TP %u x PP %u x DP %u (%s) on %s x %u = %u GPUs, %zu iteration(s), "
                "%.1f s wall\n",
                model.layers,
                model.hidden,
                model.seq,
                model.vocab,
                model.microBatches,
                model.microBatch,
                model.tp,
                model.pp,
                model.dp,
                model.schedule.c_str(),
                config.preset.c_str(),
                config.servers,
                gpus,
                r.iterations.size(),
                wall);
    auto row = [iters, iteration](const char* name, double runNs, const std::string& note) {
        const double ns = runNs / iters;
        std::printf("%-34s %10.3f ms %6.1f%%  %s\n",
                    name,
                    ns / 1e6,
                    iteration > 0 ? 100 * ns / iteration : 0.0,
                    note.c_str());
    };
    std::printf("%-34s %13s %7s\n", "per rank and iteration (mean)", "time", "share");
    row("iteration", iteration * iters, "");
    row("compute", b.computeNs, "");
    row("exposed transfer",
        double(b.exposedCommNs) - double(b.waitingNs),
        "no compute, data in flight");
    for (const auto k : {ParallelismKind::Tp, ParallelismKind::Pp, ParallelismKind::Dp})
    {
        const std::string name = std::string("  ") + ParallelismKindName(k);
        row(name.c_str(), b.exposedByKindNs[kind(k)] - b.waitingByKindNs[kind(k)], "");
    }
    // Idle: neither computing nor moving data (a pipeline receive or a collective waiting).
    const double moving = double(b.exposedCommNs) - double(b.waitingNs);
    const double idle = iteration * iters - double(b.computeNs) - moving;
    char ideal[96];
    std::snprintf(ideal,
                  sizeof(ideal),
                  "%s ideal (p-1)/(m+p-1) = %.1f%%",
                  model.schedule == "gpipe" ? "GPipe" : "1F1B",
                  100.0 * (model.pp - 1) / (model.microBatches + model.pp - 1));
    row("idle: pipeline bubble", idle, ideal);
    row("  of which waiting for TP/DP peers",
        double(b.waitingNs) - double(b.waitingByKindNs[kind(ParallelismKind::Pp)]),
        "");

    std::printf("\n%-12s %12s %10s %10s %16s\n",
                "plane",
                "tx MiB",
                "busy util",
                "peak util",
                "exposed/iter");
    std::string dominant = "none";
    uint64_t dominantNs = 0;
    const std::string scaleOut = ClusterPlaneName(config.GetScaleOutPlane());
    for (const std::string& plane : {std::string("nvlink"), scaleOut, std::string("ethernet")})
    {
        auto it = r.planes.find(plane);
        auto ex = b.exposedByPlaneNs.find(plane);
        const uint64_t exposed = ex == b.exposedByPlaneNs.end() ? 0 : ex->second;
        if (exposed > dominantNs)
        {
            dominantNs = exposed;
            dominant = plane;
        }
        std::printf("%-12s %12.1f %9.1f%% %9.0f%% %13.3f ms%s\n",
                    plane.c_str(),
                    it == r.planes.end() ? 0.0 : it->second.txBytes / 1048576.0,
                    it == r.planes.end() ? 0.0 : 100 * it->second.busyUtil,
                    it == r.planes.end() ? 0.0 : 100 * it->second.peakUtil,
                    exposed / iters / 1e6,
                    it == r.planes.end() || it->second.txBytes == 0 ? "  (no traffic in this job)"
                                                                    : "");
    }
    std::printf("dominant plane: %s (%.3f ms of exposed transfer per iteration)\n",
                dominant.c_str(),
                dominantNs / iters / 1e6);
    std::cout << "(per kind: that kind's op open, no compute, some of the rank's data in flight; "
                 "kinds can overlap.  tx and busy util: GPU-side link ends, busy time / "
                 "simulated time; peak: busiest link over one sample interval)\n";
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("tp-pp-dp");
    return run.Main([&]() { return TpPpDp(run, argc, argv); });
}
