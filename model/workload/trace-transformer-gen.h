/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRACE_TRANSFORMER_GEN_H
#define AI_FABRIC_TRACE_TRANSFORMER_GEN_H

#include "ns3/workload-trace.h"

#include <string>

namespace ns3
{

class CommandLine;
class RunParameters;

/// A GPT-style transformer and its parallel layout (flags of scenarios/trace-gen).
struct TransformerTraceConfig
{
    uint32_t layers = 24;
    uint32_t hidden = 2048;
    uint32_t seq = 2048;
    uint32_t vocab = 51200;
    /// MLP inner size; 0: GPT's 4 x hidden.
    uint32_t ffn = 0;
    /// SwiGLU MLP (Llama): three hidden x ffn matrices instead of two.
    bool gatedMlp = false;
    /// Attention heads and key/value heads (grouped-query attention: the K and V projections
    /// are hidden x hidden x kvHeads / heads); 0: as many key/value heads as heads.
    uint32_t heads = 0;
    uint32_t kvHeads = 0;
    uint32_t microBatch = 1;  ///< sequences per micro-batch
    uint32_t globalBatch = 8; ///< sequences per iteration
    uint32_t dtypeBytes = 2;
    uint32_t experts = 0; ///< 0: dense MLP; else every layer's MLP is MoE
    uint32_t topk = 2;
    uint32_t tp = 1;
    uint32_t pp = 1;
    uint32_t dp = 1;
    uint32_t ep = 1;               ///< divides dp; experts sharded over ep DP ranks
    std::string schedule = "1f1b"; ///< or "gpipe"
    uint32_t microBatches = 0;     ///< 0: globalBatch / (microBatch * dp)
    uint32_t zero = 0;             ///< 0, 1 or 3
    bool sequenceParallel = false;
    /// Megatron's scatter-gather of pipeline tensors (without SP): each TP rank sends 1/tp of
    /// an activation or gradient, the receiving stage all-gathers it over its TP group.
    bool pipelineScatterGather = false;
    std::string gpu = "H100";
    double efficiency = 0.5; ///< achieved fraction of peak dense BF16
    uint32_t iterations = 1;
    std::string mapping = "tp-inner";   ///< or "dp-inner"
    uint64_t bucketBytes = 25ULL << 20; ///< DP gradient bucket (PyTorch DDP default 25 MiB)
    /// Per first-stage rank and iteration: the input batch, a `load` from storage0 (front-end,
    /// then PCIe) before the iteration's first forward; 0: none.
    uint64_t loadBytes = 0;
    /// Per rank and iteration: a synchronous `checkpoint` to storage0 after the optimizer step
    /// (e.g. the training state / the checkpoint interval, amortised); 0: none.
    uint64_t checkpointBytes = 0;

    /// --layers --hidden --seq --vocab --microBatch --microBatches --schedule --efficiency
    /// --iterations, the model flags the study scenarios share (they set tp, pp and dp).
    void AddModelArguments(CommandLine& cmd);
    /// dp = \p ranks / (tp x pp) and the global batch of microBatches (at least one) per DP
    /// rank; throws WorkloadError (field "pp") when tp x pp does not divide \p ranks.
    void FitDp(uint32_t ranks);
    /// IterationMarker for WorkloadReplay: an iteration ends with its checkpoint when there
    /// is one ("ck*"), else with the optimizer step ("opt*").
    std::string IterationMarker() const;
    /// Every field, under its own name.
    void AddToRunParameters(RunParameters& params) const;
    /// A Llama-70B-like model (Meta Llama 3 70B's published configuration: 80 layers,
    /// hidden 8192, 64 heads with 8 key/value heads, SwiGLU FFN 28672, vocabulary 128256,
    /// context 8192) under TP \p tp x PP \p pp x DP \p dp, one micro-batch of one sequence
    /// of 8192 tokens, \p microBatches per pipeline, sequence parallelism and ZeRO-1 with
    /// 400 MiB buckets; dense BF16 on H100 at 50 % of peak.
    static TransformerTraceConfig Llama70b(uint32_t tp,
                                           uint32_t pp,
                                           uint32_t dp,
                                           uint32_t microBatches);
};

enum class PipelineSchedule : uint8_t
{
    OneFOneB, ///< "1f1b"
    GPipe,    ///< "gpipe"
};

enum class RankMapping : uint8_t
{
    TpInner, ///< "tp-inner": rank = (stage * dp + d) * tp + t
    DpInner, ///< "dp-inner": rank = (stage * tp + t) * dp + d
};

/// "1f1b" or "gpipe"; false for anything else.
bool ParsePipelineSchedule(const std::string& text, PipelineSchedule* schedule);
/// "tp-inner" or "dp-inner"; false for anything else.
bool ParseRankMapping(const std::string& text, RankMapping* mapping);

/**
 * \ingroup ai-fabric
 * Writes the native trace of a transformer training job: TP collectives per
 * layer, pipeline send/recv in 1F1B or GPipe order, DP gradient buckets
 * overlapped with the last micro-batch's backward, ZeRO-1/3 collectives, MoE
 * all-to-alls.  Compute time = FLOPs / (GPU peak x efficiency).
 *
 * Rank layout, tp-inner: rank = (stage * dp + d) * tp + t (TP groups are
 * consecutive ranks, inside one NVLink domain); dp-inner: rank = (stage * tp + t) * dp + d.
 */
class TransformerTraceGenerator
{
  public:
    explicit TransformerTraceGenerator(TransformerTraceConfig config);

    /// Throws WorkloadError naming the offending flag.
    void Validate() const;
    std::string Generate() const;
    WorkloadTrace GenerateTrace() const;

    uint32_t GetMicroBatches() const;
    uint32_t RankOf(uint32_t stage, uint32_t d, uint32_t t) const;
    /// Parameters whose gradients stage \p stage's ranks reduce over DP (per rank).
    uint64_t DenseParamsPerRank(uint32_t stage) const;
    /// Peak dense BF16 FLOP/s of a --gpu preset; false if unknown.
    static bool GpuPeakFlops(const std::string& gpu, double* flops);

  private:
    uint64_t FfnDim() const;
    /// Width of the K and V projections: hidden x kvHeads / heads.
    uint64_t KvDim() const;
    uint32_t MlpMatrices() const;
    /// Per layer, before the TP split.
    uint64_t AttentionParams() const;
    uint64_t MlpParams() const;

    TransformerTraceConfig m_c;
    // The config's schedule and mapping text, read once; Validate refuses them when unknown.
    bool m_scheduleKnown{false};
    PipelineSchedule m_schedule{PipelineSchedule::OneFOneB};
    bool m_mappingKnown{false};
    RankMapping m_mapping{RankMapping::TpInner};
};

} // namespace ns3

#endif
