/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_TRANSPORT_PLANE_H
#define AI_FABRIC_NVLINK_TRANSPORT_PLANE_H

#include "ns3/flow-topology.h"
#include "ns3/nvlink-domain.h"
#include "ns3/nvlink-gpu.h"
#include "ns3/nvswitch-core.h"
#include "ns3/transport-plane.h"

#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * TransportPlane over NVLink domains built by NvLinkHelper.  A transport packet
 * is one NvLinkGpu::SendPacket packet (payload up to the devices' MaxBurstBytes),
 * sprayed over the switch planes in proportion to their links, like the GPU's
 * NVLS contributions; the TransportTag rides as a TransportPacketTag.  The
 * messages themselves (segmentation, reassembly, completion) are GpuTransport's.
 * Ranks reach each other only inside a domain: a plane may hold several domains
 * (one per server).
 *
 * In-switch reduction (NCCL NVLS): every member streams its buffer to the
 * NvSwitches in NvlsChunkBytes chunks (NvLinkGpu::NvlsReduce), at most
 * NvlsChunksInFlight per member, and gets the reduced chunks back by multicast.
 * A chunk travels as packets of AdaptivePacketBytes(bytes per member,
 * Granularity, min(burst, chunk), NvlsMinPackets): Granularity for small
 * allreduces, bursts for bulk ones.
 * The defaults follow NCCL 2.18+: NVLS chunk 128 KiB, 16 NVLS channels each
 * with one chunk in flight.  The window must fit the switch input buffers
 * (1 MiB per port by default), since a contribution is held there until every
 * member's has arrived.
 *
 * ReduceScatter, AllGather, and AllReduce with NvlsAllReduce "reducescatter-allgather"
 * run as NCCL's NVLS kernels (src/device/all_reduce.h, RunWorkColl NCCL_ALGO_NVLS):
 * each member owns 1/p of the buffer, handled in loops of one NvlsChunkBytes piece per
 * owner.  Reduce-scatter: every member contributes each owner's piece, reduced for that
 * owner only (multimem.ld_reduce); all-gather: each owner stores its piece to every
 * member (multimem.st); allreduce: the owner stores the reduced piece it got.  Per
 * member and direction an allreduce moves (1 + 1/p) of the buffer.  A member has
 * NvlsChunksInFlight loops outstanding, one per NVLS channel.
 *
 * The one-node allreduce as NCCL's kernel runs it (the endpoint sets these): NCCL's
 * chunk (NvlsChunkRule "nccl", NcclNvlsChunkBytes); every window slot stands for
 * NvlsChunksInFlight / window of NCCL's channels, moves a loop at most at their share of
 * the engine's rate towards the GPU, then spends their step latency (NvlsStepLatency x
 * window / channels) before its next loop; one step latency for the scatter stage before
 * the first loops and one for the gather stage after a member's last (NvlsPlan
 * SlotFreeAt, scatterDelay, gatherDelay).  NvlsPacketsPerPlane cuts every piece into one
 * packet per switch plane (NvLinkGpu::PACKETS_PER_PLANE) and stores each reduced packet
 * on as it comes back, so no piece loads one switch more than its links' share.
 */
class NvLinkTransportPlane : public TransportPlane, public InSwitchReductionPlane
{
  public:
    static TypeId GetTypeId();
    NvLinkTransportPlane();

    /// Adds the domain \p built (NvLinkHelper::GetDomain); GPU g of it serves rank rankOfGpu[g].
    /// Call before GpuTransport::AddPlane.  \return the domain index.
    uint32_t AddDomain(const NvLinkDomain& built, const std::vector<uint32_t>& rankOfGpu);
    /// Adds a domain from its description only, no device (a flow-level plane's:
    /// FlowTransportPlane moves its messages and NVLS operations over NvLinkFlowTopology):
    /// GPU g serves rank described.ranks[g] on node nodeOfGpu[g].  The plane answers for its
    /// ranks, reach, packet sizes, line rates and in-switch cuts as for the built domain;
    /// Inject and StartInSwitch abort on its ranks.  \return the domain index.
    uint32_t AddDescribedDomain(const NvLinkFlowDomain& described,
                                const std::vector<int64_t>& nodeOfGpu);
    uint32_t GetNDomains() const;
    /// Domain of \p rank; aborts when absent.
    uint32_t GetDomain(uint32_t rank) const;
    Ptr<NvLinkGpu> GetGpu(uint32_t rank) const;

