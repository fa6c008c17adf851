/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Front-end trace ops (load, checkpoint): parsing, errors, and their replay as ns-3 TCP
// transfers over a small cluster's Ethernet front-end and PCIe links.
#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/config.h"
#include "ns3/names.h"
#include "ns3/simulator.h"
#include "ns3/trace-native.h"
#include "ns3/workload-study.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

std::string
ErrorOf(const std::string& text)
{
    try
    {
        NativeTraceParser::ParseString(text, "fe.trace");
    }
    catch (const WorkloadError& e)
    {
        return e.what();
    }
    return "no error";
}

const std::string kHead = "fabric-trace 1\nranks 4\n";

// Payload share of a 1500-byte IPv4 frame carrying a 1448-byte TCP segment with timestamps,
// over point-to-point (PPP header 2 B) links.
constexpr double kTcpEfficiency = 1448.0 / (1448 + 20 + 20 + 12 + 2);

class FrontEndReplay : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    // 2 dgx-h100-like servers of 2 GPUs.  The storage link and the PCIe links run at
    // 10 Gb/s, the servers' links at 100 Gb/s: the bottleneck of every stage is 10 Gb/s.
    static ClusterConfig Small()
    {
        ClusterConfig c;
        EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
        c.servers = 2;
        c.gpusPerServer = 2;
        c.ethPortsPerServer = 1;
        c.ethRate_gbit_per_s = 100;
        c.storageRate_gbit_per_s = 10;
        c.pcieRate_gbit_per_s = 10;
        // Point-to-point (full-duplex) links throughout: the bridged ToR's CSMA segments
        // are half duplex, so TCP's ACKs contend with its data (doc/studies.md,
        // frontend-interference).
        c.ethFabric = "routed";
        return c;
    }

    static StudyResult Replay(const ClusterConfig& config, const std::string& text)
    {
        StudyResult r;
        {
            ClusterHelper cluster(config);
            cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
            EXPECT_EQ(cluster.TryBuild(), "");
            r = RunWorkloadStudy(cluster, NativeTraceParser::ParseString(text, "fe.trace"), "");
        }
        Simulator::Destroy();
        Names::Clear();
        EXPECT_TRUE(r.complete) << r.stuckReport;
        return r;
    }
};

} // namespace

TEST(WorkloadFrontEndOps, ParseAndPrint)
{
    const std::string text = kHead + "0-3 in load bytes=4MiB from=storage1\n"
                                     "0-3 fwd compute time=1ms after=in\n"
                                     "0 ck checkpoint bytes=1GiB stream=2\n";
    const WorkloadTrace t = NativeTraceParser::ParseString(text, "fe.trace");
    ASSERT_EQ(t.ops[0].size(), 3u);
    EXPECT_EQ(t.ops[0][0].kind, WorkloadOpKind::Load);
    EXPECT_EQ(t.ops[0][0].storage, 1);
    EXPECT_EQ(t.ops[0][0].bytes, 4u << 20);
    EXPECT_EQ(t.ops[0][0].to, -1);
    EXPECT_EQ(t.ops[0][0].from, -1);
    EXPECT_EQ(t.ops[0][2].kind, WorkloadOpKind::Checkpoint);
    EXPECT_EQ(t.ops[0][2].storage, 0); // rule: storage0 unless named
    EXPECT_EQ(t.ops[0][1].deps, std::vector<uint32_t>{0});
    EXPECT_FALSE(IsCollective(WorkloadOpKind::Load));
    EXPECT_FALSE(IsCollective(WorkloadOpKind::Checkpoint));
    EXPECT_TRUE(IsFrontEnd(WorkloadOpKind::Checkpoint));
    EXPECT_TRUE(t.collectives.empty());
    const std::string printed = NativeTracePrinter::Print(t);
    EXPECT_NE(printed.find("0-3 in load bytes=4MiB from=storage1\n"), std::string::npos) << printed;
    EXPECT_NE(printed.find("0 ck checkpoint bytes=1GiB to=storage0 stream=2\n"), std::string::npos)
        << printed;
    EXPECT_EQ(NativeTracePrinter::Print(NativeTraceParser::ParseString(printed, "p")), printed);
}

TEST(WorkloadFrontEndOps, ErrorsNameLineAndField)
{
    EXPECT_EQ(ErrorOf(kHead + "0 a load from=storage0\n"),
              "fe.trace:3: field 'bytes': missing: load needs bytes=SIZE");
    EXPECT_EQ(ErrorOf(kHead + "0 a load bytes=1MiB from=disk0\n"),
              "fe.trace:3: field 'from': expected a storage node like storage0, got 'disk0'");
    EXPECT_EQ(ErrorOf(kHead + "0 a load bytes=1MiB from=storage\n"),
              "fe.trace:3: field 'from': expected a storage node like storage0, got 'storage'");
    EXPECT_EQ(ErrorOf(kHead + "0 a load bytes=1MiB from=storage99999\n"),
              "fe.trace:3: field 'from': expected a storage node like storage0, got "
              "'storage99999'");
    EXPECT_EQ(ErrorOf(kHead + "0 a load bytes=1MiB to=storage0\n"),
              "fe.trace:3: field 'to': not allowed for load; it reads from=storageN");
    EXPECT_EQ(ErrorOf(kHead + "0 a checkpoint bytes=1MiB from=storage0\n"),
              "fe.trace:3: field 'from': not allowed for checkpoint; it writes to=storageN");
    EXPECT_EQ(ErrorOf(kHead + "0 a checkpoint bytes=-1 to=storage0\n"),
              "fe.trace:3: field 'bytes': expected a size like 64MiB (B, KiB, MiB, GiB, KB, MB, "
              "GB), got '-1'");
    EXPECT_EQ(ErrorOf(kHead + "group all 0-3\n0 a checkpoint bytes=1MiB group=all\n"),
              "fe.trace:4: field 'group': not allowed for checkpoint");
    EXPECT_EQ(ErrorOf(kHead + "0 a load bytes=1MiB time=1ms\n"),
              "fe.trace:3: field 'time': not allowed for load");
    EXPECT_EQ(ErrorOf(kHead + "0 a load bytes=1MiB algorithm=ring\n"),
              "fe.trace:3: field 'algorithm': only collectives have an algorithm");
    EXPECT_EQ(ErrorOf(kHead + "0 a loads bytes=1MiB\n"),
              "fe.trace:3: field 'op': expected compute, send, recv, sendrecv, allreduce, "
              "allgather, reducescatter, alltoall, broadcast, reduce, load or checkpoint, got "
              "'loads'");
}

