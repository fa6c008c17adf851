/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// GpuTransport over the NVLink and InfiniBand planes: per-GPU NVLink bandwidth and
// plane split, NDR goodput through a fat tree, ring allreduce against the alpha-beta
// model, NVLS against ring, a two-plane cluster and its flows rows.
#include "results-db-fixture.h"
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/collective-cost-model.h"
#include "ns3/collective-engine.h"
#include "ns3/config.h"
#include "ns3/gpu-transport.h"
#include "ns3/infiniband-helper.h"
#include "ns3/infiniband-link-preset.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/link-stripe.h"
#include "ns3/nvlink-fabric-preset.h"
#include "ns3/nvlink-helper.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/transport-packet-tag.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <sqlite3.h>

using namespace ns3;

namespace
{

constexpr uint64_t MiB = 1 << 20;

std::vector<uint32_t>
Ranks(uint32_t first, uint32_t n)
{
    std::vector<uint32_t> r;
    for (uint32_t i = 0; i < n; ++i)
    {
        r.push_back(first + i);
    }
    return r;
}

class TransportPlaneTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }

    // One NVLink domain of `preset` for ranks first..first+7.
    Ptr<NvLinkTransportPlane> NvLinkDomain(NvLinkHelper& helper,
                                           const std::string& preset,
                                           uint32_t first,
                                           Ptr<NvLinkTransportPlane> plane = nullptr)
    {
        helper.SetPreset(preset);
        NodeContainer gpus;
        gpus.Create(8);
        helper.Install(gpus);
        if (!plane)
        {
            plane = CreateObject<NvLinkTransportPlane>();
        }
        plane->AddDomain(helper.GetDomain(), Ranks(first, 8));
        return plane;
    }

    // Payload rate of GPU `gpu` over all its switch planes.
    static double GpuPayloadRateBps(NvLinkHelper& helper, uint32_t gpu)
    {
        double rateBitPerS = 0;
        for (uint32_t s = 0; s < helper.GetNSwitches(); ++s)
        {
            rateBitPerS += helper.GetGpuDevice(gpu, s)->GetPayloadRateBps();
        }
        return rateBitPerS;
    }

    // Sends `bytes` from src to dst now; returns the receiver completion time.
    static Time SendAndRun(Ptr<GpuTransport> transport, uint32_t src, uint32_t dst, uint64_t bytes)
    {
        Time done = Seconds(-1);
        transport->SendMessage(src,
                               dst,
                               bytes,
                               GpuTransport::DoneCallback(),
                               Callback<void>([&done]() { done = Simulator::Now(); }));
        Simulator::Run();
        return done;
    }

    static CollectiveResult RunAllReduce(Ptr<GpuTransport> transport,
                                         const std::string& algorithm,
                                         uint64_t bytes)
    {
        Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
        engine->SetTransport(transport);
        CollectiveSpec spec;
        spec.kind = "allreduce";
        spec.algorithm = algorithm;
        spec.ranks = Ranks(0, 8);
        spec.bytes = bytes;
        CollectiveResult result;
        engine->Start(spec, CollectiveEngine::DoneCallback([&result](const CollectiveResult& r) {
                          result = r;
                      }));
        Simulator::Run();
        return result;
    }
};

// Resolve is where a call's algorithm and its in-switch plane are found: auto on the 8
// GPUs of one dgx-h100 domain (at least NvlsMinRanks = 5) is nvls on plane 0, on 4 GPUs it
// is the ring (under TreeMinRanks); Start reports the same resolution it runs.
TEST_F(TransportPlaneTest, ResolveFindsTheInSwitchPlane)
{
    NvLinkHelper helper;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetTransport(transport);
    CollectiveCall call;
    call.kind = CollectiveKind::AllReduce;
    call.ranks = Ranks(0, 8);
    call.bytes = MiB;
    CollectiveResolution how = engine->Resolve(call);
    EXPECT_EQ(how.algorithm, CollectiveAlgorithm::Nvls);
    EXPECT_EQ(how.inSwitchPlane, 0);
    call.ranks = Ranks(0, 4);
    how = engine->Resolve(call);
    EXPECT_EQ(how.algorithm, CollectiveAlgorithm::Ring);
    EXPECT_EQ(how.inSwitchPlane, -1);
    call.algorithm = CollectiveAlgorithm::Nvls;
    CollectiveResolution started;
    bool done = false;
    engine->Start(call,
                  CollectiveEngine::DoneCallback([&done](const CollectiveResult& r) {
                      EXPECT_EQ(r.algorithm, "nvls");
                      done = true;
                  }),
                  -1,
                  &started);
    EXPECT_EQ(started.algorithm, CollectiveAlgorithm::Nvls);
    EXPECT_EQ(started.inSwitchPlane, 0);
    EXPECT_FALSE(done); // done comes in a later event, never within Start
    Simulator::Run();
    EXPECT_TRUE(done);
}

// 64 MiB GPU0 -> GPU1 on dgx-h100: the GPU sprays over its 18 links, so the message
// runs at 18 x 25 GB/s x 256/272 = 423.5 GB/s of payload (158.5 us); tolerance 2%
// (the fill latency is ~0.2 us).  Planes carry bytes 5:4:4:5 like the link counts, 2%.
TEST_F(TransportPlaneTest, NvLinkMessageAtPerGpuBandwidth)
{
    NvLinkHelper helper;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    EXPECT_EQ(plane->GetPlaneName(), "nvlink");
    EXPECT_EQ(plane->GetMaxPayloadBytes(), 4096u);
    EXPECT_EQ(plane->GetPacketOverheadBytes(), 16u * 16u); // 16 real packets x 16 B
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);

    double rateBitPerS = 0;
    uint32_t links = 0;
    for (uint32_t s = 0; s < helper.GetNSwitches(); ++s)
    {
        rateBitPerS += helper.GetGpuDevice(0, s)->GetPayloadRateBps();
        links += helper.GetGpuDevice(0, s)->GetLinks();
    }
    ASSERT_EQ(links, 18u);
    ASSERT_NEAR(rateBitPerS, 18 * 25e9 * 8 * 256.0 / 272.0, 1e-6 * rateBitPerS);

    const uint64_t bytes = 64 * MiB;
    const Time done = SendAndRun(transport, 0, 1, bytes);
    const double expected = bytes * 8.0 / rateBitPerS;
    std::cout << "[nvlink] 64 MiB sim_us=" << done.GetSeconds() * 1e6
              << " model_us=" << expected * 1e6 << "\n";
    EXPECT_NEAR(done.GetSeconds() / expected, 1.0, 0.02);
    EXPECT_EQ(transport->GetRxBytes(1), bytes);

    std::vector<double> planeBytes;
    double total = 0;
    for (uint32_t s = 0; s < 4; ++s)
    {
        planeBytes.push_back(helper.GetGpuDevice(0, s)->GetCounters().txBytes);
        total += planeBytes.back();
    }
    const double weights[] = {5, 4, 4, 5};
    for (uint32_t s = 0; s < 4; ++s)
    {
        EXPECT_NEAR(planeBytes[s] / total, weights[s] / 18.0, 0.02 * weights[s] / 18.0)
            << "plane " << s;
    }
}