    bool HasRank(uint32_t rank) const override;
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const override;
    uint32_t GetMaxPayloadBytes() const override;
    uint32_t GetMaxBurstBytes() const override;
    const std::vector<uint32_t>& GetStripeLinks(uint32_t srcRank, uint32_t dstRank) const override;
    double GetStripeLaneRate_gbyte_per_s(uint32_t srcRank,
                                         uint32_t dstRank,
                                         uint32_t lane) const override;
    bool Inject(uint32_t srcRank,
                uint32_t dstRank,
                uint32_t payloadBytes,
                const TransportTag& tag) override;
    int64_t GetNodeId(uint32_t rank) const override;
    uint32_t GetPacketOverheadBytes() const override;
    double GetLineRate_gbyte_per_s(uint32_t rank) const override;

    /// How an in-switch allreduce moves its bytes.
    enum NvlsAllReduce
    {
        NVLS_MULTICAST,               //!< each buffer up once, reduced, multicast back
        NVLS_REDUCESCATTER_ALLGATHER, //!< NCCL: ld_reduce of each owner's share, multimem.st
    };

    /// The size of the pieces an in-switch operation moves per owner and loop.
    enum NvlsChunkRule
    {
        NVLS_CHUNK_FIXED, //!< NvlsChunkBytes at every size
        NVLS_CHUNK_NCCL,  //!< NCCL's: smaller chunks for buffers of few loops per channel
    };

    /// NCCL's NVLS chunk of a \p bytes operation over \p ranks ranks on \p channels channels
    /// with chunk \p maxChunkBytes (src/enqueue.cc, NCCL_ALGO_NVLS): halved to 64 KiB while
    /// the buffer is under 64 loops of every channel's ranks x chunk, to 32 KiB under 8 such
    /// loops of 64 KiB, to 16 KiB under 2 of 32 KiB.
    static uint64_t NcclNvlsChunkBytes(uint64_t bytes,
                                       uint32_t ranks,
                                       uint32_t channels,
                                       uint64_t maxChunkBytes);

    /// How an in-switch operation is cut: what the packet model runs, and what the flow
    /// model (FlowNvls) moves as fluid flows.
    struct NvlsPlan
    {
        bool toAll{false};      //!< multicast allreduce: every chunk reduced to every member
        uint64_t bytes{0};      //!< of the operation
        uint64_t pieceBytes{0}; //!< a chunk (toAll), or each owner's piece per loop
        uint32_t loops{0};      //!< chunks (toAll), or loops of one piece per owner
        uint32_t window{0};     //!< loops (chunks) a member has outstanding
        uint32_t packetBytes{0};
        /// The packet model cuts each piece into one packet per switch plane (and stores
        /// each reduced packet on as it comes back); packetBytes stands for them in the
        /// flow model.
        bool perPlane{false};
        /// Between a loop's end at a member and the next loop of its window slot: the
        /// step latency of the NCCL channels the slot stands for over the NCCL loops the
        /// simulated loop stands for (NvlsStepLatency x window / channels x NCCL loops per
        /// loop, NvlsMinWindow).
        Time stepDelay{0};
        /// What the NCCL channels of one window slot move at most (their share of the
        /// engine's rate towards the GPU), in bytes the member receives; 0 = no limit.
        double slotRate_byte_per_s{0};
        Time scatterDelay{0}; //!< before the first loops: the scatter stage's first step
        Time gatherDelay{0};  //!< after a member's last loop: the gather stage's last step
        std::vector<uint64_t> shareBytes; //!< by member: the part it owns (not toAll)

