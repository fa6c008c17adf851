/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// NVLink domains against analytical bandwidths: per-GPU rate on each preset,
// 5:4:4:5 plane split, injection-limited all-to-all, granularity independence,
// direct GPU<->GPU bundles and the per-real-packet wire overhead.  Messages go
// through GpuTransport over an NvLinkTransportPlane (NvLinkHelper::InstallTransport);
// a transfer is done when its receiver holds the last byte.
#include "ns3/credit-link-conservation.h"
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

constexpr double GB = 1e9;
constexpr double kPayloadEfficiency = 256.0 / (256.0 + 16.0); // default MaxPayload / Header

class NvLinkBandwidthTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

struct PairResult
{
    double firstArrival_s{-1};
    double firstPayloadBytes{0};
    double completion_s{-1};
    std::vector<uint64_t> planeTxBytes;
};

void
OnRx(PairResult* r, Ptr<const Packet> p, uint32_t)
{
    if (r->firstArrival_s < 0)
    {
        r->firstArrival_s = Simulator::Now().GetSeconds();
        r->firstPayloadBytes = p->GetSize() - NvLinkHeader::SIZE_BYTES;
    }
}

// GPU src sends `bytes` to GPU dst on a fresh fabric built by `helper`; the transport
// cuts the message into packets of AdaptivePacketBytes (\p minPacketsPerMessage 0:
// Granularity packets only).
PairResult
RunPair(NvLinkHelper& helper,
        uint32_t nGpus,
        uint32_t src,
        uint32_t dst,
        uint64_t bytes,
        uint32_t minPacketsPerMessage = 32)
{
    NodeContainer gpus;
    gpus.Create(nGpus);
    helper.Install(gpus);
    PairResult r;
    Ptr<NvLinkGpu> rx = helper.GetGpu(dst);
    for (uint32_t i = 0; i < rx->GetNDevices(); ++i)
    {
        rx->GetDevice(i)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, &r));
    }
    Ptr<GpuTransport> transport = helper.InstallTransport();
    transport->SetAttribute("MinPacketsPerMessage", UintegerValue(minPacketsPerMessage));
    transport->SendMessage(src, dst, bytes, GpuTransport::DoneCallback(), Callback<void>([&r]() {
                               r.completion_s = Simulator::Now().GetSeconds();
                           }));
    Simulator::Run();
    Ptr<NvLinkGpu> tx = helper.GetGpu(src);
    for (uint32_t i = 0; i < tx->GetNDevices(); ++i)
    {
        r.planeTxBytes.push_back(tx->GetDevice(i)->GetCounters().txBytes);
    }
    return r;
}

// Steady-state rate at the receiver: after the first packet, until the last.
double
SteadyRateBps(const PairResult& r, uint64_t bytes)
{
    return (static_cast<double>(bytes) - r.firstPayloadBytes) / (r.completion_s - r.firstArrival_s);
}

struct PresetCase
{
    const char* preset;
    uint32_t gpus;
    double linksPerGpu;
    double linkRate_gbyte_per_s;
};

} // namespace

// Per-GPU unidirectional bandwidth = links x per-link rate x 256/272, within 1%:
// dgx-a100 12 x 25 x 0.941 = 282.4 GB/s, dgx-h100 18 x 25 x 0.941 = 423.5 GB/s,
// gb200-nvl72 18 x 50 x 0.941 = 847.1 GB/s.  The transport sends 64 KiB bursts
// (MaxBurstBytes): by the first arrival every plane has serialised one, so the
// steady-rate window misses (planes - 1) bursts, 17 x 64 KiB of S on gb200-nvl72's
// 18 planes; S = 256 MiB keeps that at 0.4%, under half the tolerance.
TEST_F(NvLinkBandwidthTest, PerGpuUnidirectionalBandwidthOfEachPreset)
{
    const PresetCase cases[] = {
        {"dgx-a100", 8, 12, 25},
        {"dgx-h100", 8, 18, 25},
        {"gb200-nvl72", 72, 18, 50},
    };
    for (const auto& c : cases)
    {
        NvLinkHelper helper;
        helper.SetPreset(c.preset);
        const uint64_t bytes = 256ULL << 20;
        const PairResult r = RunPair(helper, c.gpus, 0, c.gpus - 1, bytes);
        ASSERT_GT(r.completion_s, 0) << c.preset;
        const double expected = c.linksPerGpu * c.linkRate_gbyte_per_s * GB * kPayloadEfficiency;
        EXPECT_NEAR(SteadyRateBps(r, bytes) / expected, 1.0, 0.01) << c.preset;
        Simulator::Destroy();
    }
}

