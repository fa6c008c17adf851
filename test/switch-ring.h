/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Four (or n) credit switches in a ring, one host on each, every route clockwise: the
// cyclic buffer dependency that the credit and PFC deadlock tests lock up.
#ifndef AI_FABRIC_TEST_SWITCH_RING_H
#define AI_FABRIC_TEST_SWITCH_RING_H

#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-switch.h"
#include "ns3/node-container.h"

#include <string>
#include <vector>

namespace ns3
{

struct SwitchRing
{
    NodeContainer hosts;
    NodeContainer switches;
    // Host i's device towards switch i (switch port 0).
    std::vector<Ptr<CreditLinkNetDevice>> hostDevices;
    // The ring links' names, switch i to switch i + 1.
    std::vector<std::string> ringLinks;
};

// Installs the ring with \p helper's attributes; switch i routes destination i to its host
// and every other one to switch i + 1.
inline SwitchRing
BuildSwitchRing(CreditLinkHelper& helper, uint32_t n)
{
    SwitchRing ring;
    ring.hosts.Create(n);
    ring.switches.Create(n);
    std::vector<Ptr<CreditSwitch>> cores;
    for (uint32_t i = 0; i < n; ++i)
    {
        cores.push_back(helper.InstallSwitch(ring.switches.Get(i)));
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        const NetDeviceContainer l = helper.Install(ring.hosts.Get(i), ring.switches.Get(i));
        ring.hostDevices.push_back(DynamicCast<CreditLinkNetDevice>(l.Get(0)));
    }
    std::vector<uint32_t> clockwise(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        const NetDeviceContainer l =
            helper.Install(ring.switches.Get(i), ring.switches.Get((i + 1) % n));
        ring.ringLinks.push_back(DynamicCast<CreditLinkNetDevice>(l.Get(0))->GetLinkName());
        clockwise[i] = cores[i]->GetPortIndex(l.Get(0));
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t d = 0; d < n; ++d)
        {
            cores[i]->SetRoute(d, {d == i ? 0u : clockwise[i]});
        }
    }
    return ring;
}

} // namespace ns3

#endif // AI_FABRIC_TEST_SWITCH_RING_H
