/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_A10_CONGESTION_CONTROL_H
#define AI_FABRIC_INFINIBAND_A10_CONGESTION_CONTROL_H

#include "ns3/event-id.h"
#include "ns3/infiniband-congestion-control.h"
#include "ns3/traced-callback.h"

#include <unordered_map>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * IBA Annex A10 congestion control at an HCA.  A received packet with BTH.FECN
 * is answered with a CNP carrying BTH.BECN to its source; a BECN raises the
 * source's CCT index (CCTI) for that destination LID by CctiIncrease, up to
 * CctiLimit (rate decrease); every CctiTimer each CCTI drops by one down to
 * CctiMin (rate increase).  The CCT is linear: entry i delays the injection of
 * the next packet towards that LID by i x IpdStep after the previous one was
 * queued; a burst of k real packets waits k such delays.
 */
class InfinibandA10CongestionControl : public InfinibandCongestionControl
{
  public:
    /// (DLID, new CCT index).
    typedef void (*CctiTracedCallback)(uint16_t dlid, uint32_t ccti);

    static TypeId GetTypeId();
    InfinibandA10CongestionControl();

    std::string GetName() const override;
    Ptr<InfinibandCongestionControl> Fork() const override;
    bool NotifyFecn(uint16_t slid) override;
    Time GetNextInjection(uint16_t dlid) override;
    void NotifySent(uint16_t dlid, uint32_t realPackets) override;
    void NotifyBecn(uint16_t dlid) override;
    uint32_t GetCcti(uint16_t dlid) const override;

  protected:
    void DoDispose() override;

  private:
    struct Flow
    {
        uint32_t ccti{0};
        Time nextInjection;
    };

    void CctiTimer();

    // attributes
    uint32_t m_cctiIncrease;
    uint32_t m_cctiLimit;
    uint32_t m_cctiMin;
    Time m_cctiTimer;
    Time m_ipdStep;

    std::unordered_map<uint16_t, Flow> m_flows; //!< by DLID
    EventId m_cctiEvent;
    TracedCallback<uint16_t, uint32_t> m_cctiTrace;
};

} // namespace ns3

#endif