// GPU 0 sends 32 MiB to GPU 1 and 32 MiB to GPU 2 through the transport: the two
// messages take turns on the GPU packet by packet (GpuTransport's round-robin; the
// GPU itself only sprays packets), so both end together at 64 MiB / 423.5 GB/s =
// 158.5 us (each within 2%).  Device queues of 32 KiB (8 packets; the helper's 1 MiB
// would give the message that starts first a 4 MiB head start) still keep the links
// busy.  Fine packets (MinPacketsPerMessage 0): the turns are per packet, not per byte.
TEST_F(TransportPlaneTest, NvLinkTransportSharesGpuBetweenMessages)
{
    NvLinkHelper helper;
    helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(32 * 1024));
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->SetAttribute("MinPacketsPerMessage", UintegerValue(0));
    transport->AddPlane(plane);
    const double rateBitPerS = GpuPayloadRateBps(helper, 0);
    const uint64_t bytes = 32 * MiB;
    Time otherDone = Seconds(-1);
    transport->SendMessage(0,
                           2,
                           bytes,
                           GpuTransport::DoneCallback(),
                           Callback<void>([&otherDone]() { otherDone = Simulator::Now(); }));
    const Time firstDone = SendAndRun(transport, 0, 1, bytes);
    const double expected = 2 * bytes * 8.0 / rateBitPerS;
    std::cout << "[nvlink] shared GPU to_1_us=" << firstDone.GetSeconds() * 1e6
              << " to_2_us=" << otherDone.GetSeconds() * 1e6 << " model_us=" << expected * 1e6
              << "\n";
    EXPECT_NEAR(firstDone.GetSeconds() / expected, 1.0, 0.02);
    EXPECT_NEAR(otherDone.GetSeconds() / expected, 1.0, 0.02);
}

// GPU 0 sends 32 MiB to GPU 7 through the transport while GPUs 0-6 run a 32 MiB NVLS
// allreduce: GPU 0's uplinks carry both, and NvLinkGpu alternates them packet by
// packet (4 KiB packets on both sides: NvlsMinPackets and MinPacketsPerMessage 0).
// The allreduce starts first and fills GPU 0's device queues before the message's
// first turn: the 5-link planes' 1 MiB TxQueueBytes, the 4-link ones 4/5 of it (the
// spray's 5:4:4:5), H = 3.6 MiB.  From then on each gets half of the 423.5 GB/s, so
// the allreduce ends at (2S - H) / 423.5 GB/s = 149.5 us (GPU 0's contributions come
// last; GPU 7, outside the group, receives only the message) and the message at
// 2S / 423.5 GB/s = 158.5 us; each within 2% (pipeline fill and the multicast's
// return are under 1 us).  Every chunk of the allreduce is issued at once
// (NvlsChunksInFlight 256): with NCCL's window of 16 the GPU runs out of NVLS packets
// while a window is reduced and its queues fill with the message's packets.
TEST_F(TransportPlaneTest, NvLinkTransportAlternatesWithNvlsOnOneGpu)
{
    NvLinkHelper helper;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    plane->SetAttribute("NvlsChunksInFlight", UintegerValue(256));
    plane->SetAttribute("NvlsMinPackets", UintegerValue(0));
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->SetAttribute("MinPacketsPerMessage", UintegerValue(0));
    transport->AddPlane(plane);
    ASSERT_EQ(plane->GetMaxPayloadBytes(), 4096u);
    const double rateBitPerS = GpuPayloadRateBps(helper, 0);
    const uint64_t bytes = 32 * MiB;
    Time nvlsDone = Seconds(-1);
    uint32_t ranksDone = 0;
    plane->StartInSwitch(InSwitchReductionPlane::Op::AllReduce,
                         Ranks(0, 7),
                         bytes,
                         Callback<void, uint32_t>([&nvlsDone, &ranksDone](uint32_t) {
                             nvlsDone = Simulator::Now();
                             ++ranksDone;
                         }));
    const Time messageDone = SendAndRun(transport, 0, 7, bytes);
    ASSERT_EQ(ranksDone, 7u);
    const double expected = 2 * bytes * 8.0 / rateBitPerS;
    const double headStartBytes = (1 + 0.8 + 0.8 + 1) * MiB;
    const double nvlsExpected = (2 * bytes - headStartBytes) * 8.0 / rateBitPerS;
    std::cout << "[nvlink] nvls+message nvls_us=" << nvlsDone.GetSeconds() * 1e6
              << " model_us=" << nvlsExpected * 1e6
              << " message_us=" << messageDone.GetSeconds() * 1e6 << " model_us=" << expected * 1e6
              << "\n";
    EXPECT_NEAR(nvlsDone.GetSeconds() / nvlsExpected, 1.0, 0.02);
    EXPECT_NEAR(messageDone.GetSeconds() / expected, 1.0, 0.02);
}