        /// Bytes of chunk \p loop (toAll), or of owner \p owner's piece in \p loop (0 past
        /// its share).
        uint64_t PieceBytes(uint32_t loop, uint32_t owner) const;
        /// What the engine delivers to \p member in \p loop of \p op (not toAll): every
        /// owner's stored piece (all-gather, allreduce), its own reduced (reduce-scatter,
        /// allreduce).
        uint64_t LoopBytesIn(Op op, uint32_t loop, uint32_t member) const;
        /// When the window slot of a loop issued at \p issued that delivered \p bytesIn
        /// ends now takes its next loop: after the slot's channels moved the bytes at
        /// their share and spent their step latency.
        Time SlotFreeAt(Time issued, uint64_t bytesIn) const;
    };

    /// The cut of \p op over \p ranks (CanReduceInSwitch(ranks)) and \p bytes (> 0).
    NvlsPlan GetNvlsPlan(Op op, const std::vector<uint32_t>& ranks, uint64_t bytes) const;

    bool CanReduceInSwitch(const std::vector<uint32_t>& ranks) const override;
    void StartInSwitch(Op op,
                       const std::vector<uint32_t>& ranks,
                       uint64_t bytes,
                       Callback<void, uint32_t> rankDone) override;
    /// In-switch operations started and not finished by every member.
    uint32_t GetNvlsInFlight() const;

  protected:
    void NotifyConstructionCompleted() override;
    void DoDispose() override;

  private:
    struct RankEntry
    {
        Ptr<NvLinkGpu> gpu; //!< null for a described domain's
        uint32_t domain{0};
        uint32_t gpuId{0};
        bool present{false};
        int64_t nodeId{-1}; //!< a described domain's GPU node
    };

    struct Domain
    {
        std::vector<Ptr<NvSwitch>> switches;
        const NvLinkFlowDomain* described{nullptr}; //!< in m_described; null when built
        std::vector<uint32_t> rankOfGpu;
        std::map<std::vector<uint32_t>, uint32_t> groupOfMembers; //!< sorted GPU ids ->
    };

    struct NvlsGroup
    {
        uint32_t nextChunk{0}; //!< chunk id (packet units) of the next operation
        uint32_t inFlight{0};  //!< operations running on the group
    };

    struct NvlsOp
    {
        uint32_t group{0};
        std::vector<uint32_t> ranks;
        std::vector<Ptr<NvLinkGpu>> gpus;
        uint64_t bytes{0};
        uint32_t chunks{0};      //!< NvlsChunkBytes chunks
        uint32_t firstChunk{0};  //!< chunk id of chunk 0
        uint32_t idsPerChunk{0}; //!< packet chunk ids one chunk spans
        uint32_t packetBytes{0}; //!< AdaptivePacketBytes, at most a chunk
        std::vector<uint32_t> issued;
        std::vector<uint32_t> completed;
        uint32_t membersDone{0};
        Callback<void, uint32_t> rankDone;
    };

    // A reduce-scatter, all-gather or NCCL-pattern allreduce (class comment).
    struct ShareOp
    {
        Op op{Op::AllReduce};
        uint32_t group{0};
        std::vector<uint32_t> ranks;
        std::vector<Ptr<NvLinkGpu>> gpus;
        std::vector<uint64_t> shareBytes; //!< by member: the part of the buffer it owns
        uint64_t pieceBytes{0};           //!< of each owner per loop
        uint32_t loops{0};
        uint32_t window{0};      //!< loops a member has outstanding
        uint32_t firstId{0};     //!< packet chunk id of loop 0, owner 0
        uint32_t idsPerPiece{0}; //!< packet chunk ids a piece spans
        uint32_t packetBytes{0};
        bool perPlane{false};
        NvlsPlan plan;                   //!< its cut (shareBytes as above)
        std::vector<Time> issuedAt;      //!< by member * loops + loop
        std::vector<uint32_t> issued;    //!< loops, by member
        std::vector<uint32_t> completed; //!< loops, by member
        std::vector<uint32_t> released;  //!< completed loops whose slot's step latency is over
        std::vector<uint32_t> left;      //!< pieces still to arrive, by member * loops + loop
        uint32_t membersDone{0};
        Callback<void, uint32_t> rankDone;
    };

