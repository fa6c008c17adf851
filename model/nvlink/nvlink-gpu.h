/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_GPU_H
#define AI_FABRIC_NVLINK_GPU_H

#include "ns3/callback.h"
#include "ns3/nvlink-header.h"
#include "ns3/nvlink-net-device.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <limits>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * NVLink endpoint of a GPU node (aggregated to it by NvLinkHelper): sprays the
 * packets a transport hands it (SendPacket) over the GPU's NVLink devices, and
 * streams NVLS in-switch reductions (NvlsReduce).  Messages (segmentation,
 * reassembly, completion, interleaving of messages) are GpuTransport's, over an
 * NvLinkTransportPlane: the GPU knows packets, not messages.
 *
 * Spraying: successive packets go to the switch planes by smooth weighted
 * round-robin with the bundles' link counts as weights (DGX H100: 5:4:4:5), as
 * the hardware stripes a GPU's traffic over all its links; a destination with
 * direct GPU<->GPU bundles uses those instead.  The order is strict: when the
 * chosen device's queue is full the GPU waits for it (its TxReady), so the
 * split stays exactly proportional.  Active NVLS reductions take turns packet by
 * packet, and alternate with SendPacket packets.  NVLS chunks go to plane
 * PlaneForChunk(chunk), which every member computes alike, so all contributions
 * of a chunk meet in the same switch.
 */
class NvLinkGpu : public Object
{
  public:
    static constexpr uint32_t NO_PEER = std::numeric_limits<uint32_t>::max();

    /// NVLS packetBytes: a transfer cut into one packet per switch plane (more when a plane's
    /// share exceeds GetMaxBurstBytes), each sized by its plane's links, so that every piece
    /// loads the switches as the GPU's interleaved multicast addresses do.
    static constexpr uint32_t PACKETS_PER_PLANE = std::numeric_limits<uint32_t>::max();

    /// Fired at a member when every reduced chunk of an NvlsReduce came back: (group, first).
    typedef Callback<void, uint32_t, uint32_t> NvlsDoneCallback;

    /// Fired at an NvlsReduce's owner as each reduced packet comes back: (index of the packet
    /// in the transfer, its payload bytes).
    typedef Callback<void, uint32_t, uint32_t> NvlsPacketCallback;

    /// NvlsChunkReceived trace: (group, chunk, payload bytes).
    typedef void (*NvlsChunkTracedCallback)(uint32_t group, uint32_t chunk, uint32_t bytes);

    static TypeId GetTypeId();
    NvLinkGpu();

    uint32_t GetGpuId() const;
    /// A device of this GPU; \p peerGpu is the GPU at its other end, NO_PEER for a switch.
    void AddDevice(Ptr<NvLinkNetDevice> device, uint32_t peerGpu);
    uint32_t GetNDevices() const;
    Ptr<NvLinkNetDevice> GetDevice(uint32_t i) const;
    uint32_t GetGranularityBytes() const;
    /// Largest SendPacket payload / NvlsReduce packet: the devices' GetMaxBurstBytes.
    uint32_t GetMaxBurstBytes() const;

