/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/cluster-helper.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/distributed-run.h"
#include "ns3/enum.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/nccl-endpoint.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/results-database.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ClusterHelper");

std::string
FormatPlaneRatio(double nvlink, double infiniband, double ethernet)
{
    const double base = std::min({nvlink > 0 ? nvlink : infiniband, infiniband, ethernet});
    return FormatDecimal(nvlink / base) + " : " + FormatDecimal(infiniband / base) + " : " +
           FormatDecimal(ethernet / base);
}

ClusterHelper::ClusterHelper()
    : ClusterHelper(ClusterConfig())
{
}

ClusterHelper::ClusterHelper(const ClusterConfig& config)
    : m_planes(MakeClusterPlaneBuilders(config.GetScaleOutPlane())),
      m_rules(ClusterLayout(), ClusterPlaneRules::DefaultRows(config.GetScaleOutPlane())),
      m_scaleOut(config.GetScaleOutPlane())
{
    SetConfig(config);
}

namespace
{
std::string
AttributeKey(ClusterPlane plane, const std::string& target, const std::string& name)
{
    return ClusterPlaneName(plane) + "/" + target + "/" + name;
}
} // namespace

void
ClusterHelper::SetPlaneAttribute(ClusterPlane plane,
                                 const std::string& target,
                                 const std::string& name,
                                 const AttributeValue& value,
                                 bool derived)
{
    NS_LOG_FUNCTION(this << ClusterPlaneName(plane) << target << name);
    if ((plane == ClusterPlane::INFINIBAND || plane == ClusterPlane::ROCE) && plane != m_scaleOut)
    {
        // A program's setting for the scale-out fabric --scaleOut did not choose.
        NS_LOG_LOGIC("no " << ClusterPlaneName(plane) << " plane: " << name << " not set");
        return;
    }
    NS_ABORT_MSG_UNLESS(GetPlaneBuilder(plane).SetAttribute(target, name, value),
                        "cluster: plane " << ClusterPlaneName(plane) << " has no " << target);
    if (!derived)
    {
        m_userAttributes.insert(AttributeKey(plane, target, name));
    }
}

void
ClusterHelper::SetDerivedAttribute(ClusterPlane plane,
                                   const std::string& target,
                                   const std::string& typeName,
                                   const std::string& name,
                                   const AttributeValue& value)
{
    if (m_userAttributes.count(AttributeKey(plane, target, name)) != 0)
    {
        NS_LOG_LOGIC(name << ": the program's value stands");
        return;
    }
    TypeId::AttributeInformation info;
    NS_ABORT_MSG_UNLESS(TypeId::LookupByName(typeName).LookupAttributeByName(name, &info),
                        "cluster: " << typeName << " has no attribute " << name);
    if (info.initialValue->SerializeToString(info.checker) !=
        info.originalInitialValue->SerializeToString(info.checker))
    {
        NS_LOG_LOGIC(typeName << "::" << name << ": the changed default stands");
        return;
    }
    SetPlaneAttribute(plane, target, name, value, true);
}

void
ClusterHelper::SetNvLinkDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    SetPlaneAttribute(ClusterPlane::NVLINK, "device", name, value);
}

void
ClusterHelper::SetNvSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    SetPlaneAttribute(ClusterPlane::NVLINK, "switch", name, value);
}

void
ClusterHelper::SetIbDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    SetPlaneAttribute(ClusterPlane::INFINIBAND, "device", name, value);
}

void
ClusterHelper::SetIbSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    SetPlaneAttribute(ClusterPlane::INFINIBAND, "switch", name, value);
}

void
ClusterHelper::SetIbChannelAttribute(const std::string& name, const AttributeValue& value)
{
    SetPlaneAttribute(ClusterPlane::INFINIBAND, "channel", name, value);
}

void
ClusterHelper::SetSubnetManagerAttribute(const std::string& name, const AttributeValue& value)
{
    SetPlaneAttribute(ClusterPlane::INFINIBAND, "subnet-manager", name, value);
}

