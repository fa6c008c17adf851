/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "link-flow-control.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(LinkFlowControl);

TypeId
LinkFlowControl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::LinkFlowControl").SetParent<Object>().SetGroupName("AiFabric");
    return tid;
}

} // namespace ns3
