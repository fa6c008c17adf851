/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_FABRIC_PRESET_H
#define AI_FABRIC_NVLINK_FABRIC_PRESET_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// A GPU<->GPU bundle without a switch.
struct NvLinkDirectLink
{
    uint32_t gpuA;
    uint32_t gpuB;
    uint32_t links;
};

/**
 * \ingroup ai-fabric
 * Shape of an NVLink domain: a preset (a system's published wiring) or a custom one.
 * NvLinkHelper builds it; the per-generation link figures are GetNvLinkGeneration's.
 */
struct NvLinkFabricSpec
{
    std::string name{"custom"};
    uint32_t generation{4}; //!< NVLink generation (2-5); switches are the matching NVSwitch
    uint32_t switches{0};
    /// Links from every GPU to switch s (size = switches) ...
    std::vector<uint32_t> linksPerSwitch;
    /// ... or per (GPU, switch) pair, [gpu][switch]; overrides linksPerSwitch when set.
    std::vector<std::vector<uint32_t>> linksPerPair;
    std::vector<NvLinkDirectLink> directLinks;
    uint32_t switchPorts{0}; //!< 0 = the ports of the generation's NVSwitch
};

/// Names of the system presets, as NvLinkFindFabricPreset accepts them.
std::vector<std::string> NvLinkFabricPresetNames();
/// Fills \p spec with preset \p name; \return empty, or an error listing valid names.
std::string NvLinkFindFabricPreset(const std::string& name, NvLinkFabricSpec& spec);
/// Empty, or why \p spec cannot connect \p gpus GPUs (port counts, zero links, ...).
std::string NvLinkValidateFabric(const NvLinkFabricSpec& spec, uint32_t gpus);

} // namespace ns3

#endif
