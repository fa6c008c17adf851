/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_NET_DEVICE_H
#define AI_FABRIC_INFINIBAND_NET_DEVICE_H

#include "ns3/credit-link-net-device.h"
#include "ns3/credit-link-watchdog.h"
#include "ns3/credit-switch.h"
#include "ns3/header.h"
#include "ns3/infiniband-headers.h"
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
 * Datagram Extended Transport Header, 8 bytes (IBA §9.3.3; Linux ib_pack.h
 * IB_DETH_BYTES): Q_Key(32) rsv(8) SrcQP(24).  Carried by UD packets (IPoIB).
 */
class InfinibandDeth : public Header
{
  public:
    static constexpr uint32_t SIZE_BYTES = 8;
    static constexpr uint32_t IPOIB_QKEY = 0x0000000b; //!< RFC 4391 §4.4 (IPv4 broadcast group)

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint32_t qkey{IPOIB_QKEY};
    uint32_t srcQp{0};
};

/**
 * \ingroup ai-fabric
 * IPoIB encapsulation header, 4 bytes (RFC 4391 §6): EtherType(16), reserved(16) = 0.
 */
class InfinibandIpoibHeader : public Header
{
  public:
    static constexpr uint32_t SIZE_BYTES = 4;

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint16_t etherType{0x0800};
};

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
 * An InfiniBand port: HCA port or switch port, on the credit link layer.
 *
 * VC = data VL (LRH.VL); credits of 64 bytes; packets carry LRH, BTH (and
 * DETH for UD), payload, pad, ICRC and VCRC, so Packet::GetSize() is the wire
 * packet.  On an HCA, SendMessage segments a message into RC SEND packets of at
 * most IbMtu payload bytes; the peer HCA reassembles it and reports it through
 * the message-received callback.  IPv4 goes out as IPoIB UD packets (RFC 4391);
 * the address is "LID as MAC" (00:00:00:00:LIDhi:LIDlo) and NeedsArp() is
 * false: IPv4 destinations are resolved through an InfinibandIpoibTable.
 *
 * Congestion control (IBA Annex A10, for SendMessage traffic): a received
 * packet with BTH.FECN makes the HCA return a CNP with BTH.BECN to its source;
 * a BECN raises the source's CCT index for that destination LID by
 * CcCctiIncrease, each CcCctiTimer lowers it by one, and CCT entry i delays
 * packet injection towards that LID by i x CcIpdStep.
 *
 * Bursts (MaxBurstPackets > 1, SendPacket only): one simulated packet stands for
 * k = ceil(payload / IbMtu) back-to-back RC SEND ONLY packets to the same
 * destination, PSNs psn .. psn + k - 1.  It carries one LRH/BTH/ICRC/VCRC (LRH
 * PktLen of the first real packet); the wire is charged the other k - 1 packets'
 * headers and every packet's OverheadBytes, congestion control's injection delay
 * counts k packets, and SplitBurst gives the k real packets (pcap).  Credits and
 * the link counters see one packet of the simulated size.
 */
class InfinibandNetDevice : public CreditLinkNetDevice
{
  public:
    static constexpr uint8_t OPCODE_CNP = 0x81; //!< Linux ib_hdrs.h IB_BTH_OPCODE_CNP
    static constexpr uint32_t CNP_PAYLOAD_BYTES = 16;
    static constexpr uint32_t NUM_SLS = 16;

    /// Sender side: message \p id's last packet left this port.
    typedef Callback<void, uint64_t> SendCompleteCallback;
    /// Receiver side: a message from \p slid to \p destQp of \p bytes fully arrived.
    typedef Callback<void, uint16_t, uint32_t, uint64_t> MessageReceivedCallback;

    struct IbCounters
    {
        uint64_t messagesSent{0};
        uint64_t messagesReceived{0};
        uint64_t fecnReceived{0}; //!< data packets that arrived with FECN
        uint64_t cnpSent{0};
        uint64_t becnReceived{0}; //!< CNPs with BECN that reached this source
        uint64_t ipoibUnresolved{0};
        uint64_t psnErrors{0};
        uint64_t misdelivered{0}; //!< DLID not ours
    };

