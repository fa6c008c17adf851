/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/trace-native.h"
#include "ns3/trace-transformer-gen.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

using namespace ns3;

namespace
{

TransformerTraceConfig
Small()
{
    TransformerTraceConfig c;
    c.layers = 8;
    c.hidden = 256;
    c.seq = 128;
    c.vocab = 1000;
    c.microBatch = 1;
    c.globalBatch = 8;
    return c;
}

// "F3" / "B5": micro-batch phases of a rank in program order, read from the labels
// of the first layer's attention compute ("fa.<mb>.0", "ba.<mb>.0", "lba.0" = last mb).
std::vector<std::string>
Phases(const WorkloadTrace& t, uint32_t rank, uint32_t lastMb)
{
    std::vector<std::string> out;
    for (const auto& op : t.ops[rank])
    {
        const auto& l = op.label;
        if (l.rfind("fa.", 0) == 0 && l.size() > 2 && l.substr(l.size() - 2) == ".0")
        {
            out.push_back("F" + l.substr(3, l.size() - 5));
        }
        else if (l.rfind("ba.", 0) == 0 && l.substr(l.size() - 2) == ".0")
        {
            out.push_back("B" + l.substr(3, l.size() - 5));
        }
        else if (l == "lba.0")
        {
            out.push_back("B" + std::to_string(lastMb));
        }
    }
    return out;
}

} // namespace

// Pure DP (tp = pp = 1, dp = 4): every rank all-reduces each parameter's gradient
// once per iteration, so the allreduce bytes are exactly params x dtypeBytes
// (buckets hold whole layers: no rounding).  params = layers x 12h^2 + vocab x h.
TEST(WorkloadGenerator, PureDpAllreduceBytesEqualParameters)
{
    auto c = Small();
    c.dp = 4;
    c.bucketBytes = 2 << 20;
    TransformerTraceGenerator gen(c);
    auto t = gen.GenerateTrace();
    const uint64_t params = 8ULL * 12 * 256 * 256 + 1000ULL * 256; // 6291456 + 256000
    EXPECT_EQ(gen.DenseParamsPerRank(0), params);
    for (uint32_t r = 0; r < 4; ++r)
    {
        EXPECT_EQ(t.SumBytes(r, WorkloadOpKind::AllReduce), params * 2);
    }
    // bucket allreduces run on stream 1 after a backward compute (overlap)
    size_t buckets = 0;
    for (const auto& op : t.ops[0])
    {
        if (op.kind == WorkloadOpKind::AllReduce)
        {
            ++buckets;
            EXPECT_EQ(op.stream, 1u);
            ASSERT_EQ(op.after.size(), 1u);
            EXPECT_EQ(op.after[0].rfind("lba.", 0), 0u);
        }
    }
    // 1.5 MiB of gradients per layer, 2 MiB buckets: one closes every second layer -> 4
    EXPECT_EQ(buckets, 4u);
}

// 1F1B on p = 4 stages, m = 8 micro-batches: each stage boundary carries exactly m
// activation sends and m gradient sends; stage s runs p-1-s warm-up forwards, then
// alternates, then drains.
TEST(WorkloadGenerator, OneFOneBOrderAndCounts)
{
    auto c = Small();
    c.pp = 4;
    c.microBatches = 8;
    TransformerTraceGenerator gen(c);
    auto t = gen.GenerateTrace();
    ASSERT_EQ(t.numRanks, 4u);
    for (uint32_t s = 0; s + 1 < 4; ++s)
    {
        size_t fwd = 0;
        size_t bwd = 0;
        for (const auto& op : t.ops[s])
        {
            fwd += op.kind == WorkloadOpKind::Send && op.to == int32_t(s + 1);
        }
        for (const auto& op : t.ops[s + 1])
        {
            bwd += op.kind == WorkloadOpKind::Send && op.to == int32_t(s);
        }
        EXPECT_EQ(fwd, 8u) << "boundary " << s;
        EXPECT_EQ(bwd, 8u) << "boundary " << s;
    }
    for (uint32_t s = 0; s < 4; ++s)
    {
        std::vector<std::string> expected;
        const uint32_t w = 3 - s;
        for (uint32_t k = 0; k < w; ++k)
        {
            expected.push_back("F" + std::to_string(k));
        }
        for (uint32_t i = 0; i + w < 8; ++i)
        {
            expected.push_back("F" + std::to_string(w + i));
            expected.push_back("B" + std::to_string(i));
        }
        for (uint32_t k = 8 - w; k < 8; ++k)
        {
            expected.push_back("B" + std::to_string(k));
        }
        EXPECT_EQ(Phases(t, s, 7), expected) << "stage " << s;
    }
}

