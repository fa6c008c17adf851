/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRACE_SIMAI_H
#define AI_FABRIC_TRACE_SIMAI_H

#include "ns3/workload-trace.h"

#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/// Which communicator a SimAI collective names by its suffix.
enum class SimAiGroupKind : uint8_t
{
    None, ///< no suffix: the phase's group (model group for fwd/ig, data group for wg)
    Ep,   ///< "_EP" suffix
    DpEp, ///< "_DP_EP" suffix: expert-data-parallel group
};

struct SimAiCollective
{
    WorkloadOpKind kind = WorkloadOpKind::AllReduce;
    bool present = false; ///< false for NONE and for size 0: no communication
    SimAiGroupKind group = SimAiGroupKind::None;
    uint64_t bytes = 0;
};

/// One row of a layer-wise workload file; times as written (ticks).
struct SimAiLayer
{
    std::string name;
    int64_t reserved = -1;
    uint64_t fwdCompute = 0;
    SimAiCollective fwdComm;
    uint64_t igCompute = 0;
    SimAiCollective igComm;
    uint64_t wgCompute = 0;
    SimAiCollective wgComm;
    uint64_t updateTime = 0;
    std::string policy; ///< HYBRID_CUSTOMIZED: the 13th column (this layer's parallelism)
    uint32_t line = 0;
};

/// A whole SimAI / ASTRA-sim 1.0 workload file before conversion.
struct SimAiWorkload
{
    std::string parallelism;         ///< DATA, MODEL, HYBRID_TRANSFORMER, ...
    uint32_t modelParallelGroup = 0; ///< model_parallel_NPU_group; 0 when not written
    uint32_t ep = 1;
    uint32_t pp = 1;
    uint32_t vpp = 1;
    uint32_t ga = 1;
    uint32_t allGpus = 0; ///< 0 when the header does not say
    uint64_t ppCommBytes = 0;
    int64_t dlrmLastBottomLayer = -1;          ///< HYBRID_DLRM: last bottom-MLP layer
    std::vector<uint32_t> checkpoints;         ///< FWD_IN_BCKWD: layers whose input is kept
    std::vector<uint32_t> checkpointInitiates; ///< FWD_IN_BCKWD: layers that recompute
    std::vector<SimAiLayer> layers;
    /// (line, text): accepted input that SimAI would only warn about, one per kind.
    std::vector<std::pair<uint32_t, std::string>> warnings;
};

struct SimAiImportOptions
{
    uint32_t ranks = 0;     ///< 0: all_gpus from the header (required then)
    double nsPerTick = 1.0; ///< SimAI ticks are ns; ASTRA-sim 1.0 cycles at 1 GHz
    uint32_t passes = 1;    ///< training iterations (ASTRA-sim "num-passes")
    /// Ranks in ASTRA-sim's first network dimension, for HYBRID_DATA_MODEL,
    /// HYBRID_MODEL_DATA and HYBRID_CUSTOMIZED files whose header gives no
    /// model_parallel_NPU_group (ASTRA-sim takes it from the network file).  0: none.
    uint32_t firstDimension = 0;
};

/**
 * \ingroup ai-fabric
 * Importer of SimAI / AICB and ASTRA-sim 1.0 layer-wise workload files
 * (doc/workload.md).  trace-simai.cc reads the text; trace-astrasim.cc turns it
 * into per-rank programs with ASTRA-sim's training loops, SimAI's groups and the
 * pipeline that SimAI derives from pp, pp_comm, vpp and ga.
 */
class SimAiWorkloadImporter
{
  public:
    static SimAiWorkload ParseFile(const std::string& path);
    static SimAiWorkload ParseString(const std::string& text, const std::string& sourceName);
    static WorkloadTrace ToTrace(const SimAiWorkload& workload,
                                 const SimAiImportOptions& options,
                                 const std::string& sourceName);
    static WorkloadTrace ImportFile(const std::string& path, const SimAiImportOptions& options);
};

} // namespace ns3

#endif
