/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_SWITCH_H
#define AI_FABRIC_CREDIT_SWITCH_H

#include "ns3/callback.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

class CreditLinkWatchdog;

/**
 * \ingroup ai-fabric
 * Input-buffered switch core over K CreditLinkNetDevice ports, aggregated to a
 * node.  A packet stays in its input port's receive buffer (so in the
 * upstream credits) until its output port starts sending it; the output
 * port pulls, round-robin over the inputs whose head is for it.  Each input
 * keeps one FIFO per (VC, output) over its shared receive buffer
 * (VirtualOutputQueues, the default) or, with it false, one FIFO per VC, where
 * head-of-line blocking is real.  Routing, destination extraction and output VC are
 * virtual so a technology replaces them.  Congestion never drops; a packet
 * without a route is dropped at its input (counted per input port, Drop
 * trace, its buffer released) or, with DropUnroutable false, a fatal error.
 *
 * Forwarding: store-and-forward (a packet enters after its tail, the generic
 * default) or cut-through (NVSwitch, InfiniBand): a packet enters once its
 * first CutThroughBytes are in, TraversalLatency then applies as before, and an
 * output that starts it before its tail has arrived ends no earlier than that
 * tail.  No event is added: the tail time travels with the packet.
 */
class CreditSwitch : public Object
{
  public:
    /// Forward trace: (packet, input port, output port).
    typedef void (*ForwardTracedCallback)(Ptr<const Packet> packet,
                                          uint32_t inPort,
                                          uint32_t outPort);
    /// Drop trace: (packet, input port).
    typedef void (*DropTracedCallback)(Ptr<const Packet> packet, uint32_t inPort);

    /// Output port of a packet arriving on (inPort, vc).
    typedef Callback<uint32_t, Ptr<const Packet>, uint32_t, uint32_t> RouteCallback;

    /// Route() result for a packet with no output port: it is dropped.
    static constexpr uint32_t NO_ROUTE = UINT32_MAX;

    enum Forwarding
    {
        FORWARDING_DEFAULT,           //!< the technology's: DefaultCutThrough()
        FORWARDING_CUT_THROUGH,       //!< forward once the routing header is in
        FORWARDING_STORE_AND_FORWARD, //!< forward after the whole packet is in
    };

    static TypeId GetTypeId();
    CreditSwitch();
    // Out of line: members hold Ptr<> to types only forward-declared here.
    ~CreditSwitch() override;

    /// \return the port index; all ports must be added before traffic arrives.
    uint32_t AddPort(Ptr<CreditLinkNetDevice> device);
    uint32_t GetNPorts() const;
    Ptr<CreditLinkNetDevice> GetPort(uint32_t port) const;
    /// \return the port index of \p device, or GetNPorts() when it is not a port.
    uint32_t GetPortIndex(Ptr<const NetDevice> device) const;

    /// Candidates for \p destination; several = adaptive: least bytes waiting for the
    /// port, ties taken in turn.
    void SetRoute(uint32_t destination, const std::vector<uint32_t>& ports);
    /// Ports SetRoute gave \p destination; empty when none.
    const std::vector<uint32_t>& GetRoute(uint32_t destination) const;
    /// Forgets every SetRoute (reprogramming a forwarding table).
    void ClearRoutes();
    void SetRouteCallback(RouteCallback cb);

    void SetWatchdog(Ptr<CreditLinkWatchdog> watchdog);
    Ptr<CreditLinkWatchdog> GetWatchdog() const;
    uint64_t GetBufferedPackets() const;
    uint64_t GetForwardedPackets() const;
    /// Packets received but neither buffered for forwarding nor forwarded yet (an NVLS
    /// contribution waiting for the others); 0 here.
    virtual uint64_t GetHeldPackets() const;
    /// Packets a technology absorbed minus those it created (an in-switch reduction to
    /// one member absorbs the others' contributions, a multicast creates copies); 0 here.
    virtual int64_t GetNetAbsorbedPackets() const;
    /// Unroutable packets dropped, in all or from input \p port; the first drop's reason.
    uint64_t GetDroppedPackets() const;
    uint64_t GetDroppedPackets(uint32_t port) const;
    const std::string& GetFirstDropReason() const;
    /// Bytes an input port needs before it routes a packet; 0 = store-and-forward.
    uint32_t GetCutThroughBytes() const;
    /// Peak bytes held in input buffers waiting for \p port (its output queue).
    uint64_t GetPeakBytesForOutput(uint32_t port) const;

    /// Port side.  Virtual so a technology can take a packet out of the forwarding path
    /// (NVLS reductions hold it, still charged to the input buffer, and hand it back
    /// here later); the packet's input buffer is released when it leaves by Dequeue.
    /// \p tail: when its last bit is in (later than now when it came cut-through).
    virtual void ReceiveFromPort(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail);
    uint32_t PeekHeadBytes(uint32_t outPort, uint32_t outVc) const;
    /// The next packet for (outPort, outVc); \p tail is set to when its last bit is in.
    Ptr<Packet> Dequeue(uint32_t outPort, uint32_t outVc, Time& tail);
    /// Moves packets whose TraversalLatency has elapsed into the input queues.  Every
    /// port calls it before it acts, so the queues are as if each packet had entered
    /// at its exact time; an event does it only for an output that would not act then.
    void Advance();
    /// \p outPort finished sending data and has nothing to start.
    void NotifyPortIdle(uint32_t outPort);

  protected:
    void DoDispose() override;

