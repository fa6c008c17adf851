/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The RoCE scale-out plane through ClusterHelper: --scaleOut=roce builds the InfiniBand
// plane's rail-optimised layout with Ethernet switches and RoCE NICs, the transport
// carries messages over it (plane 'roce'), a message takes the wire time its per-packet
// framing predicts against InfiniBand's, and bad flags are refused naming the flag.
#include "results-db-fixture.h"
#include "run-command.h"
#include "scratch-dir.h"

#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/results-database.h"
#include "ns3/roce-cluster-plane.h"
#include "ns3/roce-shared-buffer.h"
#include "ns3/roce-transport-plane.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

class RocePlane : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }
};

std::string
Apply(ClusterConfig& c, const std::vector<std::string>& flags, std::string* field = nullptr)
{
    CommandLine cmd;
    c.AddCommandLineArguments(cmd);
    std::vector<std::string> argv{"prog"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    cmd.Parse(argv);
    return c.ApplyCommandLine(field);
}

// Time for rank 0 to send \p bytes to rank 8 (the other server), alone on the fabric.
Time
OneMessage(const std::vector<std::string>& flags, uint64_t bytes, std::string* planeName)
{
    ClusterConfig c;
    EXPECT_EQ(Apply(c, flags), "");
    ClusterHelper cluster(c);
    EXPECT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("dp");
    Time done;
    auto record = MakeBoundCallback(
        +[](Time* t) { *t = Simulator::Now(); },
        &done);
    transport->SendMessage(0, 8, bytes, GpuTransport::DoneCallback(), record);
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    EXPECT_EQ(transport->GetRxBytes(8), bytes);
    *planeName = transport->GetPlane(transport->SelectPlane(0, 8))->GetPlaneName();
    Simulator::Destroy();
    Names::Clear();
    return done;
}

} // namespace

TEST_F(RocePlane, ScaleOutFlagBuildsTheSameLayoutOnEthernet)
{
    ClusterConfig c;
    ASSERT_EQ(Apply(c, {"--preset=dgx-h100", "--servers=4", "--scaleOut=roce"}), "");
    const ClusterIbShape shape = ClusterIbShape::Compute(c);
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    const auto counts = cluster.GetNodeCounts();
    EXPECT_EQ(counts.count("ib-switch") ? counts.at("ib-switch") : 0u, 0u);
    EXPECT_EQ(counts.at("roce-switch"), shape.switches);
    auto& roce = dynamic_cast<RoceClusterPlane&>(cluster.GetPlaneBuilder(ClusterPlane::ROCE));
    EXPECT_EQ(roce.GetName(), "roce");
    EXPECT_EQ(roce.GetCreditLinkDevices().size(), 2u * shape.cables); // both ends of each cable
    EXPECT_NE(Names::Find<Node>("roce/leaf0"), nullptr);
    // Rail-optimised: a GPU's NIC hangs off its rail's leaf, as the HCA would.
    for (uint32_t r = 0; r < c.GetNRanks(); ++r)
    {
        Ptr<RoceNetDevice> nic = roce.GetNic(r);
        ASSERT_NE(nic, nullptr);
        EXPECT_EQ(nic->GetHostId(), r);
        EXPECT_EQ(Names::FindName(nic->GetPeer()->GetNode()),
                  "leaf" + std::to_string((r / 8 / shape.hostsPerLeaf) * shape.rails + r % 8));
    }
    // Messages between servers go over RoCE, inside a server over NVLink.
    Ptr<GpuTransport> transport = cluster.InstallTransport("dp");
    EXPECT_EQ(transport->GetPlane(transport->SelectPlane(0, 8))->GetPlaneName(), "roce");
    EXPECT_EQ(transport->GetPlane(transport->SelectPlane(0, 1))->GetPlaneName(), "nvlink");
    uint32_t done = 0;
    auto count = MakeBoundCallback(
        +[](uint32_t* n) { ++*n; },
        &done);
    for (uint32_t dst = 8; dst < 32; dst += 9)
    {
        transport->SendMessage(0, dst, 1 << 20, GpuTransport::DoneCallback(), count);
    }
    Simulator::Run();
    EXPECT_EQ(done, 3u);
    const RoceClusterPlane::Totals totals = roce.GetTotals();
    EXPECT_EQ(totals.drops, 0u);
    const CreditLinkConservationReport report = cluster.CheckConservation();
    EXPECT_TRUE(report.Ok()) << report.Describe();
}

