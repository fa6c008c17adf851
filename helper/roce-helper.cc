/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "roce-helper.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/ethernet-trailer.h"
#include "ns3/log.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/pointer.h"
#include "ns3/roce-shared-buffer.h"
#include "ns3/simulator.h"
#include "ns3/trace-helper.h"
#include "ns3/uinteger.h"

#include <deque>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceHelper");

RoceHelper::RoceHelper()
{
    m_link.SetDeviceType("ns3::RoceNetDevice");
    m_link.SetSwitchType("ns3::RoceSwitch");
    m_link.SetDeviceAttribute("OverheadBytes", UintegerValue(RoceFraming::FRAMING_BYTES));
    m_link.SetDeviceAttribute("FlowControlFrameBytes", UintegerValue(84));
    m_link.SetFlowControl("ns3::PriorityFlowControl");
    m_pfcFactory.SetTypeId("ns3::RoceSharedBufferFlowControl");
}

void
RoceHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_link.SetDeviceAttribute(name, value);
}

void
RoceHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_link.SetChannelAttribute(name, value);
}

void
RoceHelper::SetSwitchAttribute(std::string name, const AttributeValue& value)
{
    m_link.SetSwitchAttribute(name, value);
}

void
RoceHelper::SetWatchdogAttribute(std::string name, const AttributeValue& value)
{
    m_link.SetWatchdogAttribute(name, value);
}

void
RoceHelper::SetPfc(bool lossless)
{
    m_link.SetFlowControlAttribute("Lossless", BooleanValue(lossless));
    m_pfcFactory.Set("Lossless", BooleanValue(lossless));
}

void
RoceHelper::SetFlowControlAttribute(std::string name, const AttributeValue& value)
{
    m_link.SetFlowControlAttribute(name, value);
    m_pfcFactory.Set(name, value);
}

void
RoceHelper::SetSharedBuffer(uint64_t sizeBytes, double alpha)
{
    m_sharedBytes = sizeBytes;
    m_alpha = alpha;
}

void
RoceHelper::SetCongestionControl(std::string type)
{
    m_hasCc = !type.empty();
    if (m_hasCc)
    {
        m_ccFactory.SetTypeId(type);
    }
}

void
RoceHelper::SetCongestionControlAttribute(std::string name, const AttributeValue& value)
{
    m_ccFactory.Set(name, value);
}

Ptr<RoceSwitch>
RoceHelper::InstallSwitch(Ptr<Node> node)
{
    Ptr<RoceSwitch> sw = DynamicCast<RoceSwitch>(m_link.InstallSwitch(node));
    if (m_sharedBytes != 0 && !node->GetObject<RoceSharedBuffer>())
    {
        Ptr<RoceSharedBuffer> buffer = CreateObject<RoceSharedBuffer>();
        buffer->SetAttribute("SizeBytes", UintegerValue(m_sharedBytes));
        buffer->SetAttribute("Alpha", DoubleValue(m_alpha));
        node->AggregateObject(buffer);
    }
    return sw;
}

NetDeviceContainer
RoceHelper::Connect(Ptr<Node> a, Ptr<Node> b)
{
    NetDeviceContainer pair = m_link.Install(a, b);
    for (uint32_t e = 0; e < 2; ++e)
    {
        Ptr<RoceSharedBuffer> buffer = pair.Get(e)->GetNode()->GetObject<RoceSharedBuffer>();
        if (!buffer)
        {
            continue;
        }
        // A port of a shared-buffer switch: its queues' limits are the buffer's thresholds.
        Ptr<CreditLinkNetDevice> port = DynamicCast<CreditLinkNetDevice>(pair.Get(e));
        Ptr<RoceSharedBufferFlowControl> pfc = m_pfcFactory.Create<RoceSharedBufferFlowControl>();
        pfc->SetBuffer(buffer);
        port->SetAttribute("FlowControl", PointerValue(pfc));
        for (uint32_t vc = 0; vc < port->GetNumVcs(); ++vc)
        {
            port->SetReceiveBufferBytes(vc, static_cast<uint32_t>(buffer->GetSizeBytes()));
        }
    }
    return pair;
}

void
RoceHelper::AddHost(Ptr<RoceNetDevice> nic, uint32_t host)
{
    NS_LOG_FUNCTION(this << nic << host);
    nic->SetHostId(host);
    if (m_hasCc)
    {
        nic->SetAttribute("CongestionControl",
                          PointerValue(m_ccFactory.Create<RoceCongestionControl>()));
    }
    if (m_hosts.size() <= host)
    {
        m_hosts.resize(host + 1);
    }
    m_hosts[host] = nic;
}

const std::vector<Ptr<RoceNetDevice>>&
RoceHelper::GetHosts() const
{
    return m_hosts;
}