    /// Contributes \p bytes to an NVLS all-reduce of \p groupId as chunks firstChunk,
    /// firstChunk + 1, ... of \p packetBytes each (0: Granularity; at most
    /// GetMaxBurstBytes; PACKETS_PER_PLANE; all members must use the same chunk ids and
    /// sizes); \p done
    /// fires when every reduced chunk has come back.  With \p owner a member's GPU id
    /// (multimem.ld_reduce) only that member gets the reduced chunks: elsewhere \p done
    /// must be null.  \return the number of chunks.
    uint32_t NvlsReduce(uint32_t groupId,
                        uint32_t firstChunk,
                        uint64_t bytes,
                        NvlsDoneCallback done = NvlsDoneCallback(),
                        uint32_t packetBytes = 0,
                        uint16_t owner = NvLinkHeader::ALL_MEMBERS,
                        NvlsPacketCallback packetDone = NvlsPacketCallback());
    /// Writes \p bytes to every member of \p groupId through the switches (multimem.st)
    /// as chunks firstChunk, ... of \p packetBytes; each member, this one included, gets
    /// them through NvlsExpect.  \return the number of chunks.
    uint32_t NvlsStore(uint32_t groupId, uint32_t firstChunk, uint64_t bytes, uint32_t packetBytes);
    /// Stores one packet of \p bytes as chunk \p chunk on switch plane \p plane (the
    /// plane packet \p plane of a PACKETS_PER_PLANE transfer takes, modulo the planes):
    /// a reduced packet stored on as it came back, as NCCL's reduce warps do.
    void NvlsStorePacket(uint32_t groupId, uint32_t chunk, uint32_t bytes, uint32_t plane);
    /// \p done once the chunks firstChunk, ... of a \p bytes NvlsStore (packets of
    /// \p packetBytes) have arrived here.  Chunks that came before are counted (a
    /// member may store ahead of another's window); \p done then runs in its own event.
    void NvlsExpect(uint32_t groupId,
                    uint32_t firstChunk,
                    uint64_t bytes,
                    uint32_t packetBytes,
                    NvlsDoneCallback done);
    /// Packets (chunk ids) an NVLS transfer of \p bytes in \p packetBytes takes.
    uint32_t GetNvlsPacketCount(uint64_t bytes, uint32_t packetBytes) const;
    /// Switch-plane device index (into GetDevice) that carries NVLS chunk \p chunk.
    uint32_t PlaneForChunk(uint32_t chunk) const;
    /// Payload bytes accepted by NvlsReduce and not yet handed to a device.
    uint64_t GetPendingBytes() const;
    /// NVLS chunks that arrived before any NvlsExpect or NvlsReduce claimed them.
    uint64_t GetUnclaimedChunks() const;

    /// (source GPU, the packet as received: NvLinkHeader, then the payload with its
    /// PacketTags; payload bytes; header protocol) of a SendPacket packet.  Not copied
    /// to strip the header: a copy per packet is measurable at cluster scale.
    typedef Callback<void, uint32_t, Ptr<const Packet>, uint32_t, uint16_t> PacketReceivedCallback;
    /// (this GPU's id): a refused SendPacket may be retried.
    typedef Callback<void, uint32_t> PacketTxReadyCallback;

    /**
     * Per-packet entry point for a transport that segments by itself: \p payload
     * (at most GetMaxBurstBytes) goes to \p dstGpu as one DATA packet with header
     * protocol \p protocol (not 0, the header's unset value), sprayed in strict
     * order; its PacketTags reach the receiver's PacketReceivedCallback.
     * \return false, without side effect, while the GPU holds a packet a device
     * refused, or when NvlsReduce transfers are due their turn (the two alternate
     * packet by packet); PacketTxReady fires when the caller may try again.  With
     * \p lane (an index into GetStripeLinks(dstGpu)) the packet goes on that lane's
     * device instead of the spray's next: a transport that stripes a message by the links.
     */
    bool SendPacket(uint32_t dstGpu,
                    Ptr<Packet> payload,
                    uint16_t protocol,
                    uint32_t lane = NO_PEER);
    /// Links of each device a transfer to \p dstGpu may use, in lane order: the direct
    /// bundle's to it, or else the switch planes'.  Valid until a device is added.
    const std::vector<uint32_t>& GetStripeLinks(uint32_t dstGpu) const;
    /// The devices (indices into GetDevice) of those lanes, in the same order.
    const std::vector<uint32_t>& GetStripeDevices(uint32_t dstGpu) const;
    /// True when this GPU has switch planes, or a direct bundle to \p dstGpu.
    bool HasPath(uint32_t dstGpu) const;
    void SetPacketReceivedCallback(PacketReceivedCallback cb);
    void SetPacketTxReadyCallback(PacketTxReadyCallback cb);

  protected:
    void DoDispose() override;

