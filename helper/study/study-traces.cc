/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/study-traces.h"

#include "ns3/workload-trace.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

uint64_t
MoeAllToAllConfig::AllToAllBytes() const
{
    return tokens * hidden * dtypeBytes * topk;
}

uint64_t
MoeAllToAllConfig::ExpertForwardNs() const
{
    const double flops = double(tokens) * topk * 16.0 * hidden * hidden;
    return static_cast<uint64_t>(flops / (gpuTflops * 1e12 * efficiency) * 1e9 + 0.5);
}

std::string
MoeAllToAllConfig::Trace() const
{
    const std::string all = "0-" + std::to_string(ep - 1);
    const std::string a2a = " alltoall group=ep0 bytes=" + FormatBytes(AllToAllBytes());
    const std::string fwd = " compute time=" + FormatTimeNs(ExpertForwardNs());
    const std::string bwd = " compute time=" + FormatTimeNs(2 * ExpertForwardNs());
    std::ostringstream os;
    os << "fabric-trace 1\nranks " << ep << "\ngroup ep0 " << all << "\nrepeat " << iterations
       << " {\n";
    for (uint32_t l = 0; l < layers; ++l)
    {
        os << all << " disp" << l << a2a << "\n"
           << all << " exp" << l << fwd << "\n"
           << all << " comb" << l << a2a << "\n";
    }
    for (uint32_t l = layers; l-- > 0;)
    {
        os << all << " bcomb" << l << a2a << "\n"
           << all << " bexp" << l << bwd << "\n"
           << all << " bdisp" << l << a2a << "\n";
    }
    os << "}\n";
    return os.str();
}

double
MoeAllToAllModelNs(const ClusterConfig& config, uint32_t ep, uint64_t bytes, double alphaNs)
{
    const uint32_t domain = std::min(ep, config.GetGpusPerDomain());
    const double perPeer = double(bytes) / ep;
    const double nvlinkBps = config.GetNvLinkPerGpu_gbit_per_s() * 1e9 / 8 * 256.0 / 272.0;
    const double ibBps = config.ibRate_gbit_per_s * 1e9 / 8 * 4096.0 / 4122.0;
    const double intraNs = (domain - 1) * perPeer / nvlinkBps * 1e9;
    const double interNs = (ep - domain) * perPeer / ibBps * 1e9;
    return alphaNs + std::max(intraNs, interNs);
}

std::string
FrontEndJobConfig::Trace() const
{
    const std::string all = "0-" + std::to_string(ranks - 1);
    std::ostringstream os;
    os << "fabric-trace 1\nranks " << ranks << "\ngroup dp0 " << all << "\n";
    const bool load = loadBytes > 0;
    if (load)
    {
        os << all << " in0 load bytes=" << loadBytes << " from=storage0 stream=2\n";
    }
    for (uint32_t i = 0; i < iterations; ++i)
    {
        os << all << " fwd" << i << " compute time=" << forwardNs;
        if (load)
        {
            os << " after=in" << i;
        }
        os << "\n";
        if (load && i + 1 < iterations)
        {
            os << all << " in" << i + 1 << " load bytes=" << loadBytes
               << " from=storage0 stream=2 after=fwd" << i << "\n";
        }
        os << all << " bwd" << i << " compute time=" << backwardNs << "\n"
           << all << " grad" << i << " allreduce group=dp0 bytes=" << gradientBytes << "\n"
           << all << " opt" << i << " compute time=" << optimizerNs << "\n";
        if (checkpointBytes > 0)
        {
            os << all << " ck" << i << " checkpoint bytes=" << checkpointBytes << " to=storage0"
               << (syncCheckpoint ? "" : " stream=3 after=opt" + std::to_string(i)) << "\n";
        }
    }
    return os.str();
}

} // namespace ns3
