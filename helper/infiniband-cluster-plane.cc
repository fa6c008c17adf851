/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-cluster-plane.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/infiniband-switch.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/link-sampler.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/nstime.h"
#include "ns3/results-database.h"
#include "ns3/results-records.h"
#include "ns3/string.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandClusterPlane");

InfinibandClusterPlane::InfinibandClusterPlane()
    : RailClusterPlane("ib-switch", "HCA"),
      m_helper(std::make_unique<InfinibandHelper>())
{
}

ClusterPlane
InfinibandClusterPlane::GetPlane() const
{
    return ClusterPlane::INFINIBAND;
}

ClusterPlaneReach
InfinibandClusterPlane::GetReach() const
{
    return ClusterPlaneReach::ANY_PAIR;
}

bool
InfinibandClusterPlane::SetAttribute(const std::string& target,
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
    else if (target == "subnet-manager")
    {
        m_smAttributes.emplace_back(name, value.Copy());
    }
    else if (target == "flow" && name == "BuildDevices")
    {
        const auto* devices = dynamic_cast<const BooleanValue*>(&value);
        NS_ABORT_MSG_UNLESS(devices,
                            "InfinibandClusterPlane: flow BuildDevices takes a BooleanValue");
        m_flowDevices = devices->Get();
    }
    else
    {
        return false;
    }
    return true;
}

std::string
InfinibandClusterPlane::Prepare(const ClusterConfig& c, const ClusterLayout& layout)
{
    NS_LOG_FUNCTION(this);
    m_shape = ClusterIbShape::Compute(c);
    const ClusterIbShape tree = ClusterIbShape::ComputeSubnet(c);
    const bool perRail = c.IsIbSubnetPerRail();
    const uint32_t ranks = layout.GetNRanks();
    InfinibandTopology& t = m_topology;
    t = InfinibandTopology();
    m_switchName.clear();
    m_hcaNode.assign(ranks, 0);
    // HCAs first, in rank order: the subnet manager numbers each subnet's HCAs (LIDs from
    // BaseLid) in this order.
    for (uint32_t r = 0; r < ranks; ++r)
    {
        m_hcaNode[r] = t.AddHca("server" + std::to_string(layout.GetServer(r)) + "/hca" +
                                std::to_string(layout.GetLocalIndex(r)));
    }
    if (!perRail)
    {
        std::vector<uint32_t> all(ranks);
        for (uint32_t r = 0; r < ranks; ++r)
        {
            all[r] = r;
        }
        AddTree(c, layout, tree, all, "ib/");
    }
    else
    {
        // One fat tree per rail, not cabled to each other: each a subnet of its own.
        std::vector<std::vector<uint32_t>> ranksOf(m_shape.subnets);
        for (uint32_t r = 0; r < ranks; ++r)
        {
            ranksOf[layout.GetRail(r)].push_back(r);
        }
        for (uint32_t rail = 0; rail < ranksOf.size(); ++rail)
        {
            AddTree(c, layout, tree, ranksOf[rail], "ib/r" + std::to_string(rail) + "/");
        }
    }
    m_sm = CreateObject<InfinibandSubnetManager>();
    m_sm->SetAttribute("RoutingEngine", StringValue(c.ibRoutingEngine));
    // A fluid plane has no credits to deadlock on; the check is quadratic in the cluster.
    m_sm->SetAttribute("CheckCreditLoops", BooleanValue(!c.IsFlowPlane(ClusterPlane::INFINIBAND)));
    m_sm->SetAttribute("SubnetPerComponent", BooleanValue(perRail));
    for (const auto& [name, value] : m_smAttributes)
    {
        m_sm->SetAttribute(name, *value);
    }
    m_sm->SetTopology(t);
    const std::string routing = m_sm->TryRoute();
    return routing.empty() ? "" : "InfiniBand routing: " + routing;
}

