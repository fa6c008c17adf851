/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// WorkloadReplay over GpuTransport + CollectiveEngine on a CreditSwitch star:
// iteration times against compute plus the collective run alone, overlap,
// the 1F1B bubble, the SimAI MICRO sweep, a GOAL ring, stuck reports, ops rows.
#include "results-db-fixture.h"
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-engine.h"
#include "ns3/config.h"
#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-plane.h"
#include "ns3/credit-switch.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/gpu-transport.h"
#include "ns3/loggops-cost.h"
#include "ns3/names.h"
#include "ns3/node-container.h"
#include "ns3/results-database.h"
#include "ns3/run-parameters.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-goal.h"
#include "ns3/trace-native.h"
#include "ns3/trace-simai.h"
#include "ns3/trace-transformer-gen.h"
#include "ns3/uinteger.h"
#include "ns3/workload-replay.h"

#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

using namespace ns3;

namespace
{

// Same star as the collective tests: 32 KiB packets keep large collectives cheap.
constexpr uint32_t kPayload = 32768;
constexpr uint32_t kOverhead = 28; // CreditLinkHeader 8 + TransportHeader 20
constexpr uint32_t kRxBufferPackets = 8;
const DataRate kRate("100Gbps");
const Time kProp = NanoSeconds(100);
const Time kSwitch = NanoSeconds(150);
const Time kSoftware = MicroSeconds(2);
constexpr uint64_t MiB = 1 << 20;
const std::string kSamples = AI_FABRIC_SOURCE_DIR "/../shared/samples/workloads/";

class ReplayTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        replay = nullptr;
        engine = nullptr;
        transport = nullptr;
        Simulator::Destroy();
        Names::Clear(); // clusters name their nodes ("server0/gpu0")
        Config::Reset();
    }

    void Star(uint32_t ranks, DataRate rate = kRate)
    {
        CreditLinkHelper helper;
        helper.SetDeviceAttribute("DataRate", DataRateValue(rate));
        helper.SetDeviceAttribute("Mtu", UintegerValue(kPayload + kOverhead));
        helper.SetDeviceAttribute("ReceiveBufferBytes",
                                  UintegerValue(kRxBufferPackets * (kPayload + kOverhead)));
        helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(2 * (kPayload + kOverhead)));
        helper.SetChannelAttribute("Delay", TimeValue(kProp));
        helper.SetSwitchAttribute("TraversalLatency", TimeValue(kSwitch));
        helper.SetSwitchAttribute("VirtualOutputQueues", BooleanValue(true));
        Ptr<Node> sw = CreateObject<Node>();
        Ptr<CreditSwitch> core = helper.InstallSwitch(sw);
        Ptr<CreditLinkPlane> plane = CreateObject<CreditLinkPlane>();
        plane->SetAttribute("MaxPayloadBytes", UintegerValue(kPayload));
        plane->SetAttribute("SoftwareLatency", TimeValue(kSoftware));
        plane->SetAttribute("PlaneName", StringValue("generic"));
        NodeContainer gpus;
        gpus.Create(ranks);
        for (uint32_t r = 0; r < ranks; ++r)
        {
            NetDeviceContainer d = helper.Install(gpus.Get(r), sw);
            core->SetRoute(r, {r});
            plane->AddRank(r, DynamicCast<CreditLinkNetDevice>(d.Get(0)));
        }
        transport = CreateObject<GpuTransport>();
        transport->AddPlane(plane);
        engine = CreateObject<CollectiveEngine>();
        engine->SetTransport(transport);
    }

    // dgx-h100 servers (ClusterHelper) and a replay of \p text over them, run to the end.
    void ReplayOnDgxH100(uint32_t servers, const std::string& text)
    {
        ClusterConfig config;
        ASSERT_EQ(config.ApplyPreset("dgx-h100"), "");
        config.servers = servers;
        ClusterHelper cluster(config);
        ASSERT_EQ(cluster.TryBuild(), "");
        transport = cluster.InstallTransport();
        engine = CreateObject<CollectiveEngine>();
        engine->SetTransport(transport);
        replay = CreateObject<WorkloadReplay>();
        replay->SetTrace(Parse(text));
        replay->SetTransport(transport);
        replay->SetCollectiveEngine(engine);
        replay->Start();
        Simulator::Run();
        ASSERT_TRUE(replay->IsComplete()) << replay->GetStuckReport();
    }

    // Builds a star, replays the trace to the end; true when every op completed.
    bool Replay(WorkloadTrace trace, const std::string& marker = "", Ptr<ResultsDatabase> db = 0)
    {
        Star(trace.numRanks);
        replay = CreateObject<WorkloadReplay>();
        replay->SetAttribute("IterationMarker", StringValue(marker));
        replay->SetTrace(std::move(trace));
        replay->SetTransport(transport);
        replay->SetCollectiveEngine(engine);
        if (db)
        {
            transport->SetResultsDatabase(db);
            engine->SetResultsDatabase(db);
            replay->SetResultsDatabase(db);
        }
        replay->Start();
        Simulator::Run();
        return replay->IsComplete();
    }

    // The same collective alone on a fresh star (what collective-bench measures).
    Time Alone(const std::string& kind, uint32_t ranks, uint64_t bytes, const std::string& alg)
    {
        Simulator::Destroy();
        Star(ranks);
        CollectiveSpec spec;
        spec.kind = kind;
        spec.algorithm = alg;
        spec.bytes = bytes;
        for (uint32_t r = 0; r < ranks; ++r)
        {
            spec.ranks.push_back(r);
        }
        Time took = Seconds(-1);
        engine->Start(spec, CollectiveEngine::DoneCallback([&took](const CollectiveResult& r) {
                          took = r.end - r.start;
                      }));
        Simulator::Run();
        Simulator::Destroy();
        return took;
    }

    void ExpectMicroSweepMatchesAlone(const std::string& path, uint32_t passes, size_t collectives);

    static WorkloadTrace Parse(const std::string& text)
    {
        return NativeTraceParser::ParseString(text, "test.trace");
    }

    Ptr<GpuTransport> transport;
    Ptr<CollectiveEngine> engine;
    Ptr<WorkloadReplay> replay;
};

double
Ms(Time t)
{
    return t.GetSeconds() * 1e3;
}

