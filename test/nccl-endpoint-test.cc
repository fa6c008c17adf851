/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The GPU/NCCL endpoint model: each protocol's cost on two ranks against latency + bytes /
// effective bandwidth, the tuner's crossovers against its own predicted-time formula, the
// GPU's endpoint rates (NVLink stores, the HCA behind PCIe), the overrides' refusals, and
// the ideal set as the physics-only model.

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-engine.h"
#include "ns3/collective-schedule.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/gpu-endpoint-set.h"
#include "ns3/gpu-transport.h"
#include "ns3/names.h"
#include "ns3/nccl-endpoint.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>
#include <iostream>
#include <memory>

using namespace ns3;

namespace
{
constexpr uint64_t MiB = 1 << 20;

class NcclEndpointTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
        Names::Clear();
    }

    // dgx-h100 servers with the h100 endpoint (or \p endpoint), a transport and an engine.
    struct Fabric
    {
        explicit Fabric(uint32_t servers, const std::string& endpoint = "auto")
        {
            ClusterConfig c;
            EXPECT_EQ(c.ApplyPreset("dgx-h100"), "");
            c.servers = servers;
            c.endpoint = endpoint;
            cluster = std::make_unique<ClusterHelper>(c);
            cluster->SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
            EXPECT_EQ(cluster->TryBuild(), "");
            transport = cluster->InstallTransport("world");
            engine = cluster->InstallCollectiveEngine(transport);
        }

        // Runs one call to completion: its result.
        CollectiveResult Run(CollectiveKind kind,
                             std::vector<uint32_t> ranks,
                             uint64_t bytes,
                             CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto)
        {
            CollectiveCall call;
            call.kind = kind;
            call.algorithm = algorithm;
            call.ranks = std::move(ranks);
            call.bytes = bytes;
            CollectiveResult result;
            engine->Start(call,
                          CollectiveEngine::DoneCallback(
                              [&result](const CollectiveResult& r) { result = r; }));
            Simulator::Run();
            return result;
        }

        std::unique_ptr<ClusterHelper> cluster;
        Ptr<GpuTransport> transport;
        Ptr<CollectiveEngine> engine;
    };
};

// Between two clusters of one test: ns-3's names and events start afresh.
void
Reset()
{
    Simulator::Destroy();
    Names::Clear();
}

double
Us(const CollectiveResult& r)
{
    return (r.end - r.start).GetSeconds() * 1e6;
}

// Two GPUs of one dgx-h100, one channel, allgather of 8 MiB: each rank receives 4 MiB in one
// step.  Time = base latency + one NVLink hop + 4 MiB / the rate that binds:
//   LL     6.6 + 0.6 us, 141 GB/s (llMaxBws; its 2x wire bytes, 282 GB/s, fit the 370.8 GB/s
//          NVLink endpoint)                                   = 36.9 us
//   LL128 14.0 + 1.9 us, 36.7 GB/s per channel (perChMaxRingLL128Bws) = 130.2 us
//   Simple 8.4 us + 4 x 3.4 us, the endpoint's 18 x 20.6 GB/s = 370.8 GB/s = 33.3 us: its
//          4 MiB are two 2 MiB chunks (RingChunkSteps 4 x 512 KiB) of two 1 MiB slices
//          each, and each slice's fence and flag (the hop latency) follow its data
// Tolerance 3 % + 1 us: the wire's own latency and the last piece's serialisation.
TEST_F(NcclEndpointTest, EachProtocolOnTwoRanksIsLatencyPlusBytesOverItsBandwidth)
{
    struct Case
    {
        const char* proto;
        double latency_us;
        double gbyte_per_s;
    };

    for (const Case& c : {Case{"LL", 6.6 + 0.6, 141.0},
                          Case{"LL128", 14.0 + 1.9, 36.7},
                          Case{"Simple", 8.4 + 4 * 3.4, 370.8}})
    {
        SCOPED_TRACE(c.proto);
        Fabric f(1);
        Ptr<NcclEndpoint> e = f.engine->GetEndpoint();
        ASSERT_TRUE(e);
        e->SetAttribute("Protocols", StringValue(c.proto));
        e->SetAttribute("MinChannels", UintegerValue(1));
        e->SetAttribute("MaxChannels", UintegerValue(1));
        const uint64_t n = 8 * MiB;
        const CollectiveResult r = f.Run(CollectiveKind::AllGather, {0, 1}, n);
        EXPECT_EQ(r.protocol, CanonicalCollectiveName(c.proto));
        EXPECT_EQ(r.channels, 1u);
        const double model_us = c.latency_us + (n / 2) / (c.gbyte_per_s * 1e3);
        std::cout << "[endpoint] " << c.proto << " 2 ranks 8 MiB allgather: " << Us(r)
                  << " us, model " << model_us << " us\n";
        EXPECT_NEAR(Us(r), model_us, 0.03 * model_us + 1.0);
        Reset();
    }
}