void
ClusterHelper::SetConfig(const ClusterConfig& config)
{
    NS_ABORT_MSG_IF(m_built, "ClusterHelper: SetConfig after Build");
    m_config = config;
    if (config.GetScaleOutPlane() != m_scaleOut)
    {
        // --scaleOut chose the other scale-out fabric: its builder replaces the other one.
        m_scaleOut = config.GetScaleOutPlane();
        m_planes = MakeClusterPlaneBuilders(m_scaleOut);
        m_rules = ClusterPlaneRules(ClusterLayout(), ClusterPlaneRules::DefaultRows(m_scaleOut));
        m_userAttributes.clear(); // the new builders hold none of them
    }
    m_layout = config.GetLayout();
    m_rules.SetLayout(m_layout);
    // The NVSwitch reduction/multicast engine delivers results at NCCL's NVLS efficiency
    // of the GPU's per-link NVLink rate (tuning.cc nvlsEfficiency x topo.h SMxx_NVLINK_BW);
    // the ideal set leaves it unlimited.
    const GpuEndpointSet set = config.GetEndpointSet();
    const double engine_gbyte_per_s =
        set.nvlsEfficiency * set.nvlinkPerLink_gbyte_per_s * config.nvlinkEndpointScale;
    SetDerivedAttribute(ClusterPlane::NVLINK,
                        "switch",
                        "ns3::NvSwitch",
                        "NvlsEngineRatePerLink",
                        DataRateValue(DataRate(static_cast<uint64_t>(engine_gbyte_per_s * 8e9))));
    // Likewise SHARP's aggregation engine delivers each member's results at NCCL's CollNet
    // efficiency of what the member's HCA moves behind PCIe (tuning.cc: CollNetDirect's
    // busBw x 0.85 from compute capability 9.0 over bwInter, the NIC path).  Published
    // 2 x 8 B200 CollNetDirect runs grow at 0.86 of their HCAs' rate from 8 to 32 GiB
    // (doc/fidelity.md).  The ideal set leaves it unlimited.
    if (!set.ideal && set.nicPath_gbyte_per_s > 0)
    {
        const double sharp_gbyte_per_s =
            set.collNetEfficiency * set.nicPath_gbyte_per_s * config.ibEndpointScale;
        SetDerivedAttribute(
            ClusterPlane::INFINIBAND,
            "switch",
            "ns3::InfinibandSwitch",
            "SharpEngineRatePerPort",
            DataRateValue(DataRate(static_cast<uint64_t>(sharp_gbyte_per_s * 8e9))));
    }
}

const ClusterConfig&
ClusterHelper::GetConfig() const
{
    return m_config;
}

