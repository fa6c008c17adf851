/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NCCL_ENDPOINT_H
#define AI_FABRIC_NCCL_ENDPOINT_H

#include "ns3/collective-kind.h"
#include "ns3/nccl-protocol.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// What the tuner knows of one call and of the fabric under it.
struct NcclTuneInput
{
    CollectiveKind kind{CollectiveKind::AllReduce};
    uint32_t ranks{0};
    uint32_t nodes{1}; //!< NVLink domains the group spans (NCCL's nNodes)
    uint64_t bytes{0};
    double intra_gbyte_per_s{0}; //!< per rank, inside a domain (NVLink), per direction
    double inter_gbyte_per_s{0}; //!< per rank, across domains (its NIC), per direction
    /// Algorithms the engine can run for this call on this fabric (NCCL's "supported").
    std::vector<CollectiveAlgorithm> runnable;
    bool multiRailRings{false};        //!< rings cross domains on every rail (one per channel)
    bool pipelinedHierarchical{false}; //!< hierarchical phases overlap (max, not sum)
};

/// The tuner's decision, with the time it predicted.
struct NcclChoice
{
    CollectiveAlgorithm algorithm{CollectiveAlgorithm::Ring};
    NcclProtocolId protocol{NcclProtocolId::Simple};
    uint32_t channels{1};
    double predicted_us{0};
};

/**
 * \ingroup ai-fabric
 * The GPU/NCCL endpoint of the collective engine: the three protocols' costs, the
 * channel counts, the NVLS latency, and NCCL's tuner, which predicts each (algorithm,
 * protocol) time as latency + bytes / bandwidth (src/graph/tuning.cc,
 * ncclTopoTuneModel and ncclTopoGetAlgoTime) and takes the fastest, then drops
 * channels for small buffers (src/enqueue.cc, the thread-threshold loop).  The
 * overrides users set on real systems are attributes with NCCL's syntax: Algorithms
 * (NCCL_ALGO, e.g. "ring,tree", "^nvls", "allreduce:tree;broadcast:ring"), Protocols
 * (NCCL_PROTO), NvlsEnable (NCCL_NVLS_ENABLE), CollNetEnable (NCCL_COLLNET_ENABLE),
 * MinChannels (NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS) and MaxChannels (the search's channels,
 * lowered by NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS).
 *
 * The bandwidths the tuner uses are the fabric's own (TransportPlane rank rates), so a
 * prediction is NCCL's formula over this simulator's links; the simulated time comes
 * from running the chosen schedule with the protocol's costs (CollectiveEngine).
 * Without an endpoint the engine is the physics-only ("ideal") model.
 */
class NcclEndpoint : public Object
{
  public:
    /// NCCL_MAX_NVLS_ARITY (src/include/device.h): NVLS heads of a graph, and the local ranks
    /// up to which NCCL weighs NVLS for allgather and reducescatter.
    static constexpr uint32_t MAX_NVLS_ARITY = 32;
    /// Warps of a point-to-point kernel's block: NCCL_MAX_NTHREADS = 640 threads
    /// (src/include/device.h; src/enqueue.cc gives p2p plans that many).
    static constexpr uint32_t P2P_WARPS = 20;
    /**
     * Warps of one send of a p2p channel that runs \p works works (src/device/sendrecv.h:
     * nWarpPerWork = P2P_WARPS / works, split between the work's receive and send, the send
     * one warp more from five on): 10 of 20 for one work.
     */
    static uint32_t P2pSendWarps(uint32_t works);

    static TypeId GetTypeId();
    NcclEndpoint();

