/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "run-command.h"
#include "scratch-dir.h"

#include "ns3/infiniband-headers.h"
#include "ns3/infiniband-pcap-writer.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>
#include <unistd.h>

using namespace ns3;

namespace
{

Ptr<Packet>
MakeIbPacket(uint16_t slid, uint16_t dlid, uint8_t opcode, uint32_t destQp, uint32_t payloadBytes)
{
    std::vector<uint8_t> payload(payloadBytes + InfinibandBth::PadBytesFor(payloadBytes));
    for (size_t i = 0; i < payload.size(); ++i)
    {
        payload[i] = static_cast<uint8_t>(0xa5 ^ i);
    }
    Ptr<Packet> p = Create<Packet>(payload.data(), payload.size());
    InfinibandBth bth;
    bth.SetOpcode(opcode);
    bth.SetPadCount(InfinibandBth::PadBytesFor(payloadBytes));
    bth.SetDestQp(destQp);
    bth.SetPsn(7);
    p->AddHeader(bth);
    InfinibandLrh lrh;
    lrh.SetSl(1);
    lrh.SetSlid(slid);
    lrh.SetDlid(dlid);
    lrh.SetPacketLengthFromBytes(InfinibandLrh::SIZE_BYTES + p->GetSize() +
                                 InfinibandIcrc::SIZE_BYTES);
    p->AddHeader(lrh);
    InfinibandAddCrcs(p);
    return p;
}

using test_util::RunCommand;

} // namespace

// ERF header layout (Wireshark wiretap/erf.h): 1.5 s = 0x00000001.80000000 as a
// little-endian 32.32 fixed-point timestamp; type 21; flags 0x04 (varying
// length) | interface 2; rlen 16 + 26 = 42, lctr 0, wlen 26 big-endian.
TEST(InfinibandPcap, ErfHeaderExactBytes)
{
    const auto h = InfinibandPcapWriter::ErfHeader(MilliSeconds(1500), 21, 2, 26);
    const std::vector<uint8_t> expected =
        {0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x00, 0x00, 21, 0x06, 0x00, 42, 0x00, 0x00, 0x00, 26};
    EXPECT_EQ(h, expected);
}

// The capture must decode with Debian's tshark down to LRH and BTH fields.
TEST(InfinibandPcap, TsharkDecodesLrhAndBth)
{
    if (std::system("command -v tshark > /dev/null 2>&1") != 0)
    {
        GTEST_SKIP() << "tshark not installed (apt-get install tshark)";
    }
    const test_util::ScratchDir scratch("infiniband-pcap");
    const std::string file = scratch.File("infiniband-pcap-test.pcap");
    {
        InfinibandPcapWriter writer;
        writer.Open(file);
        writer.Write(MicroSeconds(1), MakeIbPacket(1, 2, InfinibandBth::RC_SEND_ONLY, 0x11, 256));
        writer.Write(MicroSeconds(2),
                     MakeIbPacket(3, 7, InfinibandBth::RC_RDMA_WRITE_ONLY, 0xabcd, 4096),
                     1);
        writer.Write(MicroSeconds(3), MakeIbPacket(5, 6, InfinibandBth::RC_SEND_ONLY, 0x42, 5));
    }
    // The payloads are opaque bytes; Wireshark 4.0's RPC-over-RDMA heuristic
    // claims short SEND payloads and flags them malformed, so it is disabled.
    const std::string tshark = "tshark --disable-heuristic rpcrdma_infiniband -r " + file;
    const std::string fields =
        RunCommand(tshark + " -T fields -e erf.types.type -e infiniband.lrh.slid"
                            " -e infiniband.lrh.dlid -e infiniband.lrh.pktlen"
                            " -e infiniband.bth.opcode -e infiniband.bth.destqp"
                            " -e infiniband.bth.psn -e infiniband.invariant.crc 2>&1");
    const std::string verbose = RunCommand(tshark + " -V 2>&1");
    // PktLen = (8 + 12 + payload + pad + 4) / 4 words: 70, 1030, 8.
    EXPECT_NE(fields.find("\t1\t2\t70\t4\t0x000011\t7\t"), std::string::npos) << fields;
    EXPECT_NE(fields.find("\t3\t7\t1030\t10\t0x00abcd\t7\t"), std::string::npos) << fields;
    EXPECT_NE(fields.find("\t5\t6\t8\t4\t0x000042\t7\t"), std::string::npos) << fields;
    EXPECT_NE(verbose.find("Destination Local ID: 7"), std::string::npos) << verbose;
    EXPECT_NE(verbose.find("Source Local ID: 3"), std::string::npos) << verbose;
    EXPECT_NE(verbose.find("Destination Queue Pair: 0x00abcd"), std::string::npos) << verbose;
    EXPECT_EQ(verbose.find("Malformed"), std::string::npos) << verbose;
}

// A flow-control packet record: 24-byte pcap file header, 16-byte pcap record
// header, ERF header with type 25 and rlen 22 / wlen 6, then the 6 FC bytes.
TEST(InfinibandPcap, LinkPacketRecordLayout)
{
    const test_util::ScratchDir scratch("infiniband-pcap-link");
    const std::string file = scratch.File("infiniband-pcap-link.pcap");
    InfinibandFlowControlPacket fc;
    fc.SetVl(3);
    fc.SetFctbs(100);
    fc.SetFccl(200);
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(fc);
    {
        InfinibandPcapWriter writer;
        writer.Open(file);
        writer.WriteLinkPacket(Seconds(2), p);
    }
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    ASSERT_EQ(bytes.size(), 24U + 16U + 16U + 6U);
    EXPECT_EQ(bytes[20], 197); // link type ERF, little-endian file header
    const uint8_t* erf = bytes.data() + 40;
    EXPECT_EQ(erf[4], 2);  // seconds in the upper half of the timestamp
    EXPECT_EQ(erf[8], 25); // InfiniBand link
    EXPECT_EQ(erf[11], 22);
    EXPECT_EQ(erf[15], 6);
    const std::vector<uint8_t> payload(erf + 16, erf + 22);
    std::vector<uint8_t> expected(6);
    p->CopyData(expected.data(), 6);
    EXPECT_EQ(payload, expected);
    EXPECT_EQ(payload[0], 0x00); // Op 0, FCTBS 100 = 0x064
    EXPECT_EQ(payload[1], 0x64);
    EXPECT_EQ(payload[2], 0x30); // VL 3, FCCL 200 = 0x0c8
    EXPECT_EQ(payload[3], 0xc8);
}
