/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "results-db-fixture.h"
#include "scratch-dir.h"

#include "ns3/bulk-send-helper.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/names.h"
#include "ns3/packet-sink-helper.h"
#include "ns3/packet-sink.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/udp-echo-helper.h"
#include "ns3/uinteger.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <string>
#include <unistd.h>

using namespace ns3;

namespace
{

constexpr uint32_t kMss = 1448;
// Wire bytes per full segment: MSS + IPv4 20 + TCP 20 + timestamp option 12 + PPP 2.
constexpr double kTcpEfficiency = kMss / double(kMss + 20 + 20 + 12 + 2);

class ClusterFrontEnd : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kMss));
        // The bridged front-end resolves addresses with ARP, whose requests ns-3 delays by
        // U(0, 10 ms) by default (and it queues at most 3 packets meanwhile): a start-up cost
        // of up to 10 ms per IPv4 hop that would blur the rates measured from t = 0 below.
        Config::SetDefault("ns3::ArpL3Protocol::RequestJitter",
                           StringValue("ns3::ConstantRandomVariable[Constant=0.0]"));
    }

    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }
};

struct SinkStats
{
    uint64_t bytes{0};
    Time last;
};

void
OnRx(SinkStats* s, Ptr<const Packet> p, const Address&)
{
    s->bytes += p->GetSize();
    s->last = Simulator::Now();
}

ClusterConfig
SmallFrontEnd()
{
    ClusterConfig c;
    EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 4;
    c.serversPerRack = 2; // 2 ToRs, so traffic crosses the aggregation layer
    c.ethAggSwitches = 1;
    c.ethPortsPerServer = 1;
    c.ethRate_gbit_per_s = 10;
    c.storageRate_gbit_per_s = 2; // the bottleneck of the checkpoint test
    c.pcieRate_gbit_per_s = 10;
    c.ethFabric = "bridged"; // the L2 ToR's properties are what most tests here check
    return c;
}

// Starts a BulkSend of bytes from the storage node to address:port on node dst.
void
Transfer(Ptr<Node> src,
         Ptr<Node> dst,
         Ipv4Address address,
         uint16_t port,
         uint64_t bytes,
         SinkStats* s)
{
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinks = sink.Install(dst);
    sinks.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, s));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(address, port));
    bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
    bulk.SetAttribute("SendSize", UintegerValue(kMss));
    bulk.Install(src);
}

void
CheckpointToEveryCpu(const std::string& fabric, const std::string& routing, uint32_t aggs = 1)
{
    ClusterConfig c = SmallFrontEnd();
    c.ethFabric = fabric;
    c.ethRouting = routing;
    c.ethAggSwitches = aggs;
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    const uint64_t bytes = 2'000'000;
    std::vector<SinkStats> stats(4);
    for (uint32_t s = 0; s < 4; ++s)
    {
        Transfer(cluster.GetStorageNodes().Get(0),
                 cluster.GetCpuNode(s),
                 cluster.GetCpuAddress(s),
                 5000,
                 bytes,
                 &stats[s]);
    }
    Simulator::Stop(Seconds(2));
    Simulator::Run();
    Time end;
    for (const auto& s : stats)
    {
        ASSERT_EQ(s.bytes, bytes);
        end = Max(end, s.last);
    }
    // Expected: the storage link (2 Gb/s, point-to-point in both fabrics) is the bottleneck
    // shared by the four flows; every other hop (CSMA segments at 10 Gb/s, uplinks at 20 Gb/s,
    // even half duplex with the ACKs on the same medium) is 5x faster.  Aggregate goodput =
    // 2 Gb/s x MSS / (MSS + IPv4 20 + TCP 20 + timestamps 12 + PPP 2).
    const double expected_bps = 2e9 * kTcpEfficiency;
    const double measured_bps = 4.0 * bytes * 8 / end.GetSeconds();
    EXPECT_NEAR(measured_bps / expected_bps, 1.0, 0.05)
        << "measured " << measured_bps << " expected " << expected_bps;
}

TEST_F(ClusterFrontEnd, CheckpointFromStorageToEveryCpuAtBottleneckRate)
{
    CheckpointToEveryCpu("bridged", "static");
}

TEST_F(ClusterFrontEnd, CheckpointOverGlobalRouting)
{
    CheckpointToEveryCpu("bridged", "global");
}

// Two aggregation routers: ToR 1 hangs off router 1, storage off router 0, so two CPUs'
// flows cross the aggregation mesh.
TEST_F(ClusterFrontEnd, CheckpointBridgedAcrossAggregationMesh)
{
    CheckpointToEveryCpu("bridged", "static", 2);
}

TEST_F(ClusterFrontEnd, CheckpointBridgedAcrossAggregationMeshGlobalRouting)
{
    CheckpointToEveryCpu("bridged", "global", 2);
}