// 64 MiB between hosts 0 and 7 of a radix-4 leaf/spine NDR fat tree (8 hosts, 4
// leaves, 2 spines: 4 links): one RC SEND ONLY per 4096 B, 26 B of LRH+BTH+ICRC+VCRC,
// so goodput = 400 Gb/s x 4096/4122 = 397.5 Gb/s and 1.3506 ms; tolerance 1%.  The
// transport sends bursts of MaxBurstPackets 4 (16 KiB), each charged 4 x 26 B.
TEST_F(TransportPlaneTest, InfinibandMessageAtNdrGoodput)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("NDR"));
    ib.SetDeviceAttribute("IbMtu", UintegerValue(4096));
    InfinibandFabric fabric = ib.BuildFatTree(4, 8, 1.0);
    ASSERT_EQ(fabric.switches.GetN(), 6u);
    Ptr<InfinibandTransportPlane> plane = CreateObject<InfinibandTransportPlane>();
    plane->AddHosts(fabric, Ranks(0, 8));
    EXPECT_EQ(plane->GetPlaneName(), "infiniband");
    EXPECT_EQ(plane->GetMaxPayloadBytes(), 4096u);
    EXPECT_EQ(plane->GetPacketOverheadBytes(), 26u);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);

    const uint64_t bytes = 64 * MiB;
    const Time done = SendAndRun(transport, 0, 7, bytes);
    const double dataBps = InfinibandGetLinkPreset("NDR").GetDataRateBps();
    ASSERT_NEAR(dataBps, 400e9, 1e3);
    const double expected = bytes * 8.0 / (dataBps * 4096.0 / 4122.0);
    std::cout << "[infiniband] 64 MiB sim_us=" << done.GetSeconds() * 1e6
              << " model_us=" << expected * 1e6 << "\n";
    EXPECT_NEAR(done.GetSeconds() / expected, 1.0, 0.01);
    EXPECT_EQ(transport->GetRxBytes(7), bytes);
    Ptr<InfinibandNetDevice> src = fabric.GetHostDevice(0);
    EXPECT_EQ(src->GetCounters().txPackets, bytes / 16384);
    EXPECT_EQ(src->GetCounters().txBytes, bytes / 16384 * (16384 + 26));
    // Busy time = wire time of 4096 real packets of 4122 B (and the credit frames seen).
    const double wireBytes = bytes / 4096 * 4122.0;
    EXPECT_NEAR(src->GetCounters().busyTime.GetSeconds(),
                wireBytes * 8 / dataBps,
                1e-3 * wireBytes * 8 / dataBps);
    EXPECT_EQ(fabric.GetHostDevice(7)->GetIbCounters().misdelivered, 0u);
}

// Ranks 0, 1 share host 0's HCA and ranks 2, 3 host 1's, on one NDR switch: 0->2 and
// 1->3 (4 MiB each) split the port, so both end at 8 MiB / (400 Gb/s x 4096/4122) =
// 168.8 us (2%); a TxReady that woke only one rank of the HCA would stall the other.
TEST_F(TransportPlaneTest, InfinibandRanksShareAnHca)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("NDR"));
    InfinibandFabric fabric = ib.BuildFatTree(4, 2, 1.0);
    Ptr<InfinibandTransportPlane> plane = CreateObject<InfinibandTransportPlane>();
    plane->AddRank(0, fabric.GetHostDevice(0));
    plane->AddRank(1, fabric.GetHostDevice(0));
    plane->AddRank(2, fabric.GetHostDevice(1));
    plane->AddRank(3, fabric.GetHostDevice(1));
    EXPECT_EQ(plane->GetNodeId(0), plane->GetNodeId(1));
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    const uint64_t bytes = 4 * MiB;
    Time done[2] = {Seconds(-1), Seconds(-1)};
    for (uint32_t i = 0; i < 2; ++i)
    {
        transport->SendMessage(i,
                               2 + i,
                               bytes,
                               GpuTransport::DoneCallback(),
                               Callback<void>([&done, i]() { done[i] = Simulator::Now(); }));
    }
    Simulator::Run();
    const double expected =
        2 * bytes * 8.0 / (InfinibandGetLinkPreset("NDR").GetDataRateBps() * 4096.0 / 4122.0);
    for (uint32_t i = 0; i < 2; ++i)
    {
        EXPECT_NEAR(done[i].GetSeconds() / expected, 1.0, 0.02) << "rank " << i;
        EXPECT_EQ(transport->GetRxBytes(2 + i), bytes);
    }
}