const ClusterLayout&
ClusterHelper::GetLayout() const
{
    return m_layout;
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
    SetConfig(m_config);
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
    NS_LOG_FUNCTION(this << stream);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: AssignStreams before Build");
    int64_t next = stream;
    for (const auto& plane : m_planes)
    {
        next += plane->AssignStreams(next);
    }
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
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_built, "ClusterHelper: Build called twice");
    const std::string error = m_config.Validate();
    if (!error.empty())
    {
        return error;
    }
    SetConfig(m_config);
    // Pure-data steps first (InfiniBand routing), so a refusal leaves nothing half built.
    for (const auto& plane : m_planes)
    {
        const std::string refused = plane->Prepare(m_config, m_layout);
        if (!refused.empty())
        {
            return refused;
        }
    }
    ClusterLayout::PartitionPolicy policy;
    const std::string badPolicy = ClusterLayout::ParsePartitionPolicy(m_config.partition, policy);
    NS_ABORT_MSG_UNLESS(badPolicy.empty(), "cluster: " << badPolicy); // Validate checked it
    const std::string partition = m_layout.Partition(DistributedRun::GetSize(), policy);
    if (!partition.empty())
    {
        return "partition: " + partition;
    }
    if (DistributedRun::GetSize() > 1 && (m_config.IsFlowPlane(ClusterPlane::NVLINK) ||
                                          m_config.IsFlowPlane(ClusterPlane::INFINIBAND)))
    {
        return "fidelity " + m_config.GetFidelityName() +
               ": flow-level planes run in one process, not split over " +
               std::to_string(DistributedRun::GetSize());
    }
    m_rules.SetLayout(m_layout);
    BuildNodes();
    for (const auto& plane : m_planes)
    {
        NS_LOG_LOGIC("building plane " << plane->GetName());
        const std::string refused = plane->Build(m_config, m_layout, m_nodes);
        if (!refused.empty())
        {
            return refused;
        }
    }
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
ClusterHelper::BuildNodes()
{
    NS_LOG_FUNCTION(this);
    // GPUs domain by domain, each on its process (node ids stay in rank order); CPUs on
    // process 0 with the front-end.
    for (uint32_t d = 0; d < m_layout.GetNDomains(); ++d)
    {
        m_nodes.gpus.Create(m_layout.GetGpusPerDomain(), m_layout.GetDomainSystemId(d));
    }
    m_nodes.cpus.Create(m_layout.GetNServers());
    for (uint32_t s = 0; s < m_layout.GetNServers(); ++s)
    {
        m_nodes.AddNameGroup("server" + std::to_string(s));
    }
    for (uint32_t r = 0; r < m_layout.GetNRanks(); ++r)
    {
        Names::Add("server" + std::to_string(m_layout.GetServer(r)) + "/gpu" +
                       std::to_string(m_layout.GetLocalIndex(r)),
                   m_nodes.gpus.Get(r));
    }
    for (uint32_t s = 0; s < m_layout.GetNServers(); ++s)
    {
        Names::Add("server" + std::to_string(s) + "/cpu", m_nodes.cpus.Get(s));
    }
}

ClusterPlaneBuilder&
ClusterHelper::GetPlaneBuilder(ClusterPlane plane) const
{
    for (const auto& b : m_planes)
    {
        if (b->GetPlane() == plane)
        {
            return *b;
        }
    }
    NS_ABORT_MSG("cluster: no " << ClusterPlaneName(plane) << " plane");
}

const std::vector<std::unique_ptr<ClusterPlaneBuilder>>&
ClusterHelper::GetPlaneBuilders() const
{
    return m_planes;
}

NvLinkClusterPlane&
ClusterHelper::GetNvLinkPlane() const
{
    return dynamic_cast<NvLinkClusterPlane&>(GetPlaneBuilder(ClusterPlane::NVLINK));
}

InfinibandClusterPlane&
ClusterHelper::GetInfinibandPlane() const
{
    return dynamic_cast<InfinibandClusterPlane&>(GetPlaneBuilder(ClusterPlane::INFINIBAND));
}

FrontEndClusterPlane&
ClusterHelper::GetFrontEndPlane() const
{
    return dynamic_cast<FrontEndClusterPlane&>(GetPlaneBuilder(ClusterPlane::ETHERNET));
}

uint32_t
ClusterHelper::GetNSystems() const
{
    return m_layout.GetNSystems();
}

uint32_t
ClusterHelper::GetDomainSystemId(uint32_t domain) const
{
    return m_layout.GetDomainSystemId(domain);
}

Ptr<InfinibandNetDevice>
ClusterHelper::GetHcaDevice(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return GetInfinibandPlane().GetHcaDevice(rank);
}

InfinibandHelper&
ClusterHelper::GetInfinibandHelper()
{
    return GetInfinibandPlane().GetHelper();
}

uint32_t
ClusterHelper::GetNvLinkGpuId(uint32_t rank) const
{
    return m_layout.GetGpuIdInDomain(rank);
}

Ptr<NvLinkGpu>
ClusterHelper::GetNvLinkGpu(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return GetNvLinkPlane().GetGpu(rank);
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
    return GetNvLinkPlane().GetDomainHelper(domain);
}