TEST(WorkloadGenerator, GpipeRunsAllForwardsFirst)
{
    auto c = Small();
    c.pp = 2;
    c.microBatches = 3;
    c.schedule = "gpipe";
    auto t = TransformerTraceGenerator(c).GenerateTrace();
    EXPECT_EQ(Phases(t, 0, 2), (std::vector<std::string>{"F0", "F1", "F2", "B0", "B1", "B2"}));
}

// Every feature at once re-parses, prints as a fixed point, and gives the
// expected collective mix: SP turns each TP allreduce into RS + AG, MoE adds two
// all-to-alls per layer per direction, ZeRO-1 reduce-scatters then all-gathers.
TEST(WorkloadGenerator, AllFeaturesReparse)
{
    auto c = Small();
    c.tp = 2;
    c.pp = 2;
    c.dp = 4;
    c.ep = 2;
    c.experts = 4;
    c.zero = 1;
    c.sequenceParallel = true;
    c.iterations = 2;
    c.globalBatch = 8; // m = 2
    TransformerTraceGenerator gen(c);
    auto t = gen.GenerateTrace();
    ASSERT_EQ(t.numRanks, 16u);
    std::string printed = NativeTracePrinter::Print(t);
    EXPECT_EQ(NativeTracePrinter::Print(NativeTraceParser::ParseString(printed, "p")), printed);
    size_t a2a = 0;
    size_t ar = 0;
    for (const auto& op : t.ops[0])
    {
        a2a += op.kind == WorkloadOpKind::AllToAll;
        ar += op.kind == WorkloadOpKind::AllReduce;
    }
    // 4 layers/stage x 2 micro-batches x (2 fwd + 2 bwd) x 2 iterations
    EXPECT_EQ(a2a, 4u * 2 * 4 * 2);
    // TP: none (SP); DP: none (ZeRO-1); expert grads: one xdp allreduce per layer per iteration
    EXPECT_EQ(ar, 4u * 2);
    EXPECT_GT(t.SumBytes(0, WorkloadOpKind::ReduceScatter), 0u);
}

// ZeRO-3 gathers each layer's parameters before its forward and backward compute.
TEST(WorkloadGenerator, Zero3GathersParameters)
{
    auto c = Small();
    c.dp = 2;
    c.zero = 3;
    c.microBatches = 2;
    c.globalBatch = 4;
    auto t = TransformerTraceGenerator(c).GenerateTrace();
    size_t gathers = 0;
    for (const auto& op : t.ops[1])
    {
        gathers += op.kind == WorkloadOpKind::AllGather;
    }
    EXPECT_EQ(gathers, 8u * 2 * 2); // layers x micro-batches x (fwd + bwd)
}

// Layouts: tp=2, pp=2, dp=2.  tp-inner: rank = (stage*dp + d)*tp + t;
// dp-inner: rank = (stage*tp + t)*dp + d.
TEST(WorkloadGenerator, RankMapping)
{
    auto c = Small();
    c.tp = 2;
    c.pp = 2;
    c.dp = 2;
    c.globalBatch = 4;
    TransformerTraceGenerator inner(c);
    EXPECT_EQ(inner.RankOf(0, 1, 0), 2u);
    EXPECT_EQ(inner.RankOf(1, 0, 1), 5u);
    auto t = inner.GenerateTrace();
    EXPECT_EQ(t.groups[t.FindGroup("tp_s0_d1")].ranks, (std::vector<uint32_t>{2, 3}));
    c.mapping = "dp-inner";
    TransformerTraceGenerator outer(c);
    EXPECT_EQ(outer.RankOf(0, 1, 0), 1u);
    auto u = outer.GenerateTrace();
    EXPECT_EQ(u.groups[u.FindGroup("tp_s0_d1")].ranks, (std::vector<uint32_t>{1, 3}));
    EXPECT_EQ(u.groups[u.FindGroup("dp_s0_t1")].ranks, (std::vector<uint32_t>{2, 3}));
}