void
InfinibandClusterPlane::AddTree(const ClusterConfig& c,
                                const ClusterLayout& layout,
                                const ClusterIbShape& s,
                                const std::vector<uint32_t>& ranks,
                                const std::string& prefix)
{
    const uint32_t k = c.ibSwitchRadix;
    InfinibandTopology& t = m_topology;
    auto addSwitch = [&](const std::string& name) {
        const uint32_t node = t.AddSwitch(prefix + name, k);
        m_switchName[node] = prefix + name;
        return node;
    };
    if (s.tiers == 1)
    {
        const uint32_t sw = addSwitch("leaf0");
        for (uint32_t i = 0; i < ranks.size(); ++i)
        {
            t.Connect(m_hcaNode[ranks[i]], 1, sw, i + 1);
        }
        return;
    }
    // Leaf index = scalable unit x rails + rail: the leaves of one scalable unit (the
    // servers sharing a leaf per rail) are consecutive, so 3-tier pods keep them together.
    std::vector<uint32_t> leaf(s.leaves);
    for (uint32_t l = 0; l < s.leaves; ++l)
    {
        leaf[l] = addSwitch("leaf" + std::to_string(l));
    }
    auto leafOf = [&](uint32_t r) {
        return (layout.GetServer(r) / s.hostsPerLeaf) * s.rails +
               (s.rails == 1 ? 0 : layout.GetRail(r));
    };
    for (uint32_t r : ranks)
    {
        t.Connect(m_hcaNode[r], 1, leaf[leafOf(r)], layout.GetServer(r) % s.hostsPerLeaf + 1);
    }
    // Up ports follow the leaf's own hosts without a gap (the last leaf of a rail may
    // have fewer): InfinibandHelper numbers a switch's ports in the order they are cabled.
    std::vector<uint32_t> hostsOn(s.leaves, 0);
    for (uint32_t r : ranks)
    {
        hostsOn[leafOf(r)]++;
    }
    if (s.tiers == 2)
    {
        std::vector<uint32_t> spine(s.spines);
        for (uint32_t j = 0; j < s.spines; ++j)
        {
            spine[j] = addSwitch("spine" + std::to_string(j));
        }
        const uint32_t m = s.linksPerLeafSpine;
        for (uint32_t l = 0; l < s.leaves; ++l)
        {
            for (uint32_t u = 0; u < s.leafUplinks; ++u)
            {
                t.Connect(leaf[l], hostsOn[l] + 1 + u, spine[u / m], l * m + u % m + 1);
            }
        }
        return;
    }
    const uint32_t p = s.podLeaves;
    std::vector<std::vector<uint32_t>> agg(s.pods);
    for (uint32_t pod = 0; pod < s.pods; ++pod)
    {
        for (uint32_t j = 0; j < s.leafUplinks; ++j)
        {
            agg[pod].push_back(addSwitch("agg" + std::to_string(pod) + "_" + std::to_string(j)));
        }
    }
    std::vector<std::vector<uint32_t>> core(s.leafUplinks);
    for (uint32_t j = 0; j < s.leafUplinks; ++j)
    {
        for (uint32_t i = 0; i < p; ++i)
        {
            core[j].push_back(addSwitch("core" + std::to_string(j) + "_" + std::to_string(i)));
        }
    }
    for (uint32_t l = 0; l < s.leaves; ++l)
    {
        for (uint32_t j = 0; j < s.leafUplinks; ++j)
        {
            t.Connect(leaf[l], hostsOn[l] + 1 + j, agg[l / p][j], l % p + 1);
        }
    }
    for (uint32_t pod = 0; pod < s.pods; ++pod)
    {
        for (uint32_t j = 0; j < s.leafUplinks; ++j)
        {
            for (uint32_t i = 0; i < p; ++i)
            {
                t.Connect(agg[pod][j], p + 1 + i, core[j][i], pod + 1);
            }
        }
    }
}

std::vector<uint32_t>
InfinibandClusterPlane::SwitchSystemIds(const ClusterLayout& layout) const
{
    const InfinibandTopology& t = m_topology;
    std::vector<int64_t> system(t.GetNNodes(), -1);
    std::vector<int64_t> rankOfHca(t.GetNNodes(), -1);
    for (uint32_t r = 0; r < m_hcaNode.size(); ++r)
    {
        rankOfHca[m_hcaNode[r]] = r;
    }
    for (const auto& link : t.GetLinks())
    {
        for (auto [host, sw] :
             {std::pair{link.nodeA, link.nodeB}, std::pair{link.nodeB, link.nodeA}})
        {
            if (rankOfHca[host] >= 0 && t.IsSwitch(sw) && system[sw] < 0)
            {
                system[sw] = layout.GetRankSystemId(static_cast<uint32_t>(rankOfHca[host]));
            }
        }
    }
    std::vector<uint32_t> out(t.GetNNodes(), 0);
    uint32_t next = 0;
    for (uint32_t sw : t.GetSwitches())
    {
        out[sw] =
            system[sw] >= 0 ? static_cast<uint32_t>(system[sw]) : next++ % layout.GetNSystems();
    }
    return out;
}

