/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_DOMAIN_H
#define AI_FABRIC_NVLINK_DOMAIN_H

#include "ns3/nvlink-gpu.h"
#include "ns3/nvswitch-core.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * One built NVLink domain as the layers above the devices see it (NvLinkHelper::Install
 * returns it from GetDomain): its GPUs by GPU id and its NVSwitch planes in order.  A
 * domain without switches (direct links only) has none.
 */
struct NvLinkDomain
{
    std::vector<Ptr<NvLinkGpu>> gpus;    //!< index = GpuId
    std::vector<Ptr<NvSwitch>> switches; //!< switch plane s = switches[s]
};

} // namespace ns3

#endif
