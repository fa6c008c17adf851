/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-helper.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/credit-link-channel.h"
#include "ns3/credit-link-helper.h"
#include "ns3/infiniband-headers.h"
#include "ns3/infiniband-link-preset.h"
#include "ns3/infiniband-pcap-writer.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandHelper");

namespace
{

void
PcapSink(Ptr<InfinibandPcapWriter> writer,
         const InfinibandNetDevice* device,
         Ptr<const Packet> packet,
         uint32_t vc)
{
    if (device->RealPacketsOf(packet->GetSize()) == 1)
    {
        writer->Write(Simulator::Now(), packet);
        return;
    }
    for (const auto& real : device->SplitBurst(packet)) // as ibdump would see a burst
    {
        writer->Write(Simulator::Now(), real);
    }
}

} // namespace

InfinibandHelper::InfinibandHelper()
    : m_ipoib(Create<InfinibandIpoibTable>())
{
    m_deviceFactory.SetTypeId("ns3::InfinibandNetDevice");
    m_deviceFactory.Set("FlowControlFrameBytes",
                        UintegerValue(InfinibandFlowControlPacket::SIZE_BYTES));
    m_deviceFactory.Set("CreditUnitBytes", UintegerValue(64));
    m_channelFactory.SetTypeId("ns3::CreditLinkChannel");
    m_switchFactory.SetTypeId("ns3::InfinibandSwitch");
    m_smFactory.SetTypeId("ns3::InfinibandSubnetManager");
    m_watchdogFactory.SetTypeId("ns3::CreditLinkWatchdog");
}

void
InfinibandHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
InfinibandHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

