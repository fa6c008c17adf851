/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// NVLS in-switch all-reduce on dgx-h100: bytes per GPU link, reduced chunk counts,
// per-plane reduction and buffer (credit) accounting; gen2 switches refuse NVLS.
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class NvSwitchNvlsTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

struct MemberState
{
    uint32_t chunks{0};
    uint32_t done{0};
    double doneTime_s{0};
};

void
OnChunk(MemberState* m, uint32_t, uint32_t, uint32_t)
{
    m->chunks++;
}

void
OnDone(MemberState* m, uint32_t, uint32_t)
{
    m->done++;
    m->doneTime_s = Simulator::Now().GetSeconds();
}

} // namespace

// S = 8 MiB per GPU, 4 KiB chunks (2048), 8 GPUs in one group.  In-switch reduction
// sends each byte up once and brings the result down once: every GPU's uplinks
// (summed over its 4 planes) carry S bytes and its downlinks S bytes, within 5%
// (the 16-byte header per 4 KiB packet is 0.4%).  Every member gets all 2048 reduced
// chunks; the planes reduce 5:4:4:5 of them; all held buffer is released.
// Time: both directions run in parallel at 423.5 GB/s -> S / 423.5 GB/s = 19.8 us,
// plus the latency of one chunk; asserted within 5%.
TEST_F(NvSwitchNvlsTest, AllReduceMovesEachByteOnceEachWay)
{
    NvLinkHelper helper;
    helper.SetPreset("dgx-h100");
    NodeContainer gpus;
    gpus.Create(8);
    helper.Install(gpus);
    std::vector<uint32_t> members{0, 1, 2, 3, 4, 5, 6, 7};
    helper.RegisterNvlsGroup(7, members);
    const uint64_t bytes = 8ULL << 20;
    const uint32_t chunks = bytes / 4096;
    std::vector<MemberState> state(8);
    for (uint32_t g = 0; g < 8; ++g)
    {
        Ptr<NvLinkGpu> gpu = helper.GetGpu(g);
        gpu->TraceConnectWithoutContext("NvlsChunkReceived",
                                        MakeBoundCallback(&OnChunk, &state[g]));
        EXPECT_EQ(gpu->NvlsReduce(7, 1000, bytes, MakeBoundCallback(&OnDone, &state[g])), chunks);
    }
    Simulator::Run();

    const double s = static_cast<double>(bytes);
    for (uint32_t g = 0; g < 8; ++g)
    {
        EXPECT_EQ(state[g].chunks, chunks) << "GPU " << g;
        EXPECT_EQ(state[g].done, 1u) << "GPU " << g;
        uint64_t up = 0;
        uint64_t down = 0;
        Ptr<NvLinkGpu> gpu = helper.GetGpu(g);
        for (uint32_t i = 0; i < gpu->GetNDevices(); ++i)
        {
            up += gpu->GetDevice(i)->GetCounters().txBytes;
            down += gpu->GetDevice(i)->GetCounters().rxBytes;
        }
        EXPECT_NEAR(up / s, 1.0, 0.05) << "GPU " << g;
        EXPECT_NEAR(down / s, 1.0, 0.05) << "GPU " << g;
        EXPECT_NEAR(s / state[g].doneTime_s / (18 * 25e9 * 256 / 272), 1.0, 0.05) << "GPU " << g;
    }
    const double weights[] = {5, 4, 4, 5};
    uint64_t reduced = 0;
    for (uint32_t p = 0; p < 4; ++p)
    {
        Ptr<NvSwitch> sw = helper.GetSwitch(p);
        reduced += sw->GetNvlsReducedChunks();
        EXPECT_EQ(sw->GetNvlsPendingChunks(), 0u);
        EXPECT_NEAR(sw->GetNvlsReducedChunks() / (chunks * weights[p] / 18.0), 1.0, 0.02);
        for (uint32_t port = 0; port < sw->GetNPorts(); ++port)
        {
            EXPECT_EQ(sw->GetPort(port)->GetReceiveOccupancy(0), 0u);
            Ptr<CreditLinkNetDevice> gpuSide = sw->GetPort(port)->GetPeer();
            EXPECT_EQ(gpuSide->GetCredits(0), gpuSide->GetInitialCredits(0));
        }
    }
    EXPECT_EQ(reduced, chunks);
}

// Until the last member contributes, a chunk stays held in the switch (and in its
// input buffers): with 7 of 8 members nothing comes back and every chunk is pending.
TEST_F(NvSwitchNvlsTest, ChunkWaitsForEveryMember)
{
    NvLinkHelper helper;
    helper.SetPreset("dgx-h100");
    NodeContainer gpus;
    gpus.Create(8);
    helper.Install(gpus);
    helper.RegisterNvlsGroup(1, {0, 1, 2, 3, 4, 5, 6, 7});
    std::vector<MemberState> state(8);
    for (uint32_t g = 0; g < 7; ++g)
    {
        helper.GetGpu(g)->TraceConnectWithoutContext("NvlsChunkReceived",
                                                     MakeBoundCallback(&OnChunk, &state[g]));
        helper.GetGpu(g)->NvlsReduce(1, 0, 18 * 4096);
    }
    Simulator::Run();
    uint32_t pending = 0;
    for (uint32_t p = 0; p < 4; ++p)
    {
        pending += helper.GetSwitch(p)->GetNvlsPendingChunks();
        EXPECT_EQ(helper.GetSwitch(p)->GetNvlsReducedChunks(), 0u);
    }
    EXPECT_EQ(pending, 18u);
    for (uint32_t g = 0; g < 7; ++g)
    {
        EXPECT_EQ(state[g].chunks, 0u);
        // Held contributions keep their input buffer: credits not returned.
        uint32_t missing = 0;
        for (uint32_t i = 0; i < 4; ++i)
        {
            Ptr<NvLinkNetDevice> d = helper.GetGpu(g)->GetDevice(i);
            missing += d->GetInitialCredits(0) - d->GetCredits(0);
        }
        EXPECT_EQ(missing, 18u * ((4096 + 16 + 63) / 64));
    }
}

// NVLS exists from NVSwitch gen3 (H100) on: DGX A100's gen2 switches refuse a group
// with a message naming the generation.
TEST_F(NvSwitchNvlsTest, Gen2SwitchRefusesNvls)
{
    NvLinkHelper helper;
    helper.SetPreset("dgx-a100");
    NodeContainer gpus;
    gpus.Create(8);
    helper.Install(gpus);
    Ptr<NvSwitch> sw = helper.GetSwitch(0);
    EXPECT_EQ(sw->GetGeneration(), 2u);
    EXPECT_FALSE(sw->SupportsNvls());
    const std::string error = sw->CheckNvlsGroup(0, {0, 1});
    EXPECT_NE(error.find("gen3"), std::string::npos) << error;
    EXPECT_DEATH(helper.RegisterNvlsGroup(0, {0, 1, 2}), "needs NVSwitch gen3 or later");
    EXPECT_TRUE(CreateObject<NvSwitch>()->CheckNvlsGroup(0, {0, 1}).empty());
    EXPECT_FALSE(CreateObject<NvSwitch>()->CheckNvlsGroup(0, {0, 0}).empty());
}
