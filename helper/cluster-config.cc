/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/cluster-config.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/cluster-layout.h"
#include "ns3/command-line.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/infiniband-routing-engine.h"
#include "ns3/nvlink-net-device.h"
#include "ns3/run-parameters.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

namespace ns3
{

namespace
{

// The results database's plane names; a new plane is a row here and a ClusterPlaneBuilder.
const std::pair<ClusterPlane, const char*> kPlaneNames[] = {
    {ClusterPlane::NVLINK, "nvlink"},
    {ClusterPlane::INFINIBAND, "infiniband"},
    {ClusterPlane::ETHERNET, "ethernet"},
    {ClusterPlane::ROCE, "roce"}};

// A whole number in [lo, hi], as NCCL reads its integer parameters.
bool
WholeNumber(const std::string& text, int64_t lo, int64_t hi, int64_t& out)
{
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < lo || v > hi)
    {
        return false;
    }
    out = v;
    return true;
}

} // namespace

std::string
ClusterPlaneName(ClusterPlane plane)
{
    for (const auto& [p, name] : kPlaneNames)
    {
        if (p == plane)
        {
            return name;
        }
    }
    return "?";
}

std::string
ClusterPlaneFromName(const std::string& name, ClusterPlane& plane)
{
    std::string valid;
    for (const auto& [p, n] : kPlaneNames)
    {
        if (n == name)
        {
            plane = p;
            return "";
        }
        valid += (valid.empty() ? "" : ", ") + std::string(n);
    }
    return "unknown plane '" + name + "'; valid: " + valid;
}

namespace
{

// PCIe data rate per direction for x16: GT/s x 16 lanes x 128/130 (PCI-SIG Gen4 16 GT/s, Gen5 32
// GT/s).
constexpr double kPcieGen4x16_gbit_per_s = 16.0 * 16 * 128 / 130;
constexpr double kPcieGen5x16_gbit_per_s = 32.0 * 16 * 128 / 130;

std::string
Positive(const char* what, double v)
{
    if (!(v > 0) || !std::isfinite(v))
    {
        std::ostringstream s;
        s << what << " must be positive and finite, not " << v;
        return s.str();
    }
    return "";
}

} // namespace

std::vector<std::string>
ClusterConfig::GetPresetNames()
{
    return {"dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72", "dgx-h100-roce"};
}

std::string
ClusterConfig::ApplyNvLinkGeneration(uint32_t gen)
{
    const std::string error = CheckNvLinkGeneration(gen);
    if (!error.empty())
    {
        return "unknown NVLink generation " + std::to_string(gen) + ": " + error;
    }
    // The NVLink model's own per-generation figures, so the describe output and the
    // devices agree (fact sheet NVLink table).
    const NvLinkGeneration& g = GetNvLinkGeneration(gen);
    nvlinkGen = gen;
    nvlinkLinksPerGpu = g.linksPerGpu;
    nvlinkLinkRate_gbyte_per_s = g.linkDataRateBps / 8e9;
    nvswitchPorts = g.switchPorts;
    return "";
}

NvLinkFabricSpec
ClusterConfig::GetNvLinkSpec() const
{
    NvLinkFabricSpec spec;
    NvLinkFindFabricPreset(preset, spec);
    spec.generation = nvlinkGen;
    uint32_t links = 0;
    for (uint32_t l : spec.linksPerSwitch)
    {
        links += l;
    }
    if (spec.switches != nvswitchesPerDomain || links != nvlinkLinksPerGpu)
    {
        // Overridden shape: spread each GPU's links evenly, the first switches take the rest.
        spec.name = preset + "-custom";
        spec.switches = nvswitchesPerDomain;
        spec.linksPerSwitch.assign(nvswitchesPerDomain, nvlinkLinksPerGpu / nvswitchesPerDomain);
        for (uint32_t s = 0; s < nvlinkLinksPerGpu % nvswitchesPerDomain; ++s)
        {
            spec.linksPerSwitch[s]++;
        }
    }
    spec.switchPorts = nvswitchPorts;
    return spec;
}

