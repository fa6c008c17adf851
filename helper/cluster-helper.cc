/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/cluster-helper.h"

#include "ns3/abort.h"
#include "ns3/arp-cache.h"
#include "ns3/arp-l3-protocol.h"
#include "ns3/boolean.h"
#include "ns3/bridge-helper.h"
#include "ns3/command-line.h"
#include "ns3/csma-helper.h"
#include "ns3/csma-net-device.h"
#include "ns3/data-rate.h"
#include "ns3/distributed-run.h"
#include "ns3/double.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/ipv4-interface.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4-static-routing.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/node-list.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ClusterHelper");

namespace
{

// Front-end address plan: server s owns 10.0.0.0 + s * 1024 (/22); its CPU-ToR link (routed
// fabric; unused when bridged) is the first /30, PCIe link of local GPU i the (i+1)-th.
// Switch-to-switch and storage links take /30s from 172.16.0.0/12.  Routes then follow the plan
// (one per server, not per link).
const Ipv4Mask kServerMask("255.255.252.0");
const Ipv4Mask kLinkMask("255.255.255.252");

Ipv4Address
ServerBlock(uint32_t server)
{
    return Ipv4Address(Ipv4Address("10.0.0.0").Get() + (server << 10));
}

// Bridged front-end: rack (ToR) t is one subnet 10.128.0.0 + t * 1024 (/22), the aggregation
// router's port first, then the CPUs; at most 4096 ToRs end below 10.192.0.0.
Ipv4Address
RackBlock(uint32_t tor)
{
    return Ipv4Address(Ipv4Address("10.128.0.0").Get() + (tor << 10));
}

Ipv4Address
Offset(Ipv4Address a, uint32_t n)
{
    return Ipv4Address(a.Get() + n);
}

// Two decimals at most, trailing zeros dropped: "36", "12.5", "63.02", "32400".
std::string
FormatNumber(double v)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << v;
    std::string t = s.str();
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.')
    {
        t.pop_back();
    }
    return t;
}

std::string
FormatGBps(double gbps)
{
    return FormatNumber(gbps / 8) + " GB/s";
}

} // namespace

std::string
FormatPlaneRatio(double nvlink, double infiniband, double ethernet)
{
    const double base = std::min({nvlink > 0 ? nvlink : infiniband, infiniband, ethernet});
    return FormatNumber(nvlink / base) + " : " + FormatNumber(infiniband / base) + " : " +
           FormatNumber(ethernet / base);
}

namespace
{

// Self-contained copy of the plane rule, owned by the transport's callback.
class ClusterPlaneSelector : public SimpleRefCount<ClusterPlaneSelector>
{
  public:
    uint32_t ranks{0};
    uint32_t gpusPerDomain{1};
    bool forced{false};
    ClusterPlane forcedPlane{ClusterPlane::INFINIBAND};
    std::map<ClusterPlane, int32_t> index;

    int32_t Select(uint32_t src, uint32_t dst)
    {
        if (src >= ranks || dst >= ranks || src == dst)
        {
            return -1;
        }
        const bool sameDomain = src / gpusPerDomain == dst / gpusPerDomain;
        ClusterPlane plane = sameDomain ? ClusterPlane::NVLINK : ClusterPlane::INFINIBAND;
        if (forced)
        {
            if (forcedPlane == ClusterPlane::NVLINK && !sameDomain)
            {
                return -1;
            }
            plane = forcedPlane;
        }
        auto it = index.find(plane);
        return it == index.end() ? -1 : it->second;
    }
};

} // namespace

ClusterHelper::ClusterHelper()
    : m_ib(std::make_unique<InfinibandHelper>())
{
}

ClusterHelper::ClusterHelper(const ClusterConfig& config)
    : m_config(config),
      m_ib(std::make_unique<InfinibandHelper>())
{
}

void
ClusterHelper::SetNvLinkDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    m_nvDeviceAttributes.emplace_back(name, value.Copy());
}

void
ClusterHelper::SetNvSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_nvSwitchAttributes.emplace_back(name, value.Copy());
}

void
ClusterHelper::SetIbDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    m_ib->SetDeviceAttribute(name, value);
}

void
ClusterHelper::SetIbSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_ib->SetSwitchAttribute(name, value);
}

void
ClusterHelper::SetIbChannelAttribute(const std::string& name, const AttributeValue& value)
{
    m_ib->SetChannelAttribute(name, value);
}

void
ClusterHelper::SetSubnetManagerAttribute(const std::string& name, const AttributeValue& value)
{
    m_smAttributes.emplace_back(name, value.Copy());
}

void
ClusterHelper::SetConfig(const ClusterConfig& config)
{
    NS_ABORT_MSG_IF(m_built, "ClusterHelper: SetConfig after Build");
    m_config = config;
}

const ClusterConfig&
ClusterHelper::GetConfig() const
{
    return m_config;
}

void
ClusterHelper::AddCommandLineArguments(CommandLine& cmd)
{
    m_config.AddCommandLineArguments(cmd);
    cmd.AddValue("describe", "print the built cluster", m_describe);
    cmd.AddValue("checkConservation",
                 "check at the end that the NVLink/InfiniBand links lost nothing (bytes, "
                 "credits, drops); a violation fails the run",
                 m_checkConservation);
}

void
ClusterHelper::ApplyCommandLine()
{
    std::string field;
    const std::string error = m_config.ApplyCommandLine(&field);
    if (!error.empty())
    {
        throw InputError("command line", 0, field, "cluster: " + error);
    }
}

bool
ClusterHelper::GetDescribeFlag() const
{
    return m_describe;
}

void
ClusterHelper::SetDescribeFlag(bool describe)
{
    m_describe = describe;
}

bool
ClusterHelper::GetCheckConservation() const
{
    return m_checkConservation;
}

void
ClusterHelper::SetCheckConservation(bool check)
{
    m_checkConservation = check;
}

int64_t
ClusterHelper::AssignStreams(int64_t stream)
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: AssignStreams before Build");
    int64_t next = stream;
    for (const EthDirection& d : m_ethDirections)
    {
        if (auto csma = DynamicCast<CsmaNetDevice>(d.device))
        {
            next += csma->AssignStreams(next);
        }
    }
    next += InternetStackHelper().AssignStreams(
        NodeContainer(m_gpus, m_cpus, m_storage, m_tors, m_aggs),
        next);
    return next - stream;
}

bool
ClusterHelper::IsBuilt() const
{
    return m_built;
}

std::string
ClusterHelper::TryBuild()
{
    NS_ABORT_MSG_IF(m_built, "ClusterHelper: Build called twice");
    const std::string error = m_config.Validate();
    if (!error.empty())
    {
        return error;
    }
    // The routed InfiniBand topology is pure data: route it before creating any node, so a
    // refused routing leaves nothing half built.
    BuildIbTopology();
    const std::string routing = m_sm->TryRoute();
    if (!routing.empty())
    {
        return "InfiniBand routing: " + routing;
    }
    const std::string partition = Partition();
    if (!partition.empty())
    {
        return "partition: " + partition;
    }
    BuildNodes();
    BuildFrontEnd();
    BuildNvLink();
    const std::string devices = BuildIbDevices();
    if (!devices.empty())
    {
        return "InfiniBand devices: " + devices;
    }
    ApplyConfigRates();
    m_built = true;
    return "";
}

void
ClusterHelper::Build()
{
    const std::string error = TryBuild();
    if (!error.empty())
    {
        throw InputError("cluster", 0, "", error);
    }
}