void
InfinibandHelper::SetSwitchAttribute(std::string name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

void
InfinibandHelper::SetSubnetManagerAttribute(std::string name, const AttributeValue& value)
{
    m_smFactory.Set(name, value);
}

void
InfinibandHelper::SetWatchdogAttribute(std::string name, const AttributeValue& value)
{
    m_watchdogFactory.Set(name, value);
}

Ptr<CreditLinkWatchdog>
InfinibandHelper::GetWatchdog()
{
    if (!m_watchdog)
    {
        m_watchdog = m_watchdogFactory.Create<CreditLinkWatchdog>();
    }
    return m_watchdog;
}

Ptr<InfinibandIpoibTable>
InfinibandHelper::GetIpoibTable() const
{
    return m_ipoib;
}

Ptr<InfinibandSwitch>
InfinibandHelper::InstallSwitch(Ptr<Node> node)
{
    Ptr<InfinibandSwitch> sw = node->GetObject<InfinibandSwitch>();
    if (!sw)
    {
        sw = m_switchFactory.Create<InfinibandSwitch>();
        node->AggregateObject(sw);
        GetWatchdog()->Watch(Ptr<CreditSwitch>(sw));
        m_switches.push_back(sw);
    }
    return sw;
}

Ptr<InfinibandNetDevice>
InfinibandHelper::InstallDevice(Ptr<Node> node, uint32_t ibPort)
{
    Ptr<InfinibandNetDevice> device = m_deviceFactory.Create<InfinibandNetDevice>();
    node->AddDevice(device);
    if (Ptr<InfinibandSwitch> sw = node->GetObject<InfinibandSwitch>())
    {
        if (ibPort == 0)
        {
            sw->AddPort(device);
        }
        else
        {
            sw->AddIbPort(device, ibPort);
        }
    }
    else
    {
        device->SetIpoibTable(m_ipoib);
    }
    GetWatchdog()->Watch(Ptr<CreditLinkNetDevice>(device));
    m_devices.push_back(device);
    return device;
}

NetDeviceContainer
InfinibandHelper::Connect(Ptr<Node> a, Ptr<Node> b)
{
    Ptr<CreditLinkChannel> channel = CreateCreditLinkChannel(m_channelFactory, a, b);
    Ptr<InfinibandNetDevice> da = InstallDevice(a, 0);
    Ptr<InfinibandNetDevice> db = InstallDevice(b, 0);
    da->Attach(channel);
    db->Attach(channel);
    NetDeviceContainer devices;
    devices.Add(da);
    devices.Add(db);
    return devices;
}

std::string
InfinibandHelper::TryBuild(const InfinibandTopology& topology, InfinibandFabric& fabric)
{
    fabric = InfinibandFabric();
    fabric.topology = topology;
    fabric.subnetManager = m_smFactory.Create<InfinibandSubnetManager>();
    fabric.subnetManager->SetTopology(topology);
    std::string error = fabric.subnetManager->TryRoute();
    if (!error.empty())
    {
        return error;
    }
    const uint32_t n = topology.GetNNodes();
    std::vector<Ptr<Node>> nodes(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        nodes[i] = CreateObject<Node>();
        if (topology.IsSwitch(i))
        {
            fabric.switches.Add(nodes[i]);
            fabric.switchCores.push_back(InstallSwitch(nodes[i]));
        }
        else
        {
            fabric.hosts.Add(nodes[i]);
        }
    }
    // [node][port] -> device; switch ports take their IB port number.
    std::vector<std::map<uint32_t, Ptr<InfinibandNetDevice>>> port(n);
    for (const auto& link : topology.GetLinks())
    {
        Ptr<CreditLinkChannel> channel = m_channelFactory.Create<CreditLinkChannel>();
        Ptr<InfinibandNetDevice> da = InstallDevice(nodes[link.nodeA], link.portA);
        Ptr<InfinibandNetDevice> db = InstallDevice(nodes[link.nodeB], link.portB);
        da->Attach(channel);
        db->Attach(channel);
        port[link.nodeA][link.portA] = da;
        port[link.nodeB][link.portB] = db;
    }
    Ptr<InfinibandSubnetManager> sm = fabric.subnetManager;
    BooleanValue smAdaptive;
    sm->GetAttribute("AdaptiveRouting", smAdaptive);
    for (uint32_t i = 0; i < n; ++i)
    {
        if (topology.IsSwitch(i))
        {
            Ptr<InfinibandSwitch> sw = nodes[i]->GetObject<InfinibandSwitch>();
            sw->SetLid(sm->GetLid(i));
            const std::vector<uint8_t>& lft = sm->GetForwardingTable(i);
            std::vector<std::vector<uint8_t>> groups;
            if (smAdaptive.Get())
            {
                groups.resize(lft.size());
                for (uint32_t dlid = 0; dlid < lft.size(); ++dlid)
                {
                    groups[dlid] = sm->GetAdaptiveRoutingGroup(i, static_cast<uint16_t>(dlid));
                }
            }
            sw->SetForwardingTable(lft, groups);
            for (const auto& [p, device] : port[i])
            {
                fabric.allDevices.Add(device);
            }
            continue;
        }
        if (port[i].empty())
        {
            return "InfinibandHelper: " + topology.Describe(i) + " has no connected port";
        }
        for (const auto& [p, device] : port[i])
        {
            device->SetLid(sm->GetLid(i, p));
            fabric.allDevices.Add(device);
        }
        fabric.hostDevices.Add(port[i].begin()->second);
        fabric.hostLids.push_back(sm->GetLid(i, port[i].begin()->first));
    }
    return Validate();
}

InfinibandFlowFabric
InfinibandHelper::DescribeFlowFabric(Ptr<InfinibandSubnetManager> sm,
                                     std::vector<uint32_t> hcaNodes,
                                     std::vector<int64_t> nodeIds) const
{
    NS_LOG_FUNCTION(this << sm << hcaNodes.size());
    InfinibandFlowFabric f;
    f.subnetManager = sm;
    f.hcaNodes = std::move(hcaNodes);
    f.nodeIds = std::move(nodeIds);
    // One port as InstallDevice creates it (HCAs and switch ports alike).
    Ptr<InfinibandNetDevice> device = m_deviceFactory.Create<InfinibandNetDevice>();
    f.signalling_bps = device->GetDataRate().GetBitRate();
    f.encodingEfficiency = device->GetEncodingEfficiency();
    f.ibMtu = device->GetIbMtu();
    f.maxBurstPackets = device->GetMaxBurstPackets();
    UintegerValue v;
    device->GetAttribute("TxQueueBytes", v);
    f.txQueueBytes = v.Get();
    device->GetAttribute("MessageQueueBytes", v);
    f.messageQueueBytes = v.Get();
    device->GetAttribute("OverheadBytes", v);
    f.framingBytes = static_cast<uint32_t>(v.Get());
    device->GetAttribute("LocalQp", v);
    f.localQp = static_cast<uint32_t>(v.Get());
    f.rxBufferBytes = device->GetReceiveBufferBytes(0);
    for (uint32_t vl = 1; vl < device->GetNumVcs(); ++vl)
    {
        f.rxBufferBytes = std::min(f.rxBufferBytes, device->GetReceiveBufferBytes(vl));
    }
    TimeValue delay;
    m_channelFactory.Create<CreditLinkChannel>()->GetAttribute("Delay", delay);
    f.propagation = delay.Get();
    Ptr<InfinibandSwitch> sw = m_switchFactory.Create<InfinibandSwitch>();
    TimeValue traversal;
    sw->GetAttribute("TraversalLatency", traversal);
    f.traversal = traversal.Get();
    f.cutThroughBytes = sw->GetCutThroughBytes();
    // InfinibandSwitch::SetForwardingTable takes the groups when it routes adaptively and
    // the subnet manager computed them.
    BooleanValue switchAdaptive;
    sw->GetAttribute("AdaptiveRouting", switchAdaptive);
    BooleanValue smAdaptive;
    sm->GetAttribute("AdaptiveRouting", smAdaptive);
    f.adaptiveRouting = switchAdaptive.Get() && smAdaptive.Get();
    return f;
}

InfinibandFabric
InfinibandHelper::Build(const InfinibandTopology& topology)
{
    InfinibandFabric fabric;
    InfinibandAbortOnError(TryBuild(topology, fabric));
    return fabric;
}

std::string
InfinibandHelper::TryBuildFatTree(uint32_t switchRadix,
                                  uint32_t numHosts,
                                  double oversubscription,
                                  InfinibandFabric& fabric)
{
    InfinibandTopology topology;
    const std::string error =
        InfinibandTopology::TryFatTree(switchRadix, numHosts, oversubscription, topology);
    if (!error.empty())
    {
        return error;
    }
    return TryBuild(topology, fabric);
}

InfinibandFabric
InfinibandHelper::BuildFatTree(uint32_t switchRadix, uint32_t numHosts, double oversubscription)
{
    InfinibandFabric fabric;
    InfinibandAbortOnError(TryBuildFatTree(switchRadix, numHosts, oversubscription, fabric));
    return fabric;
}

std::string
InfinibandHelper::Validate() const
{
    for (const auto& device : m_devices)
    {
        const std::string e = device->Validate();
        if (!e.empty())
        {
            return e;
        }
    }
    for (const auto& sw : m_switches)
    {
        const std::string e = sw->Validate();
        if (!e.empty())
        {
            return e;
        }
    }
    return "";
}

void
InfinibandHelper::PopulateIpoib(const NetDeviceContainer& devices)
{
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        Ptr<InfinibandNetDevice> device = DynamicCast<InfinibandNetDevice>(devices.Get(i));
        NS_ABORT_MSG_IF(!device, "PopulateIpoib: device " << i << " is not InfiniBand");
        Ptr<Ipv4> ipv4 = device->GetNode()->GetObject<Ipv4>();
        if (!ipv4)
        {
            continue;
        }
        const int32_t interface = ipv4->GetInterfaceForDevice(device);
        if (interface < 0)
        {
            continue;
        }
        for (uint32_t a = 0; a < ipv4->GetNAddresses(interface); ++a)
        {
            m_ipoib->Add(ipv4->GetAddress(interface, a).GetLocal(), device->GetLid());
        }
    }
}

