/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Wall time, simulator events and packet-hops of one ring allreduce on dgx-h100 servers, as
 * collective-bench runs it (ClusterHelper transport, CollectiveEngine).  Targets: 1 GiB on
 * 8, 64 and 512 GPUs (64 GPUs under 60 s) and a bytes sweep at 16 GPUs; cost should be
 * linear in packet-hops, i.e. events_per_hop and wall_ns_per_hop the same in every row.
 */
#include "bench-meter.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/scenario-run.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <benchmark/benchmark.h>
#include <string>

using namespace ns3;

namespace
{

void
RunAllReduceDgxH100(benchmark::State& state, const std::string& algorithm)
{
    const auto servers = static_cast<uint32_t>(state.range(0));
    const auto bytes = static_cast<uint64_t>(state.range(1)) << 20;
    const auto granularityBytes = static_cast<uint32_t>(state.range(2)) << 10;
    bench::RunMeter meter;
    for (auto _ : state)
    {
        state.PauseTiming();
        ClusterConfig c;
        c.ApplyPreset("dgx-h100");
        c.servers = servers;
        ClusterHelper cluster(c);
        if (granularityBytes > 0)
        {
            cluster.SetNvLinkDeviceAttribute("Granularity", UintegerValue(granularityBytes));
        }
        // As collective-bench: CRC values change no timing (see CollectiveBenchOptions::ibCrcs).
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        const std::string error = cluster.TryBuild();
        if (!error.empty())
        {
            state.SkipWithError(error.c_str());
            break;
        }
        ScenarioRun::SetUpSimulation(cluster);
        // The preset's endpoint set (h100), as collective-bench runs it.
        Ptr<CollectiveEngine> engine =
            cluster.InstallCollectiveEngine(cluster.InstallTransport("world"));
        CollectiveBenchOptions o;
        o.algorithm = algorithm;
        o.inPlace = "out"; // one collective timed, as before the in-place pass
        std::vector<uint32_t> ranks;
        for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
        {
            ranks.push_back(r);
        }
        state.ResumeTiming();

        // Only the simulation is timed: building the cluster is cluster-build-bench's.
        meter.Start();
        const auto rows = CollectiveBenchRun(o, ranks, {bytes}, engine);
        meter.Stop();

        state.PauseTiming();
        state.counters["sim_ns"] = rows.front().outOfPlace.time_us * 1e3;
        state.counters["busbw_gbyte_per_s"] = rows.front().outOfPlace.busbw_gbyte_per_s;
        state.counters["gpus"] = cluster.GetNRanks();
        state.counters["bytes"] = static_cast<double>(bytes);
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
        state.ResumeTiming();
    }
    meter.Report(state);
}

void
BM_RingAllReduceDgxH100(benchmark::State& state)
{
    RunAllReduceDgxH100(state, "ring");
}

// The tensor-parallel allreduce of the GPT-3 replay (doc/performance.md, "longer cases"):
// NVLS as NCCL runs it inside one server, its cost per allreduce in events.
void
BM_NvlsAllReduceDgxH100(benchmark::State& state)
{
    RunAllReduceDgxH100(state, "nvls");
}

} // namespace

// Args: servers, MiB, NVLink granularity KiB (0: the device default; 16: a quarter of the
// NVLink packets of 4 KiB, the IB ones unchanged).  scripts/bench runs the 16-GPU sweep and
// 8 GPUs by default, the 64- and 512-GPU cases with --full.
BENCHMARK(BM_RingAllReduceDgxH100)
    ->Args({1, 1024, 0})
    ->Args({2, 16, 0})
    ->Args({2, 64, 0})
    ->Args({2, 256, 0})
    ->Args({2, 1024, 0})
    ->Args({8, 1024, 0})
    ->Args({8, 1024, 16})
    ->Args({64, 1024, 0})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// Args: servers, MiB, NVLink granularity KiB (as above).  48 MiB: the GPT-3 replay's TP
// allreduce.
BENCHMARK(BM_NvlsAllReduceDgxH100)
    ->Args({1, 48, 0})
    ->Args({1, 1024, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK_MAIN();
