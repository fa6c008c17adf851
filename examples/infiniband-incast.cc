/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// N hosts on an InfiniBand leaf/spine fat tree send one message each to host 0,
// through GpuTransport over an InfinibandTransportPlane (rank h = host h).
// Prints per-flow completion time and delivered bytes, drops (0 on a lossless
// fabric) and the credit-stall time of every link that stalled.
//
//   infiniband-incast --hosts=16 --radix=8 --rate=NDR --mtu=4096 --bytes=1000000 --pcap=incast
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/gpu-transport.h"
#include "ns3/infiniband-helper.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <iomanip>
#include <iostream>
#include <numeric>
#include <vector>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t hosts = 16;
    uint32_t radix = 8;
    std::string rate = "NDR";
    uint32_t mtu = 4096;
    uint64_t bytes = 1000000;
    std::string pcap;
    bool cc = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("hosts", "number of hosts (host 0 is the sink)", hosts);
    cmd.AddValue("radix", "switch radix", radix);
    cmd.AddValue("rate", "link preset, e.g. EDR, HDR, NDR, NDR-8x", rate);
    cmd.AddValue("mtu", "InfiniBand MTU (256..4096)", mtu);
    cmd.AddValue("bytes", "message bytes per sender", bytes);
    cmd.AddValue("pcap", "write ERF pcap of the host ports to PREFIX-<node>-<if>.pcap", pcap);
    cmd.AddValue("cc", "enable IBA Annex A10 congestion control", cc);
    cmd.Parse(argc, argv);

    InfinibandHelper ib;
    ib.SetDeviceAttribute("Preset", StringValue(rate));
    ib.SetDeviceAttribute("IbMtu", UintegerValue(mtu));
    ib.SetDeviceAttribute("CcEnabled", BooleanValue(cc));
    ib.SetSwitchAttribute("CcEnabled", BooleanValue(cc));
    InfinibandFabric fabric;
    const std::string error = ib.TryBuildFatTree(radix, hosts, 1.0, fabric);
    if (!error.empty())
    {
        std::cerr << "infiniband-incast: " << error << "\n";
        return 1;
    }
    if (!pcap.empty())
    {
        ib.EnablePcap(pcap, fabric.hostDevices);
    }

    auto plane = CreateObject<InfinibandTransportPlane>();
    std::vector<uint32_t> rankOfHost(hosts);
    std::iota(rankOfHost.begin(), rankOfHost.end(), 0);
    plane->AddHosts(fabric, rankOfHost);
    auto transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    std::vector<Time> fct(hosts);
    std::vector<uint64_t> delivered(hosts, 0);
    for (uint32_t h = 1; h < hosts; ++h)
    {
        transport->SendMessage(h,
                               0,
                               bytes,
                               GpuTransport::DoneCallback(),
                               Callback<void>([&fct, &delivered, h, bytes]() {
                                   fct[h] = Simulator::Now();
                                   delivered[h] += bytes;
                               }));
    }
    Simulator::Run();

    std::cout << "InfiniBand incast: " << hosts - 1 << " senders -> host 0, " << rate << ", MTU "
              << mtu << ", " << bytes << " B each, " << fabric.topology.GetTiers()
              << "-tier fat tree of " << fabric.switches.GetN() << " switches (radix " << radix
              << ")" << (cc ? ", CC on" : "") << "\n";
    std::cout << "flow  src-LID  completion(us)  delivered(B)\n";
    uint64_t drops = 0;
    for (uint32_t h = 1; h < hosts; ++h)
    {
        std::cout << std::setw(4) << h << std::setw(9) << fabric.hostLids[h] << std::setw(16)
                  << std::fixed << std::setprecision(3) << fct[h].GetNanoSeconds() / 1e3
                  << std::setw(14) << delivered[h] << "\n";
        drops += bytes - delivered[h];
    }
    drops += fabric.GetHostDevice(0)->GetReceiveDiscards();
    std::cout << "drops: " << drops << (ib.GetWatchdog()->HasFired() ? " (DEADLOCK)" : "") << "\n";
    std::cout << "credit-stall time per link (links that stalled):\n";
    for (uint32_t i = 0; i < fabric.allDevices.GetN(); ++i)
    {
        auto device = DynamicCast<CreditLinkNetDevice>(fabric.allDevices.Get(i));
        const Time stall = device->GetCounters().creditStallTime;
        if (stall.IsStrictlyPositive())
        {
            std::cout << "  " << device->GetLinkName() << "  " << std::setprecision(3)
                      << stall.GetNanoSeconds() / 1e3 << " us\n";
        }
    }
    Simulator::Destroy();
    return drops == 0 ? 0 : 2;
}
