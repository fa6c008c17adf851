/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Nothing hangs silently: the progress watchdog watches every credit device and switch of
// every fabric a ClusterHelper builds; an InfiniBand LFT hole drops the packet at the
// switch with a counted reason that the conservation check names; an LFT forwarding
// loop is a livelock the watchdog names with the looping links.  Each run is bounded in
// simulated time and wall-clock time.  (Credit-loop deadlocks: link-switch-test and
// infiniband-device-test.)
#include "infiniband-messages.h"
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/infiniband-helper.h"
#include "ns3/names.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-native.h"
#include "ns3/workload-study.h"

#include <chrono>
#include <cstdio>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

using namespace ns3;

namespace
{

class Watchdog : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        m_wallStart = std::chrono::steady_clock::now();
    }

    void TearDown() override
    {
        // Bounded wall time: a run that needed the 5 ms safety stop would take far longer.
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - m_wallStart).count();
        EXPECT_LT(wall, 60.0);
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    // Three switches in a ring, one HCA on each; up/down routing (no credit loop).
    static InfinibandFabric Ring(InfinibandHelper& ib)
    {
        ib.SetSubnetManagerAttribute("RoutingEngine", StringValue("updn"));
        ib.SetWatchdogAttribute("Timeout", TimeValue(MicroSeconds(10)));
        ib.SetWatchdogAttribute("LivelockTimeout", TimeValue(MicroSeconds(100)));
        return ib.Build(InfinibandTopology::Ring(3, 1));
    }

    static Ptr<InfinibandSwitch> SwitchOf(const InfinibandFabric& f, uint32_t host)
    {
        return DynamicCast<InfinibandSwitch>(f.GetHostDevice(host)->GetPeer()->GetSwitch());
    }

    static std::vector<uint8_t> Lft(Ptr<InfinibandSwitch> sw)
    {
        std::vector<uint8_t> lft(64);
        for (uint16_t dlid = 0; dlid < lft.size(); ++dlid)
        {
            lft[dlid] = sw->GetLftEntry(dlid);
        }
        return lft;
    }

    std::chrono::steady_clock::time_point m_wallStart;
};

// Every NVLink and InfiniBand device and switch of a 2-server dgx-h100 cluster reports to
// a watchdog (one per NVLink domain, one for the InfiniBand fabric).
TEST_F(Watchdog, CoversEveryFabricOfACluster)
{
    ClusterConfig config;
    ASSERT_EQ(config.ApplyPreset("dgx-h100"), "");
    config.servers = 2;
    config.gpusPerServer = 4;
    ClusterHelper cluster(config);
    ASSERT_EQ(cluster.TryBuild(), "");
    for (const std::string plane : {"nvlink", "infiniband"})
    {
        const auto& devices = cluster.GetCreditLinkDevices(plane);
        ASSERT_FALSE(devices.empty()) << plane;
        for (const auto& d : devices)
        {
            EXPECT_TRUE(d->GetWatchdog()) << plane << " " << d->GetLinkName();
            if (d->GetSwitch())
            {
                EXPECT_TRUE(d->GetSwitch()->GetWatchdog()) << plane << " " << d->GetLinkName();
            }
        }
    }
    EXPECT_EQ(cluster.GetCreditLinkDevices("infiniband").front()->GetWatchdog(),
              cluster.GetInfinibandHelper().GetWatchdog());
}