std::string
InfinibandClusterPlane::Build(const ClusterConfig& c,
                              const ClusterLayout& layout,
                              ClusterNodes& nodes)
{
    NS_LOG_FUNCTION(this);
    const InfinibandTopology& t = m_topology;
    std::vector<Ptr<Node>> nodeOf(t.GetNNodes());
    for (uint32_t r = 0; r < m_hcaNode.size(); ++r)
    {
        nodeOf[m_hcaNode[r]] = nodes.gpus.Get(r);
    }
    nodes.AddNameGroup("ib");
    for (uint32_t rail = 0; m_shape.subnets > 1 && rail < m_shape.subnets; ++rail)
    {
        nodes.AddNameGroup("ib/r" + std::to_string(rail)); // per-rail switch names' parent
    }
    if (c.ibDelay_ns > 0)
    {
        m_helper->SetChannelAttribute("Delay",
                                      TimeValue(NanoSeconds(static_cast<int64_t>(c.ibDelay_ns))));
    }
    if (c.sharp)
    {
        m_helper->SetSwitchAttribute("SharpEnabled", BooleanValue(true));
    }
    // A fluid plane reads nothing from devices but SHARP's switches: describe it only.
    m_describedOnly = c.IsFlowPlane(ClusterPlane::INFINIBAND) && !c.sharp && !m_flowDevices;
    const std::vector<uint32_t> systemOf = SwitchSystemIds(layout);
    for (uint32_t sw : t.GetSwitches())
    {
        // The switch nodes either way: node ids and `nodes` rows stay those of the built plane.
        nodeOf[sw] = CreateObject<Node>(systemOf[sw]);
        if (!m_describedOnly)
        {
            m_helper->InstallSwitch(nodeOf[sw]);
        }
        Names::Add(m_switchName.at(sw), nodeOf[sw]);
        m_switches.Add(nodeOf[sw]);
    }
    if (m_describedOnly)
    {
        BuildDescribed(c, nodeOf);
        return "";
    }
    m_nic.assign(m_hcaNode.size(), nullptr);
    std::vector<Ptr<InfinibandNetDevice>> hcaOfNode(t.GetNNodes());
    for (const auto& link : t.GetLinks())
    {
        NetDeviceContainer pair = m_helper->Connect(nodeOf[link.nodeA], nodeOf[link.nodeB]);
        const uint32_t ends[2][2] = {{link.nodeA, link.portA}, {link.nodeB, link.portB}};
        for (uint32_t e = 0; e < 2; ++e)
        {
            Ptr<InfinibandNetDevice> dev = DynamicCast<InfinibandNetDevice>(pair.Get(e));
            m_devices.push_back(dev);
            const uint32_t node = ends[e][0];
            const uint32_t port = ends[e][1];
            if (t.IsSwitch(node))
            {
                // Connect numbers ports in cabling order; the LFTs use the topology's numbers.
                Ptr<InfinibandSwitch> sw = nodeOf[node]->GetObject<InfinibandSwitch>();
                if (sw->GetPort(sw->IndexOfIbPort(port)) != dev)
                {
                    return "InfiniBand devices: " + t.Describe(node) + " port " +
                           std::to_string(port) + " is not the device cabled for it";
                }
            }
            else
            {
                hcaOfNode[node] = dev;
            }
        }
    }
    BooleanValue adaptive;
    m_sm->GetAttribute("AdaptiveRouting", adaptive);
    for (uint32_t sw : t.GetSwitches())
    {
        Ptr<InfinibandSwitch> core = nodeOf[sw]->GetObject<InfinibandSwitch>();
        core->SetLid(m_sm->GetLid(sw));
        const std::vector<uint8_t>& lft = m_sm->GetForwardingTable(sw);
        std::vector<std::vector<uint8_t>> groups;
        if (adaptive.Get())
        {
            groups.resize(lft.size());
            for (uint32_t dlid = 0; dlid < lft.size(); ++dlid)
            {
                groups[dlid] = m_sm->GetAdaptiveRoutingGroup(sw, static_cast<uint16_t>(dlid));
            }
        }
        core->SetForwardingTable(lft, groups);
    }
    for (uint32_t r = 0; r < m_hcaNode.size(); ++r)
    {
        m_nic[r] = hcaOfNode[m_hcaNode[r]];
        m_nic[r]->SetLid(m_sm->GetLid(m_hcaNode[r], 1));
    }
    const std::string invalid = m_helper->Validate();
    if (!invalid.empty())
    {
        return "InfiniBand devices: " + invalid;
    }
    // The devices take their rates from the IB preset; the configuration's (--ibRate, a
    // bandwidth sweep) wins, with the line coding kept.
    for (const auto& dev : m_devices)
    {
        SetDataRate(dev, c.ibRate_gbit_per_s * 1e9);
    }
    return "";
}