void
RoceHelper::PopulateRoutes(const NodeContainer& switches)
{
    // Hop distance from every switch to each host's leaf, by BFS over switch-to-switch
    // links; a switch's ECMP group = its ports to neighbours one hop closer.
    std::map<uint32_t, Ptr<RoceSwitch>> byNode;
    for (uint32_t i = 0; i < switches.GetN(); ++i)
    {
        byNode[switches.Get(i)->GetId()] = switches.Get(i)->GetObject<RoceSwitch>();
    }
    for (uint32_t host = 0; host < m_hosts.size(); ++host)
    {
        if (!m_hosts[host])
        {
            continue;
        }
        Ptr<CreditLinkNetDevice> leafPort = m_hosts[host]->GetPeer();
        NS_ABORT_MSG_IF(!leafPort || !leafPort->GetSwitch(),
                        "RoceHelper: host " << host << " is not connected to a switch");
        const uint32_t leaf = leafPort->GetNode()->GetId();
        std::map<uint32_t, uint32_t> distance{{leaf, 0}};
        std::deque<uint32_t> frontier{leaf};
        while (!frontier.empty())
        {
            const uint32_t n = frontier.front();
            frontier.pop_front();
            Ptr<RoceSwitch> sw = byNode.at(n);
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                Ptr<CreditLinkNetDevice> peer = sw->GetPort(p)->GetPeer();
                if (!peer || !peer->GetSwitch() || byNode.count(peer->GetNode()->GetId()) == 0)
                {
                    continue;
                }
                if (distance.emplace(peer->GetNode()->GetId(), distance[n] + 1).second)
                {
                    frontier.push_back(peer->GetNode()->GetId());
                }
            }
        }
        for (const auto& [node, sw] : byNode)
        {
            auto d = distance.find(node);
            if (d == distance.end())
            {
                continue;
            }
            std::vector<uint32_t> ports;
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                Ptr<CreditLinkNetDevice> peer = sw->GetPort(p)->GetPeer();
                if (!peer)
                {
                    continue;
                }
                if (d->second == 0
                        ? peer == m_hosts[host]
                        : peer->GetSwitch() && distance.count(peer->GetNode()->GetId()) != 0 &&
                              distance[peer->GetNode()->GetId()] + 1 == d->second)
                {
                    ports.push_back(p);
                }
            }
            sw->SetRoute(host, ports);
        }
    }
}

namespace
{

void
PcapData(Ptr<PcapFileWrapper> file, Ptr<const Packet> packet, uint32_t /* vc */)
{
    Ptr<Packet> frame = packet->Copy();
    EthernetTrailer fcs;
    frame->RemoveTrailer(fcs);
    file->Write(Simulator::Now(), frame);
}

// IEEE 802.1Qbb PFC frame (without FCS): MAC control to 01:80:C2:00:00:01, opcode 0x0101,
// the class-enable vector and eight pause timers, padded to the 60-byte minimum.
void
PcapPause(Ptr<PcapFileWrapper> file, Mac48Address source, uint32_t vc, uint32_t quanta)
{
    uint8_t frame[60] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
    source.CopyTo(frame + 6);
    frame[12] = 0x88;
    frame[13] = 0x08;
    frame[14] = 0x01;
    frame[15] = 0x01;
    frame[17] = static_cast<uint8_t>(1u << vc);
    frame[18 + 2 * vc] = static_cast<uint8_t>(quanta >> 8);
    frame[19 + 2 * vc] = static_cast<uint8_t>(quanta);
    file->Write(Simulator::Now(), frame, sizeof(frame));
}

} // namespace

void
RoceHelper::EnablePcap(const std::string& prefix, const NetDeviceContainer& devices)
{
    PcapHelper pcap;
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        Ptr<CreditLinkNetDevice> dev = DynamicCast<CreditLinkNetDevice>(devices.Get(i));
        NS_ABORT_MSG_UNLESS(dev, "RoceHelper::EnablePcap: not a RoCE device");
        const std::string name = prefix + "-" + std::to_string(dev->GetNode()->GetId()) + "-" +
                                 std::to_string(dev->GetIfIndex()) + ".pcap";
        Ptr<PcapFileWrapper> file = pcap.CreateFile(name, std::ios::out, PcapHelper::DLT_EN10MB);
        dev->TraceConnectWithoutContext("TxBegin", MakeBoundCallback(&PcapData, file));
        dev->TraceConnectWithoutContext("Rx", MakeBoundCallback(&PcapData, file));
        if (Ptr<LinkFlowControl> fc = dev->GetFlowControl())
        {
            fc->TraceConnectWithoutContext(
                "PauseSent",
                MakeBoundCallback(&PcapPause, file, Mac48Address::ConvertFrom(dev->GetAddress())));
        }
    }
}

Ptr<CreditLinkWatchdog>
RoceHelper::GetWatchdog()
{
    return m_link.GetWatchdog();
}

} // namespace ns3