std::string
ClusterConfig::ApplyPreset(const std::string& name)
{
    ClusterConfig c;
    c.preset = name;
    c.cli = cli;
    if (name == "dgx-a100")
    {
        // DGX A100 user guide / system architecture: 8 A100, 6 NVSwitch gen2 (36 ports),
        // 2 NVLink3 links from each GPU to every switch (fact sheet).
        c.gpusPerServer = 8;
        c.serversPerDomain = 1;
        c.ApplyNvLinkGeneration(3);
        c.nvswitchesPerDomain = 6;
        c.nvswitchPorts = 36;
        // 8 x ConnectX-6 HDR 200 Gb/s compute rails; Quantum QM8700 switches have 40 HDR ports
        // (NVIDIA DGX A100 SuperPOD reference architecture).
        c.ibRate_gbit_per_s = 200.0;
        c.ibSwitchRadix = 40;
        // Storage / in-band: 2 x ConnectX-6 200 GbE (DGX A100 user guide), PCIe Gen4 x16.
        c.ethPortsPerServer = 2;
        c.ethRate_gbit_per_s = 200.0;
        c.storageRate_gbit_per_s = 200.0;
        c.pcieRate_gbit_per_s = kPcieGen4x16_gbit_per_s;
        c.serversPerRack = 4; // [unconfirmed] power-limited racks of 4 DGX
        c.hostCpu = "amd";    // DGX A100 datasheet: 2 x AMD EPYC 7742 (Rome)
    }
    else if (name == "dgx-h100")
    {
        // Fact sheet: 8 H100, 4 NVSwitch gen3 (64 NVLink4 ports), links split 5+4+4+5.
        c.gpusPerServer = 8;
        c.serversPerDomain = 1;
        c.ApplyNvLinkGeneration(4);
        c.nvswitchesPerDomain = 4;
        c.nvswitchPorts = 64;
        // Fact sheet: 8 x 400 Gb/s ConnectX-7 (NDR) rails; Quantum-2 has 64 NDR ports.
        c.ibRate_gbit_per_s = 400.0;
        c.ibSwitchRadix = 64;
        // Fact sheet (DGX BasePOD RA): 2 x 400 GbE front-end per node; PCIe Gen5 x16.
        c.ethPortsPerServer = 2;
        c.ethRate_gbit_per_s = 400.0;
        c.storageRate_gbit_per_s = 400.0;
        c.pcieRate_gbit_per_s = kPcieGen5x16_gbit_per_s;
        c.serversPerRack = 4; // DGX SuperPOD H100 RA: 4 DGX per rack [unconfirmed]
        c.hostCpu = "intel";  // DGX H100 datasheet: 2 x Intel Xeon Platinum 8480C
    }
    else if (name == "dgx-h100-roce")
    {
        // DGX H100 servers on an Ethernet scale-out fabric (NVIDIA Spectrum-X reference
        // design): one 400 Gb/s RoCE NIC per GPU (BlueField-3 SuperNIC / ConnectX-7 in
        // Ethernet mode), Spectrum-4 SN5600 switches with 64 x 800 GbE ports split into
        // 128 x 400 GbE (SN5600 datasheet, 51.2 Tb/s).  PFC, ECN and DCQCN on, ECMP by hash.
        c.ApplyPreset("dgx-h100");
        c.preset = name;
        c.cli = cli;
        c.scaleOut = "roce";
        c.ibRate_gbit_per_s = 400.0;
        c.ibSwitchRadix = 128;
    }
    else if (name == "dgx-b200")
    {
        // DGX B200 user guide: 8 B200, 2 NVSwitch gen4 chips (72 NVLink5 ports each), each
        // GPU's 18 NVLink5 links split 9 + 9 over the two: 18 x 50 GB/s = 900 GB/s.
        c.gpusPerServer = 8;
        c.serversPerDomain = 1;
        c.ApplyNvLinkGeneration(5);
        c.nvswitchesPerDomain = 2;
        c.nvswitchPorts = 72;
        // 8 x ConnectX-7 400 Gb/s (NDR) compute ports, one per GPU; Quantum-2 switches.
        c.ibRate_gbit_per_s = 400.0;
        c.ibSwitchRadix = 64;
        // 2 x BlueField-3 DPU, 400 Gb/s each, for storage and in-band management; PCIe Gen5.
        c.ethPortsPerServer = 2;
        c.ethRate_gbit_per_s = 400.0;
        c.storageRate_gbit_per_s = 400.0;
        c.pcieRate_gbit_per_s = kPcieGen5x16_gbit_per_s;
        c.serversPerRack = 4; // DGX SuperPOD B200 RA: 4 DGX per rack [unconfirmed]
        c.hostCpu = "intel";  // DGX B200 datasheet: 2 x Intel Xeon Platinum 8570
    }
    else if (name == "gb200-nvl72")
    {
        // Fact sheet (DGX SuperPOD GB200 RA): 72 GPUs, 18 compute trays of 4, 18 NVSwitch gen4
        // (72 ports), one NVLink5 link from each GPU to each switch: 18 x 50 GB/s.
        c.gpusPerServer = 4;
        c.serversPerDomain = 18;
        c.servers = 18;
        c.ApplyNvLinkGeneration(5);
        c.nvswitchesPerDomain = 18;
        c.nvswitchPorts = 72;
        // One ConnectX-7 400 Gb/s per GPU on the compute fabric (GB200 RA; CX-8 =
        // --ibRate_gbit_per_s=800).
        c.ibRate_gbit_per_s = 400.0;
        c.ibSwitchRadix = 64;
        // [unconfirmed] 2 x 400 GbE (BlueField-3) per compute tray on the front-end.
        c.ethPortsPerServer = 2;
        c.ethRate_gbit_per_s = 400.0;
        c.storageRate_gbit_per_s = 400.0;
        // Grace <-> Blackwell is NVLink-C2C, 900 GB/s total = 450 GB/s per direction
        // (NVIDIA GB200 product page), not PCIe.
        c.pcieRate_gbit_per_s = 450.0 * 8;
        c.serversPerRack = 18; // one NVL72 rack = one NVLink domain
        c.hostCpu = "arm";     // two Grace CPUs (Arm Neoverse V2) per compute tray
    }
    else
    {
        std::ostringstream s;
        s << "unknown preset '" << name << "'; valid:";
        for (const auto& p : GetPresetNames())
        {
            s << " " << p;
        }
        return s.str();
    }
    *this = c;
    return "";
}

void
ClusterConfig::AddCommandLineArguments(CommandLine& cmd)
{
    // -1 = keep the preset's value, so 0 can be asked for (and refused where it makes no sense).
    // Rates carry their unit in the flag name; the bare names of earlier versions still work.
    auto rate = [&cmd](const char* flag, const char* oldFlag, const char* help, double& value) {
        cmd.AddValue(flag, help, value);
        cmd.AddValue(oldFlag, std::string("deprecated alias of --") + flag, value);
    };
    cmd.AddValue("preset",
                 "cluster preset: dgx-a100, dgx-h100, dgx-b200, gb200-nvl72, dgx-h100-roce",
                 cli.preset);
    cmd.AddValue("endpoint",
                 "GPU/NCCL endpoint parameters: auto (the preset's GPU), ideal (links only), "
                 "a100, h100, b200",
                 cli.endpoint);
    cmd.AddValue("fidelity",
                 "how GPU messages move: packet (credit-level packets) or flow (max-min fluid "
                 "flows on the same routes), for all planes or per plane: "
                 "nvlink:flow,infiniband:packet",
                 cli.fidelity);
    cmd.AddValue("hostCpu",
                 "the servers' CPUs, where NCCL's network proxy runs: intel, amd or arm "
                 "(NCCL's network overhead per step: AMD 2 us, else 1 us); default the preset's",
                 cli.hostCpu);
    cmd.AddValue("ncclVersion",
                 "NCCL release whose tuner to model, e.g. 2.26.2 (2.21 on); empty = 2.29's "
                 "constants",
                 cli.ncclVersion);
    cmd.AddValue("servers",
                 "servers (DGX chassis or GB200 compute trays); -1 = preset",
                 cli.servers);
    cmd.AddValue("gpusPerServer", "GPUs per server; -1 = preset", cli.gpusPerServer);
    cmd.AddValue("serversPerDomain",
                 "servers sharing one NVLink domain; -1 = preset",
                 cli.serversPerDomain);
    cmd.AddValue(
        "nvlinkGen",
        "NVLink generation 2-5 (sets links per GPU, link rate, NVSwitch ports); -1 = preset",
        cli.nvlinkGen);
    cmd.AddValue("nvlinkLinks", "NVLink links per GPU; -1 = preset", cli.nvlinkLinksPerGpu);
    rate("ibRate_gbit_per_s",
         "ibRate",
         "InfiniBand Gb/s per HCA; -1 = preset",
         cli.ibRate_gbit_per_s);
    cmd.AddValue("ibRadix", "InfiniBand switch ports; -1 = preset", cli.ibSwitchRadix);
    cmd.AddValue("oversubscription",
                 "InfiniBand leaf down:up ratio (>= 1); -1 = preset (1)",
                 cli.oversubscription);
    cmd.AddValue("ibTiers",
                 "InfiniBand switch tiers 1-3, 0 = fewest that fit; -1 = preset (0)",
                 cli.ibTiers);
    cmd.AddValue("ibRouting", "subnet manager engine: ftree, updn, minhop", cli.ibRoutingEngine);
    cmd.AddValue("ibSubnets",
                 "InfiniBand subnets: one (every rail in one fat tree) or per-rail (each rail "
                 "its own fat tree, subnet manager and LIDs); default one",
                 cli.ibSubnets);
    cmd.AddValue("ibDelay",
                 "InfiniBand cable propagation delay, ns (> 0 for distributed runs: the "
                 "MPI lookahead); -1 = preset (0)",
                 cli.ibDelay_ns);
    cmd.AddValue("scaleOut",
                 "scale-out fabric: infiniband or roce (RoCEv2 on Ethernet, the same "
                 "rail-optimised layout); default the preset's",
                 cli.scaleOut);
    cmd.AddValue("pfc", "RoCE: priority flow control (lossless) 1 or 0 (lossy)", cli.pfc);
    cmd.AddValue("ecn", "RoCE: ECN marking at the switches, 1 or 0", cli.ecn);
    cmd.AddValue("dcqcn", "RoCE: DCQCN congestion control at the NICs, 1 or 0", cli.dcqcn);
    cmd.AddValue("ecmp", "RoCE: multipath: hash (five-tuple), spray, adaptive", cli.ecmp);
    cmd.AddValue("sharedBuffer_bytes",
                 "RoCE: packet buffer each switch shares among its ingress queues (dynamic "
                 "thresholds); 0: 1 MiB per ingress queue; -1 = preset (0)",
                 cli.sharedBuffer_bytes);
    cmd.AddValue("pcap",
                 "RoCE: write Ethernet pcap of every GPU's NIC as PREFIX-<node>-<ifindex>.pcap",
                 cli.pcap);
    cmd.AddValue("ethPorts",
                 "front-end Ethernet ports per server; -1 = preset",
                 cli.ethPortsPerServer);
    rate("ethRate_gbit_per_s",
         "ethRate",
         "front-end Gb/s per Ethernet port; -1 = preset",
         cli.ethRate_gbit_per_s);
    cmd.AddValue("serversPerRack", "servers per rack; -1 = preset", cli.serversPerRack);
    cmd.AddValue("racksPerTor", "racks per top-of-rack switch; -1 = preset (1)", cli.racksPerTor);
    cmd.AddValue("ethRouting", "front-end IPv4 routing: static or global", cli.ethRouting);
    cmd.AddValue("ethFabric",
                 "front-end ToRs: routed (IPv4 routers, point-to-point; default) or bridged (L2: "
                 "half-duplex CSMA + BridgeNetDevice)",
                 cli.ethFabric);
    cmd.AddValue("ethAggSwitches",
                 "front-end aggregation switches; -1 = preset (2)",
                 cli.ethAggSwitches);
    rate("ethUplinkRate_gbit_per_s",
         "ethUplinkRate",
         "Gb/s from each ToR to each aggregation switch (a bridged ToR's one uplink: "
         "aggs x this), 0 = non-blocking; -1 = preset (0)",
         cli.ethUplinkRate_gbit_per_s);
    cmd.AddValue("storageNodes",
                 "storage nodes on the front-end; -1 = preset (1)",
                 cli.storageNodes);
    rate("storageRate_gbit_per_s",
         "storageRate",
         "Gb/s of each storage node's link; -1 = preset",
         cli.storageRate_gbit_per_s);
    rate("pcieRate_gbit_per_s",
         "pcieRate",
         "GPU<->CPU Gb/s per direction; -1 = preset",
         cli.pcieRate_gbit_per_s);
    cmd.AddValue("partition",
                 "distributed runs (mpirun): NVLink domains per process, domain-blocks "
                 "(default) or round-robin",
                 cli.partition);
    cmd.AddValue("sharp",
                 "the InfiniBand switches reduce in the network (SHARP, Quantum-2 class); "
                 "needed for NCCL_COLLNET_ENABLE=1",
                 cli.sharp);
}