void
ClusterHelper::BuildIbTopology()
{
    const ClusterConfig& c = m_config;
    m_ibShape = ClusterIbShape::Compute(c);
    const ClusterIbShape& s = m_ibShape;
    const uint32_t k = c.ibSwitchRadix;
    const uint32_t ranks = c.GetNRanks();
    const ClusterLayout layout = c.GetLayout();
    InfinibandTopology& t = m_ibTopology;
    t = InfinibandTopology();
    m_hcaNode.assign(ranks, 0);
    // HCAs first, in rank order: the subnet manager then gives rank r LID r + 1.
    for (uint32_t r = 0; r < ranks; ++r)
    {
        m_hcaNode[r] = t.AddHca("server" + std::to_string(layout.GetServer(r)) + "/hca" +
                                std::to_string(layout.GetRail(r)));
    }
    auto addSwitch = [&](const std::string& name) {
        const uint32_t node = t.AddSwitch(name, k);
        m_ibSwitchName[node] = name;
        return node;
    };
    if (s.tiers == 1)
    {
        const uint32_t sw = addSwitch("ib/leaf0");
        for (uint32_t r = 0; r < ranks; ++r)
        {
            t.Connect(m_hcaNode[r], 1, sw, r + 1);
        }
    }
    else
    {
        // Leaf index = scalable unit x rails + rail: the leaves of one scalable unit (the
        // servers sharing a leaf per rail) are consecutive, so 3-tier pods keep them together.
        std::vector<uint32_t> leaf(s.leaves);
        for (uint32_t l = 0; l < s.leaves; ++l)
        {
            leaf[l] = addSwitch("ib/leaf" + std::to_string(l));
        }
        for (uint32_t r = 0; r < ranks; ++r)
        {
            t.Connect(m_hcaNode[r],
                      1,
                      leaf[layout.GetIbLeaf(r, s.hostsPerLeaf, s.rails)],
                      layout.GetIbLeafPort(r, s.hostsPerLeaf));
        }
        // Up ports follow the leaf's own hosts without a gap (the last leaf of a rail may
        // have fewer): InfinibandHelper numbers a switch's ports in the order they are cabled.
        std::vector<uint32_t> hostsOn(s.leaves, 0);
        for (uint32_t r = 0; r < ranks; ++r)
        {
            hostsOn[layout.GetIbLeaf(r, s.hostsPerLeaf, s.rails)]++;
        }
        if (s.tiers == 2)
        {
            std::vector<uint32_t> spine(s.spines);
            for (uint32_t j = 0; j < s.spines; ++j)
            {
                spine[j] = addSwitch("ib/spine" + std::to_string(j));
            }
            const uint32_t m = s.linksPerLeafSpine;
            for (uint32_t l = 0; l < s.leaves; ++l)
            {
                for (uint32_t u = 0; u < s.leafUplinks; ++u)
                {
                    t.Connect(leaf[l], hostsOn[l] + 1 + u, spine[u / m], l * m + u % m + 1);
                }
            }
        }
        else
        {
            const uint32_t p = s.podLeaves;
            std::vector<std::vector<uint32_t>> agg(s.pods);
            for (uint32_t pod = 0; pod < s.pods; ++pod)
            {
                for (uint32_t j = 0; j < s.leafUplinks; ++j)
                {
                    agg[pod].push_back(
                        addSwitch("ib/agg" + std::to_string(pod) + "_" + std::to_string(j)));
                }
            }
            std::vector<std::vector<uint32_t>> core(s.leafUplinks);
            for (uint32_t j = 0; j < s.leafUplinks; ++j)
            {
                for (uint32_t i = 0; i < p; ++i)
                {
                    core[j].push_back(
                        addSwitch("ib/core" + std::to_string(j) + "_" + std::to_string(i)));
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
    }
    m_sm = CreateObject<InfinibandSubnetManager>();
    m_sm->SetAttribute("RoutingEngine", StringValue(c.ibRoutingEngine));
    for (const auto& [name, value] : m_smAttributes)
    {
        m_sm->SetAttribute(name, *value);
    }
    m_sm->SetTopology(t);
}

std::string
ClusterHelper::Partition()
{
    m_nSystems = DistributedRun::GetSize();
    return m_config.PartitionDomains(m_nSystems, m_domainSystem);
}

uint32_t
ClusterHelper::GetNSystems() const
{
    return m_nSystems;
}

uint32_t
ClusterHelper::GetDomainSystemId(uint32_t domain) const
{
    NS_ABORT_MSG_UNLESS(domain < m_domainSystem.size(), "cluster: no NVLink domain " << domain);
    return m_domainSystem[domain];
}

void
ClusterHelper::BuildNodes()
{
    const ClusterConfig& c = m_config;
    // GPUs domain by domain, each on its process (node ids stay in rank order).  The
    // front-end (CPUs, ToRs, aggregation routers, storage) stays on process 0: ns-3's
    // CSMA has no remote channel; PCIe links to GPUs elsewhere become
    // PointToPointRemoteChannels (PointToPointHelper does that by itself).
    const uint32_t domainGpus = c.GetGpusPerDomain();
    for (uint32_t d = 0; d < c.GetNDomains(); ++d)
    {
        m_gpus.Create(domainGpus, m_domainSystem[d]);
    }
    m_cpus.Create(c.servers);
    m_storage.Create(c.storageNodes);
    m_tors.Create(c.GetNTors());
    m_aggs.Create(c.ethAggSwitches);
    // ns-3 names are a tree: "server3/gpu5" needs an object named "server3".  Servers (and
    // the "eth" group) get a plain Object as the parent of their nodes' names.
    for (uint32_t s = 0; s < c.servers; ++s)
    {
        m_nameGroups.push_back(CreateObject<Object>());
        Names::Add("server" + std::to_string(s), m_nameGroups.back());
    }
    m_nameGroups.push_back(CreateObject<Object>());
    Names::Add("eth", m_nameGroups.back());
    for (uint32_t r = 0; r < c.GetNRanks(); ++r)
    {
        Names::Add("server" + std::to_string(GetServer(r)) + "/gpu" +
                       std::to_string(GetLocalIndex(r)),
                   m_gpus.Get(r));
    }
    for (uint32_t s = 0; s < c.servers; ++s)
    {
        Names::Add("server" + std::to_string(s) + "/cpu", m_cpus.Get(s));
    }
    for (uint32_t i = 0; i < c.storageNodes; ++i)
    {
        Names::Add("storage" + std::to_string(i), m_storage.Get(i));
    }
    for (uint32_t t = 0; t < m_tors.GetN(); ++t)
    {
        Names::Add("eth/tor" + std::to_string(t), m_tors.Get(t));
    }
    for (uint32_t a = 0; a < m_aggs.GetN(); ++a)
    {
        Names::Add("eth/agg" + std::to_string(a), m_aggs.Get(a));
    }
}

Ipv4Address
ClusterHelper::LinkStorage(uint32_t storage, uint32_t agg)
{
    const ClusterConfig& c = m_config;
    uint32_t stIf;
    uint32_t aggIf;
    auto [stAddr, aggAddr] = Link(m_storage.Get(storage),
                                  m_aggs.Get(agg),
                                  c.storageRate_Gbps,
                                  c.ethDelay_ns,
                                  NextInfraNetwork(),
                                  stIf,
                                  aggIf);
    ++m_ethLinks;
    m_storageAddress[storage] = stAddr;
    AddDefaultRoute(m_storage.Get(storage), aggAddr, stIf);
    return stAddr;
}

Ipv4Address
ClusterHelper::NextInfraNetwork()
{
    return Ipv4Address(Ipv4Address("172.16.0.0").Get() + 4 * m_infraLinks++);
}

std::pair<Ipv4Address, Ipv4Address>
ClusterHelper::Link(Ptr<Node> a,
                    Ptr<Node> b,
                    double rate_Gbps,
                    double delay_ns,
                    Ipv4Address network,
                    uint32_t& ifA,
                    uint32_t& ifB)
{
    const uint64_t rate_bps = static_cast<uint64_t>(rate_Gbps * 1e9);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate_bps)));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(static_cast<int64_t>(delay_ns))));
    NetDeviceContainer devices = p2p.Install(a, b);
    Ipv4AddressHelper address;
    address.SetBase(network, kLinkMask);
    Ipv4InterfaceContainer interfaces = address.Assign(devices);
    ifA = interfaces.Get(0).second;
    ifB = interfaces.Get(1).second;
    TraceLink(devices, a, b, rate_Gbps);
    return {interfaces.GetAddress(0), interfaces.GetAddress(1)};
}

