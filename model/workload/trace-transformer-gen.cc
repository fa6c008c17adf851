/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/trace-transformer-gen.h"

#include "ns3/command-line.h"
#include "ns3/log.h"
#include "ns3/run-parameters.h"
#include "ns3/trace-native.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TransformerTraceGenerator");

namespace
{

void
Check(bool ok, const std::string& flag, const std::string& message)
{
    if (!ok)
    {
        throw WorkloadError("trace-gen", 0, flag, message);
    }
}

} // namespace

bool
ParsePipelineSchedule(const std::string& text, PipelineSchedule* schedule)
{
    if (text != "1f1b" && text != "gpipe")
    {
        return false;
    }
    *schedule = text == "gpipe" ? PipelineSchedule::GPipe : PipelineSchedule::OneFOneB;
    return true;
}

bool
ParseRankMapping(const std::string& text, RankMapping* mapping)
{
    if (text != "tp-inner" && text != "dp-inner")
    {
        return false;
    }
    *mapping = text == "dp-inner" ? RankMapping::DpInner : RankMapping::TpInner;
    return true;
}

void
TransformerTraceConfig::AddModelArguments(CommandLine& cmd)
{
    cmd.AddValue("layers", "transformer layers", layers);
    cmd.AddValue("hidden", "hidden size", hidden);
    cmd.AddValue("seq", "sequence length (tokens)", seq);
    cmd.AddValue("vocab", "vocabulary size", vocab);
    cmd.AddValue("microBatch", "sequences per micro-batch", microBatch);
    cmd.AddValue("microBatches", "micro-batches per pipeline and iteration", microBatches);
    cmd.AddValue("schedule", "pipeline schedule: 1f1b or gpipe", schedule);
    cmd.AddValue("efficiency", "achieved fraction of the GPU's peak dense BF16", efficiency);
    cmd.AddValue("iterations", "training iterations", iterations);
}

void
TransformerTraceConfig::FitDp(uint32_t ranks)
{
    const uint64_t tpPp = uint64_t(tp) * pp;
    Check(tpPp > 0 && ranks % tpPp == 0,
          "pp",
          "tp " + std::to_string(tp) + " x pp " + std::to_string(pp) + " must divide the " +
              std::to_string(ranks) + " GPUs");
    dp = static_cast<uint32_t>(ranks / tpPp);
    globalBatch = microBatch * std::max<uint32_t>(microBatches, 1) * dp;
}

std::string
TransformerTraceConfig::IterationMarker() const
{
    return checkpointBytes ? "ck*" : "opt*";
}

void
TransformerTraceConfig::AddToRunParameters(RunParameters& p) const
{
    p.Set("layers", layers);
    p.Set("hidden", hidden);
    p.Set("seq", seq);
    p.Set("vocab", vocab);
    p.Set("ffn", ffn);
    p.Set("gatedMlp", gatedMlp);
    p.Set("heads", heads);
    p.Set("kvHeads", kvHeads);
    p.Set("microBatch", microBatch);
    p.Set("globalBatch", globalBatch);
    p.Set("dtypeBytes", dtypeBytes);
    p.Set("experts", experts);
    p.Set("topk", topk);
    p.Set("tp", tp);
    p.Set("pp", pp);
    p.Set("dp", dp);
    p.Set("ep", ep);
    p.Set("schedule", schedule);
    p.Set("microBatches", microBatches);
    p.Set("zero", zero);
    p.Set("sequenceParallel", sequenceParallel);
    p.Set("pipelineScatterGather", pipelineScatterGather);
    p.Set("gpu", gpu);
    p.Set("efficiency", efficiency);
    p.Set("iterations", iterations);
    p.Set("mapping", mapping);
    p.Set("bucketBytes", bucketBytes);
    p.Set("loadBytes", loadBytes);
    p.Set("checkpointBytes", checkpointBytes);
}

TransformerTraceConfig
TransformerTraceConfig::Llama70b(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t microBatches)
{
    TransformerTraceConfig c;
    c.layers = 80;
    c.hidden = 8192;
    c.ffn = 28672;
    c.gatedMlp = true;
    c.heads = 64;
    c.kvHeads = 8;
    c.vocab = 128256;
    c.seq = 8192;
    c.microBatch = 1;
    c.tp = tp;
    c.pp = pp;
    c.dp = dp;
    c.microBatches = microBatches;
    c.globalBatch = microBatches * dp;
    c.sequenceParallel = true;
    c.zero = 1;
    c.bucketBytes = 400ULL << 20;
    c.gpu = "H100";
    c.efficiency = 0.5;
    return c;
}

