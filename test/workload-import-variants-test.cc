/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The SimAI / AICB and ASTRA-sim 1.0 variants found in public files, each on a hand-written
 * fixture of test/data/workloads (README.md there): header styles, number spellings,
 * whitespace, every communication type, the pipeline SimAI derives from pp / pp_comm / vpp /
 * ga, and ASTRA-sim's DLRM, customized, forward-in-backward and micro loops.  Every figure
 * is worked out from the fixture's text with the rules of doc/workload.md.
 */
#include "workload-import-expect.h"

#include "ns3/trace-simai.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <optional>

using namespace ns3;
using namespace ns3::importtest;

namespace
{

const std::string kData = AI_FABRIC_SOURCE_DIR "/test/data/workloads/";

WorkloadTrace
Import(const std::string& file, uint32_t ranks = 0, uint32_t firstDimension = 0)
{
    SimAiImportOptions o;
    o.ranks = ranks;
    o.firstDimension = firstDimension;
    return SimAiWorkloadImporter::ImportFile(kData + file, o);
}

/// Labels of rank r's ops of one kind, in program order.
std::vector<std::string>
LabelsOf(const WorkloadTrace& t, uint32_t r, WorkloadOpKind kind)
{
    std::vector<std::string> out;
    for (const auto& op : t.ops[r])
    {
        if (op.kind == kind)
        {
            out.push_back(op.label);
        }
    }
    return out;
}

std::optional<WorkloadOp>
Find(const WorkloadTrace& t, uint32_t r, const std::string& label)
{
    for (const auto& op : t.ops[r])
    {
        if (op.label == label)
        {
            return op.ToOp();
        }
    }
    return std::nullopt;
}

} // namespace

// AICB dense GPT with the old header (tab after the keyword, no ep / pp / vpp / ga /
// all_gpus): SimAI warns once and goes on.  moe_grad_norm rows carry ALLGATHER_DP_EP and
// REDUCESCATTER_DP_EP of size 0 (no communication) and attention an ALLTOALL_EP with no ep
// (EP 1: one rank, no communication).  4 ranks: tp 2, dp 2.
TEST(WorkloadImportVariants, AicbDenseOldHeader)
{
    auto t = Import("aicb-dense-old-header.txt", 4);
    ASSERT_EQ(t.warnings.size(), 1u);
    EXPECT_EQ(t.warnings[0],
              kData + "aicb-dense-old-header.txt:1: old header without ep, pp, vpp, ga, "
                      "all_gpus (SimAI warns 'Input workload format mismatch'): ep, pp, vpp "
                      "and ga are 1 unless given");
    ExpectProgram(t,
                  0,
                  {
                      {"p0.l0.f", K::Compute, 0, 1, "", {}},
                      {"p0.l0.fc", K::AllGather, 0, 4096, "tp0", {0}},
                      {"p0.l0.fcu", K::Compute, 0, 100, "", {1}},
                      {"p0.l1.f", K::Compute, 0, 1, "", {2}},
                      {"p0.l2.f", K::Compute, 0, 1, "", {3}},
                      {"p0.l3.f", K::Compute, 0, 2000, "", {4}},
                      {"p0.l3.fc", K::AllReduce, 0, 1024, "tp0", {5}},
                      {"p0.l3.fcu", K::Compute, 0, 100, "", {6}},
                      {"p0.l3.ig", K::Compute, 0, 3000, "", {7}}, // ALLTOALL_EP with ep 1
                      {"p0.l3.wg", K::Compute, 0, 4000, "", {8}},
                      {"p0.l2.ig", K::Compute, 0, 1, "", {9}},
                      {"p0.l2.wg", K::Compute, 0, 1, "", {10}}, // REDUCESCATTER_DP_EP 0
                      {"p0.l1.ig", K::Compute, 0, 1, "", {11}},
                      {"p0.l1.wg", K::Compute, 0, 1, "", {12}}, // ALLGATHER_DP_EP 0
                      {"p0.l0.ig", K::Compute, 0, 1, "", {13}},
                      {"p0.l0.wg", K::Compute, 0, 1, "", {14}},
                      {"p0.l0.wgc", K::ReduceScatter, 2, 8192, "dp0", {15}},
                      {"p0.l0.wgcu", K::Compute, 2, 100, "", {16}},
                  });
    EXPECT_EQ(RanksOf(t, "dp0"), (std::vector<uint32_t>{0, 2}));
    // per pass: 2 TP calls x 2 groups + 1 DP call x 2 groups
    EXPECT_EQ(t.collectives.size(), 6u);
}

