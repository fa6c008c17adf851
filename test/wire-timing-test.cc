/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/wire-timing.h"

#include <gtest/gtest.h>

using namespace ns3;

// 4160 wire bytes at 400 Gb/s of data: 4160 * 8 / 400e9 s = 83.2 ns exactly.
TEST(SerializationClock, SinglePacketWithinOneNanosecond)
{
    SerializationClock clock(DataRate("400Gbps"), 1.0);
    EXPECT_EQ(clock.GetTransmitTime(4160), NanoSeconds(84));  // ceil(83.2)
    EXPECT_EQ(clock.NextTransmitTime(4160), NanoSeconds(83)); // floor, 0.2 ns carried
}

// 64b/66b on 103.125 Gb/s signalling (EDR 4x) leaves exactly 100 Gb/s of data.
TEST(SerializationClock, EncodingEfficiencyGivesDataRate)
{
    SerializationClock clock(DataRate("103.125Gbps"), 64.0 / 66.0);
    EXPECT_EQ(clock.GetDataRateBps(), 100000000000ULL);
    EXPECT_EQ(clock.GetTransmitTime(1250), NanoSeconds(100)); // 10000 bits / 100 Gb/s
}

// The carried remainder makes N packets take exactly N * 83.2 ns (tolerance: 1 ns total).
TEST(SerializationClock, LongRunIsExact)
{
    SerializationClock clock(DataRate("400Gbps"), 1.0);
    int64_t totalNs = 0;
    for (int i = 0; i < 1000; ++i)
    {
        totalNs += clock.NextTransmitTime(4160).GetNanoSeconds();
    }
    EXPECT_NEAR(static_cast<double>(totalNs), 83200.0, 1.0);
}

TEST(SerializationClock, LargeTransferDoesNotOverflow)
{
    SerializationClock clock(DataRate("400Gbps"), 1.0);
    // 1 TiB at 400 Gb/s = 2^40 * 8 / 4e11 s = 21.990232555520 s
    EXPECT_EQ(clock.GetTransmitTime(1ULL << 40), NanoSeconds(21990232556));
}