void
ClusterHelper::TraceLink(const NetDeviceContainer& devices,
                         Ptr<Node> a,
                         Ptr<Node> b,
                         double rate_Gbps)
{
    const uint64_t rate_bps = static_cast<uint64_t>(rate_Gbps * 1e9);
    for (uint32_t i = 0; i < 2; ++i)
    {
        m_ethDirections.emplace_back();
        EthDirection* d = &m_ethDirections.back();
        d->device = devices.Get(i);
        if (auto p2p = DynamicCast<PointToPointNetDevice>(d->device))
        {
            d->queue = p2p->GetQueue();
        }
        else
        {
            d->queue = DynamicCast<CsmaNetDevice>(d->device)->GetQueue();
        }
        d->srcNode = (i == 0 ? a : b)->GetId();
        d->dstNode = (i == 0 ? b : a)->GetId();
        d->rate_bps = rate_bps;
        // Both device types have these traces; CSMA fires PhyTxBegin once per frame that
        // gets the medium (not per backoff attempt).
        d->device->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&EthTxBegin, d));
        d->device->TraceConnectWithoutContext("MacTxDrop", MakeBoundCallback(&EthDrop, d));
        d->device->TraceConnectWithoutContext("PhyTxDrop", MakeBoundCallback(&EthDrop, d));
        d->queue->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&EthEnqueue, d));
    }
}

NetDeviceContainer
ClusterHelper::CsmaSegment(Ptr<Node> a, Ptr<Node> b, double rate_Gbps, double delay_ns)
{
    CsmaHelper csma;
    csma.SetChannelAttribute("DataRate",
                             DataRateValue(DataRate(static_cast<uint64_t>(rate_Gbps * 1e9))));
    csma.SetChannelAttribute("Delay", TimeValue(NanoSeconds(static_cast<int64_t>(delay_ns))));
    NodeContainer ends;
    ends.Add(a);
    ends.Add(b);
    NetDeviceContainer devices = csma.Install(ends);
    TraceLink(devices, a, b, rate_Gbps);
    return devices;
}

void
ClusterHelper::EthTxBegin(EthDirection* d, Ptr<const Packet> p)
{
    d->txBytes += p->GetSize();
    d->txPackets++;
    d->busy_ns += p->GetSize() * 8ULL * 1000000000ULL / d->rate_bps;
}

void
ClusterHelper::EthDrop(EthDirection* d, Ptr<const Packet> /* p */)
{
    d->drops++;
}

void
ClusterHelper::EthEnqueue(EthDirection* d, Ptr<const Packet> /* p */)
{
    d->peakQueueBytes = std::max<uint64_t>(d->peakQueueBytes, d->queue->GetNBytes());
}

void
ClusterHelper::BuildFrontEnd()
{
    const ClusterConfig& c = m_config;
    if (c.IsEthBridged())
    {
        BuildBridgedFrontEnd();
        return;
    }
    InternetStackHelper internet;
    internet.Install(m_gpus);
    internet.Install(m_cpus);
    internet.Install(m_storage);
    internet.Install(m_tors);
    internet.Install(m_aggs);
    const bool useStatic = c.ethRouting == "static";

    const uint32_t perTor = c.GetServersPerTor();
    const uint32_t aggs = c.ethAggSwitches;
    m_gpuAddress.assign(c.GetNRanks(), Ipv4Address());
    m_cpuAddress.assign(c.servers, Ipv4Address());
    m_storageAddress.assign(c.storageNodes, Ipv4Address());

    // [tor][agg] -> (ToR address, ToR interface, agg address, agg interface)
    struct Uplink
    {
        Ipv4Address torAddr;
        uint32_t torIf;
        Ipv4Address aggAddr;
        uint32_t aggIf;
    };

    std::vector<std::vector<Uplink>> uplink(m_tors.GetN(), std::vector<Uplink>(aggs));
    for (uint32_t t = 0; t < m_tors.GetN(); ++t)
    {
        for (uint32_t a = 0; a < aggs; ++a)
        {
            Uplink& u = uplink[t][a];
            auto [ta, aa] = Link(m_tors.Get(t),
                                 m_aggs.Get(a),
                                 c.GetTorUplinkRate_Gbps(),
                                 c.ethDelay_ns,
                                 NextInfraNetwork(),
                                 u.torIf,
                                 u.aggIf);
            u.torAddr = ta;
            u.aggAddr = aa;
            ++m_ethLinks;
        }
    }
    for (uint32_t s = 0; s < c.servers; ++s)
    {
        Ptr<Node> cpu = m_cpus.Get(s);
        const uint32_t t = s / perTor;
        Ptr<Node> tor = m_tors.Get(t);
        uint32_t cpuIf;
        uint32_t torIf;
        // The server's ports as one link of ports x rate (a LAG); the per-GPU share is what
        // the 36 : 4 : 1 comparison uses.
        auto [cpuAddr, torAddr] = Link(cpu,
                                       tor,
                                       c.ethPortsPerServer * c.ethRate_Gbps,
                                       c.ethDelay_ns,
                                       ServerBlock(s),
                                       cpuIf,
                                       torIf);
        ++m_ethLinks;
        m_cpuAddress[s] = cpuAddr;
        AddDefaultRoute(cpu, torAddr, cpuIf);
        AddNetworkRoute(tor, ServerBlock(s), kServerMask, cpuAddr, torIf);
        for (uint32_t a = 0; a < aggs; ++a)
        {
            AddNetworkRoute(m_aggs.Get(a),
                            ServerBlock(s),
                            kServerMask,
                            uplink[t][a].torAddr,
                            uplink[t][a].aggIf);
        }
        LinkServerGpus(s);
    }
    // Server-to-server traffic across ToRs takes aggregation switch 0; storage i hangs off
    // aggregation switch i mod aggs and every ToR reaches it through that switch.
    for (uint32_t t = 0; t < m_tors.GetN(); ++t)
    {
        AddDefaultRoute(m_tors.Get(t), uplink[t][0].aggAddr, uplink[t][0].torIf);
    }
    for (uint32_t i = 0; i < c.storageNodes; ++i)
    {
        const uint32_t a = i % aggs;
        const Ipv4Address stAddr = LinkStorage(i, a);
        for (uint32_t t = 0; t < m_tors.GetN(); ++t)
        {
            AddNetworkRoute(m_tors.Get(t),
                            stAddr,
                            Ipv4Mask("255.255.255.255"),
                            uplink[t][a].aggAddr,
                            uplink[t][a].torIf);
        }
    }
    if (!useStatic)
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }
}

// With global routing the static tables stay empty (static routes would take precedence in
// the list routing) and GlobalRouteManager fills its own after the links exist.
void
ClusterHelper::AddDefaultRoute(Ptr<Node> node, Ipv4Address gateway, uint32_t interface) const
{
    if (m_config.ethRouting == "static")
    {
        Ipv4StaticRoutingHelper()
            .GetStaticRouting(node->GetObject<Ipv4>())
            ->SetDefaultRoute(gateway, interface);
    }
}

void
ClusterHelper::AddNetworkRoute(Ptr<Node> node,
                               Ipv4Address network,
                               Ipv4Mask mask,
                               Ipv4Address gateway,
                               uint32_t interface) const
{
    if (m_config.ethRouting == "static")
    {
        Ipv4StaticRoutingHelper()
            .GetStaticRouting(node->GetObject<Ipv4>())
            ->AddNetworkRouteTo(network, mask, gateway, interface);
    }
}