// SimAI's generator: new header with pp_comm written as a float (SimAI's stoi reads
// 8388608), ga 2 blocks unrolled (embedding_layer opens each) between a prologue row
// (the DP reduce-scatter, size "65536.0") and an optimizer row.  8 ranks: pp 2 stages of
// dp 4 (tp 1), ep 2.  1F1B with m = 2: stage 0 runs F0 F1 B0 B1, stage 1 F0 B0 F1 B1.
TEST(WorkloadImportVariants, SimAiGeneratorMoeFloatPipeline)
{
    auto t = Import("simai-moe-pp2-ga2-float.txt");
    ASSERT_EQ(t.numRanks, 8u);
    EXPECT_TRUE(t.warnings.empty());
    EXPECT_EQ(t.groups.size(), 10u); // per stage: dp, 2 ep, 2 dpep
    EXPECT_EQ(RanksOf(t, "dp1"), (std::vector<uint32_t>{4, 5, 6, 7}));
    EXPECT_EQ(RanksOf(t, "ep0"), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(RanksOf(t, "ep3"), (std::vector<uint32_t>{6, 7}));
    const uint64_t act = 8388608;
    ExpectProgram(
        t,
        0,
        {
            {"p0.l0.f", K::Compute, 0, 1, "", {}}, // prologue forward
            {"p0.l1.f", K::Compute, 0, 10, "", {0}},
            {"p0.l2.f", K::Compute, 0, 100, "", {1}},
            {"p0.l2.fc", K::AllToAll, 0, 4096, "ep0", {2}},
            {"p0.l2.fcu", K::Compute, 0, 100, "", {3}},
            {"p0.m0.a0", K::Send, 3, act, "", {4}, 4}, // micro-batch 0 to stage 1
            {"p0.l3.f", K::Compute, 0, 10, "", {4}},
            {"p0.l4.f", K::Compute, 0, 100, "", {6}},
            {"p0.l4.fc", K::AllToAll, 0, 4096, "ep0", {7}},
            {"p0.l4.fcu", K::Compute, 0, 100, "", {8}},
            {"p0.m1.a0", K::Send, 3, act, "", {5, 9}, 4},
            {"p0.m0.g1", K::Recv, 0, act, "", {9}, 4}, // gradient of micro-batch 0
            {"p0.l2.ig", K::Compute, 0, 200, "", {11}},
            {"p0.l2.igc", K::AllToAll, 1, 4096, "ep0", {12}},
            {"p0.l2.igcu", K::Compute, 1, 100, "", {13}},
            {"p0.l2.wg", K::Compute, 0, 300, "", {12}},
            {"p0.l1.ig", K::Compute, 0, 20, "", {15, 14}},
            {"p0.l1.wg", K::Compute, 0, 30, "", {16}},
            {"p0.m1.g1", K::Recv, 0, act, "", {17}, 4},
            {"p0.l4.ig", K::Compute, 0, 200, "", {18}},
            {"p0.l4.igc", K::AllToAll, 1, 4096, "ep0", {14, 19}},
            {"p0.l4.igcu", K::Compute, 1, 100, "", {20}},
            {"p0.l4.wg", K::Compute, 0, 300, "", {19}},
            {"p0.l3.ig", K::Compute, 0, 20, "", {22, 21}},
            {"p0.l3.wg", K::Compute, 0, 30, "", {23}},
            {"p0.l5.f", K::Compute, 0, 5, "", {24}}, // optimizer: tp 1, no fwd collective
            {"p0.l5.ig", K::Compute, 0, 5, "", {25}},
            {"p0.l5.wg", K::Compute, 0, 5, "", {26}},
            {"p0.l0.ig", K::Compute, 0, 1, "", {27}}, // prologue backward: the DP collective
            {"p0.l0.wg", K::Compute, 0, 1, "", {28}},
            {"p0.l0.wgc", K::ReduceScatter, 2, 65536, "dp0", {29}},
            {"p0.l0.wgcu", K::Compute, 2, 100, "", {30}},
        });
    // the last stage: no warm-up, forward and backward alternate
    std::vector<std::string> pipe;
    for (const auto& op : t.ops[6])
    {
        if (op.kind == K::Send || op.kind == K::Recv)
        {
            pipe.push_back(op.label + (op.kind == K::Send ? " to " + std::to_string(op.to)
                                                          : " from " + std::to_string(op.from)));
        }
    }
    EXPECT_EQ(pipe,
              (std::vector<std::string>{"p0.m0.a0 from 2",
                                        "p0.m0.g1 to 2",
                                        "p0.m1.a0 from 2",
                                        "p0.m1.g1 to 2"}));
    EXPECT_EQ(t.ops[6][0].label, "p0.l0.f");
    EXPECT_EQ(t.ops[6][1].label, "p0.m0.a0");
    // 2 micro-batches x 2 directions x pp_comm per rank, SimAI's 2 * vpp * ga * pp_comm
    for (uint32_t r = 0; r < 8; ++r)
    {
        EXPECT_EQ(t.SumBytes(r, K::Send) + t.SumBytes(r, K::Recv), 2u * 1 * 2 * act);
    }
}

// Interleaved 1F1B (Megatron's schedule with model chunks): pp 2, vpp 2, ga 4 blocks of two
// rows; chunk c of micro-batch k is row 2k + c.  Warm-up (pp - s - 1) * 2 + (vpp - 1) * pp:
// 4 steps on stage 0, 2 on stage 1; forward step k runs micro-batch (k / 4) * 2 + k % 2,
// chunk (k % 4) / 2, a backward step the reverse chunk.
TEST(WorkloadImportVariants, SimAiInterleavedPipeline)
{
    auto t = Import("simai-pp2-vpp2-ga4.txt");
    ASSERT_EQ(t.numRanks, 2u);
    EXPECT_TRUE(t.warnings.empty());
    auto computes = [&](uint32_t r) {
        std::vector<std::string> out;
        for (const auto& op : t.ops[r])
        {
            if (op.kind == K::Compute)
            {
                out.push_back(op.label.substr(3)); // drop "p0."
            }
        }
        return out;
    };
    EXPECT_EQ(computes(0),
              (std::vector<std::string>{"l0.f",
                                        "l2.f",
                                        "l1.f",
                                        "l3.f",
                                        "l4.f",
                                        "l1.ig",
                                        "l6.f",
                                        "l3.ig",
                                        "l5.f",
                                        "l0.ig",
                                        "l7.f",
                                        "l2.ig",
                                        "l5.ig",
                                        "l7.ig",
                                        "l4.ig",
                                        "l6.ig"}));
    EXPECT_EQ(computes(1),
              (std::vector<std::string>{"l0.f",
                                        "l2.f",
                                        "l1.f",
                                        "l1.ig",
                                        "l3.f",
                                        "l3.ig",
                                        "l4.f",
                                        "l0.ig",
                                        "l6.f",
                                        "l2.ig",
                                        "l5.f",
                                        "l5.ig",
                                        "l7.f",
                                        "l7.ig",
                                        "l4.ig",
                                        "l6.ig"}));
    // virtual stages 0..3 = (stage 0, chunk 0), (1, 0), (0, 1), (1, 1): per micro-batch
    // activations leave v 0, 1, 2 and gradients v 3, 2, 1; stage 0 sends a0, a2, g2
    EXPECT_EQ(LabelsOf(t, 0, K::Send).size(), 4u * 3);
    EXPECT_EQ(LabelsOf(t, 0, K::Recv).size(), 4u * 3);
    EXPECT_EQ(t.SumBytes(0, K::Send), 12u * 1024);
    const auto a1 = Find(t, 0, "p0.m2.a1");
    ASSERT_TRUE(a1.has_value());
    EXPECT_EQ(a1->kind, K::Recv);
    EXPECT_EQ(a1->from, 1);
    EXPECT_EQ(LabelsOf(t, 1, K::Send).front(), "p0.m0.a1");
}

// CRLF, blanks after values and names, runs of tabs and spaces, numbers written as
// floats (a fraction cut off with one warning), NONE with a size and a size-0
// REDUCESCATTER (no communication), pp_comm without colon, no final newline.
TEST(WorkloadImportVariants, SimAiWhitespaceAndNumbers)
{
    const std::string path = kData + "simai-whitespace-crlf.txt";
    const std::string text = ReadFile(path);
    ASSERT_NE(text.find("\r\n"), std::string::npos);
    ASSERT_NE(text.back(), '\n');
    auto w = SimAiWorkloadImporter::ParseFile(path);
    EXPECT_EQ(w.modelParallelGroup, 2u); // "2.0"
    EXPECT_EQ(w.layers[0].name, "attn");
    EXPECT_EQ(w.layers[1].wgCompute, 600u); // "600.5"
    ASSERT_EQ(w.warnings.size(), 1u);
    EXPECT_EQ(w.warnings[0],
              std::make_pair(4u,
                             std::string("field 'wg compute': fraction of '600.5' cut off, as "
                                         "SimAI's integer reads do")));
    auto t = Import("simai-whitespace-crlf.txt");
    ExpectProgram(t,
                  0,
                  {
                      {"p0.l0.f", K::Compute, 0, 100, "", {}},
                      {"p0.l0.fc", K::AllReduce, 0, 1024, "tp0", {0}},
                      {"p0.l0.fcu", K::Compute, 0, 10, "", {1}},
                      {"p0.l1.f", K::Compute, 0, 400, "", {2}},
                      {"p0.l1.fc", K::AllGather, 0, 4096, "tp0", {3}}, // update time 0
                      {"p0.l1.ig", K::Compute, 0, 500, "", {4}},       // REDUCESCATTER 0
                      {"p0.l1.wg", K::Compute, 0, 600, "", {5}},
                      {"p0.l0.ig", K::Compute, 0, 200, "", {6}}, // NONE 777
                      {"p0.l0.wg", K::Compute, 0, 300, "", {7}},
                      {"p0.l0.wgc", K::AllReduce, 2, 2048, "dp0", {8}},
                      {"p0.l0.wgcu", K::Compute, 2, 10, "", {9}},
                  });
}

// Every communication type on 8 ranks, tp 2, dp 4, ep 2.  Rank 5 = d 2, t 1: TP group tp2
// {4, 5}; DP group dp1 {1, 3, 5, 7}; EP blocks of the DP group ep2 {1, 3}, ep3 {5, 7};
// DP_EP dpep2 {1, 5}, dpep3 {3, 7}.
TEST(WorkloadImportVariants, SimAiEveryCommunicationType)
{
    auto t = Import("simai-comm-types.txt");
    EXPECT_EQ(RanksOf(t, "ep3"), (std::vector<uint32_t>{5, 7}));
    EXPECT_EQ(RanksOf(t, "dpep2"), (std::vector<uint32_t>{1, 5}));

    struct Want
    {
        K kind;
        uint64_t bytes;
        std::string group;
    };

    const std::map<std::string, Want> want = {
        {"p0.l0.fc", {K::AllReduce, 100, "tp2"}},
        {"p0.l0.igc", {K::AllReduce, 101, "ep3"}},
        {"p0.l0.wgc", {K::AllReduce, 102, "dpep2"}},
        {"p0.l1.fc", {K::AllGather, 200, "tp2"}},
        {"p0.l1.igc", {K::AllGather, 201, "ep3"}},
        {"p0.l1.wgc", {K::AllGather, 202, "dpep2"}},
        {"p0.l2.fc", {K::ReduceScatter, 300, "tp2"}},
        {"p0.l2.igc", {K::ReduceScatter, 301, "ep3"}},
        {"p0.l2.wgc", {K::ReduceScatter, 302, "dpep2"}},
        {"p0.l3.fc", {K::AllToAll, 400, "tp2"}},
        {"p0.l3.igc", {K::AllToAll, 401, "ep3"}},
        {"p0.l3.wgc", {K::AllToAll, 402, "dpep2"}},
        // ALLREDUCEALLTOALL: SimAI's prefix test reads an all-reduce
        {"p0.l4.fc", {K::AllReduce, 500, "tp2"}},
        {"p0.l4.igc", {K::AllReduce, 501, "ep3"}},
        {"p0.l4.wgc", {K::AllReduce, 502, "dpep2"}},
        // r5 (BROADCAST, NONE 601, BROADCAST_EP) and r6 (size 0) move nothing
        {"p0.l7.igc", {K::AllReduce, 700, "tp2"}},
        {"p0.l7.wgc", {K::AllReduce, 702, "dp1"}},
    };
    std::map<std::string, Want> got;
    for (const auto& op : t.ops[5])
    {
        if (op.kind != K::Compute)
        {
            got[op.label] = {op.kind, op.bytes, t.groups[op.group].name};
        }
    }
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [label, w] : want)
    {
        SCOPED_TRACE(label);
        ASSERT_TRUE(got.count(label));
        EXPECT_EQ(got[label].kind, w.kind);
        EXPECT_EQ(got[label].bytes, w.bytes);
        EXPECT_EQ(got[label].group, w.group);
    }
    // one warning per kind, at its first line
    ASSERT_EQ(t.warnings.size(), 2u);
    EXPECT_NE(t.warnings[0].find(":7: field 'fwd comm type': ALLREDUCEALLTOALL"),
              std::string::npos);
    EXPECT_NE(t.warnings[1].find(":8: field 'fwd comm type': BROADCAST moves nothing"),
              std::string::npos);
}