TEST_F(ClusterFrontEnd, CheckpointRoutedFabric)
{
    CheckpointToEveryCpu("routed", "static");
}

TEST_F(ClusterFrontEnd, CheckpointRoutedFabricGlobalRouting)
{
    CheckpointToEveryCpu("routed", "global", 2);
}

void
CountIpv4Rx(uint32_t* n, Ptr<const Packet>, Ptr<Ipv4>, uint32_t)
{
    ++*n;
}

void
CountEcho(uint32_t* n, Ptr<const Packet>)
{
    ++*n;
}

// UDP echo from server 0's CPU to \p dst's CPU; returns the replies and, through \p aggRx,
// the IPv4 packets the aggregation router received meanwhile.
uint32_t
EchoFromCpu0(const std::string& routing, uint32_t dst, uint32_t* aggRx)
{
    ClusterConfig c = SmallFrontEnd(); // 2 servers per rack: CPUs 0, 1 on ToR 0, 2, 3 on ToR 1
    c.ethRouting = routing;
    ClusterHelper cluster(c);
    EXPECT_EQ(cluster.TryBuild(), "");
    EXPECT_EQ(c.ethFabric, "bridged");
    *aggRx = 0;
    cluster.GetEthSwitchNodes()
        .Get(2) // ToRs 0, 1, then aggregation router 0
        ->GetObject<Ipv4L3Protocol>()
        ->TraceConnectWithoutContext("Rx", MakeBoundCallback(&CountIpv4Rx, aggRx));
    UdpEchoServerHelper server(9);
    server.Install(cluster.GetCpuNode(dst));
    UdpEchoClientHelper client(cluster.GetCpuAddress(dst), 9);
    client.SetAttribute("MaxPackets", UintegerValue(5));
    client.SetAttribute("Interval", TimeValue(MilliSeconds(2)));
    client.SetAttribute("PacketSize", UintegerValue(64));
    ApplicationContainer apps = client.Install(cluster.GetCpuNode(0));
    uint32_t replies = 0;
    apps.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&CountEcho, &replies));
    Simulator::Stop(MilliSeconds(20));
    Simulator::Run();
    return replies;
}

TEST_F(ClusterFrontEnd, SameRackEchoStaysInsideTheTorBridge)
{
    for (const char* routing : {"static", "global"})
    {
        SCOPED_TRACE(routing);
        uint32_t aggRx = 0;
        // Same rack: ARP and echo are switched by ToR 0's bridge; the aggregation router
        // sees the flooded ARP request (not IPv4) and no IPv4 packet at all.
        EXPECT_EQ(EchoFromCpu0(routing, 1, &aggRx), 5u);
        EXPECT_EQ(aggRx, 0u);
        Simulator::Destroy();
        Names::Clear();
        // Control: the other rack is reached through the router (5 requests + 5 replies).
        EXPECT_EQ(EchoFromCpu0(routing, 2, &aggRx), 5u);
        EXPECT_EQ(aggRx, 10u);
        Simulator::Destroy();
        Names::Clear();
    }
}

TEST_F(ClusterFrontEnd, DescribeNamesTheTorKind)
{
    ClusterConfig c = SmallFrontEnd();
    ClusterHelper bridged(c);
    ASSERT_EQ(bridged.TryBuild(), "");
    const std::string b = bridged.Describe();
    EXPECT_NE(b.find("front-end: bridged ToR"), std::string::npos) << b;
    // 2 ToRs x 1 uplink of 2 servers x 10 Gb/s; bisection min(40, 40) / 2 = 20 Gb/s.
    EXPECT_NE(b.find("ethernet    2.5 GB/s  (2 bridged ToR(s) x 1 uplink of 20 Gb/s"),
              std::string::npos)
        << b;
    // Links: 4 CPU segments + 2 uplinks + 1 storage (one aggregation router: no mesh).
    EXPECT_EQ(bridged.GetNEthernetLinks(), 7u);
    Simulator::Destroy();
    Names::Clear();

    c.ethFabric = "routed";
    ClusterHelper routed(c);
    ASSERT_EQ(routed.TryBuild(), "");
    const std::string r = routed.Describe();
    EXPECT_NE(r.find("front-end: routed ToR"), std::string::npos) << r;
    EXPECT_NE(r.find("ethernet    2.5 GB/s  (2 routed ToR(s) x 1 aggregation uplinks of 20 Gb/s"),
              std::string::npos)
        << r;
    EXPECT_EQ(r.find("bridged"), std::string::npos) << r;
    EXPECT_EQ(routed.GetNEthernetLinks(), 7u); // 2 x 1 uplinks + 4 servers + 1 storage

    ClusterConfig bad = SmallFrontEnd();
    bad.ethFabric = "ring";
    EXPECT_EQ(bad.Validate(), "unknown front-end fabric 'ring'; valid: bridged, routed");
}

