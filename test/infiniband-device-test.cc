/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// InfiniBand devices on the credit link layer: link efficiency, hop latency,
// incast, VL arbitration, credit-loop deadlock, congestion control,
// configuration checks.  Each test states the analytical figure it checks.  Messages go
// through GpuTransport over an InfinibandTransportPlane (infiniband-messages.h), in IbMtu
// packets unless a test says otherwise.
#include "infiniband-messages.h"
#include "run-command.h"
#include "scratch-dir.h"

#include "ns3/boolean.h"
#include "ns3/bulk-send-helper.h"
#include "ns3/config.h"
#include "ns3/credit-link-channel.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/credit-link-watchdog.h"
#include "ns3/double.h"
#include "ns3/inet-socket-address.h"
#include "ns3/infiniband-a10-congestion-control.h"
#include "ns3/infiniband-helper.h"
#include "ns3/infiniband-link-preset.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/packet-sink-helper.h"
#include "ns3/packet-sink.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/udp-client-server-helper.h"
#include "ns3/udp-echo-helper.h"
#include "ns3/udp-server.h"
#include "ns3/uinteger.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <numeric>
#include <string>
#include <unistd.h>

using namespace ns3;

namespace
{

class InfinibandDeviceTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

// Wire bytes of an RC SEND packet: LRH 8 + BTH 12 + payload + pad + ICRC 4 + VCRC 2.
uint32_t
RcWireBytes(uint32_t payload)
{
    return 8 + 12 + payload + InfinibandBth::PadBytesFor(payload) + 4 + 2;
}

// host - switch - switch - host
InfinibandTopology
Line()
{
    InfinibandTopology t;
    const uint32_t h0 = t.AddHca("h0");
    const uint32_t h1 = t.AddHca("h1");
    const uint32_t s0 = t.AddSwitch("s0", 4);
    const uint32_t s1 = t.AddSwitch("s1", 4);
    t.Connect(h0, 1, s0, 1);
    t.Connect(s0, 2, s1, 2);
    t.Connect(s1, 1, h1, 1);
    return t;
}

} // namespace

// NDR 4x, MTU 4096: back-to-back packets of 4122 wire bytes each carry 4096 payload
// bytes, so goodput = 400 Gb/s x 4096/4122 = 397.48 Gb/s (data rate = 4 x 106.25 Gb/s
// x 16/17).  Measured between the first and last packet arrivals (N-1 packet times);
// tolerance 0.5 %.
TEST_F(InfinibandDeviceTest, NdrLinkReachesPayloadEfficiency)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("NDR"));
    ib.SetDeviceAttribute("IbMtu", UintegerValue(4096));
    NodeContainer nodes;
    nodes.Create(2);
    NetDeviceContainer d = ib.Connect(nodes.Get(0), nodes.Get(1));
    auto a = DynamicCast<InfinibandNetDevice>(d.Get(0));
    auto b = DynamicCast<InfinibandNetDevice>(d.Get(1));
    a->SetLid(1);
    b->SetLid(2);
    ASSERT_EQ(ib.Validate(), "");
    const uint32_t packets = 2000;
    Time first;
    Time last;
    uint64_t rx = 0;
    b->TraceConnectWithoutContext(
        "Rx",
        MakeCallback(+[](Time* f, Time* l, uint64_t* n, Ptr<const Packet>, uint32_t) {
            if (*n == 0)
            {
                *f = Simulator::Now();
            }
            *l = Simulator::Now();
            ++*n;
        }).Bind(&first, &last, &rx));
    InfinibandMessages m({a, b});
    Simulator::ScheduleNow([&m]() { m.Send(0, 1, 4096ull * 2000); });
    Simulator::Run();
    ASSERT_EQ(rx, packets);
    const double goodputBps = (packets - 1) * 4096.0 * 8 / (last - first).GetSeconds();
    const double expected =
        InfinibandGetLinkPreset("NDR").GetDataRateBps() * 4096.0 / RcWireBytes(4096);
    EXPECT_NEAR(goodputBps / expected, 1.0, 0.005) << goodputBps;
    ASSERT_EQ(m.GetReceived().size(), 1u);
    EXPECT_EQ(m.GetReceived()[0].bytes, 4096ull * 2000);
    EXPECT_EQ(b->GetReceiveDiscards(), 0u);
}

// Time from sending one 1000 B message (one packet) at 1 us to its arrival; runs the
// simulation and destroys it.
int64_t
OneMessageLatencyNs(Ptr<InfinibandNetDevice> src, Ptr<InfinibandNetDevice> dst)
{
    InfinibandMessages m({src, dst});
    Simulator::Schedule(MicroSeconds(1), [&m]() { m.Send(0, 1, 1000); });
    Simulator::Run();
    Simulator::Destroy();
    EXPECT_EQ(m.GetReceived().size(), 1u);
    EXPECT_EQ(m.GetReceived().size() == 1 ? m.GetReceived()[0].bytes : 0, 1000u);
    return m.GetReceived().empty() ? -1
                                   : (m.GetReceived()[0].at - MicroSeconds(1)).GetNanoSeconds();
}