TransformerTraceGenerator::TransformerTraceGenerator(TransformerTraceConfig config)
    : m_c(std::move(config))
{
    m_scheduleKnown = ParsePipelineSchedule(m_c.schedule, &m_schedule);
    m_mappingKnown = ParseRankMapping(m_c.mapping, &m_mapping);
}

bool
TransformerTraceGenerator::GpuPeakFlops(const std::string& gpu, double* flops)
{
    // Dense (no sparsity) BF16 tensor-core peaks from NVIDIA's datasheets:
    // A100 SXM 312 TFLOPS; H100 SXM 989 TFLOPS (1979 with sparsity);
    // B200 (HGX B200) 2.25 PFLOPS (4.5 with sparsity).
    if (gpu == "A100")
    {
        *flops = 312e12;
    }
    else if (gpu == "H100")
    {
        *flops = 989e12;
    }
    else if (gpu == "B200")
    {
        *flops = 2250e12;
    }
    else
    {
        return false;
    }
    return true;
}

uint32_t
TransformerTraceGenerator::GetMicroBatches() const
{
    if (m_c.microBatches)
    {
        return m_c.microBatches;
    }
    const uint64_t per = uint64_t(m_c.microBatch) * m_c.dp;
    return per ? static_cast<uint32_t>(m_c.globalBatch / per) : 0;
}

uint32_t
TransformerTraceGenerator::RankOf(uint32_t stage, uint32_t d, uint32_t t) const
{
    return m_mapping == RankMapping::DpInner ? (stage * m_c.tp + t) * m_c.dp + d
                                             : (stage * m_c.dp + d) * m_c.tp + t;
}

void
TransformerTraceGenerator::Validate() const
{
    const auto& c = m_c;
    Check(c.layers >= 1 && c.layers <= 100000, "layers", "expected 1 to 100000 layers");
    Check(c.hidden >= 1 && c.hidden <= 1000000, "hidden", "expected 1 to 1000000");
    Check(c.seq >= 1 && c.seq <= 10000000, "seq", "expected 1 to 10000000");
    Check(c.vocab >= 1 && c.vocab <= 10000000, "vocab", "expected 1 to 10000000");
    Check(c.ffn <= 10000000, "ffn", "expected 0 (4 x hidden) to 10000000");
    Check((c.heads == 0) == (c.kvHeads == 0) &&
              (c.heads == 0 ||
               (c.kvHeads <= c.heads && c.heads % c.kvHeads == 0 && c.hidden % c.heads == 0)),
          "kvHeads",
          "heads and kvHeads go together: kvHeads divides heads, heads divides hidden");
    Check(c.dtypeBytes >= 1 && c.dtypeBytes <= 8, "dtypeBytes", "expected 1 to 8");
    Check(c.tp >= 1 && c.pp >= 1 && c.dp >= 1 && uint64_t(c.tp) * c.pp * c.dp <= 1000000,
          "tp",
          "tp, pp and dp must be at least 1 and their product at most 1000000");
    Check(c.layers % c.pp == 0,
          "pp",
          "pp " + std::to_string(c.pp) + " must divide layers " + std::to_string(c.layers));
    Check(c.ep >= 1 && c.dp % c.ep == 0,
          "ep",
          "ep " + std::to_string(c.ep) + " must divide dp " + std::to_string(c.dp));
    Check(c.ep == 1 || c.experts > 0, "ep", "ep > 1 needs --experts");
    Check(c.experts == 0 || c.experts % c.ep == 0, "experts", "ep must divide the expert count");
    Check(c.experts == 0 || (c.topk >= 1 && c.topk <= c.experts),
          "topk",
          "expected 1 <= topk <= experts");
    Check(m_scheduleKnown, "schedule", "expected 1f1b or gpipe, got '" + c.schedule + "'");
    Check(m_mappingKnown, "mapping", "expected tp-inner or dp-inner, got '" + c.mapping + "'");
    Check(c.zero == 0 || c.zero == 1 || c.zero == 3, "zero", "expected 0, 1 or 3");
    double peak = 0;
    Check(GpuPeakFlops(c.gpu, &peak), "gpu", "expected A100, H100 or B200, got '" + c.gpu + "'");
    Check(c.efficiency > 0 && c.efficiency <= 1, "efficiency", "expected 0 < efficiency <= 1");
    Check(c.iterations >= 1 && c.iterations <= 100000, "iterations", "expected 1 to 100000");
    Check(c.microBatch >= 1, "microBatch", "expected at least 1");
    Check(c.bucketBytes >= 1, "bucketBytes", "expected at least 1 byte");
    const uint32_t m = GetMicroBatches();
    Check(m >= 1 && m <= 100000,
          "microBatches",
          "expected 1 to 100000 micro-batches (globalBatch / (microBatch x dp)), got " +
              std::to_string(m));
    Check(c.microBatches || uint64_t(m) * c.microBatch * c.dp == c.globalBatch,
          "globalBatch",
          "globalBatch must be a multiple of microBatch x dp");
}