// Attention forward of b=1, s=2048, h=4096 on an H100 at 50 %:
// (8bsh^2 + 4bs^2h) = 343597383680 FLOP / (989e12 x 0.5) = 694838 ns.
TEST(WorkloadGenerator, ComputeTimeFromFlops)
{
    TransformerTraceConfig c;
    c.layers = 1;
    c.hidden = 4096;
    c.seq = 2048;
    c.vocab = 1000;
    c.globalBatch = 1;
    c.gpu = "H100";
    c.efficiency = 0.5;
    auto t = TransformerTraceGenerator(c).GenerateTrace();
    ASSERT_EQ(t.ops[0][0].label, "fa.0.0");
    EXPECT_EQ(t.ops[0][0].timeNs, 694838u);
    double a100 = 0;
    EXPECT_TRUE(TransformerTraceGenerator::GpuPeakFlops("A100", &a100));
    EXPECT_EQ(a100, 312e12);
}

TEST(WorkloadGenerator, BadLayoutNamesTheFlag)
{
    auto c = Small();
    c.pp = 3; // 8 layers
    try
    {
        TransformerTraceGenerator(c).Generate();
        FAIL();
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(std::string(e.what()), "trace-gen: field 'pp': pp 3 must divide layers 8");
    }
}

// The shipped GPT-3 175B trace (96 layers, h 12288, s 2048, tp 8, pp 8, dp 2, 32
// micro-batches) parses; rank 16 (stage 1) all-reduces per iteration
// TP: 32 mb x 12 layers x 4 x 48 MiB = 77309411328 B, plus
// DP: 12 layers x 12h^2/8 params x 2 B = 5435817984 B; it sends 32 activations
// to stage 2 and 32 gradients to stage 0.
TEST(WorkloadGenerator, ShippedGpt3TraceParses)
{
    auto t = NativeTraceParser::ParseFile(AI_FABRIC_SOURCE_DIR
                                          "/scenarios/traces/gpt3-175b-tp8-pp8-dp2.trace");
    ASSERT_EQ(t.numRanks, 128u);
    EXPECT_EQ(t.SumBytes(16, WorkloadOpKind::AllReduce), 77309411328ULL + 5435817984ULL);
    size_t sends = 0;
    for (const auto& op : t.ops[16])
    {
        sends += op.kind == WorkloadOpKind::Send;
    }
    EXPECT_EQ(sends, 64u);
    EXPECT_TRUE(t.warnings.empty());
}

// Megatron's scatter-gather of pipeline tensors: tp = 4, pp = 2, m = 3.  A stage-0 rank
// sends 3 activations of 1/4 of b*s*h*2 = 64 KiB (16 KiB each); the stage-1 TP group then
// all-gathers each to the whole 64 KiB (3 forward all-gathers on stage 1, 3 backward ones
// on stage 0).  Without the option the sends carry 64 KiB and there is no all-gather.
TEST(WorkloadGenerator, PipelineScatterGather)
{
    auto c = Small();
    c.tp = 4;
    c.pp = 2;
    c.microBatches = 3;
    const uint64_t act = uint64_t(c.microBatch) * c.seq * c.hidden * 2;
    auto sends = [](const WorkloadTrace& t, uint32_t rank) {
        return t.SumBytes(rank, WorkloadOpKind::Send);
    };
    const WorkloadTrace plain = TransformerTraceGenerator(c).GenerateTrace();
    EXPECT_EQ(sends(plain, 0), 3 * act);
    EXPECT_EQ(plain.SumBytes(4, WorkloadOpKind::AllGather), 0u);
    c.pipelineScatterGather = true;
    const WorkloadTrace sg = TransformerTraceGenerator(c).GenerateTrace();
    EXPECT_EQ(sends(sg, 0), 3 * act / 4);
    EXPECT_EQ(sends(sg, 4), 3 * act / 4); // stage-1 rank 0 sends the gradients back
    EXPECT_EQ(sg.SumBytes(4, WorkloadOpKind::AllGather), 3 * act);
    EXPECT_EQ(sg.SumBytes(0, WorkloadOpKind::AllGather), 3 * act);
    // With sequence parallelism the option changes nothing (not modelled there).
    c.sequenceParallel = true;
    EXPECT_EQ(sends(TransformerTraceGenerator(c).GenerateTrace(), 0), 3 * act);
}

