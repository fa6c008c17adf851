/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_NET_DEVICE_H
#define AI_FABRIC_CREDIT_LINK_NET_DEVICE_H

#include "ns3/credit-arbiter.h"
#include "ns3/credit-link-channel.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/receive-drain.h"
#include "ns3/reusable-event.h"
#include "ns3/traced-callback.h"
#include "ns3/wire-timing.h"

#include <deque>
#include <ostream>
#include <utility>
#include <vector>

namespace ns3
{

class CreditSwitch;
class CreditLinkWatchdog;
class LinkFlowControl;

/**
 * \ingroup ai-fabric
 * One end of a lossless, credit-flow-controlled point-to-point link.
 *
 * Transmit side: NumVcs virtual channels, each a FIFO bounded by TxQueueBytes,
 * and per-VC credits (CreditUnitBytes each) for the peer's free receive
 * buffer.  A packet starts only when credits cover all of it; the arbiter
 * picks among such VCs.  Credits charge the packet bytes; OverheadBytes
 * (framing, CRCs not in the packet) only cost wire time.  Flow-control frames
 * have priority on the wire and cost FlowControlFrameBytes each.
 *
 * Receive side: a packet holds its receive buffer until it is released: at
 * once by a host (or at ReceiveDrainRate), or by the CreditSwitch when the
 * packet leaves its input buffer.  A cut-through switch port receives a packet
 * when its head is in; the switch may start it on an output before its tail
 * arrived, and that transmission then ends no earlier than the tail.  Counters
 * describe the transmit direction.
 */
class CreditLinkNetDevice : public NetDevice
{
  public:
    enum CreditUpdatePolicy
    {
        CREDIT_UPDATE_IMMEDIATE, //!< a flow-control frame as soon as buffer is released
        CREDIT_UPDATE_PERIODIC,  //!< at most one per CreditUpdateInterval, coalesced
    };

    struct Counters
    {
        uint64_t txPackets{0};
        uint64_t txBytes{0}; //!< packet bytes, without OverheadBytes
        uint64_t txFlowControlFrames{0};
        uint64_t rxPackets{0};
        uint64_t rxBytes{0};
        uint64_t peakQueueBytes{0}; //!< all VCs of this device's own transmit queue
        Time busyTime;        //!< data and flow-control frames on the wire, at this port's rate
        Time creditStallTime; //!< wire idle, data waiting, no VC with credits
    };

    // Trace-source signatures.
    /// TxBegin, TxEnd, Rx, Backpressure: (packet, VC).
    typedef void (*PacketVcTracedCallback)(Ptr<const Packet> packet, uint32_t vc);
    /// QueueLength: (VC, transmit queue bytes).
    typedef void (*VcBytesTracedCallback)(uint32_t vc, uint64_t queueBytes);
    /// CreditStallBegin: (VC).
    typedef void (*VcTracedCallback)(uint32_t vc);
    /// CreditStallEnd: (VC, stall duration).
    typedef void (*VcTimeTracedCallback)(uint32_t vc, Time duration);
    /// CreditUpdate: (VC, credits returned).
    typedef void (*VcCreditsTracedCallback)(uint32_t vc, uint32_t credits);

    /// Fired when a VC that refused a Send has room again.
    typedef Callback<void, Ptr<CreditLinkNetDevice>, uint32_t> TxReadyCallback;
    /// Technology hook: VC of a packet given to Send().
    typedef Callback<uint32_t, Ptr<const Packet>> ClassifyCallback;

    static TypeId GetTypeId();
    /// Signalling rate and the share of it that carries bits (line coding): the payload
    /// rate of the wire is their product.
    DataRate GetDataRate() const;
    double GetEncodingEfficiency() const;
    CreditLinkNetDevice();
    // Out of line: members hold Ptr<> to types only forward-declared here.
    ~CreditLinkNetDevice() override;

    bool Attach(Ptr<CreditLinkChannel> channel);

    /// Queue \p packet on \p vc; false (never a drop) when the VC queue is full.
    bool SendOnVc(Ptr<Packet> packet, uint32_t vc);
    void SetTxReadyCallback(TxReadyCallback cb);
    void SetClassifyCallback(ClassifyCallback cb);

