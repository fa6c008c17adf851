/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_HELPER_H
#define AI_FABRIC_CREDIT_LINK_HELPER_H

#include "ns3/credit-link-watchdog.h"
#include "ns3/credit-switch.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"

#include <string>

namespace ns3
{

class CreditLinkChannel;

/**
 * A channel from \p factory for a link between \p a and \p b: a
 * CreditLinkRemoteChannel with the same attributes when the two nodes belong to
 * different MPI processes (system ids), as PointToPointHelper does.  Without
 * ns-3's mpi module, nodes of different system ids are a fatal error.
 */
Ptr<CreditLinkChannel> CreateCreditLinkChannel(const ObjectFactory& factory,
                                               Ptr<Node> a,
                                               Ptr<Node> b);

/**
 * \ingroup ai-fabric
 * Builds credit links like PointToPointHelper builds point-to-point links.
 * A node with a CreditSwitch (InstallSwitch) gets each new link device as a
 * port, in installation order.  Every device and switch is watched by the
 * helper's CreditLinkWatchdog.
 */
class CreditLinkHelper
{
  public:
    CreditLinkHelper();

    /// TypeId names of the devices and switch cores (a technology's subclasses); call
    /// before their attributes.
    void SetDeviceType(std::string type);
    void SetSwitchType(std::string type);
    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    void SetChannelAttribute(std::string name, const AttributeValue& value);
    void SetSwitchAttribute(std::string name, const AttributeValue& value);
    void SetWatchdogAttribute(std::string name, const AttributeValue& value);
    /// Arbiter TypeId name (e.g. "ns3::WeightedTableArbiter"); one instance per device.
    void SetArbiter(std::string type);
    void SetArbiterAttribute(std::string name, const AttributeValue& value);
    /// Flow-control discipline TypeId name (e.g. "ns3::PriorityFlowControl") instead of
    /// credits; one instance per device.
    void SetFlowControl(std::string type);
    void SetFlowControlAttribute(std::string name, const AttributeValue& value);

    /// Two devices joined by a new channel: [0] on \p a, [1] on \p b.
    NetDeviceContainer Install(Ptr<Node> a, Ptr<Node> b);
    /// The same for a container of exactly two nodes.
    NetDeviceContainer Install(NodeContainer c);
    /// Aggregates a CreditSwitch to \p node (or returns the one it has).
    Ptr<CreditSwitch> InstallSwitch(Ptr<Node> node);

    Ptr<CreditLinkWatchdog> GetWatchdog();

  private:
    Ptr<CreditLinkNetDevice> InstallDevice(Ptr<Node> node);

    ObjectFactory m_deviceFactory;
    ObjectFactory m_channelFactory;
    ObjectFactory m_switchFactory;
    ObjectFactory m_watchdogFactory;
    ObjectFactory m_arbiterFactory;
    bool m_hasArbiter;
    ObjectFactory m_flowControlFactory;
    bool m_hasFlowControl{false};
    Ptr<CreditLinkWatchdog> m_watchdog;
};

} // namespace ns3

#endif