std::string
ClusterConfig::ApplyCommandLine(std::string* field)
{
    const Overrides o = cli;
    std::string error = ApplyPreset(o.preset.empty() ? preset : o.preset);
    std::string errorField = "preset";
    if (!error.empty())
    {
        if (field)
        {
            *field = errorField;
        }
        return error;
    }
    auto count = [&error, &errorField](const char* flag, uint32_t& target, int64_t value) {
        if (value == -1 || !error.empty())
        {
            return;
        }
        if (value < 0 || value > std::numeric_limits<uint32_t>::max())
        {
            errorField = flag;
            error = "--" + std::string(flag) + "=" + std::to_string(value) +
                    ": expected a count >= 0 (or -1 for the preset's value)";
            return;
        }
        target = static_cast<uint32_t>(value);
    };
    auto real = [](double& target, double value) {
        if (value != -1)
        {
            target = value;
        }
    };
    uint32_t gen = nvlinkGen;
    count("nvlinkGen", gen, o.nvlinkGen);
    if (error.empty() && o.nvlinkGen != -1)
    {
        error = ApplyNvLinkGeneration(gen);
        errorField = "nvlinkGen";
    }
    count("servers", servers, o.servers);
    count("gpusPerServer", gpusPerServer, o.gpusPerServer);
    count("serversPerDomain", serversPerDomain, o.serversPerDomain);
    count("nvlinkLinks", nvlinkLinksPerGpu, o.nvlinkLinksPerGpu);
    count("ibRadix", ibSwitchRadix, o.ibSwitchRadix);
    count("ibTiers", ibTiers, o.ibTiers);
    count("ethPorts", ethPortsPerServer, o.ethPortsPerServer);
    count("serversPerRack", serversPerRack, o.serversPerRack);
    count("racksPerTor", racksPerTor, o.racksPerTor);
    count("ethAggSwitches", ethAggSwitches, o.ethAggSwitches);
    count("storageNodes", storageNodes, o.storageNodes);
    if (!error.empty())
    {
        if (field)
        {
            *field = errorField;
        }
        return error;
    }
    real(ibRate_gbit_per_s, o.ibRate_gbit_per_s);
    real(oversubscription, o.oversubscription);
    real(ethRate_gbit_per_s, o.ethRate_gbit_per_s);
    real(ethUplinkRate_gbit_per_s, o.ethUplinkRate_gbit_per_s);
    real(storageRate_gbit_per_s, o.storageRate_gbit_per_s);
    real(pcieRate_gbit_per_s, o.pcieRate_gbit_per_s);
    real(ibDelay_ns, o.ibDelay_ns);
    if (!o.ibRoutingEngine.empty())
    {
        ibRoutingEngine = o.ibRoutingEngine;
    }
    if (!o.ibSubnets.empty())
    {
        ibSubnets = o.ibSubnets;
    }
    if (!o.scaleOut.empty())
    {
        scaleOut = o.scaleOut;
    }
    if (!o.ecmp.empty())
    {
        roceEcmp = o.ecmp;
    }
    if (o.sharedBuffer_bytes >= 0)
    {
        roceSharedBuffer_bytes = static_cast<uint64_t>(o.sharedBuffer_bytes);
    }
    if (!o.pcap.empty())
    {
        pcap = o.pcap;
    }
    for (auto [flag, text, target] : {std::tuple{"pfc", &o.pfc, &rocePfc},
                                      std::tuple{"ecn", &o.ecn, &roceEcn},
                                      std::tuple{"dcqcn", &o.dcqcn, &roceDcqcn}})
    {
        if (text->empty())
        {
            continue;
        }
        if (*text == "1" || *text == "on" || *text == "true")
        {
            *target = true;
        }
        else if (*text == "0" || *text == "off" || *text == "false")
        {
            *target = false;
        }
        else
        {
            if (field)
            {
                *field = flag;
            }
            return "--" + std::string(flag) + "=" + *text + ": expected 1 or 0";
        }
    }
    if (!o.ethRouting.empty())
    {
        ethRouting = o.ethRouting;
    }
    if (!o.ethFabric.empty())
    {
        ethFabric = o.ethFabric;
    }
    if (!o.partition.empty())
    {
        partition = o.partition;
    }
    if (!o.endpoint.empty())
    {
        endpoint = o.endpoint;
    }
    sharp = sharp || o.sharp;
    if (!o.fidelity.empty())
    {
        fidelity = o.fidelity;
    }
    if (!o.ncclVersion.empty())
    {
        ncclVersion = o.ncclVersion;
    }
    if (!o.hostCpu.empty())
    {
        hostCpu = o.hostCpu;
    }
    ReadNcclEnvironment();
    return Validate(field);
}

