/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_CLUSTER_PLANE_H
#define AI_FABRIC_INFINIBAND_CLUSTER_PLANE_H

#include "ns3/infiniband-helper.h"
#include "ns3/infiniband-subnet-manager.h"
#include "ns3/infiniband-topology.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/rail-cluster-plane.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * The scale-out plane of a cluster: one HCA per GPU into a rail-optimised fat-tree of 1-3
 * tiers (ClusterIbShape), routed by the subnet manager before any node exists, with an
 * InfinibandTransportPlane over the HCAs.
 *
 * A flow-level plane without SHARP (in-switch reduction needs the switch devices) is built
 * from its description only (InfinibandHelper::DescribeFlowFabric): the switch nodes (node
 * ids and names as built), no HCA, switch core or credit link, the subnet manager's
 * forwarding tables the one copy of the routes.  Its transport plane answers from the
 * description (AddDescribedRanks), its flows follow InfinibandFlowTopology, and its `links`
 * rows are those the devices would give (ids, nodes, rates; no traffic, as a flow plane's
 * devices carry none).
 */
class InfinibandClusterPlane
    : public RailClusterPlane<InfinibandNetDevice, InfinibandTransportPlane>
{
  public:
    InfinibandClusterPlane();

    ClusterPlane GetPlane() const override;
    ClusterPlaneReach GetReach() const override;
    /// Targets "device", "switch", "channel" (InfinibandHelper) and "subnet-manager"; "flow"
    /// "BuildDevices" (BooleanValue, default false) builds a flow-level plane's devices all
    /// the same, its flows walking them (PacketPlaneFlowTopology).
    bool SetAttribute(const std::string& target,
                      const std::string& name,
                      const AttributeValue& value) override;
    /// Topology and routing (pure data): a refused routing leaves nothing built.
    std::string Prepare(const ClusterConfig& config, const ClusterLayout& layout) override;
    std::string Build(const ClusterConfig& config,
                      const ClusterLayout& layout,
                      ClusterNodes& nodes) override;
    Ptr<TransportPlane> MakeTransportPlane(const ClusterLayout& layout) const override;
    std::vector<CreditLinkNetDevice::Counters> GetRankLinkCounters(uint32_t rank) const override;
    uint64_t GetNLinkDirections() const override;
    void WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const override;
    void AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const override;
    void AddConservationNotes(CreditLinkConservationReport& report) const override;
    std::string DescribeSummary(const ClusterConfig& config) const override;
    std::string DescribeLinks(const ClusterConfig& config) const override;
    double GetBisection_gbit_per_s(const ClusterConfig& config) const override;
    double GetPerGpu_gbit_per_s(const ClusterConfig& config) const override;
    void ScaleBandwidth(ClusterConfig& config, double factor) const override;

    const InfinibandTopology& GetTopology() const;
    Ptr<InfinibandSubnetManager> GetSubnetManager() const;
    const ClusterIbShape& GetShape() const;
    uint32_t GetHcaTopologyNode(uint32_t rank) const;
    Ptr<InfinibandNetDevice> GetHcaDevice(uint32_t rank) const;
    InfinibandHelper& GetHelper() const;
    /// Topology switch node index -> name ("ib/leaf3", per rail "ib/r3/leaf0"); "" for none.
    std::string GetSwitchName(uint32_t topologyNode) const;
    /// Built from its description only (class comment): no InfiniBand device exists.
    bool IsDescribedOnly() const;
    /// The subnet and its ports' parameters as the flow plane reads them (IsDescribedOnly).
    const InfinibandFlowFabric& GetFlowFabric() const;
    /// The routes of GetFlowFabric (InfinibandFlowTopology).
    Ptr<InfinibandFlowTopology> MakeFlowTopology() const;

  private:
    /// One fat tree of shape \p s over \p ranks' HCAs (already in the topology), its
    /// switches named \p prefix + leaf0, spine0, agg0_0, core0_0.
    void AddTree(const ClusterConfig& c,
                 const ClusterLayout& layout,
                 const ClusterIbShape& s,
                 const std::vector<uint32_t>& ranks,
                 const std::string& prefix);
    /// System id of each switch (topology node): with the hosts of its first cable,
    /// switches without hosts spread round-robin.
    std::vector<uint32_t> SwitchSystemIds(const ClusterLayout& layout) const;
    /// Build's rest for a plane described only: \p nodeOf by topology node.
    void BuildDescribed(const ClusterConfig& c, const std::vector<Ptr<Node>>& nodeOf);

    std::unique_ptr<InfinibandHelper> m_helper;
    std::vector<std::pair<std::string, Ptr<AttributeValue>>> m_smAttributes;
    InfinibandTopology m_topology;
    Ptr<InfinibandSubnetManager> m_sm;
    ClusterIbShape m_shape;
    std::vector<uint32_t> m_hcaNode;              //!< rank -> topology node
    std::map<uint32_t, std::string> m_switchName; //!< topology node -> name
    bool m_flowDevices{false};                    //!< "flow" "BuildDevices"
    bool m_describedOnly{false};
    InfinibandFlowFabric m_fabric;    //!< when m_describedOnly
    std::vector<uint32_t> m_nodeIdOf; //!< topology node -> ns-3 node id, when m_describedOnly
};

} // namespace ns3

#endif
