/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Replays a training workload on a cluster built from the shared cluster flags, e.g.
 *   cluster-replay --preset=dgx-h100 --servers=2 --trace=job.trace --db=runs.db
 *   cluster-replay --trace=SimAI_example_microAllReduce.txt --format=simai --servers=1
 *   cluster-replay --trace=job --format=chakra   (Chakra: job.0.et, job.1.et, ...)
 * Prints iteration times and exposed communication per parallelism kind and plane;
 * writes runs, nodes, links, flows, collectives and ops rows.  Exit status: 0 on
 * success, 1 on bad input (ScenarioRun: only a `failed` run row with the message),
 * 2 when the replay could not complete (the stuck report goes to stderr).
 */
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-engine.h"
#include "ns3/command-line.h"
#include "ns3/distributed-run.h"
#include "ns3/loggops-cost.h"
#include "ns3/pointer.h"
#include "ns3/progress-reporter.h"
#include "ns3/results-database.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-chakra.h"
#include "ns3/trace-goal.h"
#include "ns3/trace-native.h"
#include "ns3/trace-simai.h"
#include "ns3/workload-replay.h"
#include "ns3/workload-study.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

using namespace ns3;

namespace
{

std::string
FormatMs(uint64_t ns)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3f ms", ns / 1e6);
    return buf;
}

} // namespace