// DP only, 3 iterations of {2 ms compute; 16 MiB ring allreduce over 8 ranks}, marker
// "grad.*": each iteration = 2 ms + T_ar, T_ar measured by running the allreduce alone
// (≈ 2·7/8·16 MiB·8/100 Gb/s + 14 α; 2.356 ms measured).  Within 1%; the breakdown's exposed DP
// time is T_ar per iteration (the allreduce is blocking), compute 2 ms per iteration.
TEST_F(ReplayTest, DataParallelIterationIsComputePlusAllReduce)
{
    const Time ar = Alone("allreduce", 8, 16 * MiB, "ring");
    ASSERT_GT(ar, Time(0));
    ASSERT_TRUE(Replay(Parse("fabric-trace 1\nranks 8\ngroup dp0 0-7\nrepeat 3 {\n"
                             "0-7 fwd compute time=2ms\n"
                             "0-7 grad allreduce group=dp0 bytes=16MiB algorithm=ring\n}\n"),
                       "grad.*"))
        << replay->GetStuckReport();
    const std::vector<Time> it = replay->GetIterationTimes();
    ASSERT_EQ(it.size(), 3u);
    EXPECT_EQ(replay->GetIterationMarkers(),
              (std::vector<std::string>{"grad.0", "grad.1", "grad.2"}));
    const double expected = 2.0 + Ms(ar);
    for (const Time& t : it)
    {
        std::cout << "[replay] DP iteration " << Ms(t) << " ms, compute + alone " << expected
                  << " ms (allreduce alone " << Ms(ar) << " ms)\n";
        EXPECT_NEAR(Ms(t) / expected, 1.0, 0.01);
    }
    for (uint32_t r = 0; r < 8; ++r)
    {
        const ReplayBreakdown b = replay->GetBreakdown(r);
        EXPECT_EQ(b.computeNs, 6000000u);
        const auto dp = static_cast<std::size_t>(ParallelismKind::Dp);
        EXPECT_NEAR(b.exposedByKindNs[dp] / 1e6 / (3 * Ms(ar)), 1.0, 0.01);
        EXPECT_EQ(b.exposedCommNs, b.exposedByKindNs[dp]);
        EXPECT_EQ(b.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::Tp)], 0u);
        // Ring neighbours exchange through this rank for the whole allreduce.
        EXPECT_NEAR(b.exposedByPlaneNs.at("generic") / 1e6 / (3 * Ms(ar)), 1.0, 0.01);
    }
}

// Overlap: bwd0 (X), then the gradient allreduce on stream 1 after=bwd0 runs while bwd1 (X)
// computes; with X = T_ar/2 the iteration is X + T_ar (vs 2X + T_ar serialized) and the
// exposed DP time shrinks from T_ar to T_ar − X.  Within 1%.
TEST_F(ReplayTest, StreamOverlapHidesCommunication)
{
    const Time ar = Alone("allreduce", 8, 16 * MiB, "ring");
    const uint64_t xNs = ar.GetNanoSeconds() / 2;
    auto trace = [xNs](bool overlap) {
        return "fabric-trace 1\nranks 8\ngroup dp0 0-7\n0-7 bwd0 compute time=" +
               std::to_string(xNs) +
               "ns\n"
               "0-7 g0 allreduce group=dp0 bytes=16MiB algorithm=ring" +
               (overlap ? " stream=1 after=bwd0" : "") +
               "\n0-7 bwd1 compute time=" + std::to_string(xNs) + "ns\n";
    };
    const auto dp = static_cast<std::size_t>(ParallelismKind::Dp);
    ASSERT_TRUE(Replay(Parse(trace(false)))) << replay->GetStuckReport();
    const double serial = Ms(replay->GetIterationTimes().at(0));
    const double serialExposed = replay->GetMeanBreakdown().exposedByKindNs[dp] / 1e6;
    Simulator::Destroy();
    ASSERT_TRUE(Replay(Parse(trace(true)))) << replay->GetStuckReport();
    const double overlapped = Ms(replay->GetIterationTimes().at(0));
    const ReplayBreakdown b = replay->GetMeanBreakdown();
    const double exposed = b.exposedByKindNs[dp] / 1e6;
    const double x = xNs / 1e6;
    std::cout << "[replay] serial " << serial << " ms (exposed " << serialExposed
              << "), overlapped " << overlapped << " ms (exposed " << exposed << "), X " << x
              << " ms, allreduce " << Ms(ar) << " ms\n";
    EXPECT_NEAR(serial / (2 * x + Ms(ar)), 1.0, 0.01);
    EXPECT_NEAR(serialExposed / Ms(ar), 1.0, 0.01);
    EXPECT_NEAR(overlapped / (x + Ms(ar)), 1.0, 0.01);
    EXPECT_NEAR(exposed / (Ms(ar) - x), 1.0, 0.01);
    EXPECT_NEAR(b.commByKindNs[dp] / 1e6 / Ms(ar), 1.0, 0.01);
    EXPECT_EQ(b.computeNs, 2 * xNs);
}

// Compute ops of two streams share the GPU: 1 ms on stream 0 and 1 ms on stream 1, both
// ready at 0, end at 2 ms (one kernel at a time); with ConcurrentCompute at 1 ms.
TEST_F(ReplayTest, GpuRunsOneKernelAtATime)
{
    const std::string text = "fabric-trace 1\nranks 1\n0 a compute time=1ms\n"
                             "0 b compute time=1ms stream=1\n";
    ASSERT_TRUE(Replay(Parse(text)));
    EXPECT_EQ(replay->GetEndTime(), MilliSeconds(2));
    EXPECT_EQ(replay->GetOpStart(0, 1), MilliSeconds(1));
    Simulator::Destroy();
    Star(1);
    replay = CreateObject<WorkloadReplay>();
    replay->SetAttribute("ConcurrentCompute", BooleanValue(true));
    replay->SetTrace(Parse(text));
    replay->Start();
    Simulator::Run();
    ASSERT_TRUE(replay->IsComplete());
    EXPECT_EQ(replay->GetEndTime(), MilliSeconds(1));
}

// 1F1B on p = 4 stages, m = 8 micro-batches, forward 1 ms, backward 2 ms, 4 KiB
// activations (≈ 2.4 µs per hop: negligible).  Ideal iteration (m + p − 1)(tf + tb) =
// 33 ms; every stage computes m(tf + tb) = 24 ms, so its idle fraction is the bubble
// (p − 1)/(m + p − 1) = 3/11.  Within 5%.
std::string
Pipeline1F1B(uint32_t p, uint32_t m)
{
    std::ostringstream os;
    os << "fabric-trace 1\nranks " << p << "\n";
    for (uint32_t s = 0; s < p; ++s)
    {
        // Labels name the sending stage: a<s>_<i> from s to s + 1, g<s>_<i> from s to s − 1.
        auto fwd = [&os, s, p](uint32_t i) {
            if (s > 0)
            {
                os << s << " a" << s - 1 << "_" << i << " recv from=" << s - 1 << " bytes=4KiB\n";
            }
            os << s << " f" << i << " compute time=1ms\n";
            if (s + 1 < p)
            {
                os << s << " a" << s << "_" << i << " send to=" << s + 1 << " bytes=4KiB\n";
            }
        };
        auto bwd = [&os, s, p](uint32_t i) {
            if (s + 1 < p)
            {
                os << s << " g" << s + 1 << "_" << i << " recv from=" << s + 1 << " bytes=4KiB\n";
            }
            os << s << " b" << i << " compute time=2ms\n";
            if (s > 0)
            {
                os << s << " g" << s << "_" << i << " send to=" << s - 1 << " bytes=4KiB\n";
            }
        };
        const uint32_t warmup = std::min(p - s - 1, m);
        uint32_t f = 0;
        uint32_t b = 0;
        while (f < warmup)
        {
            fwd(f++);
        }
        while (f < m)
        {
            fwd(f++);
            bwd(b++);
        }
        while (b < m)
        {
            bwd(b++);
        }
    }
    return os.str();
}