uint64_t
TransformerTraceGenerator::FfnDim() const
{
    return m_c.ffn ? m_c.ffn : 4ULL * m_c.hidden;
}

uint64_t
TransformerTraceGenerator::KvDim() const
{
    return m_c.heads && m_c.kvHeads ? uint64_t(m_c.hidden) * m_c.kvHeads / m_c.heads : m_c.hidden;
}

uint32_t
TransformerTraceGenerator::MlpMatrices() const
{
    return m_c.gatedMlp ? 3 : 2;
}

uint64_t
TransformerTraceGenerator::AttentionParams() const
{
    const uint64_t h = m_c.hidden;
    return 2 * h * h + 2 * h * KvDim(); // Q and output; K and V
}

uint64_t
TransformerTraceGenerator::MlpParams() const
{
    return uint64_t(MlpMatrices()) * m_c.hidden * FfnDim();
}

uint64_t
TransformerTraceGenerator::DenseParamsPerRank(uint32_t stage) const
{
    const uint64_t h = m_c.hidden;
    const uint64_t perLayer = (AttentionParams() + (m_c.experts ? 0 : MlpParams())) / m_c.tp;
    uint64_t params = perLayer * (m_c.layers / m_c.pp);
    if (stage == 0)
    {
        params += uint64_t(m_c.vocab) * h / m_c.tp; // embedding (tied to the output when pp = 1)
    }
    if (stage == m_c.pp - 1 && m_c.pp > 1)
    {
        params += uint64_t(m_c.vocab) * h / m_c.tp; // untied output layer
    }
    return params;
}