// The tuner picks the protocol with the smallest latency + bytes / bandwidth.  For the 8-GPU
// ring allreduce the two crossovers follow from its own figures, S* = (lat_b - lat_a) /
// (1 / bw_a - 1 / bw_b) with algbw = busbw / 1.75: Choose must pick a below S* and b above
// (1 % either side), and at S* both predictions agree to 0.1 %.
TEST_F(NcclEndpointTest, TunerCrossoversFollowItsPredictedTimes)
{
    Ptr<NcclEndpoint> e = MakeNcclEndpoint([] {
        GpuEndpointSet s;
        EXPECT_TRUE(FindGpuEndpointSet("h100", s));
        return s;
    }());
    ASSERT_TRUE(e);
    NcclTuneInput in;
    in.kind = CollectiveKind::AllReduce;
    in.ranks = 8;
    in.nodes = 1;
    in.intra_gbyte_per_s = 370.8;
    in.runnable = {CollectiveAlgorithm::Ring};
    using P = NcclProtocolId;
    for (auto [a, b] : {std::pair<P, P>{P::Ll, P::Ll128}, std::pair<P, P>{P::Ll128, P::Simple}})
    {
        const double la = e->PredictLatency_us(in, CollectiveAlgorithm::Ring, a);
        const double lb = e->PredictLatency_us(in, CollectiveAlgorithm::Ring, b);
        const double ba =
            e->PredictBusBandwidth_gbyte_per_s(in, CollectiveAlgorithm::Ring, a) / 1.75;
        const double bb =
            e->PredictBusBandwidth_gbyte_per_s(in, CollectiveAlgorithm::Ring, b) / 1.75;
        ASSERT_GT(lb, la);
        ASSERT_GT(bb, ba);
        const double s = (lb - la) / (1 / (ba * 1e3) - 1 / (bb * 1e3)); // bytes
        in.bytes = static_cast<uint64_t>(s);
        EXPECT_NEAR(e->PredictTime_us(in, CollectiveAlgorithm::Ring, a),
                    e->PredictTime_us(in, CollectiveAlgorithm::Ring, b),
                    1e-3 * e->PredictTime_us(in, CollectiveAlgorithm::Ring, a));
        in.bytes = static_cast<uint64_t>(0.99 * s);
        EXPECT_EQ(e->Choose(in).protocol, a) << NcclProtocolName(a) << " below " << s << " B";
        in.bytes = static_cast<uint64_t>(1.01 * s);
        EXPECT_EQ(e->Choose(in).protocol, b) << NcclProtocolName(b) << " above " << s << " B";
    }
    // Channels: NCCL drops one while bytes < channels x threads x threshold: Simple (512
    // threads x 64 B) keeps all 32 from 1 MiB, 4 at 128 KiB; the floor is MinChannels.
    EXPECT_EQ(e->Channels(CollectiveAlgorithm::Ring, P::Simple, MiB, 8), 32u);
    EXPECT_EQ(e->Channels(CollectiveAlgorithm::Ring, P::Simple, 128 * 1024, 8), 4u);
    EXPECT_EQ(e->Channels(CollectiveAlgorithm::Ring, P::Simple, 8, 8), 1u);
    EXPECT_EQ(e->Channels(CollectiveAlgorithm::Nvls, P::Simple, 8, 8), 16u);
}