void
InfinibandClusterPlane::BuildDescribed(const ClusterConfig& c, const std::vector<Ptr<Node>>& nodeOf)
{
    NS_LOG_FUNCTION(this);
    m_nodeIdOf.assign(nodeOf.size(), 0);
    for (uint32_t n = 0; n < nodeOf.size(); ++n)
    {
        m_nodeIdOf[n] = nodeOf[n]->GetId();
    }
    std::vector<int64_t> nodeIds;
    nodeIds.reserve(m_hcaNode.size());
    for (uint32_t hca : m_hcaNode)
    {
        nodeIds.push_back(m_nodeIdOf[hca]);
    }
    m_fabric = m_helper->DescribeFlowFabric(m_sm, m_hcaNode, std::move(nodeIds));
    // The rate as Build sets the devices' (SetDataRate): the configuration's, with the
    // line coding kept.
    m_fabric.signalling_bps = static_cast<uint64_t>(
        std::llround(c.ibRate_gbit_per_s * 1e9 / m_fabric.encodingEfficiency));
}

Ptr<TransportPlane>
InfinibandClusterPlane::MakeTransportPlane(const ClusterLayout& layout) const
{
    Ptr<InfinibandTransportPlane> plane;
    if (m_describedOnly)
    {
        plane = CreateObject<InfinibandTransportPlane>();
        plane->AddDescribedRanks(m_fabric);
    }
    else
    {
        plane = DynamicCast<InfinibandTransportPlane>(RailClusterPlane::MakeTransportPlane(layout));
    }
    if (m_sm && m_sm->GetNSubnets() > 1)
    {
        // Ranks of different subnets (rails) have no InfiniBand path to each other.
        for (uint32_t r = 0; r < m_hcaNode.size(); ++r)
        {
            plane->SetRankSubnet(r, m_sm->GetSubnet(m_hcaNode[r]));
        }
    }
    return plane;
}

std::vector<CreditLinkNetDevice::Counters>
InfinibandClusterPlane::GetRankLinkCounters(uint32_t rank) const
{
    if (!m_describedOnly)
    {
        return RailClusterPlane::GetRankLinkCounters(rank);
    }
    // The rank's HCA, which carries no byte.
    return std::vector<CreditLinkNetDevice::Counters>(rank < m_hcaNode.size() ? 1 : 0);
}

uint64_t
InfinibandClusterPlane::GetNLinkDirections() const
{
    return m_describedOnly ? 2 * uint64_t{m_topology.GetLinks().size()}
                           : RailClusterPlane::GetNLinkDirections();
}

void
InfinibandClusterPlane::WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const
{
    if (!m_describedOnly)
    {
        RailClusterPlane::WriteLinks(db, id);
        return;
    }
    // The rows the devices would give, in Build's order (each cable's end A, then B): a flow
    // plane's devices carry no bytes, stall, queue or drop nothing.  Flow planes run in one
    // process: every row is this one's.
    const std::string plane = GetName();
    for (const auto& link : m_topology.GetLinks())
    {
        for (auto [from, to] :
             {std::pair{link.nodeA, link.nodeB}, std::pair{link.nodeB, link.nodeA}})
        {
            LinkRecord row;
            row.linkId = id++;
            row.plane = plane;
            row.srcNode = m_nodeIdOf[from];
            row.dstNode = m_nodeIdOf[to];
            row.rateBitPerS = m_fabric.GetFrameRate_bps();
            db->AddLink(row);
        }
    }
}

