/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// In-network reduction in the InfiniBand switches (SHARP) and the algorithms on it:
// the shared switch reduction engine, the SHARP plane over a rail's leaf switch, NCCL's
// CollNetDirect and CollNetChain allreduce at the wire rate and at the engine cap on 2 and
// 4 dgx-h100 servers, the tuner taking CollNet only when NCCL_COLLNET_ENABLE=1 on a SHARP
// fabric, and PAT's log2(ranks) steps at one GPU per node.

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-engine.h"
#include "ns3/config.h"
#include "ns3/infiniband-switch.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/names.h"
#include "ns3/nccl-endpoint.h"
#include "ns3/simulator.h"
#include "ns3/switch-reduction-engine.h"

#include <cmath>
#include <gtest/gtest.h>
#include <iostream>
#include <memory>
#include <numeric>
#include <tuple>

using namespace ns3;

namespace
{
constexpr uint64_t MiB = 1 << 20;
using Algo = CollectiveAlgorithm;

class CollNetTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Reset();
        Config::Reset();
    }

    static void Reset()
    {
        Simulator::Destroy();
        Names::Clear();
    }

    // \p servers dgx-h100 servers (\p gpus each), SHARP switches if \p sharp.
    void Build(uint32_t servers,
               bool sharp,
               const std::string& endpoint = "ideal",
               const std::string& collNet = "",
               double ibRate_gbit_per_s = 400,
               uint32_t gpus = 8,
               DataRate engineRate = DataRate(0))
    {
        ClusterConfig c;
        ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
        c.servers = servers;
        c.gpusPerServer = gpus;
        c.endpoint = endpoint;
        c.sharp = sharp;
        c.ibRate_gbit_per_s = ibRate_gbit_per_s;
        c.nccl.collNet = collNet;
        ASSERT_EQ(c.Validate(), "");
        m_cluster = std::make_unique<ClusterHelper>(c);
        m_cluster->SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        if (engineRate.GetBitRate() > 0)
        {
            // Else the endpoint set's rate (unlimited with the ideal set).
            m_cluster->SetIbSwitchAttribute("SharpEngineRatePerPort", DataRateValue(engineRate));
        }
        ASSERT_EQ(m_cluster->TryBuild(), "");
        m_transport = m_cluster->InstallTransport("world");
        m_engine = m_cluster->InstallCollectiveEngine(m_transport);
        for (uint32_t i = 0; i < m_transport->GetNPlanes(); ++i)
        {
            if (auto ib = DynamicCast<InfinibandTransportPlane>(m_transport->GetPlane(i)))
            {
                m_ib = ib;
            }
        }
        ASSERT_TRUE(m_ib);
    }

    static CollectiveCall Call(CollectiveKind kind,
                               uint32_t ranks,
                               uint64_t bytes,
                               CollectiveAlgorithm algorithm)
    {
        CollectiveCall call;
        call.kind = kind;
        call.algorithm = algorithm;
        call.ranks.resize(ranks);
        std::iota(call.ranks.begin(), call.ranks.end(), 0);
        call.bytes = bytes;
        return call;
    }

    CollectiveResult Run(const CollectiveCall& call)
    {
        CollectiveResult result;
        m_engine->Start(call, CollectiveEngine::DoneCallback([&result](const CollectiveResult& r) {
                            result = r;
                        }));
        Simulator::Run();
        return result;
    }

    uint64_t SharpReducedChunks() const
    {
        uint64_t chunks = 0;
        NodeContainer switches = m_cluster->GetInfinibandPlane().GetSwitchNodes();
        for (uint32_t i = 0; i < switches.GetN(); ++i)
        {
            chunks += switches.Get(i)->GetObject<InfinibandSwitch>()->GetSharpReducedChunks();
        }
        return chunks;
    }

    std::unique_ptr<ClusterHelper> m_cluster;
    Ptr<GpuTransport> m_transport;
    Ptr<CollectiveEngine> m_engine;
    Ptr<InfinibandTransportPlane> m_ib;
};

double
Us(const CollectiveResult& r)
{
    return (r.end - r.start).GetSeconds() * 1e6;
}

