/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Event granularity: completion time, events and wall time of one allreduce as the
 * simulated packet size changes, against the analytical (alpha-beta) figure.  scripts/bench
 * --granularity turns the rows into the table of doc/performance.md, with the error relative
 * to the finest setting of each group.
 *
 * NVLink: 1 x dgx-h100 (8 GPUs), ring and NVLS allreduce, NvLinkNetDevice Granularity
 * 256 B ... 64 KiB.  Header overhead is charged per real 256-byte packet at every
 * granularity, so the analytical figure does not depend on it and any difference is
 * simulation error.  (doc/nvlink.md has the single-transfer study.)
 * InfiniBand: one rail of 4 x dgx-h100 (ranks 0, 8, 16, 24: every message crosses the rail's
 * leaf), ring allreduce, HCA IbMtu 256 ... 4096.  The MTU is a protocol parameter: smaller
 * MTUs really do cost more header bytes, which the analytical figure includes.
 * These two groups run with fine packets only (GpuTransport MinPacketsPerMessage 0).
 *
 * Adaptive bursts: the same allreduces with a minimum packet count per message
 * (GpuTransport MinPacketsPerMessage for ring, NvLinkTransportPlane NvlsMinPackets for
 * NVLS; 0 = fine packets, the reference of the group) and, on InfiniBand, the HCAs'
 * MaxBurstPackets: a message's packets grow with its size up to NvLinkNetDevice
 * MaxBurstBytes (64 KiB) or MaxBurstPackets MTUs, so bulk collectives need fewer events.
 * The NVLink ring's rows cut equal packets and spray them (NvLinkTransportPlane
 * StripeMessages false), but for the striped ones: one packet per switch plane a round.
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

using namespace ns3;

