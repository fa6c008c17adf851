/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-fabric.h"

namespace ns3
{

Ptr<InfinibandNetDevice>
InfinibandFabric::GetHostDevice(uint32_t host) const
{
    return DynamicCast<InfinibandNetDevice>(hostDevices.Get(host));
}

} // namespace ns3
