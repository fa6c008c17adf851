/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Whole-job scale: one training iteration replayed on a dgx-h100 cluster, wall
 * time (cluster build + replay), events, packet-hops and peak RSS.  Targets: the
 * GPT-3-175B-like hybrid trace (TP 8 x PP 8 x DP 2) on 128 GPUs in under 10 min all-packet
 * (not met now: doc/performance.md), with NVLink fluid at least 5x less CPU than all-packet
 * and the iteration within 3 %; a 1024-GPU data-parallel iteration with a 1 GiB gradient
 * allreduce in under 30 min and 8 GiB.
 * Peak RSS is the process's: scripts/bench runs every case in its own process.
 */
#include "bench-meter.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/scenario-run.h"
#include "ns3/simulator.h"
#include "ns3/trace-native.h"
#include "ns3/trace-transformer-gen.h"
#include "ns3/uinteger.h"
#include "ns3/workload-study.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <string>

using namespace ns3;

namespace
{

// Build the cluster (timed apart), replay the whole trace as one iteration.
void
ReplayOnDgxH100(benchmark::State& state,
                const WorkloadTrace& trace,
                uint32_t servers,
                uint32_t granularityBytes,
                const std::string& fidelity = "packet",
                const std::string& ibSubnets = "one")
{
    bench::RunMeter meter;
    for (auto _ : state)
    {
        const auto buildStart = std::chrono::steady_clock::now();
        ClusterConfig c;
        c.ApplyPreset("dgx-h100");
        c.servers = servers;
        c.fidelity = fidelity;
        c.ibSubnets = ibSubnets;
        ClusterHelper cluster(c);
        if (granularityBytes > 0)
        {
            cluster.SetNvLinkDeviceAttribute("Granularity", UintegerValue(granularityBytes));
        }
        // As cluster-replay: CRC values change no timing.
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        const std::string error = cluster.TryBuild();
        if (!error.empty())
        {
            state.SkipWithError(error.c_str());
            break;
        }
        ScenarioRun::SetUpSimulation(cluster);
        state.counters["build_s"] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - buildStart).count();
        meter.Start();
        const StudyResult r = RunWorkloadStudy(cluster, trace, "", nullptr);
        meter.Stop();
        if (!r.complete)
        {
            state.SkipWithError(("replay stuck: " + r.stuckReport).c_str());
        }
        state.counters["sim_ns"] = static_cast<double>(r.simEndNs);
        state.counters["gpus"] = cluster.GetNRanks();
        state.counters["messages"] = static_cast<double>(r.messages);
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
    }
    meter.Report(state);
}

// A trace of scenarios/traces at a fidelity (--fidelity's values); args: servers, NVLink
// granularity KiB (0: device default).
void
BM_ReplayTrace(benchmark::State& state, const std::string& file, const std::string& fidelity)
{
    const WorkloadTrace trace = NativeTraceParser::ParseFile(AI_FABRIC_TRACES_DIR "/" + file);
    ReplayOnDgxH100(state,
                    trace,
                    static_cast<uint32_t>(state.range(0)),
                    static_cast<uint32_t>(state.range(1)) << 10,
                    fidelity);
}

// The cluster build at flow level, where it is most of the run: the 16-rank demo trace on a
// large dgx-h100 cluster, both GPU planes fluid (the NVLink plane described only, no device;
// doc/flow-mode.md, "The scale targets").  Args: servers.
void
BM_FlowClusterBuild(benchmark::State& state)
{
    const WorkloadTrace trace =
        NativeTraceParser::ParseFile(AI_FABRIC_TRACES_DIR "/demo-tp8-dp2.trace");
    ReplayOnDgxH100(state, trace, static_cast<uint32_t>(state.range(0)), 0, "flow");
}

// Data parallelism over every GPU: 10 ms of compute, then the gradient allreduce (algorithm
// auto: NVLS inside each server, a double binary tree per InfiniBand rail across them).  Args:
// servers, gradient MiB, NVLink granularity KiB (0: device default).
void
BM_DataParallelIteration(benchmark::State& state)
{
    const auto servers = static_cast<uint32_t>(state.range(0));
    const uint32_t gpus = servers * 8;
    const std::string mib = std::to_string(state.range(1));
    const std::string text = "fabric-trace 1\nranks " + std::to_string(gpus) + "\ngroup dp 0-" +
                             std::to_string(gpus - 1) + "\n0-" + std::to_string(gpus - 1) +
                             " fwdbwd compute time=10ms\n0-" + std::to_string(gpus - 1) +
                             " grad allreduce group=dp bytes=" + mib + "MiB after=fwdbwd\n";
    ReplayOnDgxH100(state,
                    NativeTraceParser::ParseString(text, "dp-iteration"),
                    servers,
                    static_cast<uint32_t>(state.range(2)) << 10);
}

