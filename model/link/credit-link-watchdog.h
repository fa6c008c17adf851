/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_WATCHDOG_H
#define AI_FABRIC_CREDIT_LINK_WATCHDOG_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <string>
#include <vector>

namespace ns3
{

class CreditLinkNetDevice;
class CreditSwitch;

/**
 * \ingroup ai-fabric
 * Detects a stalled fabric (a credit deadlock): if packets are queued in any
 * watched device or switch and no frame has been sent for Timeout, it
 * reports the links and VCs whose head packet lacks credits, fires the
 * Deadlock trace, stops the simulation and, with AbortOnDeadlock, aborts.
 * It checks once per Timeout and only while something is queued, so the
 * report comes between one and two Timeouts after the last progress.
 * Livelock (packets moving, e.g. round a forwarding loop, but none reaching a
 * host or being dropped for LivelockTimeout) is reported the same way, naming
 * the links that carried packets in the last Timeout.
 */
class CreditLinkWatchdog : public Object
{
  public:
    /// Deadlock trace: the report.
    typedef void (*ReportTracedCallback)(const std::string& report);

    static TypeId GetTypeId();
    CreditLinkWatchdog();

    void Watch(Ptr<CreditLinkNetDevice> device);
    void Watch(Ptr<CreditSwitch> sw);
    /// Called by watched objects when they queue a packet.
    void Arm();

    bool HasFired() const;
    const std::string& GetReport() const;

  protected:
    void DoDispose() override;

  private:
    uint64_t Progress() const;
    /// Packets that left the fabric: received by a host device or dropped by a switch.
    uint64_t Deliveries() const;
    bool HasPendingWork() const;
    void Check();
    void Fire();
    void FireLivelock();
    void Report(const std::string& report);

    Time m_timeout;
    Time m_livelockTimeout;
    bool m_abort;
    bool m_stop;
    std::vector<Ptr<CreditLinkNetDevice>> m_devices;
    std::vector<Ptr<CreditSwitch>> m_switches;
    bool m_armed;
    bool m_fired;
    uint64_t m_lastProgress;
    uint64_t m_lastDeliveries;
    Time m_lastDeliveryTime;
    std::vector<uint64_t> m_lastTxPackets; //!< per watched device, at the previous check
    std::string m_report;
    TracedCallback<const std::string&> m_deadlockTrace;
};

} // namespace ns3

#endif
