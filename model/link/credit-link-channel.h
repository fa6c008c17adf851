/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_CHANNEL_H
#define AI_FABRIC_CREDIT_LINK_CHANNEL_H

#include "ns3/channel.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/reusable-event.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ns3
{

class CreditLinkNetDevice;

/**
 * \ingroup ai-fabric
 * Full-duplex point-to-point wire between exactly two CreditLinkNetDevices.
 * Every interaction between the two ends (data, credit updates, initial
 * credits) goes through here, so a distributed variant can override it.
 * Deliveries on one direction are FIFO, so in-flight frames sit in a queue
 * with a single pending delivery event per direction.  A data frame is handed
 * to the receiver when its head is in (headTime + Delay: a cut-through switch
 * port) and carries the time its tail arrives (txTime + Delay); a receiver that
 * is not a cut-through switch gets headTime = txTime.  Head arrivals stay in
 * order: a device starts a frame only after its previous one ended.
 */
class CreditLinkChannel : public Channel
{
  public:
    static TypeId GetTypeId();
    CreditLinkChannel();

    /// Virtual: a remote variant registers its local end for messages from other processes.
    virtual void Attach(Ptr<CreditLinkNetDevice> device);
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;
    Ptr<CreditLinkNetDevice> GetPeer(const CreditLinkNetDevice* self) const;
    Time GetDelay() const;

    /// A data frame whose last bit leaves \p from after \p txTime; the receiver takes
    /// it once the first \p headTime of it (<= txTime) has crossed the wire.
    virtual void TransmitData(const CreditLinkNetDevice* from,
                              Ptr<Packet> packet,
                              uint32_t vc,
                              Time headTime,
                              Time txTime);
    /// A flow-control frame returning \p credits on \p vc; last bit leaves after \p txTime.
    virtual void TransmitCredits(const CreditLinkNetDevice* from,
                                 uint32_t vc,
                                 uint32_t credits,
                                 Time txTime);
    /// Receive buffer the peer of \p from advertises on \p vc (the initial credits).
    virtual uint32_t GetPeerReceiveBufferBytes(const CreditLinkNetDevice* from, uint32_t vc) const;
    /// Bytes the peer of \p from needs before it forwards a packet (a cut-through switch
    /// port), or 0: it takes packets at their tail.
    virtual uint32_t GetPeerCutThroughBytes(const CreditLinkNetDevice* from) const;
    bool HasFramesInFlight() const;

    /// A frame on the wire: data (packet set) or a credit update (credits on vc).
    struct WireFrame
    {
        Ptr<const Packet> packet;
        uint32_t vc;
        uint32_t credits;
    };

    /// Frames sent by \p from and not yet delivered, oldest first (conservation checks).
    virtual std::vector<WireFrame> GetFramesInFlight(const CreditLinkNetDevice* from) const;

  protected:
    void DoDispose() override;

  private:
    struct InFlight
    {
        Time arrival;       //!< of the head: when the receiver takes the frame
        Time tail;          //!< arrival of the last bit
        Ptr<Packet> packet; //!< null for a credit update
        uint32_t vc;
        uint32_t credits;
    };

    /// The frames on one direction of the wire, oldest first.  A link has a few at once
    /// (a data frame and credit updates), kept in the channel object; a deque's blocks
    /// were one more allocation to load per frame at cluster scale.  Past kInline frames
    /// they move to a vector (capacities are powers of two) until the wire is empty again.
    class WireFifo
    {
      public:
        bool empty() const
        {
            return m_size == 0;
        }

        InFlight& front()
        {
            return At(0);
        }

        const InFlight& back() const
        {
            return const_cast<WireFifo*>(this)->At(m_size - 1);
        }

        void push_back(InFlight&& frame);
        /// Puts \p frame just before the newest frame.
        void insert_before_back(InFlight&& frame);
        void pop_front();
        void clear();

        template <typename F>
        void ForEach(F f) const
        {
            for (uint32_t i = 0; i < m_size; ++i)
            {
                f(const_cast<WireFifo*>(this)->At(i));
            }
        }

      private:
        static constexpr uint32_t kInline = 4;

        uint32_t Capacity() const
        {
            return m_spill.empty() ? kInline : static_cast<uint32_t>(m_spill.size());
        }

        InFlight& At(uint32_t i)
        {
            const uint32_t slot = (m_head + i) & (Capacity() - 1);
            return m_spill.empty() ? m_inline[slot] : m_spill[slot];
        }

        std::array<InFlight, kInline> m_inline;
        std::vector<InFlight> m_spill;
        uint32_t m_head{0};
        uint32_t m_size{0};
    };

    struct Direction
    {
        WireFifo wire;
        ReusableEvent delivery;
        bool scheduled{false};
        /// The receiving node's id, the delivery's context (kept: its Node is another
        /// object to load per packet at cluster scale); NO_CONTEXT until known.
        uint32_t context{NO_CONTEXT};
    };

    static constexpr uint32_t NO_CONTEXT = 0xffffffff;

    uint32_t IndexOf(const CreditLinkNetDevice* device) const;
    void Push(uint32_t dir, InFlight&& frame);
    void Deliver(uint32_t dir);

    Time m_delay;
    std::array<Ptr<CreditLinkNetDevice>, 2> m_devices;
    uint32_t m_nDevices;
    std::array<Direction, 2> m_directions; //!< index = sending device
};

} // namespace ns3

#endif
