/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CLUSTER_HELPER_H
#define AI_FABRIC_CLUSTER_HELPER_H

#include "ns3/cluster-config.h"
#include "ns3/cluster-layout.h"
#include "ns3/cluster-plane.h"
#include "ns3/collective-engine.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/front-end-cluster-plane.h"
#include "ns3/front-end-transport.h"
#include "ns3/gpu-transport.h"
#include "ns3/infiniband-cluster-plane.h"
#include "ns3/input-error.h"
#include "ns3/ipv4-address.h"
#include "ns3/link-sampler.h"
#include "ns3/node-container.h"
#include "ns3/nvlink-cluster-plane.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

class CommandLine;
class ResultsDatabase;
class Packet;

/// Per-GPU bandwidths as "a : b : c", the smallest (NVLink only if non-zero) = 1.
std::string FormatPlaneRatio(double nvlink, double infiniband, double ethernet);

/**
 * \ingroup ai-fabric
 * Builds a whole AI cluster from a ClusterConfig in one call: the servers' GPU and CPU
 * nodes, then one ClusterPlaneBuilder per network (MakeClusterPlaneBuilders: the front-end
 * Ethernet with the GPU <-> CPU PCIe links, the NVLink scale-up plane, the rail-optimised
 * InfiniBand scale-out plane), composed behind one interface: every row, check, sample and
 * description is the builders' in turn.  Which plane carries a rank pair is the
 * ClusterPlaneRules table.  Node ids: GPUs in rank order, CPUs, then each builder's nodes in
 * build order (storage, Ethernet switches, NVSwitches, InfiniBand switches).
 */
class ClusterHelper
{
  public:
    ClusterHelper();
    explicit ClusterHelper(const ClusterConfig& config);
    ClusterHelper(const ClusterHelper&) = delete;
    ClusterHelper& operator=(const ClusterHelper&) = delete;

    void SetConfig(const ClusterConfig& config);
    const ClusterConfig& GetConfig() const;
    /// Registers every cluster flag (and --describe) on \p cmd; see ClusterConfig.
    void AddCommandLineArguments(CommandLine& cmd);
    /// After cmd.Parse(): applies preset and flags; throws InputError with the validation
    /// message (ScenarioRun turns it into a failed run row and exit status 1).
    void ApplyCommandLine();
    bool GetDescribeFlag() const;
    void SetDescribeFlag(bool describe);
    /// --checkConservation (default on: it only reads counters at the end of a run).
    bool GetCheckConservation() const;
    void SetCheckConservation(bool check);

    /// Attributes of every NvLinkNetDevice / NvSwitch / InfiniBand device / switch / SM
    /// the cluster builds (as the plane helpers' own setters).
    void SetNvLinkDeviceAttribute(const std::string& name, const AttributeValue& value);
    void SetNvSwitchAttribute(const std::string& name, const AttributeValue& value);
    void SetIbDeviceAttribute(const std::string& name, const AttributeValue& value);
    void SetIbSwitchAttribute(const std::string& name, const AttributeValue& value);
    void SetIbChannelAttribute(const std::string& name, const AttributeValue& value);
    void SetSubnetManagerAttribute(const std::string& name, const AttributeValue& value);

    /**
     * Fixed random-number streams for the models that draw random numbers (the front-end's
     * CSMA backoff, ARP jitter, IP stacks; the credit planes draw none), from \p stream on,
     * as ns-3 helpers do, so that a result depends only on the seed and run number, not on
     * how many random variables other code created first.  After Build(); the programs
     * call it with 0 (ScenarioRun::SetUpSimulation).  \return the number of streams used.
     */
    int64_t AssignStreams(int64_t stream);

    /// Validates, then builds; "" or the validation error (then nothing is built).  The
    /// scheduler and the random streams are the program's (ScenarioRun::SetUpSimulation).
    std::string TryBuild();
    /// As TryBuild, throwing InputError with the error.
    void Build();
    bool IsBuilt() const;

    // Ranks, servers, domains, rails.
    uint32_t GetNRanks() const;
    uint32_t GetServer(uint32_t rank) const;
    uint32_t GetLocalIndex(uint32_t rank) const;
    uint32_t GetDomain(uint32_t rank) const; //!< NVLink domain
    uint32_t GetRail(uint32_t rank) const;   //!< InfiniBand rail = local GPU index
    uint32_t GetNDomains() const;
    /// Ranks of NVLink domain \p domain, by GPU id (NvLinkTransportPlane::AddDomain's rankOfGpu).
    std::vector<uint32_t> GetDomainRanks(uint32_t domain) const;

    // Distributed runs (ns-3 MPI): which process (node system id) simulates what.
    /// Processes the cluster is split over: DistributedRun::GetSize() at Build(), else 1.
    uint32_t GetNSystems() const;
    /// Process of NVLink domain \p domain (its GPUs, NVSwitches and leaf switches).
    uint32_t GetDomainSystemId(uint32_t domain) const;

