/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_FLOW_NVLS_H
#define AI_FABRIC_FLOW_NVLS_H

#include "ns3/callback.h"
#include "ns3/flow-network.h"
#include "ns3/flow-topology.h"
#include "ns3/nstime.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

class FlowTransportPlane;

/**
 * \ingroup ai-fabric
 * NVLS in-switch reductions and multicasts of an NVLink plane at flow level: the operations
 * NvLinkTransportPlane runs as NvlsReduce / NvlsStore packets, cut the same way
 * (NvLinkTransportPlane::GetNvlsPlan: chunks, or loops of one piece per owner; the window a
 * member keeps outstanding; the packet size), moved as fluid flows on the flow plane's
 * FlowNetwork, sharing the GPUs' NVLink links with the plane's messages.
 *
 * - Uploads.  What a member sends to the switches, a loop's contributions (every owner's
 *   piece, or the multicast allreduce's chunk) or a stored piece (multimem.st), is one flow
 *   over the GPU's uplinks.  As NvLinkGpu fills its bundles' first-in first-out transmit
 *   queues: an upload issued while the queue holds less than the bundles take before the
 *   GPU waits (TxQueueBytes over each bundle's share of the spray) leaves after those
 *   queued before it, one after another; one issued when it is full waits until the queue
 *   is empty and then shares the links with the others that waited and those issued while
 *   they leave (the GPU hands its active transfers one packet each in turn).  The switch
 *   input buffers take the uploads at the line rate while earlier results wait for the
 *   engine.
 * - Reduction.  When every member's upload of a loop has drained (the switch holds the
 *   contributions until the last member's is in), the reduced piece goes down to its owner
 *   (multimem.ld_reduce), or the reduced chunk to every member (multicast allreduce).
 * - Store.  When a stored piece's upload has drained, a copy goes down to every member.
 * - Downloads.  What goes down to a GPU is one flow through the engines towards it and the
 *   switches' links down to it, one after another in the order the engines got them (the
 *   engine delivers results towards a destination one after another: NvSwitch's
 *   SwitchReductionEngine::EngineTail); a stored piece joins the pieces of its loop still
 *   queued, wherever they wait, and they move as one flow (the loop waits for all of them;
 *   the packets of owners' stores that leave together reach the engine loop by loop).
 * - Engine.  Each switch's engine towards each GPU is a FlowNetwork link of the NvSwitch's
 *   NvlsEngineRatePerLink times the links of its port(s) to that GPU, in payload bytes (a
 *   flow crosses it with the share payload / wire bytes), as NvSwitch::EngineTail charges
 *   it; NvlsEngineRatePerLink 0 (the ideal set) leaves it out.
 * - Planes.  Each GPU's bytes go over its switch planes in proportion to their links
 *   (NvLinkGpu::PlaneForChunk's sequence), down from each to the port(s) it routes to the GPU.
 * - Latency.  A piece is in at its receivers when its download has drained plus the path
 *   latency of a message between two members through the switch
 *   (FlowTransportPlane::GetTailLatency, packets of the plan's size) and the NvSwitch's
 *   NvlsEngineLatency.
 * Completion as in packet mode: a member's loop is done when every piece it waits for is in
 * (its reduced piece; every owner's stored piece), the member when all its loops are; then
 * it issues the next loop of its window.
 *
 * Not modelled: a result streaming down while its loop's contributions are still going up
 * (a download starts when the loop's uploads have drained), the switch input buffers'
 * credits (uploads never wait for the engine), the order of large packets on each switch
 * plane (a piece may be fewer packets than there are planes), and the GPU alternating its
 * NVLS packets with its messages' (here an upload and each message weigh 1 on the links).
 */
class FlowNvls
{
  public:
    using Op = InSwitchReductionPlane::Op;

    /// Flows over \p plane's network; \p nvlink: its packet plane (the operations' cut);
    /// \p topology: the plane's links (the GPUs' switch planes and the engines).
    FlowNvls(FlowTransportPlane& plane,
             FlowNetwork& network,
             Ptr<NvLinkTransportPlane> nvlink,
             Ptr<FlowTopology> topology);