// One packet, 1000 B payload = 1026 wire bytes = 8208 bits, host-switch-switch-host at
// 102.6 Gb/s (Preset off, efficiency 1) so a packet takes 80 ns, 3 x 100 ns propagation,
// 2 x 130 ns switch latency.  Virtual cut-through (the default): the packet is serialised
// once, and each switch routes it once its 8-byte LRH is in (0.62 ns, a whole 1 ns: frame
// times round up) = 80 + 2 x (1 + 130) + 300 = 642 ns.  Store-and-forward: 3 x 80 + 2 x 130 +
// 300 = 800 ns.  Both exact.
int64_t
ThreeHopLatencyNs(const std::string& forwarding)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue(""));
    ib.SetDeviceAttribute("DataRate", DataRateValue(DataRate("102.6Gbps")));
    ib.SetChannelAttribute("Delay", TimeValue(NanoSeconds(100)));
    ib.SetSwitchAttribute("PortToPortLatency", TimeValue(NanoSeconds(130)));
    if (!forwarding.empty())
    {
        ib.SetSwitchAttribute("Forwarding", StringValue(forwarding));
    }
    InfinibandFabric f = ib.Build(Line());
    EXPECT_EQ(RcWireBytes(1000), 1026u);
    return OneMessageLatencyNs(f.GetHostDevice(0), f.GetHostDevice(1));
}

TEST_F(InfinibandDeviceTest, ThreeHopLatencyIsSumOfParts)
{
    EXPECT_EQ(ThreeHopLatencyNs(""), 80 + 2 * (1 + 130) + 3 * 100);
    EXPECT_EQ(ThreeHopLatencyNs("StoreAndForward"), 3 * 80 + 2 * 130 + 3 * 100);
}

// Incast: 7 hosts on one 8-port switch each send 2 MB to host 0.  Nothing may be lost
// (every byte delivered, no PSN gap), and round robin over the switch inputs gives every
// flow 1/7 of the bottleneck: with equal flows started together the per-flow
// throughputs bytes/FCT are equal, Jain index (sum x)^2 / (n sum x^2) > 0.99.
TEST_F(InfinibandDeviceTest, IncastIsLosslessAndFair)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("HDR"));
    InfinibandFabric f = ib.BuildFatTree(8, 8, 1.0);
    ASSERT_EQ(f.hosts.GetN(), 8u);
    const uint64_t bytes = 2000000;
    Ptr<InfinibandNetDevice> sink = f.GetHostDevice(0);
    InfinibandMessages m(InfinibandMessages::Hosts(f));
    for (uint32_t h = 1; h < 8; ++h)
    {
        m.Send(h, 0, bytes);
    }
    Simulator::Run();
    std::vector<Time> fct(8);
    std::vector<uint64_t> got(8, 0);
    for (const auto& r : m.GetReceived())
    {
        fct[r.src] = r.at;
        got[r.src] += r.bytes;
    }
    std::vector<double> x;
    for (uint32_t h = 1; h < 8; ++h)
    {
        EXPECT_EQ(got[h], bytes) << "host " << h;
        x.push_back(bytes / fct[h].GetSeconds());
    }
    EXPECT_EQ(m.transport->GetRxBytes(0), 7 * bytes);
    EXPECT_EQ(sink->GetReceiveDiscards(), 0u);
    EXPECT_FALSE(ib.GetWatchdog()->HasFired());
    const double sum = std::accumulate(x.begin(), x.end(), 0.0);
    const double sq = std::inner_product(x.begin(), x.end(), x.begin(), 0.0);
    EXPECT_GT(sum * sum / (x.size() * sq), 0.99);
    // The bottleneck runs at line rate: 7 x 2 MB of payload over the HDR link.
    const double bound = 7.0 * bytes * 8 * RcWireBytes(4096) / 4096 /
                         InfinibandGetLinkPreset("HDR").GetDataRateBps();
    Time lastFct = *std::max_element(fct.begin(), fct.end());
    EXPECT_NEAR(lastFct.GetSeconds() / bound, 1.0, 0.01);
    // Lossless: every byte and credit of every link accounted for, nothing left behind.
    CreditLinkConservation check;
    check.Add("infiniband", NodeContainer(f.hosts, f.switches));
    const CreditLinkConservationReport r = check.Check();
    EXPECT_TRUE(r.Ok()) << r.Describe();
    EXPECT_EQ(r.planes.at("infiniband").receivedBytes, r.planes.at("infiniband").sentBytes);
}

