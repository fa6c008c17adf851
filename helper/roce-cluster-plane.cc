/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/roce-cluster-plane.h"

#include "ns3/boolean.h"
#include "ns3/distributed-run.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/nstime.h"
#include "ns3/priority-flow-control.h"
#include "ns3/results-database.h"
#include "ns3/roce-transport-plane.h"
#include "ns3/uinteger.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceClusterPlane");

namespace
{
/// Ingress buffer per port and priority: Spectrum-4's shared buffer over its 128 400 GbE
/// ports is about 1 MiB each [unconfirmed: the SN5600 datasheet gives no per-port figure].
constexpr uint32_t kIngressBufferBytes = 1 << 20;
/// Port to port, as the InfiniBand switch's default, so the two planes differ by their
/// protocols only [unconfirmed for Spectrum-4].
constexpr int64_t kPortToPort_ns = 130;
} // namespace

RoceClusterPlane::RoceClusterPlane()
    : RailClusterPlane("roce-switch", "NIC"),
      m_helper(std::make_unique<RoceHelper>())
{
    m_helper->SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(kIngressBufferBytes));
    m_helper->SetSwitchAttribute("TraversalLatency", TimeValue(NanoSeconds(kPortToPort_ns)));
}

ClusterPlane
RoceClusterPlane::GetPlane() const
{
    return ClusterPlane::ROCE;
}

ClusterPlaneReach
RoceClusterPlane::GetReach() const
{
    return ClusterPlaneReach::ANY_PAIR;
}

bool
RoceClusterPlane::SetAttribute(const std::string& target,
                               const std::string& name,
                               const AttributeValue& value)
{
    if (target == "device")
    {
        m_helper->SetDeviceAttribute(name, value);
    }
    else if (target == "switch")
    {
        m_helper->SetSwitchAttribute(name, value);
    }
    else if (target == "channel")
    {
        m_helper->SetChannelAttribute(name, value);
    }
    else if (target == "flow-control")
    {
        m_helper->SetFlowControlAttribute(name, value);
    }
    else if (target == "congestion-control")
    {
        m_helper->SetCongestionControlAttribute(name, value);
    }
    else
    {
        return false;
    }
    return true;
}

std::string
RoceClusterPlane::Prepare(const ClusterConfig& c, const ClusterLayout& layout)
{
    NS_LOG_FUNCTION(this);
    if (layout.GetNSystems() > 1)
    {
        return "RoCE plane: distributed runs are not supported (use --scaleOut=infiniband)";
    }

    return m_layoutSource.Prepare(c, layout);
}

std::string
RoceClusterPlane::Build(const ClusterConfig& c, const ClusterLayout& layout, ClusterNodes& nodes)
{
    NS_LOG_FUNCTION(this);
    const InfinibandTopology& t = m_layoutSource.GetTopology();
    RoceHelper& roce = *m_helper;
    roce.SetDeviceAttribute(
        "DataRate",
        DataRateValue(DataRate(static_cast<uint64_t>(c.ibRate_gbit_per_s * 1e9))));
    if (c.ibDelay_ns > 0)
    {
        roce.SetChannelAttribute("Delay",
                                 TimeValue(NanoSeconds(static_cast<int64_t>(c.ibDelay_ns))));
    }
    roce.SetPfc(c.rocePfc);
    // Lossy Ethernet drops: the NICs then run RC's go-back-N (acknowledgements, resends).
    roce.SetDeviceAttribute("Reliable", BooleanValue(!c.rocePfc));
    roce.SetSwitchAttribute("EcnEnabled", BooleanValue(c.roceEcn));
    roce.SetSwitchAttribute("EcmpMode",
                            EnumValue(c.roceEcmp == "spray"      ? RoceSwitch::ECMP_SPRAY
                                      : c.roceEcmp == "adaptive" ? RoceSwitch::ECMP_ADAPTIVE
                                                                 : RoceSwitch::ECMP_HASH));
    roce.SetCongestionControl(c.roceDcqcn ? "ns3::RoceDcqcn" : "");
    if (c.roceSharedBuffer_bytes > 0)
    {
        // Each switch's ingress queues share one buffer under dynamic thresholds; the NICs
        // keep their own per-queue buffers.
        roce.SetSharedBuffer(c.roceSharedBuffer_bytes, 1.0);
    }
    std::vector<Ptr<Node>> nodeOf(t.GetNNodes());
    std::vector<int64_t> rankOfNode(t.GetNNodes(), -1);
    for (uint32_t r = 0; r < layout.GetNRanks(); ++r)
    {
        const uint32_t n = m_layoutSource.GetHcaTopologyNode(r);
        nodeOf[n] = nodes.gpus.Get(r);
        rankOfNode[n] = r;
    }
    nodes.AddNameGroup("roce");
    for (uint32_t sw : t.GetSwitches())
    {
        nodeOf[sw] = CreateObject<Node>();
        roce.InstallSwitch(nodeOf[sw]);
        std::string name = m_layoutSource.GetSwitchName(sw); // "ib/leaf3"
        Names::Add("roce/" + name.substr(name.find('/') + 1), nodeOf[sw]);
        m_switches.Add(nodeOf[sw]);
    }
    m_nic.assign(layout.GetNRanks(), nullptr);
    for (const auto& link : t.GetLinks())
    {
        NetDeviceContainer pair = roce.Connect(nodeOf[link.nodeA], nodeOf[link.nodeB]);
        const uint32_t ends[2] = {link.nodeA, link.nodeB};
        for (uint32_t e = 0; e < 2; ++e)
        {
            Ptr<RoceNetDevice> dev = DynamicCast<RoceNetDevice>(pair.Get(e));
            m_devices.push_back(dev);
            if (rankOfNode[ends[e]] >= 0)
            {
                const auto rank = static_cast<uint32_t>(rankOfNode[ends[e]]);
                m_nic[rank] = dev;
                roce.AddHost(dev, rank);
            }
        }
    }
    roce.PopulateRoutes(m_switches);
    for (const auto& dev : m_devices)
    {
        const std::string error = dev->GetFlowControl()->Validate(PeekPointer(dev));
        if (!error.empty())
        {
            return "RoCE devices: " + error;
        }
    }
    for (uint32_t i = 0; i < m_switches.GetN(); ++i)
    {
        const std::string error = m_switches.Get(i)->GetObject<RoceSwitch>()->Validate();
        if (!error.empty())
        {
            return error;
        }
    }
    if (!c.pcap.empty())
    {
        NetDeviceContainer nics;
        for (const auto& nic : m_nic)
        {
            if (nic && DistributedRun::IsLocal(nic->GetNode()))
            {
                nics.Add(nic);
            }
        }
        roce.EnablePcap(c.pcap, nics);
    }
    return "";
}