// The HCA sits behind PCIe Gen5 x16, 48 GB/s in NCCL's topology model: one rank's 256 MiB to
// a GPU of the other server cannot complete faster than 256 MiB / 48 GB/s = 5592 us, where
// the NDR wire alone (ideal set) moves it in 256 MiB x 4122/4096 / 50 GB/s = 5402 us.
// Tolerance 1 % on each.
TEST_F(NcclEndpointTest, NicBehindPcieCapsAGpusNetworkRate)
{
    const uint64_t n = 256 * MiB;
    for (auto [endpoint, gbyte] : {std::pair<const char*, double>{"h100", 48.0},
                                   std::pair<const char*, double>{"ideal", 50.0 * 4096 / 4122}})
    {
        SCOPED_TRACE(endpoint);
        Fabric f(2, endpoint);
        bool done = false;
        Time end;
        f.transport->SendMessage(0,
                                 8,
                                 n,
                                 GpuTransport::DoneCallback(),
                                 GpuTransport::DoneCallback([&done, &end]() {
                                     done = true;
                                     end = Simulator::Now();
                                 }));
        Simulator::Run();
        ASSERT_TRUE(done);
        const double model_us = n / (gbyte * 1e3);
        std::cout << "[endpoint] " << endpoint
                  << " 256 MiB over InfiniBand: " << end.GetSeconds() * 1e6 << " us, model "
                  << model_us << " us\n";
        EXPECT_NEAR(end.GetSeconds() * 1e6, model_us, 0.01 * model_us);
        Reset();
    }
}

// The SMs drive NVLink at 20.6 GB/s per link (NCCL SM90_NVLINK_BW): a 256 MiB ring allreduce
// over 8 GPUs levels off below 18 x 20.6 = 370.8 GB/s busbw, not at the 423 GB/s of payload
// the links carry (ideal set).  With h100 each of the 32 channels moves 1 MiB chunks in two
// 512 KiB slices at 370.8 / 32 GB/s (45.2 us), each followed by its 3.4 us fence and flag:
// 370.8 x 45.2 / (45.2 + 3.4) = 345.0 GB/s.  Within -3 % / +0.5 % of each.
TEST_F(NcclEndpointTest, RingBusBandwidthStopsAtTheGpusNvlinkRate)
{
    const double slice_us = 512.0 * 1024 / (370.8 / 32 * 1e3);
    for (auto [endpoint, gbyte] :
         {std::pair<const char*, double>{"h100", 370.8 * slice_us / (slice_us + 3.4)},
          std::pair<const char*, double>{"ideal", 423.5}})
    {
        SCOPED_TRACE(endpoint);
        Fabric f(1, endpoint);
        const CollectiveResult r = f.Run(CollectiveKind::AllReduce,
                                         {0, 1, 2, 3, 4, 5, 6, 7},
                                         256 * MiB,
                                         CollectiveAlgorithm::Ring);
        std::cout << "[endpoint] " << endpoint << " ring 256 MiB busbw " << r.busbw_gbyte_per_s
                  << " GB/s\n";
        EXPECT_GT(r.busbw_gbyte_per_s, 0.97 * gbyte);
        EXPECT_LT(r.busbw_gbyte_per_s, 1.005 * gbyte);
        Reset();
    }
}

// A small allreduce costs NCCL's base latency plus one hop latency per ring step: 8 GPUs,
// ring LL, 2 x 7 steps: 6.6 + 14 x 0.6 = 15.0 us (plus 14 wire hops of ~0.1 us: tolerance
// +2 us); the ideal set has no such floor (below 2 us).
TEST_F(NcclEndpointTest, SmallAllReduceHasTheProtocolsLatencyFloor)
{
    Fabric f(1);
    f.engine->GetEndpoint()->SetAttribute("Algorithms", StringValue("Ring"));
    const CollectiveResult r = f.Run(CollectiveKind::AllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, 8);
    EXPECT_EQ(r.algorithm, "ring");
    EXPECT_EQ(r.protocol, "ll");
    std::cout << "[endpoint] 8 B ring allreduce: " << Us(r) << " us\n";
    EXPECT_GT(Us(r), 15.0);
    EXPECT_LT(Us(r), 17.0);
    Reset();
    Fabric ideal(1, "ideal");
    EXPECT_FALSE(ideal.engine->GetEndpoint());
    const CollectiveResult i = ideal.Run(CollectiveKind::AllReduce,
                                         {0, 1, 2, 3, 4, 5, 6, 7},
                                         8,
                                         CollectiveAlgorithm::Ring);
    EXPECT_EQ(i.protocol, "ideal");
    EXPECT_LT(Us(i), 2.0);
}