// VL arbitration: low table "0:192,1:64" (64-byte units).  With 4122-byte packets an
// entry of 192 units sends 3 packets (the third overdraws), 64 units one, so VL0:VL1
// bytes = 3:1 while both are backlogged; tolerance 2 %.
TEST_F(InfinibandDeviceTest, VlArbitrationWeightsSplitBandwidth)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("DataVls", UintegerValue(2));
    ib.SetDeviceAttribute("VlArbitrationLow", StringValue("0:192,1:64"));
    InfinibandFabric f = ib.Build(Line());
    std::array<uint64_t, 2> perVl{0, 0};
    f.GetHostDevice(1)->TraceConnectWithoutContext(
        "Rx",
        MakeCallback(+[](std::array<uint64_t, 2>* v, Ptr<const Packet> p, uint32_t vc) {
            (*v)[vc] += p->GetSize();
        }).Bind(&perVl));
    // Two planes on the same HCAs, each with its SL and QP.
    InfinibandMessages sl0(InfinibandMessages::Hosts(f), 0, 0x4754); // SL0 -> VL0
    InfinibandMessages sl1(InfinibandMessages::Hosts(f), 1, 0x4755); // SL1 -> VL1
    sl0.Send(0, 1, 100000000);
    sl1.Send(0, 1, 100000000);
    Simulator::Stop(MicroSeconds(50));
    Simulator::Run();
    ASSERT_GT(perVl[1], 0u);
    EXPECT_NEAR(static_cast<double>(perVl[0]) / perVl[1], 3.0, 0.06);
}

// SL->VL per (in, out) port pair: switch s1 maps every SL from its port 2 to its port 1
// onto VL1, so host 1 receives SL0 packets on VL1 (LRH.VL = 1, VC 1) while SL stays 0,
// and the rewritten VCRC (and the untouched ICRC) check out.
TEST_F(InfinibandDeviceTest, SwitchSlToVlRemapsAndKeepsCrcsValid)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("DataVls", UintegerValue(2));
    InfinibandFabric f = ib.Build(Line());
    f.switchCores[1]->SetSlToVl(2, 1, std::vector<uint8_t>(16, 1));
    ASSERT_EQ(ib.Validate(), "");

    struct Seen
    {
        uint32_t packets{0};
        uint32_t onVl1{0};
        uint32_t crcOk{0};
        uint32_t sl0{0};
    } seen;

    f.GetHostDevice(1)->TraceConnectWithoutContext(
        "Rx",
        MakeCallback(+[](Seen* s, Ptr<const Packet> p, uint32_t vc) {
            InfinibandLrh lrh;
            p->PeekHeader(lrh);
            s->packets++;
            s->onVl1 += vc == 1 && lrh.GetVl() == 1;
            s->sl0 += lrh.GetSl() == 0;
            s->crcOk += InfinibandCheckCrcs(p);
        }).Bind(&seen));
    InfinibandMessages m(InfinibandMessages::Hosts(f));
    m.Send(0, 1, 3 * 4096);
    Simulator::Run();
    EXPECT_EQ(seen.packets, 3u);
    EXPECT_EQ(seen.onVl1, 3u);
    EXPECT_EQ(seen.sl0, 3u);
    EXPECT_EQ(seen.crcOk, 3u);
}

// Adaptive routing: on a leaf/spine tree (radix 4: 4 leaves of 2 hosts, 2 spines) one
// message from a host on leaf 0 to a host on leaf 1 uses a single spine with the LFT,
// and both spines (least bytes waiting, ties in turn) with the AR groups.
TEST_F(InfinibandDeviceTest, AdaptiveRoutingSpreadsOverSpines)
{
    for (bool ar : {false, true})
    {
        InfinibandHelper ib;
        ib.SetSubnetManagerAttribute("AdaptiveRouting", BooleanValue(ar));
        ib.SetSwitchAttribute("AdaptiveRouting", BooleanValue(ar));
        InfinibandFabric f = ib.BuildFatTree(4, 8, 1.0);
        ASSERT_EQ(f.topology.GetTiers(), 2u);
        InfinibandMessages m(InfinibandMessages::Hosts(f));
        m.Send(0, 2, 100 * 4096);
        Simulator::Run();
        ASSERT_EQ(m.GetReceived().size(), 1u);
        EXPECT_EQ(m.GetReceived()[0].bytes, 100u * 4096);
        uint32_t spinesUsed = 0;
        for (uint32_t s = 0; s < f.switches.GetN(); ++s)
        {
            const std::string name = f.topology.GetNode(f.topology.GetSwitches()[s]).name;
            if (name.rfind("spine", 0) == 0 && f.switchCores[s]->GetForwardedPackets() > 0)
            {
                ++spinesUsed;
            }
        }
        EXPECT_EQ(spinesUsed, ar ? 2u : 1u);
        Simulator::Destroy();
    }
}

// Min-hop on a 5-switch ring with AllowCreditLoops: every host sends to the host two
// switches clockwise, so all routes turn the same way and the channel dependency graph
// is a cycle.  With one-packet receive buffers the ring fills and stops; the watchdog
// must fire and name ring links.  The same traffic under updn completes.
TEST_F(InfinibandDeviceTest, WatchdogFiresOnCreditLoopDeadlock)
{
    for (const std::string engine : {"minhop", "updn"})
    {
        InfinibandHelper ib;
        ib.SetSubnetManagerAttribute("RoutingEngine", StringValue(engine));
        ib.SetSubnetManagerAttribute("AllowCreditLoops", BooleanValue(true));
        ib.SetDeviceAttribute("ReceiveBufferBytes", UintegerValue(4224));
        ib.SetWatchdogAttribute("Timeout", TimeValue(MicroSeconds(20)));
        InfinibandFabric f = ib.Build(InfinibandTopology::Ring(5, 1));
        ASSERT_EQ(f.subnetManager->HasCreditLoop(), engine == "minhop");
        InfinibandMessages m(InfinibandMessages::Hosts(f));
        for (uint32_t h = 0; h < 5; ++h)
        {
            m.Send(h, (h + 2) % 5, 4000000);
        }
        Simulator::Run();
        const std::size_t received = m.GetReceived().size();
        if (engine == "minhop")
        {
            EXPECT_TRUE(ib.GetWatchdog()->HasFired());
            EXPECT_NE(ib.GetWatchdog()->GetReport().find("link n"), std::string::npos)
                << ib.GetWatchdog()->GetReport();
            EXPECT_LT(received, 5u);
        }
        else
        {
            EXPECT_FALSE(ib.GetWatchdog()->HasFired()) << ib.GetWatchdog()->GetReport();
            EXPECT_EQ(received, 5u);
        }
        Simulator::Destroy();
    }
}

