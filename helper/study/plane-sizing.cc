/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/plane-sizing.h"

#include <algorithm>

namespace ns3
{

std::vector<double>
DefaultPlaneSweepFactors()
{
    return {0.25, 0.5, 1, 2, 4};
}

void
ScalePlaneBandwidth(ClusterConfig& config, ClusterPlane plane, double factor)
{
    switch (plane)
    {
    case ClusterPlane::NVLINK:
        config.nvlinkLinkRate_gbyte_per_s *= factor;
        break;
    case ClusterPlane::INFINIBAND:
        config.ibRate_gbit_per_s *= factor;
        break;
    case ClusterPlane::ETHERNET:
        config.ethRate_gbit_per_s *= factor;
        config.storageRate_gbit_per_s *= factor;
        config.ethUplinkRate_gbit_per_s *= factor;
        break;
    }
}

double
GetPlanePerGpu_gbit_per_s(const ClusterConfig& config, ClusterPlane plane)
{
    switch (plane)
    {
    case ClusterPlane::NVLINK:
        return config.GetNvLinkPerGpu_gbit_per_s();
    case ClusterPlane::INFINIBAND:
        return config.GetIbPerGpu_gbit_per_s();
    case ClusterPlane::ETHERNET:
        return config.GetEthPerGpu_gbit_per_s();
    }
    return 0;
}

PlaneKnee
FindPlaneKnee(std::vector<PlaneSweepPoint> points, double threshold)
{
    PlaneKnee knee;
    if (points.empty())
    {
        return knee;
    }
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
        return a.factor < b.factor;
    });
    // Walk down from the fastest end while the step below still gains less than threshold.
    std::size_t k = points.size() - 1;
    knee.inSweep = true;
    if (points.size() >= 2)
    {
        auto gain = [&points](std::size_t i) {
            const double slow = static_cast<double>(points[i].iterationNs);
            const double fast = static_cast<double>(points[i + 1].iterationNs);
            return slow > 0 ? (slow - fast) / slow : 0.0;
        };
        if (gain(k - 1) >= threshold)
        {
            knee.inSweep = false;
        }
        else
        {
            while (k > 0 && gain(k - 1) < threshold)
            {
                --k;
            }
        }
    }
    knee.factor = points[k].factor;
    return knee;
}

} // namespace ns3