// One 1 MB load on rank 3, then a compute that needs it: storage -> CPU (bottleneck: the
// 10 Gb/s storage link) and, once
// the batch is in host memory, CPU -> GPU over PCIe (10 Gb/s).  Expected: two transfers of
// 1 MB at 10 Gb/s x TCP efficiency (1448/1502) each, 0.830 ms, plus the compute; slow start
// and the handshakes cost a few round trips of microseconds: within 3 %.
TEST_F(FrontEndReplay, LoadGatesTheComputeThatNeedsIt)
{
    const uint64_t bytes = 1000000;
    const StudyResult r =
        Replay(Small(),
               kHead + "3 in load bytes=" + std::to_string(bytes) + "\n3 fwd compute time=1ms\n");
    const double stage_ns = bytes * 8 / (10e9 * kTcpEfficiency) * 1e9;
    EXPECT_NEAR(r.endNs, 2 * stage_ns + 1e6, 0.03 * 2 * stage_ns);
    EXPECT_EQ(r.breakdown.computeNs, 1000000u); // mean over the ranks that have ops: rank 3
    // The bytes crossed the storage link, rank 3's server link and its PCIe link.
    EXPECT_GE(r.planes.at("ethernet").txBytes, 2 * bytes);
    EXPECT_GE(r.planes.at("pcie").txBytes, bytes);
    EXPECT_LT(r.planes.at("pcie").txBytes, 1.1 * bytes);
    // The storage link was busy for one stage: peak utilisation = stage / run, within 3 %.
    EXPECT_NEAR(r.planes.at("ethernet").maxBusyUtil * r.simEndNs / stage_ns, 1.0, 0.03);
}

// A checkpoint in the compute's stream blocks it (sync); on another stream it only runs
// beside the compute (async): the sync run ends after checkpoint + compute, the async one
// after the longer of the two.
TEST_F(FrontEndReplay, SyncCheckpointBlocksAsyncOverlaps)
{
    const uint64_t bytes = 1000000;
    const double stage_ns = bytes * 8 / (10e9 * kTcpEfficiency) * 1e9;
    const std::string ck = "0 ck checkpoint bytes=" + std::to_string(bytes) + " to=storage0";
    const StudyResult sync = Replay(Small(), kHead + ck + "\n0 step compute time=2ms\n");
    EXPECT_NEAR(sync.endNs, 2 * stage_ns + 2e6, 0.03 * 2 * stage_ns);
    const StudyResult async = Replay(Small(), kHead + ck + " stream=1\n0 step compute time=2ms\n");
    EXPECT_EQ(async.endNs, 2000000u); // 1.66 ms of checkpoint hidden under 2 ms of compute
    // Exposed front-end time: all of the sync checkpoint, none of the async one.
    const auto fe = static_cast<std::size_t>(ParallelismKind::FrontEnd);
    EXPECT_NEAR(sync.breakdown.exposedByKindNs[fe], 2 * stage_ns, 0.03 * 2 * stage_ns);
    EXPECT_EQ(async.breakdown.exposedByKindNs[fe], 0u);
    EXPECT_EQ(async.breakdown.exposedByPlaneNs.at("ethernet"), 0u);
}

// A storage node the cluster does not have: the replay refuses to start.
TEST_F(FrontEndReplay, UnknownStorageIsRefused)
{
    ClusterHelper cluster(Small()); // one storage node
    ASSERT_EQ(cluster.TryBuild(), "");
    try
    {
        RunWorkloadStudy(
            cluster,
            NativeTraceParser::ParseString(kHead + "1 in load bytes=1MiB from=storage2\n", "fe"),
            "");
        FAIL() << "no error";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_EQ(std::string(e.what()),
                  "fe: rank 1 op 0 ('in'): storage2 does not exist (the front-end has 1 storage "
                  "node(s))");
    }
}

// cluster-replay's input check: a storage node the cluster lacks is an error naming the line.
TEST(WorkloadFrontEndOps, StorageBeyondTheClusterIsAnInputError)
{
    const WorkloadTrace t = NativeTraceParser::ParseString(
        kHead + "0 a compute time=1us\n1 in load bytes=1MiB from=storage2\n",
        "fe.trace");
    EXPECT_TRUE(t.HasFrontEndOps());
    EXPECT_NO_THROW(t.CheckStorageNodes(3));
    try
    {
        t.CheckStorageNodes(2);
        FAIL() << "no error";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(std::string(e.what()),
                  "fe.trace:4: field 'from': load 'in' names storage2 but the cluster has 2 "
                  "storage node(s)");
    }
}