// GPU <-> CPU PCIe links of server \p s, addressed inside the server's block.
void
ClusterHelper::LinkServerGpus(uint32_t s)
{
    const ClusterConfig& c = m_config;
    Ptr<Node> cpu = m_cpus.Get(s);
    for (uint32_t i = 0; i < c.gpusPerServer; ++i)
    {
        const uint32_t rank = c.GetLayout().GetRank(s, i);
        Ptr<Node> gpu = m_gpus.Get(rank);
        uint32_t cpuPcieIf;
        uint32_t gpuIf;
        auto [cpuPcie, gpuAddr] = Link(cpu,
                                       gpu,
                                       c.pcieRate_Gbps,
                                       c.pcieDelay_ns,
                                       Offset(ServerBlock(s), 4 * (i + 1)),
                                       cpuPcieIf,
                                       gpuIf);
        ++m_pcieLinks;
        m_gpuAddress[rank] = gpuAddr;
        AddDefaultRoute(gpu, cpuPcie, gpuIf);
    }
}

void
ClusterHelper::BuildBridgedFrontEnd()
{
    const ClusterConfig& c = m_config;
    // ToRs are L2 switches: no IP stack, only their BridgeNetDevice.
    InternetStackHelper internet;
    internet.Install(m_gpus);
    internet.Install(m_cpus);
    internet.Install(m_storage);
    internet.Install(m_aggs);
    const bool useStatic = c.ethRouting == "static";

    const uint32_t perTor = c.GetServersPerTor();
    const uint32_t aggs = c.ethAggSwitches;
    const uint32_t tors = m_tors.GetN();
    m_gpuAddress.assign(c.GetNRanks(), Ipv4Address());
    m_cpuAddress.assign(c.servers, Ipv4Address());
    m_storageAddress.assign(c.storageNodes, Ipv4Address());

    // ns-3 has no spanning tree protocol: a BridgeNetDevice floods broadcasts and unknown
    // destinations on every port, so two uplinks from one ToR (to two aggregation routers,
    // which are both on the rack's subnet) would make a loop and more than one path for the
    // rack's frames.  Each ToR therefore has exactly one uplink, to aggregation router
    // t mod aggs, at the capacity of the routed ToR's uplinks together; redundancy is lost.
    // Traffic between racks of different aggregation routers and to storage on another
    // router crosses a full point-to-point mesh of the aggregation routers, each link at
    // the uplink capacity of one router's ToRs (non-blocking).
    struct Hop
    {
        Ipv4Address gateway;
        uint32_t interface {
            0
        };
    };

    std::vector<std::vector<Hop>> mesh(aggs, std::vector<Hop>(aggs));
    const double meshRate = ((tors + aggs - 1) / aggs) * c.GetTorUplinkTotal_Gbps();
    for (uint32_t a = 0; a < aggs; ++a)
    {
        for (uint32_t b = a + 1; b < aggs; ++b)
        {
            uint32_t ifA;
            uint32_t ifB;
            auto [addrA, addrB] = Link(m_aggs.Get(a),
                                       m_aggs.Get(b),
                                       meshRate,
                                       c.ethDelay_ns,
                                       NextInfraNetwork(),
                                       ifA,
                                       ifB);
            mesh[a][b] = {addrB, ifA};
            mesh[b][a] = {addrA, ifB};
            ++m_ethLinks;
        }
    }
    // Every other aggregation router reaches what \p owner serves through the mesh.
    auto viaMesh = [&](uint32_t owner, Ipv4Address net, Ipv4Mask mask) {
        for (uint32_t b = 0; b < aggs; ++b)
        {
            if (b != owner)
            {
                AddNetworkRoute(m_aggs.Get(b),
                                net,
                                mask,
                                mesh[b][owner].gateway,
                                mesh[b][owner].interface);
            }
        }
    };

    for (uint32_t t = 0; t < tors; ++t)
    {
        Ptr<Node> tor = m_tors.Get(t);
        const uint32_t owner = t % aggs;
        Ptr<Node> agg = m_aggs.Get(owner);
        // The rack's subnet: aggregation router first (.1), then the CPUs.
        const Ipv4Address rackNet = RackBlock(t);
        Ipv4AddressHelper address;
        address.SetBase(rackNet, kServerMask);
        NetDeviceContainer ports;
        NetDeviceContainer up = CsmaSegment(tor, agg, c.GetTorUplinkTotal_Gbps(), c.ethDelay_ns);
        ++m_ethLinks;
        ports.Add(up.Get(0));
        Ipv4InterfaceContainer aggIfc = address.Assign(NetDeviceContainer(up.Get(1)));
        const Ipv4Address aggAddr = aggIfc.GetAddress(0);
        const uint32_t aggIf = aggIfc.Get(0).second;
        viaMesh(owner, rackNet, kServerMask);
        for (uint32_t s = t * perTor; s < std::min(c.servers, (t + 1) * perTor); ++s)
        {
            Ptr<Node> cpu = m_cpus.Get(s);
            // The server's ports as one segment of ports x rate (as the routed LAG).
            NetDeviceContainer seg =
                CsmaSegment(cpu, tor, c.ethPortsPerServer * c.ethRate_Gbps, c.ethDelay_ns);
            ++m_ethLinks;
            ports.Add(seg.Get(1));
            Ipv4InterfaceContainer cpuIfc = address.Assign(NetDeviceContainer(seg.Get(0)));
            m_cpuAddress[s] = cpuIfc.GetAddress(0);
            AddDefaultRoute(cpu, aggAddr, cpuIfc.Get(0).second);
            // The server's /22 holds its GPUs' PCIe links.
            AddNetworkRoute(agg, ServerBlock(s), kServerMask, m_cpuAddress[s], aggIf);
            viaMesh(owner, ServerBlock(s), kServerMask);
            LinkServerGpus(s);
        }
        BridgeHelper bridge;
        bridge.Install(tor, ports);
    }
    for (uint32_t i = 0; i < c.storageNodes; ++i)
    {
        const uint32_t a = i % aggs;
        const Ipv4Address stAddr = LinkStorage(i, a);
        viaMesh(a, stAddr, Ipv4Mask("255.255.255.255"));
    }
    if (!useStatic)
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }
}

void
ClusterHelper::BuildNvLink()
{
    const ClusterConfig& c = m_config;
    const uint32_t domainGpus = c.GetGpusPerDomain();
    if (domainGpus < 2)
    {
        return;
    }
    const NvLinkFabricSpec spec = c.GetNvLinkSpec();
    for (uint32_t d = 0; d < c.GetNDomains(); ++d)
    {
        auto helper = std::make_unique<NvLinkHelper>();
        helper->SetFabric(spec);
        for (const auto& [name, value] : m_nvDeviceAttributes)
        {
            helper->SetDeviceAttribute(name, *value);
        }
        for (const auto& [name, value] : m_nvSwitchAttributes)
        {
            helper->SetSwitchAttribute(name, *value);
        }
        NodeContainer gpus;
        for (uint32_t g = 0; g < domainGpus; ++g)
        {
            gpus.Add(m_gpus.Get(d * domainGpus + g));
        }
        NetDeviceContainer devices = helper->Install(gpus);
        // A DGX's NVSwitches sit on its baseboard; an NVL72's switch trays belong to the rack.
        std::string parent = "server" + std::to_string(d);
        if (c.serversPerDomain > 1)
        {
            parent = "rack" + std::to_string(d);
            m_nameGroups.push_back(CreateObject<Object>());
            Names::Add(parent, m_nameGroups.back());
        }
        NodeContainer switches = helper->GetSwitchNodes();
        for (uint32_t s = 0; s < switches.GetN(); ++s)
        {
            Names::Add(parent + "/nvswitch" + std::to_string(s), switches.Get(s));
            m_nvswitches.Add(switches.Get(s));
        }
        for (uint32_t i = 0; i < devices.GetN(); ++i)
        {
            Ptr<CreditLinkNetDevice> dev = DynamicCast<CreditLinkNetDevice>(devices.Get(i));
            m_nvDevices.push_back(dev);
            m_nvDevices.push_back(dev->GetPeer());
        }
        m_nvlink.push_back(std::move(helper));
    }
}

