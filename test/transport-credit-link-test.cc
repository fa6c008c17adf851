/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// GpuTransport over CreditLinkPlane on a CreditSwitch star: message timing,
// injection sharing, per-pair ordering, invalid sends.
#include "ns3/boolean.h"
#include "ns3/credit-link-helper.h"
#include "ns3/credit-link-plane.h"
#include "ns3/credit-switch.h"
#include "ns3/data-rate.h"
#include "ns3/gpu-transport.h"
#include "ns3/node-container.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <array>
#include <gtest/gtest.h>
#include <map>

using namespace ns3;
using DoneCallback = GpuTransport::DoneCallback;

namespace
{

constexpr uint32_t kPayload = 32768;
constexpr uint32_t kPacket = kPayload + 28; // + CreditLinkHeader 8 + TransportHeader 20
constexpr double kRateBps = 100e9;
const Time kProp = NanoSeconds(100);
const Time kSwitch = NanoSeconds(150);
const Time kSoftware = MicroSeconds(2);

class TransportCreditLinkTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        gpus.Create(kRanks);
        sw.Create(1);
        CreditLinkHelper helper;
        helper.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(kRateBps))));
        helper.SetDeviceAttribute("Mtu", UintegerValue(kPacket));
        helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(4 * kPacket));
        helper.SetDeviceAttribute("TxQueueBytes", UintegerValue(2 * kPacket));
        helper.SetChannelAttribute("Delay", TimeValue(kProp));
        helper.SetSwitchAttribute("TraversalLatency", TimeValue(kSwitch));
        Ptr<CreditSwitch> core = helper.InstallSwitch(sw.Get(0));
        plane = CreateObject<CreditLinkPlane>();
        plane->SetAttribute("MaxPayloadBytes", UintegerValue(kPayload));
        plane->SetAttribute("SoftwareLatency", TimeValue(kSoftware));
        for (uint32_t r = 0; r < kRanks; ++r)
        {
            NetDeviceContainer d = helper.Install(gpus.Get(r), sw.Get(0));
            core->SetRoute(r, {r});
            plane->AddRank(r, DynamicCast<CreditLinkNetDevice>(d.Get(0)));
        }
        transport = CreateObject<GpuTransport>();
        transport->AddPlane(plane);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }

    // Serialisation time of one full packet, ns (fractional).
    static double PacketNs(uint32_t bytes)
    {
        return bytes * 8.0 / kRateBps * 1e9;
    }

    static constexpr uint32_t kRanks = 8;
    NodeContainer gpus;
    NodeContainer sw;
    Ptr<CreditLinkPlane> plane;
    Ptr<GpuTransport> transport;
};

TEST_F(TransportCreditLinkTest, SingleMessageLatency)
{
    // 1 MiB = 32 packets: software latency + 32 packet times at the source + the last
    // packet once more on the switch's output (store-and-forward) + 2 x propagation +
    // switch traversal.  Tolerance 2 ns (whole-ns serialisation rounding).
    const uint64_t bytes = 1 << 20;
    Time senderDone;
    Time receiverDone;
    transport->SendMessage(0,
                           5,
                           bytes,
                           Callback<void>([&]() { senderDone = Simulator::Now(); }),
                           Callback<void>([&]() { receiverDone = Simulator::Now(); }));
    Simulator::Run();
    const double expectedNs = kSoftware.GetNanoSeconds() + 33 * PacketNs(kPacket) +
                              2 * kProp.GetNanoSeconds() + kSwitch.GetNanoSeconds();
    EXPECT_NEAR(receiverDone.GetNanoSeconds(), expectedNs, 2.0);
    // The sender learns of it when the acknowledgement is back.
    EXPECT_EQ(senderDone, receiverDone + transport->GetNotificationLatency());
    EXPECT_EQ(transport->GetRxBytes(5), bytes);
    EXPECT_EQ(transport->GetTxBytes(0), bytes);
    EXPECT_EQ(transport->GetMessagesInFlight(), 0u);
}