TEST_F(ClusterFrontEnd, DataLoadingReachesGpusThroughCpuAtPcieRate)
{
    ClusterConfig c = SmallFrontEnd();
    c.storageRate_gbit_per_s = 10;
    c.pcieRate_gbit_per_s = 1; // now the GPU's PCIe link is the bottleneck
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    const uint64_t bytes = 1'000'000;
    // A GPU on each ToR.
    const uint32_t ranks[] = {3, 29};
    SinkStats stats[2];
    for (uint32_t i = 0; i < 2; ++i)
    {
        Transfer(cluster.GetStorageNodes().Get(0),
                 cluster.GetGpuNode(ranks[i]),
                 cluster.GetGpuAddress(ranks[i]),
                 6000,
                 bytes,
                 &stats[i]);
    }
    Simulator::Stop(Seconds(2));
    Simulator::Run();
    for (uint32_t i = 0; i < 2; ++i)
    {
        ASSERT_EQ(stats[i].bytes, bytes);
        // Each GPU's own 1 Gb/s PCIe link bounds its flow.
        const double measured_bps = bytes * 8 / stats[i].last.GetSeconds();
        EXPECT_NEAR(measured_bps / (1e9 * kTcpEfficiency), 1.0, 0.05) << measured_bps;
    }

    // nodes and links rows; the CPU -> GPU direction of rank 3's PCIe link carried the data.
    const test_util::ScratchDir scratch("cluster");
    const std::string path = scratch.File("results.db");
    results_db_test::WriteTopology(cluster, path);
    results_db_test::Reader reader(path);
    auto scalar = [&reader](const std::string& q) { return reader.Int(q); };
    auto counts = cluster.GetNodeCounts();
    uint32_t nodes = 0;
    for (const auto& [kind, n] : counts)
    {
        nodes += n;
    }
    EXPECT_EQ(scalar("SELECT COUNT(*) FROM nodes"), nodes);
    EXPECT_EQ(scalar("SELECT COUNT(*) FROM nodes WHERE kind='gpu' AND rank IS NOT NULL"), 32);
    EXPECT_EQ(scalar("SELECT rank FROM nodes WHERE name='server3/gpu5'"), 29);
    EXPECT_EQ(scalar("SELECT server FROM nodes WHERE name='server3/cpu'"), 3);
    EXPECT_EQ(scalar("SELECT COUNT(*) FROM nodes WHERE kind='eth-switch' AND server IS NULL"), 3);
    // One row per direction of every front-end and PCIe link.
    EXPECT_EQ(scalar("SELECT COUNT(*) FROM links WHERE plane='ethernet'"),
              2 * (cluster.GetNEthernetLinks() + cluster.GetNPcieLinks()));
    // NVLink: both ends of one bundle per (GPU, NVSwitch); InfiniBand: both ends of each cable.
    EXPECT_EQ(scalar("SELECT COUNT(*) FROM links WHERE plane='nvlink'"), 2 * 32 * 4);
    EXPECT_EQ(scalar("SELECT COUNT(*) FROM links WHERE plane='infiniband'"),
              2 * static_cast<int64_t>(cluster.GetIbTopology().GetLinks().size()));
    EXPECT_EQ(scalar("SELECT COUNT(DISTINCT link_id) FROM links"),
              scalar("SELECT COUNT(*) FROM links"));
    // Bridged: CPU 0's CSMA segment to ToR 0, both directions, at 10 Gb/s.
    const std::string tor = std::to_string(cluster.GetEthSwitchNodes().Get(0)->GetId());
    const std::string cpu = std::to_string(cluster.GetCpuNode(0)->GetId());
    EXPECT_EQ(
        scalar("SELECT COUNT(*) FROM links WHERE plane='ethernet' AND rate_bit_per_s=10000000000"
               " AND ((src_node=" +
               cpu + " AND dst_node=" + tor + ") OR (src_node=" + tor + " AND dst_node=" + cpu +
               "))"),
        2);
    const std::string gpu = std::to_string(cluster.GetGpuNode(3)->GetId());
    const int64_t tx =
        scalar("SELECT tx_bytes FROM links WHERE src_node=" + cpu + " AND dst_node=" + gpu);
    EXPECT_GE(tx, static_cast<int64_t>(bytes));
    EXPECT_LT(tx, static_cast<int64_t>(bytes * 1.1));
    EXPECT_EQ(
        scalar("SELECT rate_bit_per_s FROM links WHERE src_node=" + cpu + " AND dst_node=" + gpu),
        1000000000);
    EXPECT_GT(scalar("SELECT busy_ns FROM links WHERE src_node=" + cpu + " AND dst_node=" + gpu),
              static_cast<int64_t>(bytes * 8)); // > 8 ns per byte at 1 Gb/s
}

} // namespace
