/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_GPU_TRANSPORT_H
#define AI_FABRIC_GPU_TRANSPORT_H

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"
#include "ns3/transport-plane.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ns3
{

class FlowTransportPlane;
class ResultsDatabase;

/**
 * A message standing for several of a ring's (SendMessage): \p steps consecutive steps
 * of bytes / steps each, in series, each of \p loops messages per lane queued one after
 * another (a ring's loops), on \p lanes channels side by side (bytes summed over them).
 * Flow planes only: it is one flow of weight \p lanes, and each step after the first adds
 * what a step's messages pay besides their bytes.  With F the fixed cost of a message (the
 * plane's SoftwareLatency, \p stepLatency: the sender's per-step cost such as the
 * protocol's hop latency, and the path's tail latency for the step's first packet), T the
 * step's bytes at the sender's line rate and P = \p stepPosting (a serial cost of the
 * sender that overlaps the transfers: its proxy posting the lanes' messages one after
 * another), per-step messages go a step every max(F + T / loops, T, P): a loop's message
 * after the one before it, the queued loops' messages back to back.  The flow carries T of
 * it, each further step adds the rest.  So alone and uncontended its time is the steps'
 * latencies plus its bytes at the line rate, as the messages in series give.
 *
 * \p pieceBytes (a ring's uneven loop, whose ranks send pieces of different sizes): the
 * largest piece of a step, per lane and loop.  The ring goes in lockstep, so every step
 * lasts as long as a step of such pieces (T and the period from it) while the flow carries
 * only the rank's own bytes; the rest of those steps' transfer times is waited after it.
 * Alone its time is that of an aggregate of the largest pieces.  0: the bytes are the
 * steps' equal pieces.
 *
 * \p channelPaced (a ring inside one NVLink domain, where no proxy posts the steps): a lane's
 * steps are paced by its receiving channel when that is slower than its share of the line.
 * Then a step's message waits for its first packet to be in (injection and path, not only
 * the path's tail) before the channel takes it, and the rank's lanes' first messages leave
 * in turn, one piece at the line rate each, so lane k's chain runs k such times behind the
 * first's to the end of the pass (lanes - 1 of them on its time).  A Simple step's loops
 * are its slices: their fences (the channel's per-message step) are paid in series in the
 * first step as in the others.
 */
struct RingStepAggregate
{
    uint32_t steps{1};
    uint32_t lanes{1};
    uint32_t loops{1};
    Time stepLatency;
    Time stepPosting;
    uint64_t pieceBytes{0};
    bool channelPaced{false};
};

/**
 * \ingroup ai-fabric
 * GPU-to-GPU messages (RDMA writes, NVLink copies) over one or more
 * TransportPlanes.  A message is segmented into packets of AdaptivePacketBytes:
 * the plane's fine packets (GetMaxPayloadBytes()) for small messages, bursts of
 * up to GetMaxBurstBytes() for large ones, keeping at least MinPacketsPerMessage
 * packets per message (events grow with packets, not bytes).  It waits the
 * plane's SoftwareLatency after submission, then its packets go out.  Messages
 * of one (src, dst, channel) are FIFO: only the head message injects.  The
 * heads of all of a rank's active pairs on one plane share its device
 * round-robin, one packet each turn, so concurrent messages split the injection
 * bandwidth; a refused packet parks the rank until the plane's TxReady (no
 * polling).
 *
 * The receiver's completion callback fires when it holds the last byte; the
 * sender's fires NotificationLatency later, when the completion (the RDMA
 * acknowledgement) is back.  No rank acts on another rank's state in the same
 * instant, which is what lets a run be split over processes (doc/cluster.md):
 * then each process sends the messages of its ranks; a message whose receiver
 * is elsewhere carries its size and its client's key on its packets, the
 * receiving process completes it and calls the client's received handler, and
 * the acknowledgement goes back as a notification through ns-3's MpiInterface.
 * The sender's process writes the `flows` row when the acknowledgement is in.
 */
class GpuTransport : public Object
{
  public:
    typedef Callback<void> DoneCallback;

    /// SendMessage's aggregate of ring steps (RingStepAggregate).
    typedef RingStepAggregate Aggregate;

    /// (messageId, srcRank, dstRank, bytes, plane index): the plane SendMessage chose, so
    /// per-plane accounting reads the one decision instead of selecting again.
    typedef void (*MessageTracedCallback)(uint64_t, uint32_t, uint32_t, uint64_t, uint32_t);
    /// (messageId, srcRank, dstRank, bytes, plane index, duration since submission)
    typedef void (
        *MessageDoneTracedCallback)(uint64_t, uint32_t, uint32_t, uint64_t, uint32_t, Time);

    static TypeId GetTypeId();
    GpuTransport();
    ~GpuTransport() override;

    /// \return the plane's index; plane selection tries planes in this order.
    uint32_t AddPlane(Ptr<TransportPlane> plane);
    uint32_t GetNPlanes() const;
    Ptr<TransportPlane> GetPlane(uint32_t index) const;
    /// Explicit choice for one ordered pair, overriding "first plane that can reach".
    void SetPlaneForPair(uint32_t srcRank, uint32_t dstRank, uint32_t planeIndex);
    /// (srcRank, dstRank) -> plane index, or -1 to fall back to "first that can reach";
    /// e.g. the cluster builder's rule (NVLink inside a domain, InfiniBand across).
    typedef Callback<int32_t, uint32_t, uint32_t> PlaneSelector;
    void SetPlaneSelector(PlaneSelector selector);
    /// Plane index for (src, dst): explicit pair, then the selector, then the first
    /// plane that can reach; -1 when none reaches.  SendMessage calls it once per
    /// message and keeps the result with the message (traces, flows row, injection).
    int32_t SelectPlane(uint32_t srcRank, uint32_t dstRank) const;
    /// True when SendMessage(src, dst) would find a plane: for checking a schedule
    /// before any of its messages exists.
    bool CanReach(uint32_t srcRank, uint32_t dstRank) const;
    /// True when some plane has this rank.
    bool HasRank(uint32_t rank) const;

    /// Every completed message becomes a `flows` row of \p db.
    void SetResultsDatabase(Ptr<ResultsDatabase> db);

    /**
     * Send \p bytes from \p srcRank to \p dstRank.  Messages with the same
     * (src, dst, channel) complete in submission order.  \p opId goes to the
     * flows row.  \p delay: waited after the plane's SoftwareLatency before the first
     * packet (the collective protocol's per-step cost).  \p channelRate: the collective
     * channel's copy/reduce limit at the receiver (messages of one (dst, channel) are
     * taken no faster; 0 = none), charged as the plane's EndpointRate.  \p channelStep: a
     * fixed time that (dst, channel) spends on the message besides its bytes, in series with
     * the channel's other messages (NCCL Simple's per-step flag wait and fence); a receiver
     * in another process is not charged it.  \p aggregate: the ring steps it stands for
     * (flow planes only; channelRate is then per lane).  \p sinkChannel: the receiving
     * channel whose rate and step the message is charged to, when not \p channel
     * (SAME_CHANNEL): messages of several queues taken by one sink, as the connections of
     * an algorithm whose rate NCCL gives per rank rather than per connection.  \throws
     * std::invalid_argument if no plane reaches dst or src == dst.  \return the message id.
     */
    uint64_t SendMessage(uint32_t srcRank,
                         uint32_t dstRank,
                         uint64_t bytes,
                         DoneCallback onSenderDone,
                         DoneCallback onReceiverDone,
                         uint32_t channel = 0,
                         int64_t opId = -1,
                         uint8_t client = 0,
                         uint64_t key = 0,
                         Time delay = Time(0),
                         DataRate channelRate = DataRate(0),
                         Time channelStep = Time(0),
                         const Aggregate& aggregate = Aggregate(),
                         uint32_t sinkChannel = SAME_CHANNEL);
    /// SendMessage's sinkChannel: the message's own channel.
    static constexpr uint32_t SAME_CHANNEL = UINT32_MAX;
    /// True when \p plane moves messages as flows (a FlowTransportPlane).
    bool IsFluid(uint32_t plane) const;

    /// A notification client (CollectiveEngine, WorkloadReplay): Notify's (a, b) arrive at
    /// \p notified; a message with this client whose sender is in another process calls
    /// \p received(key) where onReceiverDone would have been called.
    typedef Callback<void, uint64_t, uint64_t> NotifiedCallback;
    typedef Callback<void, uint64_t> ReceivedCallback;
    uint8_t AddClient(NotifiedCallback notified, ReceivedCallback received);
    /// (a, b) reach \p client in process \p systemId one NotificationLatency from now.
    void Notify(uint32_t systemId, uint8_t client, uint64_t a, uint64_t b);
    /// Process (ns-3 system id of the rank's node) that simulates \p rank; 0 in one process.
    uint32_t GetSystemOf(uint32_t rank) const;
    bool IsLocal(uint32_t rank) const;
    /// Processes the run is split over (1 unless SetDistributed).
    uint32_t GetNSystems() const;
    /// (systemId, delay, packet): hands a notification to another process.
    typedef Callback<void, uint32_t, Time, Ptr<Packet>> RemoteSender;
    /// A run split over \p nSystems processes (ClusterHelper, with ns-3's MpiInterface):
    /// message ids become unique across processes (id ≡ system id mod nSystems).
    void SetDistributed(uint32_t nSystems, RemoteSender sender);
    /// A notification packet from another process.
    void ReceiveRemote(Ptr<Packet> packet);
    /// Process of each rank (index: rank), instead of its node's system id.
    void SetRankSystems(const std::vector<uint32_t>& systemOfRank);

    /// One-way latency of a notification between ranks (ACK, "peer ready", "done").
    Time GetNotificationLatency() const;

    uint64_t GetRxBytes(uint32_t rank) const;
    uint64_t GetTxBytes(uint32_t rank) const;
    uint64_t GetMessagesCompleted() const;
    uint64_t GetMessagesInFlight() const;

  protected:
    void DoDispose() override;

  private:
    struct PairQueue;
    struct Injector;

    struct Message
    {
        uint64_t id{0};
        uint32_t src{0};
        uint32_t dst{0};
        uint32_t plane{0};
        uint64_t bytes{0};
        uint64_t packets{0};
        uint32_t packetBytes{0}; //!< payload of every packet but the last (not striped)
        /// A striped message's lanes (the plane's GetStripeLinks) and rounds: packet i is
        /// StripePacketBytes(bytes, ..., i) on lane i % lanes; null: packetBytes each.
        const std::vector<uint32_t>* stripe{nullptr};
        uint32_t stripeLinks{0};
        uint32_t rounds{0};
        uint32_t channel{0};
        uint32_t sinkChannel{0}; //!< the receiving channel charged (SendMessage)
        uint64_t channelRate_bit_per_s{0};
        Time channelStep;      //!< fixed time of (dst, sinkChannel) per message, in series
        Time aggregateLatency; //!< an Aggregate's other steps: completes this much later
        uint32_t lanes{1};     //!< an Aggregate's lanes: the flow's weight
        uint64_t nextSeq{0};
        uint64_t injectedBytes{0};
        uint64_t receivedPackets{0};
        Time notBefore; //!< the receiving endpoint's rate lets it complete no earlier
        Time submitted;
        Time firstInjected;
        bool eligible{false};
        bool reserved{false}; //!< the receiving endpoint's charge is booked (notBefore)
        int64_t opId{-1};
        bool remote{false}; //!< the receiver is in another process
        uint8_t client{0};
        uint64_t key{0};
        PairQueue* pair{nullptr};
        DoneCallback senderDone;
        DoneCallback receiverDone;
    };

    struct PairQueue
    {
        Injector* injector{nullptr};
        std::deque<Message*> messages;
        bool inRing{false};
        uint64_t order{0};
    };

    struct Injector
    {
        uint32_t plane{0};
        uint32_t src{0};
        std::deque<PairQueue*> ring; //!< pairs whose head message may inject
        bool blocked{false};
        bool pumping{false};
        std::vector<PairQueue*> arriving;
        bool flushPending{false};
        /// Its (destination, channel) queues and their `order` keys, side by side: a rank
        /// sends to few peers, so a short scan of the keys beats a hash over all pairs of
        /// the cluster; past kPairScan of them an index takes over.
        std::vector<uint64_t> pairOrders;
        std::vector<std::unique_ptr<PairQueue>> pairs;
        std::unordered_map<uint64_t, PairQueue*> pairIndex;
    };

    static constexpr std::size_t kPairScan = 16;
    /// The queue of messages from \p inj's rank to \p dst on \p channel, made on first use.
    PairQueue* GetPair(Injector* inj, uint32_t dst, uint32_t channel);

    void FlushArrivals(Injector* inj);

    /// Flow-level planes (FlowTransportPlane): a message is one flow; the next message of
    /// its (destination, channel) queue starts when it has drained at the source.
    void StartFluid(Message* m);
    Message* FluidMessage(uint64_t messageId);
    void FluidFirstIn(uint64_t messageId);
    void FluidDrained(uint64_t messageId);
    void FluidDelivered(uint64_t messageId);

    Injector* GetInjector(uint32_t plane, uint32_t src);

    /// How a message is cut into packets: \p packetBytes each, or striped over lanes.
    struct Segmentation
    {
        uint64_t packets{0};
        uint32_t packetBytes{0};
        const std::vector<uint32_t>* stripe{nullptr}; //!< the lanes' links; null: not striped
        uint32_t stripeLinks{0};
        uint32_t rounds{0};
    };

    /// Packets of a message of \p bytes from \p src to \p dst on \p plane: striped when
    /// the plane has lanes and the narrowest lane's share fills a fine packet, else
    /// AdaptivePacketBytes.
    Segmentation Segment(uint32_t plane, uint32_t src, uint32_t dst, uint64_t bytes) const;
    void MakeEligible(Message* m);
    void Pump(Injector* inj);
    /// The one ready path: every plane's TxReady hook (TransportPlane::NotifyTxReady,
    /// bound to the plane's index in AddPlane) calls this synchronously, in the event of
    /// the device's own "room again" signal, and it resumes the rank's injector on that
    /// plane; nothing is rescheduled in between, so the device decides the event order.
    void PlaneReady(uint32_t plane, uint32_t srcRank);
    void Deliver(uint32_t plane,
                 uint32_t srcRank,
                 uint32_t dstRank,
                 uint32_t payloadBytes,
                 TransportTag tag);
    void Complete(Message* m);
    /// The plane's EndpointRate at the receiving rank, when a message's first packet is in:
    /// \return when the endpoint will have taken all \p bytes (now when the rate is 0),
    /// the channel also its \p channelStep after them.
    Time ReserveEndpoint(uint32_t plane,
                         uint32_t dstRank,
                         uint64_t bytes,
                         uint32_t channel,
                         uint64_t channelRate_bit_per_s,
                         Time channelStep,
                         Time firstByte);
    /// When the first byte of \p m was in, its first packet (\p payloadBytes, packet
    /// \p sequence) being in now: a striped message's first round comes in on every lane at
    /// once, each packet at its lane's share of the line; other packets are taken as in.
    Time FirstByteIn(const Message* m, uint32_t payloadBytes, uint32_t sequence) const;
    /// Run \p fn at \p notBefore, or now when that is not later.
    static void AtOrNow(Time notBefore, std::function<void()> fn);
    /// The last packet of a remote message is in (and the endpoint has taken it).
    void CompleteRemote(uint32_t plane,
                        uint32_t srcRank,
                        uint32_t dstRank,
                        const TransportTag& tag,
                        uint64_t bytes);
    void WriteFlow(const Message* m, Time end);
    /// A packet of a message sent by another process's rank.
    void DeliverRemote(uint32_t plane,
                       uint32_t srcRank,
                       uint32_t dstRank,
                       uint32_t payloadBytes,
                       const TransportTag& tag);
    /// The acknowledgement of a message whose receiver is in another process.
    void Acknowledged(uint64_t messageId, uint64_t endNs);
    void Dispatch(uint8_t client, uint64_t a, uint64_t b);

    struct Client
    {
        NotifiedCallback notified;
        ReceivedCallback received;
    };

    struct RemoteRx
    {
        uint64_t bytes{0};
        uint64_t packets{0};
        uint64_t received{0};
        Time notBefore;
    };

    uint64_t m_nextId;
    std::vector<Ptr<TransportPlane>> m_planes;
    std::vector<std::pair<uint32_t, uint32_t>> m_planeUnits; //!< (fine, burst) payload bytes
    std::vector<FlowTransportPlane*> m_fluid; //!< [plane]: null for packet-level planes
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_pairPlane;
    PlaneSelector m_selector;
    std::unordered_map<uint64_t, std::unique_ptr<Message>> m_messages;

    /// [plane][srcRank]: null until the rank first sends on the plane.
    std::vector<std::vector<std::unique_ptr<Injector>>> m_injectors;
    std::vector<uint64_t> m_rxBytes;
    /// [plane][rank]: when the rank's endpoint has taken everything received on the plane.
    std::vector<std::vector<Time>> m_endpointFree;
    /// [dst rank][channel]: when that collective channel has taken its messages.
    std::vector<std::vector<Time>> m_channelFree;
    std::vector<uint64_t> m_txBytes;
    uint64_t m_completed;
    Time m_notificationLatency;
    bool m_instantEndInjection{false};
    uint32_t m_minPacketsPerMessage;
    Ptr<ResultsDatabase> m_db;
    std::vector<Client> m_clients; //!< [0]: the transport's own acknowledgements
    uint32_t m_nSystems{1};
    uint32_t m_idStride{1};
    RemoteSender m_remoteSender;
    mutable std::vector<uint32_t> m_systemOfRank;
    std::unordered_map<uint64_t, RemoteRx> m_remoteRx;

    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, uint32_t> m_sentTrace;
    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, uint32_t, Time> m_receivedTrace;
};

} // namespace ns3

#endif
