/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Wall time and simulator events of one ring allreduce on dgx-h100 servers, as
 * collective-bench runs it (ClusterHelper transport, CollectiveEngine).  Issue 8 budget:
 * 1 GiB on 8 servers (64 GPUs) in under 60 s.
 */
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <map>

using namespace ns3;

namespace
{

void
BM_RingAllReduceDgxH100(benchmark::State& state)
{
    const auto servers = static_cast<uint32_t>(state.range(0));
    const auto bytes = static_cast<uint64_t>(state.range(1)) << 20;
    const auto granularityBytes = static_cast<uint32_t>(state.range(2)) << 10;
    for (auto _ : state)
    {
        state.PauseTiming();
        ClusterConfig c;
        c.ApplyPreset("dgx-h100");
        c.servers = servers;
        ClusterHelper cluster(c);
        cluster.SetNvLinkDeviceAttribute("Granularity", UintegerValue(granularityBytes));
        // As collective-bench: CRC values change no timing (see CollectiveBenchOptions::ibCrcs).
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        const std::string error = cluster.TryBuild();
        if (!error.empty())
        {
            state.SkipWithError(error.c_str());
            break;
        }
        Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
        engine->SetTransport(cluster.InstallTransport("world"));
        CollectiveBenchOptions o;
        o.algorithm = "ring";
        std::vector<uint32_t> ranks;
        for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
        {
            ranks.push_back(r);
        }
        const uint64_t eventsBefore = Simulator::GetEventCount();
        state.ResumeTiming();

        // Only the simulation is timed: building the cluster is cluster-build-bench's.
        const auto rows = CollectiveBenchRun(o, ranks, {bytes}, engine);

        state.PauseTiming();
        state.counters["events"] = static_cast<double>(Simulator::GetEventCount() - eventsBefore);
        state.counters["sim_us"] = rows.front().time_us;
        state.counters["busbw_GBps"] = rows.front().busbwGbps;
        state.counters["gpus"] = cluster.GetNRanks();
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
        state.ResumeTiming();
    }
}

} // namespace

// Args: servers, MiB, NVLink granularity KiB (4: the device default; 16: a quarter of the
// NVLink packets, the IB ones unchanged).
BENCHMARK(BM_RingAllReduceDgxH100)
    ->Args({1, 1024, 4})
    ->Args({8, 1024, 4})
    ->Args({8, 1024, 16})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

BENCHMARK_MAIN();
