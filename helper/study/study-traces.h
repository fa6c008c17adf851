/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_STUDY_TRACES_H
#define AI_FABRIC_STUDY_TRACES_H

#include "ns3/cluster-config.h"

#include <cstdint>
#include <string>

namespace ns3
{

/// Expert-parallel MoE layers (scenarios/moe-alltoall): EP ranks, one expert group.
struct MoeAllToAllConfig
{
    uint32_t ep{72};
    uint32_t layers{1};
    uint32_t iterations{1};
    uint64_t tokens{512}; ///< tokens per GPU and micro-batch
    uint32_t hidden{4096};
    uint32_t topk{2};
    uint32_t dtypeBytes{2};
    double gpuTflops{989}; ///< dense BF16 peak (H100 SXM datasheet)
    double efficiency{0.5};

    /// Each rank's all-to-all send buffer: tokens x hidden x dtype x top-k (every token
    /// goes to k experts); tokens x hidden x dtype x top-k / EP per peer.
    uint64_t AllToAllBytes() const;
    /// Expert MLP forward per rank: tokens x top-k x 16 h^2 FLOPs (GPT's 4h MLP).
    uint64_t ExpertForwardNs() const;
    /**
     * Native trace: per layer, forward dispatch all-to-all, expert compute, combine
     * all-to-all; backward combine-gradient all-to-all, expert compute (2x), dispatch-
     * gradient all-to-all (4 all-to-alls per layer and iteration, group ep0, labels
     * disp/comb/bcomb/bdisp<layer>).  Iteration marker: "bdisp0.*".
     */
    std::string Trace() const;
};

/**
 * Alpha-beta figure of one direct all-to-all of \p bytes per rank over \p ep ranks on
 * \p config (ranks 0..ep-1 in the cluster's order): every peer's message is posted at
 * once, so the time is the slower plane's bytes over its per-GPU payload bandwidth,
 * plus \p alphaNs.  NVLink payload: 256 of every 272 wire bytes (doc/nvlink.md);
 * InfiniBand: 4096 of 4122 (MTU 4096 with LRH, BTH, ICRC, VCRC).
 */
double MoeAllToAllModelNs(const ClusterConfig& config,
                          uint32_t ep,
                          uint64_t bytes,
                          double alphaNs = 0);

/// Data-parallel training with front-end traffic (scenarios/frontend-interference).
struct FrontEndJobConfig
{
    uint32_t ranks{8};
    uint32_t iterations{2};
    uint64_t forwardNs{1000000};
    uint64_t backwardNs{2000000};
    uint64_t optimizerNs{200000};
    uint64_t gradientBytes{64ull << 20};
    uint64_t loadBytes{0};       ///< per GPU and iteration; 0: no data loading
    uint64_t checkpointBytes{0}; ///< per GPU and iteration; 0: no checkpoint
    bool syncCheckpoint{true};

    /**
     * Native trace: iteration i = fwd<i> (after in<i> when loading), bwd<i>, allreduce
     * grad<i> over all ranks, opt<i>.  Batch i+1 (in<i+1>, stream 2) is fetched once
     * fwd<i> has consumed batch i (double buffering).  Checkpoint ck<i> after opt<i>:
     * synchronous on the training stream (fwd<i+1> waits), else on stream 3.
     * Iteration marker: "opt*".
     */
    std::string Trace() const;
};

} // namespace ns3

#endif
