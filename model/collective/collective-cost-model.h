/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_COLLECTIVE_COST_MODEL_H
#define AI_FABRIC_COLLECTIVE_COST_MODEL_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Alpha-beta reference costs of the collectives (seconds), p ranks, n bytes
 * (nccl-tests' size): the published alpha-beta formulas (Thakur, Rabenseifner
 * and Gropp 2005; nccl-tests' PERFORMANCE.md) plus the pipelined ones the engine
 * actually runs (doc/collectives.md).  α is the cost of one message apart from
 * its bytes, β the wire time of one payload byte.
 */
class CollectiveCostModel
{
  public:
    CollectiveCostModel(double alphaSeconds, double betaSecondsPerByte);

    /**
     * α and β of a message crossing \p hops links of \p rate through hops-1
     * switches: β = 1 / (rate × efficiency × payload/wire bytes); α = software
     * latency + hops × propagation + (hops-1) × (switch latency + the
     * serialisation of one full packet, store-and-forward, or of the first
     * \p cutThroughBytes when the switches forward cut-through).
     */
    static CollectiveCostModel FromLink(DataRate signallingRate,
                                        double encodingEfficiency,
                                        uint32_t payloadBytesPerPacket,
                                        uint32_t overheadBytesPerPacket,
                                        Time softwareLatency,
                                        uint32_t hops,
                                        Time propagationPerHop,
                                        Time switchLatency,
                                        uint32_t cutThroughBytes = 0);

    double Alpha() const;
    double Beta() const;

    /// 2(p−1)α + 2((p−1)/p)nβ
    double RingAllReduce(uint32_t p, double n) const;
    /// (p−1)α + ((p−1)/p)nβ; n = whole buffer
    double RingAllGather(uint32_t p, double n) const;
    double RingReduceScatter(uint32_t p, double n) const;
    /// 2·log2(p)·α + 2((p−1)/p)nβ for p = 2^k; otherwise Rabenseifner's extra
    /// pre/post exchange of the whole buffer, + 2(α + nβ), on the largest power of two.
    double HalvingDoublingAllReduce(uint32_t p, double n) const;
    /// Fact sheet's unpipelined reduce + broadcast binary tree: 2·log2(p)(α + nβ).
    double TreeAllReduce(uint32_t p, double n) const;
    /**
     * Pipelined double binary tree (each tree n/2 in chunks of c, depth D): an
     * interior rank injects 4c per chunk pair (c up + 2c down in its interior
     * tree, c up as a leaf of the other), so steady state costs 2nβ.  The first
     * chunk crosses 2D levels, each while the sending rank already shares its link
     * with one other flow (its other tree's, or its second child): 2D(α + 2cβ), less
     * the 4cβ of that chunk pair the steady-state term already counts.  c is the
     * chunk the engine uses (TreeChunkBytes).
     */
    double DoubleBinaryTreeAllReduce(uint32_t depth, double n, double chunkBytes) const;
    /// (p−1)(α + (n/p)β): every rank at its injection limit.
    double AllToAll(uint32_t p, double n) const;
    /// Pipelined chain of K = ceil(n/c) chunks: (p−1)(α + cβ) + (K−1)cβ — the later
    /// chunks queue behind the first, so their α overlaps the link's busy time.
    double ChainBroadcast(uint32_t p, double n, double chunkBytes) const;
    /**
     * Reduce-scatter in each domain of L ranks (intra), ring allreduce of n/L
     * across D domains per rail (inter), allgather in each domain (intra).
     */
    static double HierarchicalAllReduce(const CollectiveCostModel& intra,
                                        const CollectiveCostModel& inter,
                                        uint32_t ranksPerDomain,
                                        uint32_t numDomains,
                                        double n);

    /**
     * HierarchicalAllReduce pipelined in slices of \p sliceBytes.  The two intra-domain
     * phases load the same links of every rank, so their times add (T_intra = reduce-scatter
     * + all-gather of n); the network phase (T_inter, allreduce of n/L per rail) runs beside
     * them on the HCAs, bracketed by one slice of the intra phases (the first slice's
     * reduce-scatter before it can start, the last slice's all-gather after it ended).  With
     * K = ceil(n / sliceBytes): max(T_intra(n), T_inter(n) + T_intra(n/K)).  When T_intra is
     * the larger, the network phase of a slice hides behind the intra phases of others.
     */
    static double PipelinedHierarchicalAllReduce(const CollectiveCostModel& intra,
                                                 const CollectiveCostModel& inter,
                                                 uint32_t ranksPerDomain,
                                                 uint32_t numDomains,
                                                 double n,
                                                 double sliceBytes);
    /**
     * Ring allreduce of p ranks in domains of L ranks, one ring per channel (C channels, each
     * n/C of the buffer), with the rings' domain crossings rotated over the L local indices
     * (CollectiveBuild::RingsAcrossDomains).  Every hop of channel c carries 2((p−1)/p)(n/C);
     * a rank sends the crossing of at most ceil(C/L) channels on its HCA and the intra-domain
     * hop of the others (at most C − floor(C/L)) on NVLink, both at
     * once: 2((p−1)/p)(n/C)·max(ceil(C/L)β_inter, (C − floor(C/L))β_intra), plus the first
     * chunk's 2(p−1) hops, D of every p of them between domains.  C = 1 is today's single
     * ring: every byte crosses on one HCA.
     */
    static double RingAllReduceAcrossDomains(const CollectiveCostModel& intra,
                                             const CollectiveCostModel& inter,
                                             uint32_t p,
                                             uint32_t ranksPerDomain,
                                             uint32_t numChannels,
                                             double n);

  private:
    double m_alpha;
    double m_beta;
};

} // namespace ns3

#endif