TEST_F(ReplayTest, PipelineShowsTheOneFOneBBubble)
{
    const uint32_t p = 4;
    const uint32_t m = 8;
    ASSERT_TRUE(Replay(Parse(Pipeline1F1B(p, m)))) << replay->GetStuckReport();
    const double iteration = Ms(replay->GetIterationTimes().at(0));
    const double expectedBubble = double(p - 1) / (m + p - 1);
    for (uint32_t s = 0; s < p; ++s)
    {
        const ReplayBreakdown b = replay->GetBreakdown(s);
        const double bubble = 1.0 - b.computeNs / 1e6 / iteration;
        std::cout << "[replay] stage " << s << " iteration " << iteration << " ms, bubble "
                  << bubble << " (1F1B " << expectedBubble << ")\n";
        EXPECT_NEAR(bubble / expectedBubble, 1.0, 0.05);
        EXPECT_EQ(b.computeNs, m * 3000000u);
        // Sends and receives are PP.
        if (s > 0)
        {
            EXPECT_GT(b.commByKindNs[static_cast<std::size_t>(ParallelismKind::Pp)], 0u);
        }
    }
    EXPECT_NEAR(iteration / (m + p - 1) / 3.0, 1.0, 0.05);
    // 2 directions x 3 boundaries x 8 micro-batches.
    EXPECT_EQ(transport->GetMessagesCompleted(), 48u);
}

// The generator's 1F1B trace (8 layers, hidden 4096, seq 2048, vocab 1, pp = 4, m = 8, H100 at
// 50%): 16 MiB activations on 6.4 Tb/s links (≈ 23 µs per hop against ≈ 3.3 ms of forward
// compute per stage) make communication negligible, so every stage idles for the bubble
// (p − 1)/(m + p − 1) = 3/11 of the iteration.  Within 5%.
TEST_F(ReplayTest, GeneratedPipelineShowsTheOneFOneBBubble)
{
    TransformerTraceConfig c;
    c.layers = 8;
    c.hidden = 4096;
    c.seq = 2048;
    c.vocab = 1;
    c.pp = 4;
    c.microBatches = 8;
    c.globalBatch = 8;
    c.schedule = "1f1b";
    WorkloadTrace trace = TransformerTraceGenerator(c).GenerateTrace();
    Star(trace.numRanks, DataRate("6400Gbps"));
    replay = CreateObject<WorkloadReplay>();
    replay->SetTrace(std::move(trace));
    replay->SetTransport(transport);
    replay->SetCollectiveEngine(engine);
    replay->Start();
    Simulator::Run();
    ASSERT_TRUE(replay->IsComplete()) << replay->GetStuckReport();
    const double iteration = Ms(replay->GetIterationTimes().at(0));
    const double expectedBubble = 3.0 / 11;
    for (uint32_t s = 0; s < 4; ++s)
    {
        const ReplayBreakdown b = replay->GetBreakdown(s);
        const double bubble = 1.0 - b.computeNs / 1e6 / iteration;
        std::cout << "[replay] generated 1F1B stage " << s << ": iteration " << iteration
                  << " ms, compute " << b.computeNs / 1e6 << " ms, bubble " << bubble << "\n";
        EXPECT_NEAR(bubble / expectedBubble, 1.0, 0.05);
    }
}

// A SimAI MICRO file on 4 ranks: each replayed collective takes what it takes alone plus two
// notifications (the last member's "ready" before it starts, the last rank's "done" after
// it), within 1%.
void
ReplayTest::ExpectMicroSweepMatchesAlone(const std::string& path,
                                         uint32_t passes,
                                         size_t collectives)
{
    SimAiImportOptions options;
    options.ranks = 4;
    options.passes = passes;
    WorkloadTrace trace = SimAiWorkloadImporter::ImportFile(path, options);
    ASSERT_EQ(trace.collectives.size(), collectives);
    std::vector<const char*> kinds;
    std::vector<uint64_t> sizes;
    std::vector<uint32_t> opIndex;
    for (uint32_t i = 0; i < trace.ops[0].size(); ++i)
    {
        if (IsCollective(trace.ops[0][i].kind))
        {
            kinds.push_back(WorkloadOpKindName(trace.ops[0][i].kind));
            sizes.push_back(trace.ops[0][i].bytes);
            opIndex.push_back(i);
        }
    }
    ASSERT_TRUE(Replay(std::move(trace))) << replay->GetStuckReport();
    std::vector<Time> replayed;
    for (uint32_t i : opIndex)
    {
        replayed.push_back(replay->GetOpEnd(0, i) - replay->GetOpStart(0, i));
    }
    const Time notify = transport->GetNotificationLatency();
    replay = nullptr;
    for (std::size_t k = 0; k < sizes.size(); ++k)
    {
        const Time alone = Alone(kinds[k], 4, sizes[k], "auto") + 2 * notify;
        std::cout << "[replay] MICRO " << kinds[k] << " " << sizes[k] << " B: replay "
                  << replayed[k].GetMicroSeconds() << " us, alone " << alone.GetMicroSeconds()
                  << " us\n";
        EXPECT_NEAR(replayed[k].GetSeconds() / alone.GetSeconds(), 1.0, 0.01)
            << kinds[k] << " " << sizes[k];
    }
}

// AICB micro_test: 19 allreduces of 4 KiB .. 1 GiB, one after the other.
TEST_F(ReplayTest, SimAiMicroSweepMatchesCollectivesAlone)
{
    const std::string path = kSamples + "aicb_workload_simAI_micro_test_all_reduce.txt";
    if (!std::ifstream(path))
    {
        GTEST_SKIP() << path << " absent";
    }
    ExpectMicroSweepMatchesAlone(path, 1, 19);
}

// The MICRO fixture: allreduce 4 KiB, allgather 8 KiB, reducescatter 16 KiB, two passes.
TEST_F(ReplayTest, SimAiMicroFixtureMatchesCollectivesAlone)
{
    ExpectMicroSweepMatchesAlone(AI_FABRIC_SOURCE_DIR "/test/data/workloads/aicb-micro.txt", 2, 6);
}