    Ptr<NcclProtocol> GetProtocol(NcclProtocolId id) const;
    /// NCCL's collective algorithms in its order, with its names (NCCL_ALGO's, its tuner
    /// table's): Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT.
    static const std::vector<std::pair<CollectiveAlgorithm, std::string>>& NcclAlgorithms();
    /// NCCL's tuned collectives in its order, with its names (ncclFuncStr): Broadcast,
    /// Reduce, AllGather, ReduceScatter, AllReduce.
    static const std::vector<std::pair<CollectiveKind, std::string>>& NcclFunctions();
    /// NCCL's protocols in its order, with its names: LL, LL128, Simple.
    static const std::vector<std::pair<NcclProtocolId, std::string>>& NcclProtocols();
    /// The ring/tree channels of a communicator over \p nodes nodes (NVLink domains) with
    /// \p ppn ranks on each: MaxChannels on one; across nodes the search's rings over the
    /// NICs of those GPUs and, where known (> 0), within each GPU's \p nvlink_gbyte_per_s, at
    /// most MaxChannelsAcrossNodes; raised to MinChannels.
    uint32_t GetMaxChannels(uint32_t nodes = 1,
                            uint32_t ppn = 1,
                            double nvlink_gbyte_per_s = 0) const;
    /// NCCL's ring search across nodes (src/graph/search.cc) for \p ppn GPUs a node of \p
    /// nvlink_gbyte_per_s each: its rings and their speed before they are doubled (the
    /// graph's bandwidth is their product).
    std::pair<uint32_t, double> NetRingSearch(uint32_t ppn, double nvlink_gbyte_per_s) const;
    /// GetMaxChannels for the communicator \p in describes.
    uint32_t GetMaxChannels(const NcclTuneInput& in) const;
    /// NVLS channels of a communicator over \p nodes nodes (NVLink domains).
    uint32_t GetNvlsChannels(uint32_t nodes = 1) const;
    Time GetNvlsLatency() const;
    /// The network part of an NVLS allreduce across nodes (NVLS with CollNet).
    Time GetNvlsNetLatency() const;
    /// One network step of NVLSTree (NCCL hwLatencies NET NVLSTree Simple).
    Time GetNvlsTreeNetLatency() const;
    /**
     * What a CollNet or PAT run waits before its first step: CollNet its network latency
     * (NCCL's interLat, hwLatencies NET CollNetDirect / CollNetChain; with one rank per
     * node the tree's network latency), PAT its base latency plus its per-rank part.
     */
    Time GetStartLatency(CollectiveAlgorithm algorithm, uint32_t ranks, uint32_t nodes) const;
    /// One step of CollNet (NVLink: hwLatencies NVLINK CollNet*) or PAT (network: the
    /// tree's network latency / 3.5), per message.
    Time GetStepLatency(CollectiveAlgorithm algorithm, bool network) const;
    /// GPU generation the parameters describe ("h100", ...; "custom" if set by hand).
    std::string GetGeneration() const;
    /// Host time to issue one GPU's collective (enqueue and kernel launch).
    Time GetHostLaunchTime() const;
    /// CPU time the network proxy spends on one step of one channel (NetProxyStepTime).
    Time GetNetProxyStepTime() const;
    /**
     * What one step of one NCCL channel keeps the network proxy busy in \p algorithm and
     * \p protocol: NetProxyStepTime, x SimpleRingProxyFactor for a Simple ring (or the
     * hierarchical allreduce's rail rings).  Charged to rings, the hierarchical allreduce and
     * NVLSTree; 0 for the others (tree, CollNet, PAT, point-to-point).
     */
    Time ProxyStepTime(CollectiveAlgorithm algorithm, NcclProtocolId protocol) const;
    /**
     * The same as the simulation charges it for a ring over \p in (and the tuner with
     * TunerProxyPerChannel): the steps of all channels that cross the network at one GPU go
     * through that GPU's one proxy thread, so one ring step costs at least NetProxyStepTime
     * x (channels / GPUs the channels cross at).  µs; 0 on one node.
     */
    double RingProxyStep_us(const NcclTuneInput& in, NcclProtocolId protocol) const;