// An LFT hole: host 1's LID removed from every switch's forwarding table.  Host 0's message
// to host 1 is dropped at its first switch (IBA: an unknown DLID is discarded), counted
// on that input port with the reason; the run ends at once (no hang), the watchdog has
// nothing stuck to report, and the conservation check names the link and the reason.
TEST_F(Watchdog, InfinibandLftHoleIsDroppedCountedAndNamed)
{
    InfinibandHelper ib;
    InfinibandFabric f = Ring(ib);
    const uint16_t hole = f.hostLids[1];
    for (const auto& sw : f.switchCores)
    {
        std::vector<uint8_t> lft = Lft(sw);
        lft[hole] = 0xff;
        sw->SetForwardingTable(lft);
    }
    InfinibandMessages m(InfinibandMessages::Hosts(f));
    Ptr<InfinibandSwitch> first = SwitchOf(f, 0);
    Time lastDrop;
    first->TraceConnectWithoutContext("Drop",
                                      MakeCallback(+[](Time* t, Ptr<const Packet>, uint32_t) {
                                          *t = Simulator::Now();
                                      }).Bind(&lastDrop));
    m.Send(0, 1, 3 * 4096);
    Simulator::Stop(MilliSeconds(5)); // safety only
    Simulator::Run();
    // Three MTU packets at HDR-class rates reach the switch within a few microseconds.
    EXPECT_LT(lastDrop, MicroSeconds(10));
    EXPECT_TRUE(m.GetReceived().empty());
    EXPECT_EQ(first->GetDroppedPackets(), 3u);
    EXPECT_EQ(first->GetFirstDropReason(), "no route for destination " + std::to_string(hole));
    EXPECT_FALSE(ib.GetWatchdog()->HasFired()) << ib.GetWatchdog()->GetReport();

    CreditLinkConservation check;
    check.Add("infiniband", NodeContainer(f.hosts, f.switches));
    const CreditLinkConservationReport r = check.Check();
    ASSERT_EQ(r.violations.size(), 1u) << r.Describe();
    const CreditLinkViolation& v = r.violations.front();
    EXPECT_EQ(v.where, "link " + f.GetHostDevice(0)->GetLinkName());
    EXPECT_NE(v.problem.find("3 packets dropped at the switch input (first: no route for "
                             "destination " +
                             std::to_string(hole) + ")"),
              std::string::npos)
        << r.Describe();
}

// The same hole in a cluster replay: rank 2's HCA LID removed from every InfiniBand switch.
// The DP allreduce between ranks 0 and 2 cannot finish; the run ends (no hang) incomplete,
// and its report carries the conservation check naming rank 0's cable and the reason.
TEST_F(Watchdog, LftHoleInAClusterReplayFailsTheRunNamingTheDrop)
{
    ClusterConfig config;
    ASSERT_EQ(config.ApplyPreset("dgx-h100"), "");
    config.servers = 2;
    config.gpusPerServer = 2;
    StudyResult r;
    std::string hcaLink;
    uint16_t hole = 0;
    uint64_t dropped = 0;
    NodeContainer switches;
    const test_util::ScratchDir scratch("watchdog");
    const std::string path = scratch.File("results.db");
    Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
    db->Open(path);
    {
        ClusterHelper cluster(config);
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        ASSERT_EQ(cluster.TryBuild(), "");
        hole = cluster.GetHcaLid(2);
        hcaLink = cluster.GetHcaDevice(0)->GetLinkName();
        switches = cluster.GetIbSwitchNodes();
        for (uint32_t i = 0; i < switches.GetN(); ++i)
        {
            Ptr<InfinibandSwitch> sw = switches.Get(i)->GetObject<InfinibandSwitch>();
            std::vector<uint8_t> lft = Lft(sw);
            lft[hole] = 0xff;
            sw->SetForwardingTable(lft);
        }
        const std::string trace = "fabric-trace 1\nranks 4\ngroup dp 0,2\n"
                                  "0,2 grad allreduce group=dp bytes=1MiB\n";
        db->BeginRun("hole", "watchdog-test", 1, "{}");
        r = RunWorkloadStudy(cluster, NativeTraceParser::ParseString(trace, "hole"), "", db);
        db->EndRun("failed", NanoSeconds(r.simEndNs));
        for (uint32_t i = 0; i < switches.GetN(); ++i)
        {
            dropped += switches.Get(i)->GetObject<InfinibandSwitch>()->GetDroppedPackets();
        }
    }
    db->Close();
    // The links table counts the drops on the direction that delivered them (the HCA's).
    sqlite3* conn = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &conn), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(conn,
                                 "SELECT sum(drops), count(*) FROM links WHERE plane = "
                                 "'infiniband' AND drops > 0",
                                 -1,
                                 &stmt,
                                 nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    EXPECT_GT(dropped, 0u);
    EXPECT_EQ(static_cast<uint64_t>(sqlite3_column_int64(stmt, 0)), dropped);
    EXPECT_EQ(sqlite3_column_int64(stmt, 1), 1) << "only rank 0's HCA cable";
    sqlite3_finalize(stmt);
    sqlite3_close(conn);
    EXPECT_FALSE(r.complete);
    EXPECT_FALSE(r.conservation.Ok());
    const std::string where = "infiniband link " + hcaLink + ": ";
    const std::size_t at = r.stuckReport.find(where);
    ASSERT_NE(at, std::string::npos) << r.stuckReport;
    const std::string line = r.stuckReport.substr(at, r.stuckReport.find('\n', at) - at);
    EXPECT_NE(line.find("packets dropped at the switch input (first: no route for destination " +
                        std::to_string(hole) + ")"),
              std::string::npos)
        << line;
}