// A SimAI file with pp 4 and ga 8 one-row micro-batches (forward 1 ms, ig 1 ms + wg 1 ms,
// pp_comm 4 KiB) is the 1F1B pipeline of PipelineShowsTheOneFOneBBubble: iteration
// (m + p - 1)(tf + tb) = 33 ms, i.e. SimAI's bubble (pp - 1)/(ga vpp) of the 24 ms of
// compute; the same as the native trace within 0.1%, the formula within 5%.
TEST_F(ReplayTest, SimAiPipelineIsOneFOneB)
{
    const std::string path = AI_FABRIC_SOURCE_DIR "/test/data/workloads/simai-pp4-ga8.txt";
    ASSERT_TRUE(Replay(SimAiWorkloadImporter::ImportFile(path, {}))) << replay->GetStuckReport();
    const double imported = Ms(replay->GetIterationTimes().at(0));
    const double bubble = 1.0 - replay->GetBreakdown(0).computeNs / 1e6 / imported;
    TearDown();
    ASSERT_TRUE(Replay(Parse(Pipeline1F1B(4, 8)))) << replay->GetStuckReport();
    const double native = Ms(replay->GetIterationTimes().at(0));
    std::cout << "[replay] SimAI pp 4 ga 8: " << imported << " ms (native 1F1B " << native
              << " ms), stage-0 bubble " << bubble << "\n";
    EXPECT_NEAR(imported / native, 1.0, 0.001);
    EXPECT_NEAR(imported / 33.0, 1.0, 0.05);
    EXPECT_NEAR(bubble / (3.0 / 11), 1.0, 0.05); // (pp-1)/(m+pp-1) of the iteration
}

// Interleaving (vpp 2) on pp 2 with ga 4 two-row micro-batches, every chunk 0.5 ms forward
// and 1 ms backward: Megatron's interleaved 1F1B cuts the bubble to (pp - 1)(tf + tb)/vpp,
// so the iteration is m(tf + tb) + (pp - 1)(tf + tb)/vpp = 12 + 1.5 = 13.5 ms (15 ms without
// interleaving).  Within 2% (the 1 KiB transfers, 4 per micro-batch and stage).
TEST_F(ReplayTest, SimAiInterleavedPipelineBubble)
{
    auto text = [](uint32_t vpp) {
        std::string s = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 "
                        "vpp: " +
                        std::to_string(vpp) + " ga: 4 all_gpus: 2 pp_comm: 1024\n8\n";
        for (int i = 0; i < 4; ++i)
        {
            s += "a -1 500000 NONE 0 1000000 NONE 0 0 NONE 0 0\n"
                 "b -1 500000 NONE 0 1000000 NONE 0 0 NONE 0 0\n";
        }
        return SimAiWorkloadImporter::ToTrace(SimAiWorkloadImporter::ParseString(s, "vpp.txt"),
                                              {},
                                              "vpp.txt");
    };
    ASSERT_TRUE(Replay(text(2))) << replay->GetStuckReport();
    const double interleaved = Ms(replay->GetIterationTimes().at(0));
    TearDown();
    ASSERT_TRUE(Replay(text(1))) << replay->GetStuckReport();
    const double plain = Ms(replay->GetIterationTimes().at(0));
    std::cout << "[replay] SimAI pp 2 ga 4: vpp 2 " << interleaved << " ms, vpp 1 " << plain
              << " ms\n";
    EXPECT_NEAR(interleaved / 13.5, 1.0, 0.02);
    EXPECT_NEAR(plain / 15.0, 1.0, 0.02);
}

// GOAL ring allreduce schedule on 8 ranks: 2(p−1) = 14 steps of one 64 KiB send per rank,
// 112 messages, all delivered; every op completes.
TEST_F(ReplayTest, GoalRingCompletesWithExpectedMessages)
{
    const uint32_t p = 8;
    std::string s = "num_ranks " + std::to_string(p) + "\n";
    for (uint32_t r = 0; r < p; ++r)
    {
        s += "rank " + std::to_string(r) + " {\n";
        for (uint32_t k = 0; k < 2 * (p - 1); ++k)
        {
            const std::string l = std::to_string(3 * k);
            s += "l" + l + ": send 65536b to " + std::to_string((r + 1) % p) + " tag " +
                 std::to_string(k) + "\n";
            s += "l" + std::to_string(3 * k + 1) + ": recv 65536b from " +
                 std::to_string((r + p - 1) % p) + " tag " + std::to_string(k) + "\n";
            s += "l" + std::to_string(3 * k + 2) + ": calc 1000 cpu 0\n";
            s += "l" + std::to_string(3 * k + 2) + " requires l" + std::to_string(3 * k + 1) + "\n";
            if (k > 0)
            {
                s += "l" + l + " requires l" + std::to_string(3 * k - 1) + "\n";
            }
        }
        s += "}\n";
    }
    ASSERT_TRUE(Replay(GoalScheduleImporter::ImportString(s, "ring.goal")))
        << replay->GetStuckReport();
    EXPECT_EQ(transport->GetMessagesCompleted(), 112u);
    EXPECT_EQ(replay->GetCompletedOps(), 3u * 14 * p);
    EXPECT_EQ(replay->GetStuckReport(), "");
    // Each step: a 64 KiB message (≈ 2 µs + 2 packets + hops ≈ 7.8 µs) then 1 µs of calc,
    // strictly sequential around the ring: 14 steps take at least 14 × 8 µs.
    EXPECT_GT(replay->GetEndTime(), MicroSeconds(14 * 8));
}

// ---- GOAL schedules: LogGOPS host costs on CPU and NIC streams (doc/workload.md, "GOAL") ----

namespace
{

const std::string kGoalData = AI_FABRIC_SOURCE_DIR "/test/data/workloads/";
// LogGOPSim's defaults (loggopsim_cmdline.ggo), which LogGopsCost takes: ns.
constexpr int64_t kLogGopsO = 1500;
constexpr int64_t kLogGopsGap = 1000;
constexpr int64_t kLogGopsGPerByte = 6;

int64_t
StartNs(Ptr<WorkloadReplay> r, uint32_t rank, uint32_t index)
{
    return r->GetOpStart(rank, index).GetNanoSeconds();
}

int64_t
EndNs(Ptr<WorkloadReplay> r, uint32_t rank, uint32_t index)
{
    return r->GetOpEnd(rank, index).GetNanoSeconds();
}

// A binomial broadcast from rank 0 as LogGOPSim's binary_tree_32.goal writes it: in round k
// every rank below 2^k sends to rank + 2^k; each rank's sends require its receive only.
std::string
GoalBinomialBroadcast(uint32_t p, uint64_t bytes)
{
    std::string s = "num_ranks " + std::to_string(p) + "\n";
    for (uint32_t r = 0; r < p; ++r)
    {
        s += "rank " + std::to_string(r) + " {\n";
        uint32_t k = 0;
        if (r > 0)
        {
            while ((2u << k) <= r)
            {
                ++k;
            }
            s += "l0: recv " + std::to_string(bytes) + "b from " + std::to_string(r - (1u << k)) +
                 " tag 0\n";
            ++k;
        }
        for (uint32_t i = 1; (1u << k) < p; ++k)
        {
            if (r + (1u << k) < p)
            {
                const std::string l = "l" + std::to_string(i++);
                s += l + ": send " + std::to_string(bytes) + "b to " +
                     std::to_string(r + (1u << k)) + " tag 0\n";
                if (r > 0)
                {
                    s += l + " requires l0\n";
                }
            }
        }
        s += "}\n";
    }
    return s;
}

} // namespace