// Ring and NVLS allreduce of 256 MiB on the 8 GPUs of a dgx-h100 (256 MiB, not
// 1 GiB, keeps the unit test to seconds; the ratio does not depend on the size here).
// Ring: the alpha-beta model with β from the per-GPU NVLink (18 links, 4096 B payload
// + 256 B of headers per packet) and α = 2 x 5 ns cable + 100 ns NVSwitch + the
// serialisation of its 16-byte header (cut-through): 2(p−1)α + 2(p−1)/p nβ = 1110.7 us;
// tolerance 3%.
// NVLS: each rank sends n up and receives n down at once, ≈ nβ = 634 us, so it must
// beat the ring by more than 1.2x (NCCL's nvls/ring ratio on H100 is ~1.6-1.8).
TEST_F(TransportPlaneTest, NvLinkRingMatchesModelAndNvlsBeatsRing)
{
    NvLinkHelper helper;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    ASSERT_TRUE(plane->CanReduceInSwitch(Ranks(0, 8)));

    uint64_t signallingBps = 0;
    for (uint32_t s = 0; s < helper.GetNSwitches(); ++s)
    {
        signallingBps += helper.GetGpuDevice(0, s)->GetClock().GetSignallingRate().GetBitRate();
    }
    const double efficiency = helper.GetGpuDevice(0, 0)->GetClock().GetEncodingEfficiency();
    TimeValue cable;
    helper.GetGpuDevice(0, 0)->GetChannel()->GetAttribute("Delay", cable);
    TimeValue switchLatency;
    helper.GetSwitch(0)->GetAttribute("TraversalLatency", switchLatency);
    const CollectiveCostModel model =
        CollectiveCostModel::FromLink(DataRate(signallingBps),
                                      efficiency,
                                      plane->GetMaxPayloadBytes(),
                                      plane->GetPacketOverheadBytes(),
                                      plane->GetSoftwareLatency(),
                                      2,
                                      cable.Get(),
                                      switchLatency.Get(),
                                      helper.GetSwitch(0)->GetCutThroughBytes());
    const uint64_t n = 256 * MiB;
    const CollectiveResult ring = RunAllReduce(transport, "ring", n);
    ASSERT_EQ(ring.algorithm, "ring");
    const double ringSim = (ring.end - ring.start).GetSeconds();
    const double ringModel = model.RingAllReduce(8, n);
    std::cout << "[nvlink] ring allreduce 256 MiB sim_us=" << ringSim * 1e6
              << " model_us=" << ringModel * 1e6 << " busbw_gbyte_per_s=" << ring.busbw_gbyte_per_s
              << "\n";
    EXPECT_NEAR(ringSim / ringModel, 1.0, 0.03);

    const CollectiveResult nvls = RunAllReduce(transport, "nvls", n);
    ASSERT_EQ(nvls.algorithm, "nvls");
    const double nvlsSim = (nvls.end - nvls.start).GetSeconds();
    std::cout << "[nvlink] nvls allreduce 256 MiB sim_us=" << nvlsSim * 1e6
              << " ring/nvls=" << ringSim / nvlsSim
              << " busbw_gbyte_per_s=" << nvls.busbw_gbyte_per_s << "\n";
    EXPECT_GT(ringSim / nvlsSim, 1.2);
    // Every packet chunk was reduced once, in one of the four switches: 256 MiB per
    // member / NvlsMinPackets 256 = 1 MiB, capped at MaxBurstBytes 64 KiB.
    uint64_t reduced = 0;
    for (uint32_t s = 0; s < helper.GetNSwitches(); ++s)
    {
        reduced += helper.GetSwitch(s)->GetNvlsReducedChunks();
        EXPECT_EQ(helper.GetSwitch(s)->GetNvlsPendingChunks(), 0u);
    }
    EXPECT_EQ(reduced, n / (64 * 1024));
    EXPECT_EQ(plane->GetNvlsInFlight(), 0u);
}

// NVLS needs one gen3+ domain and more than one distinct rank.
TEST_F(TransportPlaneTest, NvlsCapability)
{
    NvLinkHelper h100a;
    NvLinkHelper h100b;
    NvLinkHelper a100;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(h100a, "dgx-h100", 0);
    NvLinkDomain(h100b, "dgx-h100", 8, plane);
    Ptr<NvLinkTransportPlane> old = NvLinkDomain(a100, "dgx-a100", 0);
    EXPECT_TRUE(plane->CanReduceInSwitch({0, 1}));
    EXPECT_TRUE(plane->CanReduceInSwitch(Ranks(8, 8)));
    EXPECT_FALSE(plane->CanReduceInSwitch({3}));
    EXPECT_FALSE(plane->CanReduceInSwitch({0, 0}));
    EXPECT_FALSE(plane->CanReduceInSwitch({7, 8}));    // two domains
    EXPECT_FALSE(plane->CanReduceInSwitch({0, 16}));   // no rank 16
    EXPECT_FALSE(old->CanReduceInSwitch(Ranks(0, 8))); // NVSwitch gen2
    EXPECT_TRUE(plane->CanReach(0, 7));
    EXPECT_FALSE(plane->CanReach(7, 8));
    EXPECT_FALSE(plane->CanReach(3, 3));
}

