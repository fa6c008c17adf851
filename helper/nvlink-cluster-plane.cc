/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/nvlink-cluster-plane.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/results-database.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NvLinkClusterPlane");

ClusterPlane
NvLinkClusterPlane::GetPlane() const
{
    return ClusterPlane::NVLINK;
}

ClusterPlaneReach
NvLinkClusterPlane::GetReach() const
{
    return ClusterPlaneReach::SAME_DOMAIN;
}

bool
NvLinkClusterPlane::SetAttribute(const std::string& target,
                                 const std::string& name,
                                 const AttributeValue& value)
{
    if (target == "device")
    {
        m_deviceAttributes.emplace_back(name, value.Copy());
        return true;
    }
    if (target == "switch")
    {
        m_switchAttributes.emplace_back(name, value.Copy());
        return true;
    }
    return false;
}

std::string
NvLinkClusterPlane::Build(const ClusterConfig& c, const ClusterLayout& layout, ClusterNodes& nodes)
{
    NS_LOG_FUNCTION(this);
    m_layout = layout;
    const uint32_t domainGpus = layout.GetGpusPerDomain();
    if (domainGpus < 2)
    {
        return "";
    }
    const NvLinkFabricSpec spec = c.GetNvLinkSpec();
    for (uint32_t d = 0; d < layout.GetNDomains(); ++d)
    {
        auto helper = std::make_unique<NvLinkHelper>();
        helper->SetFabric(spec);
        for (const auto& [name, value] : m_deviceAttributes)
        {
            helper->SetDeviceAttribute(name, *value);
        }
        for (const auto& [name, value] : m_switchAttributes)
        {
            helper->SetSwitchAttribute(name, *value);
        }
        NodeContainer gpus;
        for (uint32_t rank : layout.GetDomainRanks(d))
        {
            gpus.Add(nodes.gpus.Get(rank));
        }
        NetDeviceContainer devices = helper->Install(gpus);
        // A DGX's NVSwitches sit on its baseboard; an NVL72's switch trays belong to the rack.
        std::string parent = "server" + std::to_string(d);
        if (c.serversPerDomain > 1)
        {
            parent = "rack" + std::to_string(d);
            nodes.AddNameGroup(parent);
        }
        NodeContainer switches = helper->GetSwitchNodes();
        for (uint32_t s = 0; s < switches.GetN(); ++s)
        {
            Names::Add(parent + "/nvswitch" + std::to_string(s), switches.Get(s));
            m_switches.Add(switches.Get(s));
        }
        for (uint32_t i = 0; i < devices.GetN(); ++i)
        {
            Ptr<CreditLinkNetDevice> dev = DynamicCast<CreditLinkNetDevice>(devices.Get(i));
            m_devices.push_back(dev);
            m_devices.push_back(dev->GetPeer());
        }
        NS_LOG_LOGIC("domain " << d << ": " << switches.GetN() << " NVSwitches, " << devices.GetN()
                               << " bundles");
        m_domains.push_back(std::move(helper));
    }
    // The devices take their rates from the NVLink generation; a per-link rate from the
    // configuration (a bandwidth sweep) wins, with the line coding kept.
    for (const auto& dev : m_devices)
    {
        Ptr<NvLinkNetDevice> nv = DynamicCast<NvLinkNetDevice>(dev);
        const NvLinkGeneration& g = GetNvLinkGeneration(nv->GetGeneration());
        if (std::abs(c.nvlinkLinkRate_gbyte_per_s * 8e9 - double(g.linkDataRateBps)) >= 1.0)
        {
            SetDataRate(dev, c.nvlinkLinkRate_gbyte_per_s * 8e9 * nv->GetLinks());
        }
    }
    return "";
}

Ptr<TransportPlane>
NvLinkClusterPlane::MakeTransportPlane(const ClusterLayout& layout) const
{
    if (m_domains.empty())
    {
        return nullptr;
    }
    Ptr<NvLinkTransportPlane> nv = CreateObject<NvLinkTransportPlane>();
    for (uint32_t d = 0; d < m_domains.size(); ++d)
    {
        nv->AddDomain(m_domains[d]->GetDomain(), layout.GetDomainRanks(d));
    }
    return nv;
}

void
NvLinkClusterPlane::CountNodes(std::map<std::string, uint32_t>& counts) const
{
    counts["nvswitch"] += m_switches.GetN();
}

void
NvLinkClusterPlane::WriteNodes(Ptr<ResultsDatabase> db, const ClusterConfig& c) const
{
    for (uint32_t i = 0; i < m_switches.GetN(); ++i)
    {
        // A DGX's switches sit in its chassis; NVL72 switch trays belong to the rack.
        const int64_t server = c.serversPerDomain == 1 ? i / c.nvswitchesPerDomain : -1;
        WriteNodeRow(db, m_switches.Get(i), "nvswitch", server, -1);
    }
}

