/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The SimAI / ASTRA-sim 1.0 and GOAL importers on the hand-written files of
 * test/data/workloads (described in its README.md): every expected figure is derived
 * by hand from the fixture, following the conversion rules of doc/workload.md.
 */
#include "workload-import-expect.h"

#include "ns3/trace-goal.h"
#include "ns3/trace-simai.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace ns3;
using namespace ns3::importtest;

namespace
{

const std::string kData = AI_FABRIC_SOURCE_DIR "/test/data/workloads/";

} // namespace

// SimAI header with every key the parser reads (checkpoint lists and an unknown key
// skipped), space-separated rows with a blank line between them.
TEST(WorkloadImportFixtures, SimAiHeaderAndRows)
{
    auto w = SimAiWorkloadImporter::ParseFile(kData + "simai-moe-tp2-pp2-ep2.txt");
    EXPECT_EQ(w.parallelism, "HYBRID_TRANSFORMER_FWD_IN_BCKWD");
    EXPECT_EQ(w.modelParallelGroup, 2u);
    EXPECT_EQ(w.ep, 2u);
    EXPECT_EQ(w.pp, 2u);
    EXPECT_EQ(w.vpp, 4u);
    EXPECT_EQ(w.ga, 3u);
    EXPECT_EQ(w.allGpus, 16u);
    EXPECT_EQ(w.ppCommBytes, 8388608u); // "pp_comm 8388608", written without colon
    EXPECT_EQ(w.checkpoints, (std::vector<uint32_t>{1, 3}));      // "checkpoints: 2 1 3"
    EXPECT_EQ(w.checkpointInitiates, (std::vector<uint32_t>{2})); // "checkpoint_initiates: 1 2"
    ASSERT_EQ(w.layers.size(), 5u);
    // rows on lines 3, 4, then 6-8 (line 5 is blank)
    const uint32_t lines[] = {3, 4, 6, 7, 8};
    for (size_t i = 0; i < 5; ++i)
    {
        EXPECT_EQ(w.layers[i].line, lines[i]);
        EXPECT_EQ(w.layers[i].updateTime, 10u);
    }
    EXPECT_EQ(w.layers[0].name, "embedding");
    EXPECT_EQ(w.layers[0].reserved, -1);
    EXPECT_EQ(w.layers[1].reserved, 7); // "attention 7 ..."
    // embedding: fwd BROADCAST 1024: SimAI and ASTRA-sim know no BROADCAST, no communication
    EXPECT_FALSE(w.layers[0].fwdComm.present);
    EXPECT_FALSE(w.layers[0].wgComm.present);
    EXPECT_TRUE(w.layers[0].igComm.present);
    // moe_dispatch: fwd ALLTOALL_EP, ig NONE, wg ALLREDUCE_EP
    EXPECT_EQ(w.layers[2].fwdComm.kind, K::AllToAll);
    EXPECT_EQ(w.layers[2].fwdComm.group, SimAiGroupKind::Ep);
    EXPECT_FALSE(w.layers[2].igComm.present);
    EXPECT_EQ(w.layers[2].wgComm.kind, K::AllReduce);
    EXPECT_EQ(w.layers[2].wgComm.group, SimAiGroupKind::Ep);
    // moe_combine: wg ALLGATHER_DP_EP 524288
    EXPECT_EQ(w.layers[3].wgComm.kind, K::AllGather);
    EXPECT_EQ(w.layers[3].wgComm.group, SimAiGroupKind::DpEp);
    EXPECT_EQ(w.layers[3].wgComm.bytes, 524288u);
    // grad_norm: ig REDUCESCATTER_EP, wg REDUCESCATTER_DP_EP, fwd NONE
    EXPECT_FALSE(w.layers[4].fwdComm.present);
    EXPECT_EQ(w.layers[4].igComm.kind, K::ReduceScatter);
    EXPECT_EQ(w.layers[4].igComm.group, SimAiGroupKind::Ep);
    EXPECT_EQ(w.layers[4].wgComm.group, SimAiGroupKind::DpEp);
    EXPECT_EQ(w.layers[4].fwdCompute, 1300u);
    EXPECT_EQ(w.layers[4].igCompute, 2500u);
    EXPECT_EQ(w.layers[4].wgCompute, 0u);
    // one warning per kind: the unknown key, BROADCAST (first on line 3)
    ASSERT_EQ(w.warnings.size(), 2u);
    EXPECT_EQ(w.warnings[0].first, 1u);
    EXPECT_EQ(w.warnings[0].second, "ignoring header key 'seq_length:' and its value");
    EXPECT_EQ(w.warnings[1].first, 3u);
}

