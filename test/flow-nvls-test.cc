/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// NVLS in-switch reductions at flow level (FlowNvls, doc/flow-mode.md): the engine resource
// read from the NvSwitch's attribute, an allreduce bound by the engine and one bound by the
// links against their analytical times, and NVLS collectives in flow mode against packet mode.
#include "dgx-collective-run.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bench.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/flow-network.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/names.h"
#include "ns3/nccl-endpoint.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

class FlowNvlsTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Names::Clear();
        Config::Reset();
    }

    struct Run
    {
        double time_us{0};
        double nvlsLatency_us{0};
        double engine_byte_per_s{0}; //!< towards one GPU, all its switch planes
        double uplink_byte_per_s{0}; //!< one GPU's NVLink bundles, wire rate
        uint32_t inFlight{0};        //!< flow plane's NVLS operations left at the end
        double wirePerPayload{1};    //!< flow plane: wire bytes of a MiB message per byte
    };

    // The devices these tests read and tune (a flow plane is described only by default;
    // test/flow-described-cluster-test.cc checks it gives the same times).
    static void KeepDevices(ClusterHelper& cluster)
    {
        cluster.GetNvLinkPlane().SetAttribute("flow", "BuildDevices", BooleanValue(true));
    }

    // One collective on a dgx-h100 cluster of \p servers at \p fidelity; \p tune may set
    // attributes of the built cluster (the build sets the switches' engine rate).
    static Run Measure(const std::string& fidelity,
                       uint32_t servers,
                       const std::string& kind,
                       const std::string& algorithm,
                       uint64_t bytes,
                       const std::string& endpoint = "auto",
                       const std::function<void(ClusterHelper&)>& tune = nullptr)
    {
        Run run;
        run.time_us = RunDgxCollective_us(
            fidelity,
            servers,
            kind,
            algorithm,
            bytes,
            endpoint,
            tune,
            [&run](ClusterHelper& cluster,
                   Ptr<GpuTransport> transport,
                   Ptr<CollectiveEngine> engine) {
                if (engine->GetEndpoint())
                {
                    run.nvlsLatency_us = engine->GetEndpoint()->GetNvlsLatency().GetMicroSeconds();
                }
                Ptr<NvLinkGpu> gpu = cluster.GetNvLinkGpu(0);
                for (uint32_t i = 0; i < gpu->GetNDevices(); ++i)
                {
                    Ptr<NvLinkNetDevice> d = gpu->GetDevice(i);
                    run.uplink_byte_per_s +=
                        d->GetDataRate().GetBitRate() * d->GetEncodingEfficiency() / 8.0;
                    DataRateValue rate;
                    d->GetPeer()->GetSwitch()->GetAttribute("NvlsEngineRatePerLink", rate);
                    run.engine_byte_per_s += rate.Get().GetBitRate() / 8.0 * d->GetLinks();
                }
                for (uint32_t i = 0; i < transport->GetNPlanes(); ++i)
                {
                    if (auto f = DynamicCast<FlowTransportPlane>(transport->GetPlane(i)))
                    {
                        run.inFlight += f->GetInSwitchInFlight();
                        run.wirePerPayload = f->GetWireBytes(1 << 20) / (1 << 20);
                    }
                }
            },
            KeepDevices);
        return run;
    }

    static void ExpectClose(uint32_t servers,
                            const std::string& kind,
                            const std::string& algorithm,
                            uint64_t bytes,
                            double tolerance)
    {
        const Run packet = Measure("packet", servers, kind, algorithm, bytes);
        const Run flow = Measure("flow", servers, kind, algorithm, bytes);
        EXPECT_GT(packet.time_us, 0);
        EXPECT_EQ(flow.inFlight, 0u);
        EXPECT_NEAR(flow.time_us / packet.time_us, 1.0, tolerance)
            << kind << " " << algorithm << " " << bytes << " B on " << servers
            << " servers: packet " << packet.time_us << " us, flow " << flow.time_us << " us";
    }
};

