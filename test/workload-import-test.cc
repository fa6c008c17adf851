/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/trace-goal.h"
#include "ns3/trace-native.h"
#include "ns3/trace-simai.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

using namespace ns3;

namespace
{

// Public sample workloads beside the checkout, or where AI_FABRIC_WORKLOAD_SAMPLES points.
const std::string kSamples = getenv("AI_FABRIC_WORKLOAD_SAMPLES")
                                 ? std::string(getenv("AI_FABRIC_WORKLOAD_SAMPLES")) + "/"
                                 : AI_FABRIC_SOURCE_DIR "/../shared/samples/workloads/";

bool
HaveSamples()
{
    struct stat st;
    return stat(kSamples.c_str(), &st) == 0;
}

#define REQUIRE_SAMPLES()                                                                          \
    if (!HaveSamples())                                                                            \
    {                                                                                              \
        GTEST_SKIP() << "no samples at " << kSamples;                                              \
    }

size_t
Count(const WorkloadTrace& t, uint32_t rank, WorkloadOpKind kind)
{
    size_t n = 0;
    for (const auto& op : t.ops[rank])
    {
        n += op.kind == kind;
    }
    return n;
}

std::string
ErrorOf(const std::function<void()>& f)
{
    try
    {
        f();
    }
    catch (const WorkloadError& e)
    {
        return e.what();
    }
    return "no error";
}

} // namespace

// AICB micro_test: MICRO, 19 rows whose wg collective is ALLREDUCE 4 KiB .. 1 GiB
// (doubling), no compute, update time 1.  Imported as 19 serial allreduces over all
// ranks, each followed by its 1 ns update.
TEST(WorkloadSimAi, MicroAllReduceSweep)
{
    REQUIRE_SAMPLES();
    SimAiImportOptions opt;
    opt.ranks = 8; // the file has no all_gpus
    auto t = SimAiWorkloadImporter::ImportFile(kSamples +
                                                   "aicb_workload_simAI_micro_test_all_reduce.txt",
                                               opt);
    ASSERT_EQ(t.ops[0].size(), 2u * 19);
    EXPECT_EQ(t.ops[0][0].bytes, 4096u);
    EXPECT_EQ(t.ops[0][1].timeNs, 1u);
    EXPECT_EQ(t.ops[0][36].bytes, 1ULL << 30);
    EXPECT_EQ(t.collectives.size(), 19u);
    EXPECT_EQ(t.groups[t.ops[3][0].group].ranks.size(), 8u); // DP group = all 8 ranks
    // the sum of a doubling series 4 KiB .. 1 GiB is 2 GiB - 4 KiB
    EXPECT_EQ(t.SumBytes(5, WorkloadOpKind::AllReduce), (2ULL << 30) - 4096);
}

// ASTRA-sim 1.0 ResNet-50, DATA, 54 layers, every row has compute in all three
// phases, an ALLREDUCE weight-gradient collective and an update time.  Per rank: 54 fwd +
// 53 ig (DATA skips the first layer's) + 54 wg computes + 54 updates, 54 allreduces.
TEST(WorkloadSimAi, Resnet50DataParallel)
{
    REQUIRE_SAMPLES();
    SimAiImportOptions opt;
    opt.ranks = 4;
    auto t = SimAiWorkloadImporter::ImportFile(
        kSamples + "astrasim1_inputs_workload_Resnet50_DataParallel.txt",
        opt);
    EXPECT_EQ(Count(t, 2, WorkloadOpKind::Compute), 54u + 53u + 54u + 54u);
    EXPECT_EQ(Count(t, 2, WorkloadOpKind::AllReduce), 54u);
    // conv1: fwd 13003 cycles = 13003 ns at 1 GHz; its wg allreduce is 37632 B
    EXPECT_EQ(t.ops[0][0].label, "p0.l0.f");
    EXPECT_EQ(t.ops[0][0].timeNs, 13003u);
    const auto& last = t.ops[0][t.ops[0].size() - 2];
    EXPECT_EQ(last.label, "p0.l0.wgc");
    EXPECT_EQ(last.bytes, 37632u);
    EXPECT_EQ(t.ops[0].back().timeNs, 3229u);                        // conv1's update time
    EXPECT_EQ(t.SumBytes(0, WorkloadOpKind::AllReduce), 102011648u); // column 11 summed
}

