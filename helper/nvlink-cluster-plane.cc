/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/nvlink-cluster-plane.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/link-sampler.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/results-database.h"
#include "ns3/results-records.h"

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
    if (target == "flow" && name == "BuildDevices")
    {
        const auto* devices = dynamic_cast<const BooleanValue*>(&value);
        NS_ABORT_MSG_UNLESS(devices, "NvLinkClusterPlane: flow BuildDevices takes a BooleanValue");
        m_flowDevices = devices->Get();
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
    auto makeHelper = [this, &spec]() {
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
        return helper;
    };
    // A flow plane whose NVLS runs as flows reads nothing from devices: describe it only.
    BooleanValue nvlsFlows;
    CreateObject<FlowTransportPlane>()->GetAttribute("NvlsFlows", nvlsFlows);
    m_describedOnly = c.IsFlowPlane(ClusterPlane::NVLINK) && nvlsFlows.Get() && !m_flowDevices;
    if (m_describedOnly)
    {
        BuildDescribed(c, layout, nodes, *makeHelper());
        return "";
    }
    for (uint32_t d = 0; d < layout.GetNDomains(); ++d)
    {
        auto helper = makeHelper();
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

void
NvLinkClusterPlane::BuildDescribed(const ClusterConfig& c,
                                   const ClusterLayout& layout,
                                   ClusterNodes& nodes,
                                   const NvLinkHelper& helper)
{
    NS_LOG_FUNCTION(this);
    // Every domain has the fabric and attributes of the first: one description, its ranks
    // replaced.  The rate as Build sets the devices': a per-link rate from the configuration
    // wins, with the line coding kept.
    NvLinkFlowDomain domain = helper.DescribeFlowDomain(layout.GetDomainRanks(0));
    const NvLinkGeneration& g = GetNvLinkGeneration(c.GetNvLinkSpec().generation);
    if (std::abs(c.nvlinkLinkRate_gbyte_per_s * 8e9 - double(g.linkDataRateBps)) >= 1.0)
    {
        domain.linkData_bps = c.nvlinkLinkRate_gbyte_per_s * 8e9;
    }
    m_gpuNodeIds.resize(nodes.gpus.GetN());
    for (uint32_t r = 0; r < nodes.gpus.GetN(); ++r)
    {
        m_gpuNodeIds[r] = nodes.gpus.Get(r)->GetId();
    }
    for (uint32_t d = 0; d < layout.GetNDomains(); ++d)
    {
        domain.ranks = layout.GetDomainRanks(d);
        // The switch nodes NvLinkHelper::Install creates, with their names: node ids and
        // `nodes` rows stay those of the built plane.
        NodeContainer switches;
        switches.Create(domain.switches, nodes.gpus.Get(domain.ranks[0])->GetSystemId());
        std::string parent = "server" + std::to_string(d);
        if (c.serversPerDomain > 1)
        {
            parent = "rack" + std::to_string(d);
            nodes.AddNameGroup(parent);
        }
        for (uint32_t s = 0; s < switches.GetN(); ++s)
        {
            Names::Add(parent + "/nvswitch" + std::to_string(s), switches.Get(s));
            m_switches.Add(switches.Get(s));
        }
        m_described.push_back(domain);
    }
}

Ptr<TransportPlane>
NvLinkClusterPlane::MakeTransportPlane(const ClusterLayout& layout) const
{
    if (m_describedOnly)
    {
        Ptr<NvLinkTransportPlane> nv = CreateObject<NvLinkTransportPlane>();
        for (const auto& d : m_described)
        {
            std::vector<int64_t> nodeOfGpu;
            for (uint32_t rank : d.ranks)
            {
                nodeOfGpu.push_back(m_gpuNodeIds[rank]);
            }
            nv->AddDescribedDomain(d, nodeOfGpu);
        }
        return nv;
    }
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

std::vector<CreditLinkNetDevice::Counters>
NvLinkClusterPlane::GetRankLinkCounters(uint32_t rank) const
{
    if (!m_describedOnly)
    {
        return ClusterPlaneBuilder::GetRankLinkCounters(rank);
    }
    if (m_described.empty())
    {
        return {};
    }
    // The GPU's bundle ends, none of which carries a byte.
    const NvLinkFlowDomain& d = m_described[m_layout.GetDomain(rank)];
    return std::vector<CreditLinkNetDevice::Counters>(
        d.GetBundleLinks(m_layout.GetGpuIdInDomain(rank)).size());
}

const std::vector<Ptr<CreditLinkNetDevice>>&
NvLinkClusterPlane::GetCreditLinkDevices() const
{
    return m_devices;
}

std::vector<NvLinkClusterPlane::Direction>
NvLinkClusterPlane::GetDescribedDirections() const
{
    // NvLinkHelper::Install's devices in Build's order: each GPU's switch bundles (the GPU's
    // end, then the switch's), then each direct bundle's ends (a, its peer b, b, its peer a).
    std::vector<Direction> directions;
    uint32_t firstSwitch = 0;
    for (const auto& d : m_described)
    {
        for (uint32_t g = 0; g < d.ranks.size(); ++g)
        {
            const auto gpu = static_cast<uint32_t>(m_gpuNodeIds[d.ranks[g]]);
            for (uint32_t p = 0; p < d.switches; ++p)
            {
                if (const uint32_t links = d.linksPerPair[g][p])
                {
                    const uint32_t sw = m_switches.Get(firstSwitch + p)->GetId();
                    directions.push_back({gpu, sw, links});
                    directions.push_back({sw, gpu, links});
                }
            }
        }
        for (const auto& l : d.directLinks)
        {
            const auto a = static_cast<uint32_t>(m_gpuNodeIds[d.ranks[l.gpuA]]);
            const auto b = static_cast<uint32_t>(m_gpuNodeIds[d.ranks[l.gpuB]]);
            directions.push_back({a, b, l.links});
            directions.push_back({b, a, l.links});
            directions.push_back({b, a, l.links});
            directions.push_back({a, b, l.links});
        }
        firstSwitch += d.switches;
    }
    return directions;
}

uint64_t
NvLinkClusterPlane::GetNLinkDirections() const
{
    return m_describedOnly ? GetDescribedDirections().size() : m_devices.size();
}

void
NvLinkClusterPlane::WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const
{
    if (!m_describedOnly)
    {
        ClusterPlaneBuilder::WriteLinks(db, id);
        return;
    }
    // The rows the devices would give: a flow plane's devices carry no bytes, stall, queue
    // or drop nothing.  Flow planes run in one process: every row is this one's.
    const std::string plane = GetName();
    const NvLinkFlowDomain* rate = m_described.empty() ? nullptr : &m_described.front();
    for (const auto& dir : GetDescribedDirections())
    {
        LinkRecord row;
        row.linkId = id++;
        row.plane = plane;
        row.srcNode = dir.srcNode;
        row.dstNode = dir.dstNode;
        row.rateBitPerS =
            static_cast<int64_t>(rate->GetSignalling_bps(dir.links) * rate->encodingEfficiency);
        db->AddLink(row);
    }
}

void
NvLinkClusterPlane::AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const
{
    if (!m_describedOnly)
    {
        ClusterPlaneBuilder::AddToSampler(sampler, id);
        return;
    }
    id += static_cast<int64_t>(GetNLinkDirections()); // no device counts a byte
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
    o << "nvlink " << GetNLinkDirections() / 2 << " GPU-switch bundles of " << minLinks;
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
    return m_describedOnly ? m_described.size() : m_domains.size();
}

bool
NvLinkClusterPlane::IsDescribedOnly() const
{
    return m_describedOnly;
}

NvLinkFlowDomain
NvLinkClusterPlane::GetFlowDomain(const ClusterConfig& c, uint32_t domain) const
{
    NS_ABORT_MSG_UNLESS(domain < GetNDomains(), "cluster: no NVLink domain " << domain);
    return m_describedOnly ? m_described[domain] : Describe(c, domain);
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
    NS_ABORT_MSG_IF(m_describedOnly,
                    "cluster: the flow-level NVLink plane is described only, no NvLinkHelper "
                    "built domain "
                        << domain);
    NS_ABORT_MSG_UNLESS(domain < m_domains.size(), "cluster: no NVLink domain " << domain);
    return *m_domains[domain];
}

NodeContainer
NvLinkClusterPlane::GetSwitchNodes() const
{
    return m_switches;
}

NvLinkFlowDomain
NvLinkClusterPlane::Describe(const ClusterConfig& c, uint32_t d) const
{
    NvLinkFlowDomain domain = m_domains[d]->DescribeFlowDomain(m_layout.GetDomainRanks(d));
    // As Build sets the devices' rates: a per-link rate from the configuration wins.
    const NvLinkGeneration& g = GetNvLinkGeneration(c.GetNvLinkSpec().generation);
    if (std::abs(c.nvlinkLinkRate_gbyte_per_s * 8e9 - double(g.linkDataRateBps)) >= 1.0)
    {
        domain.linkData_bps = c.nvlinkLinkRate_gbyte_per_s * 8e9;
    }
    return domain;
}

Ptr<NvLinkFlowTopology>
NvLinkClusterPlane::MakeFlowTopology(const ClusterConfig& c, const ClusterLayout& layout) const
{
    if (GetNDomains() == 0)
    {
        return nullptr;
    }
    Ptr<NvLinkFlowTopology> topology = CreateObject<NvLinkFlowTopology>();
    for (uint32_t d = 0; d < GetNDomains(); ++d)
    {
        NS_ABORT_MSG_UNLESS(layout.GetDomainRanks(d) == m_layout.GetDomainRanks(d),
                            "NvLinkClusterPlane::MakeFlowTopology: another layout");
        topology->AddDomain(m_describedOnly ? m_described[d] : Describe(c, d));
    }
    return topology;
}

} // namespace ns3