TEST_F(FlowNvlsTest, EngineIsAFlowLinkAtTheSwitchsRateTowardsEachGpu)
{
    ClusterConfig c;
    ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 1;
    c.fidelity = "flow";
    ClusterHelper cluster(c);
    KeepDevices(cluster);
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<GpuTransport> transport = cluster.InstallTransport("world");
    Ptr<FlowTransportPlane> nv;
    for (uint32_t i = 0; i < transport->GetNPlanes(); ++i)
    {
        if (transport->GetPlane(i)->GetPlaneName() == "nvlink")
        {
            nv = DynamicCast<FlowTransportPlane>(transport->GetPlane(i));
        }
    }
    ASSERT_TRUE(nv);
    std::vector<uint32_t> ranks{0, 1, 2, 3, 4, 5, 6, 7};
    ASSERT_TRUE(nv->CanReduceInSwitch(ranks));
    uint32_t done = 0;
    nv->StartInSwitch(InSwitchReductionPlane::Op::AllReduce,
                      ranks,
                      1 << 20,
                      Callback<void, uint32_t>([&done](uint32_t) { ++done; }));
    EXPECT_EQ(nv->GetInSwitchInFlight(), 1u);
    Simulator::Run();
    EXPECT_EQ(done, 8u);
    EXPECT_EQ(nv->GetInSwitchInFlight(), 0u);
    // GPU 0's first bundle: its switch's engine towards GPU 0 is a link of
    // NvlsEngineRatePerLink (NCCL's 0.85 of the per-link NVLink rate, set by the cluster)
    // times the bundle's links, exactly.
    Ptr<NvLinkNetDevice> first = cluster.GetNvLinkGpu(0)->GetDevice(0);
    DataRateValue rate;
    first->GetPeer()->GetSwitch()->GetAttribute("NvlsEngineRatePerLink", rate);
    ASSERT_GT(rate.Get().GetBitRate(), 0u);
    const FlowNetwork& net = nv->GetNetwork();
    bool found = false;
    for (uint32_t l = 0; l < net.GetNLinks(); ++l)
    {
        found |= net.GetCapacity(l) == rate.Get().GetBitRate() / 8.0 * first->GetLinks();
    }
    EXPECT_TRUE(found);
}

TEST_F(FlowNvlsTest, MulticastAllReduceIsBoundByTheEngineTowardsEachGpu)
{
    // 256 MiB in-switch allreduce on 8 GPUs as the multicast pattern (the ideal endpoint's:
    // each buffer up once, reduced, down once; no NCCL latency) with the engine at 100 Gb/s
    // per link, below the links' rate: B over the engine towards a GPU (18 links), within
    // 1 %: the first chunk's upload and the path latency are the rest.
    const uint64_t bytes = 256ull << 20;
    const Run r = Measure("flow", 1, "allreduce", "nvls", bytes, "ideal", [](ClusterHelper& h) {
        Ptr<NvLinkGpu> gpu = h.GetNvLinkGpu(0);
        for (uint32_t i = 0; i < gpu->GetNDevices(); ++i)
        {
            gpu->GetDevice(i)->GetPeer()->GetSwitch()->SetAttribute(
                "NvlsEngineRatePerLink",
                DataRateValue(DataRate("100Gbps")));
        }
    });
    ASSERT_NEAR(r.engine_byte_per_s, 100e9 / 8 * 18, 1);
    ASSERT_LT(r.engine_byte_per_s, r.uplink_byte_per_s);
    EXPECT_EQ(r.nvlsLatency_us, 0);
    const double expected_us = bytes / r.engine_byte_per_s * 1e6;
    EXPECT_NEAR(r.time_us / expected_us, 1.0, 0.01)
        << "flow " << r.time_us << " us, expected " << expected_us << " us";
}

TEST_F(FlowNvlsTest, WithoutTheEngineLimitTheUplinksBound)
{
    // The same allreduce with the engine unlimited (the ideal set's NvlsEngineRatePerLink,
    // 0): B of wire bytes (payload plus one overhead per fine packet) over the GPU's
    // uplinks (and the same down), within 1 %.
    const uint64_t bytes = 256ull << 20;
    const Run r = Measure("flow", 1, "allreduce", "nvls", bytes, "ideal");
    EXPECT_EQ(r.engine_byte_per_s, 0);
    const double expected_us = bytes * r.wirePerPayload / r.uplink_byte_per_s * 1e6;
    EXPECT_NEAR(r.time_us / expected_us, 1.0, 0.01)
        << "flow " << r.time_us << " us, expected " << expected_us << " us";
}