void
ClusterConfig::ReadNcclEnvironment()
{
    auto get = [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v ? v : "");
    };
    nccl.algo = get("NCCL_ALGO");
    nccl.proto = get("NCCL_PROTO");
    nccl.nvlsEnable = get("NCCL_NVLS_ENABLE");
    nccl.collNet = get("NCCL_COLLNET_ENABLE");
    nccl.minChannels = get("NCCL_MIN_NCHANNELS");
    nccl.maxChannels = get("NCCL_MAX_NCHANNELS");
    nccl.minCtas = get("NCCL_MIN_CTAS");
    nccl.maxCtas = get("NCCL_MAX_CTAS");
    nccl.pxnLevel = get("NCCL_P2P_PXN_LEVEL");
    nccl.netOverhead = get("NCCL_NET_OVERHEAD");
}

Ptr<NcclEndpoint>
ClusterConfig::MakeEndpoint(std::string* error) const
{
    const GpuEndpointSet set = GetEndpointSet();
    auto refuse = [error](const std::string& message) -> Ptr<NcclEndpoint> {
        if (error)
        {
            *error = message;
        }
        return nullptr;
    };
    const bool any = !nccl.algo.empty() || !nccl.proto.empty() || !nccl.nvlsEnable.empty() ||
                     !nccl.collNet.empty() || !nccl.minChannels.empty() ||
                     !nccl.maxChannels.empty() || !nccl.minCtas.empty() || !nccl.maxCtas.empty() ||
                     !nccl.pxnLevel.empty() || !nccl.netOverhead.empty() || !ncclVersion.empty();
    if (set.ideal)
    {
        if (any)
        {
            if (!ncclVersion.empty())
            {
                return refuse("ncclVersion=" + ncclVersion +
                              ": the ideal endpoint has no NCCL tuner; use --endpoint=a100, "
                              "h100 or b200 (or auto)");
            }
            return refuse(std::string(!nccl.algo.empty() ? "NCCL_ALGO" : "NCCL_*") +
                          "=...: the ideal endpoint has no NCCL model to tune; use --endpoint="
                          "a100, h100 or b200 (or auto)");
        }
        return nullptr;
    }
    Ptr<NcclEndpoint> e = MakeNcclEndpoint(set);
    // NCCL's search sees the GPU-NIC path the InfiniBand plane's endpoint is scaled to.
    e->SetAttribute("NicPathBandwidth", DoubleValue(set.nicPath_gbyte_per_s * ibEndpointScale));
    std::string why;
    const Time overhead = GetNetOverhead(&why);
    if (!why.empty())
    {
        return refuse(why);
    }
    e->SetAttribute("NetProxyStepTime", TimeValue(overhead));
    int64_t v = 0;
    if (!nccl.nvlsEnable.empty())
    {
        if (!WholeNumber(nccl.nvlsEnable, 0, 2, v))
        {
            return refuse("NCCL_NVLS_ENABLE=" + nccl.nvlsEnable + ": expected 0, 1 or 2");
        }
        e->SetAttribute("NvlsEnable", UintegerValue(v));
    }
    if (!nccl.collNet.empty())
    {
        if (!WholeNumber(nccl.collNet, 0, 1, v))
        {
            return refuse("NCCL_COLLNET_ENABLE=" + nccl.collNet + ": expected 0 or 1");
        }
        if (v == 1 && !sharp)
        {
            return refuse("NCCL_COLLNET_ENABLE=1: CollNet reduces in the InfiniBand switches "
                          "(SHARP), and this fabric's switches do not; add --sharp for "
                          "Quantum-2 class switches with SHARPv3");
        }
        const ClusterIbShape shape = ClusterIbShape::Compute(*this);
        if (v == 1 && shape.tiers > 2 && shape.leavesPerRail > 1)
        {
            return refuse("NCCL_COLLNET_ENABLE=1: each rail spans " +
                          std::to_string(shape.leavesPerRail) +
                          " leaf switches of a three-tier fabric, and SHARP aggregation trees "
                          "of more than two levels (leaf, spine) are not modelled");
        }
        e->SetAttribute("CollNetEnable", BooleanValue(v == 1));
    }
    // The communicator's channels as NCCL sets them (src/graph/connect.cc, src/init.cc): the
    // search's, at most NCCL_MAX_NCHANNELS and maxCTAs, then copied up to the larger of
    // NCCL_MIN_NCHANNELS and minCTAs, where minCTAs above maxCTAs is lowered to it.
    int64_t limits[4] = {1, 64, 1, 64}; // min, max channels; min, max CTAs
    for (auto [name, text, limit] :
         {std::tuple<const char*, const std::string*, int64_t*>{"NCCL_MIN_NCHANNELS",
                                                                &nccl.minChannels,
                                                                &limits[0]},
          {"NCCL_MAX_NCHANNELS", &nccl.maxChannels, &limits[1]},
          {"NCCL_MIN_CTAS", &nccl.minCtas, &limits[2]},
          {"NCCL_MAX_CTAS", &nccl.maxCtas, &limits[3]}})
    {
        if (!text->empty() && !WholeNumber(*text, 1, 64, *limit))
        {
            return refuse(std::string(name) + "=" + *text + ": expected a channel count 1-64");
        }
    }
    const int64_t minCtas = std::min(limits[2], limits[3]);
    if (!nccl.minChannels.empty() || !nccl.maxChannels.empty() || !nccl.minCtas.empty() ||
        !nccl.maxCtas.empty())
    {
        for (const char* attribute : {"MaxChannels", "MaxChannelsAcrossNodes"})
        {
            UintegerValue found;
            e->GetAttribute(attribute, found);
            e->SetAttribute(
                attribute,
                UintegerValue(std::min({static_cast<int64_t>(found.Get()), limits[1], limits[3]})));
        }
        e->SetAttribute("MinChannels", UintegerValue(std::max(limits[0], minCtas)));
    }
    if (!nccl.pxnLevel.empty())
    {
        if (!WholeNumber(nccl.pxnLevel, 0, 2, v))
        {
            return refuse("NCCL_P2P_PXN_LEVEL=" + nccl.pxnLevel + ": expected 0, 1 or 2");
        }
        // NCCL's levels 1 and 2 differ only where a GPU's own path to the peer's NIC is as
        // good as the relay's; on these servers it goes through the CPU, so both relay.
        e->SetAttribute("Pxn",
                        EnumValue(v == 0 ? NcclEndpoint::PXN_NEVER : NcclEndpoint::PXN_CROSS_RAIL));
    }
    if (!ncclVersion.empty())
    {
        const std::string why = ApplyNcclTunerVersion(e, ncclVersion);
        if (!why.empty())
        {
            return refuse("ncclVersion=" + ncclVersion + ": " + why);
        }
    }
    if (!nccl.minCtas.empty() || !nccl.maxCtas.empty())
    {
        // src/transport/nvls.cc: NVLS runs max(minCTAs, min(maxCTAs, its channels)); with
        // fewer than two the tuner gives it no bandwidth (tuning.cc), so it is not taken.
        for (const char* attribute : {"NvlsChannels", "NvlsChannelsAcrossNodes"})
        {
            UintegerValue nvls;
            e->GetAttribute(attribute, nvls);
            e->SetAttribute(
                attribute,
                UintegerValue(
                    std::max(minCtas, std::min(limits[3], static_cast<int64_t>(nvls.Get())))));
        }
    }
    e->SetAttribute("Algorithms", StringValue(nccl.algo));
    e->SetAttribute("Protocols", StringValue(nccl.proto));
    const std::string bad = e->CheckOverrides();
    if (!bad.empty())
    {
        return refuse(bad);
    }
    return e;
}