// The engine both switches share: contributions wait until every member's came (a repeat
// is refused), results towards one destination leave back to back at the engine's rate.
TEST(SwitchReductionEngineTest, HoldsUntilEveryMemberAndRatesTheResults)
{
    SwitchReductionEngine e;
    EXPECT_NE(e.CheckGroup("SHARP group", 7, {10}).find("at least 2"), std::string::npos);
    EXPECT_NE(e.CheckGroup("SHARP group", 7, {10, 20, 10}).find("twice"), std::string::npos);
    ASSERT_EQ(e.CheckGroup("SHARP group", 7, {10, 20, 30}), "");
    e.RegisterGroup(7, {10, 20, 30});
    EXPECT_NE(e.CheckGroup("SHARP group", 7, {1, 2}).find("already"), std::string::npos);
    const auto* g = e.FindGroup(7);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(SwitchReductionEngine::MemberIndex(*g, 20), 1);
    EXPECT_EQ(SwitchReductionEngine::MemberIndex(*g, 11), -1);
    using Outcome = SwitchReductionEngine::Outcome;
    std::vector<SwitchReductionEngine::Held> all;
    auto held = [](uint32_t port) {
        return SwitchReductionEngine::Held{Create<Packet>(100), port, 0, NanoSeconds(port)};
    };
    EXPECT_EQ(e.Contribute(7, 3, 0, held(1), all), Outcome::Held);
    EXPECT_EQ(e.Contribute(7, 3, 0, held(1), all), Outcome::Duplicate);
    EXPECT_EQ(e.Contribute(7, 3, 2, held(3), all), Outcome::Held);
    EXPECT_EQ(e.GetHeldPackets(), 2u);
    EXPECT_EQ(e.GetPendingChunks(), 1u);
    EXPECT_EQ(e.Contribute(7, 3, 1, held(2), all), Outcome::Complete);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[2].inPort, 3u); // by member index
    EXPECT_EQ(e.GetHeldPackets(), 0u);
    EXPECT_EQ(e.GetPendingChunks(), 0u);
    EXPECT_EQ(e.GetReducedChunks(), 1u);
    // 1000 B at 8 Gb/s: 1 us each, back to back; unlimited: the data's own tail.
    EXPECT_EQ(e.EngineTail(5, 8e9, 1000, Time(0)), MicroSeconds(1));
    EXPECT_EQ(e.EngineTail(5, 8e9, 1000, Time(0)), MicroSeconds(2));
    EXPECT_EQ(e.EngineTail(6, 8e9, 1000, MicroSeconds(3)), MicroSeconds(3));
    EXPECT_EQ(e.EngineTail(5, 0, 1000, NanoSeconds(7)), NanoSeconds(7));
}

// A rail's HCAs hang off one leaf: with SHARP the plane reduces the rail there, one reduced
// chunk per packet of the buffer, each member getting the whole buffer back; not across
// leaves (two rails) and not without SharpEnabled.  4 MiB on 2 servers: 4 MiB / the HCA's
// payload rate (the results stream down as the contributions stream up), +3 %.
TEST_F(CollNetTest, SharpPlaneReducesARailInItsLeafSwitch)
{
    Build(2, false);
    EXPECT_FALSE(m_ib->CanReduceInSwitch({0, 8}));
    Reset();
    Build(2, true);
    EXPECT_TRUE(m_ib->CanReduceInSwitch({0, 8}));
    EXPECT_FALSE(m_ib->CanReduceInSwitch({0, 0}));
    EXPECT_FALSE(m_ib->CanReduceInSwitch({0}));
    std::vector<uint32_t> done;
    Time last;
    const uint64_t bytes = 4 * MiB;
    m_ib->StartInSwitch(InSwitchReductionPlane::Op::AllReduce,
                        {0, 8},
                        bytes,
                        Callback<void, uint32_t>([&done, &last](uint32_t r) {
                            done.push_back(r);
                            last = Simulator::Now();
                        }));
    Simulator::Run();
    std::sort(done.begin(), done.end());
    EXPECT_EQ(done, (std::vector<uint32_t>{0, 8}));
    EXPECT_EQ(m_ib->GetSharpInFlight(), 0u);
    const uint64_t packet =
        AdaptivePacketBytes(bytes, m_ib->GetMaxPayloadBytes(), m_ib->GetMaxBurstBytes(), 32);
    EXPECT_EQ(SharpReducedChunks(), (bytes + packet - 1) / packet);
    const double model_us = bytes / (m_ib->GetLineRate_gbyte_per_s(0) * 1e3);
    const double sim_us = last.GetSeconds() * 1e6;
    std::cout << "SHARP 4 MiB over a rail of 2: " << sim_us << " us, model " << model_us << "\n";
    EXPECT_GE(sim_us, model_us);
    EXPECT_LE(sim_us, model_us * 1.03); // +3 %: first packet up, last packet down
}