std::string
ClusterHelper::BuildIbDevices()
{
    const InfinibandTopology& t = m_ibTopology;
    std::vector<Ptr<Node>> nodeOf(t.GetNNodes());
    for (uint32_t r = 0; r < m_hcaNode.size(); ++r)
    {
        nodeOf[m_hcaNode[r]] = m_gpus.Get(r);
    }
    m_nameGroups.push_back(CreateObject<Object>());
    Names::Add("ib", m_nameGroups.back());
    if (m_config.ibDelay_ns > 0)
    {
        m_ib->SetChannelAttribute(
            "Delay",
            TimeValue(NanoSeconds(static_cast<int64_t>(m_config.ibDelay_ns))));
    }
    const std::vector<uint32_t> systemOf =
        m_config.GetLayout().GetIbSwitchSystemIds(t, m_hcaNode, m_domainSystem, m_nSystems);
    for (uint32_t sw : t.GetSwitches())
    {
        nodeOf[sw] = CreateObject<Node>(systemOf[sw]);
        m_ib->InstallSwitch(nodeOf[sw]);
        Names::Add(m_ibSwitchName.at(sw), nodeOf[sw]);
        m_ibSwitches.Add(nodeOf[sw]);
    }
    m_hcaDevice.assign(m_hcaNode.size(), nullptr);
    std::vector<Ptr<InfinibandNetDevice>> hcaOfNode(t.GetNNodes());
    for (const auto& link : t.GetLinks())
    {
        NetDeviceContainer pair = m_ib->Connect(nodeOf[link.nodeA], nodeOf[link.nodeB]);
        const uint32_t ends[2][2] = {{link.nodeA, link.portA}, {link.nodeB, link.portB}};
        for (uint32_t e = 0; e < 2; ++e)
        {
            Ptr<InfinibandNetDevice> dev = DynamicCast<InfinibandNetDevice>(pair.Get(e));
            m_ibDevices.push_back(dev);
            const uint32_t node = ends[e][0];
            const uint32_t port = ends[e][1];
            if (t.IsSwitch(node))
            {
                // Connect numbers ports in cabling order; the LFTs use the topology's numbers.
                Ptr<InfinibandSwitch> sw = nodeOf[node]->GetObject<InfinibandSwitch>();
                if (sw->GetPort(sw->IndexOfIbPort(port)) != dev)
                {
                    return t.Describe(node) + " port " + std::to_string(port) +
                           " is not the device cabled for it";
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
        m_hcaDevice[r] = hcaOfNode[m_hcaNode[r]];
        m_hcaDevice[r]->SetLid(m_sm->GetLid(m_hcaNode[r], 1));
    }
    return m_ib->Validate();
}

void
ClusterHelper::ApplyConfigRates()
{
    // The devices take their rates from the NVLink generation and the IB preset; the config's
    // per-link figures (overridden by --ibRate or a bandwidth sweep) win, with the line coding
    // kept: signalling = data rate / encoding efficiency.
    const ClusterConfig& c = m_config;
    auto apply = [](Ptr<CreditLinkNetDevice> dev, double dataBps) {
        DataRateValue signalling;
        DoubleValue efficiency;
        dev->GetAttribute("DataRate", signalling);
        dev->GetAttribute("EncodingEfficiency", efficiency);
        const auto bps = static_cast<uint64_t>(std::llround(dataBps / efficiency.Get()));
        if (bps != signalling.Get().GetBitRate())
        {
            dev->SetAttribute("DataRate", DataRateValue(DataRate(bps)));
        }
    };
    for (const auto& dev : m_nvDevices)
    {
        Ptr<NvLinkNetDevice> nv = DynamicCast<NvLinkNetDevice>(dev);
        const NvLinkGeneration& g = GetNvLinkGeneration(nv->GetGeneration());
        if (std::abs(c.nvlinkLinkRate_GBps * 8e9 - double(g.linkDataRateBps)) >= 1.0)
        {
            apply(dev, c.nvlinkLinkRate_GBps * 8e9 * nv->GetLinks());
        }
    }
    for (const auto& dev : m_ibDevices)
    {
        apply(dev, c.ibRate_Gbps * 1e9);
    }
}

Ptr<InfinibandNetDevice>
ClusterHelper::GetHcaDevice(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return m_hcaDevice[rank];
}

InfinibandHelper&
ClusterHelper::GetInfinibandHelper()
{
    return *m_ib;
}

uint32_t
ClusterHelper::GetNvLinkGpuId(uint32_t rank) const
{
    return m_config.GetLayout().GetDomainGpuId(rank);
}

Ptr<NvLinkGpu>
ClusterHelper::GetNvLinkGpu(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    if (m_nvlink.empty())
    {
        return nullptr;
    }
    return m_nvlink[GetDomain(rank)]->GetGpu(GetNvLinkGpuId(rank));
}

std::vector<Ptr<NvLinkNetDevice>>
ClusterHelper::GetNvLinkDevices(uint32_t rank) const
{
    std::vector<Ptr<NvLinkNetDevice>> devices;
    Ptr<NvLinkGpu> gpu = GetNvLinkGpu(rank);
    for (uint32_t i = 0; gpu && i < gpu->GetNDevices(); ++i)
    {
        devices.push_back(gpu->GetDevice(i));
    }
    return devices;
}

NvLinkHelper&
ClusterHelper::GetNvLinkHelper(uint32_t domain)
{
    NS_ABORT_MSG_UNLESS(domain < m_nvlink.size(), "cluster: no NVLink domain " << domain);
    return *m_nvlink[domain];
}

void
ClusterHelper::CheckRank(uint32_t rank) const
{
    m_config.GetLayout().CheckRank(rank);
}

uint32_t
ClusterHelper::GetNRanks() const
{
    return m_config.GetNRanks();
}

uint32_t
ClusterHelper::GetServer(uint32_t rank) const
{
    return m_config.GetLayout().GetServer(rank);
}

uint32_t
ClusterHelper::GetLocalIndex(uint32_t rank) const
{
    return m_config.GetLayout().GetLocalIndex(rank);
}

uint32_t
ClusterHelper::GetDomain(uint32_t rank) const
{
    return m_config.GetLayout().GetDomain(rank);
}

uint32_t
ClusterHelper::GetRail(uint32_t rank) const
{
    return m_config.GetLayout().GetRail(rank);
}

uint32_t
ClusterHelper::GetNDomains() const
{
    return m_config.GetNDomains();
}

std::vector<uint32_t>
ClusterHelper::GetDomainRanks(uint32_t domain) const
{
    return m_config.GetLayout().GetDomainRanks(domain);
}

Ptr<Node>
ClusterHelper::GetGpuNode(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return m_gpus.Get(rank);
}

Ptr<Node>
ClusterHelper::GetCpuNode(uint32_t server) const
{
    NS_ABORT_MSG_UNLESS(m_built && server < m_cpus.GetN(), "cluster: no server " << server);
    return m_cpus.Get(server);
}

NodeContainer
ClusterHelper::GetGpuNodes() const
{
    return m_gpus;
}

NodeContainer
ClusterHelper::GetCpuNodes() const
{
    return m_cpus;
}

NodeContainer
ClusterHelper::GetStorageNodes() const
{
    return m_storage;
}

NodeContainer
ClusterHelper::GetEthSwitchNodes() const
{
    return NodeContainer(m_tors, m_aggs);
}

NodeContainer
ClusterHelper::GetNvSwitchNodes() const
{
    return m_nvswitches;
}

NodeContainer
ClusterHelper::GetIbSwitchNodes() const
{
    return m_ibSwitches;
}

std::map<std::string, uint32_t>
ClusterHelper::GetNodeCounts() const
{
    return {{"gpu", m_gpus.GetN()},
            {"cpu", m_cpus.GetN()},
            {"storage", m_storage.GetN()},
            {"eth-switch", m_tors.GetN() + m_aggs.GetN()},
            {"nvswitch", m_nvswitches.GetN()},
            {"ib-switch", m_ibSwitches.GetN()}};
}

const InfinibandTopology&
ClusterHelper::GetIbTopology() const
{
    return m_ibTopology;
}

Ptr<InfinibandSubnetManager>
ClusterHelper::GetSubnetManager() const
{
    return m_sm;
}

const ClusterIbShape&
ClusterHelper::GetIbShape() const
{
    return m_ibShape;
}

uint32_t
ClusterHelper::GetHcaTopologyNode(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return m_hcaNode[rank];
}

uint16_t
ClusterHelper::GetHcaLid(uint32_t rank) const
{
    return m_sm->GetLid(GetHcaTopologyNode(rank), 1);
}

std::string
ClusterHelper::GetIbSwitchName(uint32_t topologyNode) const
{
    auto it = m_ibSwitchName.find(topologyNode);
    return it == m_ibSwitchName.end() ? "" : it->second;
}

Ipv4Address
ClusterHelper::GetGpuAddress(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return m_gpuAddress[rank];
}

Ipv4Address
ClusterHelper::GetCpuAddress(uint32_t server) const
{
    NS_ABORT_MSG_UNLESS(m_built && server < m_cpuAddress.size(), "cluster: no server " << server);
    return m_cpuAddress[server];
}

Ipv4Address
ClusterHelper::GetStorageAddress(uint32_t i) const
{
    NS_ABORT_MSG_UNLESS(m_built && i < m_storageAddress.size(), "cluster: no storage node " << i);
    return m_storageAddress[i];
}

uint32_t
ClusterHelper::GetNPcieLinks() const
{
    return m_pcieLinks;
}

uint32_t
ClusterHelper::GetNEthernetLinks() const
{
    return m_ethLinks;
}

std::string
ClusterHelper::TrySelectPlane(uint32_t srcRank,
                              uint32_t dstRank,
                              ClusterPlane& plane,
                              const std::string& groupName) const
{
    std::ostringstream why;
    const uint32_t n = m_config.GetNRanks();
    if (srcRank >= n || dstRank >= n)
    {
        why << "rank " << std::max(srcRank, dstRank) << " out of range (" << n << " ranks)";
        return why.str();
    }
    if (srcRank == dstRank)
    {
        why << "rank " << srcRank << " to itself uses no plane";
        return why.str();
    }
    const bool sameDomain = GetDomain(srcRank) == GetDomain(dstRank);
    auto forced = m_forced.find(groupName);
    if (forced != m_forced.end())
    {
        if (forced->second == ClusterPlane::NVLINK && !sameDomain)
        {
            why << "group '" << groupName << "' is forced onto nvlink but ranks " << srcRank
                << " and " << dstRank << " are in NVLink domains " << GetDomain(srcRank) << " and "
                << GetDomain(dstRank);
            return why.str();
        }
        plane = forced->second;
        return "";
    }
    plane = sameDomain ? ClusterPlane::NVLINK : ClusterPlane::INFINIBAND;
    return "";
}

ClusterPlane
ClusterHelper::SelectPlane(uint32_t srcRank, uint32_t dstRank, const std::string& groupName) const
{
    ClusterPlane plane = ClusterPlane::INFINIBAND;
    const std::string error = TrySelectPlane(srcRank, dstRank, plane, groupName);
    NS_ABORT_MSG_IF(!error.empty(), "cluster: " << error);
    return plane;
}

void
ClusterHelper::ForcePlane(const std::string& groupName, ClusterPlane plane)
{
    m_forced[groupName] = plane;
}

void
ClusterHelper::ClearForcedPlanes()
{
    m_forced.clear();
}

Ptr<GpuTransport>
ClusterHelper::InstallTransport(const std::string& groupName)
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: InstallTransport before Build");
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    std::map<ClusterPlane, int32_t> index;
    Ptr<InfinibandTransportPlane> ib = CreateObject<InfinibandTransportPlane>();
    for (uint32_t r = 0; r < GetNRanks(); ++r)
    {
        ib->AddRank(r, m_hcaDevice[r]);
    }
    index[ClusterPlane::INFINIBAND] = static_cast<int32_t>(transport->AddPlane(ib));
    if (!m_nvlink.empty())
    {
        Ptr<NvLinkTransportPlane> nv = CreateObject<NvLinkTransportPlane>();
        for (uint32_t d = 0; d < m_nvlink.size(); ++d)
        {
            nv->AddDomain(m_nvlink[d]->GetDomain(), GetDomainRanks(d));
        }
        index[ClusterPlane::NVLINK] = static_cast<int32_t>(transport->AddPlane(nv));
    }
    transport->SetPlaneSelector(MakePlaneSelector(index, groupName));
    if (m_nSystems > 1)
    {
        // Each process runs its ranks; notifications cross over the cut InfiniBand links.
        NS_ABORT_MSG_IF(transport->GetNotificationLatency() <
                            NanoSeconds(static_cast<int64_t>(m_config.ibDelay_ns)),
                        "cluster: GpuTransport NotificationLatency "
                            << transport->GetNotificationLatency().GetNanoSeconds()
                            << " ns is below the lookahead (--ibDelay " << m_config.ibDelay_ns
                            << " ns)");
        transport->SetDistributed(m_nSystems, MakeCallback(&DistributedRun::SendNotification));
        DistributedRun::SetNotificationReceiver(
            MakeCallback(&GpuTransport::ReceiveRemote, transport));
    }
    return transport;
}

Ptr<FrontEndTransport>
ClusterHelper::InstallFrontEndTransport()
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: InstallFrontEndTransport before Build");
    for (const NodeContainer* nodes : {&m_gpus, &m_cpus, &m_storage, &m_aggs, &m_tors})
    {
        for (uint32_t i = 0; i < nodes->GetN(); ++i)
        {
            if (Ptr<ArpL3Protocol> arp = nodes->Get(i)->GetObject<ArpL3Protocol>())
            {
                arp->SetAttribute("RequestJitter",
                                  StringValue("ns3::ConstantRandomVariable[Constant=0.0]"));
            }
            Ptr<Ipv4L3Protocol> ip = nodes->Get(i)->GetObject<Ipv4L3Protocol>();
            for (uint32_t k = 0; ip && k < ip->GetNInterfaces(); ++k)
            {
                if (Ptr<ArpCache> cache = ip->GetInterface(k)->GetArpCache())
                {
                    cache->SetAttribute("PendingQueueSize", UintegerValue(4096));
                }
            }
        }
    }
    Ptr<FrontEndTransport> frontEnd = CreateObject<FrontEndTransport>();
    for (uint32_t r = 0; r < GetNRanks(); ++r)
    {
        const uint32_t server = GetServer(r);
        frontEnd->AddRank(r,
                          m_gpus.Get(r),
                          m_gpuAddress[r],
                          m_cpus.Get(server),
                          m_cpuAddress[server]);
    }
    for (uint32_t i = 0; i < m_storage.GetN(); ++i)
    {
        frontEnd->AddStorage(m_storage.Get(i), m_storageAddress[i]);
    }
    return frontEnd;
}

std::vector<ClusterHelper::FrontEndLinkStats>
ClusterHelper::GetFrontEndLinkStats() const
{
    std::set<int64_t> gpus;
    for (uint32_t i = 0; i < m_gpus.GetN(); ++i)
    {
        gpus.insert(m_gpus.Get(i)->GetId());
    }
    std::vector<FrontEndLinkStats> out;
    out.reserve(m_ethDirections.size());
    for (const EthDirection& d : m_ethDirections)
    {
        FrontEndLinkStats s;
        s.srcNode = d.srcNode;
        s.dstNode = d.dstNode;
        s.pcie = gpus.count(d.srcNode) || gpus.count(d.dstNode);
        s.rate_bps = d.rate_bps;
        s.txBytes = d.txBytes;
        s.busy_ns = d.busy_ns;
        s.drops = d.drops;
        out.push_back(s);
    }
    return out;
}

GpuTransport::PlaneSelector
ClusterHelper::MakePlaneSelector(const std::map<ClusterPlane, int32_t>& planeIndex,
                                 const std::string& groupName) const
{
    Ptr<ClusterPlaneSelector> selector = Create<ClusterPlaneSelector>();
    selector->ranks = m_config.GetNRanks();
    selector->gpusPerDomain = m_config.GetGpusPerDomain();
    selector->index = planeIndex;
    auto forced = m_forced.find(groupName);
    if (forced != m_forced.end())
    {
        selector->forced = true;
        selector->forcedPlane = forced->second;
    }
    return MakeCallback(&ClusterPlaneSelector::Select, selector);
}

double
ClusterHelper::GetNvLinkBisectionPerDomain_Gbps() const
{
    // NVSwitches are non-blocking: half the domain's GPUs can send at full rate to the other half.
    return m_config.GetGpusPerDomain() / 2 * m_config.GetNvLinkPerGpu_Gbps();
}

double
ClusterHelper::GetIbBisection_Gbps() const
{
    const uint64_t hcas = m_config.GetNRanks();
    if (m_ibShape.tiers <= 1)
    {
        return hcas / 2 * m_config.ibRate_Gbps;
    }
    // Bounded by the HCAs or by the leaf uplinks (oversubscription); above the leaves the
    // tree is non-blocking.
    const uint64_t uplinks = static_cast<uint64_t>(m_ibShape.leaves) * m_ibShape.leafUplinks;
    return std::min(hcas, uplinks) / 2 * m_config.ibRate_Gbps;
}

double
ClusterHelper::GetEthBisection_Gbps() const
{
    const ClusterConfig& c = m_config;
    const double servers = c.servers * c.ethPortsPerServer * c.ethRate_Gbps;
    if (c.GetNTors() <= 1)
    {
        return servers / 2;
    }
    const double uplinks = c.GetNTors() * c.ethAggSwitches * c.GetTorUplinkRate_Gbps();
    return std::min(servers, uplinks) / 2;
}

std::string
ClusterHelper::Describe() const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: Describe before Build");
    const ClusterConfig& c = m_config;
    std::ostringstream o;
    o << "cluster " << c.preset << ": " << c.servers << " servers x " << c.gpusPerServer
      << " GPUs = " << c.GetNRanks() << " GPUs; " << c.GetNDomains() << " NVLink domain(s) of "
      << c.GetGpusPerDomain() << " GPUs; " << m_ibShape.rails << " InfiniBand rails, "
      << m_ibShape.tiers << " tier(s)\n";
    o << "nodes:";
    uint32_t total = 0;
    for (const char* kind : {"gpu", "cpu", "nvswitch", "ib-switch", "eth-switch", "storage"})
    {
        const uint32_t n = GetNodeCounts().at(kind);
        o << " " << kind << " " << n;
        total += n;
    }
    o << " (total " << total << ")\n";
    // Bundle sizes of the GPU-switch pairs, e.g. 4-5 links for DGX H100's 5+4+4+5.
    const NvLinkFabricSpec spec = c.GetNvLinkSpec();
    uint32_t minLinks = 0;
    uint32_t maxLinks = 0;
    if (!spec.linksPerSwitch.empty())
    {
        minLinks = *std::min_element(spec.linksPerSwitch.begin(), spec.linksPerSwitch.end());
        maxLinks = *std::max_element(spec.linksPerSwitch.begin(), spec.linksPerSwitch.end());
    }
    o << "links (both directions): nvlink " << m_nvDevices.size() / 2 << " GPU-switch bundles of "
      << minLinks;
    if (maxLinks != minLinks)
    {
        o << "-" << maxLinks;
    }
    o << " links; infiniband " << m_ibShape.cables << " cables (" << m_ibShape.leaves << " leaves, "
      << m_ibShape.spines << (m_ibShape.tiers == 3 ? " aggregation, " : " spines, ")
      << m_ibShape.cores << " cores); ethernet " << m_ethLinks << "; pcie " << m_pcieLinks << "\n";
    if (c.IsEthBridged())
    {
        o << "front-end: bridged ToR (L2: CSMA port per server + BridgeNetDevice, one IPv4 "
             "subnet per rack, 1 uplink), IPv4 aggregation routers, "
          << c.ethRouting << " routing\n";
    }
    else
    {
        o << "front-end: routed ToR (IPv4 router, point-to-point to every aggregation "
             "switch), IPv4 aggregation routers, "
          << c.ethRouting << " routing\n";
    }
    const double nv = c.GetNvLinkPerGpu_Gbps();
    const double ib = c.GetIbPerGpu_Gbps();
    const double eth = c.GetEthPerGpu_Gbps();
    o << "per-GPU bandwidth, per direction:\n";
    o << "  nvlink      " << FormatGBps(nv) << "  (NVLink" << c.nvlinkGen << ": "
      << c.nvlinkLinksPerGpu << " links x " << FormatNumber(c.nvlinkLinkRate_GBps) << " GB/s)\n";
    o << "  infiniband  " << FormatGBps(ib) << "  (1 HCA x " << FormatNumber(c.ibRate_Gbps)
      << " Gb/s)\n";
    o << "  front-end   " << FormatGBps(eth) << "  (" << c.ethPortsPerServer << " x "
      << FormatNumber(c.ethRate_Gbps) << " GbE per server / " << c.gpusPerServer << " GPUs)\n";
    o << "  pcie        " << FormatGBps(c.pcieRate_Gbps) << "  (GPU <-> CPU)\n";
    o << "ratio nvlink : infiniband : front-end = " << FormatPlaneRatio(nv, ib, eth) << "\n";
    o << "bisection bandwidth, per direction:\n";
    o << "  nvlink      " << FormatGBps(GetNvLinkBisectionPerDomain_Gbps()) << " per domain x "
      << c.GetNDomains() << "\n";
    o << "  infiniband  " << FormatGBps(GetIbBisection_Gbps()) << "  (oversubscription "
      << FormatNumber(c.oversubscription) << ":1)\n";
    o << "  ethernet    " << FormatGBps(GetEthBisection_Gbps()) << "  (" << c.GetNTors();
    if (c.IsEthBridged())
    {
        o << " bridged ToR(s) x 1 uplink of " << FormatNumber(c.GetTorUplinkTotal_Gbps())
          << " Gb/s; " << c.ethAggSwitches << " aggregation routers, meshed)\n";
    }
    else
    {
        o << " routed ToR(s) x " << c.ethAggSwitches << " aggregation uplinks of "
          << FormatNumber(c.GetTorUplinkRate_Gbps()) << " Gb/s)\n";
    }
    return o.str();
}