Time
ClusterConfig::GetNetOverhead(std::string* error) const
{
    // tuning.cc getNetOverhead: NCCL_NET_OVERHEAD (ns) when set, else Intel x86 1 us, AMD x86
    // 2 us, any other CPU 1 us.
    if (!nccl.netOverhead.empty())
    {
        int64_t ns = 0;
        if (!WholeNumber(nccl.netOverhead, 0, 1000000, ns))
        {
            if (error)
            {
                *error = "NCCL_NET_OVERHEAD=" + nccl.netOverhead +
                         ": expected the network overhead per step in ns, 0-1000000";
            }
            return Time(0);
        }
        return NanoSeconds(ns);
    }
    return MicroSeconds(hostCpu == "amd" ? 2 : 1);
}

GpuEndpointSet
ClusterConfig::GetEndpointSet() const
{
    std::string name = endpoint;
    if (name == "auto")
    {
        // The preset's GPUs; a hand-built cluster by its NVLink generation.
        name = preset == "dgx-a100"                              ? "a100"
               : preset == "dgx-h100"                            ? "h100"
               : preset == "dgx-b200" || preset == "gb200-nvl72" ? "b200"
               : nvlinkGen == 3                                  ? "a100"
               : nvlinkGen == 4                                  ? "h100"
               : nvlinkGen == 5                                  ? "b200"
                                                                 : "ideal";
    }
    GpuEndpointSet set;
    FindGpuEndpointSet(name, set);
    return set;
}

void
ClusterConfig::AddToRunParameters(RunParameters& p) const
{
    p.Set("cluster.preset", preset);
    p.Set("cluster.endpoint", GetEndpointSet().name);
    p.Set("cluster.hostCpu", hostCpu);
    if (sharp)
    {
        p.Set("cluster.sharp", 1); // recorded only when on: runs without it keep their params
    }
    p.Set("cluster.fidelity", GetFidelityName());
    if (!ncclVersion.empty())
    {
        p.Set("cluster.ncclVersion", ncclVersion); // only when set: other runs keep theirs
    }
    if (scaleOut != "infiniband")
    {
        // Only when chosen: runs on InfiniBand keep the parameters they always had.
        p.Set("cluster.scaleOut", scaleOut);
        p.Set("cluster.pfc", rocePfc ? "1" : "0");
        p.Set("cluster.ecn", roceEcn ? "1" : "0");
        p.Set("cluster.dcqcn", roceDcqcn ? "1" : "0");
        p.Set("cluster.ecmp", roceEcmp);
        if (roceSharedBuffer_bytes > 0)
        {
            p.Set("cluster.sharedBuffer_bytes", roceSharedBuffer_bytes);
        }
    }
    // NCCL's variables change what runs: a run records those that were set.
    for (auto [name, value] : {std::pair<const char*, const std::string*>{"NCCL_ALGO", &nccl.algo},
                               {"NCCL_PROTO", &nccl.proto},
                               {"NCCL_NVLS_ENABLE", &nccl.nvlsEnable},
                               {"NCCL_COLLNET_ENABLE", &nccl.collNet},
                               {"NCCL_MIN_NCHANNELS", &nccl.minChannels},
                               {"NCCL_MAX_NCHANNELS", &nccl.maxChannels},
                               {"NCCL_MIN_CTAS", &nccl.minCtas},
                               {"NCCL_MAX_CTAS", &nccl.maxCtas},
                               {"NCCL_P2P_PXN_LEVEL", &nccl.pxnLevel},
                               {"NCCL_NET_OVERHEAD", &nccl.netOverhead}})
    {
        if (!value->empty())
        {
            p.Set(std::string("cluster.") + name, *value);
        }
    }
    p.Set("cluster.servers", servers);
    p.Set("cluster.gpusPerServer", gpusPerServer);
    p.Set("cluster.serversPerDomain", serversPerDomain);
    p.Set("cluster.nvlinkGen", nvlinkGen);
    p.Set("cluster.nvlinkLinksPerGpu", nvlinkLinksPerGpu);
    p.Set("cluster.nvlinkLinkRate_gbyte_per_s", nvlinkLinkRate_gbyte_per_s);
    if (nvlinkEndpointScale != 1.0 || ibEndpointScale != 1.0)
    {
        // Only plane sizing scales them; a run at the set's own figures records nothing.
        p.Set("cluster.nvlinkEndpointScale", nvlinkEndpointScale);
        p.Set("cluster.ibEndpointScale", ibEndpointScale);
    }
    p.Set("cluster.nvswitchesPerDomain", nvswitchesPerDomain);
    p.Set("cluster.nvswitchPorts", nvswitchPorts);
    p.Set("cluster.ibRate_gbit_per_s", ibRate_gbit_per_s);
    p.Set("cluster.ibSwitchRadix", ibSwitchRadix);
    p.Set("cluster.oversubscription", oversubscription);
    p.Set("cluster.ibTiers", ibTiers);
    p.Set("cluster.ibRoutingEngine", ibRoutingEngine);
    if (ibSubnets != "one")
    {
        p.Set("cluster.ibSubnets", ibSubnets); // only when chosen: other runs keep their params
    }
    p.Set("cluster.ibDelay_ns", ibDelay_ns);
    p.Set("cluster.ethPortsPerServer", ethPortsPerServer);
    p.Set("cluster.ethRate_gbit_per_s", ethRate_gbit_per_s);
    p.Set("cluster.serversPerRack", serversPerRack);
    p.Set("cluster.racksPerTor", racksPerTor);
    p.Set("cluster.ethAggSwitches", ethAggSwitches);
    p.Set("cluster.ethRouting", ethRouting);
    p.Set("cluster.ethFabric", ethFabric);
    p.Set("cluster.ethUplinkRate_gbit_per_s", GetTorUplinkRate_gbit_per_s());
    p.Set("cluster.storageNodes", storageNodes);
    p.Set("cluster.storageRate_gbit_per_s", storageRate_gbit_per_s);
    p.Set("cluster.pcieRate_gbit_per_s", pcieRate_gbit_per_s);
    p.Set("cluster.partition", partition);
}