static int
ClusterReplay(ScenarioRun& run, int argc, char* argv[])
{
    DistributedRun::Enable(&argc, &argv); // ns-3 MPI when started by mpirun (doc/cluster.md)
    ClusterHelper cluster;
    std::string tracePath;
    std::string format = "native";
    std::string db;
    std::string label = "cluster-replay";
    uint64_t seed = 1;
    std::string marker;
    uint32_t simaiRanks = 0;
    double nsPerTick = 1.0;
    uint32_t passes = 1;
    bool ibCrcs = false;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    cmd.AddValue("trace", "workload file", tracePath);
    cmd.AddValue("format", "native, simai, goal or chakra (--trace=PREFIX of PREFIX.r.et)", format);
    cmd.AddValue("db", "results database (empty: none)", db);
    cmd.AddValue("label", "label of the runs row", label);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("marker",
                 "label glob ending an iteration, e.g. 'step.*' (empty: whole trace)",
                 marker);
    cmd.AddValue("simaiRanks",
                 "simai: ranks (0: all_gpus of the header, else the cluster's)",
                 simaiRanks);
    cmd.AddValue("nsPerTick", "simai: ns per time unit of the file", nsPerTick);
    cmd.AddValue("passes", "simai: training iterations", passes);
    cmd.AddValue("ibCrcs",
                 "compute InfiniBand ICRC/VCRC values (timing is the same without; off saves "
                 "most of the run time of InfiniBand-heavy jobs)",
                 ibCrcs);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    RunParameters params;
    params.Set("trace", tracePath);
    params.Set("format", format);
    params.Set("db", db);
    params.Set("label", label);
    params.Set("seed", seed);
    params.Set("marker", marker);
    params.Set("simaiRanks", simaiRanks);
    params.Set("nsPerTick", nsPerTick);
    params.Set("passes", passes);
    params.Set("ibCrcs", ibCrcs);
    run.SetRun(label, seed, params);
    cluster.ApplyCommandLine();
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(seed, 1)));
    cluster.GetConfig().AddToRunParameters(params);
    params.AddGlobalValues();
    run.SetRun(label, seed, params);

    const uint32_t clusterRanks = cluster.GetConfig().GetNRanks();
    WorkloadTrace trace;
    try
    {
        if (tracePath.empty())
        {
            throw InputError::Flag("trace", "--trace=FILE is required");
        }
        if (format == "native")
        {
            trace = NativeTraceParser::ParseFile(tracePath);
        }
        else if (format == "simai")
        {
            SimAiWorkload w = SimAiWorkloadImporter::ParseFile(tracePath);
            SimAiImportOptions options;
            options.ranks = simaiRanks ? simaiRanks : (w.allGpus ? 0 : clusterRanks);
            options.nsPerTick = nsPerTick;
            options.passes = passes;
            // ASTRA-sim's first network dimension: the GPUs of one server.
            options.firstDimension = cluster.GetConfig().gpusPerServer;
            trace = SimAiWorkloadImporter::ToTrace(w, options, tracePath);
        }
        else if (format == "goal")
        {
            trace = GoalScheduleImporter::ImportFile(tracePath);
        }
        else if (format == "chakra")
        {
            // ASTRA-sim's communicator-group file, when our metadata table is absent
            const std::string groups = tracePath + ".comm-groups.json";
            trace = ChakraTraceImporter::ImportFiles(tracePath,
                                                     std::ifstream(groups).good() ? groups
                                                                                  : std::string());
        }
        else
        {
            throw WorkloadError("command line",
                                0,
                                "format",
                                "expected native, simai, goal or chakra, got '" + format + "'");
        }
        trace.CheckStorageNodes(cluster.GetConfig().storageNodes);
    }
    catch (const WorkloadError& e)
    {
        return run.Fail(e);
    }
    if (trace.numRanks > clusterRanks)
    {
        return run.Fail(InputError(
            tracePath,
            0,
            "ranks",
            "the trace needs " + std::to_string(trace.numRanks) + " ranks but the cluster has " +
                std::to_string(clusterRanks) + " GPUs (" + cluster.GetConfig().preset + " x " +
                std::to_string(cluster.GetConfig().servers) + " servers)"));
    }
    for (const auto& w : trace.warnings)
    {
        std::cerr << "warning: " << w << "\n";
    }
    // GOAL's host costs (set with --ns3::LogGopsCost::Overhead=2us and so on) in the run row.
    Ptr<LogGopsCost> logGops;
    if (trace.logGops)
    {
        logGops = CreateObject<LogGopsCost>();
        params.AddAttributes("loggops.", *logGops);
        run.SetRun(label, seed, params);
    }

    const auto wallStart = std::chrono::steady_clock::now();
    cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(ibCrcs));
    cluster.Build();
    ScenarioRun::SetUpSimulation(cluster);
    run.BeginRun();
    Ptr<ResultsDatabase> results = run.GetDatabase();
    if (results)
    {
        cluster.WriteNodes(results);
    }
    Ptr<GpuTransport> transport = cluster.InstallTransport();
    Ptr<CollectiveEngine> engine = cluster.InstallCollectiveEngine(transport);
    Ptr<WorkloadReplay> replay = CreateObject<WorkloadReplay>();
    replay->SetAttribute("IterationMarker", StringValue(marker));
    if (logGops)
    {
        replay->SetAttribute("LogGopsCost", PointerValue(logGops));
    }
    const uint32_t traceRanks = trace.numRanks;
    const uint64_t traceOps = trace.CountOps();
    replay->SetTrace(std::move(trace));
    replay->SetTransport(transport);
    replay->SetCollectiveEngine(engine);
    AttachFrontEnd(cluster, replay, results);
    if (results)
    {
        transport->SetResultsDatabase(results);
        engine->SetResultsDatabase(results);
        replay->SetResultsDatabase(results);
    }
    replay->Start();
    // A status line on a terminal only (sweeps and pipes stay quiet).
    Ptr<ProgressReporter> progress = CreateObject<ProgressReporter>();
    progress->Start();
    Simulator::Run();
    progress->Stop();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

    std::cout << "cluster-replay: " << tracePath << " (" << format << "): " << traceRanks
              << " ranks, " << traceOps << " ops on " << cluster.GetConfig().preset << " x "
              << cluster.GetConfig().servers << " (" << clusterRanks << " GPUs)\n";
    int status = 0;
    if (!replay->IsComplete())
    {
        std::cerr << replay->GetStuckReport();
        status = 2;
    }
    else
    {
        const std::vector<Time> it = replay->GetIterationTimes();
        std::vector<std::string> names = replay->GetIterationMarkers();
        uint64_t sum = 0;
        for (std::size_t i = 0; i < it.size(); ++i)
        {
            sum += it[i].GetNanoSeconds();
            if (i < 8 || i + 1 == it.size())
            {
                std::cout << "iteration " << i << (i < names.size() ? " (" + names[i] + ")" : "")
                          << ": " << FormatMs(it[i].GetNanoSeconds()) << "\n";
            }
        }
        if (it.size() > 1)
        {
            std::cout << "mean iteration: " << FormatMs(sum / it.size()) << " over " << it.size()
                      << " iterations\n";
        }
        const ReplayBreakdown b = replay->GetMeanBreakdown();
        std::cout << "per rank (mean): compute " << FormatMs(b.computeNs) << ", communication "
                  << FormatMs(b.commNs) << ", exposed communication " << FormatMs(b.exposedCommNs)
                  << "\n";
        std::cout << "exposed communication by parallelism:";
        for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
        {
            std::cout << " " << ParallelismKindName(static_cast<ParallelismKind>(k)) << " "
                      << FormatMs(b.exposedByKindNs[k])
                      << (k + 1 < kNumParallelismKinds ? "," : "");
        }
        std::cout << "\nexposed communication by plane:";
        for (const auto& [plane, ns] : b.exposedByPlaneNs)
        {
            std::cout << " " << plane << " " << FormatMs(ns) << " (busy "
                      << FormatMs(b.commByPlaneNs.at(plane)) << ")";
        }
        std::cout << "\n";
    }
    std::cout << "messages " << transport->GetMessagesCompleted() << ", simulated "
              << FormatMs(Simulator::Now().GetNanoSeconds()) << ", wall " << wall << " s\n";
    if (cluster.GetCheckConservation())
    {
        const CreditLinkConservationReport check = cluster.CheckConservation(status == 0);
        (check.Ok() ? std::cout : std::cerr) << check.Describe();
        status = check.Ok() ? status : 2;
    }
    if (results)
    {
        cluster.WriteLinks(results);
    }
    run.EndRun(status == 0, Simulator::Now());
    return status;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("cluster-replay");
    return run.Main([&]() { return ClusterReplay(run, argc, argv); });
}
