/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Insert rate of the results database: 1,000,000 flow rows into a fresh file
 * (target: under 3 s).  Times Open + BeginRun + AddFlow x N + EndRun,
 * i.e. everything a scenario pays, including the final commit.
 */
#include "ns3/results-database.h"
#include "ns3/uinteger.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <string>
#include <unistd.h>

using namespace ns3;

static void
BM_InsertFlows(benchmark::State& state)
{
    const int64_t rows = state.range(0);
    const std::string path = "/tmp/ai-fabric-results-db-bench-" + std::to_string(getpid()) + ".db";
    for (auto _ : state)
    {
        state.PauseTiming();
        for (const char* suffix : {"", "-wal", "-shm"})
        {
            std::remove((path + suffix).c_str());
        }
        state.ResumeTiming();

        auto db = CreateObject<ResultsDatabase>();
        db->SetAttribute("BatchRows", UintegerValue(state.range(1)));
        db->Open(path);
        db->BeginRun("bench", "results-db-bench", 1, "{}");
        FlowRecord f;
        f.plane = "infiniband";
        for (int64_t i = 0; i < rows; ++i)
        {
            f.flowId = i;
            f.srcNode = i % 64;
            f.dstNode = (i + 1) % 64;
            f.srcRank = f.srcNode;
            f.dstRank = f.dstNode;
            f.bytes = 4096 + i % 1000;
            f.packets = 1;
            f.startNs = i * 10;
            f.endNs = i * 10 + 83;
            f.opId = i / 1000;
            db->AddFlow(f);
        }
        db->EndRun("complete", NanoSeconds(rows * 10));
        db->Close();
    }
    state.SetItemsProcessed(state.iterations() * rows);
    for (const char* suffix : {"", "-wal", "-shm"})
    {
        std::remove((path + suffix).c_str());
    }
}

BENCHMARK(BM_InsertFlows)
    ->ArgNames({"rows", "batch"})
    ->Args({1000000, 100000})
    ->Args({1000000, 10000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

BENCHMARK_MAIN();