// Front-end traffic: pp = 2, 2 iterations.  Each first-stage rank loads its 1 MiB batch
// before the iteration's first forward (stream 0, so the load gates it); every rank writes a
// 2 MiB checkpoint after the optimizer step, before the next iteration.
TEST(WorkloadGenerator, LoadAndCheckpointOps)
{
    auto c = Small();
    c.pp = 2;
    c.microBatches = 2;
    c.iterations = 2;
    c.loadBytes = 1 << 20;
    c.checkpointBytes = 2 << 20;
    const WorkloadTrace t = TransformerTraceGenerator(c).GenerateTrace();
    EXPECT_EQ(t.SumBytes(0, WorkloadOpKind::Load), 2u << 20);
    EXPECT_EQ(t.SumBytes(1, WorkloadOpKind::Load), 0u); // the second stage gets activations
    EXPECT_EQ(t.SumBytes(0, WorkloadOpKind::Checkpoint), 4u << 20);
    EXPECT_EQ(t.SumBytes(1, WorkloadOpKind::Checkpoint), 4u << 20);
    // Rank 0's program: the load first, each checkpoint right after an optimizer step.
    const auto& ops = t.ops[0];
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(ops.front().kind, WorkloadOpKind::Load);
    for (std::size_t i = 1; i < ops.size(); ++i)
    {
        if (ops[i].kind == WorkloadOpKind::Checkpoint)
        {
            EXPECT_EQ(ops[i - 1].label.rfind("opt", 0), 0u) << ops[i].label;
        }
    }
}

// The generator names every group's parallelism kind (kind=), which the parse keeps: the
// expert-data-parallel "xdp" groups are DP, the expert blocks EP.
TEST(WorkloadGenerator, GroupsCarryExplicitKind)
{
    auto c = Small();
    c.tp = 2;
    c.dp = 4;
    c.ep = 2;
    c.experts = 4;
    const std::string text = TransformerTraceGenerator(c).Generate();
    EXPECT_NE(text.find("group tp_s0_d0 0-1 kind=tp\n"), std::string::npos) << text;
    const auto t = TransformerTraceGenerator(c).GenerateTrace();
    std::size_t seen[kNumParallelismKinds] = {};
    for (const auto& g : t.groups)
    {
        const std::string line = "group " + g.name + " " + FormatRankList(g.ranks) +
                                 " kind=" + ParallelismKindKey(g.kind) + "\n";
        EXPECT_NE(text.find(line), std::string::npos) << line;
        EXPECT_EQ(g.kind, ParallelismKindOfGroup(g.name)) << g.name;
        ++seen[static_cast<std::size_t>(g.kind)];
    }
    EXPECT_GT(seen[static_cast<std::size_t>(ParallelismKind::Tp)], 0u);
    EXPECT_GT(seen[static_cast<std::size_t>(ParallelismKind::Dp)], 0u);
    EXPECT_GT(seen[static_cast<std::size_t>(ParallelismKind::Ep)], 0u);
}

// Schedule and mapping are read once; an unknown one is refused by Validate, naming the
// flag and the value.
TEST(WorkloadGenerator, UnknownScheduleOrMappingRefused)
{
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    EXPECT_TRUE(ParsePipelineSchedule("gpipe", &schedule));
    EXPECT_EQ(schedule, PipelineSchedule::GPipe);
    EXPECT_FALSE(ParsePipelineSchedule("GPipe", &schedule));
    RankMapping mapping = RankMapping::TpInner;
    EXPECT_TRUE(ParseRankMapping("dp-inner", &mapping));
    EXPECT_EQ(mapping, RankMapping::DpInner);
    EXPECT_FALSE(ParseRankMapping("inner", &mapping));
    auto refusal = [](const TransformerTraceConfig& c) {
        try
        {
            TransformerTraceGenerator(c).Validate();
        }
        catch (const WorkloadError& e)
        {
            return e.GetField() + ": " + e.GetDetail();
        }
        return std::string("accepted");
    };
    auto c = Small();
    c.schedule = "zb";
    EXPECT_EQ(refusal(c), "schedule: expected 1f1b or gpipe, got 'zb'");
    c = Small();
    c.mapping = "inner";
    EXPECT_EQ(refusal(c), "mapping: expected tp-inner or dp-inner, got 'inner'");
}