TEST(LogGopsCost, DefaultsAreLogGopsSims)
{
    Ptr<LogGopsCost> cost = CreateObject<LogGopsCost>();
    EXPECT_EQ(cost->CpuOverhead(1), NanoSeconds(kLogGopsO));
    EXPECT_EQ(cost->CpuOverhead(1024), NanoSeconds(kLogGopsO)); // O = 0
    EXPECT_EQ(cost->NicGap(1), NanoSeconds(kLogGopsGap));
    EXPECT_EQ(cost->NicGap(1024), NanoSeconds(kLogGopsGap + 1023 * kLogGopsGPerByte));
    EXPECT_TRUE(cost->IsEager(65535)); // S = 65535
    EXPECT_FALSE(cost->IsEager(65536));
    cost->SetAttribute("OverheadPerByteNs", DoubleValue(0.5));
    EXPECT_EQ(cost->CpuOverhead(1001), NanoSeconds(kLogGopsO + 500));
}

// What cluster-replay records of a GOAL run: every LogGOPS parameter in force, including
// one changed with Config (as --ns3::LogGopsCost::Overhead=2us does).
TEST(LogGopsCost, AttributesGoToTheRunParameters)
{
    Config::SetDefault("ns3::LogGopsCost::Overhead", TimeValue(MicroSeconds(2)));
    Ptr<LogGopsCost> cost = CreateObject<LogGopsCost>();
    Config::Reset();
    RunParameters params;
    params.AddAttributes("loggops.", *cost);
    EXPECT_EQ(params.ToJson(),
              "{\"loggops.Overhead\":\"+2000ns\",\"loggops.OverheadPerByteNs\":\"0\","
              "\"loggops.Gap\":\"+1000ns\",\"loggops.GapPerByteNs\":\"6\","
              "\"loggops.EagerLimitBytes\":\"65535\"}");
}

// Receives from any source and with any tag take the messages in MPI order: a message goes to
// the first posted receive whose source and tag fit, or waits until one is posted.
TEST_F(ReplayTest, GoalAnySourceMatchesInArrivalOrder)
{
    ASSERT_TRUE(Replay(GoalScheduleImporter::ImportFile(kGoalData + "goal-any-source.goal")))
        << replay->GetStuckReport();
    using Op = std::pair<int64_t, int64_t>;
    EXPECT_EQ(replay->GetMatchedSend(0, 0), Op(3, 1)); // a: rank 3's u1, the first tag 5
    EXPECT_EQ(replay->GetMatchedSend(0, 1), Op(2, 1)); // b: rank 2's t1
    EXPECT_EQ(replay->GetMatchedSend(0, 3), Op(2, 2)); // c (from 2): t2, waiting since it came
    EXPECT_EQ(replay->GetMatchedSend(0, 4), Op(1, 0)); // d (any tag): the tag-9 message
    // a and b end one message after their sends started: o, the fabric, o at the receiver;
    // the same 64-byte path on an idle star.  ±1 ns: the links round a packet's serialisation
    // (7.36 ns for 92 bytes at 100 Gb/s) to whole ns from wherever it starts.
    EXPECT_NEAR(EndNs(replay, 0, 0) - StartNs(replay, 3, 1),
                EndNs(replay, 0, 1) - StartNs(replay, 2, 1),
                1);
    EXPECT_GE(EndNs(replay, 0, 0) - StartNs(replay, 3, 1), 2 * kLogGopsO);
    EXPECT_EQ(StartNs(replay, 3, 1), 3000); // after u0
    EXPECT_EQ(StartNs(replay, 2, 1), 8000); // after t0
    // c and d are posted when w ends and find their messages received: they end at once.
    EXPECT_EQ(EndNs(replay, 0, 3), 40000);
    EXPECT_EQ(EndNs(replay, 0, 4), 40000);
}

// irequires waits for the other op's start; requires for its end.
TEST_F(ReplayTest, GoalIrequiresWaitsForTheStart)
{
    ASSERT_TRUE(Replay(GoalScheduleImporter::ImportFile(kGoalData + "goal-irequires.goal")))
        << replay->GetStuckReport();
    EXPECT_EQ(StartNs(replay, 0, 1), 0); // l2 irequires l1 (started at 0), on cpu 1
    EXPECT_EQ(EndNs(replay, 0, 1), 300);
    EXPECT_EQ(StartNs(replay, 0, 2), 5000); // l3 requires l1 (ended at 5000)
    EXPECT_EQ(EndNs(replay, 0, 2), 5300);
    EXPECT_EQ(StartNs(replay, 0, 4), 0); // l5 irequires l4, posted at 0
    // l4's message leaves rank 1 after m1 (10 µs) and o, and costs o again at rank 0.
    EXPECT_GE(EndNs(replay, 0, 3), 10000 + 2 * kLogGopsO);
}

// One op at a time per CPU stream; message starts on one NIC one gap g + (s-1)G apart.
TEST_F(ReplayTest, GoalCpuAndNicStreams)
{
    ASSERT_TRUE(Replay(GoalScheduleImporter::ImportFile(kGoalData + "goal-streams.goal")))
        << replay->GetStuckReport();
    EXPECT_EQ(StartNs(replay, 0, 0), 0); // a on cpu 0
    EXPECT_EQ(EndNs(replay, 0, 0), 1000);
    EXPECT_EQ(StartNs(replay, 0, 1), 1000); // b waits for cpu 0
    EXPECT_EQ(EndNs(replay, 0, 1), 2000);
    EXPECT_EQ(StartNs(replay, 0, 2), 0);                                     // c on cpu 1, beside a
    EXPECT_EQ(StartNs(replay, 0, 3), 0);                                     // s1 on nic 0
    EXPECT_EQ(StartNs(replay, 0, 4), kLogGopsGap + 1023 * kLogGopsGPerByte); // s2: nic 0 again
    EXPECT_EQ(StartNs(replay, 0, 5), 0);                                     // s3 on nic 1
    // Each send holds its CPU for o before the message enters the fabric.
    EXPECT_GE(EndNs(replay, 0, 3), kLogGopsO);
}