// ASTRA-sim 1.0 Transformer, HYBRID_TRANSFORMER, model_parallel_NPU_group 4, on 16
// ranks: tp 4 x dp 4.  57 rows, all with three computes; 14 fwd, 19 ig (the first row's
// is NONE) and 37 wg collectives (all ALLREDUCE, 2434351104 B in total), each followed by
// the row's update time.
TEST(WorkloadSimAi, TransformerHybrid)
{
    REQUIRE_SAMPLES();
    SimAiImportOptions opt;
    opt.ranks = 16;
    auto t = SimAiWorkloadImporter::ImportFile(
        kSamples + "astrasim1_inputs_workload_Transformer_HybridParallel.txt",
        opt);
    EXPECT_EQ(t.ops[5].size(), 57u * 3 + 2 * (14 + 19 + 37));
    // Embedding: fwd ALLGATHER 8 MiB on the TP group {4,5,6,7} of rank 5
    const auto& ag = t.ops[5][1];
    EXPECT_EQ(ag.kind, WorkloadOpKind::AllGather);
    EXPECT_EQ(ag.bytes, 8388608u);
    EXPECT_EQ(t.groups[ag.group].ranks, (std::vector<uint32_t>{4, 5, 6, 7}));
    uint64_t wg = 0;
    for (const auto& op : t.ops[5])
    {
        if (op.stream == 2 && op.kind != WorkloadOpKind::Compute)
        {
            wg += op.bytes;
            EXPECT_EQ(t.groups[op.group].ranks, (std::vector<uint32_t>{1, 5, 9, 13})); // DP
        }
    }
    EXPECT_EQ(wg, 2434351104u);
}

// AICB Llama-7B megatron tp2: 76 rows; fwd compute on 75 (norm has 0), ig and wg
// compute on all 76, 74 fwd collectives (norm's BROADCAST moves nothing in SimAI), 66 ig
// (the first row's is NONE), one wg REDUCESCATTER of 13509853184 B, an update of 100 ns
// after each of the 141 collectives.
TEST(WorkloadSimAi, AicbLlamaMegatron)
{
    REQUIRE_SAMPLES();
    SimAiImportOptions opt;
    opt.ranks = 8;
    auto t = SimAiWorkloadImporter::ImportFile(
        kSamples + "aicb_workload_simAI_L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt",
        opt);
    EXPECT_EQ(t.ops[3].size(), 75u + 76 + 76 + 2 * (74 + 66 + 1));
    EXPECT_EQ(Count(t, 3, WorkloadOpKind::Broadcast), 0u);
    EXPECT_EQ(t.ops[3][0].label, "p0.l1.f"); // norm (row 0) has neither compute nor collective
    EXPECT_EQ(t.SumBytes(3, WorkloadOpKind::ReduceScatter), 13509853184u);
}

// SimAI example: 2 rows of fwd ALLREDUCE (16 MiB, 64 MiB) with 556000 ns compute on a
// TP group of all 8 GPUs, each followed by its 1 ns update; ig and wg compute 1 ns each.
// 10 ops per rank.
TEST(WorkloadSimAi, SimAiMicroAllReduceExample)
{
    REQUIRE_SAMPLES();
    auto t = SimAiWorkloadImporter::ImportFile(kSamples + "SimAI_example_microAllReduce.txt", {});
    ASSERT_EQ(t.numRanks, 8u); // all_gpus
    EXPECT_EQ(t.ops[0].size(), 10u);
    EXPECT_EQ(t.ops[0][1].bytes, 16777216u);
    EXPECT_EQ(t.ops[0][4].bytes, 67108864u);
    EXPECT_EQ(t.ops[0][0].timeNs, 556000u);
}