// Malformed configuration is refused by TryBuild with a message naming the problem.
TEST_F(InfinibandDeviceTest, MalformedConfigurationRejected)
{
    struct Case
    {
        std::string attribute;
        std::string value;
        std::string expect;
    };

    for (const Case& c : {Case{"IbMtu", "3000", "3000"},
                          Case{"DataVls", "16", "16"},
                          Case{"SlToVl", "0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0", "2"}})
    {
        InfinibandHelper ib;
        ib.SetDeviceAttribute("DataVls", UintegerValue(2));
        if (c.attribute == "SlToVl")
        {
            ib.SetDeviceAttribute(c.attribute, StringValue(c.value));
        }
        else
        {
            ib.SetDeviceAttribute(c.attribute, UintegerValue(std::stoul(c.value)));
        }
        InfinibandFabric f;
        const std::string error = ib.TryBuildFatTree(8, 4, 1.0, f);
        EXPECT_NE(error.find(c.expect), std::string::npos) << c.attribute << ": " << error;
        EXPECT_NE(error.find("InfinibandNetDevice"), std::string::npos) << error;
        Simulator::Destroy();
    }
    // A switch SL->VL entry beyond the output port's VLs.
    {
        InfinibandHelper ib;
        ib.SetDeviceAttribute("DataVls", UintegerValue(2));
        ib.SetSwitchAttribute("SlToVl", StringValue("0,1,3,0,0,0,0,0,0,0,0,0,0,0,0,0"));
        InfinibandFabric f;
        const std::string error = ib.TryBuildFatTree(8, 4, 1.0, f);
        EXPECT_NE(error.find("InfinibandSwitch"), std::string::npos) << error;
        Simulator::Destroy();
    }
    // A host without a cable.
    {
        InfinibandTopology t = Line();
        t.AddHca("lonely");
        InfinibandHelper ib;
        InfinibandFabric f;
        const std::string error = ib.TryBuild(t, f);
        EXPECT_NE(error.find("lonely"), std::string::npos) << error;
    }
}

// IPoIB: UDP (a UdpClient stream and an echo round trip) and TCP (BulkSend) over a
// two-leaf fat tree with ns-3's unchanged internet stack and applications.  All 200 UDP
// datagrams and every TCP byte must arrive (the fabric is lossless).
TEST_F(InfinibandDeviceTest, Ipv4UdpAndTcpOverIpoib)
{
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("EDR"));
    InfinibandFabric f = ib.BuildFatTree(4, 4, 1.0);
    InternetStackHelper internet;
    internet.Install(f.hosts);
    Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(f.hostDevices);
    ib.PopulateIpoib(f.hostDevices);
    ASSERT_EQ(ib.GetIpoibTable()->GetSize(), 4u);
    EXPECT_EQ(f.GetHostDevice(0)->GetMtu(), 4092u);

    UdpServerHelper udpServer(9);
    ApplicationContainer server = udpServer.Install(f.hosts.Get(3));
    UdpClientHelper udpClient(ifs.GetAddress(3), 9);
    udpClient.SetAttribute("MaxPackets", UintegerValue(200));
    udpClient.SetAttribute("Interval", TimeValue(MicroSeconds(1)));
    udpClient.SetAttribute("PacketSize", UintegerValue(1400));
    udpClient.Install(f.hosts.Get(0)).Start(MicroSeconds(10));

    UdpEchoServerHelper echoServer(7);
    echoServer.Install(f.hosts.Get(1));
    UdpEchoClientHelper echoClient(ifs.GetAddress(1), 7);
    echoClient.SetAttribute("MaxPackets", UintegerValue(1));
    ApplicationContainer echo = echoClient.Install(f.hosts.Get(2));
    uint32_t echoed = 0;
    echo.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(+[](uint32_t* n, Ptr<const Packet>) {
                                                      ++*n;
                                                  }).Bind(&echoed));
    echo.Start(MicroSeconds(10));

    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), 5000));
    ApplicationContainer sink = sinkHelper.Install(f.hosts.Get(2));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(2), 5000));
    bulk.SetAttribute("MaxBytes", UintegerValue(2000000));
    bulk.Install(f.hosts.Get(1)).Start(MicroSeconds(10));

    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    EXPECT_EQ(DynamicCast<UdpServer>(server.Get(0))->GetReceived(), 200u);
    EXPECT_EQ(echoed, 1u);
    EXPECT_EQ(DynamicCast<PacketSink>(sink.Get(0))->GetTotalRx(), 2000000u);
    EXPECT_EQ(f.GetHostDevice(0)->GetIbCounters().ipoibUnresolved, 0u);
}