// Split over processes (rank 5 in process 1; the other process's MpiInterface emulated by
// delivering notification packets after their delay): the message reaches rank 5 at the
// single-process instant (SingleMessageLatency), its process completes it from the packets'
// tags and calls the client's received handler instead of onReceiverDone, and the sender
// learns of it one NotificationLatency later through the acknowledgement.  A notification to
// process 1 crosses as a packet and arrives one NotificationLatency later.
TEST_F(TransportCreditLinkTest, MessageToAnotherProcessCompletesFromItsTags)
{
    transport->SetDistributed(
        2,
        GpuTransport::RemoteSender([this](uint32_t, Time delay, Ptr<Packet> packet) {
            Simulator::Schedule(delay, &GpuTransport::ReceiveRemote, transport, packet);
        }));
    std::vector<uint32_t> systems(kRanks, 0);
    systems[5] = 1;
    transport->SetRankSystems(systems);
    Time received;
    uint64_t key = 0;
    Time notified;
    std::pair<uint64_t, uint64_t> note;
    const uint8_t client =
        transport->AddClient(GpuTransport::NotifiedCallback([&](uint64_t a, uint64_t b) {
                                 notified = Simulator::Now();
                                 note = {a, b};
                             }),
                             GpuTransport::ReceivedCallback([&](uint64_t k) {
                                 received = Simulator::Now();
                                 key = k;
                             }));
    const uint64_t bytes = 1 << 20;
    Time senderDone;
    bool receiverDone = false;
    transport->SendMessage(0,
                           5,
                           bytes,
                           Callback<void>([&]() { senderDone = Simulator::Now(); }),
                           Callback<void>([&]() { receiverDone = true; }),
                           0,
                           7,
                           client,
                           (uint64_t(3) << 32) | 11);
    transport->Notify(1, client, 123, 456);
    Simulator::Run();
    const double expectedNs = kSoftware.GetNanoSeconds() + 33 * PacketNs(kPacket) +
                              2 * kProp.GetNanoSeconds() + kSwitch.GetNanoSeconds();
    EXPECT_NEAR(received.GetNanoSeconds(), expectedNs, 2.0);
    EXPECT_EQ(key, (uint64_t(3) << 32) | 11);
    EXPECT_FALSE(receiverDone);
    EXPECT_EQ(senderDone, received + transport->GetNotificationLatency());
    EXPECT_EQ(notified, transport->GetNotificationLatency());
    EXPECT_EQ(note, std::make_pair(uint64_t(123), uint64_t(456)));
    EXPECT_EQ(transport->GetRxBytes(5), bytes);
    EXPECT_EQ(transport->GetTxBytes(0), bytes);
    EXPECT_EQ(transport->GetMessagesCompleted(), 1u);
    EXPECT_EQ(transport->GetMessagesInFlight(), 0u);
}

TEST_F(TransportCreditLinkTest, ZeroByteMessageIsOneHeaderPacket)
{
    Time done;
    transport->SendMessage(1, 2, 0, DoneCallback(), Callback<void>([&]() {
                               done = Simulator::Now();
                           }));
    Simulator::Run();
    const double expectedNs = kSoftware.GetNanoSeconds() + 2 * PacketNs(28) +
                              2 * kProp.GetNanoSeconds() + kSwitch.GetNanoSeconds();
    EXPECT_NEAR(done.GetNanoSeconds(), expectedNs, 2.0);
}

TEST_F(TransportCreditLinkTest, TwoPeersShareInjectionBandwidth)
{
    // Rank 0 sends 8 MiB to rank 1 and 8 MiB to rank 2 at once: round-robin packets
    // give each half the link, so each completes after 2 x 8 MiB of wire time.
    // Each message's rate must be half the link payload rate within 1%.  The first
    // message gets a head start of what the device takes before refusing (1 on the
    // wire + 2 queued + the refused one), so they end within 5 packet times.
    const uint64_t bytes = 8 << 20;
    Time done[2];
    transport->SendMessage(0, 1, bytes, DoneCallback(), Callback<void>([&]() {
                               done[0] = Simulator::Now();
                           }));
    transport->SendMessage(0, 2, bytes, DoneCallback(), Callback<void>([&]() {
                               done[1] = Simulator::Now();
                           }));
    Simulator::Run();
    const double payloadRate = kRateBps / 8 * kPayload / kPacket; // bytes/s
    for (int i = 0; i < 2; ++i)
    {
        const double rate = bytes / (done[i] - kSoftware).GetSeconds();
        EXPECT_NEAR(rate / (payloadRate / 2), 1.0, 0.01) << "message " << i;
    }
    EXPECT_LT(std::abs((done[0] - done[1]).GetNanoSeconds()), 5 * PacketNs(kPacket));
}