// SimAI reads the declared rows and stops: the second row is ignored with a warning.
TEST(WorkloadImportVariants, SimAiRowsAfterTheDeclaredOnes)
{
    auto w = SimAiWorkloadImporter::ParseFile(kData + "simai-extra-row.txt");
    EXPECT_EQ(w.layers.size(), 1u);
    ASSERT_EQ(w.warnings.size(), 1u);
    EXPECT_EQ(w.warnings[0].first, 4u);
    EXPECT_EQ(w.warnings[0].second, "rows after the 1 declared are ignored");
}

// model_parallel_NPU_group 0: SimAI's mock NCCL makes every rank one TP group.
TEST(WorkloadImportVariants, SimAiTpZeroIsEveryRank)
{
    auto t = Import("simai-tp-zero.txt");
    ASSERT_EQ(t.groups.size(), 1u);
    EXPECT_EQ(RanksOf(t, "tp0"), (std::vector<uint32_t>{0, 1, 2, 3}));
    ExpectProgram(t,
                  3,
                  {
                      {"p0.l0.f", K::Compute, 0, 1, "", {}},
                      {"p0.l0.fc", K::AllReduce, 0, 64, "tp0", {0}},
                      {"p0.l0.ig", K::Compute, 0, 1, "", {1}},
                      {"p0.l0.wg", K::Compute, 0, 1, "", {2}},
                  });
}