using test_util::RunCommand;

// The capture of host 0's port decodes with tshark: the 3 packets it sent (a 9000-byte
// message at MTU 4096) show SLID = host 0's LID and DLID = host 1's, with PSNs 0, 1, 2.
TEST_F(InfinibandDeviceTest, PcapDecodesWithTshark)
{
    if (std::system("command -v tshark > /dev/null 2>&1") != 0)
    {
        GTEST_SKIP() << "tshark not installed (apt-get install tshark)";
    }
    const test_util::ScratchDir scratch("ib-device-pcap");
    const std::string prefix = scratch.File("ib-device-test");
    uint16_t slid = 0;
    uint16_t dlid = 0;
    {
        InfinibandHelper ib;
        InfinibandFabric f = ib.BuildFatTree(8, 2, 1.0);
        ib.EnablePcap(prefix, f.hostDevices.Get(0));
        slid = f.hostLids[0];
        dlid = f.hostLids[1];
        InfinibandMessages m(InfinibandMessages::Hosts(f), 0, 0x42);
        m.Send(0, 1, 9000);
        Simulator::Run();
        Simulator::Destroy(); // closes the capture
    }
    const std::string file = prefix + "-" + "0" + "-0.pcap";
    const std::string fields =
        RunCommand("tshark --disable-heuristic rpcrdma_infiniband -r " + file +
                   " -T fields -e infiniband.lrh.slid -e infiniband.lrh.dlid -e infiniband.bth.psn"
                   " -e infiniband.bth.destqp 2>/dev/null");
    std::string expected;
    for (uint32_t psn = 0; psn < 3; ++psn)
    {
        expected += std::to_string(slid) + "\t" + std::to_string(dlid) + "\t" +
                    std::to_string(psn) + "\t0x000042\n";
    }
    EXPECT_EQ(fields, expected);

    // IPoIB: a UDP datagram decodes as UD SEND ONLY + DETH + IPoIB + IPv4 + UDP.
    {
        InfinibandHelper ib;
        InfinibandFabric f = ib.BuildFatTree(8, 2, 1.0);
        InternetStackHelper internet;
        internet.Install(f.hosts);
        Ipv4AddressHelper addresses("10.1.0.0", "255.255.255.0");
        Ipv4InterfaceContainer ifs = addresses.Assign(f.hostDevices);
        ib.PopulateIpoib(f.hostDevices);
        ib.EnablePcap(prefix + "-ip", f.hostDevices.Get(0));
        UdpServerHelper server(9);
        server.Install(f.hosts.Get(1));
        UdpClientHelper client(ifs.GetAddress(1), 9);
        client.SetAttribute("MaxPackets", UintegerValue(1));
        client.Install(f.hosts.Get(0)).Start(MicroSeconds(1));
        Simulator::Run();
        Simulator::Destroy();
    }
    const std::string ipFile = prefix + "-ip-0-0.pcap";
    const std::string ipFields = RunCommand("tshark -r " + ipFile +
                                            " -T fields -e infiniband.bth.opcode -e ip.src"
                                            " -e ip.dst -e udp.dstport 2>/dev/null");
    EXPECT_EQ(ipFields, "100\t10.1.0.1\t10.1.0.2\t9\n");
}

// Congestion control (IBA Annex A10).  Single switch; hosts 1-4 send an incast to host
// 0 and host 1 also sends a victim message to host 5 on the same SL.  Without CC the
// victim's packets queue in host 1's input FIFO behind incast packets waiting for the
// congested port, so the victim runs at about the incast share (1/4 of the link).  With
// CC the switch marks FECN, host 0 returns CNPs, the senders' CCT indices rise and
// their injection towards host 0 slows (host 1's HCA holds those packets, so its
// transport keeps sending the victim's), and the victim completes markedly sooner
// (measured 254 vs 325 us; required: < 0.8 x its time without CC, 1.0 if CC did
// nothing), with FECN/BECN counts and a raised CCT index observed.
TEST_F(InfinibandDeviceTest, CongestionControlProtectsVictimFlow)
{
    std::map<bool, Time> victimTime;
    for (bool cc : {false, true})
    {
        InfinibandHelper ib;
        ib.SetDeviceAttribute("Preset", StringValue("HDR"));
        ib.SetDeviceAttribute("CcEnabled", BooleanValue(cc));
        ib.SetSwitchAttribute("CcEnabled", BooleanValue(cc));
        InfinibandFabric f = ib.BuildFatTree(8, 6, 1.0);
        uint32_t maxCcti = 0;
        f.GetHostDevice(1)->TraceConnectWithoutContext(
            "Ccti",
            MakeCallback(+[](uint32_t* m, uint16_t, uint32_t c) {
                *m = std::max(*m, c);
            }).Bind(&maxCcti));
        InfinibandMessages m(InfinibandMessages::Hosts(f));
        for (uint32_t h = 1; h <= 4; ++h)
        {
            m.Send(h, 0, 8000000);
        }
        m.Send(1, 5, 2000000);
        Simulator::Run();
        Time victimDone;
        for (const auto& r : m.GetReceived())
        {
            victimDone = r.bytes == 2000000 ? r.at : victimDone;
        }
        ASSERT_TRUE(victimDone.IsStrictlyPositive());
        victimTime[cc] = victimDone;
        std::cout << "CC " << cc << ": victim " << victimDone.GetMicroSeconds() << " us, FECN "
                  << f.GetHostDevice(0)->GetIbCounters().fecnReceived << ", CNPs "
                  << f.GetHostDevice(0)->GetIbCounters().cnpSent << ", max CCTI " << maxCcti
                  << "\n";
        uint64_t marked = 0;
        for (const auto& sw : f.switchCores)
        {
            marked += sw->GetFecnMarked();
        }
        if (cc)
        {
            EXPECT_GT(marked, 0u);
            EXPECT_GT(f.GetHostDevice(0)->GetIbCounters().cnpSent, 0u);
            EXPECT_GT(f.GetHostDevice(1)->GetIbCounters().becnReceived, 0u);
            EXPECT_GT(maxCcti, 0u);
        }
        else
        {
            EXPECT_EQ(marked, 0u);
            EXPECT_EQ(f.GetHostDevice(1)->GetIbCounters().becnReceived, 0u);
        }
        Simulator::Destroy();
    }
    EXPECT_LT(victimTime[true].GetSeconds(), 0.8 * victimTime[false].GetSeconds())
        << "victim " << victimTime[false].GetMicroSeconds() << " us without CC, "
        << victimTime[true].GetMicroSeconds() << " us with CC";
}