// A ring channel moves at most its share of NCCL's ring graph: the ring's rate / the call's
// channels, 370.8 / 32 = 11.59 GB/s on one dgx-h100 (0.1 %).  An 8-GPU allgather of 32 MiB is
// one loop of the ring: each of NCCL's 32 channels moves a 128 KiB chunk per rank and step,
// in two 64 KiB slices (prims_simple.h: half a chunk, at least 32 KiB); a simulated channel
// stands for 4 of them (46.35 GB/s, slices of 256 KiB).  Each receiving channel takes 7 steps
// x 2 slices one after the other, each slice its data and then its fence and flag (3.4 us), so
// the call takes at least base + 14 x (3.4 + 256 KiB / 46.35 GB/s) = 8.4 + 14 x (3.4 + 5.66)
// = 135.2 us, against 79.2 us of bandwidth alone (7/8 x 32 MiB / 370.8 GB/s).  Within
// 0 / +12 % of it.
TEST_F(NcclEndpointTest, RingChannelsMoveTheirShareOfTheGraph)
{
    Fabric f(1);
    CollectiveCall call;
    call.kind = CollectiveKind::AllGather;
    call.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
    call.bytes = 32 * MiB;
    const CollectiveResolution how = f.engine->Resolve(call);
    EXPECT_EQ(how.channels, 32u);
    EXPECT_EQ(how.simulatedChannels, 8u);
    EXPECT_NEAR(how.graphChannel_gbyte_per_s, 370.8 / 32, 0.001 * 370.8 / 32);
    const CollectiveResult r = f.Run(CollectiveKind::AllGather, call.ranks, call.bytes);
    const double model_us = 8.4 + 14 * (3.4 + 256.0 * 1024 / (4 * 370.8 / 32 * 1e3));
    std::cout << "[endpoint] 32 MiB allgather, 8 GPUs: " << Us(r) << " us, model " << model_us
              << " us\n";
    EXPECT_GE(Us(r), model_us);
    EXPECT_LE(Us(r), 1.12 * model_us);
}

// NCCL's overrides are refused as NCCL refuses them, naming the variable.
TEST_F(NcclEndpointTest, OverridesAreRefusedNamingTheVariable)
{
    struct Case
    {
        const char* preset;
        ClusterConfig::NcclEnvironment env;
        const char* field;
        const char* message;
    };

    auto env = [](auto edit) {
        ClusterConfig::NcclEnvironment e;
        edit(e);
        return e;
    };
    const std::vector<Case> cases = {
        {"dgx-h100", env([](auto& e) { e.algo = "Ring,Butterfly"; }), "NCCL_ALGO", "Butterfly"},
        {"dgx-h100", env([](auto& e) { e.proto = "LL256"; }), "NCCL_PROTO", "LL256"},
        {"dgx-h100", env([](auto& e) { e.algo = "ring;tree"; }), "NCCL_ALGO", "prefix"},
        {"dgx-h100", env([](auto& e) { e.nvlsEnable = "yes"; }), "NCCL_NVLS_ENABLE", "0, 1 or 2"},
        {"dgx-h100", env([](auto& e) { e.collNet = "1"; }), "NCCL_COLLNET_ENABLE", "SHARP"},
        {"dgx-h100",
         env([](auto& e) {
             e.minChannels = "16";
             e.maxChannels = "8";
         }),
         "NCCL_MIN_NCHANNELS",
         "above NCCL_MAX_NCHANNELS"},
        {"dgx-h100", env([](auto& e) { e.maxChannels = "65"; }), "NCCL_MAX_NCHANNELS", "1-64"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.message);
        ClusterConfig config;
        ASSERT_EQ(config.ApplyPreset(c.preset), "");
        config.nccl = c.env;
        std::string field;
        const std::string error = config.Validate(&field);
        EXPECT_EQ(field, c.field) << error;
        EXPECT_NE(error.find(c.message), std::string::npos) << error;
    }
    // NVLS on A100 (NVSwitch gen2): the fabric cannot run it.
    ClusterConfig a100;
    ASSERT_EQ(a100.ApplyPreset("dgx-a100"), "");
    a100.servers = 1;
    a100.nccl.algo = "NVLS";
    ASSERT_EQ(a100.Validate(), "");
    ClusterHelper cluster(a100);
    ASSERT_EQ(cluster.TryBuild(), "");
    Ptr<CollectiveEngine> engine = cluster.InstallCollectiveEngine(cluster.InstallTransport());
    CollectiveCall call;
    call.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
    call.bytes = MiB;
    try
    {
        engine->Resolve(call);
        ADD_FAILURE() << "NCCL_ALGO=NVLS resolved on a dgx-a100";
    }
    catch (const CollectiveError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("NCCL_ALGO=\"NVLS\""), std::string::npos) << what;
        EXPECT_NE(what.find("NVSwitch gen3"), std::string::npos) << what;
    }
}

