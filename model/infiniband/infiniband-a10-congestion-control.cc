/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-a10-congestion-control.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandA10CongestionControl");
NS_OBJECT_ENSURE_REGISTERED(InfinibandA10CongestionControl);

TypeId
InfinibandA10CongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandA10CongestionControl")
            .SetParent<InfinibandCongestionControl>()
            .SetGroupName("AiFabric")
            .AddConstructor<InfinibandA10CongestionControl>()
            .AddAttribute("CctiIncrease",
                          "CCT index increase per BECN (CCTI_Increase)",
                          UintegerValue(1),
                          MakeUintegerAccessor(&InfinibandA10CongestionControl::m_cctiIncrease),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("CctiLimit",
                          "Largest CCT index (CCTI_Limit)",
                          UintegerValue(127),
                          MakeUintegerAccessor(&InfinibandA10CongestionControl::m_cctiLimit),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("CctiMin",
                          "Smallest CCT index the timer lowers to (CCTI_Min)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&InfinibandA10CongestionControl::m_cctiMin),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("CctiTimer",
                          "Period after which every CCT index drops by one (CCTI_Timer)",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&InfinibandA10CongestionControl::m_cctiTimer),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("IpdStep",
                          "Inter-packet delay of CCT entry i = i x IpdStep (a linear CCT)",
                          TimeValue(NanoSeconds(20)),
                          MakeTimeAccessor(&InfinibandA10CongestionControl::m_ipdStep),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("Ccti",
                            "CCT index towards a DLID changed: DLID, new index",
                            MakeTraceSourceAccessor(&InfinibandA10CongestionControl::m_cctiTrace),
                            "ns3::InfinibandA10CongestionControl::CctiTracedCallback");
    return tid;
}

InfinibandA10CongestionControl::InfinibandA10CongestionControl()
    : m_cctiIncrease(1),
      m_cctiLimit(127),
      m_cctiMin(0),
      m_cctiTimer(MicroSeconds(10)),
      m_ipdStep(NanoSeconds(20))
{
}

void
InfinibandA10CongestionControl::DoDispose()
{
    m_cctiEvent.Cancel();
    m_flows.clear();
    InfinibandCongestionControl::DoDispose();
}

std::string
InfinibandA10CongestionControl::GetName() const
{
    return "a10";
}

Ptr<InfinibandCongestionControl>
InfinibandA10CongestionControl::Fork() const
{
    NS_LOG_FUNCTION(this);
    Ptr<InfinibandA10CongestionControl> copy = CreateObject<InfinibandA10CongestionControl>();
    copy->m_cctiIncrease = m_cctiIncrease;
    copy->m_cctiLimit = m_cctiLimit;
    copy->m_cctiMin = m_cctiMin;
    copy->m_cctiTimer = m_cctiTimer;
    copy->m_ipdStep = m_ipdStep;
    return copy;
}

bool
InfinibandA10CongestionControl::NotifyFecn(uint16_t slid)
{
    return true;
}

Time
InfinibandA10CongestionControl::GetNextInjection(uint16_t dlid)
{
    return m_flows[dlid].nextInjection;
}

void
InfinibandA10CongestionControl::NotifySent(uint16_t dlid, uint32_t realPackets)
{
    Flow& flow = m_flows[dlid];
    flow.nextInjection =
        Simulator::Now() + m_ipdStep * (static_cast<uint64_t>(flow.ccti) * realPackets);
}

void
InfinibandA10CongestionControl::NotifyBecn(uint16_t dlid)
{
    NS_LOG_FUNCTION(this << dlid);
    Flow& flow = m_flows[dlid];
    flow.ccti = std::min(flow.ccti + m_cctiIncrease, m_cctiLimit);
    NS_LOG_LOGIC("CCTI towards " << dlid << " now " << flow.ccti);
    m_cctiTrace(dlid, flow.ccti);
    if (!m_cctiEvent.IsRunning())
    {
        m_cctiEvent =
            Simulator::Schedule(m_cctiTimer, &InfinibandA10CongestionControl::CctiTimer, this);
    }
}

void
InfinibandA10CongestionControl::CctiTimer()
{
    NS_LOG_FUNCTION(this);
    bool raised = false;
    for (auto& [dlid, flow] : m_flows)
    {
        if (flow.ccti > m_cctiMin)
        {
            flow.ccti--;
            m_cctiTrace(dlid, flow.ccti);
        }
        raised = raised || flow.ccti > m_cctiMin;
    }
    if (raised)
    {
        m_cctiEvent =
            Simulator::Schedule(m_cctiTimer, &InfinibandA10CongestionControl::CctiTimer, this);
    }
}

uint32_t
InfinibandA10CongestionControl::GetCcti(uint16_t dlid) const
{
    auto it = m_flows.find(dlid);
    return it == m_flows.end() ? 0 : it->second.ccti;
}

} // namespace ns3