// An _EP collective in a file without ep: EP 1, one rank, nothing moves.
TEST(WorkloadImportVariants, SimAiEpSuffixWithoutEp)
{
    auto t = Import("simai-ep-suffix-without-ep.txt");
    EXPECT_TRUE(t.collectives.empty());
    ExpectProgram(t,
                  1,
                  {
                      {"p0.l0.f", K::Compute, 0, 1, "", {}},
                      {"p0.l0.ig", K::Compute, 0, 1, "", {0}},
                      {"p0.l0.wg", K::Compute, 0, 1, "", {1}},
                  });
}

// ASTRA-sim 1.0 MLP under HYBRID_DATA_MODEL, CRLF and a tab after every field, no group
// size in the header: the model group is ASTRA-sim's first network dimension (2 here, the
// GPUs of a server in cluster-replay).  8 ranks: tp 2 inner, dp 4.  Rank 3: tp1 {2, 3},
// dp1 {1, 3, 5, 7}.  Without the dimension the import is refused.
TEST(WorkloadImportVariants, AstraSimMlpDataModelCrlf)
{
    const std::string file = "astrasim-mlp-data-model-crlf.txt";
    auto t = Import(file, 8, 2);
    EXPECT_EQ(RanksOf(t, "tp1"), (std::vector<uint32_t>{2, 3}));
    EXPECT_EQ(RanksOf(t, "dp1"), (std::vector<uint32_t>{1, 3, 5, 7}));
    ExpectProgram(t,
                  3,
                  {
                      {"p0.l0.f", K::Compute, 0, 100, "", {}},
                      {"p0.l0.fc", K::AllGather, 0, 1000, "tp1", {0}},
                      {"p0.l0.fcu", K::Compute, 0, 5, "", {1}},
                      {"p0.l1.f", K::Compute, 0, 200, "", {2}},
                      {"p0.l1.fc", K::AllGather, 0, 2000, "tp1", {3}},
                      {"p0.l1.fcu", K::Compute, 0, 5, "", {4}},
                      {"p0.l1.ig", K::Compute, 0, 210, "", {5}},
                      {"p0.l1.igc", K::AllReduce, 1, 2100, "tp1", {6}},
                      {"p0.l1.igcu", K::Compute, 1, 5, "", {7}},
                      {"p0.l1.wg", K::Compute, 0, 220, "", {6}},
                      {"p0.l1.wgc", K::AllReduce, 2, 2200, "dp1", {9}},
                      {"p0.l1.wgcu", K::Compute, 2, 5, "", {10}},
                      {"p0.l0.ig", K::Compute, 0, 110, "", {9, 8}}, // waits for l1's ig
                      {"p0.l0.wg", K::Compute, 0, 120, "", {12}},   // no ig coll. on layer 0
                      {"p0.l0.wgc", K::AllReduce, 2, 1200, "dp1", {11, 13}},
                      {"p0.l0.wgcu", K::Compute, 2, 5, "", {14}},
                  });
    EXPECT_TRUE(t.warnings.empty());
}