// NCCL's list syntax: a per-function prefix after the first entry, "^" negates.
TEST_F(NcclEndpointTest, AlgorithmListFollowsNcclSyntax)
{
    Ptr<NcclEndpoint> e = CreateObject<NcclEndpoint>();
    e->SetAttribute("Algorithms", StringValue("ring,tree;allreduce:^ring"));
    EXPECT_EQ(e->CheckOverrides(), "");
    EXPECT_TRUE(e->AlgorithmEnabled(CollectiveKind::Broadcast, CollectiveAlgorithm::Ring));
    EXPECT_FALSE(e->AlgorithmEnabled(CollectiveKind::Broadcast, CollectiveAlgorithm::Nvls));
    EXPECT_FALSE(e->AlgorithmEnabled(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring));
    EXPECT_TRUE(e->AlgorithmEnabled(CollectiveKind::AllReduce, CollectiveAlgorithm::Nvls));
    // Point-to-point schedules are not NCCL algorithms: always allowed.
    EXPECT_TRUE(e->AlgorithmEnabled(CollectiveKind::AllToAll, CollectiveAlgorithm::Direct));
}

// Each generation's set names its figures; ideal is no endpoint at all.
TEST_F(NcclEndpointTest, GenerationSets)
{
    GpuEndpointSet s;
    ASSERT_TRUE(FindGpuEndpointSet("ideal", s));
    EXPECT_TRUE(s.ideal);
    EXPECT_FALSE(MakeNcclEndpoint(s));
    ASSERT_TRUE(FindGpuEndpointSet("b200", s));
    EXPECT_DOUBLE_EQ(s.nvlinkPerLink_gbyte_per_s, 40.1);
    EXPECT_EQ(MakeNcclEndpoint(s)->GetNvlsChannels(), 24u);
    EXPECT_FALSE(FindGpuEndpointSet("tpu", s));
    ClusterConfig c;
    for (auto [preset, set] : {std::pair<const char*, const char*>{"dgx-a100", "a100"},
                               {"dgx-h100", "h100"},
                               {"dgx-b200", "b200"},
                               {"gb200-nvl72", "b200"}})
    {
        ASSERT_EQ(c.ApplyPreset(preset), "");
        EXPECT_EQ(c.GetEndpointSet().name, set) << preset;
    }
    c.endpoint = "h200";
    std::string field;
    EXPECT_NE(c.Validate(&field).find("unknown endpoint 'h200'"), std::string::npos);
    EXPECT_EQ(field, "endpoint");
}
} // namespace

// nccl-tests' timing loop (NcclEndpoint::LoopIterationTime), with HostLaunchTime 5.3 us:
// one thread issuing 4 GPUs' launches is host-bound below 4 x 5.3 = 21.2 us per iteration,
// so an iteration of a 9 us collective over 50 iterations costs 21.2 + 9 / 50 = 21.38 us; a
// 100 us collective on one GPU per thread over 20 is GPU-bound: 100 + 5.3 / 20 = 100.265 us.
// Exact to the nanosecond (integer time arithmetic, 1 ns of rounding).
TEST_F(NcclEndpointTest, TimingLoopIsBoundByTheHostOrTheCollective)
{
    Ptr<NcclEndpoint> e = CreateObject<NcclEndpoint>();
    EXPECT_EQ(e->GetHostLaunchTime(), NanoSeconds(5300));
    EXPECT_NEAR(e->LoopIterationTime(MicroSeconds(9), 4, 50).GetNanoSeconds(), 21380, 1);
    EXPECT_NEAR(e->LoopIterationTime(MicroSeconds(100), 1, 20).GetNanoSeconds(), 100265, 1);
    // One iteration pays both: the launches, then the collective.
    EXPECT_EQ(e->LoopIterationTime(MicroSeconds(9), 4, 1), NanoSeconds(21200 + 9000));
}