// The 9216-GPU analytical example parses (conversion would be ~46 M ops: not done here).
TEST(WorkloadSimAi, AnalyticalHeader)
{
    REQUIRE_SAMPLES();
    auto w = SimAiWorkloadImporter::ParseFile(kSamples + "SimAI_example_workload_analytical.txt");
    EXPECT_EQ(w.parallelism, "HYBRID_TRANSFORMER_FWD_IN_BCKWD");
    EXPECT_EQ(w.modelParallelGroup, 2u);
    EXPECT_EQ(w.ep, 16u);
    EXPECT_EQ(w.pp, 12u);
    EXPECT_EQ(w.vpp, 8u);
    EXPECT_EQ(w.ga, 24u);
    EXPECT_EQ(w.allGpus, 9216u);
    EXPECT_EQ(w.ppCommBytes, 50331648u);
    ASSERT_EQ(w.layers.size(), 1789u);
    EXPECT_EQ(w.layers[0].wgComm.kind, WorkloadOpKind::AllGather);
    EXPECT_EQ(w.layers[0].wgComm.bytes, 2807758848u);
    EXPECT_EQ(w.layers[4].name, "moe_grad_norm1");
    EXPECT_EQ(w.layers[4].wgComm.group, SimAiGroupKind::DpEp);
}

// EP groups on a small synthetic file: 8 ranks, tp 1, dp 8, ep 4: EP groups are
// blocks of 4 consecutive DP indices, DP_EP groups the ranks with equal index mod 4.
TEST(WorkloadSimAi, ExpertGroups)
{
    const char* text = "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 4 pp: 1 all_gpus: 8\n"
                       "1\n"
                       "moe -1 10 ALLTOALL_EP 4096 10 NONE 0 10 ALLREDUCE_DP_EP 8192 1\n";
    auto t = SimAiWorkloadImporter::ToTrace(SimAiWorkloadImporter::ParseString(text, "moe.txt"),
                                            {},
                                            "moe.txt");
    const auto& a2a = t.ops[6][1];
    EXPECT_EQ(a2a.kind, WorkloadOpKind::AllToAll);
    EXPECT_EQ(t.groups[a2a.group].ranks, (std::vector<uint32_t>{4, 5, 6, 7}));
    const auto& ar = t.ops[6][t.ops[6].size() - 2];
    EXPECT_EQ(ar.label, "p0.l0.wgc");
    EXPECT_EQ(t.groups[ar.group].ranks, (std::vector<uint32_t>{2, 6}));
}

TEST(WorkloadSimAi, Errors)
{
    auto parse = [](const std::string& text) {
        return ErrorOf([&] { SimAiWorkloadImporter::ParseString(text, "w.txt"); });
    };
    EXPECT_EQ(parse("PIPELINE\n1\n"),
              "w.txt:1: field 'parallelism': expected DATA, MODEL, HYBRID_DATA_MODEL, "
              "HYBRID_MODEL_DATA, HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, "
              "HYBRID_DLRM, HYBRID_CUSTOMIZED or MICRO, got 'PIPELINE'");
    EXPECT_EQ(parse("DATA\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 12XB 1\n"),
              "w.txt:3: field 'wg bytes': expected a whole number up to 18446744073709551615, "
              "got '12XB'");
    EXPECT_EQ(parse("DATA\n1\nl -1 1 NONE 0 1 NONE 0 1 ALLSUM 12 1\n"),
              "w.txt:3: field 'wg comm type': expected NONE, ALLREDUCE, ALLGATHER, "
              "REDUCESCATTER, ALLTOALL, ALLREDUCEALLTOALL or BROADCAST (optionally _EP or "
              "_DP_EP), got 'ALLSUM'");
    EXPECT_EQ(parse("DATA\n2\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"),
              "w.txt:3: field 'layers': file declares 2 layers but has 1");
    EXPECT_EQ(parse("DATA\n1\nl -1 1 NONE 0 1\n"),
              "w.txt:3: field 'ig comm type': expected 12 columns (name, reserved, fwd compute, "
              "fwd comm, fwd bytes, ig compute, ig comm, ig bytes, wg compute, wg comm, wg "
              "bytes, update), got 6");
    EXPECT_EQ(ErrorOf([] {
                  SimAiWorkloadImporter::ToTrace(
                      SimAiWorkloadImporter::ParseString(
                          "HYBRID_TRANSFORMER model_parallel_NPU_group: 3\n0\n",
                          "w.txt"),
                      SimAiImportOptions{8, 1.0, 1, 0},
                      "w.txt");
              }),
              "w.txt:1: field 'model_parallel_NPU_group': 8 ranks are not a multiple of tp 3 x "
              "pp 1");
}

