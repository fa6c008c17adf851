/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_FRONT_END_CLUSTER_PLANE_H
#define AI_FABRIC_FRONT_END_CLUSTER_PLANE_H

#include "ns3/cluster-plane.h"
#include "ns3/front-end-transport.h"
#include "ns3/ipv4-address.h"
#include "ns3/net-device-container.h"
#include "ns3/net-device.h"
#include "ns3/packet.h"
#include "ns3/queue.h"

#include <deque>
#include <utility>
#include <vector>

namespace ns3
{

/// Counters of one direction of a front-end or PCIe link, as of now.
struct FrontEndLinkStats
{
    int64_t srcNode{0};
    int64_t dstNode{0};
    bool pcie{false}; //!< a GPU <-> CPU link
    uint64_t rate_bps{0};
    uint64_t txBytes{0};
    uint64_t busy_ns{0};
    uint64_t drops{0};
};

/**
 * \ingroup ai-fabric
 * The front-end plane of a cluster, from ns-3's own stack: the servers' CPUs on top-of-rack
 * switches under aggregation switches, storage nodes, and the GPU <-> CPU PCIe links (the
 * GPUs reach the front-end through their CPU).
 *
 * ClusterConfig::ethFabric "routed" (default) makes ToRs IPv4 routers linked point-to-point
 * to every aggregation switch.  "bridged" makes each ToR an L2 switch, a BridgeNetDevice over
 * one CsmaNetDevice port per server (a 2-node CSMA segment CPU <-> ToR port) and one CSMA
 * uplink to exactly one aggregation router; the rack is one IPv4 subnet.  ns-3 has no
 * spanning tree, so a bridged ToR cannot have redundant uplinks (a loop would flood for
 * ever): ToR t hangs off aggregation router t mod aggs, and the aggregation routers are
 * meshed point-to-point.  Routes are static, following the address plan, or ns-3 global
 * routing (ClusterConfig::ethRouting; global routing's per-node shortest-path run makes a
 * 1024-GPU build 25 times slower).  It carries host traffic (FrontEndTransport), not the
 * GpuTransport's.
 */
class FrontEndClusterPlane : public ClusterPlaneBuilder
{
  public:
    ClusterPlane GetPlane() const override;
    ClusterPlaneReach GetReach() const override;
    std::string Build(const ClusterConfig& config,
                      const ClusterLayout& layout,
                      ClusterNodes& nodes) override;
    /// CSMA backoff (bridged), ARP jitter and IP stacks of every front-end node.
    int64_t AssignStreams(int64_t stream) override;
    void CountNodes(std::map<std::string, uint32_t>& counts) const override;
    void WriteNodes(Ptr<ResultsDatabase> db, const ClusterConfig& config) const override;
    void WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const override;
    void AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const override;
    /// The front-end is lossy: a note per direction that dropped packets, not a violation.
    void AddConservationNotes(CreditLinkConservationReport& report) const override;
    std::string DescribeLinks(const ClusterConfig& config) const override;
    std::string DescribeDetails(const ClusterConfig& config) const override;
    std::string DescribePerGpu(const ClusterConfig& config) const override;
    std::string DescribeBisection(const ClusterConfig& config) const override;
    double GetBisection_gbit_per_s(const ClusterConfig& config) const override;
    double GetPerGpu_gbit_per_s(const ClusterConfig& config) const override;
    void ScaleBandwidth(ClusterConfig& config, double factor) const override;

    /// Load and checkpoint traffic (TCP) between every rank's GPU, its server's CPU and the
    /// storage nodes (see ClusterHelper::InstallFrontEndTransport).
    Ptr<FrontEndTransport> InstallTransport(const ClusterLayout& layout,
                                            const ClusterNodes& nodes) const;