// A 32 MiB transfer GPU0 -> GPU5 on dgx-h100 loads the four planes 5:4:4:5 of the
// 18 links (27.8%, 22.2%, 22.2%, 27.8% of the bytes), each within 2% of its share
// (512 bursts of 64 KiB: the spray's 18-turn cycle leaves at most one burst, 0.9% of
// a plane's 114, off its share).
TEST_F(NvLinkBandwidthTest, TwoGpusUseAllFourPlanesInLinkProportion)
{
    NvLinkHelper helper;
    helper.SetPreset("dgx-h100");
    const PairResult r = RunPair(helper, 8, 0, 5, 32ULL << 20);
    ASSERT_EQ(r.planeTxBytes.size(), 4u);
    const double weights[] = {5, 4, 4, 5};
    double total = 0;
    for (uint64_t b : r.planeTxBytes)
    {
        total += static_cast<double>(b);
    }
    for (uint32_t i = 0; i < 4; ++i)
    {
        EXPECT_NEAR((r.planeTxBytes[i] / total) / (weights[i] / 18.0), 1.0, 0.02) << "plane " << i;
    }
    // Every byte crossed exactly one switch, the one of its plane.
    for (uint32_t s = 0; s < 4; ++s)
    {
        EXPECT_GT(helper.GetSwitch(s)->GetForwardedPackets(), 0u);
    }
}

// All-to-all on dgx-h100, 16 MiB from every GPU to each of the 7 others: each GPU
// injects 7 x 16 MiB at its 423.5 GB/s payload rate (277 us) and receives as much;
// every switch port carries 1/7 of 7 flows, so no switch port is the bottleneck:
// per-GPU bandwidth within 3% of injection (fill/drain of one pipeline), and the
// switch-to-GPU ports are busy no more than the GPU uplinks.  A GPU's 7 messages
// share its injection round-robin (GpuTransport); its figure is the time the last
// of them is held by its receiver.
TEST_F(NvLinkBandwidthTest, AllToAllOnDgxH100IsInjectionLimited)
{
    NvLinkHelper helper;
    helper.SetPreset("dgx-h100");
    NodeContainer gpus;
    gpus.Create(8);
    helper.Install(gpus);
    const uint64_t bytes = 16ULL << 20;
    std::vector<double> lastDone(8, 0);
    std::vector<uint32_t> done(8, 0);
    Ptr<GpuTransport> transport = helper.InstallTransport();
    for (uint32_t g = 0; g < 8; ++g)
    {
        for (uint32_t k = 1; k < 8; ++k)
        {
            transport->SendMessage(g,
                                   (g + k) % 8,
                                   bytes,
                                   GpuTransport::DoneCallback(),
                                   Callback<void>([&lastDone, &done, g]() {
                                       lastDone[g] = Simulator::Now().GetSeconds();
                                       done[g]++;
                                   }));
        }
    }
    Simulator::Run();
    const double injection = 18 * 25 * GB * kPayloadEfficiency;
    for (uint32_t g = 0; g < 8; ++g)
    {
        ASSERT_EQ(done[g], 7u);
        EXPECT_NEAR(7.0 * bytes / lastDone[g] / injection, 1.0, 0.03) << "GPU " << g;
    }
    for (uint32_t s = 0; s < 4; ++s)
    {
        Ptr<NvSwitch> sw = helper.GetSwitch(s);
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            const Time down = sw->GetPort(p)->GetCounters().busyTime;
            const Time up = sw->GetPort(p)->GetPeer()->GetCounters().busyTime;
            EXPECT_NEAR(down.GetSeconds() / up.GetSeconds(), 1.0, 0.01);
        }
    }
    // 8 x 7 x 16 MiB crossed two hops each, nothing lost or left in the switches.
    CreditLinkConservation check;
    check.Add("nvlink", NodeContainer(gpus, helper.GetSwitchNodes()));
    const CreditLinkConservationReport r = check.Check();
    EXPECT_TRUE(r.Ok()) << r.Describe();
    EXPECT_GE(r.planes.at("nvlink").sentBytes, 2 * 56 * bytes);
}

