/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_CLUSTER_PLANE_H
#define AI_FABRIC_ROCE_CLUSTER_PLANE_H

#include "ns3/infiniband-cluster-plane.h"
#include "ns3/rail-cluster-plane.h"
#include "ns3/roce-helper.h"
#include "ns3/roce-transport-plane.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * The RoCE scale-out plane (--scaleOut=roce): one RoCEv2 NIC per GPU into the same
 * rail-optimised 1-3 tier fabric the InfiniBand plane builds (the topology is taken from
 * it, so both compare on one layout), of RoceSwitch cores with ECMP groups of every
 * shortest path, PFC (--pfc), ECN (--ecn), DCQCN (--dcqcn) and the multipath policy
 * (--ecmp); a RoceTransportPlane over the NICs.
 */
class RoceClusterPlane : public RailClusterPlane<RoceNetDevice, RoceTransportPlane>
{
  public:
    RoceClusterPlane();

    ClusterPlane GetPlane() const override;
    ClusterPlaneReach GetReach() const override;
    /// Targets "device", "switch", "channel" (RoceHelper), "flow-control" (PFC) and
    /// "congestion-control" (the NICs' DCQCN).
    bool SetAttribute(const std::string& target,
                      const std::string& name,
                      const AttributeValue& value) override;
    std::string Prepare(const ClusterConfig& config, const ClusterLayout& layout) override;
    std::string Build(const ClusterConfig& config,
                      const ClusterLayout& layout,
                      ClusterNodes& nodes) override;
    int64_t AssignStreams(int64_t stream) override;
    /// pfc_pause_ns, pfc_pause_frames (0 when PFC is off) and ecn_marked_packets (0 at a NIC).
    void AddLinkCounters(Ptr<CreditLinkNetDevice> dev, LinkRecord& row) const override;
    std::string DescribeSummary(const ClusterConfig& config) const override;
    std::string DescribeLinks(const ClusterConfig& config) const override;
    std::string DescribeDetails(const ClusterConfig& config) const override;
    double GetBisection_gbit_per_s(const ClusterConfig& config) const override;
    double GetPerGpu_gbit_per_s(const ClusterConfig& config) const override;
    void ScaleBandwidth(ClusterConfig& config, double factor) const override;

    Ptr<RoceNetDevice> GetNic(uint32_t rank) const;

    /// Totals over the plane: PFC frames sent, time ports were paused, ECN marks, drops.
    struct Totals
    {
        uint64_t pauseFrames{0};
        int64_t pausedNs{0};
        uint64_t ecnMarked{0};
        uint64_t cnps{0};
        uint64_t drops{0};
    };

    Totals GetTotals() const;

  private:
    /// The InfiniBand builder whose Prepare lays out the same fabric (pure data).
    InfinibandClusterPlane m_layoutSource;
    std::unique_ptr<RoceHelper> m_helper;
};

} // namespace ns3

#endif
