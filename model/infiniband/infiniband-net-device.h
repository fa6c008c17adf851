/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The HCA: per-packet RC SEND for a transport, IPoIB, CNPs and the congestion-control
// strategy it calls.  Messages (segmentation, reassembly, round robin over several) are
// GpuTransport's, over an InfinibandTransportPlane.  It is a subclass of InfinibandPort (the link
// level a switch port needs) rather than an object aggregated to the port, so that
// InfinibandNetDevice stays the class users, helpers, transports and tests install, cast to and
// configure with the attributes they always used, and SendPacket stays one call on the hot path.
#ifndef AI_FABRIC_INFINIBAND_NET_DEVICE_H
#define AI_FABRIC_INFINIBAND_NET_DEVICE_H

#include "ns3/credit-link-watchdog.h"
#include "ns3/credit-switch.h"
#include "ns3/infiniband-congestion-control.h"
#include "ns3/infiniband-headers.h"
#include "ns3/infiniband-port.h"
#include "ns3/ipv4-address.h"
#include "ns3/simple-ref-count.h"

#include <array>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * IPoIB address resolution, static: IPv4 address -> LID.  Real IPoIB resolves
 * through ARP over the broadcast multicast group; here the helper fills the
 * table from the assigned addresses, so no resolution traffic exists.
 */
class InfinibandIpoibTable : public SimpleRefCount<InfinibandIpoibTable>
{
  public:
    void Add(Ipv4Address address, uint16_t lid);
    /// \return the LID, or 0 when unknown.
    uint16_t Lookup(Ipv4Address address) const;
    std::size_t GetSize() const;

  private:
    std::unordered_map<uint32_t, uint16_t> m_lids;
};

/**
 * \ingroup ai-fabric
 * An InfiniBand HCA port: an InfinibandPort (link level) with the per-packet RC
 * SEND path a transport uses, IPoIB and congestion control.
 *
 * An HCA is a subclass of the port, not an object aggregated to it, so that this
 * class stays the one helpers install, transports and tests cast to and
 * configure with every attribute they used; InfinibandHelper still installs it on
 * switch ports too (one device factory for all ports, and callers cast every IB
 * port to it), where the HCA half stays idle: the switch takes the port's receptions.
 *
 * SendPacket takes one packet (or burst, see InfinibandPort) from a transport
 * that segments messages by itself (GpuTransport through an
 * InfinibandTransportPlane); the peer HCA hands it, unreassembled, to the
 * callback registered for its destination QP.  IPv4 goes out as one IPoIB UD
 * packet per datagram (RFC 4391); NeedsArp() is false: IPv4 destinations are
 * resolved through an InfinibandIpoibTable.
 *
 * Congestion control paces SendPacket traffic per destination LID; it is the
 * CongestionControl strategy (InfinibandCongestionControl); CcEnabled picks
 * InfinibandA10CongestionControl or InfinibandNoCongestionControl when none is given.
 */
class InfinibandNetDevice : public InfinibandPort
{
  public:
    static constexpr uint8_t OPCODE_CNP = InfinibandBth::CNP;
    static constexpr uint32_t CNP_PAYLOAD_BYTES = 16;

    /// (source LID, payload with its PacketTags) of a SendPacket packet.
    typedef Callback<void, uint16_t, Ptr<Packet>> PacketReceivedCallback;
    /// (this port): a refused SendPacket may be retried.
    typedef Callback<void, Ptr<InfinibandNetDevice>> PacketTxReadyCallback;

    /// Trace signature of Ccti: (DLID, new CCT index).
    typedef void (*CctiTracedCallback)(uint16_t dlid, uint32_t ccti);

    struct IbCounters
    {
        uint64_t fecnReceived{0}; //!< data packets that arrived with FECN
        uint64_t cnpSent{0};
        uint64_t becnReceived{0}; //!< CNPs with BECN that reached this source
        uint64_t ipoibUnresolved{0};
        uint64_t misdelivered{0}; //!< DLID not ours
        uint64_t unclaimed{0};    //!< RC packets for a QP no callback receives on
    };

    static TypeId GetTypeId();
    InfinibandNetDevice();