    /**
     * Time per iteration of a timing loop as nccl-tests runs it: one host thread issues
     * \p iterations collectives of duration \p collective on each of its \p gpusPerThread
     * GPUs, launch after launch, then waits for all of them; a launch on \p channels
     * channels takes HostIssueTime(channels).  The GPUs queue the
     * iterations, so the loop is bound by the host (gpusPerThread x HostIssueTime per
     * iteration) or by the collective, whichever is slower, plus the other's share once.
     */
    Time LoopIterationTime(Time collective,
                           uint32_t gpusPerThread,
                           uint32_t iterations,
                           uint32_t channels = 1) const;
    /// Host time to issue one GPU's collective on \p channels channels: HostLaunchTime plus
    /// HostChannelLaunchTime per channel beyond the first.
    Time HostIssueTime(uint32_t channels) const;

    /**
     * Refusals of the override attributes as NCCL would refuse them, naming the
     * environment variable: an unknown algorithm or protocol, a bad prefix.  "" when they
     * are valid.
     */
    std::string CheckOverrides() const;
    /// True when the overrides allow \p algorithm / \p protocol for \p kind.
    bool AlgorithmEnabled(CollectiveKind kind, CollectiveAlgorithm algorithm) const;
    bool ProtocolEnabled(CollectiveKind kind, NcclProtocolId protocol) const;
    /// NvlsEnable: 0 off, 1 on, 2 where the fabric supports it (NCCL's default).
    uint32_t GetNvlsEnable() const;
    bool GetCollNetEnable() const;

    /// NCCL's predicted time (µs) of \p algorithm in \p protocol for \p in; < 0 when the
    /// pair cannot run it (as NCCL's bandwidth 0).
    double PredictTime_us(const NcclTuneInput& in,
                          CollectiveAlgorithm algorithm,
                          NcclProtocolId protocol) const;
    /// The share of its bandwidth NCCL's tuner expects of \p algorithm in \p protocol.
    double TunerBandwidthFactor(CollectiveAlgorithm algorithm,
                                NcclProtocolId protocol,
                                CollectiveKind kind,
                                uint32_t nodes) const;
    /// NCCL's static factor on the tree allreduce's bandwidth for \p bytes (1 outside 64 B -
    /// 256 MiB).
    static double TreeCorrectionFactor(NcclProtocolId protocol, uint64_t bytes);
    /// Bus bandwidth (GB/s) the tuner assumes; 0 = cannot run.
    double PredictBusBandwidth_gbyte_per_s(const NcclTuneInput& in,
                                           CollectiveAlgorithm algorithm,
                                           NcclProtocolId protocol) const;
    /// The bandwidth (GB/s) the tuner divides the bytes by, before its tree correction:
    /// the bus bandwidth as algorithm bandwidth, NCCL's comm->bandwidths entry (what its
    /// tuner table prints).  0 = cannot run.
    double PredictAlgorithmBandwidth_gbyte_per_s(const NcclTuneInput& in,
                                                 CollectiveAlgorithm algorithm,
                                                 NcclProtocolId protocol) const;
    /// Latency (µs) the tuner assumes.
    double PredictLatency_us(const NcclTuneInput& in,
                             CollectiveAlgorithm algorithm,
                             NcclProtocolId protocol) const;
    /**
     * The fastest enabled (runnable algorithm, protocol), then its channels.  Throws
     * std::invalid_argument naming the override when none is left (NCCL: "no algorithm/
     * protocol available").
     */
    NcclChoice Choose(const NcclTuneInput& in) const;
    /// Channels NCCL runs \p bytes on: GetMaxChannels(nodes, ranks / nodes,
    /// nvlink_gbyte_per_s), one fewer while bytes < channels × threads × threshold (× ranks
    /// for ring LL), down to one; GetNvlsChannels(nodes) for NVLS and NVLSTree.
    uint32_t Channels(CollectiveAlgorithm algorithm,
                      NcclProtocolId protocol,
                      uint64_t bytes,
                      uint32_t ranks,
                      uint32_t nodes = 1,
                      double nvlink_gbyte_per_s = 0) const;

