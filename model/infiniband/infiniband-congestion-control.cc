/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-congestion-control.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandCongestionControl");
NS_OBJECT_ENSURE_REGISTERED(InfinibandCongestionControl);
NS_OBJECT_ENSURE_REGISTERED(InfinibandNoCongestionControl);

TypeId
InfinibandCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandCongestionControl").SetParent<Object>().SetGroupName("AiFabric");
    return tid;
}

uint32_t
InfinibandCongestionControl::GetCcti(uint16_t dlid) const
{
    return 0;
}

TypeId
InfinibandNoCongestionControl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandNoCongestionControl")
                            .SetParent<InfinibandCongestionControl>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandNoCongestionControl>();
    return tid;
}

std::string
InfinibandNoCongestionControl::GetName() const
{
    return "none";
}

Ptr<InfinibandCongestionControl>
InfinibandNoCongestionControl::Fork() const
{
    return CreateObject<InfinibandNoCongestionControl>();
}

bool
InfinibandNoCongestionControl::NotifyFecn(uint16_t slid)
{
    return false;
}

Time
InfinibandNoCongestionControl::GetNextInjection(uint16_t dlid)
{
    return Time(0);
}

void
InfinibandNoCongestionControl::NotifySent(uint16_t dlid, uint32_t realPackets)
{
}

void
InfinibandNoCongestionControl::NotifyBecn(uint16_t dlid)
{
}

} // namespace ns3
