/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/gpu-endpoint-set.h"

#include "ns3/double.h"
#include "ns3/nstime.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <regex>

namespace ns3
{

namespace
{
// NCCL sources, at the commit cited in doc/fidelity.md:
//  - src/graph/topo.h: SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s
//    per NVLink, what NCCL's topology search assumes an SM-driven link delivers.
//  - src/graph/topo.cc: a PCI link is width x speed / 80 GB/s with speed 120 (Gen4) or
//    240 (Gen5) in 100 Mb/s per lane: x16 = 24 or 48 GB/s.  The HCA sits behind it.
//  - src/graph/search.cc finds the rings at the fastest speed of its table (sm80: 40, 30,
//    20 GB/s ...; sm90: 60, 50, 40, 30 ...; sm100: 90, 80, ...) whose rings fit a GPU's
//    NVLink bandwidth, and doubles them at half the speed where that speed is 25 GB/s or
//    more (on sm90 and later only where it is 50 or more, or the rings are at most 4);
//    src/graph/connect.cc doubles them again.  One node: A100 240 GB/s -> 6 at 40 -> 12
//    -> 24; H100 370.8 -> 6 at 60 -> 12 -> 24; B200 721.8 -> 8 at 90 -> 16 -> 32.  Across
//    nodes the rings enter and leave on the NICs, one ring per NIC at the GPU-NIC path's
//    48 GB/s (24 on A100's PCIe Gen4) as far as the GPUs' NVLink holds them (every ring
//    passes every GPU: 8 x H100 fit 8 at 45), not doubled below 50 (25 on sm80): 8 NICs ->
//    8 -> 16.  Public logs print "24 coll channels" on 8 x A100 and 8 x H100 in one node and
//    "16 coll channels" on 2 x 8 H100.  Fewer GPUs of a node have fewer NICs, so fewer
//    rings (NcclEndpoint::GetMaxChannels): one GPU a node on H100, 1 -> 2 -> 4.
//  - src/transport/nvls.cc: NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100_NVL 24.
//  - src/graph/tuning.cc: nvlsEfficiency (Hopper 0.85, Blackwell 0.74), llMaxBws,
//    perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws, perChMaxNVLSTreeBws (rows per
//    compute capability; columns N1 = one node, N2 = two, N4 = more; llMaxBws' figures across
//    nodes are the x86 Intel CPU row's, 39.0 on two nodes and 20.4 beyond);
//    hwLatencies NET NVLSTree Simple 20.9 us is NcclEndpoint's NvlsTreeNetLatency default.
const std::vector<GpuEndpointSet>&
Sets()
{
    static const std::vector<GpuEndpointSet> sets = [] {
        std::vector<GpuEndpointSet> v;
        GpuEndpointSet ideal;
        v.push_back(ideal);

        GpuEndpointSet a100;
        a100.name = "a100";
        a100.ideal = false;
        a100.nvlinkPerLink_gbyte_per_s = 20.0;
        a100.nicPath_gbyte_per_s = 24.0; // PCIe Gen4 x16
        a100.maxChannels = 24;
        a100.nvlsChannels = 16;
        a100.nvlsChannelsAcrossNodes = 16;
        a100.nvlsStepLatency_us = 3.4;
        a100.nvlsEfficiency = 0.0; // no NVLS before NVSwitch gen3
        a100.collNetEfficiency = 1.0;
        a100.llMax_gbyte_per_s = 87.7;
        a100.llMaxNet_gbyte_per_s = 39.0;
        a100.llMaxNetN4_gbyte_per_s = 20.4;
        a100.ll128RingChannel_gbyte_per_s = 20.0;
        a100.ll128TreeChannel_gbyte_per_s = 20.0;
        a100.ll128TreeChannelN2_gbyte_per_s = 20.0;
        a100.ll128TreeChannelN4_gbyte_per_s = 20.0;
        a100.simpleTreeChannel_gbyte_per_s = 24.0;
        a100.simpleTreeChannelN2_gbyte_per_s = 23.6;
        a100.simpleTreeChannelN4_gbyte_per_s = 17.8;
        a100.nvlsTreeChannel_gbyte_per_s = 23.6;
        a100.nvlsTreeChannelN4_gbyte_per_s = 17.8;
        v.push_back(a100);

        GpuEndpointSet h100;
        h100.name = "h100";
        h100.ideal = false;
        h100.nvlinkPerLink_gbyte_per_s = 20.6;
        h100.nicPath_gbyte_per_s = 48.0; // PCIe Gen5 x16
        h100.maxChannels = 24;
        h100.nvlsChannels = 16; // NVLS_NCHANNELS_SM90
        h100.nvlsChannelsAcrossNodes = 16;
        h100.nvlsStepLatency_us = 3.4;
        h100.nvlsEfficiency = 0.85;
        h100.llMax_gbyte_per_s = 141.0;
        h100.llMaxNet_gbyte_per_s = 39.0;
        h100.llMaxNetN4_gbyte_per_s = 20.4;
        h100.ll128RingChannel_gbyte_per_s = 36.7;
        h100.ll128TreeChannel_gbyte_per_s = 36.7;
        h100.ll128TreeChannelN2_gbyte_per_s = 36.7;
        h100.ll128TreeChannelN4_gbyte_per_s = 29.0;
        h100.simpleTreeChannel_gbyte_per_s = 38.7;
        h100.simpleTreeChannelN2_gbyte_per_s = 41.4;
        h100.simpleTreeChannelN4_gbyte_per_s = 36.0;
        h100.nvlsTreeChannel_gbyte_per_s = 57.7;
        h100.nvlsTreeChannelN4_gbyte_per_s = 45.5;
        v.push_back(h100);

        GpuEndpointSet b200;
        b200.name = "b200";
        b200.ideal = false;
        b200.nvlinkPerLink_gbyte_per_s = 40.1;
        b200.nicPath_gbyte_per_s = 48.0; // ConnectX-7 on PCIe Gen5 x16
        // DGX B200 prints "32 coll channels": github.com/NVIDIA/nccl/issues/1646
        b200.maxChannels = 32;
        b200.nvlsChannels = 24;            // NVLS_NCHANNELS_SM100_NVL
        b200.nvlsChannelsAcrossNodes = 32; // NVLS_NCHANNELS_SM100
        b200.nvlsStepLatency_us = 3.4;
        b200.nvlsEfficiency = 0.74;
        b200.llMax_gbyte_per_s = 282.0;
        b200.llMaxNet_gbyte_per_s = 39.0;
        b200.llMaxNetN4_gbyte_per_s = 20.4;
        b200.ll128RingChannel_gbyte_per_s = 40.0;
        b200.ll128TreeChannel_gbyte_per_s = 55.6;
        b200.ll128TreeChannelN2_gbyte_per_s = 31.67;
        b200.ll128TreeChannelN4_gbyte_per_s = 20.0;
        b200.simpleTreeChannel_gbyte_per_s = 70.0;
        b200.simpleTreeChannelN2_gbyte_per_s = 42.8;
        b200.simpleTreeChannelN4_gbyte_per_s = 24.0;
        b200.nvlsTreeChannel_gbyte_per_s = 96.0;
        b200.nvlsTreeChannelN4_gbyte_per_s = 43.8;
        v.push_back(b200);
        return v;
    }();
    return sets;
}
} // namespace

std::vector<std::string>
GpuEndpointSetNames()
{
    std::vector<std::string> names;
    for (const auto& s : Sets())
    {
        names.push_back(s.name);
    }
    return names;
}

bool
FindGpuEndpointSet(const std::string& name, GpuEndpointSet& out)
{
    for (const auto& s : Sets())
    {
        if (s.name == name)
        {
            out = s;
            return true;
        }
    }
    return false;
}

Ptr<NcclEndpoint>
MakeNcclEndpoint(const GpuEndpointSet& set)
{
    if (set.ideal)
    {
        return nullptr;
    }
    Ptr<NcclEndpoint> e = CreateObject<NcclEndpoint>();
    e->SetAttribute("Generation", StringValue(set.name));
    e->SetAttribute("MaxChannels", UintegerValue(set.maxChannels));
    // NCCL's inter-node ring speed, its table's fastest within the GPU-NIC path (48, 24), and
    // that path (ClusterConfig scales it with the InfiniBand plane).
    e->SetAttribute("NetRingBandwidth", DoubleValue(set.nicPath_gbyte_per_s));
    e->SetAttribute("NicPathBandwidth", DoubleValue(set.nicPath_gbyte_per_s));
    e->SetAttribute("NvlsChannels", UintegerValue(set.nvlsChannels));
    e->SetAttribute("NvlsChannelsAcrossNodes", UintegerValue(set.nvlsChannelsAcrossNodes));
    e->SetAttribute("NvlsEfficiency", DoubleValue(set.nvlsEfficiency));
    e->SetAttribute("CollNetEfficiency", DoubleValue(set.collNetEfficiency));
    Ptr<NcclProtocol> ll = e->GetProtocol(NcclProtocolId::Ll);
    ll->SetAttribute("MaxBandwidth", DoubleValue(set.llMax_gbyte_per_s));
    ll->SetAttribute("MaxNetBandwidth", DoubleValue(set.llMaxNet_gbyte_per_s));
    ll->SetAttribute("MaxNetBandwidthN4", DoubleValue(set.llMaxNetN4_gbyte_per_s));
    Ptr<NcclProtocol> ll128 = e->GetProtocol(NcclProtocolId::Ll128);
    ll128->SetAttribute("RingChannelBandwidth", DoubleValue(set.ll128RingChannel_gbyte_per_s));
    ll128->SetAttribute("TreeChannelBandwidth", DoubleValue(set.ll128TreeChannel_gbyte_per_s));
    ll128->SetAttribute("TreeChannelBandwidthN2", DoubleValue(set.ll128TreeChannelN2_gbyte_per_s));
    ll128->SetAttribute("TreeChannelBandwidthN4", DoubleValue(set.ll128TreeChannelN4_gbyte_per_s));
    Ptr<NcclProtocol> simple = e->GetProtocol(NcclProtocolId::Simple);
    simple->SetAttribute("TreeChannelBandwidth", DoubleValue(set.simpleTreeChannel_gbyte_per_s));
    simple->SetAttribute("TreeChannelBandwidthN2",
                         DoubleValue(set.simpleTreeChannelN2_gbyte_per_s));
    simple->SetAttribute("TreeChannelBandwidthN4",
                         DoubleValue(set.simpleTreeChannelN4_gbyte_per_s));
    e->SetAttribute("NvlsTreeChannelBandwidth", DoubleValue(set.nvlsTreeChannel_gbyte_per_s));
    e->SetAttribute("NvlsTreeChannelBandwidthN4", DoubleValue(set.nvlsTreeChannelN4_gbyte_per_s));
    return e;
}

std::string
ApplyNcclTunerVersion(const Ptr<NcclEndpoint>& endpoint, const std::string& version)
{
    static const std::regex form(R"((\d+)\.(\d+)(\.\d+)?)");
    std::smatch m;
    if (!std::regex_match(version, m, form))
    {
        return "expected an NCCL release as MAJOR.MINOR[.PATCH], e.g. 2.26.2";
    }
    const int major = std::stoi(m[1].str());
    const int minor = std::stoi(m[2].str());
    if (major > 2)
    {
        return "the tuner constants modelled are NCCL 2's, from 2.21 on; no release " + m[1].str() +
               ".x is modelled";
    }
    if (major < 2 || minor < 21)
    {
        // 2.18-2.20 also differ in the NVLink NVLS latencies (0 and 23 us, not 25).
        return "the tuner constants modelled are NCCL 2.21's and later";
    }
    // src/graph/tuning.cc hwLatencies at the release tags v2.21.5-1 to v2.29.2-1: NVLINK
    // NVLS / NVLSTree 25 us throughout; NET NVLSTree Simple 14 us up to 2.28, 20.9 us from
    // 2.29 (the default). The tuner believed the lower figure while NVLS-tree's network steps
    // cost what they cost: NCCL 2.21-2.28 take NVLS-tree from a smaller size than 2.29 does.
    const double netLatency_us = minor <= 28 ? 14.0 : -1.0;
    endpoint->SetAttribute(
        "TunerNvlsTreeNetLatency",
        TimeValue(netLatency_us < 0 ? NanoSeconds(-1) : NanoSeconds(netLatency_us * 1e3)));
    // src/transport/nvls.cc: before 2.27 Blackwell ran NVLS_NCHANNELS_SM100 (32) inside one
    // node too; 2.27 brought NVLS_NCHANNELS_SM100_NVL (24) there.
    if (minor < 27)
    {
        UintegerValue across;
        endpoint->GetAttribute("NvlsChannelsAcrossNodes", across);
        endpoint->SetAttribute("NvlsChannels", across);
    }
    return "";
}

} // namespace ns3