    /**
     * Channels the simulated schedule runs for NCCL's \p channels: at most
     * MaxSimulatedChannels, but never fewer than \p ranksPerDomain (so rings across
     * domains still leave each domain on every rail).  Each simulated channel stands for
     * channels / this of NCCL's, with their summed rate: fewer, larger messages.
     */
    uint32_t SimulatedChannels(CollectiveAlgorithm algorithm,
                               uint32_t channels,
                               uint32_t ranksPerDomain) const;
    /// NCCL's ring (and tree) graph inside one node over GPUs of \p nvlink_gbyte_per_s each
    /// (src/graph/search.cc): the rings x speed of the best search, the bandwidth its tuner
    /// weighs (H100 370.8 -> 6 rings at 60 = 360 GB/s).  0 when the rate is unknown.
    double IntraRingGraph_gbyte_per_s(double nvlink_gbyte_per_s) const;

    /// NCCL's NVLS graph inside one node of \p gpus GPUs (src/graph/search.cc): one channel
    /// per head, every GPU a head up to NCCL_MAX_NVLS_ARITY; its per-channel speed the
    /// fastest at which each GPU's NVLink carries every head's traffic and its own twice
    /// ((heads + 1) x speed); its network speed raised to twice that or the table's top.
    struct NvlsGraph
    {
        uint32_t heads{0};
        double bwIntra_gbyte_per_s{0};
        double bwInter_gbyte_per_s{0};
    };

    NvlsGraph IntraNvlsGraph(uint32_t gpus, double nvlink_gbyte_per_s) const;
    /// Per-rank GB/s of a ring over \p in's group: its NVLink rate inside one domain; across
    /// domains also the HCAs it crosses on (one per channel with multi-rail rings).
    double RingRate_gbyte_per_s(const NcclTuneInput& in) const;
    /**
     * GB/s one channel of \p algorithm moves at most: NCCL's ring graph gives each of the
     * call's \p channels an equal share of the ring's rate (search.cc nChannels x bwIntra,
     * connect.cc doubling the channels and halving the share).  Ring: RingRate; the
     * hierarchical allreduce's rings inside a domain and an alltoall's p2p channels inside
     * one domain (the communicator's channels): its NVLink rate; 0 for the others and when
     * the planes cannot tell their rates.
     */
    double RingChannelShare_gbyte_per_s(const NcclTuneInput& in,
                                        CollectiveAlgorithm algorithm,
                                        uint32_t channels) const;

    /// Whether a ring channel's loop ends with its local copy (RingFinalCopy).
    bool GetRingFinalCopy() const;
    /// Simple ring chunk and slice of one channel for a collective of \p kind, in protocol
    /// steps (ChunkBytes each): NCCL's per-collective CHUNKSTEPS and SLICESTEPS.
    uint32_t GetRingChunkSteps(CollectiveKind kind) const;
    uint32_t GetRingSliceSteps(CollectiveKind kind) const;
    /// Bytes of one point-to-point step over NVLink.
    uint64_t GetP2pChunkBytes() const;

    /// Which sends of an alltoall or sendrecv take NCCL's PXN relay (attribute Pxn).
    enum PxnMode
    {
        PXN_NEVER,       //!< none: a pair the sender's NIC does not reach is refused
        PXN_UNREACHABLE, //!< only where the sender's NIC does not reach the peer
        PXN_CROSS_RAIL,  //!< every peer on another server and rail (NCCL's PXN levels 1, 2)
    };