    static TypeId GetTypeId();
    InfinibandNetDevice();

    void SetLid(uint16_t lid);
    uint16_t GetLid() const;
    uint32_t GetDataVls() const;
    uint32_t GetIbMtu() const;
    uint32_t GetMaxBurstPackets() const;
    /// Real packets an RC payload of \p payloadBytes is sent as: ceil(payload / IbMtu), >= 1.
    uint32_t RealPackets(uint32_t payloadBytes) const;
    /// Real packets a packet on the wire (LRH .. VCRC) stands for: 1 unless it is a burst.
    uint32_t RealPacketsOf(uint32_t packetBytes) const;
    /// The real packets of \p packet (LRH .. VCRC): a copy of it, or for a burst its k
    /// SEND ONLY packets with their own PktLen, PSN, pad and CRCs.
    std::vector<Ptr<Packet>> SplitBurst(Ptr<const Packet> packet) const;
    /// This port's SL->VL table (HCA side; switch ports are mapped by the switch).
    void SetSlToVl(const std::vector<uint8_t>& table);
    const std::vector<uint8_t>& GetSlToVl() const;
    /// Empty when the configuration is valid, otherwise what is wrong.
    std::string Validate() const;

    /**
     * Sends \p bytes to (\p dlid, \p destQp) on service level \p sl: RC SEND
     * FIRST/MIDDLE/LAST (or ONLY) packets of at most IbMtu payload bytes with
     * consecutive PSNs.  \p done (may be null) runs when the last packet has
     * left this port.  \return the message id.
     */
    uint64_t SendMessage(uint16_t dlid,
                         uint8_t sl,
                         uint32_t destQp,
                         uint64_t bytes,
                         SendCompleteCallback done = SendCompleteCallback());
    void SetMessageReceivedCallback(MessageReceivedCallback cb);
    /// Messages accepted by SendMessage whose packets are not all queued yet.
    uint32_t GetPendingMessages() const;

    /// (source LID, payload with its PacketTags) of a SendPacket packet.
    typedef Callback<void, uint16_t, Ptr<Packet>> PacketReceivedCallback;
    /// (this port): a refused SendPacket may be retried.
    typedef Callback<void, Ptr<InfinibandNetDevice>> PacketTxReadyCallback;

    /**
     * Per-packet entry point for a transport that segments by itself (a GPU
     * transport): \p payload (at most MaxBurstPackets x IbMtu bytes; above IbMtu a
     * burst, see the class note) becomes one RC SEND ONLY packet
     * to (\p dlid, \p destQp) on \p sl; PacketTags ride along.  It obeys the same
     * limits as SendMessage (MessageQueueBytes on the VL, congestion control's
     * injection delay) and \return false when one of them, or the VL queue, refuses;
     * then PacketTxReady fires once a packet has left the port (or the injection
     * delay has passed).  A refused payload is not reusable.
     */
    bool SendPacket(Ptr<Packet> payload, uint16_t dlid, uint8_t sl, uint32_t destQp);
    void SetPacketTxReadyCallback(PacketTxReadyCallback cb);
    /// RC SEND ONLY packets to \p qp go, unreassembled, to \p cb (null: unregister).
    void SetPacketReceivedCallback(uint32_t qp, PacketReceivedCallback cb);

    void SetIpoibTable(Ptr<InfinibandIpoibTable> table);
    static Mac48Address LidToAddress(uint16_t lid);
    static uint16_t AddressToLid(const Address& address);

    /// Current CCT index towards \p dlid (0 when CC never reacted).
    uint32_t GetCcti(uint16_t dlid) const;
    const IbCounters& GetIbCounters() const;
    /// Packets for another LID (misdelivered): lost above the lossless link.
    uint64_t GetReceiveDiscards() const override;

