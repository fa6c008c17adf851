/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_LOGGOPS_COST_H
#define AI_FABRIC_LOGGOPS_COST_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * The host side of the LogGOPS model (Hoefler, Schneider, Lumsdaine: "LogGOPSim - Simulating
 * Large-Scale Applications in the LogGOPS Model"), which WorkloadReplay charges to LogGOPS
 * schedules (GOAL) on their ranks' CPU and NIC streams; the network (L, and the wire's own
 * per-byte time) is the simulated fabric.  A message of s bytes occupies the sender's CPU for
 * o + (s-1)·O and the receiver's CPU for o + (s-1)·O when it arrives; consecutive messages of
 * one NIC start at least g + (s-1)·G apart (sends and receptions counted separately); above
 * S bytes a send completes only once the receiver matched it (rendezvous).  Defaults: those
 * of LogGOPSim's command line (doc/workload.md).  A strategy: subclass to change the costs.
 */
class LogGopsCost : public Object
{
  public:
    static TypeId GetTypeId();
    LogGopsCost();

    /// CPU time of sending, and of receiving, one message of \p bytes: o + (s-1)·O.
    virtual Time CpuOverhead(uint64_t bytes) const;
    /// Least time from one message's start on a NIC to the next one's: g + (s-1)·G.
    virtual Time NicGap(uint64_t bytes) const;
    /// False above the eager limit S: the send then waits for the receiver's match.
    virtual bool IsEager(uint64_t bytes) const;

  private:
    Time m_overhead;
    double m_overheadPerByteNs;
    Time m_gap;
    double m_gapPerByteNs;
    uint64_t m_eagerLimitBytes;
};

} // namespace ns3

#endif
