/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Data-parallel training of a fixed GPT-like model on dgx-h100 servers:
 * one run per server count, DP over every GPU, one micro-batch per GPU
 * (weak scaling: compute per iteration stays constant, the gradient allreduce grows).
 *   dp-scaling --servers=1,2,4 --db=runs.db
 * Prints iteration time, exposed gradient-allreduce time, per-plane bytes and busy
 * utilisation per server count; one run row per server count (label dp-<servers>).
 */
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/names.h"
#include "ns3/results-database.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/simulator.h"
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

static int
DpScaling(ScenarioRun& run, int argc, char* argv[])
{
    std::string serverList = "1,2,4";
    TransformerTraceConfig model;
    model.layers = 2;
    model.hidden = 1024;
    model.seq = 1024;
    model.iterations = 1;
    std::string db;
    uint64_t seed = 1;
    Time sampleInterval = MicroSeconds(10);
    bool linkSamples = false;
    CommandLine cmd(__FILE__);
    cmd.AddValue("servers", "comma-separated dgx-h100 server counts", serverList);
    model.AddModelArguments(cmd);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("seed", "RNG seed", seed);
    std::string endpoint = "auto";
    cmd.AddValue("endpoint",
                 "GPU/NCCL endpoint parameters: auto (h100), ideal (links only), a100, h100, b200",
                 endpoint);
    std::string fidelity = "packet";
    cmd.AddValue("fidelity",
                 "packet or flow, for all planes or per plane (nvlink:flow,infiniband:packet)",
                 fidelity);
    std::string scaleOut = "infiniband";
    cmd.AddValue("scaleOut", "scale-out fabric: infiniband or roce (doc/roce.md)", scaleOut);
    AddSamplingArguments(cmd, sampleInterval, linkSamples);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters flags;
    flags.Set("servers", serverList);
    flags.Set("seed", seed);
    flags.Set("endpoint", endpoint);
    run.SetRun("dp-scaling", seed, flags);
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(seed, 1)));

    std::vector<uint32_t> servers;
    std::stringstream ss(serverList);
    for (std::string item; std::getline(ss, item, ',');)
    {
        char* end = nullptr;
        const unsigned long n = std::strtoul(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || n == 0 || n > 4096)
        {
            throw InputError::Flag("servers", "expected counts like 1,2,4, got '" + item + "'");
        }
        servers.push_back(static_cast<uint32_t>(n));
    }

    Ptr<ResultsDatabase> results = run.GetDatabase();
    std::printf("dp-scaling: GPT-like %u layers, hidden %u, seq %u, micro-batch %u per GPU, "
                "%u iteration(s), dgx-h100\n",
                model.layers,
                model.hidden,
                model.seq,
                model.microBatch,
                model.iterations);
    std::printf("%7s %5s %14s %14s %26s %26s %7s\n",
                "servers",
                "GPUs",
                "iteration",
                "exposed DP",
                "nvlink MiB (busy, peak)",
                (scaleOut + " MiB (busy, peak)").c_str(),
                "wall");
    for (uint32_t n : servers)
    {
        ClusterConfig config;
        config.ApplyPreset("dgx-h100");
        config.servers = n;
        config.endpoint = endpoint;
        config.fidelity = fidelity;
        config.scaleOut = scaleOut;
        std::string field;
        const std::string invalid = config.Validate(&field);
        if (!invalid.empty())
        {
            throw InputError::Flag(field, invalid);
        }
        model.tp = 1;
        model.dp = n * config.gpusPerServer;
        model.globalBatch = model.microBatch * model.dp;
        WorkloadTrace trace;
        try
        {
            TransformerTraceGenerator gen(model);
            gen.Validate();
            trace = gen.GenerateTrace();
        }
        catch (const WorkloadError& e)
        {
            return run.Fail(e);
        }
        RunParameters params;
        params.Set("layers", model.layers);
        params.Set("hidden", model.hidden);
        params.Set("seq", model.seq);
        params.Set("microBatch", model.microBatch);
        params.Set("iterations", model.iterations);
        params.Set("dp", model.dp);
        params.Set("seed", seed);
        params.Set("sampleInterval_ns", sampleInterval.GetNanoSeconds());
        params.Set("linkSamples", linkSamples);
        config.AddToRunParameters(params);
        run.SetRun("dp-" + std::to_string(n), seed, params);
        const auto wallStart = std::chrono::steady_clock::now();
        StudyResult r;
        std::map<std::string, double> peak;
        {
            ClusterHelper cluster(config);
            cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
            const std::string error = cluster.TryBuild();
            if (!error.empty())
            {
                return run.Fail(InputError::Flag("servers", std::to_string(n) + ": " + error));
            }
            ScenarioRun::SetUpSimulation(cluster);
            run.BeginRun();
            Ptr<LinkSampler> sampler =
                cluster.InstallLinkSampler(linkSamples ? results : nullptr, sampleInterval);
            r = RunWorkloadStudy(cluster, std::move(trace), "opt*", results);
            for (const std::string& p :
                 {std::string("nvlink"), ClusterPlaneName(config.GetScaleOutPlane())})
            {
                peak[p] = sampler->GetPeakUtilisation(p);
            }
            run.EndRun(r.complete, NanoSeconds(r.simEndNs));
        }
        Simulator::Destroy();
        Names::Clear();
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
        if (!r.complete)
        {
            std::cerr << "dp-scaling: " << n << " servers: replay incomplete\n" << r.stuckReport;
            return 2;
        }
        auto plane = [&r, &peak](const char* name) {
            auto it = r.planes.find(name);
            char buf[64];
            std::snprintf(buf,
                          sizeof(buf),
                          "%.1f (%.1f%%, %.0f%%)",
                          it == r.planes.end() ? 0.0 : it->second.txBytes / 1048576.0,
                          it == r.planes.end() ? 0.0 : 100 * it->second.busyUtil,
                          100 * peak[name]);
            return std::string(buf);
        };
        std::printf("%7u %5u %11.3f ms %11.3f ms %26s %26s %5.1f s\n",
                    n,
                    model.dp,
                    r.meanIterationNs / 1e6,
                    r.breakdown.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::Dp)] /
                        1e6 / std::max<std::size_t>(r.iterations.size(), 1),
                    plane("nvlink").c_str(),
                    plane(ClusterPlaneName(config.GetScaleOutPlane()).c_str()).c_str(),
                    wall);
    }
    if (results)
    {
        results->Close();
    }
    std::cout << "(exposed DP: mean per rank and iteration; busy: GPU-side link ends, busy time / "
                 "simulated time; peak: busiest link of the plane over one sample interval)\n";
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("dp-scaling");
    return run.Main([&]() { return DpScaling(run, argc, argv); });
}