// A 3-to-1 incast onto rank 0's NIC without DCQCN: the leaf pauses the senders' NICs.  Each links
// row of the plane carries its direction's PFC and ECN counters, so their sums are the
// plane's totals exactly (both count the same events once); the other planes' rows leave
// them NULL.
TEST_F(RocePlane, LinksRowsCarryPfcAndEcnCounters)
{
    ClusterConfig c;
    ASSERT_EQ(Apply(c, {"--preset=dgx-h100", "--servers=4", "--scaleOut=roce", "--dcqcn=0"}), "");
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("dp");
    for (uint32_t src = 8; src < 32; src += 8)
    {
        transport->SendMessage(src,
                               0,
                               8 << 20,
                               GpuTransport::DoneCallback(),
                               GpuTransport::DoneCallback());
    }
    Simulator::Run();
    ASSERT_EQ(transport->GetRxBytes(0), 3u * (8 << 20));
    auto& roce = dynamic_cast<RoceClusterPlane&>(cluster.GetPlaneBuilder(ClusterPlane::ROCE));
    const RoceClusterPlane::Totals totals = roce.GetTotals();
    ASSERT_GT(totals.pauseFrames, 0u);

    const test_util::ScratchDir scratch("roce-links");
    const std::string path = scratch.File("results.db");
    results_db_test::WriteTopology(cluster, path);
    results_db_test::Reader r(path);
    const std::string roceRows = " FROM links WHERE plane='roce'";
    EXPECT_EQ(r.Int("SELECT sum(pfc_pause_ns)" + roceRows), totals.pausedNs);
    EXPECT_EQ(r.Int("SELECT sum(pfc_pause_frames)" + roceRows),
              static_cast<int64_t>(totals.pauseFrames));
    EXPECT_EQ(r.Int("SELECT sum(ecn_marked_packets)" + roceRows),
              static_cast<int64_t>(totals.ecnMarked));
    EXPECT_EQ(r.Int("SELECT count(*)" + roceRows + " AND pfc_pause_ns IS NULL"), 0);
    // The three paused directions are the senders' NIC -> leaf links.
    EXPECT_EQ(r.Int("SELECT count(*)" + roceRows + " AND pfc_pause_ns > 0"), 3);
    EXPECT_EQ(r.Int("SELECT count(*) FROM links WHERE plane<>'roce' AND (pfc_pause_ns IS NOT "
                    "NULL OR pfc_pause_frames IS NOT NULL OR ecn_marked_packets IS NOT NULL)"),
              0);
    EXPECT_GT(r.Int("SELECT count(*) FROM links WHERE plane<>'roce'"), 0);
}