void
ClusterHelper::WriteNodes(Ptr<ResultsDatabase> db) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    const ClusterConfig& c = m_config;
    auto add = [&](Ptr<Node> n, const std::string& kind, int64_t server, int64_t rank) {
        if (!DistributedRun::IsLocal(n))
        {
            return; // another process writes it
        }
        NodeRecord row;
        row.nodeId = n->GetId();
        // Full name ("server3/gpu5"), not the leaf of the name tree ("gpu5").
        const std::string path = Names::FindPath(n);
        const std::string prefix = "/Names/";
        row.name = path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
        row.kind = kind;
        row.server = server;
        row.rank = rank;
        db->AddNode(row);
    };
    for (uint32_t r = 0; r < m_gpus.GetN(); ++r)
    {
        add(m_gpus.Get(r), "gpu", GetServer(r), r);
    }
    for (uint32_t s = 0; s < m_cpus.GetN(); ++s)
    {
        add(m_cpus.Get(s), "cpu", s, -1);
    }
    for (uint32_t i = 0; i < m_nvswitches.GetN(); ++i)
    {
        // A DGX's switches sit in its chassis; NVL72 switch trays belong to the rack.
        const int64_t server = c.serversPerDomain == 1 ? i / c.nvswitchesPerDomain : -1;
        add(m_nvswitches.Get(i), "nvswitch", server, -1);
    }
    for (uint32_t i = 0; i < m_ibSwitches.GetN(); ++i)
    {
        add(m_ibSwitches.Get(i), "ib-switch", -1, -1);
    }
    for (uint32_t i = 0; i < m_tors.GetN(); ++i)
    {
        add(m_tors.Get(i), "eth-switch", -1, -1);
    }
    for (uint32_t i = 0; i < m_aggs.GetN(); ++i)
    {
        add(m_aggs.Get(i), "eth-switch", -1, -1);
    }
    for (uint32_t i = 0; i < m_storage.GetN(); ++i)
    {
        add(m_storage.Get(i), "storage", -1, -1);
    }
}

