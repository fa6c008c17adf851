/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * One hybrid TP x DP job under the two rank mappings:
 *   tp-on-nvlink: TP groups inside a server (NVLink), DP across servers (InfiniBand);
 *   dp-on-nvlink: DP groups inside a server, TP groups spread over the servers.
 *   mapping-study --servers=2 --layers=2 --db=runs.db
 * TP = GPUs per server, DP = servers.  Prints a side-by-side table; one run row per mapping.
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
#include <iostream>
#include <map>

using namespace ns3;

namespace
{

std::string
Ms(uint64_t ns)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3f ms", ns / 1e6);
    return buf;
}

// The breakdown covers the whole run: per iteration.
uint64_t
PerIteration(const StudyResult& r, uint64_t ns)
{
    return r.iterations.empty() ? ns : ns / r.iterations.size();
}

uint64_t
Exposed(const StudyResult& r, ParallelismKind kind)
{
    return PerIteration(r, r.breakdown.exposedByKindNs[static_cast<std::size_t>(kind)]);
}

} // namespace

static int
MappingStudy(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    ClusterConfig defaults = cluster.GetConfig();
    defaults.cli.servers = 2; // default 2 x dgx-h100; --servers overrides
    cluster.SetConfig(defaults);
    TransformerTraceConfig model;
    model.layers = 2;
    model.hidden = 2048;
    model.seq = 2048;
    model.microBatch = 4;
    model.iterations = 2;
    std::string db;
    uint64_t seed = 1;
    Time sampleInterval = MicroSeconds(10);
    bool linkSamples = false;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    model.AddModelArguments(cmd);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("seed", "RNG seed", seed);
    AddSamplingArguments(cmd, sampleInterval, linkSamples);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters flags;
    flags.Set("seed", seed);
    run.SetRun("mapping-study", seed, flags);
    cluster.ApplyCommandLine();
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(seed, 1)));
    const ClusterConfig config = cluster.GetConfig();
    model.tp = config.gpusPerServer;
    model.dp = config.servers;
    model.globalBatch = model.microBatch * model.dp;

    Ptr<ResultsDatabase> results = run.GetDatabase();
    const std::vector<std::pair<std::string, std::string>> runs = {{"tp-inner", "tp-on-nvlink"},
                                                                   {"dp-inner", "dp-on-nvlink"}};
    std::vector<StudyResult> out;
    std::vector<std::map<std::string, double>> peaks;
    std::vector<double> walls;
    for (const auto& [mapping, label] : runs)
    {
        model.mapping = mapping;
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
        params.Set("mapping", mapping);
        params.Set("layers", model.layers);
        params.Set("hidden", model.hidden);
        params.Set("seq", model.seq);
        params.Set("microBatch", model.microBatch);
        params.Set("iterations", model.iterations);
        params.Set("tp", model.tp);
        params.Set("dp", model.dp);
        params.Set("seed", seed);
        params.Set("sampleInterval_ns", sampleInterval.GetNanoSeconds());
        params.Set("linkSamples", linkSamples);
        config.AddToRunParameters(params);
        run.SetRun(label, seed, params);
        const auto wallStart = std::chrono::steady_clock::now();
        peaks.emplace_back();
        {
            ClusterHelper c(config);
            c.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
            c.Build();
            ScenarioRun::SetUpSimulation(c);
            run.BeginRun();
            Ptr<LinkSampler> sampler =
                c.InstallLinkSampler(linkSamples ? results : nullptr, sampleInterval);
            out.push_back(RunWorkloadStudy(c, std::move(trace), "opt*", results));
            for (auto& [plane, stats] : out.back().planes)
            {
                peaks.back()[plane] = sampler->GetPeakUtilisation(plane);
            }
            run.EndRun(out.back().complete, NanoSeconds(out.back().simEndNs));
        }
        Simulator::Destroy();
        Names::Clear();
        walls.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count());
        if (!out.back().complete)
        {
            std::cerr << label << ": replay incomplete\n" << out.back().stuckReport;
            return 2;
        }
    }
    if (results)
    {
        results->Close();
    }

    std::cout << "mapping-study: GPT-like " << model.layers << " layers, hidden " << model.hidden
              << ", seq " << model.seq << ", micro-batch " << model.microBatch << "; TP "
              << model.tp << " x DP " << model.dp << " on " << config.preset << " x "
              << config.servers << ", " << model.iterations << " iterations, fidelity "
              << config.GetFidelityName() << "\n";
    std::printf("%-28s %18s %18s\n", "", runs[0].second.c_str(), runs[1].second.c_str());
    auto row = [](const char* name, const std::string& a, const std::string& b) {
        std::printf("%-28s %18s %18s\n", name, a.c_str(), b.c_str());
    };
    row("mean iteration", Ms(out[0].meanIterationNs), Ms(out[1].meanIterationNs));
    row("exposed comm / iteration",
        Ms(PerIteration(out[0], out[0].breakdown.exposedCommNs)),
        Ms(PerIteration(out[1], out[1].breakdown.exposedCommNs)));
    row("  exposed TP",
        Ms(Exposed(out[0], ParallelismKind::Tp)),
        Ms(Exposed(out[1], ParallelismKind::Tp)));
    row("  exposed DP",
        Ms(Exposed(out[0], ParallelismKind::Dp)),
        Ms(Exposed(out[1], ParallelismKind::Dp)));
    row("  exposed PP",
        Ms(Exposed(out[0], ParallelismKind::Pp)),
        Ms(Exposed(out[1], ParallelismKind::Pp)));
    // A flow plane's devices count no bytes (doc/flow-mode.md): no traffic or utilisation.
    auto isFlow = [&config](const std::string& name) {
        ClusterPlane p;
        return ClusterPlaneFromName(name, p).empty() && config.IsFlowPlane(p);
    };
    std::vector<std::string> busiest;
    for (const auto& r : out)
    {
        std::string best = "-";
        double util = -1;
        for (const auto& [plane, s] : r.planes)
        {
            if (isFlow(plane))
            {
                continue;
            }
            if (s.busyUtil > util)
            {
                util = s.busyUtil;
                char buf[64];
                std::snprintf(buf, sizeof(buf), "%s %.1f%%", plane.c_str(), 100 * util);
                best = buf;
            }
        }
        busiest.push_back(best);
    }
    row("busiest plane (busy util)", busiest[0], busiest[1]);
    const std::string scaleOut = ClusterPlaneName(cluster.GetConfig().GetScaleOutPlane());
    for (const std::string& plane : {std::string("nvlink"), scaleOut})
    {
        if (isFlow(plane))
        {
            row((plane + " tx, busy, peak").c_str(), "- (flow plane)", "- (flow plane)");
            continue;
        }
        std::string cells[2];
        for (int i = 0; i < 2; ++i)
        {
            auto it = out[i].planes.find(plane);
            char buf[64];
            std::snprintf(buf,
                          sizeof(buf),
                          "%.0f MiB %.0f%% %.0f%%",
                          it == out[i].planes.end() ? 0.0 : it->second.txBytes / 1048576.0,
                          it == out[i].planes.end() ? 0.0 : 100 * it->second.busyUtil,
                          100 * peaks[i][plane]);
            cells[i] = buf;
        }
        row((std::string(plane) + " tx, busy, peak").c_str(), cells[0], cells[1]);
    }
    char w0[32];
    char w1[32];
    std::snprintf(w0, sizeof(w0), "%.1f s", walls[0]);
    std::snprintf(w1, sizeof(w1), "%.1f s", walls[1]);
    row("wall", w0, w1);
    std::cout << "(exposed: mean per rank and iteration; tx and busy: GPU-side link ends of the "
                 "plane, busy time / simulated time; peak: busiest link of the plane over one "
                 "sample interval)\n";
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("mapping-study");
    return run.Main([&]() { return MappingStudy(run, argc, argv); });
}