// --pcap on a cluster: rank 0's NIC capture is Ethernet (link type 1) with one record per
// frame its port sent or received (the device's packet counters; no PFC on one message),
// 16 RC SEND ONLY data frames for 64 KiB at one 4096-byte packet per frame, and tshark
// decodes every frame as RoCEv2 (UDP 4791 -> InfiniBand BTH).
TEST_F(RocePlane, PcapFlagCapturesEachNicAsRoceV2)
{
    const test_util::ScratchDir scratch("roce-cluster-pcap");
    const std::string prefix = scratch.File("roce");
    Config::SetDefault("ns3::RoceNetDevice::MaxBurstPackets", UintegerValue(1));
    ClusterConfig c;
    ASSERT_EQ(Apply(c, {"--preset=dgx-h100", "--servers=2", "--scaleOut=roce", "--pcap=" + prefix}),
              "");
    std::string file;
    uint64_t frames = 0;
    {
        ClusterHelper cluster(c);
        ASSERT_EQ(cluster.TryBuild(), "");
        Ptr<GpuTransport> transport = cluster.InstallTransport("dp");
        transport->SendMessage(0,
                               8,
                               64 << 10,
                               GpuTransport::DoneCallback(),
                               GpuTransport::DoneCallback());
        Simulator::Run();
        ASSERT_EQ(transport->GetRxBytes(8), 64u << 10);
        auto& roce = dynamic_cast<RoceClusterPlane&>(cluster.GetPlaneBuilder(ClusterPlane::ROCE));
        const Ptr<RoceNetDevice> nic = roce.GetNic(0);
        file = prefix + "-" + std::to_string(nic->GetNode()->GetId()) + "-" +
               std::to_string(nic->GetIfIndex()) + ".pcap";
        frames = nic->GetCounters().txPackets + nic->GetCounters().rxPackets;
        // Every GPU's NIC has its file.
        for (uint32_t r = 0; r < c.GetNRanks(); ++r)
        {
            const Ptr<RoceNetDevice> n = roce.GetNic(r);
            const std::string name = prefix + "-" + std::to_string(n->GetNode()->GetId()) + "-" +
                                     std::to_string(n->GetIfIndex()) + ".pcap";
            EXPECT_TRUE(std::ifstream(name).good()) << name;
        }
        Simulator::Destroy(); // closes the captures (the devices' trace sinks hold them)
    }

    // libpcap file: 24-byte header (link type at offset 20), then 16-byte record headers
    // (captured length at offset 8) each followed by its frame.
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(in.good()) << file;
    uint32_t header[6] = {};
    in.read(reinterpret_cast<char*>(header), sizeof(header));
    EXPECT_EQ(header[0], 0xa1b2c3d4u); // written in host order
    EXPECT_EQ(header[5], 1u);          // LINKTYPE_ETHERNET
    uint64_t records = 0;
    uint32_t record[4];
    while (in.read(reinterpret_cast<char*>(record), sizeof(record)))
    {
        in.seekg(record[2], std::ios::cur);
        ++records;
    }
    EXPECT_EQ(records, frames);
    EXPECT_GE(frames, 16u);

    if (std::system("command -v tshark > /dev/null 2>&1") != 0)
    {
        GTEST_SKIP() << "tshark not installed (apt-get install tshark)";
    }
    auto tshark = [&file](const std::string& args) {
        return test_util::RunCommand("tshark -r " + file + " " + args + " 2>/dev/null");
    };
    const std::string all = tshark("-T fields -e udp.dstport -e infiniband.bth.opcode");
    const std::string sends = tshark("-Y \"infiniband.bth.opcode == 4\" -T fields -e frame.number");
    const std::string malformed = tshark("-Y _ws.malformed -T fields -e frame.number");
    uint64_t decoded = 0;
    for (size_t at = all.find("4791\t"); at != std::string::npos; at = all.find("4791\t", at + 1))
    {
        ++decoded;
    }
    EXPECT_EQ(decoded, frames) << all;
    EXPECT_EQ(std::count(sends.begin(), sends.end(), '\n'), 16) << sends;
    EXPECT_EQ(malformed, "") << malformed;
}

// With the ideal endpoint (the wire alone) a 16 MiB message between servers is bound by
// its NIC's wire: RoCE frames carry 62 B of headers and trailers + 20 B of preamble and
// gap per 4096 B, InfiniBand 26 B + its framing, so the times differ by the ratio of the
// per-packet wire bytes (0.5 %).
TEST_F(RocePlane, MessageTakesTheWireTimeOfItsFraming)
{
    const uint64_t bytes = 16 << 20;
    std::string ib;
    std::string roce;
    const std::vector<std::string> common{"--preset=dgx-h100", "--servers=2", "--endpoint=ideal"};
    std::vector<std::string> ibFlags = common;
    std::vector<std::string> roceFlags = common;
    roceFlags.push_back("--scaleOut=roce");
    const Time tIb = OneMessage(ibFlags, bytes, &ib);
    const Time tRoce = OneMessage(roceFlags, bytes, &roce);
    EXPECT_EQ(ib, "infiniband");
    EXPECT_EQ(roce, "roce");
    const double roceWire = 4096 + 62 + 20;
    const double ibWire = 4096 + 26; // LRH, BTH, ICRC, VCRC; the HCA adds no OverheadBytes
    EXPECT_NEAR(tRoce.GetSeconds() / tIb.GetSeconds(),
                roceWire / ibWire,
                0.005 * roceWire / ibWire);
}

