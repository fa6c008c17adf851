/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Expert-parallel all-to-all: the same EP group of experts on one
 * GB200 NVL72 NVLink domain versus spread over DGX H100 servers (8 GPUs each), where the
 * all-to-all crosses InfiniBand.
 *   moe-alltoall --ep=72 --tokens=512 --hidden=4096 --topk=2 --db=runs.db
 * Per MoE layer: dispatch all-to-all, expert MLP, combine all-to-all (and the same three
 * in backward, expert compute 2x).  Cluster flags (--ibRate_gbit_per_s, --nvlinkGen, ...) apply on
 * top of both presets.  One run row per platform.
 */
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/study-traces.h"
#include "ns3/trace-native.h"
#include "ns3/workload-study.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

using namespace ns3;

static int
MoeAllToAll(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    MoeAllToAllConfig moe;
    std::string db;
    uint64_t seed = 1;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    cmd.AddValue("ep", "expert-parallel group size (GPUs; a multiple of 8)", moe.ep);
    cmd.AddValue("layers", "MoE layers", moe.layers);
    cmd.AddValue("iterations", "training iterations", moe.iterations);
    cmd.AddValue("tokens", "tokens per GPU (micro-batch x sequence)", moe.tokens);
    cmd.AddValue("hidden", "hidden size", moe.hidden);
    cmd.AddValue("topk", "experts per token", moe.topk);
    cmd.AddValue("efficiency", "fraction of the H100 BF16 peak the experts reach", moe.efficiency);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters flags;
    flags.Set("ep", moe.ep);
    flags.Set("seed", seed);
    run.SetRun("moe-alltoall", seed, flags);
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(seed, 1)));
    if (moe.ep < 8 || moe.ep % 8 != 0)
    {
        throw InputError::Flag("ep", "expected a multiple of 8 (whole dgx-h100 servers)");
    }
    if (moe.layers == 0 || moe.iterations == 0 || moe.tokens == 0 || moe.hidden == 0 ||
        moe.topk == 0 || !(moe.efficiency > 0 && moe.efficiency <= 1))
    {
        throw InputError::Flag("layers",
                               "layers, iterations, tokens, hidden, topk must be > 0 "
                               "and 0 < efficiency <= 1");
    }
    const uint64_t bytes = moe.AllToAllBytes();
    // Both platforms run the same experts: the H100 figure sets the compute of both, so the
    // difference is the network alone.
    std::printf("moe-alltoall: EP %u, %u layer(s) x %u iteration(s), %llu tokens/GPU, hidden %u, "
                "top-%u: all-to-all %.2f MiB per rank (%.1f KiB per peer), expert forward "
                "%.3f ms\n",
                moe.ep,
                moe.layers,
                moe.iterations,
                static_cast<unsigned long long>(moe.tokens),
                moe.hidden,
                moe.topk,
                bytes / 1048576.0,
                bytes / 1024.0 / moe.ep,
                moe.ExpertForwardNs() / 1e6);
    // Both platforms' presets scale out over InfiniBand unless --scaleOut says otherwise.
    const std::string scaleOut =
        cluster.GetConfig().cli.scaleOut.empty() ? "infiniband" : cluster.GetConfig().cli.scaleOut;
    std::printf("%-12s %9s %10s %10s %10s %10s %9s %12s %20s %20s\n",
                "platform",
                "a2a/layer",
                "model",
                "algbw",
                "busbw",
                "iteration",
                "exposed",
                "servers",
                "nvlink MiB (busy)",
                (scaleOut + " MiB (busy)").c_str());
    const bool roce = scaleOut == "roce";
    const std::pair<const char*, const char*> platforms[] = {
        {"gb200-nvl72", "nvl72"},
        {"dgx-h100", roce ? "dgx-h100-roce" : "dgx-h100-ib"}};
    for (const auto& [preset, label] : platforms)
    {
        ClusterConfig config;
        config.cli = cluster.GetConfig().cli;
        config.cli.preset = preset;
        std::string field;
        const std::string error = config.ApplyCommandLine(&field);
        if (!error.empty())
        {
            throw InputError::Flag(field, error);
        }
        config.servers = (moe.ep + config.gpusPerServer - 1) / config.gpusPerServer;
        if (config.serversPerDomain > 1)
        {
            // The whole EP group in one NVLink domain (72 GPUs for NVL72).
            config.serversPerDomain = config.servers;
        }
        if (config.GetNRanks() != moe.ep)
        {
            throw InputError::Flag("ep",
                                   std::string(preset) + ": " + std::to_string(moe.ep) +
                                       " GPUs are not whole servers of " +
                                       std::to_string(config.gpusPerServer));
        }
        RunParameters params;
        params.Set("platform", label);
        params.Set("ep", moe.ep);
        params.Set("layers", moe.layers);
        params.Set("iterations", moe.iterations);
        params.Set("tokens", moe.tokens);
        params.Set("hidden", moe.hidden);
        params.Set("topk", moe.topk);
        params.Set("efficiency", moe.efficiency);
        params.Set("alltoallBytes", bytes);
        const StudyResult r =
            RunStudyCase(run,
                         config,
                         NativeTraceParser::ParseString(moe.Trace(), "moe-alltoall"),
                         "bdisp0.*",
                         label,
                         seed,
                         params);
        if (!r.complete)
        {
            std::cerr << "moe-alltoall: " << label << ": replay incomplete\n" << r.stuckReport;
            return 2;
        }
        // EP time per rank over 4 all-to-alls per layer and iteration (they never overlap).
        const double a2aNs =
            double(r.breakdown.commByKindNs[static_cast<std::size_t>(ParallelismKind::Ep)]) /
            (4.0 * moe.layers * moe.iterations);
        const double modelNs = MoeAllToAllModelNs(config, moe.ep, bytes);
        const double algbw = bytes / a2aNs; // GB/s (10^9 B/s), nccl-tests' unit
        auto plane = [&r](const char* name) {
            auto it = r.planes.find(name);
            char buf[64];
            std::snprintf(buf,
                          sizeof(buf),
                          "%.1f (%.1f%%)",
                          it == r.planes.end() ? 0.0 : it->second.txBytes / 1048576.0,
                          it == r.planes.end() ? 0.0 : 100 * it->second.busyUtil);
            return std::string(buf);
        };
        char servers[32];
        std::snprintf(servers, sizeof(servers), "%u x %u", config.servers, config.gpusPerServer);
        std::printf("%-12s %6.1f us %7.1f us %5.1f GB/s %5.1f GB/s %7.3f ms %6.3f ms %12s %20s "
                    "%20s\n",
                    label,
                    a2aNs / 1e3,
                    modelNs / 1e3,
                    algbw,
                    algbw * (moe.ep - 1) / moe.ep,
                    r.meanIterationNs / 1e6,
                    r.breakdown.exposedCommNs / 1e6 / moe.iterations,
                    servers,
                    plane("nvlink").c_str(),
                    plane(ClusterPlaneName(config.GetScaleOutPlane()).c_str()).c_str());
    }
    std::cout << "(a2a/layer: mean all-to-all time per rank; model: bytes of the slower plane / "
                 "its per-GPU payload bandwidth; busbw = algbw x (n-1)/n; exposed: "
                 "communication per rank and iteration without compute; busy: GPU-side link "
                 "ends, busy time / simulated time)\n";
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("moe-alltoall");
    return run.Main([&]() { return MoeAllToAll(run, argc, argv); });
}
