/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_LINK_FLOW_CONTROL_H
#define AI_FABRIC_LINK_FLOW_CONTROL_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace ns3
{

class CreditLinkNetDevice;

/**
 * \ingroup ai-fabric
 * A flow-control discipline of a CreditLinkNetDevice other than its own credits (the
 * default, built into the device: with no FlowControl object set, a packet starts when
 * the peer's credits cover it).  A discipline decides, per VC, whether the transmit side
 * may start its head packet, what the receive side does with an arriving packet and its
 * released buffer, and what the flow-control frames it asks the device to send carry.
 * Queues, arbiters, the switch core, the wire, the watchdog and the conservation check
 * stay the device's; one object per device (it keeps that end's state).
 */
class LinkFlowControl : public Object
{
  public:
    static TypeId GetTypeId();

    /// At link up: \p device owns this object and outlives it.  "" or what is wrong
    /// (the device aborts with it; builders call it before any event through Validate).
    virtual std::string Setup(CreditLinkNetDevice* device) = 0;
    /// Checks the configuration against \p device without changing state.
    virtual std::string Validate(const CreditLinkNetDevice* device) const = 0;

    // Transmit side.
    /// Whether \p vc may start a packet at \p now.
    virtual bool MaySend(uint32_t vc, Time now) const = 0;
    /// When a VC that may not send now may send again without a frame from the peer;
    /// Time::Max() when only a frame can release it.
    virtual Time GetResumeTime(uint32_t vc) const = 0;
    /// A flow-control frame from the peer carrying \p value for \p vc.
    virtual void ReceiveFrame(uint32_t vc, uint32_t value) = 0;

    // Receive side.
    /// A packet of \p bytes arrives on \p vc; false: it is dropped (no room).
    virtual bool Admit(uint32_t vc, uint32_t bytes) = 0;
    /// The buffer of a packet of \p bytes on \p vc is free again.
    virtual void Release(uint32_t vc, uint32_t bytes) = 0;
    /// Value the frame the device sends now carries for \p vc (it asked for one).
    virtual uint32_t TakeFrameValue(uint32_t vc) = 0;
    /// Wire bytes of one flow-control frame, whatever number of VCs it carries.
    virtual uint32_t GetFrameBytes() const = 0;

    /// Packets Admit refused; lossless ones are a violation, lossy ones are counted.
    virtual uint64_t GetDroppedPackets() const = 0;
    virtual uint64_t GetDroppedBytes() const = 0;
    virtual bool IsLossless() const = 0;
    /// Bytes of \p vc's receive buffer held now.
    virtual uint64_t GetOccupancyBytes(uint32_t vc) const = 0;
    /// Explains why \p vc may not send (watchdog reports).
    virtual void DescribeBlocked(std::ostream& os, uint32_t vc) const = 0;
};

} // namespace ns3

#endif