void
ClusterHelper::CheckRank(uint32_t rank) const
{
    m_layout.CheckRank(rank);
}

uint32_t
ClusterHelper::GetNRanks() const
{
    return m_layout.GetNRanks();
}

uint32_t
ClusterHelper::GetServer(uint32_t rank) const
{
    return m_layout.GetServer(rank);
}

uint32_t
ClusterHelper::GetLocalIndex(uint32_t rank) const
{
    return m_layout.GetLocalIndex(rank);
}

uint32_t
ClusterHelper::GetDomain(uint32_t rank) const
{
    return m_layout.GetDomain(rank);
}

uint32_t
ClusterHelper::GetRail(uint32_t rank) const
{
    return m_layout.GetRail(rank);
}

uint32_t
ClusterHelper::GetNDomains() const
{
    return m_layout.GetNDomains();
}

std::vector<uint32_t>
ClusterHelper::GetDomainRanks(uint32_t domain) const
{
    return m_layout.GetDomainRanks(domain);
}

Ptr<Node>
ClusterHelper::GetGpuNode(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return m_nodes.gpus.Get(rank);
}

Ptr<Node>
ClusterHelper::GetCpuNode(uint32_t server) const
{
    NS_ABORT_MSG_UNLESS(m_built && server < m_nodes.cpus.GetN(), "cluster: no server " << server);
    return m_nodes.cpus.Get(server);
}

NodeContainer
ClusterHelper::GetGpuNodes() const
{
    return m_nodes.gpus;
}

NodeContainer
ClusterHelper::GetCpuNodes() const
{
    return m_nodes.cpus;
}

NodeContainer
ClusterHelper::GetStorageNodes() const
{
    return GetFrontEndPlane().GetStorageNodes();
}

NodeContainer
ClusterHelper::GetEthSwitchNodes() const
{
    return GetFrontEndPlane().GetSwitchNodes();
}

NodeContainer
ClusterHelper::GetNvSwitchNodes() const
{
    return GetNvLinkPlane().GetSwitchNodes();
}

NodeContainer
ClusterHelper::GetIbSwitchNodes() const
{
    return GetInfinibandPlane().GetSwitchNodes();
}

std::map<std::string, uint32_t>
ClusterHelper::GetNodeCounts() const
{
    std::map<std::string, uint32_t> counts = {{"gpu", m_nodes.gpus.GetN()},
                                              {"cpu", m_nodes.cpus.GetN()}};
    for (const auto& plane : m_planes)
    {
        plane->CountNodes(counts);
    }
    return counts;
}

const InfinibandTopology&
ClusterHelper::GetIbTopology() const
{
    return GetInfinibandPlane().GetTopology();
}

Ptr<InfinibandSubnetManager>
ClusterHelper::GetSubnetManager() const
{
    return GetInfinibandPlane().GetSubnetManager();
}

const ClusterIbShape&
ClusterHelper::GetIbShape() const
{
    return GetInfinibandPlane().GetShape();
}

uint32_t
ClusterHelper::GetHcaTopologyNode(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return GetInfinibandPlane().GetHcaTopologyNode(rank);
}

uint16_t
ClusterHelper::GetHcaLid(uint32_t rank) const
{
    return GetSubnetManager()->GetLid(GetHcaTopologyNode(rank), 1);
}

std::string
ClusterHelper::GetIbSwitchName(uint32_t topologyNode) const
{
    return GetInfinibandPlane().GetSwitchName(topologyNode);
}

Ipv4Address
ClusterHelper::GetGpuAddress(uint32_t rank) const
{
    CheckRank(rank);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    return GetFrontEndPlane().GetGpuAddress(rank);
}

Ipv4Address
ClusterHelper::GetCpuAddress(uint32_t server) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: no server " << server);
    return GetFrontEndPlane().GetCpuAddress(server);
}

Ipv4Address
ClusterHelper::GetStorageAddress(uint32_t i) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: no storage node " << i);
    return GetFrontEndPlane().GetStorageAddress(i);
}