    // Nodes.
    Ptr<Node> GetGpuNode(uint32_t rank) const;
    Ptr<Node> GetCpuNode(uint32_t server) const;
    NodeContainer GetGpuNodes() const;
    NodeContainer GetCpuNodes() const;
    NodeContainer GetStorageNodes() const;
    NodeContainer GetEthSwitchNodes() const; //!< ToRs, then aggregation switches
    NodeContainer GetNvSwitchNodes() const;  //!< domain by domain; none for 1-GPU domains
    NodeContainer GetIbSwitchNodes() const;  //!< in InfinibandTopology switch order
    /// Node count per kind: gpu, cpu, storage, eth-switch, nvswitch, ib-switch.
    std::map<std::string, uint32_t> GetNodeCounts() const;

    // Scale-out plane.  The topology and its routing exist from Build() on.
    const InfinibandTopology& GetIbTopology() const;
    Ptr<InfinibandSubnetManager> GetSubnetManager() const;
    const ClusterIbShape& GetIbShape() const;
    uint32_t GetHcaTopologyNode(uint32_t rank) const;
    uint16_t GetHcaLid(uint32_t rank) const;
    /// Topology switch node index -> name ("ib/leaf3").
    std::string GetIbSwitchName(uint32_t topologyNode) const;

    /// HCA of a rank (on its GPU node); its LID is GetHcaLid(rank).
    Ptr<InfinibandNetDevice> GetHcaDevice(uint32_t rank) const;
    /// The helper that installed the InfiniBand devices (watchdog, IPoIB table, pcap).
    InfinibandHelper& GetInfinibandHelper();

    // Scale-up plane (absent when a domain has one GPU).
    /// GPU id of a rank inside its NVLink domain (what NvLinkGpu::SendPacket and NvSwitch routes
    /// use).
    uint32_t GetNvLinkGpuId(uint32_t rank) const;
    Ptr<NvLinkGpu> GetNvLinkGpu(uint32_t rank) const;
    /// The rank's NVLink devices, one bundle per NVSwitch of its domain.
    std::vector<Ptr<NvLinkNetDevice>> GetNvLinkDevices(uint32_t rank) const;
    /// The NvLinkHelper of domain \p domain (switches, NVLS groups, watchdog).
    NvLinkHelper& GetNvLinkHelper(uint32_t domain);

    // Front-end plane.
    Ipv4Address GetGpuAddress(uint32_t rank) const;   //!< GPU end of its PCIe link
    Ipv4Address GetCpuAddress(uint32_t server) const; //!< CPU end of its front-end link
    Ipv4Address GetStorageAddress(uint32_t i) const;
    /// Front-end links (bidirectional): PCIe, server, ToR uplinks, storage; bridged also
    /// the aggregation mesh.  A CSMA segment counts as one link.
    uint32_t GetNPcieLinks() const;
    uint32_t GetNEthernetLinks() const;

    /// Counters of one direction of a front-end or PCIe link, as of now.
    using FrontEndLinkStats = ns3::FrontEndLinkStats;

    std::vector<FrontEndLinkStats> GetFrontEndLinkStats() const;
    /**
     * Load and checkpoint traffic (TCP) between every rank's GPU, its server's
     * CPU and the storage nodes.  A running job's neighbour caches are warm, so
     * every front-end node's ARP request jitter becomes 0 (ns-3's default
     * U(0, 10 ms) would delay the first transfer by up to 10 ms per IPv4 hop)
     * and its ARP caches queue 4096 packets while resolving (default 3: the
     * SYNs of many connections opened at once would be dropped).
     */
    Ptr<FrontEndTransport> InstallFrontEndTransport();

    /**
     * Plane of traffic between two ranks: NVLink inside an NVLink domain,
     * InfiniBand between domains, unless the group's plane is forced.
     * "" or why the forced plane cannot carry the pair.
     */
    std::string TrySelectPlane(uint32_t srcRank,
                               uint32_t dstRank,
                               ClusterPlane& plane,
                               const std::string& groupName = "") const;
    /// As TrySelectPlane, aborting on error.
    ClusterPlane SelectPlane(uint32_t srcRank,
                             uint32_t dstRank,
                             const std::string& groupName = "") const;
    /// Traffic of \p groupName goes over \p plane (e.g. DP over InfiniBand inside a server).
    void ForcePlane(const std::string& groupName, ClusterPlane plane);
    void ClearForcedPlanes();
    /**
     * A GpuTransport over the cluster's NVLink domains (NvLinkTransportPlane, with NVLS) and
     * InfiniBand HCAs (InfinibandTransportPlane), choosing planes by the rule of \p groupName
     * (MakePlaneSelector).  One transport per simulation: the planes own the devices' hooks.
     * In a distributed run it is split (GpuTransport::SetDistributed; its notifications use
     * the cut InfiniBand links) and refuses a NotificationLatency below --ibDelay.
     */
    /**
     * A CollectiveEngine over \p transport with the cluster's domain map and the NCCL
     * endpoint of the cluster's endpoint set (none for "ideal").
     */
    Ptr<CollectiveEngine> InstallCollectiveEngine(Ptr<GpuTransport> transport) const;
    Ptr<GpuTransport> InstallTransport(const std::string& groupName = "");
    /**
     * The plane rule as a GpuTransport::SetPlaneSelector callback for the traffic of
     * \p groupName: \p planeIndex maps each ClusterPlane to the transport's plane index
     * (AddPlane's return).  A pair whose plane has no index, or that the forced plane cannot
     * carry, gets -1 (the transport's fallback).  Copies the rule: later ForcePlane calls do
     * not change a selector already made.
     */
    /// The endpoint set's rate into \p plane, on its transport plane \p tp.
    void ApplyEndpointRate(ClusterPlane plane, Ptr<TransportPlane> tp) const;
    /// \p tp, or a FlowTransportPlane over it when --fidelity makes \p plane flow-level.
    Ptr<TransportPlane> ApplyFidelity(ClusterPlane plane, Ptr<TransportPlane> tp) const;
    GpuTransport::PlaneSelector MakePlaneSelector(const std::map<ClusterPlane, int32_t>& planeIndex,
                                                  const std::string& groupName = "") const;