// ASTRA-sim 1.0 HYBRID_DLRM: last bottom layer 1 after the keyword; layer 0 (embedding)
// involves every rank in all phases, its forward all-to-all runs beside the bottom MLP and
// is waited for after layer 1; its input-gradient all-to-all is issued after layer 2's
// input gradient and waited for at the end of the pass.  Other layers: DATA (wg only,
// weight gradient before input gradient).  tp 1: dp0 is all 4 ranks.
TEST(WorkloadImportVariants, AstraSimDlrm)
{
    SimAiImportOptions o;
    o.ranks = 4;
    o.passes = 2;
    auto t = SimAiWorkloadImporter::ImportFile(kData + "astrasim-dlrm.txt", o);
    ASSERT_EQ(t.groups.size(), 1u);
    std::vector<ExpectedOp> pass0 = {
        {"p0.l0.f", K::Compute, 0, 10, "", {}},
        {"p0.l0.fc", K::AllToAll, 1, 1000, "dp0", {0}},
        {"p0.l0.fcu", K::Compute, 1, 2, "", {1}},
        {"p0.l1.f", K::Compute, 0, 40, "", {0}},
        {"p0.l2.f", K::Compute, 0, 70, "", {3, 2}}, // after the last bottom layer
        {"p0.l3.f", K::Compute, 0, 100, "", {4}},   // top1's ALLTOALL: no dimension
        {"p0.l3.wg", K::Compute, 0, 120, "", {5}},
        {"p0.l3.wgc", K::AllReduce, 2, 1200, "dp0", {6}},
        {"p0.l3.wgcu", K::Compute, 2, 5, "", {7}},
        {"p0.l3.ig", K::Compute, 0, 110, "", {6}},
        {"p0.l2.wg", K::Compute, 0, 90, "", {9}},
        {"p0.l2.wgc", K::AllReduce, 2, 900, "dp0", {8, 10}},
        {"p0.l2.wgcu", K::Compute, 2, 4, "", {11}},
        {"p0.l2.ig", K::Compute, 0, 80, "", {10}},
        {"p0.l2.l0igc", K::AllToAll, 1, 1000, "dp0", {2, 13}},
        {"p0.l2.l0igcu", K::Compute, 1, 2, "", {14}},
        {"p0.l1.wg", K::Compute, 0, 60, "", {13}},
        {"p0.l1.wgc", K::AllReduce, 2, 600, "dp0", {12, 16}},
        {"p0.l1.wgcu", K::Compute, 2, 3, "", {17}},
        {"p0.l1.ig", K::Compute, 0, 50, "", {16}},
        {"p0.l0.wg", K::Compute, 0, 30, "", {19}}, // no ig compute on layer 0
    };
    ASSERT_EQ(t.ops[2].size(), 2 * pass0.size());
    // pass 1: the embedding's forward waits for its ig all-to-all, layer 1 for its wg
    const auto& p1 = t.ops[2];
    EXPECT_EQ(p1[21].label, "p1.l0.f");
    EXPECT_EQ(p1[21].deps, (std::vector<uint32_t>{20, 15}));
    EXPECT_EQ(p1[24].label, "p1.l1.f");
    EXPECT_EQ(p1[24].deps, (std::vector<uint32_t>{21, 18}));
    WorkloadTrace first = SimAiWorkloadImporter::ImportFile(kData + "astrasim-dlrm.txt",
                                                            SimAiImportOptions{4, 1.0, 1, 0});
    ExpectProgram(first, 2, pass0);
}