const std::vector<Ptr<CreditLinkNetDevice>>&
ClusterHelper::GetCreditLinkDevices(const std::string& plane) const
{
    NS_ABORT_MSG_UNLESS(plane == "nvlink" || plane == "infiniband",
                        "cluster: no credit-link plane \"" << plane << "\"");
    return plane == "nvlink" ? m_nvDevices : m_ibDevices;
}

CreditLinkConservationReport
ClusterHelper::CheckConservation(bool expectIdle) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    CreditLinkConservation check;
    uint32_t remote = 0;
    for (const auto& [plane, devices] :
         {std::make_pair("nvlink", &m_nvDevices), std::make_pair("infiniband", &m_ibDevices)})
    {
        for (const auto& d : *devices)
        {
            // In a distributed run only links with both ends in this process are visible.
            if (DistributedRun::IsLocal(d->GetNode()) &&
                DistributedRun::IsLocal(d->GetPeer()->GetNode()))
            {
                check.Add(plane, d);
            }
            else
            {
                ++remote;
            }
        }
    }
    CreditLinkConservationReport report = check.Check(expectIdle);
    if (remote != 0)
    {
        report.notes.push_back(std::to_string(remote) +
                               " link ends in or towards other processes not checked");
    }
    for (const EthDirection& d : m_ethDirections)
    {
        if (d.drops != 0)
        {
            report.notes.push_back("ethernet n" + std::to_string(d.srcNode) + "->n" +
                                   std::to_string(d.dstNode) + ": " + std::to_string(d.drops) +
                                   " packets dropped (lossy front-end; TCP retransmits)");
        }
    }
    return report;
}