ClusterLayout
ClusterConfig::GetLayout() const
{
    return ClusterLayout(servers, gpusPerServer, serversPerDomain);
}

std::string
ClusterConfig::PartitionDomains(uint32_t processes, std::vector<uint32_t>& systemOfDomain) const
{
    ClusterLayout layout = GetLayout();
    ClusterLayout::PartitionPolicy policy;
    std::string error = ClusterLayout::ParsePartitionPolicy(partition, policy);
    if (error.empty())
    {
        error = layout.Partition(processes, policy);
    }
    systemOfDomain.assign(layout.GetNDomains(), 0);
    for (uint32_t d = 0; error.empty() && d < layout.GetNDomains(); ++d)
    {
        systemOfDomain[d] = layout.GetDomainSystemId(d);
    }
    return error;
}

void
ClusterConfig::ApplyCommandLineOrAbort()
{
    const std::string error = ApplyCommandLine();
    NS_ABORT_MSG_IF(!error.empty(), "cluster: " << error);
}

std::string
ClusterConfig::Validate(std::string* field) const
{
    // The flag a refusal names goes to the failed run row's error_field.
    auto fail = [field](const char* flag, const std::string& message) {
        if (field)
        {
            *field = flag;
        }
        return message;
    };
    std::ostringstream s;
    const auto presets = GetPresetNames();
    if (std::find(presets.begin(), presets.end(), preset) == presets.end())
    {
        ClusterConfig probe;
        return fail("preset", probe.ApplyPreset(preset));
    }
    if (hostCpu != "intel" && hostCpu != "amd" && hostCpu != "arm")
    {
        return fail("hostCpu", "unknown --hostCpu '" + hostCpu + "'; valid: intel, amd, arm");
    }
    if (scaleOut != "infiniband" && scaleOut != "roce")
    {
        return fail("scaleOut", "unknown --scaleOut '" + scaleOut + "'; valid: infiniband, roce");
    }
    if (ibSubnets != "one" && ibSubnets != "per-rail")
    {
        return fail("ibSubnets", "unknown --ibSubnets '" + ibSubnets + "'; valid: one, per-rail");
    }
    if (IsIbSubnetPerRail() && scaleOut == "roce")
    {
        return fail("ibSubnets",
                    "--ibSubnets=per-rail splits the InfiniBand plane into one subnet per "
                    "rail; the RoCE plane (--scaleOut=roce) has no subnets: use "
                    "--ibSubnets=one");
    }
    if (roceEcmp != "hash" && roceEcmp != "spray" && roceEcmp != "adaptive")
    {
        return fail("ecmp", "unknown --ecmp '" + roceEcmp + "'; valid: hash, spray, adaptive");
    }
    if (roceSharedBuffer_bytes > 0 && scaleOut != "roce")
    {
        return fail("sharedBuffer_bytes",
                    "--sharedBuffer_bytes sizes the RoCE switches' buffer: needs --scaleOut=roce");
    }
    if (!pcap.empty() && scaleOut != "roce")
    {
        return fail("pcap", "--pcap captures the RoCE plane: needs --scaleOut=roce");
    }
    GpuEndpointSet set;
    if (endpoint != "auto" && !FindGpuEndpointSet(endpoint, set))
    {
        std::string names = "auto";
        for (const auto& n : GpuEndpointSetNames())
        {
            names += ", " + n;
        }
        return fail("endpoint", "unknown endpoint '" + endpoint + "'; valid: " + names);
    }
    std::vector<ClusterPlane> flowPlanes;
    const std::string fidelityError = ParseFidelity(flowPlanes);
    if (!fidelityError.empty())
    {
        return fail("fidelity", fidelityError);
    }
    std::string ncclError;
    MakeEndpoint(&ncclError);
    if (!ncclError.empty())
    {
        return fail(ncclError.substr(0, ncclError.find('=')).c_str(), ncclError);
    }
    if (servers == 0)
    {
        return fail("servers", "servers must be at least 1");
    }
    if (gpusPerServer == 0)
    {
        return fail("gpusPerServer", "gpusPerServer must be at least 1");
    }
    if (serversPerDomain == 0 || servers % serversPerDomain != 0)
    {
        s << "servers (" << servers << ") must be a positive multiple of serversPerDomain ("
          << serversPerDomain << "): " << preset << " NVLink domains are " << serversPerDomain
          << " servers";
        return fail("serversPerDomain", s.str());
    }
    for (auto [what, v] :
         {std::pair<const char*, double>{"nvlinkLinkRate_gbyte_per_s", nvlinkLinkRate_gbyte_per_s},
          {"ibRate_gbit_per_s", ibRate_gbit_per_s},
          {"ethRate_gbit_per_s", ethRate_gbit_per_s},
          {"pcieRate_gbit_per_s", pcieRate_gbit_per_s},
          {"storageRate_gbit_per_s", storageRate_gbit_per_s},
          {"ethDelay", ethDelay_ns + 1},
          {"pcieDelay", pcieDelay_ns + 1}})
    {
        const std::string e = Positive(what, v);
        if (!e.empty())
        {
            return fail(what, e);
        }
    }
    if (ethUplinkRate_gbit_per_s < 0 || !std::isfinite(ethUplinkRate_gbit_per_s))
    {
        return fail("ethUplinkRate_gbit_per_s",
                    "ethUplinkRate_gbit_per_s must be 0 (non-blocking) or positive");
    }
    const uint32_t domainGpus = GetGpusPerDomain();
    if (domainGpus > 1)
    {
        if (nvlinkLinksPerGpu == 0 || nvswitchesPerDomain == 0)
        {
            return fail("nvlinkLinks",
                        "an NVLink domain of several GPUs needs links and NVSwitches");
        }
        // Links spread evenly over the switches; the busiest switch takes ceil(links / switches).
        const uint32_t perSwitch =
            (nvlinkLinksPerGpu + nvswitchesPerDomain - 1) / nvswitchesPerDomain;
        if (static_cast<uint64_t>(domainGpus) * perSwitch > nvswitchPorts)
        {
            const uint32_t maxGpus = nvswitchPorts / perSwitch;
            s << preset << ": " << domainGpus << " GPUs per NVLink domain (serversPerDomain "
              << serversPerDomain << " x gpusPerServer " << gpusPerServer << ") do not fit: its "
              << nvswitchesPerDomain << " NVSwitches of " << nvswitchPorts << " ports with "
              << perSwitch << " link(s) from each GPU take at most " << maxGpus << " GPUs";
            return fail(serversPerDomain == 1 ? "gpusPerServer" : "serversPerDomain", s.str());
        }
    }
    if (domainGpus > 1)
    {
        const std::string e = NvLinkValidateFabric(GetNvLinkSpec(), domainGpus);
        if (!e.empty())
        {
            return fail("nvlinkLinks", "NVLink domain: " + e);
        }
    }
    if (serversPerRack == 0 || racksPerTor == 0 || ethPortsPerServer == 0 || ethAggSwitches == 0)
    {
        return fail("serversPerRack",
                    "serversPerRack, racksPerTor, ethPorts and ethAggSwitches must be at least 1");
    }
    // Front-end addresses: a block per server in 10.0.0.0/9 (GetFrontEndServerBlockBits).
    if (gpusPerServer > 255)
    {
        return fail("gpusPerServer", "front-end addressing takes at most 255 GPUs per server");
    }
    if ((static_cast<uint64_t>(servers) << GetFrontEndServerBlockBits()) > (1ull << 23))
    {
        return fail("servers",
                    "front-end addressing: " + std::to_string(servers) + " servers of " +
                        std::to_string(gpusPerServer) + " GPUs need more than 10.0.0.0/9 (2^" +
                        std::to_string(23 - GetFrontEndServerBlockBits()) + " servers at most)");
    }
    if (ethRouting != "static" && ethRouting != "global")
    {
        return fail("ethRouting",
                    "unknown front-end routing '" + ethRouting + "'; valid: static, global");
    }
    if (ethFabric != "bridged" && ethFabric != "routed")
    {
        return fail("ethFabric",
                    "unknown front-end fabric '" + ethFabric + "'; valid: bridged, routed");
    }
    // A bridged rack is one /22 (see ClusterHelper): the aggregation router and the CPUs.
    if (ethFabric == "bridged" && std::min(GetServersPerTor(), servers) > 1021)
    {
        return fail("serversPerRack",
                    "a bridged ToR takes at most 1021 servers (one /22 per rack)");
    }
    if (ibDelay_ns < 0)
    {
        return fail("ibDelay", "ibDelay must be >= 0 ns");
    }
    ClusterLayout::PartitionPolicy policy;
    const std::string badPartition = ClusterLayout::ParsePartitionPolicy(partition, policy);
    if (!badPartition.empty())
    {
        return fail("partition", badPartition);
    }
    InfinibandRoutingEngineType engine;
    const std::string badEngine = InfinibandParseRoutingEngine(ibRoutingEngine, engine);
    if (!badEngine.empty())
    {
        return fail("ibRouting", "InfiniBand: " + badEngine);
    }
    const ClusterIbShape shape = ClusterIbShape::Compute(*this);
    return shape.error.empty() ? "" : fail(shape.errorField, shape.error);
}