// Above S a send completes when the receiver matched its message (rendezvous); below at once.
TEST_F(ReplayTest, GoalRendezvousSendWaitsForTheMatch)
{
    Config::SetDefault("ns3::LogGopsCost::GapPerByteNs", DoubleValue(0.0));
    ASSERT_TRUE(Replay(GoalScheduleImporter::ImportFile(kGoalData + "goal-rendezvous.goal")))
        << replay->GetStuckReport();
    EXPECT_EQ(EndNs(replay, 1, 1), 50000); // r1 posted after w, message long there
    EXPECT_EQ(EndNs(replay, 0, 0), 50000); // big (128 KiB) ends with that match
    EXPECT_LT(EndNs(replay, 0, 1), 50000); // small (1 KiB, eager) does not wait
}

// A message no receive takes (tag 2 against a tag-1 receive from any source) is named in the
// stuck report, and so is the receive.
TEST_F(ReplayTest, GoalUnmatchedMessageIsReported)
{
    const std::string s = "num_ranks 2\nrank 0 {\nl1: recv 8b from -1 tag 1\n}\n"
                          "rank 1 {\nl1: send 8b to 0 tag 2\n}\n";
    EXPECT_FALSE(Replay(GoalScheduleImporter::ImportString(s, "t.goal")));
    const std::string report = replay->GetStuckReport();
    EXPECT_NE(report.find("'m*_0_1_0' (recv, line 3) posted, no message from any rank with "
                          "tag 1 arrived"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("rank 0: the message of 'm1_0_2_0' (line 6) from rank 1 with tag 2 "
                          "arrived, no receive took it"),
              std::string::npos)
        << report;
}

// A 1 KiB binomial broadcast over 128 ranks (7 rounds) pays LogGOPS' host costs.  With F the
// fabric's time of one message (measured alone, costs zero), rank r, reached over m hops
// whose highest bit is 2^6, receives at (7 - m)·Δ + m·(2o + F): each hop costs o at the sender,
// F and o at the receiver, and the k-th send of a rank starts k·Δ after its first, Δ =
// max(o + (s-1)O, g + (s-1)G).  The broadcast ends at the largest: m = 1 (rank 64) when
// Δ > 2o + F (LogGOPSim's defaults), m = 7 (rank 127) otherwise.  Before the cost model every
// send started at once and the broadcast took about 1.6 µs on dgx-h100 x 16.
TEST_F(ReplayTest, GoalBroadcastPaysLogGopsCosts)
{
    const uint32_t p = 128;
    const uint64_t s = 1024;
    auto run = [this](const std::string& text) {
        Simulator::Destroy();
        EXPECT_TRUE(Replay(GoalScheduleImporter::ImportString(text, "bcast.goal")))
            << replay->GetStuckReport();
    };
    Config::SetDefault("ns3::LogGopsCost::Overhead", TimeValue(Time(0)));
    Config::SetDefault("ns3::LogGopsCost::Gap", TimeValue(Time(0)));
    Config::SetDefault("ns3::LogGopsCost::GapPerByteNs", DoubleValue(0.0));
    std::string ping = "num_ranks " + std::to_string(p) + "\nrank 0 {\nl1: send 1024b to 1\n}\n" +
                       "rank 1 {\nl1: recv 1024b from 0\n}\n";
    run(ping);
    // The receive's end (the sender hears of its send a notification later).
    const int64_t fabric = EndNs(replay, 1, 0);
    ASSERT_GT(fabric, 0);

    Config::Reset();
    const int64_t delta = std::max(kLogGopsO, kLogGopsGap + int64_t(s - 1) * kLogGopsGPerByte);
    const int64_t hop = 2 * kLogGopsO + fabric;
    ASSERT_GT(delta, hop); // the defaults: the root's gap dominates
    run(GoalBinomialBroadcast(p, s));
    const int64_t withDefaults = replay->GetEndTime().GetNanoSeconds();
    // Every message runs alone on its links of the star (the ping's F); ±1 ns per hop: the
    // links round a packet's serialisation (84.16 ns for 1052 bytes at 100 Gb/s) to whole ns
    // from wherever it starts.
    EXPECT_NEAR(withDefaults, 6 * delta + hop, 1);

    // Without the NIC gap, Δ = o < 2o + F: the longest path is 7 hops, 7 × (2o + F).
    Config::SetDefault("ns3::LogGopsCost::Gap", TimeValue(Time(0)));
    Config::SetDefault("ns3::LogGopsCost::GapPerByteNs", DoubleValue(0.0));
    run(GoalBinomialBroadcast(p, s));
    const int64_t noGap = replay->GetEndTime().GetNanoSeconds();
    EXPECT_NEAR(noGap, 7 * hop, 7); // ±1 ns per hop, as above
}

// A trace the builder would reject, built by hand: rank 0 receives from rank 1, which never
// sends; rank 0's member of the allreduce waits behind that receive, so rank 1 waits in the
// collective forever.  Simulator::Run() ends; the report names both ranks and the labels.
TEST_F(ReplayTest, UnsatisfiableDependencyIsReported)
{
    WorkloadTrace t;
    t.source = "hand.trace";
    t.numRanks = 2;
    t.groups.push_back({"dp0", {0, 1}});
    t.ops.resize(2);
    WorkloadOp recv;
    recv.kind = WorkloadOpKind::Recv;
    recv.label = "act7";
    recv.from = 1;
    recv.bytes = 4096;
    recv.line = 5;
    WorkloadOp ar;
    ar.kind = WorkloadOpKind::AllReduce;
    ar.label = "grad";
    ar.bytes = MiB;
    ar.group = 0;
    ar.collective = 0;
    ar.line = 6;
    t.ops.Append(0, recv);
    ar.deps = {0};
    t.ops.Append(0, ar);
    WorkloadOp fwd;
    fwd.kind = WorkloadOpKind::Compute;
    fwd.label = "fwd";
    fwd.timeNs = 1000;
    t.ops.Append(1, fwd);
    ar.deps = {0};
    t.ops.Append(1, ar);
    t.collectives.push_back({WorkloadOpKind::AllReduce, 0, "grad", MiB, {{0, 1}, {1, 1}}});
    EXPECT_FALSE(Replay(std::move(t)));
    EXPECT_EQ(replay->GetCompletedOps(), 1u);
    const std::string report = replay->GetStuckReport();
    std::cout << report;
    EXPECT_NE(report.find("1 of 4 ops completed"), std::string::npos) << report;
    EXPECT_NE(report.find("rank 0: 2 ops unfinished; 'act7' (recv, line 5) receive from rank 1 "
                          "never arrived: no matching send"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("rank 1: 1 ops unfinished; 'grad' (allreduce, line 6) on group dp0: "
                          "1 of 2 members reached it; missing rank 0"),
              std::string::npos)
        << report;
    EXPECT_TRUE(replay->GetIterationTimes().empty());
}

// Cross-rank deadlock (each rank receives before it sends): nothing but the receives start.
TEST_F(ReplayTest, DeadlockIsReported)
{
    WorkloadTrace t;
    t.source = "deadlock.trace";
    t.numRanks = 2;
    t.ops.resize(2);
    for (uint32_t r = 0; r < 2; ++r)
    {
        WorkloadOp recv;
        recv.kind = WorkloadOpKind::Recv;
        recv.label = "x";
        recv.from = 1 - r;
        recv.bytes = 8;
        recv.recvPeerOp = 1;
        WorkloadOp send;
        send.kind = WorkloadOpKind::Send;
        send.label = "x";
        send.to = 1 - r;
        send.bytes = 8;
        send.sendPeerOp = 0;
        send.deps = {0};
        t.ops.SetRank(r, {recv, send});
    }
    EXPECT_FALSE(Replay(std::move(t)));
    const std::string report = replay->GetStuckReport();
    for (uint32_t r = 0; r < 2; ++r)
    {
        EXPECT_NE(report.find("rank " + std::to_string(r) +
                              ": 2 ops unfinished; 'x' (recv) receive from rank " +
                              std::to_string(1 - r) + " never arrived: send 'x' on rank " +
                              std::to_string(1 - r) + " never started"),
                  std::string::npos)
            << report;
    }
    EXPECT_EQ(transport->GetMessagesCompleted(), 0u);
}

// On a real cluster (2 × DGX H100: NVLink inside a server, InfiniBand across) the per-plane
// breakdown follows the transport's plane choice: rank 1 only takes part in the TP ring
// allreduce (NVLink) and rank 8 only in the DP allreduce with rank 0 and the PP send
// (InfiniBand).  Each rank's busy time on its plane equals the time its collectives ran
// (from the last member's arrival) plus its p2p spans, within 1%: ring steps keep a message
// in flight to or from every member from the first submission to the last delivery; no
// compute runs, so all of it is exposed.  A collective op also spans the two notifications
// around the run (last member ready, last rank done), when no message is in flight.
TEST_F(ReplayTest, ClusterPlanesInTheBreakdown)
{
    ReplayOnDgxH100(2,
                    "fabric-trace 1\nranks 16\ngroup tp0 0-7\ngroup dp0 0,8\n"
                    "0-7 t allreduce group=tp0 bytes=8MiB algorithm=ring\n"
                    "0,8 d allreduce group=dp0 bytes=8MiB algorithm=ring\n"
                    "0 p send to=8 bytes=8MiB\n8 p recv from=0 bytes=8MiB\n");
    if (HasFatalFailure())
    {
        return;
    }
    auto span = [this](uint32_t rank, uint32_t index) {
        return (replay->GetOpEnd(rank, index) - replay->GetOpStart(rank, index)).GetNanoSeconds();
    };
    const ReplayBreakdown r1 = replay->GetBreakdown(1);
    const ReplayBreakdown r8 = replay->GetBreakdown(8);
    std::cout << "[replay] rank 1 nvlink " << r1.exposedByPlaneNs.at("nvlink") << " ns (TP op "
              << span(1, 0) << "), rank 8 infiniband " << r8.exposedByPlaneNs.at("infiniband")
              << " ns (DP + PP ops " << span(8, 0) + span(8, 1) << " incl. waiting for rank 0)\n";
    const int64_t notify = transport->GetNotificationLatency().GetNanoSeconds();
    EXPECT_NEAR(double(r1.exposedByPlaneNs.at("nvlink")) / (span(1, 0) - 2 * notify), 1.0, 0.01);
    EXPECT_EQ(r1.commByPlaneNs.at("infiniband"), 0u);
    EXPECT_EQ(r1.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::Tp)],
              static_cast<uint64_t>(span(1, 0)));
    // Rank 8 reaches the DP allreduce at 0 but waits for rank 0 (busy in TP): its
    // InfiniBand time starts when rank 0 arrives.
    const int64_t dpRunning = (replay->GetOpEnd(8, 0) - replay->GetOpStart(0, 1)).GetNanoSeconds();
    EXPECT_EQ(replay->GetOpStart(0, 1), replay->GetOpEnd(0, 0));
    EXPECT_NEAR(double(r8.exposedByPlaneNs.at("infiniband")) /
                    (dpRunning - 2 * notify + span(8, 1)),
                1.0,
                0.01);
    EXPECT_EQ(r8.commByPlaneNs.at("nvlink"), 0u);
    EXPECT_EQ(r8.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::Dp)],
              static_cast<uint64_t>(span(8, 0)));
    EXPECT_EQ(r8.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::Pp)],
              static_cast<uint64_t>(span(8, 1)));
    EXPECT_EQ(r8.computeNs, 0u);
}