// Two dgx-h100 servers (ranks 0-7, 8-15) and one NDR HCA per GPU on a radix-8 fat
// tree: pairs inside a server go to the NVLink plane, across servers to InfiniBand.
// 0->1 (8 MiB) must use only GPU 0's NVLink devices and 0->9 (8 MiB) only HCA 0,
// each completing near its own plane's rate (5%: both start together and share
// nothing); every message is a flows row with its plane's name.
TEST_F(TransportPlaneTest, TwoPlanesRouteEachPairAndReportFlows)
{
    NvLinkHelper server0;
    NvLinkHelper server1;
    Ptr<NvLinkTransportPlane> nvlink = NvLinkDomain(server0, "dgx-h100", 0);
    NvLinkDomain(server1, "dgx-h100", 8, nvlink);
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("NDR"));
    InfinibandFabric fabric = ib.BuildFatTree(8, 16, 1.0);
    Ptr<InfinibandTransportPlane> infiniband = CreateObject<InfinibandTransportPlane>();
    infiniband->SetAttribute("ServiceLevel", UintegerValue(3));
    infiniband->AddHosts(fabric, Ranks(0, 16));
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    const uint32_t nvIndex = transport->AddPlane(nvlink);
    const uint32_t ibIndex = transport->AddPlane(infiniband);
    EXPECT_EQ(transport->SelectPlane(0, 1), static_cast<int32_t>(nvIndex));
    EXPECT_EQ(transport->SelectPlane(9, 15), static_cast<int32_t>(nvIndex));
    EXPECT_EQ(transport->SelectPlane(0, 9), static_cast<int32_t>(ibIndex));
    EXPECT_EQ(transport->SelectPlane(15, 2), static_cast<int32_t>(ibIndex));

    const test_util::ScratchDir scratch("planes");
    const std::string path = scratch.File("results.db");
    Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
    db->Open(path);
    db->BeginRun("transport-planes", "transport-planes-test", 1, "{}");
    transport->SetResultsDatabase(db);

    const uint64_t bytes = 8 * MiB;
    Time nvDone = Seconds(-1);
    Time ibDone = Seconds(-1);
    Time backDone = Seconds(-1);
    auto at = [](Time* t) { return Callback<void>([t]() { *t = Simulator::Now(); }); };
    transport->SendMessage(0, 1, bytes, GpuTransport::DoneCallback(), at(&nvDone));
    transport->SendMessage(0, 9, bytes, GpuTransport::DoneCallback(), at(&ibDone));
    transport->SendMessage(12, 3, MiB, GpuTransport::DoneCallback(), at(&backDone));
    Simulator::Run();
    ASSERT_GT(nvDone, Time(0));
    ASSERT_GT(ibDone, Time(0));
    ASSERT_GT(backDone, Time(0));

    double nvRate = 0;
    uint64_t nvTx = 0;
    for (uint32_t s = 0; s < 4; ++s)
    {
        nvRate += server0.GetGpuDevice(0, s)->GetPayloadRateBps();
        nvTx += server0.GetGpuDevice(0, s)->GetCounters().txBytes;
    }
    // 8 MiB striped over the 5/4/4/5-link planes: the 5-link planes' 2330168 B in rounds
    // of at most MaxBurstBytes 64 KiB, 36 rounds of 4 packets, each with a 16 B
    // NvLinkHeader; nothing else left GPU 0 on NVLink.  InfiniBand: 512 bursts of
    // MaxBurstPackets 4 x 4096 B with one LRH/BTH/ICRC/VCRC each.
    EXPECT_EQ(nvTx, bytes + 36 * 4 * 16);
    EXPECT_EQ(fabric.GetHostDevice(0)->GetCounters().txBytes, bytes / 16384 * (16384 + 26));
    EXPECT_EQ(fabric.GetHostDevice(1)->GetCounters().txPackets, 0u);
    EXPECT_NEAR(nvDone.GetSeconds() / (bytes * 8.0 / nvRate), 1.0, 0.05);
    const double ibRate = InfinibandGetLinkPreset("NDR").GetDataRateBps() * 4096.0 / 4122.0;
    EXPECT_NEAR(ibDone.GetSeconds() / (bytes * 8.0 / ibRate), 1.0, 0.05);
    EXPECT_EQ(transport->GetRxBytes(9), bytes);
    EXPECT_EQ(transport->GetRxBytes(3), MiB);

    db->EndRun("complete", Simulator::Now());
    db->Close();
    results_db_test::Reader reader(path);
    auto scalar = [&reader](const std::string& sql) { return reader.Real(sql); };
    EXPECT_EQ(scalar("SELECT count(*) FROM flows"), 3);
    EXPECT_EQ(scalar("SELECT count(*) FROM flows WHERE plane='nvlink' AND src_rank=0 AND "
                     "dst_rank=1 AND end_ns IS NOT NULL AND packets=144"),
              1);
    EXPECT_EQ(scalar("SELECT count(*) FROM flows WHERE plane='infiniband' AND src_rank=0 AND "
                     "dst_rank=9 AND end_ns IS NOT NULL AND packets=512"),
              1);
    EXPECT_EQ(scalar("SELECT count(*) FROM flows WHERE plane='infiniband' AND src_rank=12 AND "
                     "dst_rank=3"),
              1);
    // The NVLink row names the GPU nodes, the InfiniBand row the HCA nodes.
    EXPECT_EQ(scalar("SELECT src_node FROM flows WHERE src_rank=0 AND dst_rank=1"),
              static_cast<double>(nvlink->GetNodeId(0)));
    EXPECT_EQ(scalar("SELECT dst_node FROM flows WHERE src_rank=0 AND dst_rank=9"),
              static_cast<double>(fabric.hosts.Get(9)->GetId()));
}

// AdaptivePacketBytes: ceil(bytes / minPackets) rounded up to whole fine units, within
// [fine, burst rounded down to fine units]; exact integers.
TEST(AdaptivePacketBytes, AnalyticalSizes)
{
    EXPECT_EQ(AdaptivePacketBytes(1ULL << 30, 4096, 65536, 32), 65536u); // capped
    EXPECT_EQ(AdaptivePacketBytes(512 * 1024, 4096, 65536, 32), 16384u); // 16 KiB
    EXPECT_EQ(AdaptivePacketBytes(128 * 1024, 4096, 65536, 32), 4096u);  // fine
    EXPECT_EQ(AdaptivePacketBytes(1000, 4096, 65536, 32), 4096u);        // small
    EXPECT_EQ(AdaptivePacketBytes(0, 4096, 65536, 32), 4096u);
    EXPECT_EQ(AdaptivePacketBytes(MiB + 1, 4096, 65536, 32), 36864u);    // 32769 -> 9 units
    EXPECT_EQ(AdaptivePacketBytes(1ULL << 30, 4096, 65536, 0), 4096u);   // off
    EXPECT_EQ(AdaptivePacketBytes(1ULL << 30, 4096, 70000, 32), 69632u); // 17 units
    EXPECT_EQ(AdaptivePacketBytes(1ULL << 30, 4096, 1000, 32), 4096u);   // burst < fine
}

// A transfer striped over 5/4/4/5 links (dgx-h100's switch planes, 18 in all): lane i
// takes floor(B x links before and with it / 18) less the lanes before (the last the
// rest), cut into the rounds that keep every packet within the burst; exact integers.
TEST(StripePacketBytes, AnalyticalSizes)
{
    const std::vector<uint32_t> links{5, 4, 4, 5};
    const uint64_t bytes = MiB + 5;                         // shares 291272, 233018, 233018, 291273
    EXPECT_EQ(StripeRounds(bytes, links, 18, 65536), 5u);   // ceil(291273 / 65536)
    EXPECT_EQ(StripeRounds(bytes, links, 18, 1 << 20), 1u); // every share fits one burst
    EXPECT_EQ(StripeRounds(0, links, 18, 65536), 1u);       // at least one round
    const uint64_t shares[] = {291272, 233018, 233018, 291273};
    uint64_t total = 0;
    for (uint32_t lane = 0; lane < 4; ++lane)
    {
        uint64_t laneBytes = 0;
        for (uint32_t round = 0; round < 5; ++round)
        {
            const uint32_t b = StripePacketBytes(bytes, links, 18, 5, round * 4 + lane);
            EXPECT_LE(b, 65536u);
            // Rounds differ by at most a byte: share x (r + 1) / 5 - share x r / 5.
            EXPECT_GE(b, shares[lane] / 5);
            EXPECT_LE(b, shares[lane] / 5 + 1);
            laneBytes += b;
        }
        EXPECT_EQ(laneBytes, shares[lane]);
        total += laneBytes;
    }
    EXPECT_EQ(total, bytes);
    EXPECT_EQ(StripePacketBytes(bytes, links, 18, 1, 3), 291273u);
}

