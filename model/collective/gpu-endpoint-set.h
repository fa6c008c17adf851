/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_GPU_ENDPOINT_SET_H
#define AI_FABRIC_GPU_ENDPOINT_SET_H

#include "ns3/nccl-endpoint.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * The endpoint figures of one GPU generation: what its SMs drive into NVLink, what its
 * NIC reaches through PCIe, and NCCL's per-generation tuner constants.  "ideal" has
 * none of them: the physics of the links alone, the simulator before the endpoint model.
 * Every figure names its source beside it (gpu-endpoint-set.cc, doc/fidelity.md).
 */
struct GpuEndpointSet
{
    std::string name{"ideal"};
    bool ideal{true};
    /// Payload GB/s one NVLink link carries when SMs drive it (NCCL topo.h SMxx_NVLINK_BW).
    double nvlinkPerLink_gbyte_per_s{0};
    /// GB/s of the GPU-NIC path, GPUDirect RDMA over PCIe (NCCL topo.cc PCI width x speed).
    double nicPath_gbyte_per_s{0};
    /// Ring/tree channels of a communicator inside one node or NVLink domain (NcclEndpoint
    /// MaxChannels); across several they follow the NICs (NcclEndpoint::GetMaxChannels).
    uint32_t maxChannels{24};
    /// NVLS channels of a communicator inside one node or NVLink domain, and of one that
    /// spans several (src/transport/nvls.cc: Blackwell 24 and 32 from NCCL 2.27, Hopper 16).
    uint32_t nvlsChannels{16};
    uint32_t nvlsChannelsAcrossNodes{16};
    double nvlsEfficiency{0.85};
    /// Per NVLS channel and loop, and once for the scatter and the gather stage: NCCL's
    /// NVLink Simple step latency (tuning.cc hwLatencies NVLINK Ring Simple, 3.4 us, one
    /// table for every generation); 0 in the ideal set.
    double nvlsStepLatency_us{0};
    /// tuning.cc: CollNetDirect x 0.85 from compute capability 9.0 on, else 1.
    double collNetEfficiency{0.85};
    double llMax_gbyte_per_s{0};      //!< NCCL llMaxBws, one node (GPU row)
    double llMaxNet_gbyte_per_s{0};   //!< NCCL llMaxBws, two nodes (x86 CPU row)
    double llMaxNetN4_gbyte_per_s{0}; //!< ... more than two nodes
    double ll128RingChannel_gbyte_per_s{0};
    /// NCCL perChMaxTreeLL128Bws / perChMaxTreeBws, one node (N1), two (N2), more (N4).
    double ll128TreeChannel_gbyte_per_s{0};
    double ll128TreeChannelN2_gbyte_per_s{0};
    double ll128TreeChannelN4_gbyte_per_s{0};
    double simpleTreeChannel_gbyte_per_s{0};
    double simpleTreeChannelN2_gbyte_per_s{0};
    double simpleTreeChannelN4_gbyte_per_s{0};
    double nvlsTreeChannel_gbyte_per_s{0};   //!< NCCL perChMaxNVLSTreeBws, two nodes (N2)
    double nvlsTreeChannelN4_gbyte_per_s{0}; //!< ... more nodes (N4)
};

/// "ideal", "a100", "h100", "b200".
std::vector<std::string> GpuEndpointSetNames();
/// False (out untouched) for an unknown name.
bool FindGpuEndpointSet(const std::string& name, GpuEndpointSet& out);
/// The NCCL endpoint of \p set; null for the ideal set.
Ptr<NcclEndpoint> MakeNcclEndpoint(const GpuEndpointSet& set);
/**
 * Gives \p endpoint's tuner the constants of NCCL release \p version ("2.26", "2.26.2")
 * where they differ from the release the defaults follow (2.29); what a step costs stays.
 * Returns "" or why the version is refused (not MAJOR.MINOR[.PATCH], or outside the
 * releases whose constants are modelled, 2.21 on).
 */
std::string ApplyNcclTunerVersion(const Ptr<NcclEndpoint>& endpoint, const std::string& version);

} // namespace ns3

#endif
