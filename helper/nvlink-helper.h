/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_HELPER_H
#define AI_FABRIC_NVLINK_HELPER_H

#include "ns3/credit-link-watchdog.h"
#include "ns3/flow-topology.h"
#include "ns3/gpu-transport.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/nvlink-domain.h"
#include "ns3/nvlink-fabric-preset.h"
#include "ns3/object-factory.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Builds an NVLink domain like PointToPointHelper builds links: one
 * NvLinkNetDevice pair per (GPU, switch) with links > 0 (and per direct
 * link), NvSwitch cores on new switch nodes with routes to every GPU, and an
 * NvLinkGpu aggregated to each GPU node.  All devices and switches are
 * watched by one CreditLinkWatchdog.
 */
class NvLinkHelper
{
  public:
    NvLinkHelper();

    /// NvLinkFindFabricPreset's \p name; aborts on an unknown name, listing the valid ones.
    void SetPreset(const std::string& name);
    void SetFabric(const NvLinkFabricSpec& spec);
    const NvLinkFabricSpec& GetFabric() const;

    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    void SetChannelAttribute(std::string name, const AttributeValue& value);
    void SetSwitchAttribute(std::string name, const AttributeValue& value);
    void SetGpuAttribute(std::string name, const AttributeValue& value);
    void SetWatchdogAttribute(std::string name, const AttributeValue& value);

    /// Builds the fabric for \p gpus (GPU id = index); aborts with NvLinkValidateFabric's message.
    /// \return the GPU-side devices, GPU by GPU, switch planes in order, then direct links.
    NetDeviceContainer Install(NodeContainer gpus);

    /// GPUs and switches Install built, as NvLinkTransportPlane::AddDomain takes them.
    const NvLinkDomain& GetDomain() const;
    /// Messages between the GPUs Install built: a GpuTransport over one
    /// NvLinkTransportPlane of this domain, rank = GPU id.  The transport segments,
    /// interleaves and completes messages; NvLinkGpu only carries their packets.  Keep
    /// the pointer for the run: the GPUs' packet hooks are the plane's while it lives.
    Ptr<GpuTransport> InstallTransport() const;
    NodeContainer GetSwitchNodes() const;
    Ptr<NvSwitch> GetSwitch(uint32_t i) const;
    uint32_t GetNSwitches() const;
    Ptr<NvLinkGpu> GetGpu(uint32_t gpuId) const;
    /// The GPU-side device towards switch \p sw, or null.
    Ptr<NvLinkNetDevice> GetGpuDevice(uint32_t gpuId, uint32_t sw) const;
    /// Registers an NVLS group on every switch (aborts on switches before gen3).
    void RegisterNvlsGroup(uint32_t groupId, const std::vector<uint32_t>& gpuIds);
    Ptr<CreditLinkWatchdog> GetWatchdog();
    /// The fabric as NvLinkFlowTopology reads it, for the GPUs of \p ranks (by GPU id): the
    /// rates, channel delay, switch traversal, cut-through header and transmit queue that
    /// Install would give its devices (from one device, channel and switch made by the same
    /// factories), without building any.
    NvLinkFlowDomain DescribeFlowDomain(std::vector<uint32_t> ranks) const;

  private:
    uint32_t Links(uint32_t gpu, uint32_t sw) const;
    Ptr<NvLinkNetDevice> NewDevice(Ptr<Node> node, uint32_t links);

    NvLinkFabricSpec m_spec;
    ObjectFactory m_deviceFactory;
    ObjectFactory m_channelFactory;
    ObjectFactory m_switchFactory;
    ObjectFactory m_gpuFactory;
    ObjectFactory m_watchdogFactory;
    Ptr<CreditLinkWatchdog> m_watchdog;
    NodeContainer m_switchNodes;
    NvLinkDomain m_domain;
    std::vector<std::vector<Ptr<NvLinkNetDevice>>> m_gpuDevices; //!< [gpu][switch]
};

} // namespace ns3

#endif