namespace
{

// Ring allreduce in GOAL on p ranks: 2(p-1) steps, each a send to the right
// neighbour and a receive from the left one; step k's send waits for step k-1's
// receive and a reduction calc.
std::string
GoalRing(uint32_t p, uint64_t chunk)
{
    std::string s = "num_ranks " + std::to_string(p) + "\n";
    for (uint32_t r = 0; r < p; ++r)
    {
        s += "rank " + std::to_string(r) + " {\n";
        for (uint32_t k = 0; k < 2 * (p - 1); ++k)
        {
            s += "l" + std::to_string(3 * k) + ": send " + std::to_string(chunk) + "b to " +
                 std::to_string((r + 1) % p) + " tag " + std::to_string(k) + "\n";
            s += "l" + std::to_string(3 * k + 1) + ": recv " + std::to_string(chunk) + "b from " +
                 std::to_string((r + p - 1) % p) + " tag " + std::to_string(k) + "\n";
            s += "l" + std::to_string(3 * k + 2) + ": calc 100 cpu 0\n";
            s += "l" + std::to_string(3 * k + 2) + " requires l" + std::to_string(3 * k + 1) + "\n";
            if (k > 0)
            {
                s += "l" + std::to_string(3 * k) + " requires l" + std::to_string(3 * k - 1) + "\n";
            }
        }
        s += "}\n";
    }
    return s;
}

} // namespace

// 8 ranks x 14 steps: 112 sends, 112 receives, all matched; 112 calcs.
TEST(WorkloadGoal, RingSchedule)
{
    auto t = GoalScheduleImporter::ImportString(GoalRing(8, 1024), "ring.goal");
    size_t sends = 0;
    size_t recvs = 0;
    for (uint32_t r = 0; r < 8; ++r)
    {
        sends += Count(t, r, WorkloadOpKind::Send);
        recvs += Count(t, r, WorkloadOpKind::Recv);
        for (const auto& op : t.ops[r])
        {
            if (op.kind == WorkloadOpKind::Send)
            {
                EXPECT_GE(op.sendPeerOp, 0);
            }
        }
    }
    EXPECT_EQ(sends, 112u);
    EXPECT_EQ(recvs, 112u);
    EXPECT_EQ(t.ops[0][0].label, "m0_1_0_0");
    EXPECT_EQ(t.ops[0][1].label, "m7_0_0_0");
    // send of step 1 waits (only) for calc of step 0
    EXPECT_EQ(t.ops[0][3].deps, std::vector<uint32_t>{2});
    // and the native print re-parses to the same trace
    std::string printed = NativeTracePrinter::Print(t);
    EXPECT_EQ(NativeTracePrinter::Print(NativeTraceParser::ParseString(printed, "p")), printed);
}

TEST(WorkloadGoal, Errors)
{
    auto imp = [](const std::string& text) {
        return ErrorOf([&] { GoalScheduleImporter::ImportString(text, "g.goal"); });
    };
    EXPECT_EQ(imp("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"),
              "g.goal:3: field 'to': send 'm0_1_0_0' from rank 0 to rank 1 is never received");
    EXPECT_EQ(imp("num_ranks 2\nrank 0 {\nl1: calc 5\nl1 requires l9\n}\n"),
              "g.goal:4: field 'requires': unknown label 'l9' on rank 0");
    EXPECT_EQ(imp("num_ranks 2\nrank 0 {\nl1: send 8q to 1\n}\n"),
              "g.goal:3: field 'size': expected a number up to 18446744073709551615, got '8q'");
    EXPECT_EQ(imp("num_ranks 2\nrank 2 {\n"),
              "g.goal:2: field 'rank': expected a number up to 1, got '2'");
}