void
ClusterConfig::ValidateOrAbort() const
{
    const std::string error = Validate();
    NS_ABORT_MSG_IF(!error.empty(), "cluster: " << error);
}

bool
ClusterConfig::IsIbSubnetPerRail() const
{
    return ibSubnets == "per-rail";
}

ClusterPlane
ClusterConfig::GetScaleOutPlane() const
{
    return scaleOut == "roce" ? ClusterPlane::ROCE : ClusterPlane::INFINIBAND;
}

uint32_t
ClusterConfig::GetNRanks() const
{
    return GetLayout().GetNRanks();
}

uint32_t
ClusterConfig::GetGpusPerDomain() const
{
    return GetLayout().GetGpusPerDomain();
}

uint32_t
ClusterConfig::GetNDomains() const
{
    return GetLayout().GetNDomains();
}

uint32_t
ClusterConfig::GetServersPerTor() const
{
    return serversPerRack * racksPerTor;
}

uint32_t
ClusterConfig::GetNTors() const
{
    const uint32_t per = GetServersPerTor();
    return per == 0 ? 0 : (servers + per - 1) / per;
}

double
ClusterConfig::GetTorUplinkRate_gbit_per_s() const
{
    if (ethUplinkRate_gbit_per_s > 0)
    {
        return ethUplinkRate_gbit_per_s;
    }
    const uint32_t perTor = std::min(GetServersPerTor(), servers);
    return perTor * ethPortsPerServer * ethRate_gbit_per_s / ethAggSwitches;
}

double
ClusterConfig::GetTorUplinkTotal_gbit_per_s() const
{
    return ethAggSwitches * GetTorUplinkRate_gbit_per_s();
}

bool
ClusterConfig::IsEthBridged() const
{
    return ethFabric == "bridged";
}

double
ClusterConfig::GetNvLinkPerGpu_gbit_per_s() const
{
    return GetGpusPerDomain() > 1 ? nvlinkLinksPerGpu * nvlinkLinkRate_gbyte_per_s * 8 : 0.0;
}

double
ClusterConfig::GetIbPerGpu_gbit_per_s() const
{
    return ibRate_gbit_per_s;
}

uint32_t
ClusterConfig::GetFrontEndServerBlockBits() const
{
    // Today's /22 per server while it fits below the bridged racks' 10.128.0.0; beyond, the
    // smallest power of two holding (GPUs + 1) /30s.
    if (static_cast<uint64_t>(servers) << 10 <= (1ull << 23))
    {
        return 10;
    }
    uint32_t bits = 2;
    while ((1u << bits) < 4 * (gpusPerServer + 1))
    {
        ++bits;
    }
    return bits;
}

double
ClusterConfig::GetEthPerGpu_gbit_per_s() const
{
    return ethPortsPerServer * ethRate_gbit_per_s / gpusPerServer;
}

namespace
{

// What a refusal of one subnet for every rail suggests.
std::string
PerRailHint(const ClusterConfig& c, uint32_t rails)
{
    return c.IsIbSubnetPerRail() || rails < 2
               ? ""
               : "; --ibSubnets=per-rail gives each rail its own fat tree and subnet";
}

} // namespace

ClusterIbShape
ClusterIbShape::Compute(const ClusterConfig& c)
{
    ClusterIbShape r = ComputeSubnet(c);
    if (!c.IsIbSubnetPerRail() || !r.error.empty())
    {
        return r;
    }
    // Identical trees, one per rail; the shape of one is in r (with a single rail).
    r.subnets = c.gpusPerServer;
    r.rails = c.gpusPerServer;
    r.leaves *= r.subnets;
    r.spines *= r.subnets;
    r.pods *= r.subnets;
    r.cores *= r.subnets;
    r.switches *= r.subnets;
    r.cables *= r.subnets;
    return r;
}