// The per-hop cost against cluster size, one plane at a time: 10 ms of compute, then a
// 16 MiB allreduce either inside every server (plane 0: NVLink only, NVLS) or along every
// InfiniBand rail (plane 1: the eight GPUs of a local index across the servers, one rail
// each).  Every GPU does the same work at 16 and at 128 servers.  Args: servers, plane.
void
BM_OnePlaneIteration(benchmark::State& state)
{
    const auto servers = static_cast<uint32_t>(state.range(0));
    const bool rails = state.range(1) != 0;
    const uint32_t gpus = servers * 8;
    std::string text = "fabric-trace 1\nranks " + std::to_string(gpus) + "\n";
    std::string ops = "0-" + std::to_string(gpus - 1) + " fwdbwd compute time=10ms\n";
    const uint32_t groups = rails ? 8 : servers;
    for (uint32_t g = 0; g < groups; ++g)
    {
        std::string members;
        for (uint32_t m = 0; m < (rails ? servers : 8); ++m)
        {
            const uint32_t rank = rails ? m * 8 + g : g * 8 + m;
            members += (members.empty() ? "" : ",") + std::to_string(rank);
        }
        text += "group g" + std::to_string(g) + " " + members + "\n";
        ops +=
            members + " grad allreduce group=g" + std::to_string(g) + " bytes=16MiB after=fwdbwd\n";
    }
    ReplayOnDgxH100(state, NativeTraceParser::ParseString(text + ops, "one-plane"), servers, 0);
}

// The same iteration at flow level (both GPU planes fluid, doc/flow-mode.md) with the
// hierarchical allreduce (a ring per InfiniBand rail between two in-server ring phases on
// NVLink, pipelined slice by slice).  Args: servers, gradient MiB, ring steps in aggregate
// (CollectiveEngine::AggregateRingSteps: each ring pass of a slice one flow per rank).
// At 16,384 servers one subnet cannot hold it: BM_DataParallelIterationFlowPerRail.
WorkloadTrace
DataParallelIterationTrace(uint32_t servers, int64_t mib)
{
    const std::string last = std::to_string(servers * 8 - 1);
    const std::string text = "fabric-trace 1\nranks " + std::to_string(servers * 8) +
                             "\ngroup dp 0-" + last + "\n0-" + last +
                             " fwdbwd compute time=10ms\n0-" + last +
                             " grad allreduce group=dp bytes=" + std::to_string(mib) +
                             "MiB algorithm=hierarchical after=fwdbwd\n";
    return NativeTraceParser::ParseString(text, "dp-iteration-flow");
}

void
BM_DataParallelIterationFlow(benchmark::State& state)
{
    const auto servers = static_cast<uint32_t>(state.range(0));
    Config::SetDefault("ns3::CollectiveEngine::AggregateRingSteps",
                       BooleanValue(state.range(2) != 0));
    ReplayOnDgxH100(state, DataParallelIterationTrace(servers, state.range(1)), servers, 0, "flow");
}

// The same iteration in aggregate with one InfiniBand subnet per rail (--ibSubnets=per-rail),
// which clusters beyond one subnet's LIDs and three radix-64 tiers need.  Args: servers,
// MiB.  The target: 16,384 servers (131,072 GPUs) under 30 min.
void
BM_DataParallelIterationFlowPerRail(benchmark::State& state)
{
    const auto servers = static_cast<uint32_t>(state.range(0));
    Config::SetDefault("ns3::CollectiveEngine::AggregateRingSteps", BooleanValue(true));
    ReplayOnDgxH100(state,
                    DataParallelIterationTrace(servers, state.range(1)),
                    servers,
                    0,
                    "flow",
                    "per-rail");
}