    uint32_t GetNumVcs() const;
    void SetReceiveBufferBytes(uint32_t vc, uint32_t bytes);
    uint32_t GetReceiveBufferBytes(uint32_t vc) const;
    uint32_t GetCreditUnitBytes() const;
    uint32_t CreditsFor(uint32_t packetBytes) const;
    uint32_t GetCredits(uint32_t vc) const;
    uint32_t GetInitialCredits(uint32_t vc) const;
    uint64_t GetQueueBytes(uint32_t vc) const;
    /// Receive buffer of \p vc held by packets not yet released, in credits.
    uint32_t GetReceiveOccupancy(uint32_t vc) const;
    /// Released receive buffer of \p vc not yet sent back to the peer, in credits.
    uint32_t GetPendingCreditReturn(uint32_t vc) const;
    /// Packets that arrived intact but were discarded above the link (e.g. an
    /// InfiniBand HCA receiving another LID's packet); 0 here: the link never drops.
    virtual uint64_t GetReceiveDiscards() const;
    const Counters& GetCounters() const;
    const SerializationClock& GetClock() const;
    Ptr<CreditLinkNetDevice> GetPeer() const;
    /// "n<node>/<if>-n<node>/<if>", used in deadlock reports.
    std::string GetLinkName() const;

    /// Channel side.  \p tail: arrival of the last bit (now, unless this is a port of a
    /// cut-through switch receiving the packet at its head).
    void ReceiveData(Ptr<Packet> packet, uint32_t vc, Time tail);
    void ReceiveCredits(uint32_t vc, uint32_t credits);

    /// The receive buffer of \p packetBytes on \p vc is free again: credit the peer.
    void ReleaseReceiveBuffer(uint32_t vc, uint32_t packetBytes);

    /// Switch side: the switch supplies this port's transmit data and takes its receptions.
    void AttachToSwitch(Ptr<CreditSwitch> sw, uint32_t port);
    void NotifyDataAvailable(uint32_t vc);
    /// The switch this device is a port of (null on a host).
    Ptr<CreditSwitch> GetSwitch() const;
    /// True while a data packet is on the wire (its transmit-complete is pending).
    bool IsSendingData() const;

    /// The flow-control discipline other than credits (PFC), or null: credits.
    Ptr<LinkFlowControl> GetFlowControl() const;
    /// Flow-control side: send a frame for \p vc as soon as the wire allows.
    void RequestFlowControlFrame(uint32_t vc);
    uint32_t GetOverheadBytes() const;
    /// Largest packet SendOnVc (or the switch) puts on this wire.
    uint32_t GetLargestPacketBytes() const;

    /// Watchdog side.
    void SetWatchdog(Ptr<CreditLinkWatchdog> watchdog);
    Ptr<CreditLinkWatchdog> GetWatchdog() const;
    bool HasPendingWork() const;
    /// Appends one line per VC that holds data its credits do not cover; \return their count.
    uint32_t ReportStuckVcs(std::ostream& os) const;

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsPointToPoint() const override;
    bool IsBridge() const override;
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;
    void DoInitialize() override;

    /// VC of a packet handed to Send(); default: the CreditLinkHeader's VC.
    virtual uint32_t ClassifyVc(Ptr<const Packet> packet) const;
    /// Protocol reported to the node's receive callback; default: the CreditLinkHeader's.
    virtual uint16_t ExtractProtocol(Ptr<const Packet> packet) const;

    /// A simulated packet may stand for several real ones (a burst): how many, the header
    /// bytes each real packet has on the wire, and the header bytes the simulated packet
    /// itself carries (the first real packet's).  Default: one packet, headers in its bytes.
    struct BurstShape
    {
        uint32_t realPackets{1};
        uint32_t realHeaderBytes{0};
        uint32_t headerBytesInPacket{0};
    };

    virtual BurstShape GetBurstShape(Ptr<const Packet> packet) const;
    /// Wire bytes beyond the packet's own bytes, for every technology alike: each real packet
    /// pays its header and OverheadBytes (framing, link CRC), less the header the simulated
    /// packet already holds.  One real packet: OverheadBytes.
    uint32_t GetWireOverheadBytes(Ptr<const Packet> packet) const;
    /// Largest packet SendOnVc accepts; default: Mtu.  NetDevice's Mtu is 16-bit, so a
    /// technology with larger simulated packets (64 KiB NVLink bursts) overrides this.
    virtual uint32_t GetMaxPacketBytes() const;
    /// Called as a packet's transmission ends, just before the TxEnd trace fires.  A
    /// technology reacts here rather than through its own TxEnd sink: a connected trace costs
    /// a list node and a callback object to load per packet-hop.
    virtual void TxEnded(Ptr<const Packet> packet, uint32_t vc);

  private:
    struct Vc
    {
        std::deque<Ptr<Packet>> queue;
        uint32_t headBytes{0}; //!< queue.front()'s size: peeked per VC per decision
        uint64_t queueBytes{0};
        uint32_t credits{0};
        uint32_t initialCredits{0};
        uint32_t receiveBufferBytes{0};
        uint32_t rxOccupiedCredits{0};
        uint32_t pendingCreditReturn{0};
        bool stalled{false};
        bool refused{false};
        Time stallStart;
    };