    /// Builds LRH|BTH|[payload]|pad|ICRC|VCRC around \p payload (SLID = this port).
    Ptr<Packet> BuildPacket(Ptr<Packet> payload,
                            uint16_t dlid,
                            uint8_t sl,
                            uint8_t opcode,
                            uint32_t destQp,
                            uint32_t psn,
                            bool becn = false) const;

    // NetDevice
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Address GetAddress() const override;
    void SetAddress(Address address) override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool NeedsArp() const override;
    bool IsPointToPoint() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;

  protected:
    void DoDispose() override;
    void DoInitialize() override;
    void NotifyConstructionCompleted() override;
    uint32_t ClassifyVc(Ptr<const Packet> packet) const override;
    uint16_t ExtractProtocol(Ptr<const Packet> packet) const override;
    uint32_t GetWireOverheadBytes(Ptr<const Packet> packet) const override;
    uint32_t GetMaxPacketBytes() const override;

  private:
    struct Message
    {
        uint64_t id;
        uint16_t dlid;
        uint8_t sl;
        uint8_t vl;
        uint32_t destQp;
        uint64_t remaining;
        bool started;
        SendCompleteCallback done;
    };

    struct FlowCc
    {
        uint32_t ccti{0};
        Time nextInjection;
    };

    struct RxMessage
    {
        uint32_t expectedPsn{0};
        uint64_t bytes{0};
        bool valid{false};
    };

    void ApplyDataVls();
    void ApplyPreset();
    void ApplyArbitration();
    void SetDataVlsAttr(uint32_t n);
    void SetPresetAttr(std::string preset);
    void SetSlToVlString(std::string text);
    std::string GetSlToVlString() const;
    uint8_t VlForSl(uint8_t sl) const;
    void Pump();
    void TxEnded(Ptr<const Packet> packet, uint32_t vc);
    void NotifyPacketTxReady();
    void CctiTimer();
    void OnBecn(uint16_t slid);
    void SendCnp(uint16_t dlid, uint8_t sl, uint32_t srcQp);
    bool ReceiveFromLink(Ptr<NetDevice> device,
                         Ptr<const Packet> packet,
                         uint16_t protocol,
                         const Address& from);

    // attributes
    uint16_t m_lid;
    uint32_t m_dataVls;
    uint32_t m_ibMtu;
    uint32_t m_maxBurstPackets;
    std::string m_preset;
    std::string m_slToVlText;
    std::string m_vlArbHigh;
    std::string m_vlArbLow;
    uint32_t m_vlArbHighLimit;
    bool m_computeCrcs;
    uint32_t m_messageQueueBytes;
    uint32_t m_localQp;
    bool m_ccEnabled;
    uint32_t m_cctiIncrease;
    uint32_t m_cctiLimit;
    uint32_t m_cctiMin;
    Time m_cctiTimer;
    Time m_ipdStep;

    bool m_constructed;
    std::vector<uint8_t> m_slToVl;
    std::string m_configError;
    std::deque<Message> m_messages;
    uint64_t m_nextMessageId;
    uint32_t m_nextPsn;
    std::map<uint64_t, std::pair<uint64_t, SendCompleteCallback>> m_lastPacketOf; //!< uid ->
    std::unordered_map<uint16_t, FlowCc> m_cc;
    std::unordered_map<uint64_t, RxMessage> m_rx; //!< (slid << 24 | qp)
    EventId m_pumpWakeup;
    EventId m_cctiEvent;
    Ptr<InfinibandIpoibTable> m_ipoib;
    IbCounters m_ibCounters;
    mutable std::vector<uint8_t> m_crcScratch;
    NetDevice::ReceiveCallback m_userRx;
    NetDevice::PromiscReceiveCallback m_userPromisc;
    MessageReceivedCallback m_messageRx;
    bool m_packetRefused;
    EventId m_packetWakeup;
    PacketTxReadyCallback m_packetTxReady;
    std::vector<std::pair<uint32_t, PacketReceivedCallback>> m_packetQps;

    TracedCallback<uint16_t, uint32_t, uint64_t> m_messageRxTrace;
    TracedCallback<uint16_t, uint32_t> m_cctiTrace;
};

} // namespace ns3

#endif