uint32_t
ClusterHelper::GetNPcieLinks() const
{
    return GetFrontEndPlane().GetNPcieLinks();
}

uint32_t
ClusterHelper::GetNEthernetLinks() const
{
    return GetFrontEndPlane().GetNEthernetLinks();
}

std::string
ClusterHelper::TrySelectPlane(uint32_t srcRank,
                              uint32_t dstRank,
                              ClusterPlane& plane,
                              const std::string& groupName) const
{
    return m_rules.TrySelect(srcRank, dstRank, plane, groupName);
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
    m_rules.Force(groupName, plane);
}

void
ClusterHelper::ClearForcedPlanes()
{
    m_rules.ClearForced();
}

Ptr<GpuTransport>
ClusterHelper::InstallTransport(const std::string& groupName)
{
    NS_LOG_FUNCTION(this << groupName);
    NS_ABORT_MSG_UNLESS(m_built, "cluster: InstallTransport before Build");
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    // The catch-all plane goes first: the transport's fallback for a pair the selector
    // leaves open (a forced plane out of reach) is its first plane that reaches the pair.
    const ClusterPlane catchAll = m_rules.GetCatchAll();
    std::vector<const ClusterPlaneBuilder*> order;
    for (const auto& plane : m_planes)
    {
        if (plane->GetPlane() == catchAll)
        {
            order.insert(order.begin(), plane.get());
        }
        else
        {
            order.push_back(plane.get());
        }
    }
    std::map<ClusterPlane, int32_t> index;
    for (const ClusterPlaneBuilder* plane : order)
    {
        if (Ptr<TransportPlane> tp = plane->MakeTransportPlane(m_layout))
        {
            ApplyEndpointRate(plane->GetPlane(), tp);
            index[plane->GetPlane()] =
                static_cast<int32_t>(transport->AddPlane(ApplyFidelity(plane->GetPlane(), tp)));
        }
    }
    transport->SetPlaneSelector(MakePlaneSelector(index, groupName));
    if (GetNSystems() > 1)
    {
        // Each process runs its ranks; notifications cross over the cut InfiniBand links.
        NS_ABORT_MSG_IF(transport->GetNotificationLatency() <
                            NanoSeconds(static_cast<int64_t>(m_config.ibDelay_ns)),
                        "cluster: GpuTransport NotificationLatency "
                            << transport->GetNotificationLatency().GetNanoSeconds()
                            << " ns is below the lookahead (--ibDelay " << m_config.ibDelay_ns
                            << " ns)");
        transport->SetDistributed(GetNSystems(), MakeCallback(&DistributedRun::SendNotification));
        DistributedRun::SetNotificationReceiver(
            MakeCallback(&GpuTransport::ReceiveRemote, transport));
    }
    return transport;
}

Ptr<FrontEndTransport>
ClusterHelper::InstallFrontEndTransport()
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: InstallFrontEndTransport before Build");
    return GetFrontEndPlane().InstallTransport(m_layout, m_nodes);
}

std::vector<ClusterHelper::FrontEndLinkStats>
ClusterHelper::GetFrontEndLinkStats() const
{
    return GetFrontEndPlane().GetLinkStats(m_nodes);
}