// An NVLS allreduce sends no transport messages: the plane the engine's Resolve found
// (the server's NVLink) counts as busy for every member from the collective's start, one
// NotificationLatency after all were ready at 0, to its end: exactly span − latency.  The
// group is named tp0 but says kind=dp, and the time counts as DP.
TEST_F(ReplayTest, InSwitchAllReduceOnItsPlaneAndGroupKind)
{
    ReplayOnDgxH100(1,
                    "fabric-trace 1\nranks 8\ngroup tp0 0-7 kind=dp\n"
                    "0-7 t allreduce group=tp0 bytes=8MiB algorithm=nvls\n");
    if (HasFatalFailure())
    {
        return;
    }
    const int64_t notify = transport->GetNotificationLatency().GetNanoSeconds();
    for (uint32_t r = 0; r < 8; ++r)
    {
        const int64_t span = (replay->GetOpEnd(r, 0) - replay->GetOpStart(r, 0)).GetNanoSeconds();
        const ReplayBreakdown b = replay->GetBreakdown(r);
        EXPECT_EQ(b.commByPlaneNs.at("nvlink"), static_cast<uint64_t>(span - notify)) << r;
        EXPECT_EQ(b.exposedByKindNs[static_cast<std::size_t>(ParallelismKind::Dp)],
                  static_cast<uint64_t>(span))
            << r;
        EXPECT_EQ(b.commByKindNs[static_cast<std::size_t>(ParallelismKind::Tp)], 0u) << r;
    }
}

// More trace ranks than the transport has: refused before anything runs.
TEST_F(ReplayTest, TraceLargerThanClusterIsRefused)
{
    Star(2);
    replay = CreateObject<WorkloadReplay>();
    replay->SetTrace(Parse("fabric-trace 1\nranks 4\ngroup g 0-3\n0-3 a allreduce group=g "
                           "bytes=1MiB\n"));
    replay->SetTransport(transport);
    replay->SetCollectiveEngine(engine);
    try
    {
        replay->Start();
        ADD_FAILURE() << "accepted";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("needs 4 ranks but the transport has no rank 2"),
                  std::string::npos)
            << e.what();
    }
}