// One iteration of the Llama-70B-like model (TransformerTraceConfig::Llama70b: TP 8 x PP 4,
// four micro-batches of one 8192-token sequence per pipeline, sequence parallelism, ZeRO-1)
// at flow level on 4 x DP dgx-h100 servers.  Args: DP, ring steps in aggregate
// (CollectiveEngine::AggregateRingSteps: the TP rings inside each NVLink domain and the DP
// rings across them, each ring pass one flow per rank).  The target: DP 512 (16,384 GPUs,
// 2,048 servers) under 15 min and 16 GiB.  trace_s and trace_rss_bytes: making the trace.
void
BM_Llama70bIterationFlow(benchmark::State& state)
{
    const auto dp = static_cast<uint32_t>(state.range(0));
    Config::SetDefault("ns3::CollectiveEngine::AggregateRingSteps",
                       BooleanValue(state.range(1) != 0));
    const auto traceStart = std::chrono::steady_clock::now();
    const WorkloadTrace trace =
        TransformerTraceGenerator(TransformerTraceConfig::Llama70b(8, 4, dp, 4)).GenerateTrace();
    state.counters["trace_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - traceStart).count();
    state.counters["trace_ops"] = static_cast<double>(trace.CountOps());
    state.counters["trace_programs"] = trace.ops.CountPrograms();
    state.counters["trace_table_bytes"] = static_cast<double>(trace.ops.MemoryBytes());
    state.counters["trace_rss_bytes"] = bench::PeakRssBytes();
    ReplayOnDgxH100(state, trace, 4 * dp, 0, "flow");
}

} // namespace

// scripts/bench runs demo_tp8_dp2 and 2 servers by default, the 128- and 1024-GPU cases with
// --full.  16 MiB on 128 and 1024 GPUs (same bytes per GPU): how the CPU per packet-hop grows
// with the cluster (doc/performance.md, "Cost at scale").
BENCHMARK_CAPTURE(BM_ReplayTrace,
                  demo_tp8_dp2,
                  std::string("demo-tp8-dp2.trace"),
                  std::string("packet"))
    ->Args({2, 0})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_ReplayTrace,
                  gpt3_175b_tp8_pp8_dp2,
                  std::string("gpt3-175b-tp8-pp8-dp2.trace"),
                  std::string("packet"))
    ->Args({16, 0})
    ->Args({16, 64})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
// NVLink fluid, InfiniBand in packets (doc/flow-mode.md, "Hybrid"): target at least 5x less
// CPU than the all-packet case above, its sim_ns within 3 %.
BENCHMARK_CAPTURE(BM_ReplayTrace,
                  gpt3_175b_tp8_pp8_dp2_hybrid,
                  std::string("gpt3-175b-tp8-pp8-dp2.trace"),
                  std::string("nvlink:flow,infiniband:packet"))
    ->Args({16, 0})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_DataParallelIteration)
    ->Args({2, 64, 0})
    ->Args({16, 16, 0})
    ->Args({128, 16, 0})
    ->Args({128, 1024, 0})
    ->Args({128, 1024, 64})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_OnePlaneIteration)
    ->Args({16, 0})
    ->Args({128, 0})
    ->Args({16, 1})
    ->Args({128, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
// --full: at flow level, every ring step a message on 8 and 16 servers (the allreduce's
// messages grow about as servers²: 1.8 M and 5.8 M), and in aggregate from 16 to 2,048
// servers (doc/flow-mode.md, "Collective schedules").
BENCHMARK(BM_DataParallelIterationFlow)
    ->Args({8, 1024, 0})
    ->Args({16, 1024, 0})
    ->Args({16, 1024, 1})
    ->Args({64, 1024, 1})
    ->Args({256, 1024, 1})
    ->Args({1024, 1024, 1})
    ->Args({2048, 1024, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_DataParallelIterationFlowPerRail)
    ->Args({1024, 1024})
    ->Args({16384, 1024})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// --full: building 512 dgx-h100 servers (4,096 GPUs) at flow level, some 10 s of CPU.
BENCHMARK(BM_FlowClusterBuild)->Arg(512)->Unit(benchmark::kSecond)->Iterations(1);

// --full: the Llama-70B-like iteration at DP 16 (512 GPUs) per step (about 150 s of CPU) and
// in aggregate, and the 16,384-GPU target in aggregate (per step it would be about 1.4 G
// messages, hours of CPU).
BENCHMARK(BM_Llama70bIterationFlow)
    ->Args({16, 0})
    ->Args({16, 1})
    ->Args({512, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

BENCHMARK_MAIN();
