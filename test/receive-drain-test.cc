/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/receive-drain.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

struct Consumed
{
    uint32_t bytes;
    uint32_t vc;
    int64_t atNs;
};

} // namespace

// 1250 B at 10 Gb/s take 10000 bits / 10e9 bit/s = 1 us each: three packets pushed at once
// leave at 1, 2 and 3 us in arrival order; one pushed into the idle drain at 10 us leaves
// 1 us after its own arrival.  Exact: whole nanoseconds.
TEST(ReceiveDrain, ConsumesInArrivalOrderAtTheRate)
{
    ReceiveDrain drain;
    drain.SetRate(DataRate("10Gbps"));
    std::vector<Consumed> consumed;
    drain.SetConsumeCallback(
        ReceiveDrain::ConsumeCallback([&consumed](Ptr<Packet> packet, uint32_t vc) {
            consumed.push_back({packet->GetSize(), vc, Simulator::Now().GetNanoSeconds()});
        }));
    EXPECT_FALSE(drain.IsImmediate());
    drain.Push(Create<Packet>(1250), 2);
    drain.Push(Create<Packet>(1250), 0);
    drain.Push(Create<Packet>(2500), 1);
    Simulator::Schedule(MicroSeconds(10), [&drain]() { drain.Push(Create<Packet>(1250), 3); });
    Simulator::Run();
    ASSERT_EQ(consumed.size(), 4u);
    EXPECT_EQ(consumed[0].vc, 2u);
    EXPECT_EQ(consumed[0].atNs, 1000);
    EXPECT_EQ(consumed[1].vc, 0u);
    EXPECT_EQ(consumed[1].atNs, 2000);
    EXPECT_EQ(consumed[2].vc, 1u);
    EXPECT_EQ(consumed[2].atNs, 4000); // 2500 B: 2 us after the previous one left
    EXPECT_EQ(consumed[3].atNs, 11000);
    EXPECT_TRUE(drain.IsEmpty());
    EXPECT_EQ(Simulator::GetEventCount(), 5u); // one per packet, one for the late Push
    Simulator::Destroy();
}

TEST(ReceiveDrain, ClearDropsWaitingPackets)
{
    ReceiveDrain drain;
    drain.SetRate(DataRate("1Gbps"));
    uint32_t consumed = 0;
    drain.SetConsumeCallback(
        ReceiveDrain::ConsumeCallback([&consumed](Ptr<Packet>, uint32_t) { ++consumed; }));
    drain.Push(Create<Packet>(100), 0);
    drain.Push(Create<Packet>(100), 0);
    EXPECT_FALSE(drain.IsEmpty());
    drain.Clear();
    EXPECT_TRUE(drain.IsEmpty());
    Simulator::Run();
    EXPECT_EQ(consumed, 0u);
    EXPECT_TRUE(DataRate(0) == ReceiveDrain().GetRate()); // immediate by default
    EXPECT_TRUE(ReceiveDrain().IsImmediate());
    Simulator::Destroy();
}
