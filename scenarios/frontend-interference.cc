/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Data loading and checkpoints on the Ethernet front-end during data-parallel training
 * does the front-end delay iterations at its preset bandwidth?
 *   frontend-interference --ethScales=1,0.1 --db=runs.db
 * Four cases per front-end rate: no front-end traffic, data loading (batch i+1 fetched
 * storage -> CPU -> GPU while iteration i runs; iteration i's forward waits for batch i),
 * + asynchronous checkpoint (on its own stream), + synchronous checkpoint (blocks the next
 * step).  The front-end traffic is ns-3 TCP (load/checkpoint trace ops, doc/workload.md).
 * One run row per case (label <case>@<scale>x).
 */
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/nstime.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/study-traces.h"
#include "ns3/trace-native.h"
#include "ns3/workload-study.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

using namespace ns3;

static int
FrontEndInterference(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    ClusterConfig defaults = cluster.GetConfig();
    defaults.cli.servers = 1;
    // Full-duplex point-to-point front-end: the bridged ToR's CSMA segments are half duplex
    // and collapse under TCP at these rates (README).
    defaults.cli.ethFabric = "routed";
    // Static routes send all of a ToR's storage traffic over one aggregation uplink: with
    // one aggregation switch that uplink has the ToR's whole capacity (README).
    defaults.cli.ethAggSwitches = 1;
    cluster.SetConfig(defaults);
    FrontEndJobConfig job;
    Time fwd = MilliSeconds(1);
    Time bwd = MilliSeconds(2);
    Time opt = MicroSeconds(200);
    job.loadBytes = 4ull << 20;
    job.checkpointBytes = 16ull << 20;
    std::string scaleList = "1,0.1";
    std::string db;
    uint64_t seed = 1;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    cmd.AddValue("iterations", "training iterations (the last one is reported)", job.iterations);
    cmd.AddValue("fwd", "forward compute per iteration", fwd);
    cmd.AddValue("bwd", "backward compute per iteration", bwd);
    cmd.AddValue("opt", "optimizer compute per iteration", opt);
    cmd.AddValue("gradBytes", "gradient allreduce per iteration, bytes", job.gradientBytes);
    cmd.AddValue("loadBytes", "input batch per GPU and iteration, bytes", job.loadBytes);
    cmd.AddValue("checkpointBytes",
                 "checkpoint shard per GPU, bytes (one checkpoint per iteration)",
                 job.checkpointBytes);
    cmd.AddValue("ethScales",
                 "front-end rates to run, as factors of the preset's Ethernet and storage rates",
                 scaleList);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters flags;
    flags.Set("ethScales", scaleList);
    flags.Set("seed", seed);
    run.SetRun("frontend-interference", seed, flags);
    cluster.ApplyCommandLine();
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(seed, 1)));
    const ClusterConfig base = cluster.GetConfig();
    job.ranks = base.GetNRanks();
    job.forwardNs = fwd.GetNanoSeconds();
    job.backwardNs = bwd.GetNanoSeconds();
    job.optimizerNs = opt.GetNanoSeconds();
    if (job.iterations < 2)
    {
        throw InputError::Flag("iterations", "at least 2: the first one includes the first load");
    }
    std::vector<double> scales;
    std::stringstream ss(scaleList);
    for (std::string item; std::getline(ss, item, ',');)
    {
        char* end = nullptr;
        const double f = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !(f > 0) || f > 100)
        {
            throw InputError::Flag("ethScales",
                                   "expected factors like 1,0.1 in (0, 100], got '" + item + "'");
        }
        scales.push_back(f);
    }

    std::printf("frontend-interference: DP over %u GPUs (%s x %u, %s front-end); per iteration "
                "fwd %.3f ms, bwd %.3f ms, opt %.3f ms, allreduce %.1f MiB; per GPU: batch "
                "%.1f MiB, checkpoint %.1f MiB\n",
                job.ranks,
                base.preset.c_str(),
                base.servers,
                base.ethFabric.c_str(),
                job.forwardNs / 1e6,
                job.backwardNs / 1e6,
                job.optimizerNs / 1e6,
                job.gradientBytes / 1048576.0,
                job.loadBytes / 1048576.0,
                job.checkpointBytes / 1048576.0);
    std::printf("%9s %-16s %10s %10s %12s %12s %12s %10s\n",
                "eth Gb/s",
                "case",
                "iteration",
                "delay",
                "exposed FE",
                "eth MiB",
                "eth util max",
                "pcie max");

    struct Case
    {
        const char* name;
        bool load;
        bool checkpoint;
        bool sync;
    };

    const Case cases[] = {{"none", false, false, false},
                          {"load", true, false, false},
                          {"load+async-ckpt", true, true, false},
                          {"load+sync-ckpt", true, true, true}};
    for (double scale : scales)
    {
        ClusterConfig config = base;
        config.ethRate_gbit_per_s = base.ethRate_gbit_per_s * scale;
        config.storageRate_gbit_per_s = base.storageRate_gbit_per_s * scale;
        uint64_t baselineNs = 0;
        for (const Case& c : cases)
        {
            FrontEndJobConfig j = job;
            j.loadBytes = c.load ? job.loadBytes : 0;
            j.checkpointBytes = c.checkpoint ? job.checkpointBytes : 0;
            j.syncCheckpoint = c.sync;
            RunParameters params;
            params.Set("case", c.name);
            params.Set("ethScale", scale);
            params.Set("iterations", j.iterations);
            params.Set("fwd_ns", j.forwardNs);
            params.Set("bwd_ns", j.backwardNs);
            params.Set("opt_ns", j.optimizerNs);
            params.Set("gradBytes", j.gradientBytes);
            params.Set("loadBytes", j.loadBytes);
            params.Set("checkpointBytes", j.checkpointBytes);
            params.Set("syncCheckpoint", j.syncCheckpoint);
            char label[64];
            std::snprintf(label, sizeof(label), "%s@%gx", c.name, scale);
            const StudyResult r =
                RunStudyCase(run,
                             config,
                             NativeTraceParser::ParseString(j.Trace(), "frontend-interference"),
                             "opt*",
                             label,
                             seed,
                             params);
            if (!r.complete || r.iterations.empty())
            {
                std::cerr << "frontend-interference: " << label << ": replay incomplete\n"
                          << r.stuckReport;
                return 2;
            }
            const uint64_t iterationNs = r.iterations.back().GetNanoSeconds();
            if (!c.load)
            {
                baselineNs = iterationNs;
            }
            auto plane = [&r](const char* name) {
                auto it = r.planes.find(name);
                return it == r.planes.end() ? StudyPlaneStats() : it->second;
            };
            const double exposedFe =
                r.breakdown.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::FrontEnd)];
            std::printf("%9.0f %-16s %7.3f ms %7.3f ms %9.3f ms %12.1f %11.1f%% %9.1f%%\n",
                        config.ethPortsPerServer * config.ethRate_gbit_per_s,
                        c.name,
                        iterationNs / 1e6,
                        (double(iterationNs) - double(baselineNs)) / 1e6,
                        exposedFe / r.iterations.size() / 1e6,
                        plane("ethernet").txBytes / 1048576.0,
                        100 * plane("ethernet").maxBusyUtil,
                        100 * plane("pcie").maxBusyUtil);
        }
    }
    std::cout << "(iteration: the last one, opt to opt; delay: against 'none' at the same rate; "
                 "exposed FE: front-end op running while the GPU computes nothing, mean per "
                 "rank and iteration, incl. the first batch; eth MiB: wire bytes over all "
                 "front-end link directions; util max: busiest link direction, busy / run)\n";
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("frontend-interference");
    return run.Main([&]() { return FrontEndInterference(run, argc, argv); });
}