// 1 MiB + 5 B from GPU 0 to GPU 1 of a dgx-h100, striped (the plane's default): 5 rounds
// of one packet per switch plane, 20 packets, each plane carrying exactly its links' share
// (StripePacketBytes) plus a 16 B NvLinkHeader per packet; the flows row says 20.  And
// 64 MiB striped completes at bytes / the GPU's payload rate within 2 % (as sprayed 4 KiB
// packets do: NvLinkMessageAtPerGpuBandwidth), in 4 x 285 packets instead of 16384.
TEST_F(TransportPlaneTest, StripedMessageGoesOnePacketPerPlaneByLinks)
{
    {
        NvLinkHelper helper;
        Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
        Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
        transport->AddPlane(plane);
        const uint64_t bytes = MiB + 5;
        ASSERT_GT(SendAndRun(transport, 0, 1, bytes), Time(0));
        const uint64_t shares[] = {291272, 233018, 233018, 291273};
        uint64_t packets = 0;
        for (uint32_t s = 0; s < 4; ++s)
        {
            const auto& c = helper.GetGpuDevice(0, s)->GetCounters();
            EXPECT_EQ(c.txPackets, 5u) << "plane " << s;
            EXPECT_EQ(c.txBytes, shares[s] + 5 * 16) << "plane " << s;
            packets += c.txPackets;
        }
        EXPECT_EQ(packets, 20u);
        EXPECT_EQ(transport->GetRxBytes(1), bytes);
        Simulator::Destroy();
    }
    NvLinkHelper helper;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    const uint64_t bytes = 64 * MiB;
    const Time done = SendAndRun(transport, 0, 1, bytes);
    const double expected = bytes * 8.0 / GpuPayloadRateBps(helper, 0);
    std::cout << "[nvlink] 64 MiB striped sim_us=" << done.GetSeconds() * 1e6
              << " model_us=" << expected * 1e6 << "\n";
    EXPECT_NEAR(done.GetSeconds() / expected, 1.0, 0.02);
    uint64_t packets = 0;
    for (uint32_t s = 0; s < 4; ++s)
    {
        packets += helper.GetGpuDevice(0, s)->GetCounters().txPackets;
    }
    EXPECT_EQ(packets, 4u * 285u); // ceil(64 MiB x 5 / 18 / 64 KiB) = 285 rounds
}

// Two GPUs each send B = 16 MiB to GPU 1 and B to another GPU (0 -> 1, 0 -> 2; 3 -> 1,
// 3 -> 4), all at once.  Striped, every message is on all four planes by their links:
// GPU 1 takes 2B at its 423.5 GB/s payload rate and every sender sends 2B at the same
// rate, so all four end at 2B / 423.5 GB/s = 79.2 us (within 2 %).  Sprayed, a sender's
// two messages take alternate slots of its 18-packet 5:4:4:5 cycle (0 3 1 2 0 3 1 2 ...),
// so each lands on two planes only, 9 of 18 links: both messages to GPU 1 on planes 0 and 1
// (the first pair of each sender), which carry 2B into GPU 1 at half its rate while planes 2
// and 3 into it idle: 4B / rate = 158.5 us if it stayed so, less once the other messages
// end and the cycle is theirs alone (measured 140.5 us, 1.77x), so between 1.5x and 2x.
TEST_F(TransportPlaneTest, StripingKeepsEveryMessageOnEveryPlane)
{
    Time done[2][2];
    for (uint32_t striped = 0; striped < 2; ++striped)
    {
        NvLinkHelper helper;
        Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
        plane->SetAttribute("StripeMessages", BooleanValue(striped == 1));
        Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
        transport->AddPlane(plane);
        const uint64_t bytes = 16 * MiB;
        const double rateBitPerS = GpuPayloadRateBps(helper, 1);
        Time toOne[2];
        Time other[2];
        const uint32_t senders[2] = {0, 3};
        const uint32_t others[2] = {2, 4};
        for (uint32_t i = 0; i < 2; ++i)
        {
            transport->SendMessage(senders[i],
                                   1,
                                   bytes,
                                   GpuTransport::DoneCallback(),
                                   Callback<void>([&toOne, i]() { toOne[i] = Simulator::Now(); }));
            transport->SendMessage(senders[i],
                                   others[i],
                                   bytes,
                                   GpuTransport::DoneCallback(),
                                   Callback<void>([&other, i]() { other[i] = Simulator::Now(); }));
        }
        Simulator::Run();
        const double expected_s = 2 * bytes * 8.0 / rateBitPerS;
        const Time last = std::max(toOne[0], toOne[1]);
        std::cout << "[nvlink] two senders into GPU 1, " << (striped ? "striped" : "sprayed")
                  << ": to_1_us=" << last.GetSeconds() * 1e6
                  << " others_us=" << std::max(other[0], other[1]).GetSeconds() * 1e6
                  << " model_us=" << expected_s * 1e6 << "\n";
        done[striped][0] = last;
        done[striped][1] = std::max(other[0], other[1]);
        if (striped)
        {
            EXPECT_NEAR(last.GetSeconds() / expected_s, 1.0, 0.02);
            EXPECT_NEAR(done[1][1].GetSeconds() / expected_s, 1.0, 0.02);
        }
        else
        {
            EXPECT_GT(last.GetSeconds() / expected_s, 1.5);
            EXPECT_LT(last.GetSeconds() / expected_s, 2.0);
        }
        Simulator::Destroy();
    }
}

