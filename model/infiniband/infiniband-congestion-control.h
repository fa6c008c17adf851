/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_CONGESTION_CONTROL_H
#define AI_FABRIC_INFINIBAND_CONGESTION_CONTROL_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Congestion control of an InfiniBand HCA, as a strategy the HCA calls (the way
 * TcpCongestionOps hangs off a TCP socket).  The switches mark BTH.FECN
 * (InfinibandSwitch CcEnabled); the HCA asks its strategy, at the destination
 * (notification point), whether to return a CNP with BECN, and at the source
 * (reaction point) when a packet towards a DLID may be injected, telling it what
 * was sent and which BECNs came back.  The HCA keeps the packets, the counters and
 * the CNP wire format; the strategy keeps its per-destination state.
 *
 * One object per HCA: InfinibandNetDevice forks the object it is given, so one
 * configured object can serve as the prototype of every HCA a helper installs.
 */
class InfinibandCongestionControl : public Object
{
  public:
    static TypeId GetTypeId();

    virtual std::string GetName() const = 0;
    /// A copy with the same parameters and no flow state.
    virtual Ptr<InfinibandCongestionControl> Fork() const = 0;

    /// Notification point: a data packet from \p slid arrived with BTH.FECN.
    /// \return true to return a CNP (BTH.BECN) to \p slid.
    virtual bool NotifyFecn(uint16_t slid) = 0;
    /// Reaction point: earliest time the next packet towards \p dlid may be injected
    /// (not after now: at once).  Called for every packet: keep it cheap.
    virtual Time GetNextInjection(uint16_t dlid) = 0;
    /// Reaction point: \p realPackets packets towards \p dlid were just queued.
    virtual void NotifySent(uint16_t dlid, uint32_t realPackets) = 0;
    /// Reaction point: a CNP with BTH.BECN came back from \p dlid.
    virtual void NotifyBecn(uint16_t dlid) = 0;
    /// CCT index towards \p dlid; 0 for a strategy without a CCT or before any BECN.
    virtual uint32_t GetCcti(uint16_t dlid) const;
};

/**
 * \ingroup ai-fabric
 * No congestion control: every packet goes as soon as the link takes it, FECN
 * marks are counted by the HCA but answered with no CNP, BECNs change nothing.
 */
class InfinibandNoCongestionControl : public InfinibandCongestionControl
{
  public:
    static TypeId GetTypeId();

    std::string GetName() const override;
    Ptr<InfinibandCongestionControl> Fork() const override;
    bool NotifyFecn(uint16_t slid) override;
    Time GetNextInjection(uint16_t dlid) override;
    void NotifySent(uint16_t dlid, uint32_t realPackets) override;
    void NotifyBecn(uint16_t dlid) override;
};

} // namespace ns3

#endif