void
InfinibandClusterPlane::AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const
{
    if (!m_describedOnly)
    {
        RailClusterPlane::AddToSampler(sampler, id);
        return;
    }
    id += static_cast<int64_t>(GetNLinkDirections()); // no device counts a byte
}

void
InfinibandClusterPlane::AddConservationNotes(CreditLinkConservationReport& report) const
{
    if (m_describedOnly)
    {
        report.notes.push_back(GetName() + ": fluid, built without devices: no credit link");
    }
}

std::string
InfinibandClusterPlane::DescribeSummary(const ClusterConfig& c) const
{
    const ClusterIbShape s = ClusterIbShape::Compute(c);
    return std::to_string(s.rails) + " InfiniBand rails, " + std::to_string(s.tiers) + " tier(s)" +
           (s.subnets > 1 ? ", one subnet per rail" : "");
}

std::string
InfinibandClusterPlane::DescribeLinks(const ClusterConfig& c) const
{
    const ClusterIbShape s = ClusterIbShape::Compute(c);
    std::ostringstream o;
    o << "infiniband " << s.cables << " cables (" << s.leaves << " leaves, " << s.spines
      << (s.tiers == 3 ? " aggregation, " : " spines, ") << s.cores << " cores)";
    return o.str();
}

double
InfinibandClusterPlane::GetBisection_gbit_per_s(const ClusterConfig& c) const
{
    const ClusterIbShape s = ClusterIbShape::Compute(c);
    const uint64_t hcas = c.GetNRanks();
    if (s.tiers <= 1)
    {
        return hcas / 2 * c.ibRate_gbit_per_s;
    }
    // Bounded by the HCAs or by the leaf uplinks (oversubscription); above the leaves the
    // tree is non-blocking.
    const uint64_t uplinks = static_cast<uint64_t>(s.leaves) * s.leafUplinks;
    return std::min(hcas, uplinks) / 2 * c.ibRate_gbit_per_s;
}

double
InfinibandClusterPlane::GetPerGpu_gbit_per_s(const ClusterConfig& c) const
{
    return c.GetIbPerGpu_gbit_per_s();
}

void
InfinibandClusterPlane::ScaleBandwidth(ClusterConfig& c, double factor) const
{
    c.ibRate_gbit_per_s *= factor;
    c.ibEndpointScale *= factor;
}

const InfinibandTopology&
InfinibandClusterPlane::GetTopology() const
{
    return m_topology;
}

Ptr<InfinibandSubnetManager>
InfinibandClusterPlane::GetSubnetManager() const
{
    return m_sm;
}

const ClusterIbShape&
InfinibandClusterPlane::GetShape() const
{
    return m_shape;
}

uint32_t
InfinibandClusterPlane::GetHcaTopologyNode(uint32_t rank) const
{
    NS_ABORT_MSG_UNLESS(rank < m_hcaNode.size(), "cluster: no HCA for rank " << rank);
    return m_hcaNode[rank];
}

Ptr<InfinibandNetDevice>
InfinibandClusterPlane::GetHcaDevice(uint32_t rank) const
{
    NS_ABORT_MSG_IF(m_describedOnly,
                    "cluster: the flow-level InfiniBand plane is described only, no HCA device "
                    "for rank "
                        << rank);
    NS_ABORT_MSG_UNLESS(rank < m_nic.size(), "cluster: no HCA for rank " << rank);
    return m_nic[rank];
}

InfinibandHelper&
InfinibandClusterPlane::GetHelper() const
{
    return *m_helper;
}

std::string
InfinibandClusterPlane::GetSwitchName(uint32_t topologyNode) const
{
    auto it = m_switchName.find(topologyNode);
    return it == m_switchName.end() ? "" : it->second;
}

bool
InfinibandClusterPlane::IsDescribedOnly() const
{
    return m_describedOnly;
}

const InfinibandFlowFabric&
InfinibandClusterPlane::GetFlowFabric() const
{
    NS_ABORT_MSG_UNLESS(m_describedOnly,
                        "cluster: the InfiniBand plane is built with its devices, not described");
    return m_fabric;
}

Ptr<InfinibandFlowTopology>
InfinibandClusterPlane::MakeFlowTopology() const
{
    Ptr<InfinibandFlowTopology> topology = CreateObject<InfinibandFlowTopology>();
    topology->SetFabric(GetFlowFabric());
    return topology;
}

} // namespace ns3
