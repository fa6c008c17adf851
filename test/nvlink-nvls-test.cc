/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// NVLS in-switch all-reduce on dgx-h100: bytes per GPU link, reduced chunk counts,
// per-plane reduction and buffer (credit) accounting; a multicast store as one packet for
// the members at the switch's own ports, as copies naming those behind another switch;
// gen2 switches refuse NVLS.
#include "ns3/credit-link-channel.h"
#include "ns3/nvlink-header.h"
#include "ns3/nvlink-helper.h"
#include "ns3/nvswitch-core.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>

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

namespace
{

struct StoreArrivals
{
    std::vector<const Packet*> packets;
    std::vector<uint16_t> destinations;
};

void
OnStoreRx(StoreArrivals* a, Ptr<const Packet> p, uint32_t)
{
    NvLinkHeader h;
    p->PeekHeader(h);
    if (h.type == NvLinkHeader::NVLS_MULTICAST)
    {
        a->packets.push_back(PeekPointer(p));
        a->destinations.push_back(h.destination);
    }
}

} // namespace

// multimem.st of one packet-sized chunk (4 KiB, so on one switch plane) by GPU 2: every
// member gets the chunk, as one packet that the switch queued for each member's port (one
// object, no copy per member; destination ALL_MEMBERS, the multicast address), and the
// sender's uplink buffer is free again once its own copy left.  Exact counts.
TEST_F(NvSwitchNvlsTest, StoreReachesEveryMemberAsOnePacket)
{
    NvLinkHelper helper;
    helper.SetPreset("dgx-h100");
    NodeContainer gpus;
    gpus.Create(8);
    helper.Install(gpus);
    helper.RegisterNvlsGroup(3, {0, 1, 2, 3, 4, 5, 6, 7});
    StoreArrivals arrivals;
    std::vector<MemberState> state(8);
    for (uint32_t g = 0; g < 8; ++g)
    {
        Ptr<NvLinkGpu> gpu = helper.GetGpu(g);
        gpu->NvlsExpect(3, 0, 4096, 4096, MakeBoundCallback(&OnDone, &state[g]));
        for (uint32_t i = 0; i < gpu->GetNDevices(); ++i)
        {
            gpu->GetDevice(i)->TraceConnectWithoutContext("Rx",
                                                          MakeBoundCallback(&OnStoreRx, &arrivals));
        }
    }
    EXPECT_EQ(helper.GetGpu(2)->NvlsStore(3, 0, 4096, 4096), 1u);
    Simulator::Run();
    for (uint32_t g = 0; g < 8; ++g)
    {
        EXPECT_EQ(state[g].done, 1u) << "GPU " << g;
    }
    ASSERT_EQ(arrivals.packets.size(), 8u);
    for (uint32_t i = 0; i < 8; ++i)
    {
        EXPECT_EQ(arrivals.packets[i], arrivals.packets[0]) << "arrival " << i;
        EXPECT_EQ(arrivals.destinations[i], NvLinkHeader::ALL_MEMBERS) << "arrival " << i;
    }
    for (uint32_t i = 0; i < helper.GetGpu(2)->GetNDevices(); ++i)
    {
        Ptr<NvLinkNetDevice> d = helper.GetGpu(2)->GetDevice(i);
        EXPECT_EQ(d->GetCredits(0), d->GetInitialCredits(0)) << "device " << i;
    }
}

// Two NVSwitches (gen4) joined by a link, GPUs 0 and 1 on switch A, 2 and 3 on switch B,
// the group registered on A.  GPU 0's store reaches A, which replicates it; the copies for
// GPUs 2 and 3 cross the A-B link and switch B routes them by their destination, so each
// is a packet of its own naming its member (the one-packet multicast is only for members
// at the end of the replicating switch's own ports).  Exact: every member gets the chunk
// once; the packets that reach 2 and 3 differ and name them.
TEST_F(NvSwitchNvlsTest, StoreCopiesNameMembersBehindAnotherSwitch)
{
    NodeContainer nodes;
    nodes.Create(6); // GPUs 0-3, switches A and B
    std::vector<Ptr<NvLinkGpu>> gpu(4);
    for (uint32_t g = 0; g < 4; ++g)
    {
        gpu[g] = CreateObject<NvLinkGpu>();
        gpu[g]->SetAttribute("GpuId", UintegerValue(g));
        nodes.Get(g)->AggregateObject(gpu[g]);
    }
    std::vector<Ptr<NvSwitch>> sw(2);
    for (uint32_t s = 0; s < 2; ++s)
    {
        sw[s] = CreateObject<NvSwitch>();
        sw[s]->SetAttribute("Generation", UintegerValue(4));
        nodes.Get(4 + s)->AggregateObject(sw[s]);
    }
    auto link = [&nodes](uint32_t a, uint32_t b) {
        Ptr<CreditLinkChannel> channel = CreateObject<CreditLinkChannel>();
        std::pair<Ptr<NvLinkNetDevice>, Ptr<NvLinkNetDevice>> d{CreateObject<NvLinkNetDevice>(),
                                                                CreateObject<NvLinkNetDevice>()};
        nodes.Get(a)->AddDevice(d.first);
        nodes.Get(b)->AddDevice(d.second);
        d.first->Attach(channel);
        d.second->Attach(channel);
        return d;
    };
    std::vector<uint32_t> portOf(4);
    for (uint32_t g = 0; g < 4; ++g)
    {
        auto d = link(g, g < 2 ? 4 : 5);
        gpu[g]->AddDevice(d.first, NvLinkGpu::NO_PEER);
        portOf[g] = sw[g < 2 ? 0 : 1]->AddPort(d.second);
    }
    auto trunk = link(4, 5);
    const uint32_t aToB = sw[0]->AddPort(trunk.first);
    const uint32_t bToA = sw[1]->AddPort(trunk.second);
    for (uint32_t g = 0; g < 4; ++g)
    {
        sw[0]->SetRoute(g, {g < 2 ? portOf[g] : aToB});
        sw[1]->SetRoute(g, {g < 2 ? bToA : portOf[g]});
    }
    sw[0]->RegisterNvlsGroup(5, {0, 1, 2, 3});

    StoreArrivals arrivals;
    std::vector<MemberState> state(4);
    for (uint32_t g = 0; g < 4; ++g)
    {
        gpu[g]->NvlsExpect(5, 0, 4096, 4096, MakeBoundCallback(&OnDone, &state[g]));
        gpu[g]->GetDevice(0)->TraceConnectWithoutContext("Rx",
                                                         MakeBoundCallback(&OnStoreRx, &arrivals));
    }
    EXPECT_EQ(gpu[0]->NvlsStore(5, 0, 4096, 4096), 1u);
    Simulator::Run();
    for (uint32_t g = 0; g < 4; ++g)
    {
        EXPECT_EQ(state[g].done, 1u) << "GPU " << g;
    }
    ASSERT_EQ(arrivals.packets.size(), 4u);
    std::vector<uint16_t> named;
    std::set<const Packet*> objects(arrivals.packets.begin(), arrivals.packets.end());
    for (uint16_t d : arrivals.destinations)
    {
        if (d != NvLinkHeader::ALL_MEMBERS)
        {
            named.push_back(d);
        }
    }
    std::sort(named.begin(), named.end());
    EXPECT_EQ(named, (std::vector<uint16_t>{0, 1, 2, 3}));
    EXPECT_EQ(objects.size(), 4u);
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
