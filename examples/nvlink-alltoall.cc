/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Every GPU of an NVLink preset sends --bytes to every other GPU (or, with
// --pattern=pair, GPU 0 to GPU 1 only); prints per-GPU achieved bandwidth and
// the utilisation of every switch port.  The messages go through GpuTransport
// over an NvLinkTransportPlane (NvLinkHelper::InstallTransport), which cuts them
// into packets of --granularity, or bursts of up to MaxBurstBytes for bulk ones;
// a flow is done when its receiver holds the last byte.
//   nvlink-alltoall --preset=dgx-h100 --bytes=16777216 --granularity=4096
#include "ns3/command-line.h"
#include "ns3/nvlink-helper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <chrono>
#include <cstdio>
#include <iostream>

using namespace ns3;

namespace
{

struct Stats
{
    std::vector<double> lastDone_s;
    std::vector<uint32_t> done;
    double firstArrival_s{-1};
};

Stats g_stats;

void
FlowDone(uint32_t src)
{
    g_stats.lastDone_s[src] = Simulator::Now().GetSeconds();
    g_stats.done[src]++;
}

void
FirstRx(Ptr<const Packet>, uint32_t)
{
    if (g_stats.firstArrival_s < 0)
    {
        g_stats.firstArrival_s = Simulator::Now().GetSeconds();
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string preset = "dgx-h100";
    uint64_t bytes = 16ULL << 20;
    uint32_t granularity = 4096;
    std::string pattern = "alltoall";
    CommandLine cmd(__FILE__);
    cmd.AddValue("preset", "dgx-a100, dgx-h100 or gb200-nvl72", preset);
    cmd.AddValue("bytes", "bytes each GPU sends to each other GPU", bytes);
    cmd.AddValue("granularity", "payload bytes per simulated packet", granularity);
    cmd.AddValue("pattern", "alltoall, or pair (GPU 0 to GPU 1)", pattern);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(pattern != "alltoall" && pattern != "pair", "unknown --pattern " << pattern);

    NvLinkHelper helper;
    helper.SetPreset(preset);
    helper.SetDeviceAttribute("Granularity", UintegerValue(granularity));
    const uint32_t n = preset == "gb200-nvl72" ? 72 : 8;
    NodeContainer gpus;
    gpus.Create(n);
    helper.Install(gpus);
    Ptr<GpuTransport> transport = helper.InstallTransport();
    g_stats.lastDone_s.assign(n, 0);
    g_stats.done.assign(n, 0);

    uint32_t flowsPerGpu = 0;
    if (pattern == "pair")
    {
        Ptr<NvLinkGpu> rx = helper.GetGpu(1);
        for (uint32_t i = 0; i < rx->GetNDevices(); ++i)
        {
            rx->GetDevice(i)->TraceConnectWithoutContext("Rx", MakeCallback(&FirstRx));
        }
        transport->SendMessage(0,
                               1,
                               bytes,
                               GpuTransport::DoneCallback(),
                               MakeBoundCallback(&FlowDone, 0u));
        flowsPerGpu = 1;
    }
    else
    {
        // Destination order (g + k) % n: every step is a permutation, no incast.
        for (uint32_t g = 0; g < n; ++g)
        {
            for (uint32_t k = 1; k < n; ++k)
            {
                transport->SendMessage(g,
                                       (g + k) % n,
                                       bytes,
                                       GpuTransport::DoneCallback(),
                                       MakeBoundCallback(&FlowDone, g));
            }
        }
        flowsPerGpu = n - 1;
    }
    const auto wallStart = std::chrono::steady_clock::now();
    Simulator::Run();
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

    const NvLinkFabricSpec& spec = helper.GetFabric();
    const Ptr<NvLinkNetDevice> d0 = helper.GetGpu(0)->GetDevice(0);
    double injection = 0;
    for (uint32_t i = 0; i < helper.GetGpu(0)->GetNDevices(); ++i)
    {
        injection += helper.GetGpu(0)->GetDevice(i)->GetPayloadRateBps() / 8;
    }
    std::printf("preset %s (NVLink%u, %u GPUs, %u switches), %s, %llu B per flow, "
                "granularity %u B\n",
                spec.name.c_str(),
                spec.generation,
                n,
                helper.GetNSwitches(),
                pattern.c_str(),
                static_cast<unsigned long long>(bytes),
                d0->GetGranularityBytes());
    std::printf("GPU payload injection bound %.1f GB/s\n", injection / 1e9);
    double end_s = 0;
    for (uint32_t g = 0; g < n; ++g)
    {
        if (g_stats.done[g] == 0)
        {
            continue;
        }
        NS_ABORT_MSG_IF(g_stats.done[g] != flowsPerGpu, "GPU " << g << " did not finish");
        end_s = std::max(end_s, g_stats.lastDone_s[g]);
        std::printf("GPU %2u sent %llu B in %.3f us: %.1f GB/s\n",
                    g,
                    static_cast<unsigned long long>(bytes * flowsPerGpu),
                    g_stats.lastDone_s[g] * 1e6,
                    bytes * flowsPerGpu / g_stats.lastDone_s[g] / 1e9);
    }
    if (pattern == "pair")
    {
        std::printf("first packet latency %.1f ns, completion %.3f us\n",
                    g_stats.firstArrival_s * 1e9,
                    end_s * 1e6);
    }
    for (uint32_t s = 0; s < helper.GetNSwitches(); ++s)
    {
        Ptr<NvSwitch> sw = helper.GetSwitch(s);
        double minUtil = 1e9;
        double maxUtil = 0;
        double sum = 0;
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            const double u = sw->GetPort(p)->GetCounters().busyTime.GetSeconds() / end_s;
            minUtil = std::min(minUtil, u);
            maxUtil = std::max(maxUtil, u);
            sum += u;
        }
        std::printf("switch %2u: %u ports, egress utilisation min %.1f%% mean %.1f%% max %.1f%%, "
                    "%llu packets forwarded\n",
                    s,
                    sw->GetNPorts(),
                    100 * minUtil,
                    100 * sum / sw->GetNPorts(),
                    100 * maxUtil,
                    static_cast<unsigned long long>(sw->GetForwardedPackets()));
    }
    std::printf("simulated %.3f us, %llu events, %.2f s wall clock\n",
                end_s * 1e6,
                static_cast<unsigned long long>(Simulator::GetEventCount()),
                wall_s);
    Simulator::Destroy();
    return 0;
}