  private:
    // One member's NvlsReduce contribution still to inject.
    struct Transfer
    {
        NvLinkHeader::Type type{NvLinkHeader::NVLS_REDUCE};
        uint16_t destination{NvLinkHeader::ALL_MEMBERS};
        uint32_t group{0};
        uint32_t nextChunk{0};
        uint32_t packets{0};     //!< packets of the transfer
        uint32_t packetBytes{0}; //!< payload of each but the last; PACKETS_PER_PLANE
        uint32_t sent{0};
        uint64_t remaining{0};
        uint64_t bytes{0};
        uint32_t plane{NO_PEER}; //!< NvlsStorePacket's plane index; NO_PEER: by chunk
    };

    // Smooth weighted round-robin sequence over device indices.
    struct Spray
    {
        std::vector<uint32_t> sequence;
        std::size_t next{0};
    };

    struct NvlsOp
    {
        uint32_t group;
        uint32_t firstChunk;
        uint32_t chunks;
        uint32_t received;
        NvlsDoneCallback done;
        NvlsPacketCallback packetDone;
    };

    static void BuildSpray(Spray& spray,
                           const std::vector<uint32_t>& devices,
                           const std::vector<uint32_t>& weights);
    void RebuildSprays();
    uint32_t StartTransfer(Transfer&& t);
    /// Packets of \p bytes in units of \p packetBytes (0: Granularity), checked; a
    /// PACKETS_PER_PLANE transfer too small to give every plane a Granularity unit falls
    /// back to Granularity packets (\p packetBytes says which).
    uint32_t NvlsPackets(uint32_t firstChunk, uint64_t bytes, uint32_t& packetBytes) const;
    /// Rounds of one packet per plane of a PACKETS_PER_PLANE transfer of \p bytes.
    uint32_t PlaneRounds(uint64_t bytes) const;
    /// Payload of packet \p index of a PACKETS_PER_PLANE transfer of \p bytes.
    uint32_t PlanePacketBytes(uint64_t bytes, uint32_t index) const;
    uint32_t StartNvls(NvLinkHeader::Type type,
                       uint16_t destination,
                       uint32_t groupId,
                       uint32_t firstChunk,
                       uint64_t bytes,
                       uint32_t packetBytes);
    void Pump();
    void TxReady(Ptr<CreditLinkNetDevice> device, uint32_t vc);
    bool Receive(Ptr<NetDevice> device,
                 Ptr<const Packet> packet,
                 uint16_t protocol,
                 const Address& from);
    uint32_t NextDataDevice(uint32_t dstGpu);
    /// True when a direct bundle leads to \p dstGpu (its traffic skips the switches).
    bool Direct(uint32_t dstGpu) const;

    uint32_t m_gpuId;
    uint32_t m_vc;
    std::vector<Ptr<NvLinkNetDevice>> m_devices;
    std::vector<uint32_t> m_peers;
    Spray m_switchSpray;
    std::vector<uint32_t> m_planeDevices; //!< the switch planes' devices, for PACKETS_PER_PLANE
    std::vector<uint32_t> m_planeLinks;   //!< their links
    uint32_t m_planeLinksTotal{0};
    std::vector<Spray> m_directSpray; //!< by destination GPU; empty sequence = via switches
    std::vector<std::vector<uint32_t>> m_directDevices; //!< by destination GPU: its bundle
    std::vector<std::vector<uint32_t>> m_directLinks;   //!< their links

    std::vector<Transfer> m_transfers;
    std::vector<uint32_t> m_freeTransfers;
    std::deque<uint32_t> m_active; //!< transfers with bytes left, in turn order
    uint64_t m_pendingBytes;
    Ptr<Packet> m_blockedPacket;
    uint32_t m_blockedDevice;
    bool m_pumping;
    bool m_packetRefused; //!< a SendPacket was refused since m_blockedPacket was set
    bool m_transferNext;  //!< a SendPacket packet went last: an NVLS transfer's turn
    PacketReceivedCallback m_packetReceived;
    PacketTxReadyCallback m_packetTxReady;

    std::vector<NvlsOp> m_nvlsOps;
    std::unordered_map<uint64_t, uint32_t> m_earlyChunks; //!< (group << 32 | chunk) -> count
    uint64_t m_unclaimed;

    TracedCallback<uint32_t, uint32_t, uint32_t> m_nvlsChunkTrace;
};

} // namespace ns3

#endif