namespace
{

struct StrategyRun
{
    double senderRateBps{0}; //!< payload rate of host 1 over its second half of packets
    double bottleneckBps{0}; //!< payload rate of the switch -> host 0 link, alone
    std::string strategy;    //!< TypeId the HCA runs
    uint64_t fecnAtSink{0};
    uint64_t cnpsFromSink{0};
    uint64_t becnAtSender{0};
    uint32_t senderCcti{0};  //!< towards host 0, at the end
    uint32_t tracedCcti{0};  //!< largest the HCA's Ccti trace reported
    uint32_t pacedMidRun{0}; //!< packets host 1's HCA held for their injection time at 500 us
    uint32_t pacedAtEnd{0};
};

// Hosts 1 and 2 each send 4 MiB (1024 MTU packets) to host 0 over one HDR switch
// marking FECN above 4 KiB waiting; every HCA is given \p cc and CcEnabled \p ccEnabled.
// \p bursts: the transport's adaptive packets, 4 MiB / MinPacketsPerMessage 32 = 128 KiB
// clamped to MaxBurstPackets 4 x 4096 B, so 256 bursts of 16 KiB instead.
StrategyRun
IncastUnder(Ptr<InfinibandCongestionControl> cc, bool ccEnabled, bool bursts = false)
{
    InfinibandTopology t;
    const uint32_t sw = t.AddSwitch("s0", 4);
    for (uint32_t h = 0; h < 3; ++h)
    {
        t.Connect(t.AddHca("h" + std::to_string(h)), 1, sw, h + 1);
    }
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue("HDR"));
    ib.SetDeviceAttribute("MaxBurstPackets", UintegerValue(4));
    ib.SetDeviceAttribute("CcEnabled", BooleanValue(ccEnabled));
    ib.SetDeviceAttribute("CongestionControl", PointerValue(cc));
    ib.SetSwitchAttribute("CcEnabled", BooleanValue(true));
    ib.SetSwitchAttribute("CcThresholdBytes", UintegerValue(4096));
    InfinibandFabric f = ib.Build(t);
    std::vector<Time> txEnd;
    f.GetHostDevice(1)->TraceConnectWithoutContext(
        "TxEnd",
        MakeCallback(+[](std::vector<Time>* v, Ptr<const Packet>, uint32_t) {
            v->push_back(Simulator::Now());
        }).Bind(&txEnd));
    StrategyRun r;
    f.GetHostDevice(1)->TraceConnectWithoutContext(
        "Ccti",
        MakeCallback(+[](uint32_t* m, uint16_t, uint32_t c) {
            *m = std::max(*m, c);
        }).Bind(&r.tracedCcti));
    const uint64_t bytes = 1024 * 4096;
    InfinibandMessages m(InfinibandMessages::Hosts(f), 0, 0x4754, !bursts);
    const uint64_t packetBytes = bursts ? 4 * 4096 : 4096;
    EXPECT_EQ(m.plane->GetMaxBurstBytes(), 4u * 4096);
    for (uint32_t h = 1; h <= 2; ++h)
    {
        m.Send(h, 0, bytes);
    }
    Ptr<InfinibandNetDevice> sender = f.GetHostDevice(1);
    Simulator::Schedule(MicroSeconds(500),
                        [&r, sender]() { r.pacedMidRun = sender->GetPacedPackets(); });
    // Both messages take at most 1024 x 1 us; stop before any 1 s CCTI timer.
    Simulator::Stop(MilliSeconds(10));
    Simulator::Run();
    const std::size_t n = bytes / packetBytes;
    EXPECT_EQ(txEnd.size(), n);
    if (txEnd.size() == n)
    {
        r.senderRateBps =
            (n - 1 - n / 2) * packetBytes * 8.0 / (txEnd[n - 1] - txEnd[n / 2]).GetSeconds();
    }
    r.bottleneckBps = InfinibandGetLinkPreset("HDR").GetDataRateBps() * 4096.0 / RcWireBytes(4096);
    r.strategy = f.GetHostDevice(1)->GetCongestionControl()->GetInstanceTypeId().GetName();
    r.fecnAtSink = f.GetHostDevice(0)->GetIbCounters().fecnReceived;
    r.cnpsFromSink = f.GetHostDevice(0)->GetIbCounters().cnpSent;
    r.becnAtSender = f.GetHostDevice(1)->GetIbCounters().becnReceived;
    r.senderCcti = f.GetHostDevice(1)->GetCcti(f.hostLids[0]);
    r.pacedAtEnd = sender->GetPacedPackets();
    Simulator::Destroy();
    return r;
}

} // namespace