Ptr<TransportPlane>
ClusterHelper::ApplyFidelity(ClusterPlane plane, Ptr<TransportPlane> tp) const
{
    if (!m_config.IsFlowPlane(plane))
    {
        return tp;
    }
    NS_ABORT_MSG_IF(GetNSystems() > 1,
                    "cluster: --fidelity=" << m_config.fidelity
                                           << ": flow-level planes run in one process");
    if (!m_fidelityNoted)
    {
        m_fidelityNoted = true;
        std::cerr << "note: --fidelity " << m_config.GetFidelityName()
                  << ": messages on the flow planes are fluid flows sharing links max-min; "
                     "credit stalls, head-of-line blocking and PFC/ECN exist only in packet "
                     "mode and are left out there\n";
    }
    Ptr<FlowTransportPlane> flow = CreateObject<FlowTransportPlane>();
    if (plane == ClusterPlane::NVLINK && GetNvLinkPlane().IsDescribedOnly())
    {
        // No device to walk: the routes of the domains' descriptions, the same links.
        flow->SetTopology(GetNvLinkPlane().MakeFlowTopology(m_config, m_layout));
    }
    else if (plane == ClusterPlane::INFINIBAND && GetInfinibandPlane().IsDescribedOnly())
    {
        // The subnet manager's routes over the topology's cables, no HCA or switch device.
        flow->SetTopology(GetInfinibandPlane().MakeFlowTopology());
    }
    flow->SetPacketPlane(tp);
    return flow;
}

void
ClusterHelper::ApplyEndpointRate(ClusterPlane plane, Ptr<TransportPlane> tp) const
{
    // What the GPU's endpoint sustains into each plane (GpuEndpointSet): its SMs' stores on
    // every NVLink link, its HCA behind PCIe.  The ideal set leaves the wire alone.
    const GpuEndpointSet set = m_config.GetEndpointSet();
    double gbyte = 0;
    if (plane == ClusterPlane::NVLINK)
    {
        gbyte = set.nvlinkPerLink_gbyte_per_s * m_config.nvlinkLinksPerGpu *
                m_config.nvlinkEndpointScale;
    }
    else if (plane == ClusterPlane::INFINIBAND || plane == ClusterPlane::ROCE)
    {
        gbyte = set.nicPath_gbyte_per_s * m_config.ibEndpointScale;
    }
    if (gbyte > 0)
    {
        tp->SetAttribute("EndpointRate", DataRateValue(DataRate(uint64_t(gbyte * 8e9))));
    }
    if (plane == ClusterPlane::NVLINK && !set.ideal)
    {
        // NCCL's NVLS kernel: each owner's share pulled reduced, then stored to all.
        tp->SetAttribute("NvlsAllReduce",
                         EnumValue(NvLinkTransportPlane::NVLS_REDUCESCATTER_ALLGATHER));
        // NCCL's NVLS channels, chunks and per-step synchronisation (doc/endpoint.md): the
        // channels inside one domain as the endpoint counts them (the modelled release's,
        // NCCL_MIN_CTAS / NCCL_MAX_CTAS), so the kernel runs what the tuner assumed.
        uint32_t nvlsChannels = set.nvlsChannels;
        if (const Ptr<NcclEndpoint> endpoint = m_config.MakeEndpoint())
        {
            nvlsChannels = endpoint->GetNvlsChannels(1);
        }
        tp->SetAttribute("NvlsChunksInFlight", UintegerValue(nvlsChannels));
        tp->SetAttribute("NvlsChunkRule", EnumValue(NvLinkTransportPlane::NVLS_CHUNK_NCCL));
        tp->SetAttribute("NvlsStepLatency",
                         TimeValue(NanoSeconds(std::llround(set.nvlsStepLatency_us * 1e3))));
        tp->SetAttribute("NvlsPacketsPerPlane", BooleanValue(true));
    }
}

Ptr<CollectiveEngine>
ClusterHelper::InstallCollectiveEngine(Ptr<GpuTransport> transport) const
{
    NS_LOG_FUNCTION(this);
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetTransport(transport);
    std::map<uint32_t, uint32_t> domainOfRank;
    for (uint32_t r = 0; r < GetNRanks(); ++r)
    {
        domainOfRank[r] = GetDomain(r);
    }
    engine->SetDomainMap(domainOfRank);
    std::string error;
    Ptr<NcclEndpoint> endpoint = m_config.MakeEndpoint(&error);
    NS_ABORT_MSG_UNLESS(error.empty(), "cluster: " << error); // Validate refused it before
    engine->SetEndpoint(endpoint);
    if (endpoint)
    {
        // NCCL pipelines its multi-level algorithms chunk by chunk and lays one ring per
        // channel, each crossing between nodes on its own NIC, and its trees as chains in
        // the nodes under a double binary tree of their heads (doc/collectives.md).
        engine->SetAttribute("HierarchicalPipeline", BooleanValue(true));
        engine->SetAttribute("RingsAcrossDomains", BooleanValue(true));
        engine->SetAttribute("TreesAcrossDomains", BooleanValue(true));
    }
    return engine;
}