int64_t
RoceClusterPlane::AssignStreams(int64_t stream)
{
    for (uint32_t i = 0; i < m_switches.GetN(); ++i)
    {
        m_switches.Get(i)->GetObject<RoceSwitch>()->AssignStreams(stream + i);
    }
    return m_switches.GetN();
}

Ptr<RoceNetDevice>
RoceClusterPlane::GetNic(uint32_t rank) const
{
    return rank < m_nic.size() ? m_nic[rank] : nullptr;
}

RoceClusterPlane::Totals
RoceClusterPlane::GetTotals() const
{
    Totals t;
    for (const auto& dev : m_devices)
    {
        if (auto pfc = DynamicCast<PriorityFlowControl>(dev->GetFlowControl()))
        {
            t.pauseFrames += pfc->GetCounters().pauseFramesSent;
            t.pausedNs += pfc->GetPausedTime().GetNanoSeconds();
            t.drops += pfc->GetDroppedPackets();
        }
    }
    for (uint32_t i = 0; i < m_switches.GetN(); ++i)
    {
        t.ecnMarked += m_switches.Get(i)->GetObject<RoceSwitch>()->GetEcnMarked();
    }
    for (const auto& nic : m_nic)
    {
        t.cnps += nic ? nic->GetRoceCounters().cnpsSent : 0;
    }
    return t;
}

void
RoceClusterPlane::AddLinkCounters(Ptr<CreditLinkNetDevice> dev, LinkRecord& row) const
{
    // The transmitting end's PFC holds its paused time; the receiving end's counts the
    // PAUSE frames it sent back over this direction.
    const auto own = DynamicCast<PriorityFlowControl>(dev->GetFlowControl());
    const auto peer = DynamicCast<PriorityFlowControl>(dev->GetPeer()->GetFlowControl());
    row.pfcPauseNs = own ? own->GetPausedTime().GetNanoSeconds() : 0;
    row.pfcPauseFrames = peer ? static_cast<int64_t>(peer->GetCounters().pauseFramesSent) : 0;
    const auto sw = DynamicCast<RoceSwitch>(dev->GetSwitch());
    row.ecnMarkedPackets = sw ? static_cast<int64_t>(sw->GetEcnMarked(sw->GetPortIndex(dev))) : 0;
}

std::string
RoceClusterPlane::DescribeSummary(const ClusterConfig& c) const
{
    const ClusterIbShape s = ClusterIbShape::Compute(c);
    return std::to_string(s.rails) + " RoCE rails, " + std::to_string(s.tiers) + " tier(s)";
}

std::string
RoceClusterPlane::DescribeLinks(const ClusterConfig& c) const
{
    const ClusterIbShape s = ClusterIbShape::Compute(c);
    std::ostringstream o;
    o << "roce " << s.cables << " cables (" << s.switches << " Ethernet switches)";
    return o.str();
}

std::string
RoceClusterPlane::DescribeDetails(const ClusterConfig& c) const
{
    std::ostringstream o;
    o << "roce: " << (c.rocePfc ? "PFC (lossless)" : "lossy (no PFC)") << ", ECN "
      << (c.roceEcn ? "on" : "off") << ", DCQCN " << (c.roceDcqcn ? "on" : "off") << ", ECMP "
      << c.roceEcmp << "\n";
    return o.str();
}

double
RoceClusterPlane::GetBisection_gbit_per_s(const ClusterConfig& c) const
{
    return m_layoutSource.GetBisection_gbit_per_s(c); // the same layout
}

double
RoceClusterPlane::GetPerGpu_gbit_per_s(const ClusterConfig& c) const
{
    return m_layoutSource.GetPerGpu_gbit_per_s(c);
}

void
RoceClusterPlane::ScaleBandwidth(ClusterConfig& c, double factor) const
{
    m_layoutSource.ScaleBandwidth(c, factor);
}

} // namespace ns3
