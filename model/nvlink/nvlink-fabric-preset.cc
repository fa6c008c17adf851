/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "nvlink-fabric-preset.h"

#include "nvlink-net-device.h"

#include <sstream>

namespace ns3
{

namespace
{

NvLinkFabricSpec
Uniform(const std::string& name, uint32_t generation, uint32_t switches, uint32_t linksEach)
{
    NvLinkFabricSpec spec;
    spec.name = name;
    spec.generation = generation;
    spec.switches = switches;
    spec.linksPerSwitch.assign(switches, linksEach);
    return spec;
}

} // namespace

std::vector<std::string>
NvLinkFabricPresetNames()
{
    return {"dgx-a100", "dgx-h100", "gb200-nvl72"};
}

std::string
NvLinkFindFabricPreset(const std::string& name, NvLinkFabricSpec& spec)
{
    if (name == "dgx-a100")
    {
        // NVIDIA DGX A100 user guide / system architecture: 8 A100 (NVLink3, 12 links),
        // 6 NVSwitch gen2, each GPU 2 links to every switch.
        spec = Uniform(name, 3, 6, 2);
        return "";
    }
    if (name == "dgx-h100")
    {
        // Hot Chips 34 (NVLink4 NVSwitch) via public write-ups: 8 H100 (18 links),
        // 4 NVSwitch gen3 with 64 NVLink4 ports; links 5+4+4+5 to the four switches.
        spec.name = name;
        spec.generation = 4;
        spec.switches = 4;
        spec.linksPerSwitch = {5, 4, 4, 5};
        spec.linksPerPair.clear();
        spec.directLinks.clear();
        spec.switchPorts = 0;
        return "";
    }
    if (name == "gb200-nvl72")
    {
        // DGX SuperPOD GB200 reference architecture: 72 B200 (NVLink5, 18 links),
        // 9 switch trays x 2 NVSwitch gen4 (72 ports) = 18, one link per GPU and switch.
        spec = Uniform(name, 5, 18, 1);
        return "";
    }
    std::ostringstream os;
    os << "unknown NVLink preset '" << name << "'; valid presets:";
    for (const auto& n : NvLinkFabricPresetNames())
    {
        os << " " << n;
    }
    return os.str();
}

std::string
NvLinkValidateFabric(const NvLinkFabricSpec& spec, uint32_t gpus)
{
    std::ostringstream os;
    const std::string genError = CheckNvLinkGeneration(spec.generation);
    if (!genError.empty())
    {
        return spec.name + ": " + genError;
    }
    const NvLinkGeneration& gen = GetNvLinkGeneration(spec.generation);
    if (gpus == 0)
    {
        return spec.name + ": no GPUs";
    }
    if (gpus > 0xfffe)
    {
        os << spec.name << ": " << gpus << " GPUs exceed the 16-bit GPU id";
        return os.str();
    }
    if (spec.linksPerPair.empty() && spec.linksPerSwitch.size() != spec.switches)
    {
        os << spec.name << ": linksPerSwitch has " << spec.linksPerSwitch.size() << " entries for "
           << spec.switches << " switches";
        return os.str();
    }
    if (!spec.linksPerPair.empty())
    {
        if (spec.linksPerPair.size() != gpus)
        {
            os << spec.name << ": linksPerPair has " << spec.linksPerPair.size() << " rows for "
               << gpus << " GPUs";
            return os.str();
        }
        for (uint32_t g = 0; g < gpus; ++g)
        {
            if (spec.linksPerPair[g].size() != spec.switches)
            {
                os << spec.name << ": linksPerPair row of GPU " << g << " has "
                   << spec.linksPerPair[g].size() << " entries for " << spec.switches
                   << " switches";
                return os.str();
            }
        }
    }
    std::vector<uint64_t> gpuLinks(gpus, 0);
    for (const auto& d : spec.directLinks)
    {
        if (d.gpuA >= gpus || d.gpuB >= gpus || d.gpuA == d.gpuB || d.links == 0)
        {
            os << spec.name << ": direct link " << d.gpuA << "-" << d.gpuB << " with " << d.links
               << " links is invalid for " << gpus << " GPUs";
            return os.str();
        }
        gpuLinks[d.gpuA] += d.links;
        gpuLinks[d.gpuB] += d.links;
    }
    const uint32_t ports = spec.switchPorts != 0 ? spec.switchPorts : gen.switchPorts;
    for (uint32_t s = 0; s < spec.switches; ++s)
    {
        uint64_t used = 0;
        for (uint32_t g = 0; g < gpus; ++g)
        {
            const uint32_t l =
                spec.linksPerPair.empty() ? spec.linksPerSwitch[s] : spec.linksPerPair[g][s];
            used += l;
            gpuLinks[g] += l;
        }
        if (used > ports)
        {
            os << spec.name << ": " << gpus << " GPUs need " << used << " ports on switch " << s
               << ", an NVSwitch gen" << gen.switchGeneration << " has " << ports;
            return os.str();
        }
    }
    for (uint32_t g = 0; g < gpus; ++g)
    {
        if (gpuLinks[g] == 0)
        {
            os << spec.name << ": GPU " << g << " has zero NVLink links";
            return os.str();
        }
        if (gpuLinks[g] > gen.linksPerGpu)
        {
            os << spec.name << ": GPU " << g << " has " << gpuLinks[g] << " links, an NVLink"
               << spec.generation << " GPU has " << gen.linksPerGpu;
            return os.str();
        }
    }
    return "";
}

} // namespace ns3