// The RoCE NIC keeps a QP per (destination, collective channel), as NCCL's channels have
// their own QPs (their own UDP source port for ECMP and their own DCQCN state): three
// messages from rank 0 to rank 8 on channels 0, 1 and 0 open two QPs at rank 0.  Exact.
TEST_F(RocePlane, EachCollectiveChannelHasItsOwnQp)
{
    ClusterConfig c;
    ASSERT_EQ(Apply(c, {"--preset=dgx-h100", "--servers=2", "--scaleOut=roce"}), "");
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("dp");
    for (uint32_t channel : {0u, 1u, 0u})
    {
        transport->SendMessage(0,
                               8,
                               64 * 1024,
                               GpuTransport::DoneCallback(),
                               GpuTransport::DoneCallback(),
                               channel);
    }
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    EXPECT_EQ(transport->GetRxBytes(8), 3u * 64 * 1024);
    const auto plane =
        DynamicCast<RoceTransportPlane>(transport->GetPlane(transport->SelectPlane(0, 8)));
    ASSERT_TRUE(plane);
    EXPECT_EQ(plane->GetDevice(0)->GetQpCount(), 2u);
}

TEST_F(RocePlane, BadFlagsAreRefusedNamingTheFlag)
{
    for (const auto& [flag, name] :
         std::vector<std::pair<std::string, std::string>>{{"--scaleOut=ethernet", "scaleOut"},
                                                          {"--ecmp=random", "ecmp"},
                                                          {"--pfc=maybe", "pfc"},
                                                          {"--dcqcn=2", "dcqcn"}})
    {
        ClusterConfig c;
        std::string field;
        const std::string error = Apply(c, {"--preset=dgx-h100-roce", flag}, &field);
        EXPECT_NE(error.find(name), std::string::npos) << flag << ": " << error;
        EXPECT_EQ(field, name) << flag;
    }
    // A capture of the RoCE plane on an InfiniBand cluster.
    ClusterConfig ib;
    std::string field;
    EXPECT_NE(Apply(ib, {"--preset=dgx-h100", "--pcap=/tmp/never"}, &field).find("roce"),
              std::string::npos);
    EXPECT_EQ(field, "pcap");
    ClusterConfig ok;
    ASSERT_EQ(Apply(ok, {"--preset=dgx-h100-roce", "--pfc=0", "--ecmp=spray", "--dcqcn=off"}), "");
    EXPECT_EQ(ok.scaleOut, "roce");
    EXPECT_FALSE(ok.rocePfc);
    EXPECT_FALSE(ok.roceDcqcn);
    EXPECT_TRUE(ok.roceEcn);
    EXPECT_EQ(ok.roceEcmp, "spray");
}

// --sharedBuffer_bytes: every RoCE switch of the cluster shares one buffer of that size among
// its ingress queues (dynamic thresholds, RoceSharedBuffer; its split is tested in
// roce-test.cc) and runs its ports' PFC from it; a 3-to-1 incast of 4 MiB each on 4 MiB per
// switch stays lossless and delivers every byte (exact counts).  The flag needs RoCE.
TEST_F(RocePlane, SharedBufferFlagGivesEverySwitchOneBuffer)
{
    ClusterConfig c;
    ASSERT_EQ(
        Apply(
            c,
            {"--preset=dgx-h100-roce", "--servers=4", "--dcqcn=0", "--sharedBuffer_bytes=4194304"}),
        "");
    ClusterHelper cluster(c);
    ASSERT_EQ(cluster.TryBuild(), "");
    auto& roce = dynamic_cast<RoceClusterPlane&>(cluster.GetPlaneBuilder(ClusterPlane::ROCE));
    Ptr<Node> leaf = Names::Find<Node>("roce/leaf0");
    ASSERT_NE(leaf, nullptr);
    Ptr<RoceSharedBuffer> buffer = leaf->GetObject<RoceSharedBuffer>();
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(buffer->GetSizeBytes(), 4194304u);
    Ptr<GpuTransport> transport = cluster.InstallTransport("dp");
    uint32_t done = 0;
    auto count = MakeBoundCallback(
        +[](uint32_t* n) { ++*n; },
        &done);
    for (uint32_t src : {8u, 16u, 24u})
    {
        transport->SendMessage(src, 0, 4 << 20, GpuTransport::DoneCallback(), count);
    }
    Simulator::Run();
    EXPECT_EQ(done, 3u);
    EXPECT_EQ(transport->GetRxBytes(0), 3u * (4 << 20));
    EXPECT_EQ(roce.GetTotals().drops, 0u);
    Simulator::Destroy();
    Names::Clear();
    ClusterConfig ib;
    std::string field;
    EXPECT_NE(Apply(ib, {"--preset=dgx-h100", "--sharedBuffer_bytes=1048576"}, &field)
                  .find("needs --scaleOut=roce"),
              std::string::npos);
    EXPECT_EQ(field, "sharedBuffer_bytes");
}
