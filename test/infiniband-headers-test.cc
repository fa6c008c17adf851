/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-headers.h"
#include "ns3/infiniband-link-preset.h"
#include "ns3/packet.h"

#include <cstring>
#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

template <typename H>
std::vector<uint8_t>
HeaderBytes(const H& h)
{
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(h);
    std::vector<uint8_t> out(p->GetSize());
    p->CopyData(out.data(), out.size());
    return out;
}

} // namespace

// Byte layout hand-computed from IBA §7.7: VL=3|LVer=0 -> 0x30; SL=5|LNH=2 ->
// 0x52; DLID 0x1234; PktLen 1030 = 0x406; SLID 0xabcd.
TEST(InfinibandHeaders, LrhExactBytesAndRoundTrip)
{
    InfinibandLrh lrh;
    lrh.SetVl(3);
    lrh.SetSl(5);
    lrh.SetLnh(InfinibandLrh::LNH_IBA_LOCAL);
    lrh.SetDlid(0x1234);
    lrh.SetSlid(0xabcd);
    lrh.SetPacketLengthWords(1030);
    const std::vector<uint8_t> expected = {0x30, 0x52, 0x12, 0x34, 0x04, 0x06, 0xab, 0xcd};
    EXPECT_EQ(HeaderBytes(lrh), expected);

    Ptr<Packet> p = Create<Packet>(expected.data(), expected.size());
    InfinibandLrh back;
    EXPECT_EQ(p->RemoveHeader(back), 8U);
    EXPECT_EQ(back.GetVl(), 3);
    EXPECT_EQ(back.GetSl(), 5);
    EXPECT_EQ(back.GetLnh(), 2);
    EXPECT_EQ(back.GetDlid(), 0x1234);
    EXPECT_EQ(back.GetSlid(), 0xabcd);
    EXPECT_EQ(back.GetPacketLengthWords(), 1030);
}

// IBA §9.2: opcode 0x04; SE=1,M=0,PadCnt=2,TVer=0 -> 0xa0; P_Key 0xffff;
// FECN=1,BECN=0 -> 0x80; DestQP 0x123456; A=1 -> 0x80; PSN 0xabcdef.
TEST(InfinibandHeaders, BthExactBytesAndRoundTrip)
{
    InfinibandBth bth;
    bth.SetOpcode(InfinibandBth::RC_SEND_ONLY);
    bth.SetSolicitedEvent(true);
    bth.SetPadCount(2);
    bth.SetPartitionKey(0xffff);
    bth.SetFecn(true);
    bth.SetDestQp(0x123456);
    bth.SetAckReq(true);
    bth.SetPsn(0xabcdef);
    const std::vector<uint8_t> expected =
        {0x04, 0xa0, 0xff, 0xff, 0x80, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef};
    EXPECT_EQ(HeaderBytes(bth), expected);

    bth.SetFecn(false);
    bth.SetBecn(true);
    bth.SetMigReq(true);
    auto bytes = HeaderBytes(bth);
    EXPECT_EQ(bytes[1], 0xe0); // SE|M|PadCnt=2
    EXPECT_EQ(bytes[4], 0x40); // BECN is the second bit of byte 4

    Ptr<Packet> p = Create<Packet>(bytes.data(), bytes.size());
    InfinibandBth back;
    p->RemoveHeader(back);
    EXPECT_EQ(back.GetOpcode(), 0x04);
    EXPECT_TRUE(back.GetSolicitedEvent());
    EXPECT_TRUE(back.GetMigReq());
    EXPECT_EQ(back.GetPadCount(), 2);
    EXPECT_FALSE(back.GetFecn());
    EXPECT_TRUE(back.GetBecn());
    EXPECT_EQ(back.GetDestQp(), 0x123456U);
    EXPECT_TRUE(back.GetAckReq());
    EXPECT_EQ(back.GetPsn(), 0xabcdefU);
    EXPECT_EQ(InfinibandBth::PadBytesFor(4096), 0);
    EXPECT_EQ(InfinibandBth::PadBytesFor(5), 3);
}

// Wireshark dissect_infiniband_link: Op(4) FCTBS(12) VL(4) FCCL(12) LPCRC(16).
// Op=1, FCTBS=0xabc -> 0x1a 0xbc; VL=7, FCCL=0x123 -> 0x71 0x23.
TEST(InfinibandHeaders, FlowControlPacketExactBytes)
{
    InfinibandFlowControlPacket fc;
    fc.SetOp(InfinibandFlowControlPacket::OP_INIT);
    fc.SetFctbs(0xabc);
    fc.SetVl(7);
    fc.SetFccl(0x123);
    auto bytes = HeaderBytes(fc);
    ASSERT_EQ(bytes.size(), 6U);
    EXPECT_EQ(bytes[0], 0x1a);
    EXPECT_EQ(bytes[1], 0xbc);
    EXPECT_EQ(bytes[2], 0x71);
    EXPECT_EQ(bytes[3], 0x23);
    const uint16_t lpcrc = InfinibandVcrc::Compute(bytes.data(), 4);
    EXPECT_EQ(bytes[4], lpcrc & 0xff);
    EXPECT_EQ(bytes[5], lpcrc >> 8);

    InfinibandFlowControlPacket back;
    Ptr<Packet> p = Create<Packet>(bytes.data(), bytes.size());
    p->RemoveHeader(back);
    EXPECT_EQ(back.GetOp(), 1);
    EXPECT_EQ(back.GetFctbs(), 0xabc);
    EXPECT_EQ(back.GetVl(), 7);
    EXPECT_EQ(back.GetFccl(), 0x123);
    EXPECT_TRUE(back.IsLpcrcOk());

    bytes[3] ^= 0x01; // corrupt FCCL: the LPCRC must catch it
    Ptr<Packet> bad = Create<Packet>(bytes.data(), bytes.size());
    bad->RemoveHeader(back);
    EXPECT_FALSE(back.IsLpcrcOk());

    fc.SetFctbs(4096 + 5); // counters are modulo 4096
    EXPECT_EQ(fc.GetFctbs(), 5);
}

