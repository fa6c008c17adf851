/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "nvlink-helper.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/credit-link-channel.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/nstime.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/uinteger.h"

namespace ns3
{

NvLinkHelper::NvLinkHelper()
{
    m_deviceFactory.SetTypeId("ns3::NvLinkNetDevice");
    m_channelFactory.SetTypeId("ns3::CreditLinkChannel");
    m_switchFactory.SetTypeId("ns3::NvSwitch");
    m_gpuFactory.SetTypeId("ns3::NvLinkGpu");
    m_watchdogFactory.SetTypeId("ns3::CreditLinkWatchdog");
    // NVLink buffer sizes, flow control and latencies are not public [unconfirmed].
    // 1 MiB of receive buffer per VC covers the bandwidth-delay product of an 18-link
    // NVLink5 bundle (900 GB/s x ~1 us) and 16 bursts of 64 KiB; credits return at
    // most every 100 ns in a 16-byte header-only frame (real NVLink piggybacks them),
    // so flow control costs < 0.2% of the reverse wire at any granularity.
    m_deviceFactory.Set("ReceiveBufferBytes", UintegerValue(1 << 20));
    m_deviceFactory.Set("TxQueueBytes", UintegerValue(1 << 20));
    m_deviceFactory.Set("CreditUpdatePolicy",
                        EnumValue(CreditLinkNetDevice::CREDIT_UPDATE_PERIODIC));
    m_deviceFactory.Set("CreditUpdateInterval", TimeValue(NanoSeconds(100)));
    m_deviceFactory.Set("FlowControlFrameBytes", UintegerValue(16));
    // ~1 m of copper/board trace; NVSwitch port-to-port ~100 ns [unconfirmed].
    m_channelFactory.Set("Delay", TimeValue(NanoSeconds(5)));
    m_switchFactory.Set("TraversalLatency", TimeValue(NanoSeconds(100)));
    // A crossbar with per-output queues: FIFO inputs would cap an all-to-all by
    // head-of-line blocking, which NVSwitch's buffering avoids. Set here, not left to
    // CreditSwitch's default, so that a FIFO experiment on the network switches
    // (--ns3::CreditSwitch::VirtualOutputQueues=false) keeps NVSwitch as it is.
    m_switchFactory.Set("VirtualOutputQueues", BooleanValue(true));
    NvLinkFindFabricPreset("dgx-h100", m_spec);
}

void
NvLinkHelper::SetPreset(const std::string& name)
{
    NvLinkFabricSpec spec;
    const std::string error = NvLinkFindFabricPreset(name, spec);
    NS_ABORT_MSG_IF(!error.empty(), "NvLinkHelper: " << error);
    m_spec = spec;
}

void
NvLinkHelper::SetFabric(const NvLinkFabricSpec& spec)
{
    m_spec = spec;
}

const NvLinkFabricSpec&
NvLinkHelper::GetFabric() const
{
    return m_spec;
}

void
NvLinkHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
NvLinkHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

void
NvLinkHelper::SetSwitchAttribute(std::string name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

void
NvLinkHelper::SetGpuAttribute(std::string name, const AttributeValue& value)
{
    m_gpuFactory.Set(name, value);
}

void
NvLinkHelper::SetWatchdogAttribute(std::string name, const AttributeValue& value)
{
    NS_ABORT_MSG_IF(m_watchdog, "SetWatchdogAttribute after the watchdog was created");
    m_watchdogFactory.Set(name, value);
}

Ptr<CreditLinkWatchdog>
NvLinkHelper::GetWatchdog()
{
    if (!m_watchdog)
    {
        m_watchdog = m_watchdogFactory.Create<CreditLinkWatchdog>();
    }
    return m_watchdog;
}

uint32_t
NvLinkHelper::Links(uint32_t gpu, uint32_t sw) const
{
    return m_spec.linksPerPair.empty() ? m_spec.linksPerSwitch[sw] : m_spec.linksPerPair[gpu][sw];
}

Ptr<NvLinkNetDevice>
NvLinkHelper::NewDevice(Ptr<Node> node, uint32_t links)
{
    Ptr<NvLinkNetDevice> device = m_deviceFactory.Create<NvLinkNetDevice>();
    device->SetAttribute("Generation", UintegerValue(m_spec.generation));
    device->SetAttribute("Links", UintegerValue(links));
    node->AddDevice(device);
    GetWatchdog()->Watch(Ptr<CreditLinkNetDevice>(device));
    return device;
}

NetDeviceContainer
NvLinkHelper::Install(NodeContainer gpus)
{
    const std::string error = NvLinkValidateFabric(m_spec, gpus.GetN());
    NS_ABORT_MSG_IF(!error.empty(), "NvLinkHelper::Install: " << error);
    NS_ABORT_MSG_IF(!m_domain.gpus.empty(), "NvLinkHelper::Install called twice on one helper");
    const NvLinkGeneration& gen = GetNvLinkGeneration(m_spec.generation);
    const uint32_t n = gpus.GetN();

    // A domain never spans MPI processes: its switches live with its GPUs.
    m_switchNodes.Create(m_spec.switches, gpus.Get(0)->GetSystemId());
    for (uint32_t s = 0; s < m_spec.switches; ++s)
    {
        Ptr<NvSwitch> sw = m_switchFactory.Create<NvSwitch>();
        sw->SetAttribute("Generation", UintegerValue(gen.switchGeneration));
        m_switchNodes.Get(s)->AggregateObject(sw);
        GetWatchdog()->Watch(Ptr<CreditSwitch>(sw));
        m_domain.switches.push_back(sw);
    }
    for (uint32_t g = 0; g < n; ++g)
    {
        Ptr<NvLinkGpu> gpu = m_gpuFactory.Create<NvLinkGpu>();
        gpu->SetAttribute("GpuId", UintegerValue(g));
        gpus.Get(g)->AggregateObject(gpu);
        m_domain.gpus.push_back(gpu);
    }

    NetDeviceContainer result;
    m_gpuDevices.assign(n, std::vector<Ptr<NvLinkNetDevice>>(m_spec.switches));
    for (uint32_t g = 0; g < n; ++g)
    {
        for (uint32_t s = 0; s < m_spec.switches; ++s)
        {
            const uint32_t links = Links(g, s);
            if (links == 0)
            {
                continue;
            }
            Ptr<CreditLinkChannel> channel = m_channelFactory.Create<CreditLinkChannel>();
            Ptr<NvLinkNetDevice> gpuDevice = NewDevice(gpus.Get(g), links);
            Ptr<NvLinkNetDevice> switchDevice = NewDevice(m_switchNodes.Get(s), links);
            const uint32_t port = m_domain.switches[s]->AddPort(switchDevice);
            gpuDevice->Attach(channel);
            switchDevice->Attach(channel);
            m_domain.switches[s]->SetRoute(g, {port});
            m_domain.gpus[g]->AddDevice(gpuDevice, NvLinkGpu::NO_PEER);
            m_gpuDevices[g][s] = gpuDevice;
            result.Add(gpuDevice);
        }
    }
    for (const auto& d : m_spec.directLinks)
    {
        Ptr<CreditLinkChannel> channel = m_channelFactory.Create<CreditLinkChannel>();
        Ptr<NvLinkNetDevice> a = NewDevice(gpus.Get(d.gpuA), d.links);
        Ptr<NvLinkNetDevice> b = NewDevice(gpus.Get(d.gpuB), d.links);
        a->Attach(channel);
        b->Attach(channel);
        m_domain.gpus[d.gpuA]->AddDevice(a, d.gpuB);
        m_domain.gpus[d.gpuB]->AddDevice(b, d.gpuA);
        result.Add(a);
        result.Add(b);
    }
    return result;
}

const NvLinkDomain&
NvLinkHelper::GetDomain() const
{
    return m_domain;
}

Ptr<GpuTransport>
NvLinkHelper::InstallTransport() const
{
    NS_ABORT_MSG_IF(m_domain.gpus.empty(), "NvLinkHelper::InstallTransport before Install");
    std::vector<uint32_t> rankOfGpu(m_domain.gpus.size());
    for (uint32_t g = 0; g < rankOfGpu.size(); ++g)
    {
        rankOfGpu[g] = g;
    }
    Ptr<NvLinkTransportPlane> plane = CreateObject<NvLinkTransportPlane>();
    plane->AddDomain(m_domain, rankOfGpu);
    Ptr<GpuTransport> transport = CreateObject<GpuTransport>();
    transport->AddPlane(plane);
    return transport;
}

NvLinkFlowDomain
NvLinkHelper::DescribeFlowDomain(std::vector<uint32_t> ranks) const
{
    const std::string error = NvLinkValidateFabric(m_spec, ranks.size());
    NS_ABORT_MSG_IF(!error.empty(), "NvLinkHelper::DescribeFlowDomain: " << error);
    NvLinkFlowDomain d = NvLinkFlowDomain::FromFabric(m_spec, std::move(ranks));
    Ptr<NvLinkNetDevice> device = m_deviceFactory.Create<NvLinkNetDevice>();
    device->SetAttribute("Generation", UintegerValue(m_spec.generation));
    UintegerValue queue;
    device->GetAttribute("TxQueueBytes", queue);
    d.txQueueBytes = queue.Get();
    // What NvLinkTransportPlane::AddDomain and GetNvlsPlan read from the built devices.
    d.granularityBytes = device->GetGranularityBytes();
    d.maxBurstBytes = device->GetMaxBurstBytes();
    UintegerValue base;
    device->GetAttribute("OverheadBytes", base);
    d.packetOverheadBytes = device->RealPackets(d.granularityBytes) *
                            (device->GetHeaderBytes() + static_cast<uint32_t>(base.Get()));
    UintegerValue vc;
    m_gpuFactory.Create<NvLinkGpu>()->GetAttribute("Vc", vc);
    d.rxBufferBytes = device->GetReceiveBufferBytes(static_cast<uint32_t>(vc.Get()));
    TimeValue delay;
    m_channelFactory.Create<CreditLinkChannel>()->GetAttribute("Delay", delay);
    d.propagation = delay.Get();
    Ptr<NvSwitch> sw = m_switchFactory.Create<NvSwitch>();
    sw->SetAttribute("Generation",
                     UintegerValue(GetNvLinkGeneration(m_spec.generation).switchGeneration));
    TimeValue traversal;
    sw->GetAttribute("TraversalLatency", traversal);
    d.traversal = traversal.Get();
    d.cutThroughBytes = sw->GetCutThroughBytes();
    d.nvls = sw->SupportsNvls();
    d.nvlsEngineRatePerLink_bps = sw->GetNvlsEngineRatePerLink().GetBitRate();
    d.nvlsEngineLatency = sw->GetNvlsEngineLatency();
    return d;
}

NodeContainer
NvLinkHelper::GetSwitchNodes() const
{
    return m_switchNodes;
}

Ptr<NvSwitch>
NvLinkHelper::GetSwitch(uint32_t i) const
{
    return m_domain.switches.at(i);
}

uint32_t
NvLinkHelper::GetNSwitches() const
{
    return static_cast<uint32_t>(m_domain.switches.size());
}

Ptr<NvLinkGpu>
NvLinkHelper::GetGpu(uint32_t gpuId) const
{
    return m_domain.gpus.at(gpuId);
}

Ptr<NvLinkNetDevice>
NvLinkHelper::GetGpuDevice(uint32_t gpuId, uint32_t sw) const
{
    return m_gpuDevices.at(gpuId).at(sw);
}

void
NvLinkHelper::RegisterNvlsGroup(uint32_t groupId, const std::vector<uint32_t>& gpuIds)
{
    NS_ABORT_MSG_IF(m_domain.switches.empty(),
                    "NvLinkHelper::RegisterNvlsGroup: no switches installed");
    for (uint32_t id : gpuIds)
    {
        NS_ABORT_MSG_IF(id >= m_domain.gpus.size(),
                        "NvLinkHelper::RegisterNvlsGroup: GPU " << id << " is not installed");
    }
    for (const auto& sw : m_domain.switches)
    {
        sw->RegisterNvlsGroup(groupId, gpuIds);
    }
}

} // namespace ns3