// A forwarding loop: host 2's LID points from host 0's switch to host 1's switch and back.
// One packet circles for ever (every hop is progress, so no deadlock); the watchdog
// reports a livelock after LivelockTimeout (100 us, checked every 10 us) naming the two
// directions of the looping cable, and stops the run.
TEST_F(Watchdog, InfinibandForwardingLoopIsReportedAsLivelock)
{
    InfinibandHelper ib;
    InfinibandFabric f = Ring(ib);
    Ptr<InfinibandSwitch> s0 = SwitchOf(f, 0);
    Ptr<InfinibandSwitch> s1 = SwitchOf(f, 1);
    const uint16_t target = f.hostLids[2];
    std::vector<uint8_t> lft0 = Lft(s0);
    std::vector<uint8_t> lft1 = Lft(s1);
    lft0[target] = lft0[f.hostLids[1]]; // s0 -> s1 (adjacent in a 3-ring)
    lft1[target] = lft1[f.hostLids[0]]; // s1 -> s0
    s0->SetForwardingTable(lft0);
    s1->SetForwardingTable(lft1);
    const Ptr<CreditLinkNetDevice> out0 = s0->GetPort(s0->IndexOfIbPort(lft0[target]));
    const Ptr<CreditLinkNetDevice> out1 = s1->GetPort(s1->IndexOfIbPort(lft1[target]));
    ASSERT_EQ(out0->GetPeer(), out1) << "the two LFT entries must use the same cable";

    InfinibandMessages m(InfinibandMessages::Hosts(f));
    m.Send(0, 2, 1024);
    Simulator::Stop(MilliSeconds(5)); // safety only
    Simulator::Run();
    Ptr<CreditLinkWatchdog> watchdog = ib.GetWatchdog();
    ASSERT_TRUE(watchdog->HasFired());
    // Livelock timeout 100 us plus at most two 10 us checks.
    EXPECT_LT(Simulator::Now(), MicroSeconds(130));
    const std::string& report = watchdog->GetReport();
    EXPECT_EQ(report.rfind("livelock", 0), 0u) << report;
    EXPECT_NE(report.find("link " + out0->GetLinkName() + ":"), std::string::npos) << report;
    EXPECT_NE(report.find("link " + out1->GetLinkName() + ":"), std::string::npos) << report;
    // The packet is still in the fabric: the books balance, but the fabric is not idle.
    CreditLinkConservation check;
    check.Add("infiniband", NodeContainer(f.hosts, f.switches));
    EXPECT_TRUE(check.Check(false).Ok()) << check.Check(false).Describe();
    EXPECT_FALSE(check.Check(true).Ok());
}

} // namespace