TEST_F(FlowNvlsTest, NvlsAllReduceInOneServerMatchesPackets)
{
    ExpectClose(1, "allreduce", "nvls", 1 << 20, 0.03);   // validate-flow's target, 3 %
    ExpectClose(1, "allreduce", "nvls", 256 << 20, 0.03); // 3 %
}

// NCCL's kernel with a few loops per channel (16 MiB: 32 KiB chunks, 4 loops a channel).  The
// 16 channels' first loops issue together, and each owner's stored pieces of all of them drain
// from its uplinks at once; the engine towards a GPU must still deliver them loop by loop (as
// the packets arrive, every owner's piece of a loop after the other), or every channel's first
// loop waits for the last owner's pieces of all sixteen (flow was 6.3 % slower than packet).
TEST_F(FlowNvlsTest, NvlsAllReduceOfFewLoopsPerChannelRunsAtTheKernelsRate)
{
    const uint64_t bytes = 16 << 20;
    const uint32_t ranks = 8;
    const uint32_t channels = 16; // NvlsChunksInFlight, NCCL_NVLS_NCHANNELS_SM90
    const double step_us = 3.4;   // NvlsStepLatency, NCCL's NVLink Simple step
    const uint64_t chunk =
        NvLinkTransportPlane::NcclNvlsChunkBytes(bytes, ranks, channels, 128 << 10);
    ASSERT_EQ(chunk, 32u << 10);
    const Run flow = Measure("flow", 1, "allreduce", "nvls", bytes);
    const Run packet = Measure("packet", 1, "allreduce", "nvls", bytes);
    const double loopsPerChannel = static_cast<double>(bytes) / ranks / chunk / channels; // 4
    const double channel_byte_per_s = flow.engine_byte_per_s / channels;
    // NVLS latency, scatter step, per loop 9 chunks in at the channel's share + a step, gather
    // step: 25 + 3.4 + 4 x (15.0 + 3.4) + 3.4 = 105.3 us.
    const double expected_us =
        flow.nvlsLatency_us + step_us +
        loopsPerChannel * (9.0 * chunk / channel_byte_per_s * 1e6 + step_us) + step_us;
    // 2 %: the last loop's pieces reach the GPU a path latency after the engine (about 1 us of
    // 105); was +7.5 % in flow mode.
    EXPECT_NEAR(flow.time_us / expected_us, 1.0, 0.02)
        << "flow " << flow.time_us << " us, expected " << expected_us << " us";
    EXPECT_NEAR(packet.time_us / expected_us, 1.0, 0.02)
        << "packet " << packet.time_us << " us, expected " << expected_us << " us";
    EXPECT_EQ(flow.inFlight, 0u);
    // validate-flow's target, 3 %
    EXPECT_NEAR(flow.time_us / packet.time_us, 1.0, 0.03)
        << "packet " << packet.time_us << " us, flow " << flow.time_us << " us";
}

TEST_F(FlowNvlsTest, NvlsReduceScatterAndAllGatherMatchPackets)
{
    ExpectClose(1, "reducescatter", "nvls", 32 << 20, 0.03); // 3 %
    ExpectClose(1, "allgather", "nvls", 32 << 20, 0.03);     // 3 %
}

// At 64 MiB the rails run at NCCL's per-channel cap for most of the call.  At 16 MiB the
// flow plane is 3.4 % fast: its NVLS fills the first loops sooner than the packets, which
// reach the engines interleaved over the four switch planes (doc/flow-mode.md).
TEST_F(FlowNvlsTest, NvlsTreeAcrossTwoServersMatchesPackets)
{
    ExpectClose(2, "allreduce", "nvlstree", 64 << 20, 0.03); // 3 %
}

TEST_F(FlowNvlsTest, WithoutNvlsFlowsTheSwitchesReduceAsInPacketMode)
{
    // NvlsFlows false: the in-switch operation runs on the packet plane's devices, to the
    // nanosecond of the packet run (nothing else moves).
    const Run packet = Measure("packet", 1, "allreduce", "nvls", 1 << 20);
    Config::SetDefault("ns3::FlowTransportPlane::NvlsFlows", BooleanValue(false));
    const Run flow = Measure("flow", 1, "allreduce", "nvls", 1 << 20);
    EXPECT_EQ(flow.time_us, packet.time_us);
}

} // namespace
