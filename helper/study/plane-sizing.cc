/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/plane-sizing.h"

#include "ns3/cluster-plane.h"

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
    GetClusterPlaneBuilder(plane).ScaleBandwidth(config, factor);
}

double
GetPlanePerGpu_gbit_per_s(const ClusterConfig& config, ClusterPlane plane)
{
    return GetClusterPlaneBuilder(plane).GetPerGpu_gbit_per_s(config);
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