// The loop time reaches the result and the collectives row's figure: a 4-GPU 8 B allreduce
// (ring LL, 6.6 + 6 x 0.6 = 10.2 us of NCCL latency) issued by one thread for 4 GPUs, 50
// iterations, is host-bound at 21.2 us + its own time / 50; without the loop the result's
// loop time is the collective's.  Within 1 ns of the formula applied to the simulated time.
TEST_F(NcclEndpointTest, HostBoundLoopSetsTheFourGpuFloor)
{
    Fabric f(1);
    CollectiveCall call;
    call.kind = CollectiveKind::AllReduce;
    call.ranks = {0, 1, 2, 3};
    call.bytes = 8;
    call.loopGpusPerThread = 4;
    call.loopIterations = 50;
    CollectiveResult r;
    f.engine->Start(call,
                    CollectiveEngine::DoneCallback([&r](const CollectiveResult& x) { r = x; }));
    Simulator::Run();
    const double collective_ns = (r.end - r.start).GetNanoSeconds();
    std::cout << "[endpoint] 4-GPU 8 B allreduce: " << collective_ns / 1e3 << " us, loop of "
              << r.loopTime.GetNanoSeconds() / 1e3 << " us per iteration\n";
    EXPECT_LT(collective_ns, 21200.0); // the host binds
    EXPECT_NEAR(r.loopTime.GetNanoSeconds(), 21200.0 + collective_ns / 50, 1.0);
    Reset();
    Fabric g(1);
    const CollectiveResult plain = g.Run(CollectiveKind::AllReduce, {0, 1, 2, 3}, 8);
    EXPECT_EQ(plain.loopTime, plain.end - plain.start);
}

// A channel's fixed time per message (Simple's fence and flag) follows the message's bytes
// in series: two 1 MiB messages GPU 0 -> 1 on one channel at 10 GB/s with 5 us each end at
// 2 x (104.86 + 5) = 219.7 us; on two channels both end at 104.86 + 5 = 109.9 us (the NVLink
// carries 20 of its 423 GB/s).  Tolerance +1 us (the wire's latency), never below; +3.5 us
// for the second message on its own channel, whose first packet may follow the first's
// bytes on the wire (1 MiB / 423 GB/s = 2.5 us).
TEST_F(NcclEndpointTest, ChannelStepTimeIsInSeriesWithTheChannelsBytes)
{
    const uint64_t n = MiB;
    const double data_us = n / (10.0 * 1e3);
    for (uint32_t secondChannel : {0u, 1u})
    {
        SCOPED_TRACE(secondChannel);
        Fabric f(1, "ideal");
        std::vector<double> end_us;
        for (uint32_t channel : {0u, secondChannel})
        {
            f.transport->SendMessage(0,
                                     1,
                                     n,
                                     GpuTransport::DoneCallback(),
                                     GpuTransport::DoneCallback([&end_us]() {
                                         end_us.push_back(Simulator::Now().GetSeconds() * 1e6);
                                     }),
                                     channel,
                                     -1,
                                     0,
                                     0,
                                     Time(0),
                                     DataRate(static_cast<uint64_t>(10e9 * 8)),
                                     MicroSeconds(5));
        }
        Simulator::Run();
        ASSERT_EQ(end_us.size(), 2u);
        const double model_us = secondChannel == 0 ? 2 * (data_us + 5) : data_us + 5;
        EXPECT_GE(end_us[1], model_us);
        EXPECT_LE(end_us[1], model_us + (secondChannel == 0 ? 1.0 : 3.5));
        EXPECT_GE(end_us[0], data_us + 5);
        EXPECT_LE(end_us[0], data_us + 5 + 1.0);
        Reset();
    }
}