    /// The PXN mode (Pxn), the chunk a PXN relay forwards (PxnChunkBytes) and the most
    /// chunks of one relayed piece (PxnMaxChunks).
    PxnMode GetPxn() const;
    uint64_t GetPxnChunkBytes() const;
    uint32_t GetPxnMaxChunks() const;
    /**
     * Channels NCCL runs a point-to-point send of \p bytes to one peer on, inside one
     * NVLink domain of \p ranks ranks (src/enqueue.cc addP2pToPlan): from 4 on 8 ranks
     * of 32 channels up to P2pChannelsPerPeer for parts above 32 chunks.
     */
    uint32_t P2pChannels(uint64_t bytes, uint32_t ranks) const;
    /// NCCL's p2p channels inside one node: GetMaxChannels() rounded up to a power of two.
    uint32_t GetP2pChannelCount() const;
    /**
     * GB/s a rank takes NVLSTree's network messages at: NCCL's per-head cap
     * (NvlsTreeChannelBandwidth, perChMaxNVLSTreeBws), which the tuner sums as heads x cap
     * busbw, in algbw (x ranks / (2 (ranks - 1))) of a rank's 1/ppn share, shared by the
     * rank's channels, times what the double binary tree's busiest rank receives of its
     * share (TreeRailAllReduce: each tree carries half of it, once from each child and the
     * parent).  0 = no cap.
     */
    double NvlsTreeRailRate_gbyte_per_s(uint32_t ranks, uint32_t nodes) const;

    /// NCCL_ALGO's names for the engine's algorithms ("Ring", "Tree", "NVLS", "NVLSTree", ...).
    static std::string NcclAlgorithmNames();

  private:
    /// Parses an NCCL_ALGO / NCCL_PROTO list into enabled[kind][element]; "" on success.
    static std::string ParseList(const std::string& text,
                                 const std::string& variable,
                                 const std::vector<std::string>& elements,
                                 std::vector<std::vector<bool>>& enabled);

    Ptr<NcclProtocol> m_ll;
    Ptr<NcclProtocol> m_ll128;
    Ptr<NcclProtocol> m_simple;
    uint32_t m_minChannels;
    uint32_t m_maxChannels;
    uint32_t m_maxChannelsAcrossNodes;
    double m_netRing_gbyte_per_s;
    double m_nicPath_gbyte_per_s;
    uint32_t m_nvlsChannels;
    uint32_t m_nvlsChannelsAcrossNodes;
    uint32_t m_maxSimulatedChannels;
    Time m_nvlsLatency;
    Time m_nvlsTreeNetLatency;
    Time m_nvlsNetLatency;
    Time m_tunerNvlsTreeNetLatency;
    Time m_hostLaunchTime;
    Time m_hostChannelLaunchTime;
    Time m_netProxyStepTime;
    bool m_tunerProxyPerChannel;
    double m_simpleRingProxyFactor;
    double m_nvlsTreeChannel_gbyte_per_s;
    double m_nvlsTreeChannelN4_gbyte_per_s;
    double m_nvlsEfficiency;
    Time m_collNetDirectNetLatency;
    Time m_collNetChainNetLatency;
    Time m_collNetDirectNvlinkLatency;
    Time m_collNetChainNvlinkLatency;
    Time m_collNetArityLatency;
    double m_collNetEfficiency;
    Time m_patBaseLatency;
    Time m_patRankLatency;
    double m_patEfficiency;
    bool m_treeCorrection;
    double m_ringPlateauLatencyFactor;
    bool m_ringFinalCopy;
    uint32_t m_ringChunkSteps;
    uint32_t m_ringSliceSteps;
    uint32_t m_broadcastChunkSteps;
    uint32_t m_broadcastSliceSteps;
    uint64_t m_p2pChunkBytes;
    uint32_t m_p2pChannelsPerPeer;
    PxnMode m_pxn;
    uint64_t m_pxnChunkBytes;
    uint32_t m_pxnMaxChunks;
    std::string m_algorithms;
    std::string m_protocolList;
    uint32_t m_nvlsEnable;
    bool m_collNetEnable;
    std::string m_generation;

    /// An override list parsed once: enabled[kind][element], for the text it was parsed from.
    struct ParsedList
    {
        std::string text;
        bool valid{false};
        bool parsed{false};
        std::vector<std::vector<bool>> enabled;
    };

    /// \p cache for \p text, parsed again only when the attribute changed.
    static const ParsedList& Parsed(ParsedList& cache,
                                    const std::string& text,
                                    const std::string& variable,
                                    const std::vector<std::string>& elements);
    mutable ParsedList m_algorithmList;
    mutable ParsedList m_protocolParsed;
};

} // namespace ns3

#endif