// A two-level tree: 8 one-GPU servers under radix-4 switches put the rail's HCAs on four
// leaves (2 each) below two spines; each leaf aggregates its two members and sends one
// aggregate to the root spine, which returns the result to the four leaves, each
// multicasting it to its members.  Every rank gets the whole 4 MiB back, every switch of the
// tree reduces every packet once (4 leaves + the root), the links balance (conservation), and
// the time is
// still 4 MiB at the HCA's payload rate (a spine link carries one leaf's aggregate, the
// same rate as one member's), 0 / +5 % (two more hops each way).
TEST_F(CollNetTest, SharpTwoLevelTreeThroughASpine)
{
    ClusterConfig c;
    ASSERT_EQ(c.ApplyPreset("dgx-h100"), "");
    c.servers = 8;
    c.gpusPerServer = 1;
    c.ibSwitchRadix = 4;
    c.endpoint = "ideal";
    c.sharp = true;
    ASSERT_EQ(c.Validate(), "");
    ASSERT_EQ(ClusterIbShape::Compute(c).tiers, 2u);
    ASSERT_EQ(ClusterIbShape::Compute(c).leavesPerRail, 4u);
    m_cluster = std::make_unique<ClusterHelper>(c);
    m_cluster->SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
    ASSERT_EQ(m_cluster->TryBuild(), "");
    m_transport = m_cluster->InstallTransport("world");
    for (uint32_t i = 0; i < m_transport->GetNPlanes(); ++i)
    {
        if (auto ib = DynamicCast<InfinibandTransportPlane>(m_transport->GetPlane(i)))
        {
            m_ib = ib;
        }
    }
    ASSERT_TRUE(m_ib);
    const std::vector<uint32_t> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
    ASSERT_TRUE(m_ib->CanReduceInSwitch(ranks));
    std::vector<uint32_t> done;
    Time last;
    const uint64_t bytes = 4 * MiB;
    m_ib->StartInSwitch(InSwitchReductionPlane::Op::AllReduce,
                        ranks,
                        bytes,
                        Callback<void, uint32_t>([&done, &last](uint32_t r) {
                            done.push_back(r);
                            last = Simulator::Now();
                        }));
    Simulator::Run();
    std::sort(done.begin(), done.end());
    EXPECT_EQ(done, ranks);
    const uint64_t packet =
        AdaptivePacketBytes(bytes, m_ib->GetMaxPayloadBytes(), m_ib->GetMaxBurstBytes(), 32);
    EXPECT_EQ(SharpReducedChunks(), 5 * ((bytes + packet - 1) / packet));
    const CreditLinkConservationReport report = m_cluster->CheckConservation(true);
    EXPECT_TRUE(report.Ok()) << report.Describe();
    const double model_us = bytes / (m_ib->GetLineRate_gbyte_per_s(0) * 1e3);
    const double sim_us = last.GetSeconds() * 1e6;
    std::cout << "SHARP 4 MiB, two-level tree of 8: " << sim_us << " us, model " << model_us
              << "\n";
    EXPECT_GE(sim_us, model_us);
    EXPECT_LE(sim_us, model_us * 1.05);
}