// NCCL's ring slices (prims_simple.h): a chunk of n bytes is cut in slices of max(n / 2,
// the minimum); a chunk at or below the minimum stays whole.  8 channels, 4 ranks, chunk
// 8 MiB, minimum 128 KiB: 256 MiB is one full loop (8 x 4 chunks of 8 MiB, two 4 MiB slices
// each); 2 MiB is one loop of 64 KiB chunks (one slice each); 6 MiB one of 192 KiB chunks.
// Exact.
TEST_F(NcclEndpointTest, RingPiecesAreNcclsSlices)
{
    CollectiveSplit split;
    split.chunkBytes = 8 * MiB;
    split.numChannels = 8;
    split.slicesPerChunk = 2;
    split.minSliceBytes = 128 * 1024;
    const auto big = SplitRing(256 * MiB, 4, split);
    ASSERT_EQ(big.size(), 64u);
    uint64_t sum = 0;
    for (const RingPiece& piece : big)
    {
        EXPECT_EQ(piece.bytes, 4 * MiB);
        sum += piece.bytes;
    }
    EXPECT_EQ(sum, 256 * MiB);
    EXPECT_EQ(big[0].index, big[1].index); // a chunk's slices one after the other
    const auto small = SplitRing(2 * MiB, 4, split);
    ASSERT_EQ(small.size(), 32u);
    EXPECT_EQ(small[0].bytes, 64 * 1024u);
    // 6 MiB: 192 KiB chunks, above the minimum: slices of 128 KiB (the minimum) and 64 KiB.
    const auto odd = SplitRing(6 * MiB, 4, split);
    ASSERT_EQ(odd.size(), 64u);
    EXPECT_EQ(odd[0].bytes, 128 * 1024u);
    EXPECT_EQ(odd[1].bytes, 64 * 1024u);
}

// NCCL's point-to-point channels per peer (src/enqueue.cc, one node of 32 channels):
// nChannelsMin = 32 halved while x ranks > 32 (8 ranks: 4; 4 ranks: 8); a send of b bytes
// takes min(nChannelsMin, ceil(b / 64 KiB)) and doubles while its parts exceed 16 MiB, up to
// 32.  Exact.
TEST_F(NcclEndpointTest, P2pChannelsFollowNcclsPeerRule)
{
    Ptr<NcclEndpoint> e = CreateObject<NcclEndpoint>();
    EXPECT_EQ(e->P2pChannels(32 * 1024, 8), 1u);
    EXPECT_EQ(e->P2pChannels(256 * 1024, 8), 4u);
    EXPECT_EQ(e->P2pChannels(64 * MiB, 8), 4u);
    EXPECT_EQ(e->P2pChannels(128 * MiB, 8), 8u);
    EXPECT_EQ(e->P2pChannels(256 * MiB, 8), 16u);
    EXPECT_EQ(e->P2pChannels(2048 * MiB, 8), 32u);
    EXPECT_EQ(e->P2pChannels(64 * MiB, 4), 8u);
}

// An 8-GPU alltoall: each peer's part runs on its p2p channels, a channel at the graph's
// channel share (370.8 / 32 GB/s) split among the sends it runs (the rank's own among them),
// in 512 KiB steps, each step's fence and flag after its data.  128 MiB: 16 MiB per peer on 4
// channels, one send each (46.35 GB/s), 4 MiB = 8 steps each: 8.4 + 16 MiB / 46.35 GB/s + 8 x
// 3.4 = 397.6 us.  1 GiB: 8 channels per peer, 8 x 8 sends on 32 channels, two a channel: still
// 46.35 GB/s a peer, 16 MiB = 32 steps a channel: 8.4 + 128 MiB / 46.35 GB/s + 32 x 3.4 =
// 3012.8 us.  Within 0 / +4 % (the wire's latency, the last packets).
TEST_F(NcclEndpointTest, AllToAllRunsOnItsPeersP2pChannels)
{
    const double share = 370.8 / 32;
    for (auto [bytes, model_us] :
         {std::pair<uint64_t, double>{128 * MiB, 8.4 + 16 * MiB / (4 * share * 1e3) + 8 * 3.4},
          std::pair<uint64_t, double>{1024 * MiB,
                                      8.4 + 128 * MiB / (8 * share / 2 * 1e3) + 32 * 3.4}})
    {
        SCOPED_TRACE(bytes);
        Fabric f(1);
        const CollectiveResult r = f.Run(CollectiveKind::AllToAll, {0, 1, 2, 3, 4, 5, 6, 7}, bytes);
        EXPECT_EQ(r.algorithm, "direct");
        std::cout << "[endpoint] " << bytes / MiB << " MiB alltoall, 8 GPUs: " << Us(r)
                  << " us, model " << model_us << " us\n";
        EXPECT_GE(Us(r), model_us);
        EXPECT_LE(Us(r), 1.04 * model_us);
        Reset();
    }
}
