/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Large inputs: a native trace of N ops (default 10 million: 64 ranks, per step a
 * compute and an allreduce on every rank and one send/recv pair) is written to a temporary
 * file, then parsed.  Reports ops/s of the parse, the peak RSS growth during the parse per op
 * (getrusage) and the heap the parsed WorkloadTrace keeps per op (mallinfo2).  Bound: at most
 * 300 bytes per op of peak growth (272 measured, 221 kept, when every rank kept its own ops;
 * 69.5 since ranks 2-63 share one program), so the parser's 20 M-op default limit stays
 * under 6 GB; a run above it reports an error.
 */
#include "ns3/trace-native.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <fstream>
#include <malloc.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

using namespace ns3;

namespace
{

constexpr uint32_t kRanks = 64;
constexpr uint64_t kOpsPerStep = 2 * kRanks + 2;
constexpr double kBoundBytesPerOp = 300;

double
PeakRssBytes()
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss * 1024.0; // Linux: KiB
}

double
HeapBytes()
{
    const struct mallinfo2 m = mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd);
}

// Streams the trace to \p path line by line (no copy of it in memory); returns its ops.
uint64_t
WriteTrace(const std::string& path, uint64_t ops)
{
    std::ofstream f(path);
    f << "fabric-trace 1\nranks " << kRanks << "\ngroup all 0-" << kRanks - 1 << "\n";
    const uint64_t steps = ops / kOpsPerStep;
    for (uint64_t s = 0; s < steps; ++s)
    {
        f << "0-" << kRanks - 1 << " c" << s << " compute time=10us\n"
          << "0-" << kRanks - 1 << " a" << s << " allreduce group=all bytes=1MiB\n"
          << "0 p" << s << " send to=1 bytes=4KiB stream=1\n"
          << "1 p" << s << " recv from=0 bytes=4KiB stream=1\n";
    }
    return steps * kOpsPerStep;
}

void
BM_ParseNativeTrace(benchmark::State& state)
{
    const std::string path = "/tmp/ai-fabric-trace-scale-" + std::to_string(getpid()) + ".trace";
    const uint64_t ops = WriteTrace(path, static_cast<uint64_t>(state.range(0)));
    WorkloadTraceBuilder::SetLimits(WorkloadTraceBuilder::GetMaxRanks(), 2 * ops);
    double peakGrowth = 0;
    double kept = 0;
    for (auto _ : state)
    {
        const double rssBefore = PeakRssBytes();
        const double heapBefore = HeapBytes();
        WorkloadTrace trace = NativeTraceParser::ParseFile(path);
        kept = HeapBytes() - heapBefore;
        peakGrowth = PeakRssBytes() - rssBefore;
        if (trace.CountOps() != ops)
        {
            state.SkipWithError("op count differs from the generated trace");
        }
        else if (peakGrowth > kBoundBytesPerOp * ops)
        {
            state.SkipWithError("peak RSS growth above the bound of 300 bytes per op");
        }
        benchmark::DoNotOptimize(trace.ops.CountPrograms());
    }
    std::remove(path.c_str());
    state.counters["ops"] = static_cast<double>(ops);
    state.counters["ops_per_s"] =
        benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
    state.counters["peak_rss_bytes_per_op"] = peakGrowth / ops;
    state.counters["kept_heap_bytes_per_op"] = kept / ops;
}

} // namespace

// Arg: ops.  One iteration each: the first parse is the one whose peak RSS growth counts.
BENCHMARK(BM_ParseNativeTrace)->Arg(10000000)->Unit(benchmark::kSecond)->Iterations(1);

BENCHMARK_MAIN();