// Congestion control is the HCA's CongestionControl strategy; a given object wins over
// the CcEnabled shorthand.  Two senders, one congested switch port, the switch marking
// FECN in both runs:
//  - InfinibandNoCongestionControl (with CcEnabled true): no CNP is returned, and the
//    senders share the bottleneck: each sends at half of HDR's payload rate,
//    200 Gb/s x 4096 / 4122 / 2 = 99.37 Gb/s (tolerance 0.2 %: credit returns pace it;
//    measured within 0.001 %).
//  - InfinibandA10CongestionControl pinned at CCTI 50 by the first BECN (CctiIncrease =
//    CctiLimit = 50, CctiTimer 1 s so no recovery within the run), with CcEnabled false:
//    CCT entry 50 x IpdStep 20 ns = 1 us between packets, 4096 B / 1 us = 32.768 Gb/s
//    (tolerance 0.1 %: injection events are exact).
TEST_F(InfinibandDeviceTest, CongestionControlStrategyIsSelectedByPointer)
{
    const StrategyRun none = IncastUnder(CreateObject<InfinibandNoCongestionControl>(), true);
    EXPECT_EQ(none.strategy, "ns3::InfinibandNoCongestionControl");
    EXPECT_GT(none.fecnAtSink, 0u);
    EXPECT_EQ(none.cnpsFromSink, 0u);
    EXPECT_EQ(none.becnAtSender, 0u);
    EXPECT_EQ(none.senderCcti, 0u);
    EXPECT_EQ(none.tracedCcti, 0u);
    EXPECT_NEAR(none.senderRateBps / (none.bottleneckBps / 2), 1.0, 0.002) << none.senderRateBps;
    EXPECT_EQ(none.pacedMidRun, 0u); // nothing delays a packet: none is held

    auto a10 = CreateObject<InfinibandA10CongestionControl>();
    a10->SetAttribute("CctiIncrease", UintegerValue(50));
    a10->SetAttribute("CctiLimit", UintegerValue(50));
    a10->SetAttribute("CctiTimer", TimeValue(Seconds(1)));
    const StrategyRun pinned = IncastUnder(a10, false);
    // At 500 us, about 500 of host 1's 1024 packets are out at 1 us each: the HCA holds
    // the rest for their injection times, and has let every one go by the end.
    EXPECT_GT(pinned.pacedMidRun, 0u);
    EXPECT_EQ(pinned.pacedAtEnd, 0u);
    EXPECT_EQ(pinned.strategy, "ns3::InfinibandA10CongestionControl");
    EXPECT_GT(pinned.cnpsFromSink, 0u);
    EXPECT_GT(pinned.becnAtSender, 0u);
    EXPECT_EQ(pinned.senderCcti, 50u);
    EXPECT_EQ(pinned.tracedCcti, 50u);
    EXPECT_NEAR(pinned.senderRateBps / 32.768e9, 1.0, 0.001) << pinned.senderRateBps;
    // The HCAs ran forks: the prototype itself never saw a BECN.
    EXPECT_EQ(a10->GetCcti(1), 0u);
}

// The pacing acts on whatever the transport sends: the same two runs with its adaptive
// bursts (4 real packets per simulated one, 256 instead of 1024 from host 1) give the same
// rates.  No CC: half of HDR's payload rate, 99.37 Gb/s (a burst is on the wire as its 4
// real packets of 4122 B; tolerance 0.2 % as above).  A10 at CCTI 50: a burst of 4 waits
// 4 x 1 us, 16384 B / 4 us = 32.768 Gb/s (tolerance 0.1 %, injection events are exact).
TEST_F(InfinibandDeviceTest, CongestionControlPacesTransportBursts)
{
    const StrategyRun none =
        IncastUnder(CreateObject<InfinibandNoCongestionControl>(), false, true);
    EXPECT_EQ(none.cnpsFromSink, 0u);
    EXPECT_NEAR(none.senderRateBps / (none.bottleneckBps / 2), 1.0, 0.002) << none.senderRateBps;

    auto a10 = CreateObject<InfinibandA10CongestionControl>();
    a10->SetAttribute("CctiIncrease", UintegerValue(50));
    a10->SetAttribute("CctiLimit", UintegerValue(50));
    a10->SetAttribute("CctiTimer", TimeValue(Seconds(1)));
    const StrategyRun pinned = IncastUnder(a10, false, true);
    EXPECT_GT(pinned.becnAtSender, 0u);
    EXPECT_EQ(pinned.senderCcti, 50u);
    EXPECT_NEAR(pinned.senderRateBps / 32.768e9, 1.0, 0.001) << pinned.senderRateBps;
}