// GPUs 0 and 1 joined by two direct bundles of 2 and 1 NVLink4 links, no switch: a message
// is striped over the bundles, 2/3 and 1/3 of it, each lane at its links' payload rate
// (2 and 1 x 25 GB/s x 256/272), so 3 MiB ends at 3 MiB / (3 x 23.53 GB/s) = 44.6 us, within
// 2 %, both bundles busy to the end.
TEST_F(TransportPlaneTest, StripedOverDirectBundles)
{
    NvLinkFabricSpec spec;
    spec.generation = 4;
    spec.directLinks = {{0, 1, 2}, {0, 1, 1}};
    NvLinkHelper helper;
    helper.SetFabric(spec);
    NodeContainer gpus;
    gpus.Create(2);
    helper.Install(gpus);
    Ptr<NvLinkTransportPlane> plane = CreateObject<NvLinkTransportPlane>();
    plane->AddDomain(helper.GetDomain(), Ranks(0, 2));
    ASSERT_EQ(plane->GetStripeLinks(0, 1), (std::vector<uint32_t>{2, 1}));
    const double linkRate_gbyte_per_s = 25.0 * 256.0 / 272.0;
    EXPECT_NEAR(plane->GetStripeLaneRate_gbyte_per_s(0, 1, 0), 2 * linkRate_gbyte_per_s, 1e-6);
    EXPECT_NEAR(plane->GetStripeLaneRate_gbyte_per_s(0, 1, 1), linkRate_gbyte_per_s, 1e-6);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    const uint64_t bytes = 3 * MiB;
    const Time done = SendAndRun(transport, 0, 1, bytes);
    const double expected_s = bytes / (3 * linkRate_gbyte_per_s * 1e9);
    std::cout << "[nvlink] 3 MiB over 2 + 1 direct links sim_us=" << done.GetSeconds() * 1e6
              << " model_us=" << expected_s * 1e6 << "\n";
    EXPECT_NEAR(done.GetSeconds() / expected_s, 1.0, 0.02);
    const Ptr<NvLinkGpu> gpu = helper.GetGpu(0);
    const auto& lanes = gpu->GetStripeDevices(1);
    ASSERT_EQ(lanes.size(), 2u);
    const uint64_t laneBytes[] = {gpu->GetDevice(lanes[0])->GetCounters().txBytes,
                                  gpu->GetDevice(lanes[1])->GetCounters().txBytes};
    // Payload 2 MiB and 1 MiB plus a 16 B NvLinkHeader per packet (rounds of 64 KiB: 32).
    EXPECT_EQ(laneBytes[0], 2 * MiB + 32 * 16);
    EXPECT_EQ(laneBytes[1], MiB + 32 * 16);
}

// A receiving channel slower than the wire takes a message from its first byte: 1 MiB
// from GPU 0 to GPU 1 at a channel rate of 100 GB/s completes at the path's latency
// (that of a 64 B message) + 1 MiB / 100 GB/s = 10.49 us after it, within 0.5 %.  The
// striped message goes in 5 rounds, its first packets 58254 B on a 5-link plane and
// 46603 B on a 4-link one, 0.495 us each: taking the message from the first packet's tail
// would be 4.7 % late (measured).
TEST_F(TransportPlaneTest, ChannelTakesAStripedMessageFromItsFirstByte)
{
    NvLinkHelper helper;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    const Time path = SendAndRun(transport, 0, 1, 64);
    ASSERT_GT(path, Time(0));
    const Time start = Simulator::Now();
    Time done = Seconds(-1);
    const uint64_t bytes = MiB;
    transport->SendMessage(0,
                           1,
                           bytes,
                           GpuTransport::DoneCallback(),
                           Callback<void>([&done]() { done = Simulator::Now(); }),
                           0,
                           -1,
                           0,
                           0,
                           Time(0),
                           DataRate("800Gbps"));
    Simulator::Run();
    const double expected_s = path.GetSeconds() + bytes * 8.0 / 800e9;
    std::cout << "[nvlink] channel-bound striped sim_us=" << (done - start).GetSeconds() * 1e6
              << " model_us=" << expected_s * 1e6 << "\n";
    EXPECT_NEAR((done - start).GetSeconds() / expected_s, 1.0, 0.005);
}

// 1 MiB + 5 B over NVLink with MinPacketsPerMessage 32, not striped: packets of 36 KiB
// (9 units of 4 KiB), so ceil((MiB + 5) / 36864) = 29 packets: 28 full and one of
// 28677 B, each with a 16 B NvLinkHeader; the flows row says 29 and every byte arrives.
TEST_F(TransportPlaneTest, MessageCutIntoAdaptivePackets)
{
    NvLinkHelper helper;
    Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
    plane->SetAttribute("StripeMessages", BooleanValue(false));
    EXPECT_EQ(plane->GetMaxBurstBytes(), 65536u);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    const uint64_t bytes = MiB + 5;
    ASSERT_GT(SendAndRun(transport, 0, 1, bytes), Time(0));
    uint64_t packets = 0;
    uint64_t txBytes = 0;
    for (uint32_t s = 0; s < helper.GetNSwitches(); ++s)
    {
        packets += helper.GetGpuDevice(0, s)->GetCounters().txPackets;
        txBytes += helper.GetGpuDevice(0, s)->GetCounters().txBytes;
    }
    EXPECT_EQ(packets, 29u);
    EXPECT_EQ(txBytes, bytes + 29 * 16);
    EXPECT_EQ(transport->GetRxBytes(1), bytes);
}

// A message of 128 KiB (32 fine packets, not striped) is not burst: same packets and the
// same completion time, to the picosecond, with MinPacketsPerMessage 32 and 0.
TEST_F(TransportPlaneTest, SmallMessagesKeepFinePackets)
{
    Time done[2];
    uint64_t packets[2] = {0, 0};
    for (uint32_t off = 0; off < 2; ++off)
    {
        NvLinkHelper helper;
        Ptr<NvLinkTransportPlane> plane = NvLinkDomain(helper, "dgx-h100", 0);
        plane->SetAttribute("StripeMessages", BooleanValue(false));
        Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
        transport->SetAttribute("MinPacketsPerMessage", UintegerValue(off ? 0 : 32));
        transport->AddPlane(plane);
        done[off] = SendAndRun(transport, 0, 1, 128 * 1024);
        for (uint32_t s = 0; s < helper.GetNSwitches(); ++s)
        {
            packets[off] += helper.GetGpuDevice(0, s)->GetCounters().txPackets;
        }
        Simulator::Destroy();
    }
    EXPECT_EQ(packets[0], 32u);
    EXPECT_EQ(packets[1], 32u);
    EXPECT_EQ(done[0], done[1]);
}

