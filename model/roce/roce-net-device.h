/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_NET_DEVICE_H
#define AI_FABRIC_ROCE_NET_DEVICE_H

#include "ns3/credit-link-net-device.h"
#include "ns3/roce-congestion-control.h"
#include "ns3/roce-headers.h"

#include <deque>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * A RoCEv2 Ethernet port on the link layer: a NIC port (one per GPU, as the HCA) or a
 * RoceSwitch port.  Flow control is the device's LinkFlowControl (PFC, or lossy);
 * OverheadBytes carries preamble and inter-frame gap; packets are Ethernet | IPv4 | UDP
 * 4791 | BTH | payload | ICRC | FCS.
 *
 * NIC side: RC QPs, one per (destination host, QP key) as a transport asks for them, each
 * with its own UDP source port (entropy for ECMP), PSN counter and congestion-control
 * state.  SendPacket holds a QP's packets and puts them on the wire at the QP's rate
 * (the congestion control's), each QP holding at most MessageQueueBytes, so a throttled
 * QP waits while the others go on; the port's queue is kept at MessageQueueBytes so
 * that pacing acts on the wire.  A payload above RoceMtu is a burst of k real packets
 * (one PSN each; the wire pays every packet's headers, as for InfiniBand).  Receive side:
 * a CE-marked data packet makes the NIC send a CNP to its QP at most once per
 * CnpInterval (DCQCN's notification point); CNPs feed the congestion control.  Packets
 * of a QP may arrive in any order (spraying); the receiver hands each to its callback.
 */
class RoceNetDevice : public CreditLinkNetDevice
{
  public:
    /// (source host, payload) of a data packet that arrived.
    typedef Callback<void, uint32_t, Ptr<Packet>> PacketReceivedCallback;
    /// The NIC took a packet off a QP after refusing one: the caller may send again.
    typedef Callback<void, Ptr<RoceNetDevice>> PacketTxReadyCallback;

    struct Counters
    {
        uint64_t dataPacketsSent{0}; //!< real packets (a burst of k counts k)
        uint64_t cnpsSent{0};
        uint64_t cnpsReceived{0};
        uint64_t ceReceived{0}; //!< data packets (simulated) that arrived CE-marked
        uint64_t dataPacketsReceived{0};
        uint64_t retransmittedPackets{0}; //!< simulated packets sent again (go-back-N)
        uint64_t outOfOrderDropped{0};    //!< data packets the receiver dropped (not the next PSN)
        uint64_t timeouts{0};
    };

    static TypeId GetTypeId();
    RoceNetDevice();

    void SetHostId(uint32_t host);
    uint32_t GetHostId() const;
    uint32_t GetRoceMtu() const;
    uint32_t GetMaxBurstPackets() const;

    /// One RC SEND ONLY packet (or burst) of \p payload to \p dstHost on the QP
    /// (dstHost, qpKey); false when that QP already holds MessageQueueBytes.
    bool SendPacket(Ptr<Packet> payload, uint32_t dstHost, uint32_t qpKey);
    void SetPacketReceivedCallback(PacketReceivedCallback cb);
    void SetPacketTxReadyCallback(PacketTxReadyCallback cb);

    /// The node's receive callback: RoCE packets go to the packet callback instead (no
    /// IP stack above a RoCE NIC here), so the node's is kept but not called.
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;

    const Counters& GetRoceCounters() const;
    Ptr<RoceCongestionControl> GetCongestionControl() const;
    uint32_t GetQpCount() const;
    /// UDP source port of the QP (dstHost, qpKey) (created if needed).
    uint16_t GetUdpSourcePort(uint32_t dstHost, uint32_t qpKey);
    /// Packets held for pacing now, over all QPs.
    uint64_t GetHeldPackets() const;

  protected:
    void DoDispose() override;
    void NotifyConstructionCompleted() override;
    BurstShape GetBurstShape(Ptr<const Packet> packet) const override;
    uint32_t GetMaxPacketBytes() const override;
    uint32_t ClassifyVc(Ptr<const Packet> packet) const override;
    uint16_t ExtractProtocol(Ptr<const Packet> packet) const override;

  private:
    struct Qp
    {
        uint32_t dstHost{0};
        uint32_t qpn{0};
        uint16_t udpSrcPort{0};
        uint32_t psn{0};
        Time nextSend;
        std::deque<Ptr<Packet>> held;
        uint64_t heldBytes{0};
        bool active{false}; //!< in m_active
        /// Reliable: sent, not yet acknowledged, oldest first (copies: switches mark the
        /// packets they forward).
        std::deque<std::pair<uint32_t, Ptr<Packet>>> unacked;
        EventId timer;
    };

    /// Receiver side of a QP of another host (reliable mode).
    struct Responder
    {
        uint32_t expectedPsn{0};
        bool nakSent{false};
    };

    uint32_t QpIndex(uint32_t dstHost, uint32_t qpKey);
    void Serve();
    void TxEnded(Ptr<const Packet> packet, uint32_t vc) override;
    bool ReceiveFromLink(Ptr<NetDevice> device,
                         Ptr<const Packet> packet,
                         uint16_t protocol,
                         const Address& from);
    void SendCnp(uint32_t dstHost, uint32_t qpn);
    /// ACK (\p nak false: everything before \p psn arrived) or NAK-sequence-error (resend
    /// from \p psn) to \p dstHost's QP \p qpn.
    void SendAck(uint32_t dstHost, uint32_t qpn, uint32_t psn, bool nak);
    void ReceiveAck(uint32_t qpIndex, uint32_t psn, bool nak);
    /// Puts the QP's unacknowledged packets from \p psn on back in front of its held ones.
    void GoBack(uint32_t qpIndex, uint32_t psn);
    void Timeout(uint32_t qpIndex);
    /// Reliable receive: true if \p psn (of \p k real packets) is the next one.
    bool AcceptInOrder(uint32_t srcHost, uint32_t qpn, uint32_t psn, uint32_t k);

    uint32_t m_mtu;
    uint32_t m_maxBurstPackets;
    uint32_t m_messageQueueBytes;
    uint32_t m_dataVc;
    uint32_t m_cnpVc;
    uint8_t m_dscp;
    bool m_ecnCapable;
    Time m_cnpInterval;
    bool m_computeIcrc;
    bool m_reliable;
    Time m_retransmitTimeout;
    std::unordered_map<uint64_t, Responder> m_responders; //!< (source host << 32 | qpn)
    Ptr<RoceCongestionControl> m_cc;

    uint32_t m_host{0};
    std::vector<Qp> m_qps;
    std::unordered_map<uint64_t, uint32_t> m_qpOf;    //!< (dstHost << 32 | qpKey) -> index
    std::unordered_map<uint64_t, uint32_t> m_qpOfQpn; //!< qpn -> index
    std::deque<uint32_t> m_active;                    //!< QPs holding packets
    EventId m_paceWakeup;
    bool m_refused{false};
    /// Notification point: last CNP per (source host << 32 | qpn).
    std::unordered_map<uint64_t, Time> m_lastCnp;
    Counters m_counters;
    PacketReceivedCallback m_received;
    PacketTxReadyCallback m_txReady;
    NetDevice::ReceiveCallback m_nodeRx;
};

} // namespace ns3

#endif