    /**
     * Per-packet entry point for a transport that segments by itself (a GPU
     * transport): \p payload (at most MaxBurstPackets x IbMtu bytes; above IbMtu a
     * burst, see InfinibandPort) becomes one RC SEND ONLY packet
     * to (\p dlid, \p destQp) on \p sl; PacketTags ride along.  While congestion
     * control delays \p dlid (or packets to it wait already), the packet is taken
     * and held until its injection time, so the others' destinations need not wait
     * behind it.  Otherwise it keeps at most MessageQueueBytes queued on the VL and
     * \return false when that limit, or the VL queue, refuses; then every
     * PacketTxReady callback fires once a packet has left the port.  A refused
     * payload is not reusable.
     */
    bool SendPacket(Ptr<Packet> payload, uint16_t dlid, uint8_t sl, uint32_t destQp);
    /// \p cb (null: unregister) is the PacketTxReady callback of the sender on \p qp:
    /// several transport planes may share an HCA, each on its own QP.
    void SetPacketTxReadyCallback(uint32_t qp, PacketTxReadyCallback cb);
    /// RC SEND packets to \p qp go, unreassembled, to \p cb (null: unregister).
    void SetPacketReceivedCallback(uint32_t qp, PacketReceivedCallback cb);
    /// Packets SendPacket took that congestion control still holds.
    uint32_t GetPacedPackets() const;

    void SetIpoibTable(Ptr<InfinibandIpoibTable> table);

    /// The congestion control this HCA runs (its own fork of the one it was given).
    Ptr<InfinibandCongestionControl> GetCongestionControl() const;
    /// Current CCT index towards \p dlid (0 when CC never reacted).
    uint32_t GetCcti(uint16_t dlid) const;
    const IbCounters& GetIbCounters() const;
    /// Packets for another LID (misdelivered) or an unclaimed QP: lost above the
    /// lossless link.
    uint64_t GetReceiveDiscards() const override;

    // NetDevice: IPoIB
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool NeedsArp() const override;
    bool IsPointToPoint() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;

  protected:
    void DoDispose() override;
    void NotifyConstructionCompleted() override;
    uint16_t ExtractProtocol(Ptr<const Packet> packet) const override;

  private:
    void SetCongestionControl(Ptr<InfinibandCongestionControl> cc);
    void SetCcEnabled(bool enabled);
    bool GetCcEnabled() const;
    /// m_cc from the CongestionControl and CcEnabled attributes.
    void SelectCongestionControl();
    /// Queues \p payload as an RC SEND ONLY packet; false when the VL queue refuses.
    bool Transmit(Ptr<Packet> payload, uint16_t dlid, uint8_t sl, uint32_t destQp);
    /// Sends the held packets whose injection time has come.
    void ReleasePaced();
    void TxEnded(Ptr<const Packet> packet, uint32_t vc) override;
    void NotifyPacketTxReady();
    void OnBecn(uint16_t slid);
    void SendCnp(uint16_t dlid, uint8_t sl, uint32_t srcQp);
    bool ReceiveFromLink(Ptr<NetDevice> device,
                         Ptr<const Packet> packet,
                         uint16_t protocol,
                         const Address& from);

    // attributes
    uint32_t m_messageQueueBytes;
    uint32_t m_localQp;
    bool m_ccEnabled;
    Ptr<InfinibandCongestionControl> m_ccGiven; //!< fork of the CongestionControl attribute

    Ptr<InfinibandCongestionControl> m_cc; //!< the one in use
    uint32_t m_nextPsn;
    Ptr<InfinibandIpoibTable> m_ipoib;
    IbCounters m_ibCounters;
    NetDevice::ReceiveCallback m_userRx;
    NetDevice::PromiscReceiveCallback m_userPromisc;
    bool m_packetRefused;

    struct PacedPacket
    {
        Ptr<Packet> payload;
        uint8_t sl;
        uint32_t destQp;
    };

    std::map<uint16_t, std::deque<PacedPacket>> m_paced; //!< by DLID, in order
    EventId m_pacedWakeup;
    std::vector<std::pair<uint32_t, PacketTxReadyCallback>> m_packetTxReady; //!< by QP
    std::vector<std::pair<uint32_t, PacketReceivedCallback>> m_packetQps;

    TracedCallback<uint16_t, uint32_t> m_cctiTrace;
};

} // namespace ns3

#endif