// The ICRC must not depend on VL, FECN or BECN (IBA §7.8.1) but on everything else.
TEST(InfinibandHeaders, IcrcMasksVariantFields)
{
    uint8_t pkt[20] = {0x00, 0x02, 0x00, 0x01, 0x00, 0x05, 0x00, 0x02, 0x04, 0x00,
                       0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00};
    const uint32_t base = InfinibandIcrc::Compute(pkt, sizeof(pkt));
    pkt[0] = 0x70;  // other VL
    pkt[12] = 0xc0; // FECN + BECN
    EXPECT_EQ(InfinibandIcrc::Compute(pkt, sizeof(pkt)), base);
    pkt[3] = 0x02; // DLID is invariant
    EXPECT_NE(InfinibandIcrc::Compute(pkt, sizeof(pkt)), base);

    // With the variant fields already all ones the ICRC is the plain CRC-32:
    // python3 zlib.crc32(bytes([0xff, 0xf2] + [0xff] * 18)) = 0x1bdce28f.
    uint8_t ones[20];
    std::memset(ones, 0xff, sizeof(ones));
    ones[1] = 0xf2; // LNH = 2
    EXPECT_EQ(InfinibandIcrc::Compute(ones, sizeof(ones)), 0x1bdce28fU);
}

// Global packet (LNH 3): LRH, GRH TClass/FlowLabel/HopLmt and BTH byte 4 are
// variant (IBA §7.8.1); IPVer, PayLen, NxtHdr, SGID, DGID and the BTH are not.
TEST(InfinibandHeaders, IcrcOfGlobalPacket)
{
    std::vector<uint8_t> pkt(8 + 40 + 12 + 8, 0x11);
    pkt[1] = 0x03; // LNH = 3
    const uint32_t base = InfinibandIcrc::Compute(pkt.data(), pkt.size());
    for (size_t variant : {0, 1, 2, 3, 6, 7, 8 + 1, 8 + 3, 8 + 7, 48 + 4})
    {
        auto copy = pkt;
        copy[variant] ^= 0x0c; // in byte 1 this spares LNH
        EXPECT_EQ(InfinibandIcrc::Compute(copy.data(), copy.size()), base) << variant;
    }
    for (size_t invariant : {8 + 4, 8 + 6, 8 + 8, 8 + 24, 48, 48 + 7, 60})
    {
        auto copy = pkt;
        copy[invariant] ^= 0x0c;
        EXPECT_NE(InfinibandIcrc::Compute(copy.data(), copy.size()), base) << invariant;
    }
}

// A 4096-byte RC SEND ONLY packet: LRH 8 + BTH 12 + 4096 + ICRC 4 + VCRC 2 =
// 4122 bytes on the wire (Linux ib_pack.h header sizes), PktLen = 4120/4.
TEST(InfinibandHeaders, SendOnlyWireSizeAndCrcs)
{
    Ptr<Packet> p = Create<Packet>(4096);
    InfinibandBth bth;
    bth.SetOpcode(InfinibandBth::RC_SEND_ONLY);
    bth.SetDestQp(0x11);
    p->AddHeader(bth);
    InfinibandLrh lrh;
    lrh.SetDlid(2);
    lrh.SetSlid(1);
    lrh.SetPacketLengthFromBytes(8 + 12 + 4096 + 4);
    p->AddHeader(lrh);
    InfinibandAddCrcs(p);
    EXPECT_EQ(p->GetSize(), 8U + 12U + 4096U + 4U + 2U);
    EXPECT_EQ(lrh.GetPacketLengthWords(), 1030);
    EXPECT_TRUE(InfinibandCheckCrcs(p));

    // Trailers round-trip and a switch changing the VL keeps the ICRC valid
    // but invalidates the VCRC until it is recomputed.
    Ptr<Packet> q = p->Copy();
    InfinibandVcrc vcrc;
    InfinibandIcrc icrc;
    q->RemoveTrailer(vcrc);
    q->RemoveTrailer(icrc);
    std::vector<uint8_t> bytes(q->GetSize());
    q->CopyData(bytes.data(), bytes.size());
    EXPECT_EQ(icrc.GetCrc(), InfinibandIcrc::Compute(bytes.data(), bytes.size()));
    InfinibandLrh l2;
    q->RemoveHeader(l2);
    l2.SetVl(4);
    q->AddHeader(l2);
    q->CopyData(bytes.data(), bytes.size());
    EXPECT_EQ(icrc.GetCrc(), InfinibandIcrc::Compute(bytes.data(), bytes.size()));
    q->AddTrailer(icrc);
    q->AddTrailer(vcrc);
    EXPECT_FALSE(InfinibandCheckCrcs(q));
}