std::string
TransformerTraceGenerator::Generate() const
{
    Validate();
    const auto& c = m_c;
    const uint32_t P = c.pp;
    const uint32_t D = c.dp;
    const uint32_t T = c.tp;
    const uint32_t m = GetMicroBatches();
    const uint32_t Ls = c.layers / P;
    const double b = c.microBatch;
    const double s = c.seq;
    const double h = c.hidden;
    double peak = 0;
    GpuPeakFlops(c.gpu, &peak);
    auto ns = [&](double flops) {
        return FormatTimeNs(std::max<uint64_t>(
            1,
            static_cast<uint64_t>(std::llround(flops / (peak * c.efficiency) * 1e9))));
    };
    // Forward FLOPs of one micro-batch on one TP rank (2 per multiply-add): the Q and output
    // projections, K and V (narrower under grouped-query attention), scores and their
    // product with V; the MLP's matrices.  GPT's defaults give 8bsh^2 + 4bs^2h and 16bsh^2.
    const double kv = static_cast<double>(KvDim());
    const double attnFlops = (4 * b * s * h * h + 4 * b * s * h * kv + 4 * b * s * s * h) / T;
    const double mlpFlops = 2.0 * MlpMatrices() * b * s * h * static_cast<double>(FfnDim()) *
                            (c.experts ? c.topk : 1) / T;
    const double logitFlops = 2 * b * s * h * c.vocab / T;
    const std::string actBytes = FormatBytes(static_cast<uint64_t>(b * s * h) * c.dtypeBytes);
    const std::string a2aBytes =
        FormatBytes(static_cast<uint64_t>(b * s * h) * c.dtypeBytes * c.topk);
    const uint64_t layerDenseBytes =
        (AttentionParams() + (c.experts ? 0 : MlpParams())) / T * c.dtypeBytes;
    const uint64_t layerExpertBytes =
        c.experts ? uint64_t(c.experts / c.ep) * MlpParams() / T * c.dtypeBytes : 0;
    const uint64_t embedBytes = uint64_t(c.vocab) * c.hidden / T * c.dtypeBytes;
    const bool zero3 = c.zero == 3;

    std::ostringstream os;
    os << "# generated by trace-gen: layers=" << c.layers << " hidden=" << c.hidden
       << " seq=" << c.seq << " vocab=" << c.vocab << " microBatch=" << c.microBatch
       << " globalBatch=" << c.globalBatch << " experts=" << c.experts << " topk=" << c.topk
       << "\n# tp=" << T << " pp=" << P << " dp=" << D << " ep=" << c.ep
       << " schedule=" << c.schedule << " microBatches=" << m << " zero=" << c.zero
       << " sequenceParallel=" << c.sequenceParallel
       << (c.pipelineScatterGather ? " pipelineScatterGather=1" : "") << " gpu=" << c.gpu
       << " efficiency=" << c.efficiency << " mapping=" << c.mapping << "\n";
    os << "fabric-trace 1\nranks " << uint64_t(T) * P * D << "\n";

    auto rankList = [&](std::vector<uint32_t> r) {
        std::sort(r.begin(), r.end());
        return FormatRankList(r);
    };
    auto tpRanks = [&](uint32_t st, uint32_t d) {
        std::vector<uint32_t> r;
        for (uint32_t t = 0; t < T; ++t)
        {
            r.push_back(RankOf(st, d, t));
        }
        return r;
    };
    // DP group of (stage, t); with EP, "ep" blocks and "xdp" strided subgroups of it.
    auto dpRanks = [&](uint32_t st, uint32_t t, uint32_t first, uint32_t stride, uint32_t n) {
        std::vector<uint32_t> r;
        for (uint32_t k = 0; k < n; ++k)
        {
            r.push_back(RankOf(st, first + k * stride, t));
        }
        return r;
    };
    auto stageRanks = [&](uint32_t st) {
        std::vector<uint32_t> r;
        for (uint32_t d = 0; d < D; ++d)
        {
            for (uint32_t t = 0; t < T; ++t)
            {
                r.push_back(RankOf(st, d, t));
            }
        }
        return rankList(r);
    };
    const uint32_t E = c.ep;
    for (uint32_t st = 0; st < P; ++st)
    {
        for (uint32_t d = 0; d < D && T > 1; ++d)
        {
            os << "group tp_s" << st << "_d" << d << " " << rankList(tpRanks(st, d))
               << " kind=tp\n";
        }
        for (uint32_t t = 0; t < T && D > 1; ++t)
        {
            os << "group dp_s" << st << "_t" << t << " " << rankList(dpRanks(st, t, 0, 1, D))
               << " kind=dp\n";
            for (uint32_t e = 0; e < D / E && E > 1; ++e)
            {
                os << "group ep_s" << st << "_t" << t << "_e" << e << " "
                   << rankList(dpRanks(st, t, e * E, 1, E)) << " kind=ep\n";
            }
            for (uint32_t k = 0; k < E && E > 1 && D / E > 1; ++k)
            {
                os << "group xdp_s" << st << "_t" << t << "_k" << k << " "
                   << rankList(dpRanks(st, t, k, E, D / E)) << " kind=dp\n";
            }
        }
    }

    for (uint32_t st = 0; st < P; ++st)
    {
        const std::string all = stageRanks(st);
        std::string ind;
        auto line = [&](const std::string& ranks, const std::string& rest) {
            os << ind << ranks << " " << rest << "\n";
        };
        auto open = [&](const std::string& head) {
            os << ind << head << " {\n";
            ind += "  ";
        };
        auto close = [&]() {
            ind.resize(ind.size() - 2);
            os << ind << "}\n";
        };
        auto compute = [&](const std::string& label, double flops, const std::string& extra) {
            line(all, label + " compute time=" + ns(flops) + extra);
        };
        auto tpColl = [&](const std::string& label, const std::string& op) {
            for (uint32_t d = 0; d < D && T > 1; ++d)
            {
                line(rankList(tpRanks(st, d)),
                     label + " " + op + " bytes=" + actBytes + " group=tp_s" + std::to_string(st) +
                         "_d" + std::to_string(d));
            }
        };
        auto epColl = [&](const std::string& label) {
            for (uint32_t t = 0; t < T && E > 1; ++t)
            {
                for (uint32_t e = 0; e < D / E; ++e)
                {
                    line(rankList(dpRanks(st, t, e * E, 1, E)),
                         label + " alltoall bytes=" + a2aBytes + " group=ep_s" +
                             std::to_string(st) + "_t" + std::to_string(t) + "_e" +
                             std::to_string(e));
                }
            }
        };
        auto dpColl = [&](const std::string& label,
                          const std::string& op,
                          uint64_t bytes,
                          const std::string& extra) {
            for (uint32_t t = 0; t < T && D > 1; ++t)
            {
                line(rankList(dpRanks(st, t, 0, 1, D)),
                     label + " " + op + " bytes=" + FormatBytes(bytes) + " group=dp_s" +
                         std::to_string(st) + "_t" + std::to_string(t) + extra);
            }
        };
        auto xdpColl = [&](const std::string& label, uint64_t bytes, const std::string& extra) {
            for (uint32_t t = 0; t < T && E > 1 && D / E > 1; ++t)
            {
                for (uint32_t k = 0; k < E; ++k)
                {
                    line(rankList(dpRanks(st, t, k, E, D / E)),
                         label + " allreduce bytes=" + FormatBytes(bytes) + " group=xdp_s" +
                             std::to_string(st) + "_t" + std::to_string(t) + "_k" +
                             std::to_string(k) + extra);
                }
            }
        };
        const bool scatter = c.pipelineScatterGather && T > 1 && !c.sequenceParallel;
        const std::string p2pBytes =
            scatter ? FormatBytes(static_cast<uint64_t>(b * s * h) * c.dtypeBytes / T) : actBytes;
        auto p2p = [&](const std::string& label, bool send, uint32_t peerStage) {
            for (uint32_t d = 0; d < D; ++d)
            {
                for (uint32_t t = 0; t < T; ++t)
                {
                    line(std::to_string(RankOf(st, d, t)),
                         label + (send ? " send to=" : " recv from=") +
                             std::to_string(RankOf(peerStage, d, t)) + " bytes=" + p2pBytes);
                }
            }
            if (scatter && !send)
            {
                tpColl(label + "g", "allgather"); // the TP group rebuilds the whole tensor
            }
        };
        // One layer; labels are name + sfx ("" inside a layer repeat, ".<l>" unrolled).
        auto layer = [&](bool fwd, const std::string& pre, const std::string& sfx) {
            const std::string f = pre + (fwd ? "f" : "b");
            const double k = fwd ? 1 : 2; // backward = 2 x forward FLOPs
            std::string gate;
            if (zero3 && D > 1)
            {
                dpColl(f + "pg" + sfx, "allgather", layerDenseBytes, " stream=1");
                gate = " after=" + f + "pg" + sfx;
            }
            auto tpIn = [&](const std::string& n) {
                if (c.sequenceParallel)
                {
                    tpColl(f + "ag" + n + sfx, "allgather");
                }
            };
            auto tpOut = [&](const std::string& n) {
                tpColl(f + (c.sequenceParallel ? "rs" : "ar") + n + sfx,
                       c.sequenceParallel ? "reducescatter" : "allreduce");
            };
            auto attn = [&]() {
                tpIn("1");
                compute(f + "a" + sfx, k * attnFlops, gate);
                tpOut("1");
            };
            auto mlp = [&]() {
                tpIn("2");
                if (c.experts)
                {
                    epColl(f + "x1" + sfx); // dispatch tokens to their experts
                }
                compute(f + "m" + sfx, k * mlpFlops, fwd ? "" : gate);
                if (c.experts)
                {
                    epColl(f + "x2" + sfx); // combine
                }
                tpOut("2");
            };
            if (fwd)
            {
                attn();
                mlp();
            }
            else
            {
                mlp(); // backward runs MLP first: the parameter gather gates it

                gate.clear();
                attn();
            }
        };
        auto fwdBlock = [&]() {
            if (st > 0)
            {
                p2p("act" + std::to_string(st - 1), false, st - 1);
            }
            open("repeat " + std::to_string(Ls));
            layer(true, "", "");
            close();
            if (st == P - 1)
            {
                compute("logit", logitFlops, "");
            }
            else
            {
                p2p("act" + std::to_string(st), true, st + 1);
            }
        };
        auto bwdBlock = [&]() {
            if (st == P - 1)
            {
                compute("blogit", 2 * logitFlops, "");
            }
            else
            {
                p2p("grd" + std::to_string(st), false, st + 1);
            }
            open("repeat " + std::to_string(Ls));
            layer(false, "", "");
            close();
            if (st > 0)
            {
                p2p("grd" + std::to_string(st - 1), true, st - 1);
            }
        };
        // The last micro-batch's backward, unrolled so that gradient buckets can
        // start as soon as their layers are done (stream 1, after= the layer).
        auto lastBackward = [&]() {
            std::vector<std::pair<std::string, uint64_t>> buckets; // (label, bytes)
            uint64_t pending = 0;
            int bucket = 0;
            const std::string gradOp = c.zero == 0 ? "allreduce" : "reducescatter";
            const std::string gradLabel = c.zero == 0 ? "dpb" : "zrs";
            auto grads = [&](uint64_t bytes, const std::string& after, bool flush) {
                pending += bytes;
                if (D > 1 && pending > 0 && (pending >= c.bucketBytes || flush))
                {
                    const std::string label = gradLabel + std::to_string(bucket++);
                    dpColl(label, gradOp, pending, " stream=1 after=" + after);
                    buckets.emplace_back(label, pending);
                    pending = 0;
                }
            };
            if (st == P - 1)
            {
                compute("lblogit", 2 * logitFlops, "");
                if (P > 1)
                {
                    grads(embedBytes, "lblogit", false);
                }
            }
            else
            {
                p2p("lgrd" + std::to_string(st), false, st + 1);
            }
            for (uint32_t l = Ls; l-- > 0;)
            {
                const std::string sfx = "." + std::to_string(l);
                layer(false, "l", sfx);
                if (layerExpertBytes)
                {
                    xdpColl("lxar" + sfx, layerExpertBytes, " stream=1 after=lba" + sfx);
                }
                grads(layerDenseBytes + (st == 0 && l == 0 ? embedBytes : 0), "lba" + sfx, l == 0);
            }
            if (st > 0)
            {
                p2p("lgrd" + std::to_string(st - 1), true, st - 1);
            }
            // Optimizer step once all gradients are reduced (stream 1 runs in order).
            const double optFlops = 10.0 * DenseParamsPerRank(st) / (c.zero ? D : 1);
            compute("opt", optFlops, buckets.empty() ? "" : " after=" + buckets.back().first);
            if (c.zero == 1 && D > 1)
            {
                for (size_t k = 0; k < buckets.size(); ++k)
                {
                    dpColl("zag" + std::to_string(k),
                           "allgather",
                           buckets[k].second,
                           " stream=1" + std::string(k == 0 ? " after=opt" : ""));
                }
                compute("step", 0, " after=zag" + std::to_string(buckets.size() - 1));
            }
        };

        os << "\n# stage " << st << ": ranks " << all << "\n";
        if (c.iterations > 1)
        {
            open("repeat " + std::to_string(c.iterations));
        }
        if (c.loadBytes && st == 0)
        {
            line(all, "in load bytes=" + FormatBytes(c.loadBytes)); // stream 0: gates the forward
        }
        auto fwdLoop = [&](uint32_t count, uint32_t start) {
            if (count > 0)
            {
                open("repeat " + std::to_string(count) + " start=" + std::to_string(start));
                fwdBlock();
                close();
            }
        };
        auto bwdLoop = [&](uint32_t count, uint32_t start) {
            if (count > 0)
            {
                open("repeat " + std::to_string(count) + " start=" + std::to_string(start));
                bwdBlock();
                close();
            }
        };
        if (m_schedule == PipelineSchedule::GPipe)
        {
            fwdLoop(m, 0);
            bwdLoop(m - 1, 0);
        }
        else
        {
            // 1F1B: warm-up forwards, then pairs F(w+i), B(i), then cool-down backwards.
            const uint32_t w = std::min(P - 1 - st, m);
            fwdLoop(w, 0);
            const uint32_t pairs = w == 0 ? m - 1 : m - w;
            if (pairs > 0)
            {
                open("repeat " + std::to_string(pairs) + " start=" + std::to_string(w));
                fwdBlock();
                if (w > 0)
                {
                    open("shift -" + std::to_string(w)); // label the backward by its micro-batch
                }
                bwdBlock();
                if (w > 0)
                {
                    close();
                }
                close();
            }
            if (w == 0)
            {
                fwdLoop(1, m - 1);
            }
            else
            {
                bwdLoop(w - 1, m - w);
            }
        }
        lastBackward();
        if (c.checkpointBytes)
        {
            line(all, "ck checkpoint bytes=" + FormatBytes(c.checkpointBytes)); // after the step
        }
        if (c.iterations > 1)
        {
            close();
        }
    }
    return os.str();
}

WorkloadTrace
TransformerTraceGenerator::GenerateTrace() const
{
    return NativeTraceParser::ParseString(Generate(), "trace-gen");
}

} // namespace ns3