GpuTransport::PlaneSelector
ClusterHelper::MakePlaneSelector(const std::map<ClusterPlane, int32_t>& planeIndex,
                                 const std::string& groupName) const
{
    ClusterPlaneRules rules = m_rules;
    rules.SetAvailable(planeIndex);
    return rules.MakeSelector(groupName);
}

double
ClusterHelper::GetNvLinkBisectionPerDomain_gbit_per_s() const
{
    return GetPlaneBuilder(ClusterPlane::NVLINK).GetBisection_gbit_per_s(m_config);
}

double
ClusterHelper::GetIbBisection_gbit_per_s() const
{
    return GetPlaneBuilder(m_config.GetScaleOutPlane()).GetBisection_gbit_per_s(m_config);
}

double
ClusterHelper::GetEthBisection_gbit_per_s() const
{
    return GetPlaneBuilder(ClusterPlane::ETHERNET).GetBisection_gbit_per_s(m_config);
}

std::string
ClusterHelper::Describe() const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: Describe before Build");
    const ClusterConfig& c = m_config;
    // GPU planes in the rules' order (scale-up, scale-out), then the others.
    std::vector<const ClusterPlaneBuilder*> order;
    for (const ClusterPlaneRules::Row& row : m_rules.GetRows())
    {
        order.push_back(&GetPlaneBuilder(row.plane));
    }
    for (const auto& plane : m_planes)
    {
        if (std::find(order.begin(), order.end(), plane.get()) == order.end())
        {
            order.push_back(plane.get());
        }
    }
    std::ostringstream o;
    o << "cluster " << c.preset << ": " << c.servers << " servers x " << c.gpusPerServer
      << " GPUs = " << c.GetNRanks() << " GPUs";
    for (const ClusterPlaneBuilder* plane : order)
    {
        const std::string summary = plane->DescribeSummary(c);
        if (!summary.empty())
        {
            o << "; " << summary;
        }
    }
    o << "\nnodes:";
    uint32_t total = 0;
    const auto counts = GetNodeCounts();
    for (const char* kind : {"gpu", "cpu", "nvswitch", "ib-switch", "eth-switch", "storage"})
    {
        const uint32_t n = counts.count(kind) ? counts.at(kind) : 0;
        o << " " << kind << " " << n;
        total += n;
    }
    if (counts.count("roce-switch") != 0)
    {
        o << " roce-switch " << counts.at("roce-switch");
        total += counts.at("roce-switch");
    }
    o << " (total " << total << ")\n";
    o << "links (both directions):";
    const char* sep = " ";
    for (const ClusterPlaneBuilder* plane : order)
    {
        o << sep << plane->DescribeLinks(c);
        sep = "; ";
    }
    o << "\n";
    for (const ClusterPlaneBuilder* plane : order)
    {
        o << plane->DescribeDetails(c);
    }
    o << "per-GPU bandwidth, per direction:\n";
    for (const ClusterPlaneBuilder* plane : order)
    {
        o << plane->DescribePerGpu(c);
    }
    o << "ratio nvlink : " << ClusterPlaneName(c.GetScaleOutPlane()) << " : front-end = "
      << FormatPlaneRatio(GetPlaneBuilder(ClusterPlane::NVLINK).GetPerGpu_gbit_per_s(c),
                          GetPlaneBuilder(c.GetScaleOutPlane()).GetPerGpu_gbit_per_s(c),
                          GetPlaneBuilder(ClusterPlane::ETHERNET).GetPerGpu_gbit_per_s(c))
      << "\n";
    o << "bisection bandwidth, per direction:\n";
    for (const ClusterPlaneBuilder* plane : order)
    {
        o << plane->DescribeBisection(c);
    }
    const GpuEndpointSet set = c.GetEndpointSet();
    if (set.ideal)
    {
        o << "GPU/NCCL endpoint: ideal (the links alone)\n";
    }
    else
    {
        o << "GPU/NCCL endpoint: " << set.name << " (GPU into NVLink "
          << FormatDecimal(set.nvlinkPerLink_gbyte_per_s * c.nvlinkLinksPerGpu)
          << " GB/s, HCA behind PCIe " << FormatDecimal(set.nicPath_gbyte_per_s)
          << " GB/s; NCCL's protocols and tuner)\n";
    }
    if (c.IsFlowPlane(ClusterPlane::NVLINK) || c.IsFlowPlane(ClusterPlane::INFINIBAND))
    {
        o << "fidelity: " << c.GetFidelityName()
          << " (flow planes: max-min fluid flows on the packet routes; no credit stalls, "
             "head-of-line blocking or PFC/ECN there)\n";
    }
    return o.str();
}

