/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRACE_SIMAI_H
#define AI_FABRIC_TRACE_SIMAI_H

#include "ns3/workload-trace.h"

#include <string>
#include <vector>

namespace ns3
{

/// Which communicator a SimAI collective runs on.
enum class SimAiGroupKind : uint8_t
{
    None,
    Tp,   ///< model-parallel group (fwd/ig collectives without suffix)
    Dp,   ///< data-parallel group (wg collectives without suffix)
    Ep,   ///< "_EP" suffix
    DpEp, ///< "_DP_EP" suffix: expert-data-parallel group
    All,  ///< every rank (DATA wg, MODEL fwd/ig)
};

struct SimAiCollective
{
    WorkloadOpKind kind = WorkloadOpKind::AllReduce;
    bool present = false; ///< false for NONE
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
    uint32_t line = 0;
};

/// A whole SimAI / ASTRA-sim 1.0 workload file before conversion.
struct SimAiWorkload
{
    std::string parallelism;         ///< DATA, MODEL, HYBRID_TRANSFORMER, ...
    uint32_t modelParallelGroup = 1; ///< model_parallel_NPU_group (TP size)
    uint32_t ep = 1;
    uint32_t pp = 1;
    uint32_t vpp = 1;
    uint32_t ga = 1;
    uint32_t allGpus = 0; ///< 0 when the header does not say
    uint64_t ppCommBytes = 0;
    std::vector<SimAiLayer> layers;
};

struct SimAiImportOptions
{
    uint32_t ranks = 0;     ///< 0: all_gpus from the header (required then)
    double nsPerTick = 1.0; ///< SimAI ticks are ns; ASTRA-sim 1.0 cycles at 1 GHz
    uint32_t passes = 1;    ///< training iterations (ASTRA-sim "num-passes")
};

/**
 * \ingroup ai-fabric
 * Importer of SimAI / ASTRA-sim 1.0 layer-wise workload files (doc/workload.md
 * lists the supported subset).  Rank layout: TP innermost, then DP, PP outermost
 * (Megatron's order); EP groups are blocks of ep consecutive DP indices.
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
