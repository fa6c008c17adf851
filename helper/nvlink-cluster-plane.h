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
 */
class NvLinkClusterPlane : public ClusterPlaneBuilder
{
  public:
    ClusterPlane GetPlane() const override;
    ClusterPlaneReach GetReach() const override;
    /// Targets "device" (NvLinkNetDevice) and "switch" (NvSwitch).
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
    const std::vector<Ptr<CreditLinkNetDevice>>& GetCreditLinkDevices() const override;
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

  private:
    std::vector<std::pair<std::string, Ptr<AttributeValue>>> m_deviceAttributes;
    std::vector<std::pair<std::string, Ptr<AttributeValue>>> m_switchAttributes;
    ClusterLayout m_layout;
    std::vector<std::unique_ptr<NvLinkHelper>> m_domains;
    std::vector<Ptr<CreditLinkNetDevice>> m_devices; //!< every bundle end
    NodeContainer m_switches;
};

} // namespace ns3

#endif