void
ClusterHelper::WriteLinks(Ptr<ResultsDatabase> db) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    int64_t id = 0;
    for (const EthDirection& d : m_ethDirections)
    {
        LinkRecord row;
        row.linkId = id++;
        // Each process writes the directions it transmits on (the same ids in every process).
        if (!DistributedRun::IsLocal(NodeList::GetNode(d.srcNode)))
        {
            continue;
        }
        row.plane = "ethernet";
        row.srcNode = d.srcNode;
        row.dstNode = d.dstNode;
        row.rateBps = static_cast<int64_t>(d.rate_bps);
        row.txBytes = static_cast<int64_t>(d.txBytes);
        row.txPackets = static_cast<int64_t>(d.txPackets);
        row.busyNs = static_cast<int64_t>(d.busy_ns);
        row.creditStallNs = 0;
        row.peakQueueBytes = static_cast<int64_t>(d.peakQueueBytes);
        row.drops = static_cast<int64_t>(d.drops);
        db->AddLink(row);
    }
    AddCreditLinkRows(db, "nvlink", m_nvDevices, id);
    AddCreditLinkRows(db, "infiniband", m_ibDevices, id);
}

Ptr<LinkSampler>
ClusterHelper::InstallLinkSampler(Ptr<ResultsDatabase> db, Time interval) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    Ptr<LinkSampler> sampler = CreateObject<LinkSampler>();
    sampler->SetAttribute("Interval", TimeValue(interval));
    int64_t id = 0; // WriteLinks' order: Ethernet, NVLink, InfiniBand directions
    // Distributed runs: each process samples the directions it transmits on (as WriteLinks).
    for (const EthDirection& d : m_ethDirections)
    {
        const int64_t linkId = id++;
        if (DistributedRun::IsLocal(NodeList::GetNode(d.srcNode)))
        {
            sampler->AddLink(linkId,
                             MakeBoundCallback(&EthTxBytes, &d),
                             "ethernet",
                             static_cast<double>(d.rate_bps));
        }
    }
    for (const auto& [plane, devices] :
         {std::make_pair("nvlink", &m_nvDevices), std::make_pair("infiniband", &m_ibDevices)})
    {
        for (const auto& dev : *devices)
        {
            const int64_t linkId = id++;
            if (DistributedRun::IsLocal(dev->GetNode()))
            {
                sampler->AddLink(linkId,
                                 MakeBoundCallback(&CreditTxBytes, dev),
                                 plane,
                                 static_cast<double>(FrameRate_bps(dev)));
            }
        }
    }
    sampler->Start(db);
    return sampler;
}

uint64_t
ClusterHelper::EthTxBytes(const EthDirection* d)
{
    return d->txBytes;
}

uint64_t
ClusterHelper::CreditTxBytes(Ptr<CreditLinkNetDevice> dev)
{
    return dev->GetCounters().txBytes;
}

int64_t
ClusterHelper::FrameRate_bps(Ptr<CreditLinkNetDevice> dev)
{
    // Rate available to frames: signalling rate x line-coding efficiency.
    DataRateValue signalling;
    DoubleValue efficiency;
    dev->GetAttribute("DataRate", signalling);
    dev->GetAttribute("EncodingEfficiency", efficiency);
    return static_cast<int64_t>(signalling.Get().GetBitRate() * efficiency.Get());
}

void
ClusterHelper::AddCreditLinkRows(Ptr<ResultsDatabase> db,
                                 const std::string& plane,
                                 const std::vector<Ptr<CreditLinkNetDevice>>& devices,
                                 int64_t& id)
{
    for (const auto& dev : devices)
    {
        const CreditLinkNetDevice::Counters& k = dev->GetCounters();
        LinkRecord row;
        row.linkId = id++;
        if (!DistributedRun::IsLocal(dev->GetNode()))
        {
            continue;
        }
        row.plane = plane;
        row.srcNode = dev->GetNode()->GetId();
        row.dstNode = dev->GetPeer()->GetNode()->GetId();
        row.rateBps = FrameRate_bps(dev);
        row.txBytes = static_cast<int64_t>(k.txBytes);
        row.txPackets = static_cast<int64_t>(k.txPackets);
        row.busyNs = k.busyTime.GetNanoSeconds();
        row.creditStallNs = k.creditStallTime.GetNanoSeconds();
        row.peakQueueBytes = static_cast<int64_t>(k.peakQueueBytes);
        // Credits never drop; only a switch without a route (LFT hole) or an HCA given
        // another LID's packet discards what this direction delivered.
        const Ptr<CreditLinkNetDevice> peer = dev->GetPeer();
        uint64_t drops = peer->GetReceiveDiscards();
        if (const Ptr<CreditSwitch> sw = peer->GetSwitch())
        {
            drops += sw->GetDroppedPackets(sw->GetPortIndex(peer));
        }
        row.drops = static_cast<int64_t>(drops);
        db->AddLink(row);
    }
}

} // namespace ns3