    /// Human-readable summary: nodes per kind, per-GPU bandwidth per plane and their ratio,
    /// bisection bandwidth per plane.
    std::string Describe() const;

    /// Every CreditLinkNetDevice (both ends of each link) of "nvlink" or "infiniband".
    const std::vector<Ptr<CreditLinkNetDevice>>& GetCreditLinkDevices(
        const std::string& plane) const;
    /**
     * CreditLinkConservation over the NVLink and InfiniBand planes (\p expectIdle: the run
     * completed, nothing may remain in the fabric), plus a note per Ethernet link that
     * dropped packets (the front-end is lossy: reported, not a violation).
     */
    CreditLinkConservationReport CheckConservation(bool expectIdle = true) const;

    /// One `nodes` row per node of the cluster (kind "storage" for storage nodes).
    void WriteNodes(Ptr<ResultsDatabase> db) const;
    /// One `links` row per direction of every built link, counters as of now (end of run).
    void WriteLinks(Ptr<ResultsDatabase> db) const;
    /// Samples every link direction every \p interval into `link_samples` of \p db's current
    /// run (null: none), with the link ids WriteLinks gives, and tracks each plane's peak
    /// utilisation; keep the sampler until the run ends.
    Ptr<LinkSampler> InstallLinkSampler(Ptr<ResultsDatabase> db, Time interval) const;

    /// Bisection bandwidth per direction in Gb/s: NVLink per domain, IB and Ethernet overall.
    double GetNvLinkBisectionPerDomain_gbit_per_s() const;
    double GetIbBisection_gbit_per_s() const;
    double GetEthBisection_gbit_per_s() const;

    /// The cluster's layout (ranks, servers, domains, rails, processes).
    const ClusterLayout& GetLayout() const;
    /// The builder of \p plane (abort when the cluster has none).
    ClusterPlaneBuilder& GetPlaneBuilder(ClusterPlane plane) const;
    const std::vector<std::unique_ptr<ClusterPlaneBuilder>>& GetPlaneBuilders() const;
    NvLinkClusterPlane& GetNvLinkPlane() const;
    InfinibandClusterPlane& GetInfinibandPlane() const;
    FrontEndClusterPlane& GetFrontEndPlane() const;

  private:
    void CheckRank(uint32_t rank) const;
    void BuildNodes();
    /// Sets \p name on \p target of the builder of \p plane (abort if it has no such target);
    /// unless \p derived, the program's value, which SetDerivedAttribute leaves alone.
    void SetPlaneAttribute(ClusterPlane plane,
                           const std::string& target,
                           const std::string& name,
                           const AttributeValue& value,
                           bool derived = false);
    /// As SetPlaneAttribute for a value the configuration derives (the engines' rates from
    /// the GPU endpoint set), unless the program set that attribute through the cluster's
    /// setters or changed \p typeName's default (--ns3::Type::Attr): theirs wins.
    void SetDerivedAttribute(ClusterPlane plane,
                             const std::string& target,
                             const std::string& typeName,
                             const std::string& name,
                             const AttributeValue& value);

    ClusterConfig m_config;
    std::set<std::string> m_userAttributes; //!< "plane/target/name" the program set
    bool m_describe{false};
    bool m_checkConservation{true};
    bool m_built{false};

    ClusterLayout m_layout;
    ClusterNodes m_nodes;
    std::vector<std::unique_ptr<ClusterPlaneBuilder>> m_planes; //!< build order
    ClusterPlaneRules m_rules;
    mutable bool m_fidelityNoted{false}; //!< the flow-mode note is printed once
    ClusterPlane m_scaleOut;             //!< the scale-out builder m_planes holds
};

} // namespace ns3

#endif