// CollNetDirect on 2 and 4 servers with 100 Gb/s HCAs: the network binds (each GPU's NVLink
// reduce-scatter and all-gather move 2 x 7/8 of 64 MiB at 423.5 GB/s = 277 us), and SHARP
// moves each rail's 1/8 of the buffer up and down once whatever the node count:
// time = (S/8) / the HCA's payload rate, the same on 4 servers as on 2, so busbw grows as
// 2(n-1)/n.  0 / +3 % (the first slice's reduce-scatter and the last one's all-gather).
TEST_F(CollNetTest, CollNetDirectAtTheWireRateOnTwoAndFourServers)
{
    const uint64_t bytes = 64 * MiB;
    for (uint32_t servers : {2u, 4u})
    {
        SCOPED_TRACE(servers);
        Build(servers, true, "ideal", "", 100);
        const double rate = m_ib->GetLineRate_gbyte_per_s(0);
        const auto r =
            Run(Call(CollectiveKind::AllReduce, 8 * servers, bytes, Algo::CollNetDirect));
        EXPECT_EQ(r.algorithm, "collnetdirect");
        const double model_us = bytes / 8.0 / (rate * 1e3);
        std::cout << "CollNetDirect " << servers << " servers at 100 Gb/s: " << Us(r)
                  << " us (busbw " << r.busbw_gbyte_per_s << " GB/s), model " << model_us
                  << " us\n";
        EXPECT_GE(Us(r), model_us);
        EXPECT_LE(Us(r), model_us * 1.03);
        Reset();
    }
}

// The engine cap: SharpEngineRatePerPort 100 Gb/s on 400 Gb/s HCAs delivers each member's
// results at 12.5 GB/s: time = (S/8) / 12.5 GB/s on 2 and on 4 servers.  CollNetDirect 0 /
// +3 % (its first slice's reduce-scatter, last slice's all-gather); CollNetChain the same
// steady state (its chains move the same NVLink bytes, its heads the same 1/8 each), 0 / +7 %:
// its fill is a 128 KiB chunk climbing 7 NVLink hops and coming down 7 (about 30 us).
TEST_F(CollNetTest, CollNetAtTheSharpEngineCapOnTwoAndFourServers)
{
    const uint64_t bytes = 64 * MiB;
    const double cap_gbyte_per_s = 12.5;
    for (uint32_t servers : {2u, 4u})
    {
        for (Algo a : {Algo::CollNetDirect, Algo::CollNetChain})
        {
            SCOPED_TRACE(std::to_string(servers) + " " + CollectiveAlgorithmName(a));
            Build(servers, true, "ideal", "", 400, 8, DataRate("100Gb/s"));
            const auto r = Run(Call(CollectiveKind::AllReduce, 8 * servers, bytes, a));
            const double model_us = bytes / 8.0 / (cap_gbyte_per_s * 1e3);
            std::cout << CollectiveAlgorithmName(a) << " " << servers
                      << " servers, engine 100 Gb/s: " << Us(r) << " us (busbw "
                      << r.busbw_gbyte_per_s << " GB/s), model " << model_us << " us\n";
            EXPECT_GE(Us(r), model_us);
            EXPECT_LE(Us(r), model_us * (a == Algo::CollNetChain ? 1.07 : 1.03));
            Reset();
        }
    }
}

// The h100 endpoint sets that cap itself: NCCL's CollNet efficiency (0.85 from compute
// capability 9.0) of the 48 GB/s HCA path, 40.8 GB/s of results to each member.  With two
// GPUs a server the network binds (each GPU's NVLink moves half the buffer each way), so a
// CollNetDirect allreduce of 256 MiB on 2 servers takes (S/2) / 40.8 GB/s.  0 / +5 % (the
// first slice's reduce-scatter and the last one's all-gather, NCCL's base and network
// latencies).  The ideal set leaves the engine at the wire: below the cap's time.
TEST_F(CollNetTest, EndpointSetCapsTheSharpEngineAtNcclsCollNetEfficiency)
{
    const uint64_t bytes = 256 * MiB;
    const double model_us = bytes / 2.0 / (0.85 * 48.0 * 1e3);
    Build(2, true, "h100", "1", 400, 2);
    const auto h100 = Run(Call(CollectiveKind::AllReduce, 4, bytes, Algo::CollNetDirect));
    EXPECT_EQ(h100.algorithm, "collnetdirect");
    std::cout << "CollNetDirect 2 x 2 H100, 256 MiB, h100 endpoint: " << Us(h100) << " us (busbw "
              << h100.busbw_gbyte_per_s << " GB/s), model " << model_us << " us\n";
    EXPECT_GE(Us(h100), model_us);
    EXPECT_LE(Us(h100), model_us * 1.05);
    Reset();
    Build(2, true, "ideal", "", 400, 2);
    const auto ideal = Run(Call(CollectiveKind::AllReduce, 4, bytes, Algo::CollNetDirect));
    EXPECT_LT(Us(ideal), model_us * 0.9);
}