    Ipv4Address GetGpuAddress(uint32_t rank) const;
    Ipv4Address GetCpuAddress(uint32_t server) const;
    Ipv4Address GetStorageAddress(uint32_t i) const;
    NodeContainer GetStorageNodes() const;
    NodeContainer GetSwitchNodes() const; //!< ToRs, then aggregation switches
    uint32_t GetNPcieLinks() const;
    uint32_t GetNEthernetLinks() const;
    std::vector<FrontEndLinkStats> GetLinkStats(const ClusterNodes& nodes) const;

  private:
    struct Direction
    {
        Ptr<NetDevice> device; //!< PointToPointNetDevice or CsmaNetDevice
        Ptr<Queue<Packet>> queue;
        int64_t srcNode{0};
        int64_t dstNode{0};
        uint64_t rate_bps{0};
        uint64_t txBytes{0};
        uint64_t txPackets{0};
        uint64_t busy_ns{0};
        uint64_t peakQueueBytes{0};
        uint64_t drops{0};
    };

    static void TxBegin(Direction* d, Ptr<const Packet> p);
    static void Drop(Direction* d, Ptr<const Packet> p);
    static void Enqueue(Direction* d, Ptr<const Packet> p);
    static uint64_t TxBytes(const Direction* d);

    void CreateNodes(const ClusterConfig& config, ClusterNodes& nodes);
    void BuildRouted(const ClusterConfig& config, ClusterNodes& nodes);
    void BuildBridged(const ClusterConfig& config, ClusterNodes& nodes);
    void LinkServerGpus(const ClusterConfig& config, ClusterNodes& nodes, uint32_t server);
    /// Static routes; no-ops under global routing.
    void AddDefaultRoute(Ptr<Node> node, Ipv4Address gateway, uint32_t interface) const;
    void AddNetworkRoute(Ptr<Node> node,
                         Ipv4Address network,
                         Ipv4Mask mask,
                         Ipv4Address gateway,
                         uint32_t interface) const;
    /// Point-to-point link a-b with a /30 from \p network; returns the two addresses.
    std::pair<Ipv4Address, Ipv4Address> Link(Ptr<Node> a,
                                             Ptr<Node> b,
                                             double rate_gbit_per_s,
                                             double delay_ns,
                                             Ipv4Address network,
                                             uint32_t& ifA,
                                             uint32_t& ifB);
    /// Storage node \p storage on aggregation switch \p agg, its default route; its address.
    Ipv4Address LinkStorage(const ClusterConfig& config, uint32_t storage, uint32_t agg);
    Ipv4Address NextInfraNetwork();
    /// \p device's IPv4 interface with \p address in a /30 (Ipv4AddressHelper::Assign's
    /// steps); its index.
    static uint32_t AddLinkInterface(Ptr<NetDevice> device, Ipv4Address address);
    /// Counters of the two directions of a link a-b (devices in that order).
    void TraceLink(const NetDeviceContainer& devices,
                   Ptr<Node> a,
                   Ptr<Node> b,
                   double rate_gbit_per_s);
    /// A 2-node CSMA segment a-b (no addresses); returns the two devices.
    NetDeviceContainer CsmaSegment(Ptr<Node> a,
                                   Ptr<Node> b,
                                   double rate_gbit_per_s,
                                   double delay_ns);

    bool m_staticRouting{true};
    uint32_t m_serverBits{10}; //!< address bits of a server's block (the address plan)
    NodeContainer m_nodes;     //!< every front-end node with an IP stack's streams: set by Build
    NodeContainer m_storage;
    NodeContainer m_tors;
    NodeContainer m_aggs;
    std::vector<Ipv4Address> m_gpuAddress;
    std::vector<Ipv4Address> m_cpuAddress;
    std::vector<Ipv4Address> m_storageAddress;
    uint32_t m_infraLinks{0};
    uint32_t m_pcieLinks{0};
    uint32_t m_ethLinks{0};
    std::deque<Direction> m_directions; //!< deque: trace sinks hold pointers
};

} // namespace ns3

#endif