    /// As ReceiveFromPort, for a copy a technology made of a packet that already holds
    /// its input buffer (multicast): the copy holds none, so leaving releases nothing.
    void ForwardCopy(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail);
    /// As ReceiveFromPort (\p holdsInput) or ForwardCopy, to \p destination by the routing
    /// table whatever the packet's header names: for one packet a technology sends
    /// unchanged to several destinations (multicast copies sharing it, so nothing on
    /// their way may change it).
    void ForwardTo(uint32_t inPort,
                   Ptr<Packet> packet,
                   uint32_t vc,
                   Time tail,
                   bool holdsInput,
                   uint32_t destination);

    /// Destination id of a packet; default: the CreditLinkHeader's.
    virtual uint32_t ExtractDestination(Ptr<const Packet> packet) const;
    /// Output port or NO_ROUTE; default: route callback if set, else the table.
    virtual uint32_t Route(Ptr<const Packet> packet, uint32_t inPort, uint32_t vc);
    /// VC on the output link; default: unchanged.
    virtual uint32_t SelectOutputVc(Ptr<const Packet> packet,
                                    uint32_t inPort,
                                    uint32_t inVc,
                                    uint32_t outPort);
    /// Forwarding=Default: cut-through or not; default false (store-and-forward).
    /// Called as a packet leaves for its output, just before the Forward trace fires (a hook
    /// instead of a sink of the switch's own trace: see CreditLinkNetDevice::TxEnded).
    virtual void OnForward(Ptr<const Packet> packet, uint32_t inPort, uint32_t outPort);
    virtual bool DefaultCutThrough() const;
    /// CutThroughBytes=0: the routing header's bytes; default the CreditLinkHeader's.
    virtual uint32_t DefaultCutThroughBytes() const;

  private:
    // 32 bytes: VCs <= 32 fit 16 bits.
    struct Entry
    {
        Ptr<Packet> packet;
        Time tail; //!< arrival of the last bit
        uint32_t inPort;
        uint32_t outPort;
        uint32_t bytes;
        uint16_t inVc;
        uint16_t outVc;
    };

    // Queues and rings are index-linked lists over one pool of entries: a switch holds
    // few packets (credits bound them) but has ports^2 x VCs queues, which as std::deques
    // cost ~600 B each and a cache miss per head peek at 1000-GPU scale.
    static constexpr uint32_t NIL = UINT32_MAX;

    struct PoolNode
    {
        Entry entry;
        uint32_t next; //!< next entry of the same queue, or of the free list
    };

    struct Fifo
    {
        uint32_t head{NIL};
        uint32_t tail{NIL};
    };

    /// Queues whose head is for one (output, VC), served round-robin.
    struct Ring
    {
        uint32_t head{NIL};
        uint32_t tail{NIL};
        uint32_t headBytes{0}; //!< bytes of the first queue's head packet; 0 when empty
    };

    /// inVc flag of an entry that holds no input buffer (ForwardCopy); VCs are < 32.
    static constexpr uint16_t NO_INPUT_BUFFER = 0x8000;

    void Forward(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail, bool holdsInput);
    /// The table's port for \p destination (adaptive among several), or NO_ROUTE.
    uint32_t RouteTo(uint32_t destination, uint32_t inPort);
    /// Queues \p packet for output \p out.
    void Enter(uint32_t inPort,
               Ptr<Packet> packet,
               uint32_t vc,
               Time tail,
               bool holdsInput,
               uint32_t out);
    void Freeze();
    uint32_t QueueIndex(uint32_t inPort, uint32_t inVc, uint32_t outPort) const;
    uint32_t RingIndex(uint32_t outPort, uint32_t outVc) const;
    void Enqueue(Entry&& entry);
    void PushReady(uint32_t ring, uint32_t q);
    void Drop(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, const std::string& reason);
    void AddPipeWakeup(Time ready);
    void PipeWakeup();

    bool m_voq;
    bool m_dropUnroutable;
    Time m_latency;
    Forwarding m_forwarding;
    uint32_t m_cutThroughBytes;

    std::vector<Ptr<CreditLinkNetDevice>> m_ports;
    std::vector<std::vector<uint32_t>> m_routes;
    RouteCallback m_routeCallback;
    bool m_frozen;
    uint32_t m_numVcs;
    std::vector<PoolNode> m_pool;
    uint32_t m_freeNode{NIL};
    std::vector<Fifo> m_queues;
    std::vector<uint32_t> m_nextReady; //!< per queue: the next queue of its ring
    std::vector<Ring> m_ready;         //!< per (output, VC)
    std::vector<uint64_t> m_bytesForOutput;
    std::vector<uint64_t> m_peakBytesForOutput;
    /// Packets within TraversalLatency of their arrival, in arrival (= ready) order.
    std::deque<std::pair<Time, Entry>> m_pipe;
    /// Ready times of pipe packets whose output port is not sending data.
    std::set<Time> m_pipeWakeups;
    EventId m_pipeEvent;
    Time m_pipeEventTime;
    bool m_pipeEventPending{false};
    bool m_advancing{false};
    uint64_t m_adaptiveTurn;
    uint64_t m_buffered;
    uint64_t m_forwarded;
    uint64_t m_dropped;
    std::vector<uint64_t> m_droppedByPort;
    std::string m_firstDropReason;
    Ptr<CreditLinkWatchdog> m_watchdog;

    TracedCallback<Ptr<const Packet>, uint32_t, uint32_t> m_forwardTrace;
    TracedCallback<Ptr<const Packet>, uint32_t> m_dropTrace;
};

} // namespace ns3

#endif