// ASTRA-sim 1.0 HYBRID_CUSTOMIZED: the 13th column gives each row's parallelism; fields
// split by runs of tabs.  8 ranks, first dimension 2.  Rank 3: inner tp1 {2, 3}, outer dp1
// {1, 3, 5, 7}, world {0..7}.  a: DATA_MODEL (fwd / ig inner, wg outer); b: MODEL_DATA (fwd /
// ig outer, wg inner); c: DATA (wg on every rank); d: MODEL (fwd / ig on every rank).
TEST(WorkloadImportVariants, AstraSimCustomized)
{
    auto w = SimAiWorkloadImporter::ParseFile(kData + "astrasim-customized.txt");
    ASSERT_EQ(w.layers.size(), 4u);
    EXPECT_EQ(w.layers[1].policy, "HYBRID_MODEL_DATA");
    EXPECT_EQ(w.layers[2].policy, "DATA");
    auto t = Import("astrasim-customized.txt", 8, 2);
    EXPECT_EQ(RanksOf(t, "world"), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    std::vector<std::string> got;
    for (const auto& op : t.ops[3])
    {
        if (op.kind != K::Compute)
        {
            got.push_back(op.label + " " + WorkloadOpKindName(op.kind) + " " +
                          t.groups[op.group].name);
        }
    }
    EXPECT_EQ(got,
              (std::vector<std::string>{
                  "p0.l0.fc allgather tp1",
                  "p0.l1.fc allgather dp1",
                  "p0.l3.fc allgather world",
                  "p0.l3.igc reducescatter world", // MODEL: no wg collective
                  "p0.l2.wgc allreduce world",     // DATA: no ig collective
                  "p0.l1.igc reducescatter dp1",
                  "p0.l1.wgc allreduce tp1",
                  "p0.l0.wgc allreduce dp1", // layer 0: no ig collective
              }));
}

// ASTRA-sim 1.0 HYBRID_TRANSFORMER_FWD_IN_BCKWD with count-prefixed lists ("checkpoints: 1
// 0 checkpoint_initiates: 1 3"): before layer 3's input gradient, layers 0..2 run their
// forward again (with layer 1's all-reduce).  4 ranks: tp 2, dp 2.
TEST(WorkloadImportVariants, AstraSimForwardInBackward)
{
    auto t = Import("astrasim-fwd-in-bckwd.txt", 4);
    EXPECT_EQ(LabelsOf(t, 0, K::Compute),
              (std::vector<std::string>{"p0.l0.f",
                                        "p0.l1.f",
                                        "p0.l2.f",
                                        "p0.l3.f",
                                        "p0.l0.r3.f",
                                        "p0.l1.r3.f",
                                        "p0.l2.r3.f",
                                        "p0.l3.ig",
                                        "p0.l3.wg",
                                        "p0.l2.ig",
                                        "p0.l2.wg",
                                        "p0.l1.ig",
                                        "p0.l1.wg",
                                        "p0.l0.ig",
                                        "p0.l0.wg"}));
    EXPECT_EQ(LabelsOf(t, 0, K::AllReduce), (std::vector<std::string>{"p0.l1.fc", "p0.l1.r3.fc"}));
    // forward 10+20+30+40, recomputation 10+20+30, ig 4 x 100, wg 4 x 1000
    EXPECT_EQ(SumComputeNs(t, 0), 100u + 60 + 400 + 4000);
}

// ASTRA-sim 1.0 MICRO (microAllToAll.txt's shape): the wg all-to-all and its update.
TEST(WorkloadImportVariants, AstraSimMicro)
{
    auto t = Import("astrasim-micro-alltoall.txt", 4);
    ExpectProgram(t,
                  1,
                  {
                      {"p0.l0.wgc", K::AllToAll, 0, 1048576, "dp0", {}},
                      {"p0.l0.wgcu", K::Compute, 0, 5, "", {0}},
                  });
}

namespace
{

struct Refusal
{
    std::string file;
    uint32_t ranks;
    uint32_t line;
    std::string field;
    std::string message;
};

class SimAiRefusal : public testing::TestWithParam<Refusal>
{
};

} // namespace

// Input SimAI or ASTRA-sim would crash on, misread or refuse: the file, line and field.
TEST_P(SimAiRefusal, NamesFileLineAndField)
{
    const Refusal& c = GetParam();
    const std::string path = kData + "malformed/" + c.file;
    try
    {
        Import("malformed/" + c.file, c.ranks);
        ADD_FAILURE() << c.file << " was accepted";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(e.GetFile(), path);
        EXPECT_EQ(e.GetLine(), c.line);
        EXPECT_EQ(e.GetField(), c.field);
        EXPECT_EQ(e.GetDetail(), c.message);
    }
}

INSTANTIATE_TEST_SUITE_P(
    WorkloadImportVariants,
    SimAiRefusal,
    testing::Values(
        Refusal{"simai-ep-zero.txt", 0, 1, "ep", "'ep' must be at least 1"},
        Refusal{"simai-pp-comm-garbage.txt",
                0,
                1,
                "pp_comm",
                "expected a whole number up to 18446744073709551615, got '8388608.0.0'"},
        Refusal{"astrasim-customized-missing-column.txt",
                4,
                3,
                "parallelism",
                "expected 13 columns (name, reserved, fwd compute, fwd comm, fwd bytes, ig "
                "compute, ig comm, ig bytes, wg compute, wg comm, wg bytes, update, "
                "parallelism), got 12"},
        Refusal{"astrasim-customized-bad-policy.txt",
                4,
                3,
                "parallelism",
                "expected DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA or "
                "HYBRID_TRANSFORMER, got 'PIPELINE'"},
        Refusal{"astrasim-dlrm-no-bottom-layer.txt",
                4,
                1,
                "DLRM_LAST_BOTTOM_LAYER",
                "HYBRID_DLRM needs the last bottom layer (a layer number after the keyword), "
                "got -1 for 1 layers"},
        Refusal{"astrasim-checkpoints-short.txt",
                4,
                1,
                "checkpoints",
                "'checkpoints: 3' announces 3 layer numbers but the line has 1"},
        Refusal{"astrasim-initiate-without-checkpoint.txt",
                4,
                1,
                "checkpoints",
                "layer 2 initiates a recomputation but no checkpoint is at or below it"},
        Refusal{"astrasim-checkpoint-out-of-range.txt",
                4,
                1,
                "checkpoints",
                "layer 9 does not exist (2 layers)"},
        Refusal{"simai-fewer-rows.txt", 4, 3, "layers", "file declares 2 layers but has 1"},
        Refusal{"simai-unknown-suffix.txt",
                4,
                3,
                "fwd comm type",
                "expected NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, "
                "ALLREDUCEALLTOALL or BROADCAST (optionally _EP or _DP_EP), got "
                "'ALLREDUCE_XP'"},
        Refusal{"simai-pp-not-dividing.txt", 0, 1, "pp", "8 ranks are not a multiple of pp 3"},
        Refusal{"astrasim-hybrid-no-first-dimension.txt",
                8,
                1,
                "model_parallel_NPU_group",
                "HYBRID_MODEL_DATA needs the size of ASTRA-sim's first network dimension: give "
                "model_parallel_NPU_group in the header or the import's first dimension "
                "(cluster-replay: the GPUs of one server)"}),
    [](const testing::TestParamInfo<Refusal>& info) {
        std::string name = info.param.file.substr(0, info.param.file.find('.'));
        std::replace(name.begin(), name.end(), '-', '_');
        return name;
    });