    const RankEntry* Entry(uint32_t rank) const;
    /// Payload bytes of a wire byte: GetMaxPayloadBytes over it plus its packets' headers.
    double PayloadShare() const;
    /// Bits per second one device puts on the wire, one direction, after line coding.
    static double DeviceLine_bps(Ptr<NvLinkNetDevice> device);
    void StartMulticastAllReduce(const std::vector<uint32_t>& ranks,
                                 uint64_t bytes,
                                 Callback<void, uint32_t> rankDone);
    void StartShareOp(Op op,
                      const std::vector<uint32_t>& ranks,
                      uint64_t bytes,
                      Callback<void, uint32_t> rankDone);
    /// Bytes of owner \p owner's piece in loop \p loop (0 past its share).
    static uint64_t PieceBytes(const ShareOp& op, uint32_t loop, uint32_t owner);
    /// Packet chunk id of (loop, owner)'s piece in the reduce (phase 0) or store phase.
    static uint32_t PieceId(const ShareOp& op, uint32_t phase, uint32_t loop, uint32_t owner);
    void IssueLoops(uint64_t opId, uint32_t member);
    void PieceReduced(uint64_t opId, uint32_t member, uint32_t loop);
    /// Allreduce with perPlane: the owner stores packet \p index of its reduced piece on.
    void PacketReduced(uint64_t opId,
                       uint32_t member,
                       uint32_t loop,
                       uint32_t index,
                       uint32_t bytes);
    void PieceArrived(uint64_t opId, uint32_t member, uint32_t loop);
    uint32_t GroupFor(uint32_t domain, std::vector<uint32_t> gpuIds);
    /// The NVLS group of \p ranks (registered on first use).
    uint32_t GroupOfRanks(const std::vector<uint32_t>& ranks);
    /// First of \p ids consecutive packet chunk ids of \p group for a new operation.
    uint32_t ReserveIds(uint32_t group, uint64_t ids, uint64_t bytes);
    void IssueChunks(uint64_t opId, uint32_t member);
    void ChunkDone(uint64_t opId, uint32_t member);
    /// The GPU's PacketTxReady, bound to its rank: straight to NotifyTxReady.
    void GpuReady(uint32_t rank);
    void Receive(uint32_t srcGpu,
                 Ptr<const Packet> packet,
                 uint32_t payloadBytes,
                 uint16_t protocol);

    uint16_t m_protocol;
    uint64_t m_nvlsChunkBytes;
    uint32_t m_nvlsChunksInFlight;
    uint32_t m_nvlsMinPackets;
    uint32_t m_nvlsMinWindow;
    uint32_t m_nvlsGroupBase;
    NvlsAllReduce m_nvlsAllReduce;
    NvlsChunkRule m_nvlsChunkRule;
    Time m_nvlsStepLatency;
    bool m_nvlsPacketsPerPlane;
    bool m_stripeMessages;
    uint32_t m_granularity; //!< 0 until the first domain
    uint32_t m_maxBurst;
    uint32_t m_overhead;
    std::vector<RankEntry> m_ranks; //!< indexed by rank; null gpu = absent
    std::vector<Domain> m_domains;
    std::deque<NvLinkFlowDomain> m_described; //!< stable addresses
    std::unordered_map<uint32_t, NvlsGroup> m_groups;
    std::unordered_map<uint64_t, NvlsOp> m_nvlsOps;
    std::unordered_map<uint64_t, ShareOp> m_shareOps;
    uint64_t m_nextOpId;
    uint32_t m_nextGroup;
};

} // namespace ns3

#endif