TEST_F(TransportCreditLinkTest, SamePairInOrderOtherChannelInParallel)
{
    // 4 MiB, 64 KiB, 1 B on the same pair complete in submission order although the
    // later ones are smaller; 64 KiB on another channel of the same pair overtakes the
    // 4 MiB message: the wire carries 4 packets of the 4 MiB message (the device's
    // head start, see above), then alternates, so the other channel's second packet
    // is the 7th on the wire and lands after 8 packet times + 2 x propagation +
    // switch (2 ns), instead of after 130 packets if channels were FIFO.
    std::vector<int> order;
    Time otherChannel;
    const uint64_t sizes[3] = {4 << 20, 64 << 10, 1};
    for (int i = 0; i < 3; ++i)
    {
        transport->SendMessage(3, 4, sizes[i], DoneCallback(), Callback<void>([&order, i]() {
                                   order.push_back(i);
                               }));
    }
    transport->SendMessage(3,
                           4,
                           64 << 10,
                           DoneCallback(),
                           Callback<void>([&]() { otherChannel = Simulator::Now(); }),
                           1);
    Simulator::Run();
    ASSERT_EQ(order.size(), 3u);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    EXPECT_NEAR(otherChannel.GetNanoSeconds(),
                kSoftware.GetNanoSeconds() + 8 * PacketNs(kPacket) + 2 * kProp.GetNanoSeconds() +
                    kSwitch.GetNanoSeconds(),
                2.0);
    EXPECT_EQ(transport->GetRxBytes(4), (4u << 20) + (64u << 10) + 1 + (64u << 10));
}

TEST_F(TransportCreditLinkTest, InvalidSendsRejected)
{
    EXPECT_THROW(transport->SendMessage(0, 8, 100, DoneCallback(), DoneCallback()),
                 std::invalid_argument);
    EXPECT_THROW(transport->SendMessage(2, 2, 100, DoneCallback(), DoneCallback()),
                 std::invalid_argument);
    EXPECT_EQ(transport->SelectPlane(0, 8), -1);
    EXPECT_EQ(transport->SelectPlane(0, 7), 0);
    EXPECT_TRUE(transport->HasRank(7));
    EXPECT_FALSE(transport->HasRank(8));
}