void
ClusterHelper::WriteNodes(Ptr<ResultsDatabase> db) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    for (uint32_t r = 0; r < m_nodes.gpus.GetN(); ++r)
    {
        ClusterPlaneBuilder::WriteNodeRow(db, m_nodes.gpus.Get(r), "gpu", GetServer(r), r);
    }
    for (uint32_t s = 0; s < m_nodes.cpus.GetN(); ++s)
    {
        ClusterPlaneBuilder::WriteNodeRow(db, m_nodes.cpus.Get(s), "cpu", s, -1);
    }
    for (const auto& plane : m_planes)
    {
        plane->WriteNodes(db, m_config);
    }
}

const std::vector<Ptr<CreditLinkNetDevice>>&
ClusterHelper::GetCreditLinkDevices(const std::string& plane) const
{
    ClusterPlane p;
    const std::string error = ClusterPlaneFromName(plane, p);
    NS_ABORT_MSG_UNLESS(error.empty(), "cluster: " << error);
    return GetPlaneBuilder(p).GetCreditLinkDevices();
}

CreditLinkConservationReport
ClusterHelper::CheckConservation(bool expectIdle) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    CreditLinkConservation check;
    uint32_t remote = 0;
    for (const auto& plane : m_planes)
    {
        plane->AddToConservation(check, remote);
    }
    CreditLinkConservationReport report = check.Check(expectIdle);
    if (remote != 0)
    {
        report.notes.push_back(std::to_string(remote) +
                               " link ends in or towards other processes not checked");
    }
    for (const auto& plane : m_planes)
    {
        plane->AddConservationNotes(report);
    }
    return report;
}

void
ClusterHelper::WriteLinks(Ptr<ResultsDatabase> db) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    int64_t id = 0; // build order: the same ids in every process and in InstallLinkSampler
    for (const auto& plane : m_planes)
    {
        plane->WriteLinks(db, id);
    }
}

Ptr<LinkSampler>
ClusterHelper::InstallLinkSampler(Ptr<ResultsDatabase> db, Time interval) const
{
    NS_ABORT_MSG_UNLESS(m_built, "cluster: not built");
    Ptr<LinkSampler> sampler = CreateObject<LinkSampler>();
    sampler->SetAttribute("Interval", TimeValue(interval));
    int64_t id = 0;
    for (const auto& plane : m_planes)
    {
        if (m_config.IsFlowPlane(plane->GetPlane()))
        {
            // A flow plane's devices carry no bytes; sampling them costs O(links) per interval
            // for nothing (most of a 4,096-GPU flow run). Their ids stay reserved.
            id += static_cast<int64_t>(plane->GetNLinkDirections());
            continue;
        }
        plane->AddToSampler(sampler, id);
    }
    sampler->Start(db);
    return sampler;
}

} // namespace ns3