namespace
{
TransformerTraceConfig
SmallHybrid(uint32_t dp)
{
    TransformerTraceConfig c;
    c.layers = 4;
    c.hidden = 1024;
    c.seq = 512;
    c.tp = 2;
    c.pp = 2;
    c.dp = dp;
    c.microBatches = 4;
    c.sequenceParallel = true;
    c.zero = 1;
    c.bucketBytes = 4 << 20;
    return c;
}
} // namespace

// All DP replicas and TP ranks of a stage do the same thing: one program per stage, and each
// rank's view resolves to its own groups and pipeline peers.
TEST(WorkloadSharing, GeneratedRanksShareOneProgramPerStage)
{
    const TransformerTraceConfig c = SmallHybrid(4);
    const TransformerTraceGenerator gen(c);
    const WorkloadTrace t = gen.GenerateTrace();
    EXPECT_EQ(t.ops.CountPrograms(), c.pp);
    const uint32_t perStage = c.tp * c.dp;
    for (uint32_t r = 0; r < t.numRanks; ++r)
    {
        const uint32_t st = r / perStage;
        EXPECT_EQ(t.ops.ProgramOf(r), t.ops.ProgramOf(st * perStage)) << "rank " << r;
        uint32_t sends = 0;
        for (const auto& op : t.ops[r])
        {
            if (IsCollective(op.kind))
            {
                const auto& g = t.groups[op.group];
                EXPECT_TRUE(std::binary_search(g.ranks.begin(), g.ranks.end(), r))
                    << "rank " << r << " " << op.label << " on " << g.name;
                const auto& coll = t.collectives[op.collective];
                EXPECT_EQ(coll.group, op.group);
                EXPECT_EQ(coll.label, op.label);
            }
            if (op.kind == WorkloadOpKind::Send)
            {
                ++sends;
                // tp-inner: the next stage's rank of the same (d, t) is perStage further.
                EXPECT_EQ(op.to,
                          static_cast<int32_t>(op.label[0] == 'a' || op.label[1] == 'a'
                                                   ? r + perStage
                                                   : r - perStage))
                    << op.label;
                const auto peer = t.ops[op.to][op.sendPeerOp];
                EXPECT_EQ(peer.from, static_cast<int32_t>(r));
                EXPECT_EQ(peer.label, op.label);
            }
        }
        EXPECT_EQ(sends, c.microBatches) << "rank " << r; // activations or gradients
    }
}

// What a rank adds to the trace is its binding: the group slots and one value per collective,
// root and point-to-point half, never a copy of the ops.  Doubling DP (4 -> 8, 8 more ranks
// per stage) adds at most sizeof(binding) + 2 x (8 bytes per such value + 4 per group) per
// rank (vectors at most double their size); giving every rank its own program costs the ops.
TEST(WorkloadSharing, TableMemoryGrowsWithBindingsNotOps)
{
    const WorkloadTrace small = TransformerTraceGenerator(SmallHybrid(4)).GenerateTrace();
    const WorkloadTrace large = TransformerTraceGenerator(SmallHybrid(8)).GenerateTrace();
    ASSERT_EQ(small.ops.CountPrograms(), large.ops.CountPrograms());
    uint64_t values = 0; // per rank of stage 0 (stage 1 has as many: sends and receives swap)
    for (const auto& op : large.ops[0])
    {
        values += IsCollective(op.kind) + (op.kind == WorkloadOpKind::Send) +
                  (op.kind == WorkloadOpKind::Recv);
    }
    const uint64_t added = large.numRanks - small.numRanks;
    const double perRank =
        static_cast<double>(large.ops.MemoryBytes() - small.ops.MemoryBytes()) / added;
    const double bound = 128 + 2.0 * (8 * values + 4 * 2); // 128: a binding's vectors and index
    EXPECT_LT(perRank, bound) << values << " values per rank";
    WorkloadTrace own = large;
    for (uint32_t r = 0; r < own.numRanks; ++r)
    {
        std::vector<WorkloadOp> ops;
        for (const auto& op : large.ops[r])
        {
            ops.push_back(op.ToOp());
        }
        own.ops.SetRank(r, ops);
    }
    EXPECT_EQ(own.ops.CountPrograms(), own.numRanks);
    // An op is at least sizeof(WorkloadOp) bytes more per rank.
    EXPECT_GT(own.ops.MemoryBytes(),
              large.ops.MemoryBytes() + (own.numRanks - large.ops.CountPrograms()) *
                                            large.ops[0].size() * sizeof(WorkloadOp));
}

