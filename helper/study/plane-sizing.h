/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_PLANE_SIZING_H
#define AI_FABRIC_PLANE_SIZING_H

#include "ns3/cluster-config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// 0.25x ... 4x around a preset, each point double the previous.
std::vector<double> DefaultPlaneSweepFactors();

/**
 * Scales one plane's bandwidth in \p config by \p factor: NVLink the per-link rate;
 * InfiniBand the HCA and switch port rate; Ethernet the server ports, the storage ports and
 * the ToR uplinks when they are set (0 = non-blocking follows the ports).
 */
void ScalePlaneBandwidth(ClusterConfig& config, ClusterPlane plane, double factor);

/// Per GPU and direction, Gb/s (ClusterConfig::GetNvLinkPerGpu_gbit_per_s and friends).
double GetPlanePerGpu_gbit_per_s(const ClusterConfig& config, ClusterPlane plane);

/// One point of a bandwidth sweep.
struct PlaneSweepPoint
{
    double factor{1};
    uint64_t iterationNs{0};
};

/// Where a plane stops mattering.
struct PlaneKnee
{
    double factor{0};
    /// false: the last step still improved by the threshold or more, the knee lies beyond the
    /// sweep (factor = the largest swept).
    bool inSweep{false};
};

/**
 * The knee of one plane's sweep: the smallest factor from which every further step (each
 * point to the next, a doubling in the default sweep) shortens the iteration by less than
 * \p threshold, relative to the slower point.  A plane that carries no traffic of the job
 * has its knee at the smallest factor.  Points are sorted by factor here.
 */
PlaneKnee FindPlaneKnee(std::vector<PlaneSweepPoint> points, double threshold);

} // namespace ns3

#endif