// 256 MiB GPU0 -> GPU1 on dgx-h100 at 4 KiB vs 64 KiB bursts: the wire bytes are the
// same (overhead per 256-B real packet), only the pipeline fill differs (one 64 KiB
// burst on a 5-link bundle, ~0.5 us, against ~634 us of transfer): < 1% apart.  The
// transport sends Granularity packets (MinPacketsPerMessage 0), else both runs
// would send the same 64 KiB bursts.
// 256 MiB instead of 1 GiB keeps the 4 KiB run at 65k packets x 2 hops; doc/nvlink.md
// has the 1 GiB measurement.
TEST_F(NvLinkBandwidthTest, GranularityBarelyChangesLongTransfers)
{
    const uint64_t bytes = 256ULL << 20;
    double completion[2];
    const uint32_t granularity[2] = {4096, 65536};
    for (int i = 0; i < 2; ++i)
    {
        NvLinkHelper helper;
        helper.SetPreset("dgx-h100");
        helper.SetDeviceAttribute("Granularity", UintegerValue(granularity[i]));
        completion[i] = RunPair(helper, 8, 0, 1, bytes, 0).completion_s;
        Simulator::Destroy();
    }
    ASSERT_GT(completion[0], 0);
    EXPECT_NEAR(completion[1] / completion[0], 1.0, 0.01);
    // Both near S / 423.5 GB/s.
    EXPECT_NEAR(bytes / completion[0] / (18 * 25 * GB * kPayloadEfficiency), 1.0, 0.01);
}

// Custom form with direct GPU<->GPU bundles and no switch: 4 NVLink4 links between
// GPU 0 and 1 give 4 x 25 x 0.941 = 94.1 GB/s, within 1%.
TEST_F(NvLinkBandwidthTest, DirectGpuToGpuBundle)
{
    NvLinkFabricSpec spec;
    spec.generation = 4;
    spec.directLinks = {{0, 1, 4}};
    NvLinkHelper helper;
    helper.SetFabric(spec);
    const uint64_t bytes = 16ULL << 20;
    const PairResult r = RunPair(helper, 2, 1, 0, bytes);
    ASSERT_GT(r.completion_s, 0);
    EXPECT_NEAR(SteadyRateBps(r, bytes) / (4 * 25 * GB * kPayloadEfficiency), 1.0, 0.01);
}

// One 4 KiB burst on one NVLink4 link: 16 real packets -> 4096 + 16 x 16 = 4352 wire
// bytes at 25 GB/s = 174.08 ns; the same bytes as 256-B packets cost the same 174.08 ns in
// total (Granularity packets: MinPacketsPerMessage 0).  With OverheadBytes (framing, link
// CRC) every real packet pays it too, burst or not (the link layer's one burst rule):
// 4096 + 16 x (16 + 8) = 4480 B = 179.2 ns.  Whole-ns serialisation with the remainder
// carried: within 1 ns.
TEST_F(NvLinkBandwidthTest, WireOverheadChargedPerRealPacket)
{
    for (const auto& [overheadBytes, expectedNs] : {std::pair{0u, 174.08}, std::pair{8u, 179.2}})
    {
        for (uint32_t granularity : {256u, 4096u})
        {
            NvLinkFabricSpec spec;
            spec.generation = 4;
            spec.directLinks = {{0, 1, 1}};
            NvLinkHelper helper;
            helper.SetFabric(spec);
            helper.SetDeviceAttribute("Granularity", UintegerValue(granularity));
            helper.SetDeviceAttribute("OverheadBytes", UintegerValue(overheadBytes));
            const PairResult r = RunPair(helper, 2, 0, 1, 4096, 0);
            ASSERT_GT(r.completion_s, 0);
            EXPECT_NEAR(helper.GetGpu(0)->GetDevice(0)->GetCounters().busyTime.GetNanoSeconds(),
                        expectedNs,
                        1.0)
                << granularity << " B packets, OverheadBytes " << overheadBytes;
            Simulator::Destroy();
        }
    }
}