namespace
{

void
RunAllReduce(benchmark::State& state,
             uint32_t servers,
             const std::vector<uint32_t>& ranks,
             const std::string& algorithm,
             uint64_t bytes,
             uint32_t nvlinkGranularityBytes,
             uint32_t ibMtuBytes,
             uint32_t minPacketsPerMessage = 0,
             uint32_t ibBurstPackets = 1,
             bool striped = false)
{
    bench::RunMeter meter;
    for (auto _ : state)
    {
        ClusterConfig c;
        c.ApplyPreset("dgx-h100");
        c.endpoint = "ideal"; // the link physics against its alpha-beta model
        c.servers = servers;
        ClusterHelper cluster(c);
        cluster.SetNvLinkDeviceAttribute("Granularity", UintegerValue(nvlinkGranularityBytes));
        cluster.SetIbDeviceAttribute("IbMtu", UintegerValue(ibMtuBytes));
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        cluster.SetIbDeviceAttribute("MaxBurstPackets", UintegerValue(ibBurstPackets));
        // Without a minimum packet count, no bursts anywhere (GpuTransport and NVLS).
        cluster.SetNvLinkDeviceAttribute(
            "MaxBurstBytes",
            UintegerValue(minPacketsPerMessage == 0 ? nvlinkGranularityBytes : 64 * 1024));
        Config::SetDefault("ns3::NvLinkTransportPlane::NvlsMinPackets",
                           UintegerValue(minPacketsPerMessage));
        Config::SetDefault("ns3::NvLinkTransportPlane::StripeMessages", BooleanValue(striped));
        const std::string error = cluster.TryBuild();
        if (!error.empty())
        {
            state.SkipWithError(error.c_str());
            break;
        }
        ScenarioRun::SetUpSimulation(cluster);
        Ptr<GpuTransport> transport = cluster.InstallTransport("world");
        transport->SetAttribute("MinPacketsPerMessage", UintegerValue(minPacketsPerMessage));
        Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
        engine->SetTransport(transport);
        CollectiveBenchOptions o;
        o.algorithm = algorithm;
        o.inPlace = "out"; // one collective timed, as before the in-place pass
        meter.Start();
        const auto rows = CollectiveBenchRun(o, ranks, {bytes}, engine);
        meter.Stop();
        const auto p = static_cast<uint32_t>(ranks.size());
        const auto n = static_cast<double>(bytes);
        double modelSeconds = 0;
        if (servers == 1)
        {
            const CollectiveCostModel m = CollectiveBenchNvLinkModel(cluster, transport);
            // NVLS: every GPU sends n up while the reduced n comes down, ≈ α + nβ.
            modelSeconds = algorithm == "nvls" ? m.Alpha() + n * m.Beta() : m.RingAllReduce(p, n);
        }
        else
        {
            modelSeconds =
                CollectiveBenchIbModel(cluster, transport, ranks[0], ranks[1]).RingAllReduce(p, n);
        }
        state.counters["sim_ns"] = rows.front().outOfPlace.time_us * 1e3;
        state.counters["model_ns"] = modelSeconds * 1e9;
        state.counters["error_vs_model_pct"] =
            (rows.front().outOfPlace.time_us * 1e-6 / modelSeconds - 1) * 100;
        state.counters["granularity_bytes"] = servers == 1 ? nvlinkGranularityBytes : ibMtuBytes;
        state.counters["bytes"] = n;
        state.counters["min_packets_per_message"] = minPacketsPerMessage;
        state.counters["ib_burst_packets"] = ibBurstPackets;
        state.counters["striped"] = striped ? 1 : 0;
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
    }
    meter.Report(state);
}

// Args: algorithm (0 ring, 1 nvls), KiB per rank, Granularity bytes.
void
BM_NvLinkGranularity(benchmark::State& state)
{
    RunAllReduce(state,
                 1,
                 {0, 1, 2, 3, 4, 5, 6, 7},
                 state.range(0) == 0 ? "ring" : "nvls",
                 static_cast<uint64_t>(state.range(1)) << 10,
                 static_cast<uint32_t>(state.range(2)),
                 4096);
}

// Args: KiB per rank, IbMtu bytes.
void
BM_IbMtu(benchmark::State& state)
{
    RunAllReduce(state,
                 4,
                 {0, 8, 16, 24},
                 "ring",
                 static_cast<uint64_t>(state.range(0)) << 10,
                 4096,
                 static_cast<uint32_t>(state.range(1)));
}

// Args: case (0 NVLink ring, 1 NVLink NVLS, 2 InfiniBand ring), KiB per rank,
// MinPacketsPerMessage, InfiniBand MaxBurstPackets, NVLink messages striped (1) or sprayed.
void
BM_AdaptiveBurst(benchmark::State& state)
{
    const bool ib = state.range(0) == 2;
    RunAllReduce(state,
                 ib ? 4 : 1,
                 ib ? std::vector<uint32_t>{0, 8, 16, 24}
                    : std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7},
                 state.range(0) == 1 ? "nvls" : "ring",
                 static_cast<uint64_t>(state.range(1)) << 10,
                 4096,
                 4096,
                 static_cast<uint32_t>(state.range(2)),
                 static_cast<uint32_t>(state.range(3)),
                 state.range(4) != 0);
}

void
BurstCases(benchmark::internal::Benchmark* b)
{
    for (int64_t c : {0, 1})
    {
        for (int64_t kib : {1024, 65536})
        {
            for (int64_t minPackets : {0, 256, 64, 32, 16, 8})
            {
                b->Args({c, kib, minPackets, 1, 0});
            }
            if (c == 0)
            {
                b->Args({c, kib, 32, 1, 1}); // the default: striped over the planes
            }
        }
    }
    for (int64_t kib : {1024, 65536})
    {
        b->Args({2, kib, 0, 1, 0});
        for (int64_t burst : {4, 16, 64})
        {
            b->Args({2, kib, 32, burst, 0});
        }
    }
}

void
NvLinkCases(benchmark::internal::Benchmark* b)
{
    for (int64_t algorithm : {0, 1})
    {
        for (int64_t kib : {1024, 65536})
        {
            for (int64_t g : {256, 1024, 4096, 16384, 65536})
            {
                b->Args({algorithm, kib, g});
            }
        }
    }
}

void
IbCases(benchmark::internal::Benchmark* b)
{
    for (int64_t kib : {1024, 65536})
    {
        for (int64_t mtu : {256, 512, 1024, 2048, 4096})
        {
            b->Args({kib, mtu});
        }
    }
}

} // namespace

BENCHMARK(BM_NvLinkGranularity)->Apply(NvLinkCases)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_IbMtu)->Apply(IbCases)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AdaptiveBurst)->Apply(BurstCases)->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
