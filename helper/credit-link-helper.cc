/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-link-helper.h"

#include "ns3/abort.h"
#include "ns3/credit-link-channel.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/link-flow-control.h"
#include "ns3/pointer.h"

namespace ns3
{

Ptr<CreditLinkChannel>
CreateCreditLinkChannel(const ObjectFactory& factory, Ptr<Node> a, Ptr<Node> b)
{
    if (a->GetSystemId() == b->GetSystemId())
    {
        return factory.Create<CreditLinkChannel>();
    }
    // Looked up by name: the type exists only when ns-3 was built with MPI.
    TypeId remote;
    NS_ABORT_MSG_UNLESS(TypeId::LookupByNameFailSafe("ns3::CreditLinkRemoteChannel", &remote),
                        "credit link between node " << a->GetId() << " (system " << a->GetSystemId()
                                                    << ") and node " << b->GetId() << " (system "
                                                    << b->GetSystemId()
                                                    << ") needs ns-3 built with --enable-mpi");
    ObjectFactory f = factory;
    f.SetTypeId(remote);
    return f.Create<CreditLinkChannel>();
}

CreditLinkHelper::CreditLinkHelper()
    : m_hasArbiter(false)
{
    m_deviceFactory.SetTypeId("ns3::CreditLinkNetDevice");
    m_channelFactory.SetTypeId("ns3::CreditLinkChannel");
    m_switchFactory.SetTypeId("ns3::CreditSwitch");
    m_watchdogFactory.SetTypeId("ns3::CreditLinkWatchdog");
}

void
CreditLinkHelper::SetDeviceType(std::string type)
{
    m_deviceFactory.SetTypeId(type);
}

void
CreditLinkHelper::SetSwitchType(std::string type)
{
    m_switchFactory.SetTypeId(type);
}

void
CreditLinkHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
CreditLinkHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

void
CreditLinkHelper::SetSwitchAttribute(std::string name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

void
CreditLinkHelper::SetWatchdogAttribute(std::string name, const AttributeValue& value)
{
    NS_ABORT_MSG_IF(m_watchdog, "SetWatchdogAttribute after the watchdog was created");
    m_watchdogFactory.Set(name, value);
}

void
CreditLinkHelper::SetArbiter(std::string type)
{
    m_arbiterFactory.SetTypeId(type);
    m_hasArbiter = true;
}

void
CreditLinkHelper::SetArbiterAttribute(std::string name, const AttributeValue& value)
{
    m_arbiterFactory.Set(name, value);
}

void
CreditLinkHelper::SetFlowControl(std::string type)
{
    m_flowControlFactory.SetTypeId(type);
    m_hasFlowControl = true;
}

void
CreditLinkHelper::SetFlowControlAttribute(std::string name, const AttributeValue& value)
{
    m_flowControlFactory.Set(name, value);
}

Ptr<CreditLinkWatchdog>
CreditLinkHelper::GetWatchdog()
{
    if (!m_watchdog)
    {
        m_watchdog = m_watchdogFactory.Create<CreditLinkWatchdog>();
    }
    return m_watchdog;
}

Ptr<CreditSwitch>
CreditLinkHelper::InstallSwitch(Ptr<Node> node)
{
    Ptr<CreditSwitch> sw = node->GetObject<CreditSwitch>();
    if (!sw)
    {
        sw = m_switchFactory.Create<CreditSwitch>();
        node->AggregateObject(sw);
        GetWatchdog()->Watch(sw);
    }
    return sw;
}

Ptr<CreditLinkNetDevice>
CreditLinkHelper::InstallDevice(Ptr<Node> node)
{
    Ptr<CreditLinkNetDevice> device = m_deviceFactory.Create<CreditLinkNetDevice>();
    if (m_hasArbiter)
    {
        device->SetAttribute("Arbiter", PointerValue(m_arbiterFactory.Create<CreditArbiter>()));
    }
    if (m_hasFlowControl)
    {
        device->SetAttribute("FlowControl",
                             PointerValue(m_flowControlFactory.Create<LinkFlowControl>()));
    }
    node->AddDevice(device);
    if (Ptr<CreditSwitch> sw = node->GetObject<CreditSwitch>())
    {
        sw->AddPort(device);
    }
    GetWatchdog()->Watch(device);
    return device;
}

NetDeviceContainer
CreditLinkHelper::Install(NodeContainer c)
{
    NS_ABORT_MSG_IF(c.GetN() != 2,
                    "CreditLinkHelper::Install needs exactly two nodes, got " << c.GetN());
    return Install(c.Get(0), c.Get(1));
}

NetDeviceContainer
CreditLinkHelper::Install(Ptr<Node> a, Ptr<Node> b)
{
    Ptr<CreditLinkChannel> channel = CreateCreditLinkChannel(m_channelFactory, a, b);
    Ptr<CreditLinkNetDevice> da = InstallDevice(a);
    Ptr<CreditLinkNetDevice> db = InstallDevice(b);
    da->Attach(channel);
    db->Attach(channel);
    NetDeviceContainer devices;
    devices.Add(da);
    devices.Add(db);
    return devices;
}

} // namespace ns3
