/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// NVLink presets and generation figures; rejection of impossible fabrics.
#include "ns3/nvlink-fabric-preset.h"
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class NvLinkPresetTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

NvLinkFabricSpec
Preset(const std::string& name)
{
    NvLinkFabricSpec spec;
    EXPECT_EQ(NvLinkFindFabricPreset(name, spec), "");
    return spec;
}

bool
Contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

} // namespace

// Bundle rate = links x signalling x efficiency: NVLink4 5 links 5 x 212.5 Gb/s x
// 25/26.5625 = 1 Tb/s; NVLink5 18 links 18 x 400 Gb/s = 7.2 Tb/s; NVLink3 2 links
// 400 Gb/s; NVLink2 1 link 200 Gb/s (exact to 1 b/s after rounding).
TEST_F(NvLinkPresetTest, GenerationSetsBundleRate)
{
    struct Case
    {
        uint32_t generation;
        uint32_t links;
        uint64_t bps;
    } cases[] = {{4, 5, 1'000'000'000'000ULL},
                 {5, 18, 7'200'000'000'000ULL},
                 {3, 2, 400'000'000'000ULL},
                 {2, 1, 200'000'000'000ULL}};

    for (const auto& c : cases)
    {
        Ptr<NvLinkNetDevice> d =
            CreateObjectWithAttributes<NvLinkNetDevice>("Generation",
                                                        UintegerValue(c.generation),
                                                        "Links",
                                                        UintegerValue(c.links));
        EXPECT_NEAR(static_cast<double>(d->GetClock().GetDataRateBps()), c.bps, 1.0)
            << "NVLink" << c.generation;
    }
    EXPECT_EQ(GetNvLinkGeneration(4).linksPerGpu, 18u);
    EXPECT_EQ(GetNvLinkGeneration(3).linksPerGpu, 12u);
    EXPECT_FALSE(CheckNvLinkGeneration(6).empty());
}

TEST_F(NvLinkPresetTest, PresetShapes)
{
    const NvLinkFabricSpec a100 = Preset("dgx-a100");
    EXPECT_EQ(a100.switches, 6u);
    EXPECT_EQ(a100.linksPerSwitch, std::vector<uint32_t>(6, 2));
    EXPECT_EQ(a100.generation, 3u);
    const NvLinkFabricSpec h100 = Preset("dgx-h100");
    EXPECT_EQ(h100.linksPerSwitch, (std::vector<uint32_t>{5, 4, 4, 5}));
    EXPECT_EQ(h100.generation, 4u);
    const NvLinkFabricSpec nvl72 = Preset("gb200-nvl72");
    EXPECT_EQ(nvl72.switches, 18u);
    EXPECT_EQ(nvl72.generation, 5u);
    EXPECT_EQ(NvLinkValidateFabric(a100, 8), "");
    EXPECT_EQ(NvLinkValidateFabric(h100, 8), "");
    EXPECT_EQ(NvLinkValidateFabric(nvl72, 72), "");

    NvLinkHelper helper;
    helper.SetPreset("dgx-h100");
    NodeContainer gpus;
    gpus.Create(8);
    const NetDeviceContainer devices = helper.Install(gpus);
    EXPECT_EQ(devices.GetN(), 32u);
    EXPECT_EQ(helper.GetNSwitches(), 4u);
    EXPECT_EQ(helper.GetSwitch(0)->GetNPorts(), 8u);
    EXPECT_EQ(helper.GetSwitch(0)->GetGeneration(), 3u);
    EXPECT_EQ(helper.GetGpuDevice(3, 1)->GetLinks(), 4u);
    EXPECT_EQ(helper.GetGpuDevice(3, 3)->GetLinks(), 5u);
    EXPECT_EQ(helper.GetGpu(3)->GetGpuId(), 3u);
}

TEST_F(NvLinkPresetTest, UnknownPresetListsValidNames)
{
    NvLinkFabricSpec spec;
    const std::string error = NvLinkFindFabricPreset("dgx-z900", spec);
    EXPECT_TRUE(Contains(error, "dgx-z900")) << error;
    EXPECT_TRUE(Contains(error, "dgx-a100 dgx-h100 gb200-nvl72")) << error;
    NvLinkHelper helper;
    EXPECT_DEATH(helper.SetPreset("dgx-z900"), "valid presets: dgx-a100 dgx-h100 gb200-nvl72");
}

// Ports: NVSwitch gen3 has 64 NVLink4 ports, so dgx-h100's 5-link plane takes at
// most 12 GPUs (60 ports; 13 need 65); gen4 has 72 (NVL72 is full); gen2 has 36
// (dgx-a100: 18 GPUs x 2).
TEST_F(NvLinkPresetTest, MoreGpusThanSwitchPortsAreRejected)
{
    EXPECT_EQ(NvLinkValidateFabric(Preset("dgx-h100"), 12), "");
    const std::string h100 = NvLinkValidateFabric(Preset("dgx-h100"), 13);
    EXPECT_TRUE(Contains(h100, "13 GPUs need 65 ports on switch 0")) << h100;
    EXPECT_TRUE(Contains(h100, "gen3 has 64")) << h100;
    const std::string nvl = NvLinkValidateFabric(Preset("gb200-nvl72"), 73);
    EXPECT_TRUE(Contains(nvl, "need 73 ports") && Contains(nvl, "gen4 has 72")) << nvl;
    EXPECT_EQ(NvLinkValidateFabric(Preset("dgx-a100"), 18), "");
    EXPECT_TRUE(Contains(NvLinkValidateFabric(Preset("dgx-a100"), 19), "gen2 has 36"));

    NvLinkHelper helper;
    helper.SetPreset("dgx-h100");
    NodeContainer gpus;
    gpus.Create(13);
    EXPECT_DEATH(helper.Install(gpus), "13 GPUs need 65 ports");
}

TEST_F(NvLinkPresetTest, ImpossibleCustomFabricsAreRejected)
{
    NvLinkFabricSpec spec;
    spec.generation = 4;
    spec.switches = 2;
    spec.linksPerPair = {{9, 9}, {0, 0}, {4, 4}};
    const std::string zero = NvLinkValidateFabric(spec, 3);
    EXPECT_TRUE(Contains(zero, "GPU 1 has zero NVLink links")) << zero;

    spec.linksPerPair = {{9, 9}, {1, 0}, {10, 10}};
    const std::string tooMany = NvLinkValidateFabric(spec, 3);
    EXPECT_TRUE(Contains(tooMany, "GPU 2 has 20 links, an NVLink4 GPU has 18")) << tooMany;

    spec.linksPerPair = {{9, 9}, {1, 0}, {4, 4}};
    EXPECT_EQ(NvLinkValidateFabric(spec, 3), "");
    EXPECT_TRUE(Contains(NvLinkValidateFabric(spec, 4), "linksPerPair has 3 rows for 4 GPUs"));

    NvLinkFabricSpec direct;
    direct.generation = 5;
    direct.directLinks = {{0, 1, 18}};
    EXPECT_EQ(NvLinkValidateFabric(direct, 2), "");
    EXPECT_TRUE(Contains(NvLinkValidateFabric(direct, 3), "GPU 2 has zero NVLink links"));
    direct.directLinks = {{0, 0, 2}};
    EXPECT_TRUE(Contains(NvLinkValidateFabric(direct, 2), "invalid"));
    direct.generation = 7;
    EXPECT_TRUE(Contains(NvLinkValidateFabric(direct, 2), "valid: 2, 3, 4, 5"));
}

// The routing header is 16 bytes and round-trips every field.
TEST_F(NvLinkPresetTest, HeaderRoundTrip)
{
    NvLinkHeader h;
    h.destination = 71;
    h.source = 3;
    h.type = NvLinkHeader::NVLS_MULTICAST;
    h.vc = 2;
    h.protocol = 0x88b5;
    h.tag = 0xdeadbeef;
    h.count = 123456789;
    Ptr<Packet> p = Create<Packet>(100);
    p->AddHeader(h);
    EXPECT_EQ(p->GetSize(), 100u + NvLinkHeader::SIZE_BYTES);
    NvLinkHeader r;
    p->RemoveHeader(r);
    EXPECT_EQ(r.destination, 71);
    EXPECT_EQ(r.source, 3);
    EXPECT_EQ(r.type, NvLinkHeader::NVLS_MULTICAST);
    EXPECT_EQ(r.vc, 2);
    EXPECT_EQ(r.protocol, 0x88b5);
    EXPECT_EQ(r.tag, 0xdeadbeefu);
    EXPECT_EQ(r.count, 123456789u);
}