// A rank that changes leaves its class; the others keep sharing.
TEST(WorkloadSharing, ChangedRankDiverges)
{
    const WorkloadTrace ref = TransformerTraceGenerator(SmallHybrid(2)).GenerateTrace();
    WorkloadTrace t = ref;
    ASSERT_EQ(t.ops.CountPrograms(), 2u);
    WorkloadOp op = t.ops[1][0].ToOp();
    op.timeNs += 7;
    t.ops.Set(1, 0, op);
    EXPECT_EQ(t.ops.CountPrograms(), 3u);
    EXPECT_NE(t.ops.ProgramOf(1), t.ops.ProgramOf(0));
    EXPECT_EQ(t.ops.ProgramOf(2), t.ops.ProgramOf(0));
    EXPECT_EQ(t.ops[1][0].timeNs, ref.ops[1][0].timeNs + 7);
    EXPECT_EQ(t.ops[0][0].timeNs, ref.ops[0][0].timeNs);
    // Everything else of rank 1 stays: its groups, peers, collectives and deps.
    for (uint32_t i = 1; i < t.ops[1].size(); ++i)
    {
        const auto x = t.ops[1][i];
        const auto y = ref.ops[1][i];
        EXPECT_EQ(x.group, y.group);
        EXPECT_EQ(x.to, y.to);
        EXPECT_EQ(x.from, y.from);
        EXPECT_EQ(x.collective, y.collective);
        EXPECT_EQ(x.sendPeerOp, y.sendPeerOp);
        EXPECT_EQ(x.recvPeerOp, y.recvPeerOp);
        EXPECT_EQ(x.deps, y.deps);
    }
}

// TransformerTraceConfig::Llama70b against Meta Llama 3 70B's published configuration
// (80 layers, hidden 8192, 64 heads and 8 key/value heads, SwiGLU FFN 28672, vocabulary
// 128256): its parameters, 70.6 B on the model card, and the compute times of one stage.
TEST(WorkloadGenerator, Llama70bPreset)
{
    const TransformerTraceConfig c = TransformerTraceConfig::Llama70b(8, 4, 2, 4);
    const TransformerTraceGenerator gen(c);
    const uint64_t h = 8192;
    const uint64_t perLayer = 2 * h * h + 2 * h * (h / 8) + 3 * h * 28672; // attention, MLP
    uint64_t params = 0;
    for (uint32_t st = 0; st < 4; ++st)
    {
        params += gen.DenseParamsPerRank(st) * 8;
    }
    EXPECT_EQ(params, 80 * perLayer + 2 * 128256 * h);       // embedding and output untied
    EXPECT_NEAR(static_cast<double>(params), 70.6e9, 0.1e9); // norms (1.3 M) left out
    const WorkloadTrace t = gen.GenerateTrace();
    EXPECT_EQ(t.numRanks, 64u);
    EXPECT_EQ(t.ops.CountPrograms(), 4u);
    // Forward FLOPs per TP rank of one 8192-token sequence, at 50 % of 989 TFLOPS.
    const double s = 8192;
    const double hd = static_cast<double>(h);
    const double attn = (4 * s * hd * hd + 4 * s * hd * (hd / 8) + 4 * s * s * hd) / 8;
    const double mlp = 6 * s * hd * 28672 / 8;
    auto ns = [](double flops) { return std::llround(flops / (989e12 * 0.5) * 1e9); };
    bool sawAttention = false;
    bool sawMlp = false;
    for (const auto& op : t.ops[0])
    {
        if (op.label == "fa.0.0")
        {
            EXPECT_NEAR(static_cast<double>(op.timeNs), ns(attn), 1); // 1 ns: rounding
            sawAttention = true;
        }
        if (op.label == "fm.0.0")
        {
            EXPECT_NEAR(static_cast<double>(op.timeNs), ns(mlp), 1);
            sawMlp = true;
        }
    }
    EXPECT_TRUE(sawAttention && sawMlp);
}