// ops rows: one per op with the replay's times; compute 0..1 ms, the send/recv after it,
// the allreduce after both; the p2p flow's op_id is the send's ops.op_id.
TEST_F(ReplayTest, OpsRowsCarryTheTimeline)
{
    const test_util::ScratchDir scratch("replay");
    const std::string path = scratch.File("results.db");
    Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
    db->Open(path);
    db->BeginRun("replay-test", "workload-replay-test", 1, "{}");
    uint32_t begins = 0;
    uint32_t ends = 0;
    const std::string text = "fabric-trace 1\nranks 2\ngroup tp0 0,1\n"
                             "0-1 fwd compute time=1ms\n0 act send to=1 bytes=1MiB\n"
                             "1 act recv from=0 bytes=1MiB\n"
                             "0-1 ar allreduce group=tp0 bytes=2MiB\n";
    Star(2);
    replay = CreateObject<WorkloadReplay>();
    replay->SetTrace(Parse(text));
    replay->SetTransport(transport);
    replay->SetCollectiveEngine(engine);
    replay->SetResultsDatabase(db);
    transport->SetResultsDatabase(db);
    engine->SetResultsDatabase(db);
    replay->TraceConnectWithoutContext(
        "OpBegin",
        MakeCallback(+[](uint32_t* n, uint32_t, uint32_t, const std::string&) {
            ++*n;
        }).Bind(&begins));
    replay->TraceConnectWithoutContext(
        "OpEnd",
        MakeCallback(+[](uint32_t* n, uint32_t, uint32_t, const std::string&, Time) {
            ++*n;
        }).Bind(&ends));
    replay->Start();
    Simulator::Run();
    ASSERT_TRUE(replay->IsComplete()) << replay->GetStuckReport();
    EXPECT_EQ(begins, 6u);
    EXPECT_EQ(ends, 6u);
    db->EndRun("complete", Simulator::Now());
    db->Close();

    results_db_test::Reader reader(path);
    auto scalar = [&reader](const std::string& sql) { return reader.Int(sql); };
    EXPECT_EQ(scalar("SELECT count(*) FROM ops"), 6);
    EXPECT_EQ(scalar("SELECT count(*) FROM ops WHERE label='fwd' AND kind='compute' AND "
                     "start_ns=0 AND end_ns=1000000"),
              2);
    for (uint32_t r = 0; r < 2; ++r)
    {
        for (uint32_t i = 0; i < replay->GetTrace().ops[r].size(); ++i)
        {
            const std::string where = " FROM ops WHERE rank=" + std::to_string(r) +
                                      " AND op_id=" + std::to_string(replay->GetOpId(r, i));
            EXPECT_EQ(scalar("SELECT start_ns" + where), replay->GetOpStart(r, i).GetNanoSeconds());
            EXPECT_EQ(scalar("SELECT end_ns" + where), replay->GetOpEnd(r, i).GetNanoSeconds());
        }
    }
    // The send starts at 1 ms and ends one notification (the acknowledgement) after the
    // recv; rank 0 therefore reaches the allreduce last.  The collective runs one
    // notification (rank 0's "ready") after that, and both ops end one notification
    // (the last rank's "done") after the collectives row.
    const int64_t notify = transport->GetNotificationLatency().GetNanoSeconds();
    EXPECT_EQ(scalar("SELECT start_ns FROM ops WHERE rank=0 AND label='act'"), 1000000);
    EXPECT_EQ(scalar("SELECT end_ns FROM ops WHERE rank=0 AND label='act'"),
              scalar("SELECT end_ns FROM ops WHERE rank=1 AND label='act'") + notify);
    EXPECT_EQ(scalar("SELECT count(DISTINCT end_ns) FROM ops WHERE label='ar'"), 1);
    EXPECT_EQ(scalar("SELECT max(start_ns) FROM ops WHERE label='ar'"),
              scalar("SELECT end_ns FROM ops WHERE rank=0 AND label='act'"));
    EXPECT_EQ(scalar("SELECT start_ns FROM collectives"),
              scalar("SELECT max(start_ns) FROM ops WHERE label='ar'") + notify);
    EXPECT_EQ(scalar("SELECT max(end_ns) FROM ops WHERE label='ar'"),
              scalar("SELECT end_ns FROM collectives") + notify);
    EXPECT_EQ(scalar("SELECT count(*) FROM flows f JOIN ops o ON f.op_id = o.op_id AND "
                     "f.run_id = o.run_id WHERE o.label='act' AND o.rank=0 AND f.src_rank=0"),
              1);
}

} // namespace

// Ranks that share a program (WorkloadOpTable) replay as if each had its own: a generated
// TP 2 x PP 2 x DP 2 job (two programs, one per stage) and the same ops given to every rank
// separately (eight programs) start and end every op at the same nanosecond.
TEST_F(ReplayTest, SharedProgramsReplayAsUnsharedOnes)
{
    TransformerTraceConfig c;
    c.layers = 2;
    c.hidden = 1024;
    c.seq = 512;
    c.tp = 2;
    c.pp = 2;
    c.dp = 2;
    c.microBatches = 3;
    c.bucketBytes = 4 << 20;
    const WorkloadTrace shared = TransformerTraceGenerator(c).GenerateTrace();
    WorkloadTrace own = shared;
    for (uint32_t r = 0; r < own.numRanks; ++r)
    {
        std::vector<WorkloadOp> ops;
        for (const auto& op : shared.ops[r])
        {
            ops.push_back(op.ToOp());
        }
        own.ops.SetRank(r, ops);
    }
    ASSERT_EQ(shared.ops.CountPrograms(), 2u);
    ASSERT_EQ(own.ops.CountPrograms(), 8u);
    auto times = [this](const WorkloadTrace& t) {
        std::vector<std::pair<int64_t, int64_t>> v;
        EXPECT_TRUE(Replay(t)) << replay->GetStuckReport();
        for (uint32_t r = 0; r < t.numRanks; ++r)
        {
            for (uint32_t i = 0; i < t.ops[r].size(); ++i)
            {
                v.emplace_back(replay->GetOpStart(r, i).GetNanoSeconds(),
                               replay->GetOpEnd(r, i).GetNanoSeconds());
            }
        }
        TearDown();
        return v;
    };
    const auto a = times(shared);
    const auto b = times(own);
    ASSERT_EQ(a.size(), shared.CountOps());
    EXPECT_EQ(a, b); // exact: the same events in the same order
    EXPECT_GT(a.back().second, 0);
}