    void SetNumVcs(uint32_t n);
    void SetDataRate(DataRate signallingRate);
    void SetEncodingEfficiency(double efficiency);
    void SetReceiveBufferAll(uint32_t bytes);
    uint32_t GetReceiveBufferAll() const;
    void SetReceiveDrainRate(DataRate rate);
    DataRate GetReceiveDrainRate() const;
    void EnsureCredits();
    uint32_t HeadBytes(uint32_t vc) const;
    void UpdateVcStall(uint32_t vc, uint32_t headBytes);
    /// Whether \p vc may start its head packet of \p headBytes: credits, or the
    /// flow-control discipline.
    bool MayStart(uint32_t vc, uint32_t headBytes, Time now) const;
    /// Flow control: wake up when the first paused VC with data may send again.
    void ScheduleResume(uint32_t waiting);
    /// Flow-control timer or end of a flow-control frame: the switch's pipe first.
    void TimerExpired();
    /// TransmitNext, then the flow-control frames SendFlowControl held back; with
    /// InstantEndDecisions, that at the end of the instant.
    void TryTransmit();
    /// With InstantEndDecisions: whether TransmitNext could start a frame now.
    bool CanStartFrame() const;
    /// With InstantEndDecisions: TryTransmit in the InstantEndScheduler's event, in
    /// (node, interface) order.
    void RequestDecision();
    void DecideAtInstantEnd();
    void TransmitNext();
    void SendFlowControl();
    bool HasDataWaiting() const;
    void TransmitComplete();
    void DeliverUp(Ptr<Packet> packet);
    /// The host consumed \p packet: up the stack, and its receive buffer is free.
    void Consume(Ptr<Packet> packet, uint32_t vc);

    // attributes
    uint32_t m_numVcs;
    uint32_t m_txQueueBytes;
    uint32_t m_creditUnitBytes;
    DataRate m_signallingRate;
    double m_encodingEfficiency;
    uint32_t m_overheadBytes;
    uint32_t m_fcFrameBytes;
    CreditUpdatePolicy m_creditPolicy;
    Time m_creditInterval;
    uint16_t m_mtu;
    Ptr<CreditArbiter> m_arbiter;
    Ptr<LinkFlowControl> m_flowControl;
    EventId m_resumeWakeup;
    bool m_instantEndDecisions{false};
    bool m_deciding{false};

    std::vector<Vc> m_vcs;
    bool m_creditsReady;
    SerializationClock m_clock;
    bool m_busy;
    Ptr<Packet> m_current;
    uint32_t m_currentVc;
    uint32_t m_pendingFcMask;
    Time m_lastFcTime;
    uint32_t m_peerCutThroughBytes; //!< 0: the peer takes packets at their tail
    std::vector<std::pair<uint32_t, uint32_t>> m_heldFlowControl; //!< (vc, credits)
    EventId m_fcTimer;
    ReusableEvent m_txComplete;
    EventId m_wakeup;
    Time m_fcBusyUntil;
    uint64_t m_ownQueueBytes;
    bool m_linkStalled;
    Time m_linkStallStart;
    Counters m_counters;

    ReceiveDrain m_drain;

    Ptr<CreditLinkChannel> m_channel;
    Ptr<Node> m_node;
    Mac48Address m_address;
    uint32_t m_ifIndex;
    Ptr<CreditSwitch> m_switch;
    uint32_t m_switchPort;
    Ptr<CreditLinkWatchdog> m_watchdog;
    NetDevice::ReceiveCallback m_rxCallback;
    NetDevice::PromiscReceiveCallback m_promiscCallback;
    TxReadyCallback m_txReadyCallback;
    ClassifyCallback m_classifyCallback;

    TracedCallback<Ptr<const Packet>, uint32_t> m_txBeginTrace;
    TracedCallback<Ptr<const Packet>, uint32_t> m_txEndTrace;
    TracedCallback<Ptr<const Packet>, uint32_t> m_rxTrace;
    TracedCallback<uint32_t, uint64_t> m_queueLengthTrace;
    TracedCallback<uint32_t> m_creditStallBeginTrace;
    TracedCallback<uint32_t, Time> m_creditStallEndTrace;
    TracedCallback<Ptr<const Packet>, uint32_t> m_backpressureTrace;
    TracedCallback<uint32_t, uint32_t> m_creditUpdateTrace;
};

} // namespace ns3

#endif