// CcEnabled alone (no CongestionControl given) picks the strategy: A10 or none.
TEST_F(InfinibandDeviceTest, CcEnabledPicksTheDefaultStrategy)
{
    for (bool enabled : {false, true})
    {
        InfinibandHelper ib;
        ib.SetDeviceAttribute("CcEnabled", BooleanValue(enabled));
        InfinibandFabric f = ib.Build(Line());
        Ptr<InfinibandNetDevice> hca = f.GetHostDevice(0);
        EXPECT_EQ(hca->GetCongestionControl()->GetInstanceTypeId().GetName(),
                  enabled ? "ns3::InfinibandA10CongestionControl"
                          : "ns3::InfinibandNoCongestionControl");
        PointerValue attribute;
        hca->GetAttribute("CongestionControl", attribute);
        EXPECT_EQ(attribute.Get<InfinibandCongestionControl>(), hca->GetCongestionControl());
        // Switched after construction, the strategy follows.
        hca->SetAttribute("CcEnabled", BooleanValue(!enabled));
        EXPECT_EQ(hca->GetCongestionControl()->GetName(), enabled ? "none" : "a10");
        Simulator::Destroy();
    }
}

// A switch needs only the link level of its ports: one built of bare InfinibandPorts
// (no HCA half) forwards an RC SEND as one of InfinibandNetDevices does.  One 1000 B
// packet (1026 wire bytes, 80 ns at 102.6 Gb/s), two 100 ns cables, one cut-through
// switch (LRH in after 1 ns, 130 ns latency): 80 + 1 + 130 + 2 x 100 = 411 ns, exact, in
// both builds.
TEST_F(InfinibandDeviceTest, SwitchOfBarePortsForwardsLikeHelperBuiltOne)
{
    auto configure = [](Ptr<InfinibandPort> port) {
        port->SetAttribute("Preset", StringValue(""));
        port->SetAttribute("DataRate", DataRateValue(DataRate("102.6Gbps")));
        // Set after construction, which applied the default NDR preset's line coding.
        port->SetAttribute("EncodingEfficiency", DoubleValue(1.0));
        port->SetAttribute("FlowControlFrameBytes",
                           UintegerValue(InfinibandFlowControlPacket::SIZE_BYTES));
        port->SetAttribute("CreditUnitBytes", UintegerValue(64));
    };

    // By hand: HCA devices on the hosts, bare ports on the switch.
    NodeContainer hosts;
    hosts.Create(2);
    Ptr<Node> switchNode = CreateObject<Node>();
    auto sw = CreateObject<InfinibandSwitch>();
    sw->SetAttribute("PortToPortLatency", TimeValue(NanoSeconds(130)));
    switchNode->AggregateObject(sw);
    std::vector<Ptr<InfinibandNetDevice>> hcas;
    for (uint32_t h = 0; h < 2; ++h)
    {
        auto channel = CreateObject<CreditLinkChannel>();
        channel->SetAttribute("Delay", TimeValue(NanoSeconds(100)));
        auto hca = CreateObject<InfinibandNetDevice>();
        auto port = CreateObject<InfinibandPort>();
        configure(hca);
        configure(port);
        hosts.Get(h)->AddDevice(hca);
        switchNode->AddDevice(port);
        sw->AddIbPort(port, h + 1);
        hca->Attach(channel);
        port->Attach(channel);
        hca->SetLid(static_cast<uint16_t>(h + 1));
        hcas.push_back(hca);
    }
    sw->SetForwardingTable({InfinibandSubnetManager::LFT_UNREACHABLE, 1, 2});
    ASSERT_EQ(hcas[0]->Validate(), "");
    EXPECT_EQ(OneMessageLatencyNs(hcas[0], hcas[1]), 80 + 1 + 130 + 2 * 100);

    // The helper, every port an InfinibandNetDevice.
    InfinibandTopology t;
    const uint32_t s0 = t.AddSwitch("s0", 2);
    t.Connect(t.AddHca("h0"), 1, s0, 1);
    t.Connect(t.AddHca("h1"), 1, s0, 2);
    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue(""));
    ib.SetDeviceAttribute("DataRate", DataRateValue(DataRate("102.6Gbps")));
    ib.SetChannelAttribute("Delay", TimeValue(NanoSeconds(100)));
    ib.SetSwitchAttribute("PortToPortLatency", TimeValue(NanoSeconds(130)));
    InfinibandFabric f = ib.Build(t);
    EXPECT_EQ(OneMessageLatencyNs(f.GetHostDevice(0), f.GetHostDevice(1)), 80 + 1 + 130 + 2 * 100);
}
