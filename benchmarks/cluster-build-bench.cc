/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Time and memory to build a 128-server dgx-h100 cluster (1024 GPUs, NVLink
 * domains, rail-optimised InfiniBand routed by the subnet manager, IPv4
 * front-end).  Budget: under 30 s and 4 GiB.  Also the cost of the
 * end-of-run conservation check on such a cluster (on by default in every replay),
 * and of the InfiniBand plane's topology and subnet-manager routing alone (no
 * devices) for the large fat trees.
 */
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/infiniband-cluster-plane.h"
#include "ns3/names.h"
#include "ns3/simulator.h"

#include <benchmark/benchmark.h>
#include <sys/resource.h>

using namespace ns3;

namespace
{

double
PeakRssMiB()
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024.0; // Linux: KiB
}

void
BM_BuildDgxH100(benchmark::State& state)
{
    const auto servers = static_cast<uint32_t>(state.range(0));
    const bool global = state.range(1) != 0;
    for (auto _ : state)
    {
        ClusterConfig c;
        c.ApplyPreset("dgx-h100");
        c.servers = servers;
        c.ethRouting = global ? "global" : "static";
        ClusterHelper cluster(c);
        const std::string error = cluster.TryBuild();
        if (!error.empty())
        {
            state.SkipWithError(error.c_str());
            break;
        }
        benchmark::DoNotOptimize(cluster.GetNRanks());
        state.PauseTiming();
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
        state.ResumeTiming();
    }
    state.counters["gpus"] = servers * 8.0;
    state.counters["peak_rss_MiB"] = PeakRssMiB();
}

// ClusterHelper::CheckConservation on a built cluster (every NVLink and IB link end, VC and
// switch); counters are all zero here, but the check reads them all the same.
void
BM_ConservationCheck(benchmark::State& state)
{
    ClusterConfig c;
    c.ApplyPreset("dgx-h100");
    c.servers = static_cast<uint32_t>(state.range(0));
    ClusterHelper cluster(c);
    const std::string error = cluster.TryBuild();
    if (!error.empty())
    {
        state.SkipWithError(error.c_str());
        return;
    }
    for (auto _ : state)
    {
        const CreditLinkConservationReport r = cluster.CheckConservation();
        benchmark::DoNotOptimize(r.violations.size());
    }
    state.counters["link_ends"] = double(cluster.GetCreditLinkDevices("nvlink").size() +
                                         cluster.GetCreditLinkDevices("infiniband").size());
    Simulator::Destroy();
    Names::Clear();
    Config::Reset();
}

} // namespace

// The rail-optimised InfiniBand fat tree of a dgx-h100 cluster of \p servers and the subnet
// manager's routing (LIDs, hop counts, the ftree engine, switch LIDs, credit-loop check if
// \p checkCreditLoops), without devices: InfinibandClusterPlane::Prepare as
// ClusterHelper::TryBuild calls it.  Run one size per process for its peak RSS.
void
RouteDgxH100(benchmark::State& state,
             uint32_t servers,
             const std::string& ibSubnets,
             bool checkCreditLoops)
{
    ClusterConfig c;
    c.ApplyPreset("dgx-h100");
    c.servers = servers;
    c.ibSubnets = ibSubnets;
    // Prepare expects a validated configuration (ClusterHelper::TryBuild validates first).
    const std::string invalid = c.Validate();
    if (!invalid.empty())
    {
        state.SkipWithError(invalid.c_str());
        return;
    }
    const ClusterLayout layout = c.GetLayout();
    for (auto _ : state)
    {
        InfinibandClusterPlane plane;
        plane.SetAttribute("subnet-manager", "CheckCreditLoops", BooleanValue(checkCreditLoops));
        const std::string error = plane.Prepare(c, layout);
        if (!error.empty())
        {
            state.SkipWithError(error.c_str());
            break;
        }
        benchmark::DoNotOptimize(plane.GetTopology().GetNNodes());
    }
    state.counters["hcas"] = c.servers * 8.0;
    state.counters["peak_rss_MiB"] = PeakRssMiB();
}

// One subnet, routed as a packet plane (with the credit-loop check).  Args: servers.
void
BM_RouteDgxH100Fabric(benchmark::State& state)
{
    RouteDgxH100(state, static_cast<uint32_t>(state.range(0)), "one", true);
}

BENCHMARK(BM_RouteDgxH100Fabric)
    ->Arg(128)
    ->Arg(512)
    ->Arg(2048)
    ->Arg(4096)
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// As BM_RouteDgxH100Fabric with one subnet per rail (--ibSubnets=per-rail): 8 fat trees of
// one rail's HCAs, each routed as a subnet of its own.  Args: servers, credit-loop check
// (1 as a packet plane routes, 0 as a flow plane).
void
BM_RouteDgxH100FabricPerRail(benchmark::State& state)
{
    RouteDgxH100(state, static_cast<uint32_t>(state.range(0)), "per-rail", state.range(1) != 0);
}

BENCHMARK(BM_RouteDgxH100FabricPerRail)
    ->Args({2048, 1})
    ->Args({2048, 0})
    ->Args({16384, 1})
    ->Args({16384, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK(BM_ConservationCheck)->Arg(128)->Unit(benchmark::kMillisecond)->Iterations(3);

// Args: servers, front-end routing (0 static, 1 ns-3 global routing).
BENCHMARK(BM_BuildDgxH100)
    ->Args({16, 0})
    ->Args({128, 0})
    ->Args({128, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

BENCHMARK_MAIN();