// NCCL_COLLNET_ENABLE=1 needs SHARP switches (refused naming the variable and --sharp);
// with them the tuner weighs CollNet by NCCL's formulas on 2 x dgx-h100 (NVLink 370.8 GB/s,
// the HCA 48 GB/s behind PCIe):
//   CollNetDirect latency 2 (3.7 + 7 x 0.4) + 31 = 44.0 us, busbw 8 x 48 x 0.85 = 326.4 GB/s
//   CollNetChain  latency 2 x 7 x 2.8 + 30 = 69.2 us, busbw min(370.8, 2 x 8 x 48) = 370.8
// (algbw = busbw / 2, tuning.cc's ratio 0.5), and NVLS across the nodes (NVLS with CollNet)
//   latency 25 + 18 = 43.0 us, busbw min(370.8 x 0.85 x 15/16 x 2 = 591.0, 8 x 48) = 384
// (algbw = busbw x 16 / 30), and takes the fastest of every candidate; off, it never takes
// CollNet nor NVLS across nodes.  Predictions exact to 1e-9; choices against the candidates'
// minimum.
TEST_F(CollNetTest, TunerTakesCollNetOnlyWhenEnabledByItsPredictedTimes)
{
    ClusterConfig plain;
    ASSERT_EQ(plain.ApplyPreset("dgx-h100"), "");
    plain.servers = 2;
    plain.nccl.collNet = "1";
    std::string field;
    const std::string error = plain.Validate(&field);
    EXPECT_EQ(field, "NCCL_COLLNET_ENABLE") << error;
    EXPECT_NE(error.find("--sharp"), std::string::npos) << error;

    Build(2, true, "auto", "1");
    Ptr<NcclEndpoint> e = m_engine->GetEndpoint();
    ASSERT_TRUE(e);
    EXPECT_TRUE(e->GetCollNetEnable());
    NcclTuneInput in;
    in.kind = CollectiveKind::AllReduce;
    in.ranks = 16;
    in.nodes = 2;
    in.bytes = MiB;
    in.intra_gbyte_per_s = 370.8;
    in.inter_gbyte_per_s = 48;
    BooleanValue flag;
    m_engine->GetAttribute("RingsAcrossDomains", flag);
    in.multiRailRings = flag.Get();
    m_engine->GetAttribute("HierarchicalPipeline", flag);
    in.pipelinedHierarchical = flag.Get();
    const auto s = NcclProtocolId::Simple;
    EXPECT_NEAR(e->PredictLatency_us(in, Algo::CollNetDirect, s), 44.0, 1e-9 * 44);
    EXPECT_NEAR(e->PredictLatency_us(in, Algo::CollNetChain, s), 69.2, 1e-9 * 69.2);
    EXPECT_NEAR(e->PredictBusBandwidth_gbyte_per_s(in, Algo::CollNetDirect, s), 326.4, 1e-9 * 326);
    EXPECT_NEAR(e->PredictBusBandwidth_gbyte_per_s(in, Algo::CollNetChain, s), 370.8, 1e-9 * 370);
    EXPECT_EQ(e->PredictBusBandwidth_gbyte_per_s(in, Algo::CollNetDirect, NcclProtocolId::Ll), 0);
    EXPECT_NEAR(e->PredictTime_us(in, Algo::CollNetDirect, s),
                44.0 + MiB / (1e3 * 326.4 / 2),
                1e-9 * 60);
    EXPECT_NEAR(e->PredictLatency_us(in, Algo::Nvls, s), 43.0, 1e-9 * 43);
    EXPECT_NEAR(e->PredictBusBandwidth_gbyte_per_s(in, Algo::Nvls, s), 384.0, 1e-9 * 384);
    const std::vector<Algo> candidates = {Algo::Ring,
                                          Algo::Tree,
                                          Algo::NvlsTree,
                                          Algo::CollNetDirect,
                                          Algo::CollNetChain,
                                          Algo::Nvls};
    auto fastest = [&](uint64_t bytes, bool collNet) {
        NcclTuneInput x = in;
        x.bytes = bytes;
        double best = -1;
        for (Algo a : candidates)
        {
            if (!collNet &&
                (a == Algo::CollNetDirect || a == Algo::CollNetChain || a == Algo::Nvls))
            {
                continue;
            }
            for (auto p : {NcclProtocolId::Ll, NcclProtocolId::Ll128, NcclProtocolId::Simple})
            {
                const double t = e->PredictTime_us(x, a, p);
                if (t >= 0 && (best < 0 || t < best))
                {
                    best = t;
                }
            }
        }
        return best;
    };
    bool tookCollNet = false;
    for (uint64_t bytes = 8; bytes <= 1024 * MiB; bytes *= 8)
    {
        SCOPED_TRACE(bytes);
        const CollectiveResolution how =
            m_engine->Resolve(Call(CollectiveKind::AllReduce, 16, bytes, Algo::Auto));
        EXPECT_NEAR(how.predicted_us, fastest(bytes, true), 1e-9 * how.predicted_us);
        tookCollNet |= how.algorithm == Algo::CollNetDirect ||
                       how.algorithm == Algo::CollNetChain || how.algorithm == Algo::Nvls;
    }
    EXPECT_TRUE(tookCollNet);
    // 43.0 + 1 MiB / 204.8 GB/s = 48.1 us against CollNetDirect's 50.4, NVLSTree's 71.1.
    EXPECT_EQ(m_engine->Resolve(Call(CollectiveKind::AllReduce, 16, MiB, Algo::Auto)).algorithm,
              Algo::Nvls);
    e->SetAttribute("CollNetEnable", BooleanValue(false));
    for (uint64_t bytes = 8; bytes <= 1024 * MiB; bytes *= 8)
    {
        SCOPED_TRACE(bytes);
        const CollectiveResolution how =
            m_engine->Resolve(Call(CollectiveKind::AllReduce, 16, bytes, Algo::Auto));
        EXPECT_NE(how.algorithm, Algo::CollNetDirect);
        EXPECT_NE(how.algorithm, Algo::CollNetChain);
        EXPECT_NE(how.algorithm, Algo::Nvls);
        EXPECT_NEAR(how.predicted_us, fastest(bytes, false), 1e-9 * how.predicted_us);
    }
    try
    {
        m_engine->Resolve(Call(CollectiveKind::AllReduce, 16, MiB, Algo::CollNetDirect));
        ADD_FAILURE() << "collnetdirect resolved with CollNetEnable off";
    }
    catch (const CollectiveError& err)
    {
        EXPECT_NE(std::string(err.what()).find("NCCL_COLLNET_ENABLE"), std::string::npos);
    }
    // Without SHARP switches an explicit CollNet names what is missing.
    Reset();
    Build(2, false);
    try
    {
        m_engine->Resolve(Call(CollectiveKind::AllReduce, 16, MiB, Algo::CollNetChain));
        ADD_FAILURE() << "collnetchain resolved without SHARP switches";
    }
    catch (const CollectiveError& err)
    {
        EXPECT_NE(std::string(err.what()).find("SHARP"), std::string::npos) << err.what();
    }
}