TEST_F(TransportCreditLinkTest, PlaneSelection)
{
    // A second plane over its own star reaching ranks 0..3: first-that-reaches keeps
    // plane 0; the selector moves 0->1 to plane 1; an explicit pair wins over both; a
    // selector naming a plane that cannot reach falls back.
    CreditLinkHelper helper;
    helper.SetDeviceAttribute("Mtu", UintegerValue(kPacket));
    helper.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(4 * kPacket));
    Ptr<Node> sw2 = CreateObject<Node>();
    Ptr<CreditSwitch> core = helper.InstallSwitch(sw2);
    Ptr<CreditLinkPlane> second = CreateObject<CreditLinkPlane>();
    second->SetAttribute("MaxPayloadBytes", UintegerValue(kPayload));
    for (uint32_t r = 0; r < 4; ++r)
    {
        NetDeviceContainer d = helper.Install(gpus.Get(r), sw2);
        core->SetRoute(r, {r});
        second->AddRank(r, DynamicCast<CreditLinkNetDevice>(d.Get(0)));
    }
    EXPECT_EQ(transport->AddPlane(second), 1u);
    EXPECT_EQ(transport->SelectPlane(0, 1), 0);
    transport->SetPlaneSelector(GpuTransport::PlaneSelector(
        [](uint32_t src, uint32_t dst) { return int32_t(src + dst == 1 ? 1 : 0); }));
    EXPECT_EQ(transport->SelectPlane(0, 1), 1);
    EXPECT_EQ(transport->SelectPlane(0, 2), 0);
    transport->SetPlaneSelector(
        GpuTransport::PlaneSelector([](uint32_t, uint32_t) { return int32_t(1); }));
    EXPECT_EQ(transport->SelectPlane(0, 6), 0); // plane 1 does not reach rank 6
    transport->SetPlaneForPair(0, 2, 0);
    EXPECT_EQ(transport->SelectPlane(0, 2), 0);
    // A message on the selected second plane (no software latency there) arrives
    // sooner than plane 0's software latency + 3 packet times allows, and its two
    // packets left through the second plane's device.
    // The traces carry the plane the message was sent on: 0->3 the selector's plane 1,
    // 0->6 the fallback plane 0, at submission and at the last byte alike.
    std::map<uint64_t, uint32_t> sentPlane;
    std::map<uint64_t, uint32_t> receivedPlane;
    transport->TraceConnectWithoutContext(
        "MessageSent",
        Callback<void, uint64_t, uint32_t, uint32_t, uint64_t, uint32_t>(
            [&](uint64_t id, uint32_t, uint32_t, uint64_t, uint32_t plane) {
                sentPlane[id] = plane;
            }));
    transport->TraceConnectWithoutContext(
        "MessageReceived",
        Callback<void, uint64_t, uint32_t, uint32_t, uint64_t, uint32_t, Time>(
            [&](uint64_t id, uint32_t, uint32_t, uint64_t, uint32_t plane, Time) {
                receivedPlane[id] = plane;
            }));
    Time done;
    const uint64_t onSecond =
        transport->SendMessage(0, 3, 64 << 10, DoneCallback(), Callback<void>([&]() {
                                   done = Simulator::Now();
                               }));
    const uint64_t onFirst = transport->SendMessage(0, 6, 1000, DoneCallback(), DoneCallback());
    Simulator::Run();
    EXPECT_GT(done, Time(0));
    EXPECT_LT(done.GetNanoSeconds(), kSoftware.GetNanoSeconds() + 3 * PacketNs(kPacket));
    EXPECT_EQ(second->GetDevice(0)->GetCounters().txPackets, 2u);
    EXPECT_EQ(sentPlane, (std::map<uint64_t, uint32_t>{{onSecond, 1u}, {onFirst, 0u}}));
    EXPECT_EQ(receivedPlane, sentPlane);
}

} // namespace

namespace
{

// Rank 0 posts messages to ranks 2 and 1, rank 3 to ranks 4 and 5, all at t = 0 and in that
// order (so they become eligible in one instant, in that event order); \return when each
// completed: 0->1, 0->2, 3->4, 3->5.
std::array<Time, 4>
SameInstantMessages(Ptr<GpuTransport> transport, bool instantEndInjection)
{
    transport->SetAttribute("InstantEndInjection", BooleanValue(instantEndInjection));
    std::array<Time, 4> done;
    const uint64_t bytes = 4 * kPayload;
    const std::array<std::pair<uint32_t, uint32_t>, 4> posts{{{0, 2}, {0, 1}, {3, 4}, {3, 5}}};
    const std::array<int, 4> slot{1, 0, 2, 3};
    for (int i = 0; i < 4; ++i)
    {
        Time* t = &done[slot[i]];
        transport->SendMessage(posts[i].first,
                               posts[i].second,
                               bytes,
                               DoneCallback(),
                               Callback<void>([t]() { *t = Simulator::Now(); }));
    }
    Simulator::Run();
    return done;
}

} // namespace

// Two messages of one rank eligible in the same instant: the one posted first injects
// first (event order; ns-3's distributed simulator changes it for events from other
// processes)...
TEST_F(TransportCreditLinkTest, SameInstantMessagesInjectInEventOrder)
{
    const std::array<Time, 4> done = SameInstantMessages(transport, false);
    EXPECT_LT(done[1], done[0]); // 0->2 posted first
    EXPECT_EQ(done[1], done[2]); // as 3->4, posted first too
    EXPECT_EQ(done[0], done[3]);
}

// ... and with InstantEndInjection (on under mpirun) the one to the lower destination, so
// both ranks' messages end alike whatever the order they were posted in.
TEST_F(TransportCreditLinkTest, InstantEndInjectionOrdersSameInstantMessagesByDestination)
{
    const std::array<Time, 4> done = SameInstantMessages(transport, true);
    EXPECT_LT(done[0], done[1]); // 0->1 first, although posted second
    EXPECT_EQ(done[0], done[2]);
    EXPECT_EQ(done[1], done[3]);
}