void
InfinibandHelper::EnablePcap(const std::string& prefix, Ptr<NetDevice> device)
{
    Ptr<InfinibandNetDevice> ib = DynamicCast<InfinibandNetDevice>(device);
    NS_ABORT_MSG_IF(!ib, "InfinibandHelper::EnablePcap: not an InfinibandNetDevice");
    auto writer = Create<InfinibandPcapWriter>();
    writer->Open(prefix + "-" + std::to_string(device->GetNode()->GetId()) + "-" +
                 std::to_string(device->GetIfIndex()) + ".pcap");
    // Data packets both ways, as ibdump sees them at the port; flow-control
    // packets are consumed by the link layer and never reach these traces.
    // Bound with PcapSink's own parameter type: ns-3's Callback downcasts the bound
    // implementation to exactly that type (UBSan flags a non-const pointer here).
    const InfinibandNetDevice* self = PeekPointer(ib);
    ib->TraceConnectWithoutContext("TxBegin", MakeBoundCallback(&PcapSink, writer, self));
    ib->TraceConnectWithoutContext("Rx", MakeBoundCallback(&PcapSink, writer, self));
}

void
InfinibandHelper::EnablePcap(const std::string& prefix, const NetDeviceContainer& devices)
{
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        EnablePcap(prefix, devices.Get(i));
    }
}

} // namespace ns3