// Data rates of the 4x presets (IBTA speed table, OpenSM osm_console.c):
// tolerance 0.1 % because FDR's 64/66 of 56.25 Gb/s is 54.545... Gb/s.
TEST(InfinibandLinkPreset, FourLaneDataRates)
{
    const std::pair<const char*, double> expected[] = {{"SDR", 8e9},
                                                       {"DDR", 16e9},
                                                       {"QDR", 32e9},
                                                       {"FDR10", 40e9},
                                                       {"FDR", 54.545e9},
                                                       {"EDR", 100e9},
                                                       {"HDR", 200e9},
                                                       {"NDR", 400e9},
                                                       {"XDR", 800e9}};
    for (const auto& [name, bps] : expected)
    {
        auto preset = InfinibandGetLinkPreset(name);
        EXPECT_NEAR(static_cast<double>(preset.GetDataRateBps()), bps, bps * 1e-3) << name;
        EXPECT_EQ(preset.widthLanes, 4U);
    }
    // NDR 4x signals at 4 x 106.25 Gb/s = 425 Gb/s; the data rate is exact.
    auto ndr = InfinibandGetLinkPreset("ndr-4x");
    EXPECT_EQ(ndr.GetSignallingBps(), 425000000000ULL);
    EXPECT_EQ(ndr.GetDataRateBps(), 400000000000ULL);
    EXPECT_EQ(ndr.GetName(), "NDR-4x");
}

TEST(InfinibandLinkPreset, NamesAndWidths)
{
    InfinibandLinkPreset p{};
    EXPECT_EQ(InfinibandFindLinkPreset("hdr", p), "");
    EXPECT_EQ(p.speed, "HDR");
    EXPECT_EQ(InfinibandFindLinkPreset("EDR-1x", p), "");
    EXPECT_EQ(p.GetDataRateBps(), 25000000000ULL); // 25.78125 x 64/66
    EXPECT_EQ(InfinibandFindLinkPreset("12x_qdr", p), "");
    EXPECT_EQ(p.GetDataRateBps(), 96000000000ULL); // 12 x 10 x 0.8
    EXPECT_EQ(InfinibandFindLinkPreset("fdr10", p), "");
    EXPECT_EQ(p.speed, "FDR10");
    EXPECT_EQ(InfinibandFindLinkPreset("NDR8X", p), "");
    EXPECT_EQ(p.GetDataRateBps(), 800000000000ULL);

    const std::string err = InfinibandFindLinkPreset("NDR-3x", p);
    EXPECT_NE(err.find("NDR-3x"), std::string::npos) << err;
    EXPECT_NE(err.find("XDR"), std::string::npos) << err; // lists valid names
    EXPECT_NE(InfinibandFindLinkPreset("GDR", p), "");
    EXPECT_NE(InfinibandFindLinkPreset("", p), "");
}

TEST(InfinibandValidation, RejectsMalformedConfiguration)
{
    EXPECT_EQ(InfinibandValidateMtu(4096), "");
    const std::string mtu = InfinibandValidateMtu(3000);
    EXPECT_NE(mtu.find("MTU 3000"), std::string::npos) << mtu;
    EXPECT_EQ(InfinibandMtuCode(256), 1);
    EXPECT_EQ(InfinibandMtuCode(4096), 5);

    EXPECT_EQ(InfinibandValidateDataVlCount(8), "");
    EXPECT_EQ(InfinibandValidateDataVlCount(15), "");
    const std::string vl = InfinibandValidateDataVlCount(16);
    EXPECT_NE(vl.find("VL count 16"), std::string::npos) << vl;
    EXPECT_NE(InfinibandValidateDataVlCount(3), "");

    std::vector<uint8_t> sl2vl(16, 0);
    for (size_t sl = 0; sl < 16; ++sl)
    {
        sl2vl[sl] = static_cast<uint8_t>(sl % 4);
    }
    EXPECT_EQ(InfinibandValidateSlToVl(sl2vl, 4), "");
    sl2vl[9] = 5; // only VLs 0..3 exist
    const std::string missing = InfinibandValidateSlToVl(sl2vl, 4);
    EXPECT_NE(missing.find("SL 9 to VL 5"), std::string::npos) << missing;
    sl2vl[9] = 15;
    EXPECT_NE(InfinibandValidateSlToVl(sl2vl, 15).find("VL 15"), std::string::npos);
    EXPECT_NE(InfinibandValidateSlToVl(std::vector<uint8_t>(8, 0), 4).find("8 entries"),
              std::string::npos);
}