ClusterIbShape
ClusterIbShape::ComputeSubnet(const ClusterConfig& c)
{
    ClusterIbShape r;
    std::ostringstream why;
    const uint32_t k = c.ibSwitchRadix;
    const uint32_t n = c.servers;
    const double os = c.oversubscription;
    r.rails = c.IsIbSubnetPerRail() ? 1 : c.gpusPerServer;
    if (k < 2 || k > 254)
    {
        why << "InfiniBand switch radix " << k << " outside 2..254";
        r.error = why.str();
        r.errorField = "ibRadix";
        return r;
    }
    if (!(os >= 1.0) || !std::isfinite(os))
    {
        why << "oversubscription " << os << " must be >= 1";
        r.error = why.str();
        r.errorField = "oversubscription";
        return r;
    }
    if (c.ibTiers > 3)
    {
        why << "ibTiers " << c.ibTiers << ": 1, 2 or 3 (0 = fewest that fit)";
        r.error = why.str();
        r.errorField = "ibTiers";
        return r;
    }
    if (n == 0 || r.rails == 0)
    {
        r.error = "no HCAs";
        r.errorField = "servers";
        return r;
    }
    const uint32_t hcas = n * r.rails;
    // Leaf ports split down:up = oversubscription, as InfinibandTopology::TryFatTree.
    uint32_t down = static_cast<uint32_t>(std::floor(k * os / (1.0 + os) + 1e-9));
    down = std::min(std::max(down, 1U), k - 1);
    r.hostsPerLeaf = std::min(n, down);
    r.leavesPerRail = (n + r.hostsPerLeaf - 1) / r.hostsPerLeaf;
    uint32_t needed;
    if (r.rails == 1 && n <= k)
    {
        needed = 1;
    }
    else
    {
        const uint32_t leaves = r.rails * r.leavesPerRail;
        const uint32_t half = k / 2;
        needed = leaves <= k ? 2 : 3;
        if (needed == 3 && (leaves + half - 1) / half > k)
        {
            why << "InfiniBand switch radix " << k << " too small: " << hcas << " HCAs on "
                << r.rails << (r.rails == 1 ? " rail" : " rails") << " need " << leaves
                << " leaves, more than 3 tiers reach (" << k << " pods of " << half << " leaves)"
                << PerRailHint(c, r.rails);
            r.error = why.str();
            r.errorField = "ibRadix";
            return r;
        }
    }
    if (c.ibTiers != 0 && c.ibTiers < needed)
    {
        why << "InfiniBand switch radix " << k << " too small for " << hcas << " HCAs on "
            << r.rails << " rails in " << c.ibTiers << " tier(s): they need " << needed;
        r.error = why.str();
        r.errorField = "ibTiers";
        return r;
    }
    r.tiers = c.ibTiers != 0 ? c.ibTiers : needed;
    if (r.tiers == 1)
    {
        r.hostsPerLeaf = n;
        r.leavesPerRail = 1;
        r.leaves = 1;
        r.switches = 1;
        r.cables = hcas;
        return r;
    }
    r.leaves = r.rails * r.leavesPerRail;
    // Non-blocking above the leaf unless oversubscribed: up ports = hosts / oversubscription.
    r.leafUplinks = static_cast<uint32_t>(std::ceil(r.hostsPerLeaf / os - 1e-9));
    r.leafUplinks = std::min(std::max(r.leafUplinks, 1U), k - r.hostsPerLeaf);
    if (r.tiers == 2)
    {
        // Fewest spines that take every leaf uplink, with the same number of parallel
        // cables from each leaf to each spine (a divisor of the uplinks).
        const uint32_t minSpines = (r.leaves * r.leafUplinks + k - 1) / k;
        uint32_t s = std::max(minSpines, 1U);
        while (r.leafUplinks % s != 0)
        {
            ++s;
        }
        r.spines = s;
        r.linksPerLeafSpine = r.leafUplinks / s;
        r.switches = r.leaves + r.spines;
        r.cables = hcas + r.leaves * r.leafUplinks;
        return r;
    }
    // 3 tiers: pods of radix/2 leaves; in each pod one aggregation switch per leaf uplink,
    // each with radix/2 up ports to its own group of cores; a core reaches every pod.
    r.podLeaves = k / 2;
    r.pods = (r.leaves + r.podLeaves - 1) / r.podLeaves;
    r.spines = r.pods * r.leafUplinks;
    r.cores = r.leafUplinks * r.podLeaves;
    r.linksPerLeafSpine = 1;
    r.switches = r.leaves + r.spines + r.cores;
    r.cables = hcas + r.leaves * r.leafUplinks + r.spines * r.podLeaves;
    if (hcas + r.switches > 49151)
    {
        why << hcas << " HCAs and " << r.switches
            << " switches need more than the 49151 unicast LIDs of "
            << (c.IsIbSubnetPerRail() ? "a rail's subnet" : "one subnet")
            << PerRailHint(c, r.rails);
        r.error = why.str();
        r.errorField = "servers";
    }
    return r;
}

namespace
{

// Planes whose GPU messages a fidelity applies to, in the order GetFidelityName lists them.
const ClusterPlane kGpuPlanes[] = {ClusterPlane::NVLINK, ClusterPlane::INFINIBAND};

} // namespace

std::string
ClusterConfig::ParseFidelity(std::vector<ClusterPlane>& flowPlanes) const
{
    flowPlanes.clear();
    auto isMode = [](const std::string& m) { return m == "packet" || m == "flow"; };
    const std::string valid = "packet, flow, or plane:mode entries such as "
                              "nvlink:flow,infiniband:packet";
    std::string bare;
    std::map<ClusterPlane, std::string> given;
    std::stringstream in(fidelity);
    std::string entry;
    bool any = false;
    while (std::getline(in, entry, ','))
    {
        any = true;
        const auto colon = entry.find(':');
        if (colon == std::string::npos)
        {
            if (!isMode(entry))
            {
                return "unknown fidelity '" + entry + "'; valid: " + valid;
            }
            if (!bare.empty() || !given.empty())
            {
                return "fidelity '" + entry +
                       "': a bare mode (for every plane not listed) comes first, once";
            }
            bare = entry;
            continue;
        }
        const std::string name = entry.substr(0, colon);
        const std::string mode = entry.substr(colon + 1);
        ClusterPlane plane;
        const std::string planeError = ClusterPlaneFromName(name, plane);
        if (!planeError.empty())
        {
            return "fidelity '" + entry + "': " + planeError;
        }
        if (!isMode(mode))
        {
            return "fidelity '" + entry + "': unknown mode '" + mode + "'; valid: packet, flow";
        }
        if (std::find(std::begin(kGpuPlanes), std::end(kGpuPlanes), plane) == std::end(kGpuPlanes))
        {
            if (mode == "flow")
            {
                return "fidelity '" + entry + "': the " + name +
                       " plane carries the front-end's TCP, not GPU messages; only nvlink "
                       "and infiniband have a flow mode";
            }
            continue;
        }
        if (!given.emplace(plane, mode).second)
        {
            return "fidelity '" + entry + "': plane " + name + " given twice";
        }
    }
    if (!any)
    {
        return "empty fidelity; valid: " + valid;
    }
    for (ClusterPlane plane : kGpuPlanes)
    {
        auto it = given.find(plane);
        const std::string& mode = it != given.end() ? it->second : bare;
        if (mode != "flow")
        {
            continue;
        }
        // An NVLink domain of one GPU has no NVLink plane (every pair crosses InfiniBand).
        if (plane == ClusterPlane::NVLINK && GetGpusPerDomain() < 2 && it != given.end())
        {
            return "fidelity nvlink:flow: this cluster has no NVLink plane (" +
                   std::to_string(GetGpusPerDomain()) + " GPU per NVLink domain)";
        }
        flowPlanes.push_back(plane);
    }
    return "";
}

bool
ClusterConfig::IsFlowPlane(ClusterPlane plane) const
{
    std::vector<ClusterPlane> flowPlanes;
    ParseFidelity(flowPlanes);
    return std::find(flowPlanes.begin(), flowPlanes.end(), plane) != flowPlanes.end();
}

std::string
ClusterConfig::GetFidelityName() const
{
    std::string name;
    for (ClusterPlane plane : kGpuPlanes)
    {
        name += (name.empty() ? "" : ",") + ClusterPlaneName(plane) + ":" +
                (IsFlowPlane(plane) ? "flow" : "packet");
    }
    return name;
}

} // namespace ns3