// One IB burst of 3 x 4096 + 100 B payload (MaxBurstPackets 4) from host 0 to host 1
// through one NDR switch: the wire carries 4 real packets, 3 x (4096 + 26) + (100 + 26)
// = 12492 B, so the HCA is busy 12492 x 8 / 400 Gb/s = 249.84 ns (to 1 ns, the time
// resolution; one header for the whole burst would give 248.28 ns); the
// burst splits into 4 SEND ONLY packets with PSNs 0..3 and their own PktLen and pad
// (100 is a multiple of 4: none), and the next packet's PSN is 4.
TEST_F(TransportPlaneTest, InfinibandBurstChargesEveryRealPacket)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("NDR"));
    InfinibandFabric fabric = ib.BuildFatTree(4, 2, 1.0);
    Ptr<InfinibandNetDevice> src = fabric.GetHostDevice(0);
    Ptr<InfinibandNetDevice> dst = fabric.GetHostDevice(1);
    EXPECT_EQ(src->GetMaxBurstPackets(), 4u);
    std::vector<Ptr<Packet>> sent;
    src->TraceConnectWithoutContext(
        "TxBegin",
        Callback<void, Ptr<const Packet>, uint32_t>(
            [&sent](Ptr<const Packet> p, uint32_t) { sent.push_back(p->Copy()); }));
    std::vector<uint32_t> received;
    dst->SetPacketReceivedCallback(
        0x4754,
        InfinibandNetDevice::PacketReceivedCallback(
            [&received](uint16_t, Ptr<Packet> p) { received.push_back(p->GetSize()); }));
    const uint32_t payload = 3 * 4096 + 100;
    ASSERT_TRUE(src->SendPacket(Create<Packet>(payload), dst->GetLid(), 0, 0x4754));
    Simulator::Run();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(received, std::vector<uint32_t>{payload});
    EXPECT_EQ(src->RealPacketsOf(sent[0]->GetSize()), 4u);
    const double dataBps = InfinibandGetLinkPreset("NDR").GetDataRateBps();
    EXPECT_NEAR(src->GetCounters().busyTime.GetSeconds(), 12492 * 8 / dataBps, 1e-9);
    const auto real = src->SplitBurst(sent[0]);
    ASSERT_EQ(real.size(), 4u);
    uint32_t wire = 0;
    for (uint32_t i = 0; i < 4; ++i)
    {
        InfinibandLrh lrh;
        real[i]->PeekHeader(lrh);
        Ptr<Packet> copy = real[i]->Copy();
        copy->RemoveHeader(lrh);
        InfinibandBth bth;
        copy->PeekHeader(bth);
        EXPECT_EQ(bth.GetPsn(), i);
        EXPECT_EQ(bth.GetOpcode(), InfinibandBth::RC_SEND_ONLY);
        EXPECT_EQ(lrh.GetPacketLengthWords() * 4u + 2, real[i]->GetSize()); // + VCRC
        EXPECT_TRUE(InfinibandCheckCrcs(real[i]));
        wire += real[i]->GetSize();
    }
    EXPECT_EQ(wire, 12492u);
    sent.clear();
    ASSERT_TRUE(src->SendPacket(Create<Packet>(64), dst->GetLid(), 0, 0x4754));
    Simulator::Run();
    ASSERT_EQ(sent.size(), 1u);
    Ptr<Packet> next = sent[0]->Copy();
    InfinibandLrh lrh;
    next->RemoveHeader(lrh);
    InfinibandBth bth;
    next->PeekHeader(bth);
    EXPECT_EQ(bth.GetPsn(), 4u);

    // MaxBurstPackets 64 with the switch's 64 KiB receive buffers: the plane's bursts
    // shrink to the 15 MTUs that fit with their headers (15 x 4096 + 26 <= 65536).
    InfinibandHelper big;
    big.SetDeviceAttribute("Preset", StringValue("NDR"));
    big.SetDeviceAttribute("MaxBurstPackets", UintegerValue(64));
    InfinibandFabric fabric2 = big.BuildFatTree(4, 2, 1.0);
    Ptr<InfinibandTransportPlane> plane = CreateObject<InfinibandTransportPlane>();
    plane->AddHosts(fabric2, Ranks(0, 2));
    EXPECT_EQ(plane->GetMaxBurstBytes(), 15u * 4096);
}

} // namespace

// A split run moves packets between processes serialised (MpiInterface::SendPacket): a
// message for another process keeps its id, sequence, size, client and key through
// Packet::Serialize/Deserialize; a local message carries no TransportMessageTag.
TEST(TransportTags, RemoteFieldsSurviveSerialisation)
{
    TransportTag tag{123456789012ULL, 77};
    tag.remote = true;
    tag.client = 2;
    tag.bytes = (5ULL << 30) + 3;
    tag.key = (uint64_t(41) << 32) | 9;
    Ptr<Packet> p = Create<Packet>(100);
    AddTransportTags(p, 3, 1029, tag);
    std::vector<uint8_t> buffer(p->GetSerializedSize());
    ASSERT_EQ(p->Serialize(buffer.data(), buffer.size()), 1);
    Ptr<Packet> q = Create<Packet>(buffer.data(), buffer.size(), true);
    TransportPacketTag out;
    ASSERT_TRUE(PeekTransportTags(q, out));
    EXPECT_EQ(out.srcRank, 3u);
    EXPECT_EQ(out.dstRank, 1029u);
    EXPECT_EQ(out.tag.messageId, tag.messageId);
    EXPECT_EQ(out.tag.sequence, 77u);
    EXPECT_TRUE(out.tag.remote);
    EXPECT_EQ(out.tag.client, 2);
    EXPECT_EQ(out.tag.bytes, tag.bytes);
    EXPECT_EQ(out.tag.key, tag.key);
    EXPECT_EQ(q->GetSize(), 100u);

    Ptr<Packet> local = Create<Packet>(100);
    AddTransportTags(local, 3, 4, TransportTag{5, 6});
    TransportMessageTag m;
    EXPECT_FALSE(local->PeekPacketTag(m));
    ASSERT_TRUE(PeekTransportTags(local, out));
    EXPECT_FALSE(out.tag.remote);
    EXPECT_EQ(out.tag.sequence, 6u);
}
