/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_HELPER_H
#define AI_FABRIC_INFINIBAND_HELPER_H

#include "ns3/credit-link-watchdog.h"
#include "ns3/infiniband-fabric.h"
#include "ns3/infiniband-flow-topology.h"
#include "ns3/infiniband-net-device.h"
#include "ns3/infiniband-subnet-manager.h"
#include "ns3/infiniband-switch.h"
#include "ns3/infiniband-topology.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Installs InfiniBand HCAs, switches and cables, runs the subnet manager and
 * programs LIDs and LFTs.  Device/switch/channel/SM attributes go through
 * object factories as in ns-3's other helpers; every device and switch is
 * watched by one CreditLinkWatchdog.
 */
class InfinibandHelper
{
  public:
    InfinibandHelper();

    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    void SetChannelAttribute(std::string name, const AttributeValue& value);
    void SetSwitchAttribute(std::string name, const AttributeValue& value);
    void SetSubnetManagerAttribute(std::string name, const AttributeValue& value);
    void SetWatchdogAttribute(std::string name, const AttributeValue& value);

    /// Aggregates an InfinibandSwitch to \p node (or returns the one it has).
    Ptr<InfinibandSwitch> InstallSwitch(Ptr<Node> node);
    /// One cable: [0] on \p a, [1] on \p b; a switch node gets the device as its next port.
    NetDeviceContainer Connect(Ptr<Node> a, Ptr<Node> b);

    /// Creates nodes, devices and cables for \p topology, routes it and
    /// programs every port; "" or the reason it cannot (routing, validation).
    std::string TryBuild(const InfinibandTopology& topology, InfinibandFabric& fabric);
    InfinibandFabric Build(const InfinibandTopology& topology);
    /// Leaf/spine (or 3-tier) fat tree: InfinibandTopology::TryFatTree then TryBuild.
    std::string TryBuildFatTree(uint32_t switchRadix,
                                uint32_t numHosts,
                                double oversubscription,
                                InfinibandFabric& fabric);
    InfinibandFabric BuildFatTree(uint32_t switchRadix,
                                  uint32_t numHosts,
                                  double oversubscription = 1.0);

    /// The subnet \p sm routed (rank r's HCA at topology node hcaNodes[r], on ns-3 node
    /// nodeIds[r]) with the parameters this helper's factories give the devices, switches
    /// and channels it would build, for a flow-level plane built without them.
    InfinibandFlowFabric DescribeFlowFabric(Ptr<InfinibandSubnetManager> sm,
                                            std::vector<uint32_t> hcaNodes,
                                            std::vector<int64_t> nodeIds) const;

    /// "" if every port and switch this helper installed is well configured.
    std::string Validate() const;

    /// After IPv4 addresses are assigned: IPv4 -> LID for every device in \p devices.
    void PopulateIpoib(const NetDeviceContainer& devices);
    Ptr<InfinibandIpoibTable> GetIpoibTable() const;

    /// ERF pcap of data packets sent and received by each device, as ibdump
    /// stores them (flow-control packets left out): PREFIX-<node>-<ifindex>.pcap.
    void EnablePcap(const std::string& prefix, const NetDeviceContainer& devices);
    void EnablePcap(const std::string& prefix, Ptr<NetDevice> device);

    Ptr<CreditLinkWatchdog> GetWatchdog();

  private:
    Ptr<InfinibandNetDevice> InstallDevice(Ptr<Node> node, uint32_t ibPort);

    ObjectFactory m_deviceFactory;
    ObjectFactory m_channelFactory;
    ObjectFactory m_switchFactory;
    ObjectFactory m_smFactory;
    ObjectFactory m_watchdogFactory;
    Ptr<CreditLinkWatchdog> m_watchdog;
    Ptr<InfinibandIpoibTable> m_ipoib;
    std::vector<Ptr<InfinibandNetDevice>> m_devices;
    std::vector<Ptr<InfinibandSwitch>> m_switches;
};

} // namespace ns3

#endif