    /// InSwitchReductionPlane::StartInSwitch over the NVLink plane's ranks.
    void Start(Op op,
               const std::vector<uint32_t>& ranks,
               uint64_t bytes,
               Callback<void, uint32_t> rankDone);
    /// Operations started and not finished by every member.
    uint32_t GetNInFlight() const;
    /// The engine link (FlowNetwork index) of the first switch plane towards \p rank;
    /// aborts without an engine rate.
    uint32_t GetEngineLink(uint32_t rank);

  private:
    /// One upload of a GPU: a loop's contributions (owner = kAll) or owner's stored piece.
    struct Upload
    {
        uint64_t op{0};
        uint32_t loop{0};
        uint32_t owner{0};
        uint64_t payloadBytes{0};
        double wireBytes{0};
    };

    /// One result towards a GPU: owner's reduced piece (stored false) or the reduced chunk
    /// of the multicast allreduce, or a stored piece of the loop.
    struct Download
    {
        uint64_t op{0};
        uint32_t loop{0};
        uint32_t owner{0};
        bool stored{false};
        uint64_t payloadBytes{0};
        uint32_t pieces{1}; //!< stored pieces of the loop merged into one flow
    };

    /// A GPU's links: up to each switch plane, down from it, the engine towards it (shares
    /// in proportion to the planes' links); its uploads in issue order, its results in the
    /// order the engines got them.
    struct Gpu
    {
        std::vector<FlowNetwork::Use> up;
        std::vector<FlowNetwork::Use> down;
        std::vector<FlowNetwork::Use> engine; //!< shares before the payload / wire ratio
        Time engineLatency;
        Time tail; //!< after a download has drained, for packets of tailPacketBytes
        uint32_t tailPacketBytes{0};
        double queueBytes{0};       //!< wire bytes the devices take before the GPU waits
        double queuedBytes{0};      //!< of the uploads in the queue, the one leaving included
        bool uploading{false};      //!< the queue's head is leaving
        std::deque<Upload> uploads; //!< in the queue, behind the one leaving
        std::vector<Upload> turns;  //!< did not fit: in turn once the queue is empty
        uint32_t inTurn{0};         //!< of those, leaving (sharing the links)
        bool downloading{false};
        std::deque<Download> downloads;
    };

    struct Operation
    {
        Op op{Op::AllReduce};
        NvLinkTransportPlane::NvlsPlan plan;
        std::vector<uint32_t> ranks;
        std::vector<uint32_t> issued;    //!< loops, by member
        std::vector<uint32_t> completed; //!< loops, by member
        std::vector<uint32_t> released;  //!< completed loops whose window slot is free again
        std::vector<Time> issuedAt;      //!< by member * loops + loop
        std::vector<uint32_t> uploaded;  //!< members whose contributions of a loop are up
        std::vector<int32_t> left;       //!< pieces to arrive, by member * loops + loop
        uint32_t membersDone{0};
        Callback<void, uint32_t> rankDone;
    };

    Gpu& GetGpu(uint32_t rank);
    void Issue(uint64_t id, uint32_t member);
    /// Pieces \p member waits for in a loop.
    static int32_t Expected(const Operation& o, uint32_t member, uint32_t loop);
    void QueueUpload(uint32_t rank, const Upload& u);
    void NextUpload(uint32_t rank);
    /// \p u shares the GPU's uplinks with its other uploads in turn.
    void StartInTurn(uint32_t rank, const Upload& u);
    void Uploaded(const Upload& u);
    /// Queues \p d at \p receiver's engine.
    void QueueDownload(uint32_t receiver, const Download& d);
    void NextDownload(uint32_t receiver);
    /// \p d is in at member \p member of its operation.
    void Downloaded(const Download& d, uint32_t member);
    void Arrived(uint64_t id, uint32_t member, uint32_t loop);
    void MemberDone(uint64_t id, uint32_t member);

    FlowTransportPlane& m_plane;
    FlowNetwork& m_network;
    Ptr<NvLinkTransportPlane> m_nvlink;
    Ptr<FlowTopology> m_topology;
    std::unordered_map<uint32_t, Gpu> m_gpus;         //!< by rank
    std::unordered_map<uint64_t, uint32_t> m_engines; //!< SwitchPlane::engineKey -> link
    std::unordered_map<uint64_t, Operation> m_ops;
    uint64_t m_nextOp{0};
};

} // namespace ns3

#endif