// 16 GPUs, tp 2, pp 2, so dp 16/(2*2) = 4, ep 2; rank = (stage*dp + d)*tp + t.
TEST(WorkloadImportFixtures, SimAiMoePipelineGroups)
{
    auto t = SimAiWorkloadImporter::ImportFile(kData + "simai-moe-tp2-pp2-ep2.txt", {});
    ASSERT_EQ(t.numRanks, 16u); // all_gpus
    // per stage: 4 TP groups, 2 DP groups (one per t), 2x2 EP and 2x2 DP_EP groups = 12;
    // two stages
    EXPECT_EQ(t.groups.size(), 24u + 4u);
    EXPECT_EQ(RanksOf(t, "tp0"), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(RanksOf(t, "dp0"), (std::vector<uint32_t>{0, 2, 4, 6})); // stage 0, t 0
    EXPECT_EQ(RanksOf(t, "ep1"), (std::vector<uint32_t>{4, 6}));       // d 2, 3 of stage 0, t 0
    EXPECT_EQ(RanksOf(t, "dpep1"), (std::vector<uint32_t>{2, 6}));     // d 1, 3 (d mod 2 = 1)
    // rank 13 = stage 1, d 2, t 1
    EXPECT_EQ(RanksOf(t, "tp6"), (std::vector<uint32_t>{12, 13}));        // stage*dp + d = 6
    EXPECT_EQ(RanksOf(t, "dp3"), (std::vector<uint32_t>{9, 11, 13, 15})); // stage*tp + t = 3
    EXPECT_EQ(RanksOf(t, "ep7"), (std::vector<uint32_t>{13, 15}));        // (3)*2 + d/2 = 7
    EXPECT_EQ(RanksOf(t, "dpep6"), (std::vector<uint32_t>{9, 13}));       // (3)*2 + d%2 = 6
    // 38 ops on each of 16 ranks (see the program below)
    EXPECT_EQ(t.CountOps(), 16u * 38);
    // per pass: 4 TP calls (l1 fwd, its recomputation, l1 and l0 ig) x 8 groups, 5 EP calls x
    // 8, 2 DP_EP calls x 8, 1 DP call x 4
    EXPECT_EQ(t.collectives.size(), 8u * (4 + 5 + 2) + 4);
    // ga 3 without 3 repeated blocks: one micro-batch; vpp 4 needs a multiple of pp of them
    ASSERT_EQ(t.warnings.size(), 4u);
    EXPECT_NE(t.warnings[2].find("ga 3 but the rows are not 3 copies"), std::string::npos);
    EXPECT_NE(t.warnings[3].find("replayed without interleaving"), std::string::npos);
    for (uint32_t r = 0; r < 16; ++r)
    {
        // fwd 1000+1100+1200+1300, recompute of l1 1100, ig 2500+2400+2200+2000,
        // wg 3400+3300+3000, 12 update times of 10 after the 12 collectives
        EXPECT_EQ(SumComputeNs(t, r), 4600u + 1100 + 9100 + 9700 + 120);
        EXPECT_EQ(t.SumBytes(r, K::Broadcast), 0u);
        EXPECT_EQ(t.SumBytes(r, K::AllReduce), 2048u * 2 + 65536 + 999); // l1 fwd x2, l2 wg, l0 ig
        EXPECT_EQ(t.SumBytes(r, K::AllGather), 131072u + 8192 + 524288); // combine fwd, attn ig
        EXPECT_EQ(t.SumBytes(r, K::ReduceScatter), 1048576u + 2097152 + 16384); // grad_norm, attn
        EXPECT_EQ(t.SumBytes(r, K::AllToAll), 32768u + 262144); // dispatch fwd, combine ig
        // one activation forward (stage 0) or one gradient back (stage 1) of pp_comm bytes
        EXPECT_EQ(t.SumBytes(r, K::Send), 8388608u);
        EXPECT_EQ(t.SumBytes(r, K::Recv), 8388608u);
    }
}

// Rank 13 (last stage): receive the activation, forward layers 0..4, backward 4..0 (ig on
// stream 1, wg on 2, update times after each collective on its stream, layer 1 recomputed
// before layer 2's backward), send the gradient back.
TEST(WorkloadImportFixtures, SimAiMoeProgram)
{
    auto t = SimAiWorkloadImporter::ImportFile(kData + "simai-moe-tp2-pp2-ep2.txt", {});
    ExpectProgram(t,
                  13,
                  {
                      {"p0.m0.a0", K::Recv, 0, 8388608, "", {}, 5}, // from stage 0, d 2, t 1
                      {"p0.l0.f", K::Compute, 0, 1000, "", {0}},    // BROADCAST: nothing
                      {"p0.l1.f", K::Compute, 0, 1100, "", {1}},
                      {"p0.l1.fc", K::AllReduce, 0, 2048, "tp6", {2}}, // plain fwd: TP group
                      {"p0.l1.fcu", K::Compute, 0, 10, "", {3}},
                      {"p0.l2.f", K::Compute, 0, 1200, "", {4}},
                      {"p0.l2.fc", K::AllToAll, 0, 32768, "ep7", {5}},
                      {"p0.l2.fcu", K::Compute, 0, 10, "", {6}},
                      {"p0.l3.fc", K::AllGather, 0, 131072, "ep7", {7}}, // fwd compute 0: none
                      {"p0.l3.fcu", K::Compute, 0, 10, "", {8}},
                      {"p0.l4.f", K::Compute, 0, 1300, "", {9}}, // fwd NONE: no .fc
                      {"p0.l4.ig", K::Compute, 0, 2500, "", {10}},
                      {"p0.l4.igc", K::ReduceScatter, 1, 1048576, "ep7", {11}},
                      {"p0.l4.igcu", K::Compute, 1, 10, "", {12}},
                      {"p0.l4.wgc", K::ReduceScatter, 2, 2097152, "dpep6", {11}}, // wg compute 0
                      {"p0.l4.wgcu", K::Compute, 2, 10, "", {14}},
                      {"p0.l3.ig", K::Compute, 0, 2400, "", {11, 13}}, // waits for l4's ig coll.
                      {"p0.l3.igc", K::AllToAll, 1, 262144, "ep7", {13, 16}},
                      {"p0.l3.igcu", K::Compute, 1, 10, "", {17}},
                      {"p0.l3.wg", K::Compute, 0, 3400, "", {16}},
                      {"p0.l3.wgc", K::AllGather, 2, 524288, "dpep6", {15, 19}},
                      {"p0.l3.wgcu", K::Compute, 2, 10, "", {20}},
                      // layer 2 initiates: recompute from checkpoint 1 up to layer 2
                      {"p0.l1.r2.f", K::Compute, 0, 1100, "", {19, 18}},
                      {"p0.l1.r2.fc", K::AllReduce, 0, 2048, "tp6", {22}},
                      {"p0.l1.r2.fcu", K::Compute, 0, 10, "", {23}},
                      // l2's ig compute 0 and ig NONE: its wg collective follows at once
                      {"p0.l2.wgc", K::AllReduce, 2, 65536, "ep7", {21, 24}},
                      {"p0.l2.wgcu", K::Compute, 2, 10, "", {25}},
                      {"p0.l1.ig", K::Compute, 0, 2200, "", {24}},
                      {"p0.l1.igc", K::AllGather, 1, 8192, "tp6", {18, 27}}, // plain ig: TP
                      {"p0.l1.igcu", K::Compute, 1, 10, "", {28}},
                      {"p0.l1.wg", K::Compute, 0, 3300, "", {27}},
                      {"p0.l1.wgc", K::ReduceScatter, 2, 16384, "dp3", {26, 30}}, // plain wg: DP
                      {"p0.l1.wgcu", K::Compute, 2, 10, "", {31}},
                      {"p0.l0.ig", K::Compute, 0, 2000, "", {30, 29}},
                      // HYBRID_TRANSFORMER issues the first layer's ig collective too
                      {"p0.l0.igc", K::AllReduce, 1, 999, "tp6", {29, 33}},
                      {"p0.l0.igcu", K::Compute, 1, 10, "", {34}},
                      {"p0.l0.wg", K::Compute, 0, 3000, "", {33}},
                      {"p0.m0.g1", K::Send, 3, 8388608, "", {36, 35}, 5}, // gradient to stage 0
                  });
    EXPECT_EQ(t.ops[13][6].line, 6u); // moe_dispatch, after the blank line
    // rank 5 (stage 0): 1F1B with one micro-batch: forward, send, wait for the gradient
    const auto& r5 = t.ops[5];
    ASSERT_EQ(r5.size(), 38u);
    EXPECT_EQ(r5[9].label, "p0.l4.f");
    EXPECT_EQ(r5[10].label, "p0.m0.a0");
    EXPECT_EQ(r5[10].kind, K::Send);
    EXPECT_EQ(r5[10].to, 13);
    EXPECT_EQ(r5[10].deps, (std::vector<uint32_t>{9}));
    EXPECT_EQ(r5[11].label, "p0.m0.g1");
    EXPECT_EQ(r5[11].kind, K::Recv);
    EXPECT_EQ(r5[11].from, 13);
    EXPECT_EQ(r5[12].label, "p0.l4.ig");
    EXPECT_EQ(r5[12].deps, (std::vector<uint32_t>{11}));
}

// ep = dp = 2 on 4 GPUs with tp 2: the DP_EP groups hold one rank each, so the
// ALLREDUCE_DP_EP is dropped.
TEST(WorkloadImportFixtures, SimAiEpEqualsDp)
{
    auto t = SimAiWorkloadImporter::ImportFile(kData + "simai-ep-equals-dp.txt", {});
    // tp0, tp1; per t: dp, one EP group, two one-rank DP_EP groups
    EXPECT_EQ(t.groups.size(), 2u + 2 * 4);
    EXPECT_EQ(RanksOf(t, "ep0"), (std::vector<uint32_t>{0, 2}));
    EXPECT_EQ(RanksOf(t, "dpep1"), (std::vector<uint32_t>{2}));
    ExpectProgram(t,
                  2,
                  {
                      {"p0.l0.f", K::Compute, 0, 10, "", {}},
                      {"p0.l0.fc", K::AllToAll, 0, 4096, "ep0", {0}},
                      {"p0.l0.fcu", K::Compute, 0, 1, "", {1}}, // update time 1
                      {"p0.l0.ig", K::Compute, 0, 20, "", {2}},
                      {"p0.l0.wg", K::Compute, 0, 30, "", {3}}, // no wgc: one-rank group
                  });
    EXPECT_EQ(t.collectives.size(), 2u); // the ALLTOALL on ep0 and on ep1
}

// Without ep in the header, _DP_EP means the DP group (DATA: all 4 ranks); a DATA header
// may carry keys.
TEST(WorkloadImportFixtures, SimAiDpEpWithoutEp)
{
    auto t = SimAiWorkloadImporter::ImportFile(kData + "simai-data-dp-ep.txt", {});
    ASSERT_EQ(t.numRanks, 4u);
    ASSERT_EQ(t.groups.size(), 1u);
    EXPECT_EQ(RanksOf(t, "dp0"), (std::vector<uint32_t>{0, 1, 2, 3}));
    ExpectProgram(t,
                  1,
                  {
                      {"p0.l0.f", K::Compute, 0, 10, "", {}}, // no ig compute (DATA, layer 0)
                      {"p0.l0.wg", K::Compute, 0, 10, "", {0}},
                      {"p0.l0.wgc", K::AllGather, 2, 256, "dp0", {1}},
                      {"p0.l0.wgcu", K::Compute, 2, 1, "", {2}},
                  });
}

// AICB header (tabs, no all_gpus): the rank count must come from the options.
TEST(WorkloadImportFixtures, AicbHeaderWithoutAllGpus)
{
    const std::string path = kData + "aicb-megatron-tp2.txt";
    try
    {
        SimAiWorkloadImporter::ImportFile(path, {});
        ADD_FAILURE() << "imported without a rank count";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(std::string(e.what()),
                  path + ":1: field 'all_gpus': the header gives no all_gpus: pass the rank "
                         "count explicitly");
    }
}

// AICB megatron rows (tab-separated, padded with spaces) on 4 ranks: tp 2, dp 2.
TEST(WorkloadImportFixtures, AicbMegatron)
{
    SimAiImportOptions opt;
    opt.ranks = 4;
    auto t = SimAiWorkloadImporter::ImportFile(kData + "aicb-megatron-tp2.txt", opt);
    EXPECT_EQ(RanksOf(t, "tp1"), (std::vector<uint32_t>{2, 3}));
    EXPECT_EQ(RanksOf(t, "dp0"), (std::vector<uint32_t>{0, 2}));
    EXPECT_EQ(t.groups.size(), 4u); // tp0, tp1, dp0, dp1
    ExpectProgram(t,
                  2,
                  {
                      // norm: fwd compute 0, BROADCAST (no communication in SimAI)
                      {"p0.l1.f", K::Compute, 0, 14356000, "", {}},
                      {"p0.l1.fc", K::AllReduce, 0, 50331648, "tp1", {0}},
                      {"p0.l1.fcu", K::Compute, 0, 100, "", {1}},
                      {"p0.l2.f", K::Compute, 0, 1, "", {2}},
                      {"p0.l2.fc", K::AllGather, 0, 6754926592, "tp1", {3}}, // over 4 GiB
                      {"p0.l2.fcu", K::Compute, 0, 100, "", {4}},
                      {"p0.l2.ig", K::Compute, 0, 1, "", {5}}, // ig NONE
                      {"p0.l2.wg", K::Compute, 0, 1, "", {6}},
                      {"p0.l2.wgc", K::ReduceScatter, 2, 13509853184, "dp0", {7}},
                      {"p0.l2.wgcu", K::Compute, 2, 100, "", {8}},
                      {"p0.l1.ig", K::Compute, 0, 4756000, "", {7}},
                      {"p0.l1.igc", K::AllReduce, 1, 50331648, "tp1", {10}},
                      {"p0.l1.igcu", K::Compute, 1, 100, "", {11}},
                      {"p0.l1.wg", K::Compute, 0, 9512000, "", {10}}, // wg NONE
                      {"p0.l0.ig", K::Compute, 0, 1, "", {13, 12}},
                      {"p0.l0.wg", K::Compute, 0, 1, "", {14}},
                  });
    // 3 TP calls x 2 groups + 1 DP call x 2 groups
    EXPECT_EQ(t.collectives.size(), 8u);
    EXPECT_EQ(t.CountOps(), 4u * 16);
}

// The same AICB rows with model_parallel_NPU_group 1 (tp 1, as AICB writes for ZeRO runs): no
// TP group exists, so the fwd / ig TP collectives are no communication, as in SimAI; the wg
// REDUCESCATTER stays on the one DP group of all 4 ranks. On 2 ranks with tp 2 it is the other
// way round: dp 1, the TP collectives stay and the DP one goes.
TEST(WorkloadImportFixtures, AicbTpOneOrDpOneDropsThatGroupsCollectives)
{
    SimAiImportOptions opt;
    opt.ranks = 4;
    auto tp1 = SimAiWorkloadImporter::ImportFile(kData + "aicb-megatron-tp1.txt", opt);
    ASSERT_EQ(tp1.groups.size(), 1u);
    EXPECT_EQ(RanksOf(tp1, "dp0"), (std::vector<uint32_t>{0, 1, 2, 3}));
    ASSERT_EQ(tp1.collectives.size(), 1u); // 1 DP call x 1 group
    for (uint32_t r = 0; r < 4; ++r)
    {
        uint32_t collectives = 0;
        for (const WorkloadOpRef op : tp1.ops[r])
        {
            if (op.kind != K::Compute)
            {
                ++collectives;
                EXPECT_EQ(op.kind, K::ReduceScatter);
                EXPECT_EQ(op.bytes, 13509853184u);
            }
        }
        EXPECT_EQ(collectives, 1u) << r;
    }
    opt.ranks = 2;
    auto dp1 = SimAiWorkloadImporter::ImportFile(kData + "aicb-megatron-tp2.txt", opt);
    ASSERT_EQ(dp1.groups.size(), 1u); // tp0 of ranks 0, 1
    EXPECT_EQ(RanksOf(dp1, "tp0"), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(dp1.collectives.size(), 3u); // 2 x ALLREDUCE, ALLGATHER
}

// AICB MICRO: only the wg collectives, one after the other, on all ranks; two passes; the
// update time (1) after each.
TEST(WorkloadImportFixtures, AicbMicro)
{
    SimAiImportOptions opt;
    opt.ranks = 4;
    opt.passes = 2;
    auto t = SimAiWorkloadImporter::ImportFile(kData + "aicb-micro.txt", opt);
    ASSERT_EQ(t.groups.size(), 1u); // tp 1: only the DP group of all 4 ranks
    EXPECT_EQ(RanksOf(t, "dp0"), (std::vector<uint32_t>{0, 1, 2, 3}));
    for (uint32_t r = 0; r < 4; ++r)
    {
        // the computes (5, 6, 7) and the fwd ALLGATHER / ig ALLREDUCE are not emitted
        ExpectProgram(t,
                      r,
                      {
                          {"p0.l0.wgc", K::AllReduce, 0, 4096, "dp0", {}},
                          {"p0.l0.wgcu", K::Compute, 0, 1, "", {0}},
                          {"p0.l1.wgc", K::AllGather, 0, 8192, "dp0", {1}},
                          {"p0.l1.wgcu", K::Compute, 0, 1, "", {2}},
                          {"p0.l2.wgc", K::ReduceScatter, 0, 16384, "dp0", {3}},
                          {"p0.l2.wgcu", K::Compute, 0, 1, "", {4}},
                          {"p1.l0.wgc", K::AllReduce, 0, 4096, "dp0", {5}},
                          {"p1.l0.wgcu", K::Compute, 0, 1, "", {6}},
                          {"p1.l1.wgc", K::AllGather, 0, 8192, "dp0", {7}},
                          {"p1.l1.wgcu", K::Compute, 0, 1, "", {8}},
                          {"p1.l2.wgc", K::ReduceScatter, 0, 16384, "dp0", {9}},
                          {"p1.l2.wgcu", K::Compute, 0, 1, "", {10}},
                      });
    }
    EXPECT_EQ(t.collectives.size(), 6u);
}

// ASTRA-sim 1.0 DATA, ticks scaled by 0.5 ns (halves round away from zero), two passes.
// iterate_data_parallel: backward per layer is wg compute, wg collective, then ig compute.
TEST(WorkloadImportFixtures, AstraSimDataTwoPasses)
{
    SimAiImportOptions opt;
    opt.ranks = 4;
    opt.nsPerTick = 0.5;
    opt.passes = 2;
    auto t = SimAiWorkloadImporter::ImportFile(kData + "astrasim-data.txt", opt);
    ASSERT_EQ(t.groups.size(), 1u);
    std::vector<ExpectedOp> program = {
        // pass 0 forward: conv1 13003 x 0.5 = 6501.5 -> 6502; conv2 has no compute;
        // fc1000 2049 x 0.5 -> 1025.  fwd ALLGATHER of conv1 ignored under DATA.
        {"p0.l0.f", K::Compute, 0, 6502, "", {}},
        {"p0.l2.f", K::Compute, 0, 1025, "", {0}},
        // backward: fc1000 wg 8191 -> 4096, update 819 -> 410, ig 4097 -> 2049
        {"p0.l2.wg", K::Compute, 0, 4096, "", {1}},
        {"p0.l2.wgc", K::ReduceScatter, 2, 8192000, "dp0", {2}},
        {"p0.l2.wgcu", K::Compute, 2, 410, "", {3}},
        {"p0.l2.ig", K::Compute, 0, 2049, "", {2}},
        // conv2: wg 7488 -> 3744, update 749 -> 375; ig compute 0, ig ALLREDUCE ignored
        {"p0.l1.wg", K::Compute, 0, 3744, "", {5}},
        {"p0.l1.wgc", K::AllReduce, 2, 65536, "dp0", {4, 6}},
        {"p0.l1.wgcu", K::Compute, 2, 375, "", {7}},
        // conv1: wg 32291 -> 16146, update 3229 -> 1615; no ig compute for the first layer
        {"p0.l0.wg", K::Compute, 0, 16146, "", {6}},
        {"p0.l0.wgc", K::AllReduce, 2, 37632, "dp0", {8, 9}},
        {"p0.l0.wgcu", K::Compute, 2, 1615, "", {10}},
        // pass 1: each forward waits for its layer's wg collective (and update) of pass 0;
        // conv2 has no forward compute, so fc1000's forward takes its wait too
        {"p1.l0.f", K::Compute, 0, 6502, "", {9, 11}},
        {"p1.l2.f", K::Compute, 0, 1025, "", {12, 8, 4}},
        {"p1.l2.wg", K::Compute, 0, 4096, "", {13}},
        {"p1.l2.wgc", K::ReduceScatter, 2, 8192000, "dp0", {11, 14}},
        {"p1.l2.wgcu", K::Compute, 2, 410, "", {15}},
        {"p1.l2.ig", K::Compute, 0, 2049, "", {14}},
        {"p1.l1.wg", K::Compute, 0, 3744, "", {17}},
        {"p1.l1.wgc", K::AllReduce, 2, 65536, "dp0", {16, 18}},
        {"p1.l1.wgcu", K::Compute, 2, 375, "", {19}},
        {"p1.l0.wg", K::Compute, 0, 16146, "", {18}},
        {"p1.l0.wgc", K::AllReduce, 2, 37632, "dp0", {20, 21}},
        {"p1.l0.wgcu", K::Compute, 2, 1615, "", {22}},
    };
    for (uint32_t r = 0; r < 4; ++r)
    {
        ExpectProgram(t, r, program);
        // (6502+1025+4096+2049+3744+16146) + updates (410+375+1615) per pass
        EXPECT_EQ(SumComputeNs(t, r), 2u * (33562 + 2400));
    }
}

// ASTRA-sim 1.0 MODEL with CRLF line ends: tp = all 4 ranks, wg collectives ignored.
TEST(WorkloadImportFixtures, AstraSimModelCrlf)
{
    const std::string path = kData + "astrasim-model-crlf.txt";
    ASSERT_NE(ReadFile(path).find("\r\n"), std::string::npos) << "fixture lost its CRLF";
    SimAiImportOptions opt;
    opt.ranks = 4;
    auto t = SimAiWorkloadImporter::ImportFile(path, opt);
    ASSERT_EQ(t.groups.size(), 1u); // dp 1: no DP group
    EXPECT_EQ(RanksOf(t, "tp0"), (std::vector<uint32_t>{0, 1, 2, 3}));
    ExpectProgram(t,
                  3,
                  {
                      {"p0.l0.f", K::Compute, 0, 500, "", {}},
                      {"p0.l0.fc", K::AllGather, 0, 1048576, "tp0", {0}},
                      {"p0.l0.fcu", K::Compute, 0, 10, "", {1}},
                      {"p0.l1.f", K::Compute, 0, 800, "", {2}},
                      {"p0.l1.fc", K::AllReduce, 0, 2097152, "tp0", {3}},
                      {"p0.l1.fcu", K::Compute, 0, 10, "", {4}},
                      {"p0.l1.ig", K::Compute, 0, 900, "", {5}},
                      {"p0.l1.igc", K::ReduceScatter, 1, 8192, "tp0", {6}},
                      {"p0.l1.igcu", K::Compute, 1, 10, "", {7}},
                      {"p0.l1.wg", K::Compute, 0, 1000, "", {6}},   // wg ALLGATHER ignored
                      {"p0.l0.ig", K::Compute, 0, 600, "", {9, 8}}, // no ig coll. on layer 0
                      {"p0.l0.wg", K::Compute, 0, 700, "", {10}},
                  });
    EXPECT_EQ(t.collectives.size(), 3u);
}

// ASTRA-sim hybrid headers (trailing tabs) on 8 ranks, tp 2, dp 4: HYBRID_TRANSFORMER and
// HYBRID_DATA_MODEL put TP innermost, HYBRID_MODEL_DATA puts DP innermost.
TEST(WorkloadImportFixtures, AstraSimHybridLayouts)
{
    SimAiImportOptions opt;
    opt.ranks = 8;

    struct Case
    {
        std::string file;
        std::vector<uint32_t> tpOf5; // TP group of rank 5
        std::string tpName;
        std::vector<uint32_t> dpOf5; // DP group of rank 5
    };

    const Case cases[] = {
        // rank 5 = d 2, t 1: TP group (d 2) {4,5}, DP group (t 1) {1,3,5,7}
        {"astrasim-hybrid-transformer.txt", {4, 5}, "tp2", {1, 3, 5, 7}},
        {"astrasim-hybrid-data-model.txt", {4, 5}, "tp2", {1, 3, 5, 7}},
        // rank = t*dp + d: rank 5 = t 1, d 1: TP group (d 1) {1,5}, DP group (t 1) {4..7}
        {"astrasim-hybrid-model-data.txt", {1, 5}, "tp1", {4, 5, 6, 7}},
    };
    for (const auto& c : cases)
    {
        SCOPED_TRACE(c.file);
        auto t = SimAiWorkloadImporter::ImportFile(kData + c.file, opt);
        EXPECT_EQ(t.groups.size(), 6u); // 4 TP groups, 2 DP groups
        EXPECT_EQ(RanksOf(t, c.tpName), c.tpOf5);
        EXPECT_EQ(RanksOf(t, "dp1"), c.dpOf5);
        ExpectProgram(t,
                      5,
                      {
                          {"p0.l0.f", K::Compute, 0, 10, "", {}},
                          {"p0.l0.fc", K::AllReduce, 0, 1024, c.tpName, {0}},
                          {"p0.l0.fcu", K::Compute, 0, 1, "", {1}},
                          {"p0.l0.ig", K::Compute, 0, 20, "", {2}}, // not DATA: first ig kept
                          {"p0.l0.wg", K::Compute, 0, 30, "", {3}},
                          {"p0.l0.wgc", K::AllReduce, 2, 2048, "dp1", {4}},
                          {"p0.l0.wgcu", K::Compute, 2, 1, "", {5}},
                      });
    }
}

// GOAL: comments, size suffixes b/B/none, default and explicit tags, cpu/nic, requires and
// irequires (also on a label defined later), repeated (source, destination, tag), idle rank.
TEST(WorkloadImportFixtures, GoalMixed)
{
    auto t = GoalScheduleImporter::ImportFile(kData + "goal-mixed.goal");
    ASSERT_EQ(t.numRanks, 4u);
    EXPECT_TRUE(t.groups.empty());
    EXPECT_TRUE(t.collectives.empty());
    EXPECT_TRUE(t.ops[3].empty()); // empty block
    // 6 + 4 + 4 + 0
    EXPECT_EQ(t.CountOps(), 14u);

    struct Expected
    {
        std::string label;
        WorkloadOpKind kind;
        uint64_t value; // ns for calc, bytes otherwise
        int32_t peer;   // to for send, from for recv
        std::vector<uint32_t> deps;
        uint32_t line;
    };

    const std::vector<std::vector<Expected>> ranks = {
        {
            {"c_l1", K::Compute, 250, -1, {}, 5},
            {"m0_1_7_0", K::Send, 1024, 1, {0}, 6}, // l2 requires l1
            {"m0_1_7_1", K::Send, 1024, 1, {1}, 7}, // second (0,1,7) message; l3 requires l2
            {"m0_2_0_0", K::Send, 64, 2, {}, 8},    // no suffix, tag 0
            {"m2_0_3_0", K::Recv, 4096, 2, {}, 11}, //
            {"c_l6", K::Compute, 100, -1, {4}, 12}, // requires l5 (irequires l4: below)
        },
        {
            {"m0_1_7_0", K::Recv, 1024, 0, {}, 19},
            {"m0_1_7_1", K::Recv, 1024, 0, {}, 20},
            {"c_c", K::Compute, 500, -1, {0, 1}, 21},
            {"m1_2_18446744073709551615_0", K::Send, 2048, 2, {2}, 24}, // largest tag
        },
        {
            {"m0_2_0_0", K::Recv, 64, 0, {}, 28},
            {"m1_2_18446744073709551615_0", K::Recv, 2048, 1, {}, 29},
            {"m2_0_3_0", K::Send, 4096, 0, {3}, 30}, // requires w, defined after it
            {"c_w", K::Compute, 0, -1, {0, 1}, 32},
        },
    };
    for (uint32_t r = 0; r < ranks.size(); ++r)
    {
        ASSERT_EQ(t.ops[r].size(), ranks[r].size());
        for (uint32_t i = 0; i < ranks[r].size(); ++i)
        {
            const auto& e = ranks[r][i];
            const auto& op = t.ops[r][i];
            SCOPED_TRACE("rank " + std::to_string(r) + " " + e.label);
            EXPECT_EQ(op.label, e.label);
            EXPECT_EQ(op.kind, e.kind);
            EXPECT_EQ(op.stream, i); // every op on its own stream
            EXPECT_EQ(op.deps, e.deps);
            EXPECT_EQ(op.line, e.line);
            EXPECT_EQ(e.kind == K::Compute ? op.timeNs : op.bytes, e.value);
            EXPECT_EQ(e.kind == K::Send ? op.to : op.from, e.peer);
        }
    }
    // matching in program order per (source, destination, tag)
    EXPECT_EQ(t.ops[1][0].recvPeerOp, 1);
    EXPECT_EQ(t.ops[1][1].recvPeerOp, 2);
    EXPECT_EQ(t.ops[0][1].sendPeerOp, 0);
    EXPECT_EQ(t.ops[0][2].sendPeerOp, 1);
    EXPECT_EQ(t.ops[0][3].sendPeerOp, 0); // to rank 2's first op
    EXPECT_EQ(t.ops[0][4].recvPeerOp, 2); // from rank 2's send z
    EXPECT_EQ(t.ops[2][1].recvPeerOp, 3);
    // l6 irequires l4: a start dependency, not an end one
    ASSERT_EQ(t.startDeps.size(), 1u);
    EXPECT_EQ(t.startDeps[0].rank, 0u);
    EXPECT_EQ(t.startDeps[0].op, 5u);
    EXPECT_EQ(t.startDeps[0].started, 3u);
    EXPECT_EQ(t.startDeps[0].line, 14u);
    EXPECT_TRUE(t.logGops);
    EXPECT_EQ(t.ops[0][1].tag, 7u);
    EXPECT_EQ(t.ops[1][3].tag, UINT64_MAX);
    EXPECT_EQ(t.ops[1][2].nic, 1u); // calc 500 nic 1: read, without effect on a calc
    EXPECT_FALSE(t.ops[0][1].unpaired);
    uint64_t sent = 0;
    for (uint32_t r = 0; r < 4; ++r)
    {
        sent += t.SumBytes(r, K::Send);
    }
    EXPECT_EQ(sent, 1024u + 1024 + 64 + 2048 + 4096);
}

// GOAL as LogGOPSim's txt2bin reads it: a block comment over lines, ops without labels,
// "l1 : send", "l2:recv", "16 b", "rank 0{", cpu / nic on sends and receives, irequires.
TEST(WorkloadImportFixtures, GoalGrammar)
{
    auto t = GoalScheduleImporter::ImportFile(kData + "goal-grammar.goal");
    ASSERT_EQ(t.numRanks, 3u);

    struct Expected
    {
        std::string label;
        WorkloadOpKind kind;
        uint64_t value;
        int32_t peer;
        uint64_t tag;
        uint8_t cpu;
        uint8_t nic;
        std::vector<uint32_t> deps;
        uint32_t line;
    };

    const std::vector<std::vector<Expected>> ranks = {
        {
            {"c@7", K::Compute, 40, -1, 0, 0, 0, {}, 7}, // no label: named by its line
            {"m0_1_3_0", K::Send, 16, 1, 3, 0, 0, {}, 8},
            {"m2_0_4_0", K::Recv, 32, 2, 4, 1, 1, {}, 9},
            {"c_l3", K::Compute, 7, -1, 0, 1, 0, {2}, 10},
            {"m0_2_0_0", K::Send, 8, 2, 0, 0, 0, {}, 12},
        },
        {
            {"m0_1_3_0", K::Recv, 16, 0, 3, 0, 0, {}, 15},
        },
        {
            {"m0_2_0_0", K::Recv, 8, 0, 0, 0, 0, {}, 18},
            {"m2_0_4_0", K::Send, 32, 0, 4, 2, 3, {}, 19},
        },
    };
    for (uint32_t r = 0; r < ranks.size(); ++r)
    {
        ASSERT_EQ(t.ops[r].size(), ranks[r].size());
        for (uint32_t i = 0; i < ranks[r].size(); ++i)
        {
            const auto& e = ranks[r][i];
            const auto& op = t.ops[r][i];
            SCOPED_TRACE("rank " + std::to_string(r) + " " + e.label);
            EXPECT_EQ(op.label, e.label);
            EXPECT_EQ(op.kind, e.kind);
            EXPECT_EQ(e.kind == K::Compute ? op.timeNs : op.bytes, e.value);
            EXPECT_EQ(e.kind == K::Send ? op.to : op.from, e.peer);
            EXPECT_EQ(op.tag, e.tag);
            EXPECT_EQ(op.cpu, e.cpu);
            EXPECT_EQ(op.nic, e.nic);
            EXPECT_EQ(op.deps, e.deps);
            EXPECT_EQ(op.line, e.line);
            EXPECT_FALSE(op.unpaired); // no wildcard receive: paired at import
        }
    }
    ASSERT_EQ(t.startDeps.size(), 1u); // m2 irequires m1
    EXPECT_EQ(t.startDeps[0].rank, 2u);
    EXPECT_EQ(t.startDeps[0].op, 1u);
    EXPECT_EQ(t.startDeps[0].started, 0u);
    EXPECT_EQ(t.startDeps[0].line, 20u);
}

// CRLF line ends, tab indents, trailing tabs and spaces, no final newline.
TEST(WorkloadImportFixtures, GoalCrlf)
{
    auto t = GoalScheduleImporter::ImportFile(kData + "goal-crlf.goal");
    ASSERT_EQ(t.numRanks, 2u);
    ASSERT_EQ(t.ops[0].size(), 2u);
    ASSERT_EQ(t.ops[1].size(), 1u);
    EXPECT_EQ(t.ops[0][0].label, "m0_1_1_0");
    EXPECT_EQ(t.ops[0][1].label, "c_l2");
    EXPECT_EQ(t.ops[0][1].timeNs, 5u);
    EXPECT_EQ(t.ops[0][1].deps, std::vector<uint32_t>{0});
    EXPECT_EQ(t.ops[1][0].recvPeerOp, 0);
}

// A rank with a wildcard receive (from -1, tag -1) is matched at run time: its receives and
// the sends to it stay unpaired; the other ranks' messages are paired as before.
TEST(WorkloadImportFixtures, GoalAnySource)
{
    auto t = GoalScheduleImporter::ImportFile(kData + "goal-any-source.goal");
    ASSERT_EQ(t.ops[0].size(), 5u);
    const std::vector<std::string> labels = {"m*_0_5_0", "m*_0_5_1", "c_w", "m2_0_5_0", "m*_0_*_0"};
    for (uint32_t i = 0; i < labels.size(); ++i)
    {
        EXPECT_EQ(t.ops[0][i].label, labels[i]);
    }
    EXPECT_EQ(t.ops[0][0].from, -1);
    EXPECT_FALSE(t.ops[0][0].anyTag);
    EXPECT_EQ(t.ops[0][3].from, 2);
    EXPECT_EQ(t.ops[0][4].from, -1);
    EXPECT_TRUE(t.ops[0][4].anyTag);
    for (uint32_t i : {0u, 1u, 3u, 4u})
    {
        EXPECT_TRUE(t.ops[0][i].unpaired);
        EXPECT_EQ(t.ops[0][i].recvPeerOp, -1);
    }
    EXPECT_TRUE(t.ops[1][0].unpaired);
    EXPECT_EQ(t.ops[1][0].sendPeerOp, -1);
    EXPECT_EQ(t.ops[1][0].tag, 9u);
}

namespace
{

struct Malformed
{
    std::string file;
    uint32_t line;
    std::string field;
    std::string detail;
};

void
PrintTo(const Malformed& m, std::ostream* os)
{
    *os << m.file;
}

class MalformedFixture : public testing::TestWithParam<Malformed>
{
};

} // namespace

// Each file under malformed/ is refused with its name, the line and the field.
TEST_P(MalformedFixture, NamesFileLineAndField)
{
    const Malformed& m = GetParam();
    const std::string path = kData + "malformed/" + m.file;
    ASSERT_TRUE(std::ifstream(path).good()) << path << " missing";
    try
    {
        if (m.file.size() > 5 && m.file.compare(m.file.size() - 5, 5, ".goal") == 0)
        {
            GoalScheduleImporter::ImportFile(path);
        }
        else
        {
            SimAiWorkloadImporter::ImportFile(path, {});
        }
        ADD_FAILURE() << path << " was accepted";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(e.GetFile(), path);
        EXPECT_EQ(e.GetLine(), m.line);
        EXPECT_EQ(e.GetField(), m.field);
        EXPECT_EQ(e.GetDetail(), m.detail);
    }
}

INSTANTIATE_TEST_SUITE_P(
    WorkloadImportFixtures,
    MalformedFixture,
    testing::Values(
        Malformed{"simai-header-no-value.txt", 1, "ep", "expected a value after 'ep:'"},
        Malformed{"simai-count-line.txt",
                  2,
                  "layers",
                  "expected the number of layers on a line of its own"},
        Malformed{"simai-extra-column.txt",
                  3,
                  "layers",
                  "expected 12 columns (name, reserved, fwd compute, fwd comm, fwd bytes, ig "
                  "compute, ig comm, ig bytes, wg compute, wg comm, wg bytes, update), got 13"},
        Malformed{"simai-bad-reserved.txt", 3, "reserved", "expected -1 or a number, got 'none'"},
        // 8 GPUs / tp 2 = dp 4, not a multiple of ep 3 (found when converting)
        Malformed{"simai-ep-not-dividing.txt", 1, "ep", "ep 3 does not divide dp 4"},
        // two blank lines and nothing else
        Malformed{"simai-empty.txt",
                  2,
                  "parallelism",
                  "empty file: expected a parallelism type like DATA"},
        Malformed{"goal-duplicate-label.goal", 4, "label", "duplicate label 'l1' on rank 0"},
        Malformed{"goal-nested-rank.goal", 3, "rank", "rank block inside another rank block"},
        Malformed{"goal-stray-brace.goal", 2, "", "unexpected '}'"},
        Malformed{"goal-op-outside-rank.goal", 2, "", "expected 'rank R {' before 'l1:'"},
        Malformed{"goal-unknown-op.goal", 3, "op", "expected send, recv or calc, got 'put'"},
        Malformed{"goal-unknown-option.goal", 3, "prio", "expected tag, cpu or nic"},
        Malformed{"goal-option-without-value.goal", 3, "tag", "expected a value"},
        Malformed{"goal-num-ranks-twice.goal", 2, "num_ranks", "expected one 'num_ranks N' line"},
        Malformed{"goal-num-ranks-zero.goal", 1, "num_ranks", "expected at least 1 rank"},
        Malformed{"goal-rank-without-brace.goal", 2, "rank", "expected 'rank R {'"},
        // matched by (0, 1, tag 0): the receive on line 6 expects less than line 3 sends
        Malformed{"goal-size-mismatch.goal",
                  6,
                  "bytes",
                  "recv 'm0_1_0_0' on rank 1 expects 8 bytes but the send at line 3 has 16"},
        Malformed{"goal-send-to-self.goal",
                  3,
                  "to",
                  "expected a destination rank other than 0 below 2, got 0"},
        Malformed{"goal-label-without-colon.goal",
                  3,
                  "",
                  "expected 'label: send|recv|calc ...' or 'a requires b', got 'l1 calc 5'"},
        Malformed{"goal-op-without-arguments.goal",
                  3,
                  "op",
                  "expected send, recv or calc with arguments"},
        Malformed{"goal-send-without-to.goal",
                  3,
                  "send",
                  "expected 'send <bytes>b to <rank> [tag <t>]'"},
        Malformed{"goal-requires-unknown-first.goal",
                  4,
                  "requires",
                  "unknown label 'l9' on rank 0"},
        Malformed{"goal-send-any-source.goal",
                  3,
                  "to",
                  "a send needs a destination rank (-1, any source, is for recv)"},
        Malformed{"goal-send-any-tag.goal",
                  3,
                  "tag",
                  "a send needs a tag (-1, any tag, is for recv)"},
        Malformed{"goal-calc-tag.goal", 3, "tag", "a calc has no tag"},
        Malformed{"goal-cpu-too-large.goal", 3, "cpu", "expected a number up to 255, got '256'"},
        Malformed{"goal-recv-bad-source.goal", 3, "from", "expected a number up to 1, got '-2'"},
        Malformed{"goal-open-comment.goal", 3, "comment", "'/*' is never closed with '*/'"},
        Malformed{"goal-irequires-unknown.goal", 4, "irequires", "unknown label 'l7' on rank 0"},
        // two receives from any source on rank 0, one message sent to it
        Malformed{"goal-any-source-count.goal",
                  4,
                  "from",
                  "rank 0 posts 2 receives but 1 messages are sent to it"},
        // l1 starts after l2 started, l2 after l1 ended
        Malformed{"goal-irequires-cycle.goal",
                  3,
                  "after",
                  "dependency cycle: 2 ops can never start, e.g. rank 0 'c_l1' (line 3), rank 0 "
                  "'c_l2' (line 4)"},
        // l1 and l2 wait for each other; the cycle is reported at the first op's line
        Malformed{"goal-requires-cycle.goal",
                  3,
                  "after",
                  "dependency cycle: 2 ops can never start, e.g. rank 0 'c_l1' (line 3), rank 0 "
                  "'c_l2' (line 4)"}));

TEST(WorkloadImportFixtures, MissingFile)
{
    const std::string path = kData + "no-such-file.txt";
    try
    {
        SimAiWorkloadImporter::ImportFile(path, {});
        ADD_FAILURE() << "imported a missing file";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(std::string(e.what()), path + ": cannot open file"); // line 0: not printed
    }
}
