/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_TRANSPORT_PLANE_H
#define AI_FABRIC_INFINIBAND_TRANSPORT_PLANE_H

#include "ns3/infiniband-fabric.h"
#include "ns3/infiniband-flow-topology.h"
#include "ns3/infiniband-net-device.h"
#include "ns3/infiniband-switch.h"
#include "ns3/transport-plane.h"

#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * TransportPlane over InfiniBand HCAs: a transport packet is one RC SEND ONLY
 * packet (InfinibandNetDevice::SendPacket) of at most the IB MTU, to the
 * destination rank's LID and the plane's Qp on ServiceLevel; the TransportTag
 * rides as a TransportPacketTag, so the wire carries exactly LRH, BTH,
 * payload, ICRC and VCRC; a burst (HCA MaxBurstPackets > 1) stands for several
 * such packets back to back.  Any two ranks of one subnet reach each other (its
 * subnet manager routed every LID); ranks of different subnets (a multi-plane fabric,
 * SetRankSubnet) do not; several ranks may share an HCA.
 *
 * In-network reduction (SHARP, NCCL's CollNet): an InSwitchReductionPlane whose
 * allreduce runs in the switch every member's HCA hangs off, when that switch is a SHARP
 * aggregation node (InfinibandSwitch SharpEnabled), or where the members' switches share
 * a SHARP switch above them (a two-level tree: the leaves aggregate their members, the
 * root the leaves).  Every member streams its buffer to its switch's LID as RC packets
 * of AdaptivePacketBytes(bytes, MTU, burst, 32) tagged with the group and chunk
 * (InfinibandSharpTag), at most SharpWindowBytes sent and not yet back reduced; the
 * switch returns each reduced chunk to each member on SharpQp.  A
 * member runs its operations in the order they were started, so every member feeds the
 * switch in the same order (no two operations wait for each other in its buffers).
 */
class InfinibandTransportPlane : public TransportPlane, public InSwitchReductionPlane
{
  public:
    static TypeId GetTypeId();
    InfinibandTransportPlane();

    /// \p hca must have its LID (subnet manager run).  Call before GpuTransport::AddPlane.
    void AddRank(uint32_t rank, Ptr<InfinibandNetDevice> hca);
    /// Host h of \p fabric serves rank rankOfHost[h] (its first port, fabric.hostLids[h]).
    void AddHosts(const InfinibandFabric& fabric, const std::vector<uint32_t>& rankOfHost);
    /// Every rank of \p described, with no HCA device (a flow-level plane built from its
    /// description): the plane answers for them (reach, node, LID, packet sizes, line rate)
    /// as for HCAs of those parameters; their packets, and SHARP, need devices.
    void AddDescribedRanks(const InfinibandFlowFabric& described);
    /// Null for a described rank.
    Ptr<InfinibandNetDevice> GetDevice(uint32_t rank) const;
    /// The subnet of \p rank's HCA (0 unless set): LIDs name a port only within one.
    void SetRankSubnet(uint32_t rank, uint32_t subnet);
    uint32_t GetRankSubnet(uint32_t rank) const;

    bool HasRank(uint32_t rank) const override;
    /// Distinct ranks of the plane in one subnet.
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const override;
    uint32_t GetMaxPayloadBytes() const override;
    /// MaxBurstPackets x IbMtu (smallest over the ranks' HCAs), fewer packets where an
    /// HCA's TxQueueBytes or its peer's ReceiveBufferBytes would not hold the burst.
    uint32_t GetMaxBurstBytes() const override;
    bool Inject(uint32_t srcRank,
                uint32_t dstRank,
                uint32_t payloadBytes,
                const TransportTag& tag) override;
    int64_t GetNodeId(uint32_t rank) const override;
    uint32_t GetPacketOverheadBytes() const override;
    double GetLineRate_gbyte_per_s(uint32_t rank) const override;

    /// Distinct ranks, each with an HCA of its own, on SharpEnabled switches: one, or
    /// several leaves under a common SHARP switch (SharpRoot).
    bool CanReduceInSwitch(const std::vector<uint32_t>& ranks) const override;
    /// AllReduce only (SHARP's reduce-scatter and all-gather are not modelled).
    void StartInSwitch(Op op,
                       const std::vector<uint32_t>& ranks,
                       uint64_t bytes,
                       Callback<void, uint32_t> rankDone) override;
    /// In-network operations started and not finished by every member.
    uint32_t GetSharpInFlight() const;

  protected:
    void NotifyConstructionCompleted() override;
    void DoDispose() override;

  private:
    struct DeviceRanks
    {
        std::vector<uint32_t> ranks;
        uint32_t next{0}; //!< first to wake: ranks sharing an HCA take turns
    };

    struct RankEntry
    {
        Ptr<InfinibandNetDevice> device; //!< null for a described rank
        uint16_t lid{0};
        uint32_t subnet{0};
        DeviceRanks* shared{nullptr};
        uint32_t slot{0};                               //!< index in shared->ranks
        const InfinibandFlowFabric* described{nullptr}; //!< in m_described; null when built
        int64_t nodeId{-1};                             //!< of a described rank
    };

    /// The smallest packet sizes and burst room over the ranks, with one more of these.
    void AddPortLimits(uint32_t ibMtu, uint32_t burstPackets, uint64_t room);

    /// The HCA's PacketTxReady, bound to the ranks sharing it: each to NotifyTxReady.
    void DeviceReady(const DeviceRanks& d);
    void Receive(uint16_t slid, Ptr<Packet> packet);

    struct SharpOp
    {
        uint32_t group{0};
        std::vector<uint32_t> ranks;
        uint64_t bytes{0};
        uint32_t packetBytes{0};
        uint32_t firstChunk{0};        //!< chunk id of packet 0
        std::vector<uint64_t> sent;    //!< by member
        std::vector<uint64_t> arrived; //!< by member
        uint32_t membersDone{0};
        Callback<void, uint32_t> rankDone;
    };

    struct SharpMember
    {
        std::deque<uint64_t> ops; //!< operations to feed, in start order
        uint64_t inFlight{0};     //!< bytes sent, not back reduced
        bool hooked{false};       //!< TxReady and receive registered on SharpQp
    };

    /// The SHARP switch of \p rank's HCA, or null.
    Ptr<InfinibandSwitch> SharpSwitch(uint32_t rank) const;
    /// The root of \p ranks' aggregation tree: their switch when all hang off one, else a
    /// SHARP switch cabled to each of their switches (two levels); null when none.
    Ptr<InfinibandSwitch> SharpRoot(const std::vector<uint32_t>& ranks) const;
    /// The aggregation group of \p ranks, registered on its switches on first use.
    uint32_t SharpGroup(const std::vector<uint32_t>& ranks);
    /// Sends \p rank's contributions while its HCA and window take them.
    void SharpPump(uint32_t rank);
    void SharpReceive(uint32_t rank, Ptr<Packet> packet);

    uint8_t m_sl;
    uint32_t m_qp;
    uint32_t m_mtu;          //!< smallest IbMtu of the ranks' HCAs
    uint32_t m_burstPackets; //!< smallest MaxBurstPackets of the ranks' HCAs
    uint64_t m_burstRoom;    //!< payload one packet may have in every HCA queue and peer buffer
    std::vector<RankEntry> m_ranks; //!< indexed by rank; no device nor description = absent
    std::deque<InfinibandFlowFabric> m_described; //!< stable addresses
    std::unordered_map<const InfinibandNetDevice*, DeviceRanks> m_ranksOfDevice;

    uint32_t m_sharpQp;
    uint64_t m_sharpWindowBytes;
    uint32_t m_sharpGroupBase;
    std::map<std::vector<uint32_t>, uint32_t> m_sharpGroups; //!< subnet, sorted member LIDs ->
    std::unordered_map<uint64_t, SharpOp> m_sharpOps;
    std::map<uint32_t, uint64_t> m_sharpOpOfChunk; //!< first chunk id -> operation
    std::unordered_map<uint32_t, SharpMember> m_sharpMembers;
    uint64_t m_nextSharpOp;
    uint32_t m_nextSharpChunk;
};

} // namespace ns3

#endif