// NVLS across nodes (NCCL's NVLS with CollNet): per slice the NVSwitches reduce-scatter, the
// SHARP switches reduce each head's share over its rail, the NVSwitches gather it back, all
// in switches (no message between GPUs).  4 x dgx-h100, 1 GiB: the phases overlap slice by
// slice, so the slowest binds, the NVSwitch engine's 0.85 x 20.6 GB/s x 18 links = 315.2 GB/s
// a GPU (the heads' NICs, 8 x 48 = 384, do not); one after the other the call could not pass
// 1 / (1 / 315.2 + 1 / 384) = 173.1 GB/s algbw.  algbw within 70-100 % of 315.2, above 1.2 x
// 173.1.  Without NCCL_COLLNET_ENABLE it is refused, and for allgather across nodes.
TEST_F(CollNetTest, NvlsAcrossNodesReducesInBothSwitchesPipelined)
{
    Build(4, true, "auto", "1");
    const CollectiveResult r = Run(Call(CollectiveKind::AllReduce, 32, 1024 * MiB, Algo::Nvls));
    EXPECT_EQ(r.algorithm, "nvls");
    EXPECT_EQ(r.messages, 0u);
    EXPECT_GT(SharpReducedChunks(), 0u);
    std::cout << "[collnet] nvls across 4 x dgx-h100, 1 GiB: algbw " << r.algbw_gbyte_per_s
              << " GB/s, busbw " << r.busbw_gbyte_per_s << " GB/s\n";
    EXPECT_GT(r.algbw_gbyte_per_s, 0.7 * 315.2);
    EXPECT_LT(r.algbw_gbyte_per_s, 315.2);
    EXPECT_GT(r.algbw_gbyte_per_s, 1.2 * 173.1);
    for (const auto& [kind, collNet, why] :
         {std::tuple<CollectiveKind, const char*, const char*>{CollectiveKind::AllReduce,
                                                               "",
                                                               "NCCL_COLLNET_ENABLE"},
          {CollectiveKind::AllGather, "1", "allreduce only"}})
    {
        Reset();
        Build(4, true, "auto", collNet);
        try
        {
            m_engine->Resolve(Call(kind, 32, 1024 * MiB, Algo::Nvls));
            ADD_FAILURE() << "nvls across nodes resolved: " << why;
        }
        catch (const CollectiveError& err)
        {
            EXPECT_NE(std::string(err.what()).find(why), std::string::npos) << err.what();
        }
    }
}

