/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_FABRIC_H
#define AI_FABRIC_INFINIBAND_FABRIC_H

#include "ns3/infiniband-net-device.h"
#include "ns3/infiniband-subnet-manager.h"
#include "ns3/infiniband-switch.h"
#include "ns3/infiniband-topology.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * A built and routed InfiniBand subnet (InfinibandHelper::Build makes it of an
 * InfinibandTopology): what the layers above the devices, such as
 * InfinibandTransportPlane::AddHosts, need of it.
 */
struct InfinibandFabric
{
    InfinibandTopology topology;
    Ptr<InfinibandSubnetManager> subnetManager;
    NodeContainer hosts;            //!< topology HCAs, in topology order
    NodeContainer switches;         //!< topology switches, in topology order
    NetDeviceContainer hostDevices; //!< first connected port of each host
    std::vector<uint16_t> hostLids; //!< host index -> LID of that port
    NetDeviceContainer allDevices;  //!< every port, HCA and switch
    std::vector<Ptr<InfinibandSwitch>> switchCores;

    Ptr<InfinibandNetDevice> GetHostDevice(uint32_t host) const;
};

} // namespace ns3

#endif
