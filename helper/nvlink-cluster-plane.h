/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_CLUSTER_PLANE_H
#define AI_FABRIC_NVLINK_CLUSTER_PLANE_H

#include "ns3/cluster-plane.h"
#include "ns3/nvlink-helper.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * The scale-up plane of a cluster: one NVLink domain (GPUs, NVSwitches, bundles) per
 * serversPerDomain servers, built by NvLinkHelper, with an NvLinkTransportPlane (NVLS
 * in-switch reduction) over all domains.  Domains of one GPU have no NVLink.
 *
 * A flow-level plane whose in-switch reductions are flows too (FlowTransportPlane's
 * NvlsFlows) is built from its domains' descriptions only (NvLinkHelper::DescribeFlowDomain):
 * the NVSwitch nodes (node ids and names as built), no device, switch core or credit link.
 * Its transport plane answers from the descriptions (AddDescribedDomain), its flows follow
 * NvLinkFlowTopology, and its `links` rows are those the devices would give (ids, nodes,
 * rates; no traffic, as a flow plane's devices carry none).
 */
class NvLinkClusterPlane : public ClusterPlaneBuilder
{
  public:
    ClusterPlane GetPlane() const override;
    ClusterPlaneReach GetReach() const override;
    /// Targets "device" (NvLinkNetDevice) and "switch" (NvSwitch); "flow" "BuildDevices"
    /// (BooleanValue, default false) builds a flow-level plane's devices all the same, its
    /// flows walking them (PacketPlaneFlowTopology), as before descriptions.
    bool SetAttribute(const std::string& target,
                      const std::string& name,
                      const AttributeValue& value) override;
    std::string Build(const ClusterConfig& config,
                      const ClusterLayout& layout,
                      ClusterNodes& nodes) override;
    Ptr<TransportPlane> MakeTransportPlane(const ClusterLayout& layout) const override;
    void CountNodes(std::map<std::string, uint32_t>& counts) const override;
    void WriteNodes(Ptr<ResultsDatabase> db, const ClusterConfig& config) const override;
    std::vector<Ptr<CreditLinkNetDevice>> GetRankLinkEnds(uint32_t rank) const override;
    std::vector<CreditLinkNetDevice::Counters> GetRankLinkCounters(uint32_t rank) const override;
    const std::vector<Ptr<CreditLinkNetDevice>>& GetCreditLinkDevices() const override;
    uint64_t GetNLinkDirections() const override;
    void WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const override;
    void AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const override;
    std::string DescribeSummary(const ClusterConfig& config) const override;
    std::string DescribeLinks(const ClusterConfig& config) const override;
    std::string DescribePerGpu(const ClusterConfig& config) const override;
    std::string DescribeBisection(const ClusterConfig& config) const override;
    double GetBisection_gbit_per_s(const ClusterConfig& config) const override;
    double GetPerGpu_gbit_per_s(const ClusterConfig& config) const override;
    void ScaleBandwidth(ClusterConfig& config, double factor) const override;

    uint32_t GetNDomains() const; //!< built domains (0 for 1-GPU domains)
    NvLinkHelper& GetDomainHelper(uint32_t domain) const;
    /// The GPU endpoint of \p rank; null for 1-GPU domains (no NVLink).
    Ptr<NvLinkGpu> GetGpu(uint32_t rank) const;
    NodeContainer GetSwitchNodes() const;
    /// Every domain's description as the flow plane reads it (NvLinkHelper::DescribeFlowDomain
    /// with the configuration's link rate); null for 1-GPU domains.
    Ptr<NvLinkFlowTopology> MakeFlowTopology(const ClusterConfig& config,
                                             const ClusterLayout& layout) const;
    /// Built from descriptions only (class comment): no NVLink device exists.
    bool IsDescribedOnly() const;
    /// Domain \p domain's description (\p config's link rate included).
    NvLinkFlowDomain GetFlowDomain(const ClusterConfig& config, uint32_t domain) const;

  private:
    /// One direction of a bundle as a `links` row gives it.
    struct Direction
    {
        uint32_t srcNode{0};
        uint32_t dstNode{0};
        uint32_t links{0};
    };

    /// Build's domains from one description each, no device (IsDescribedOnly).
    void BuildDescribed(const ClusterConfig& c,
                        const ClusterLayout& layout,
                        ClusterNodes& nodes,
                        const NvLinkHelper& helper);
    /// Built domain \p d's description, the link rate of \p c applied.
    NvLinkFlowDomain Describe(const ClusterConfig& c, uint32_t d) const;
    /// The directions of every domain's bundles, in the order of the built devices.
    std::vector<Direction> GetDescribedDirections() const;

    std::vector<std::pair<std::string, Ptr<AttributeValue>>> m_deviceAttributes;
    std::vector<std::pair<std::string, Ptr<AttributeValue>>> m_switchAttributes;
    ClusterLayout m_layout;
    std::vector<std::unique_ptr<NvLinkHelper>> m_domains;
    std::vector<Ptr<CreditLinkNetDevice>> m_devices; //!< every bundle end
    NodeContainer m_switches;
    bool m_describedOnly{false};
    bool m_flowDevices{false};                 //!< "flow" "BuildDevices"
    std::vector<NvLinkFlowDomain> m_described; //!< by domain, when m_describedOnly
    std::vector<int64_t> m_gpuNodeIds;         //!< by rank, when m_describedOnly
};

} // namespace ns3

#endif