// PAT at one GPU per node: ceil(log2 p) steps, p messages each (8 ranks: 3 steps, 24
// messages; 5 ranks: 3 steps, 15), an 8-byte allgather taking PAT's base 8 us + 2.8 us per
// rank, then one network step (the tree's 14 us / 3.5 = 4 us) per step and the wire's few
// hundred ns: 0 / +0.5 us per step.  On 8 ranks that is the tuner's own PAT latency
// (8 + log2(8) x 4 + 8 x 2.8 = 42.4 us); the tuner weighs PAT beside the ring there.
TEST_F(CollNetTest, PatTakesLog2StepsAtOneGpuPerNode)
{
    for (uint32_t p : {8u, 5u})
    {
        for (CollectiveKind kind : {CollectiveKind::AllGather, CollectiveKind::ReduceScatter})
        {
            SCOPED_TRACE(std::to_string(p) + " " + CollectiveKindName(kind));
            Build(p, false, "auto", "", 400, 1);
            const uint32_t steps = std::ceil(std::log2(p));
            const auto r = Run(Call(kind, p, 8, Algo::Pat));
            EXPECT_EQ(r.algorithm, "pat");
            EXPECT_EQ(r.messages, uint64_t(p) * steps);
            const double model_us = 8 + 2.8 * p + steps * 4.0;
            std::cout << "PAT " << CollectiveKindName(kind) << " of 8 B on " << p
                      << " nodes: " << Us(r) << " us, model " << model_us << " us\n";
            EXPECT_GE(Us(r), model_us);
            EXPECT_LE(Us(r), model_us + 0.5 * steps);
            if (p == 8)
            {
                NcclTuneInput in;
                in.kind = kind;
                in.ranks = p;
                in.nodes = p;
                in.bytes = 8;
                in.inter_gbyte_per_s = 48; // one GPU per domain: no NVLink rate
                Ptr<NcclEndpoint> e = m_engine->GetEndpoint();
                EXPECT_NEAR(e->PredictLatency_us(in, Algo::Pat, NcclProtocolId::Simple),
                            model_us,
                            1e-9 * model_us);
                EXPECT_EQ(e->PredictTime_us(in, Algo::Pat, NcclProtocolId::Ll), -1); // Simple
                const CollectiveResolution how = m_engine->Resolve(Call(kind, p, 8, Algo::Auto));
                double best = -1;
                for (Algo a : {Algo::Ring, Algo::Pat})
                {
                    for (auto q :
                         {NcclProtocolId::Ll, NcclProtocolId::Ll128, NcclProtocolId::Simple})
                    {
                        const double t = e->PredictTime_us(in, a, q);
                        best = t >= 0 && (best < 0 || t < best) ? t : best;
                    }
                }
                EXPECT_NEAR(how.predicted_us, best, 1e-9 * best);
            }
            Reset();
        }
    }
    // More than one GPU per node: NCCL has no PAT there.
    Build(2, false, "auto");
    EXPECT_THROW(m_engine->Resolve(Call(CollectiveKind::AllGather, 16, MiB, Algo::Pat)),
                 CollectiveError);
}

} // namespace