std::vector<Ptr<CreditLinkNetDevice>>
NvLinkClusterPlane::GetRankLinkEnds(uint32_t rank) const
{
    std::vector<Ptr<CreditLinkNetDevice>> ends;
    Ptr<NvLinkGpu> gpu = GetGpu(rank);
    for (uint32_t i = 0; gpu && i < gpu->GetNDevices(); ++i)
    {
        ends.push_back(gpu->GetDevice(i));
    }
    return ends;
}

const std::vector<Ptr<CreditLinkNetDevice>>&
NvLinkClusterPlane::GetCreditLinkDevices() const
{
    return m_devices;
}

std::string
NvLinkClusterPlane::DescribeSummary(const ClusterConfig& c) const
{
    return std::to_string(c.GetNDomains()) + " NVLink domain(s) of " +
           std::to_string(c.GetGpusPerDomain()) + " GPUs";
}

std::string
NvLinkClusterPlane::DescribeLinks(const ClusterConfig& c) const
{
    // Bundle sizes of the GPU-switch pairs, e.g. 4-5 links for DGX H100's 5+4+4+5.
    const NvLinkFabricSpec spec = c.GetNvLinkSpec();
    uint32_t minLinks = 0;
    uint32_t maxLinks = 0;
    if (!spec.linksPerSwitch.empty())
    {
        minLinks = *std::min_element(spec.linksPerSwitch.begin(), spec.linksPerSwitch.end());
        maxLinks = *std::max_element(spec.linksPerSwitch.begin(), spec.linksPerSwitch.end());
    }
    std::ostringstream o;
    o << "nvlink " << m_devices.size() / 2 << " GPU-switch bundles of " << minLinks;
    if (maxLinks != minLinks)
    {
        o << "-" << maxLinks;
    }
    o << " links";
    return o.str();
}

std::string
NvLinkClusterPlane::DescribePerGpu(const ClusterConfig& c) const
{
    std::ostringstream o;
    o << "  nvlink      " << FormatGbitAsGbyte(GetPerGpu_gbit_per_s(c)) << "  (NVLink"
      << c.nvlinkGen << ": " << c.nvlinkLinksPerGpu << " links x "
      << FormatDecimal(c.nvlinkLinkRate_gbyte_per_s) << " GB/s)\n";
    return o.str();
}

std::string
NvLinkClusterPlane::DescribeBisection(const ClusterConfig& c) const
{
    std::ostringstream o;
    o << "  nvlink      " << FormatGbitAsGbyte(GetBisection_gbit_per_s(c)) << " per domain x "
      << c.GetNDomains() << "\n";
    return o.str();
}

double
NvLinkClusterPlane::GetBisection_gbit_per_s(const ClusterConfig& c) const
{
    // NVSwitches are non-blocking: half the domain's GPUs can send at full rate to the other half.
    return c.GetGpusPerDomain() / 2 * c.GetNvLinkPerGpu_gbit_per_s();
}

double
NvLinkClusterPlane::GetPerGpu_gbit_per_s(const ClusterConfig& c) const
{
    return c.GetNvLinkPerGpu_gbit_per_s();
}

void
NvLinkClusterPlane::ScaleBandwidth(ClusterConfig& c, double factor) const
{
    c.nvlinkLinkRate_gbyte_per_s *= factor;
    c.nvlinkEndpointScale *= factor;
}

uint32_t
NvLinkClusterPlane::GetNDomains() const
{
    return m_domains.size();
}

Ptr<NvLinkGpu>
NvLinkClusterPlane::GetGpu(uint32_t rank) const
{
    if (m_domains.empty())
    {
        return nullptr;
    }
    return m_domains[m_layout.GetDomain(rank)]->GetGpu(m_layout.GetGpuIdInDomain(rank));
}

NvLinkHelper&
NvLinkClusterPlane::GetDomainHelper(uint32_t domain) const
{
    NS_ABORT_MSG_UNLESS(domain < m_domains.size(), "cluster: no NVLink domain " << domain);
    return *m_domains[domain];
}

NodeContainer
NvLinkClusterPlane::GetSwitchNodes() const
{
    return m_switches;
}

Ptr<NvLinkFlowTopology>
NvLinkClusterPlane::MakeFlowTopology(const ClusterConfig& c, const ClusterLayout& layout) const
{
    if (m_domains.empty())
    {
        return nullptr;
    }
    Ptr<NvLinkFlowTopology> topology = CreateObject<NvLinkFlowTopology>();
    const NvLinkGeneration& g = GetNvLinkGeneration(c.GetNvLinkSpec().generation);
    for (uint32_t d = 0; d < m_domains.size(); ++d)
    {
        NvLinkFlowDomain domain = m_domains[d]->DescribeFlowDomain(layout.GetDomainRanks(d));
        // As Build sets the devices' rates: a per-link rate from the configuration wins.
        if (std::abs(c.nvlinkLinkRate_gbyte_per_s * 8e9 - double(g.linkDataRateBps)) >= 1.0)
        {
            domain.linkData_bps = c.nvlinkLinkRate_gbyte_per_s * 8e9;
        }
        topology->AddDomain(domain);
    }
    return topology;
}

} // namespace ns3
