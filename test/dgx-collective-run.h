/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// One collective as collective-bench runs it (all ranks, out of place) on a dgx-h100
// cluster at a chosen fidelity: what the flow-mode tests compare between packet and flow.
#ifndef AI_FABRIC_TEST_DGX_COLLECTIVE_RUN_H
#define AI_FABRIC_TEST_DGX_COLLECTIVE_RUN_H

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/names.h"
#include "ns3/simulator.h"

#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace ns3
{

/**
 * The out-of-place time in us of one \p kind / \p algorithm collective of \p bytes over
 * every rank of the cluster \p c (validated).  \p tune may set attributes of the built
 * cluster; \p inspect reads the cluster after the run, before the simulator is destroyed;
 * \p prepare may set plane attributes before it is built.
 */
inline double
RunCollective_us(
    const ClusterConfig& c,
    const std::string& kind,
    const std::string& algorithm,
    uint64_t bytes,
    const std::function<void(ClusterHelper&)>& tune = nullptr,
    const std::function<void(ClusterHelper&, Ptr<GpuTransport>, Ptr<CollectiveEngine>)>& inspect =
        nullptr,
    const std::function<void(ClusterHelper&)>& prepare = nullptr)
{
    ClusterHelper cluster(c);
    cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
    if (prepare)
    {
        prepare(cluster);
    }
    EXPECT_EQ(cluster.TryBuild(), "");
    if (tune)
    {
        tune(cluster);
    }
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    Ptr<CollectiveEngine> engine = cluster.InstallCollectiveEngine(transport);
    std::vector<uint32_t> ranks;
    for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
    {
        ranks.push_back(r);
    }
    CollectiveBenchOptions o;
    o.collective = kind;
    o.algorithm = algorithm;
    o.inPlace = "out";
    const double t = CollectiveBenchRun(o, ranks, {bytes}, engine).front().outOfPlace.time_us;
    if (inspect)
    {
        inspect(cluster, transport, engine);
    }
    Simulator::Destroy();
    Names::Clear();
    return t;
}

/// RunCollective_us on \p servers dgx-h100 at \p fidelity with the \p endpoint set.
inline double
RunDgxCollective_us(
    const std::string& fidelity,
    uint32_t servers,
    const std::string& kind,
    const std::string& algorithm,
    uint64_t bytes,
    const std::string& endpoint = "auto",
    const std::function<void(ClusterHelper&)>& tune = nullptr,
    const std::function<void(ClusterHelper&, Ptr<GpuTransport>, Ptr<CollectiveEngine>)>& inspect =
        nullptr,
    const std::function<void(ClusterHelper&)>& prepare = nullptr)
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = servers;
    c.fidelity = fidelity;
    c.endpoint = endpoint;
    EXPECT_EQ(c.Validate(), "");
    return RunCollective_us(c, kind, algorithm, bytes, tune, inspect, prepare);
}

} // namespace ns3

#endif
