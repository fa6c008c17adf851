/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/flow-topology.h"

#include "ns3/abort.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-switch.h"
#include "ns3/data-rate.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/nvlink-net-device.h"
#include "ns3/nvlink-transport-plane.h"
#include "ns3/nvswitch-core.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowTopology");
NS_OBJECT_ENSURE_REGISTERED(FlowTopology);
NS_OBJECT_ENSURE_REGISTERED(PacketPlaneFlowTopology);
NS_OBJECT_ENSURE_REGISTERED(NvLinkFlowTopology);

namespace
{
// NvLinkFlowTopology's link keys: domain, kind, GPU id, switch plane or peer GPU id.
enum LinkKind : uint64_t
{
    GPU_TO_SWITCH = 0,
    SWITCH_TO_GPU = 1,
    GPU_TO_GPU = 2,
    NVLS_ENGINE = 3 // a switch plane's engine towards a GPU
};

uint64_t
DomainLinkKey(uint32_t domain, LinkKind kind, uint32_t gpu, uint32_t other)
{
    return uint64_t{domain} << 32 | uint64_t{kind} << 30 | uint64_t{gpu} << 15 | other;
}
} // namespace

TypeId
FlowTopology::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowTopology").SetParent<Object>().SetGroupName("AiFabric");
    return tid;
}

FlowTopology::~FlowTopology() = default;

void
FlowTopology::AddUse(Route& route, uint64_t link, double wire_byte_per_s, double share)
{
    auto same = std::find_if(route.uses.begin(), route.uses.end(), [link](const Use& u) {
        return u.link == link;
    });
    if (same != route.uses.end())
    {
        same->share += share;
    }
    else
    {
        route.uses.push_back({link, wire_byte_per_s, share});
    }
}

std::vector<FlowTopology::SwitchPlane>
FlowTopology::GetSwitchPlanes(uint32_t rank) const
{
    NS_ABORT_MSG("FlowTopology: rank " << rank << " has no NVLink switch planes here");
    return {};
}

TypeId
PacketPlaneFlowTopology::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PacketPlaneFlowTopology")
                            .SetParent<FlowTopology>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<PacketPlaneFlowTopology>();
    return tid;
}

PacketPlaneFlowTopology::PacketPlaneFlowTopology()
{
    NS_LOG_FUNCTION(this);
}

PacketPlaneFlowTopology::~PacketPlaneFlowTopology() = default;

void
PacketPlaneFlowTopology::SetPacketPlane(Ptr<TransportPlane> plane)
{
    NS_LOG_FUNCTION(this << plane);
    NS_ABORT_MSG_UNLESS(DynamicCast<NvLinkTransportPlane>(plane) ||
                            DynamicCast<InfinibandTransportPlane>(plane),
                        "FlowTopology: flows follow an NVLink or InfiniBand plane");
    m_packet = plane;
}

uint64_t
PacketPlaneFlowTopology::GetLinkKey(Ptr<CreditLinkNetDevice> device)
{
    return reinterpret_cast<uintptr_t>(PeekPointer(device));
}

double
PacketPlaneFlowTopology::GetWireRate_byte_per_s(Ptr<CreditLinkNetDevice> device)
{
    return device->GetDataRate().GetBitRate() * device->GetEncodingEfficiency() / 8.0;
}

void
PacketPlaneFlowTopology::Walk(Ptr<CreditLinkNetDevice> device,
                              uint32_t destination,
                              uint32_t dstNode,
                              double share,
                              bool first,
                              Route& route,
                              uint32_t depth) const
{
    NS_ABORT_MSG_IF(depth > MAX_HOPS,
                    "FlowTopology: route to " << destination << " loops at "
                                              << device->GetLinkName());
    const double wire = GetWireRate_byte_per_s(device);
    AddUse(route, GetLinkKey(device), wire, share);
    Ptr<CreditLinkNetDevice> peer = device->GetPeer();
    NS_ABORT_MSG_UNLESS(peer,
                        "FlowTopology: " << device->GetLinkName()
                                         << " has no peer in this process");
    Hop hop;
    if (first)
    {
        hop.wire_byte_per_s = wire;
        TimeValue delay;
        device->GetChannel()->GetAttribute("Delay", delay);
        hop.propagation = delay.Get();
    }
    Ptr<CreditSwitch> sw = peer->GetSwitch();
    if (!sw)
    {
        NS_ABORT_MSG_UNLESS(peer->GetNode()->GetId() == dstNode,
                            "FlowTopology: " << device->GetLinkName() << " ends at node "
                                             << peer->GetNode()->GetId()
                                             << ", not the destination's " << dstNode);
        if (first)
        {
            route.hops.push_back(hop);
        }
        return;
    }
    if (first)
    {
        TimeValue traversal;
        sw->GetAttribute("TraversalLatency", traversal);
        hop.traversal = traversal.Get();
        hop.cutThroughBytes = sw->GetCutThroughBytes();
        route.hops.push_back(hop);
    }
    const std::vector<uint32_t>& ports = sw->GetRoute(destination);
    NS_ABORT_MSG_IF(ports.empty(),
                    "FlowTopology: switch at node " << peer->GetNode()->GetId()
                                                    << " has no route to " << destination);
    // An adaptive group's least-loaded choice, in the fluid limit: an even split.
    for (std::size_t i = 0; i < ports.size(); ++i)
    {
        Walk(sw->GetPort(ports[i]),
             destination,
             dstNode,
             share / ports.size(),
             first && i == 0,
             route,
             depth + 1);
    }
}

FlowTopology::Route
PacketPlaneFlowTopology::GetRoute(uint32_t srcRank, uint32_t dstRank) const
{
    Route route;
    const uint32_t dstNode = static_cast<uint32_t>(m_packet->GetNodeId(dstRank));
    if (auto ib = DynamicCast<InfinibandTransportPlane>(m_packet))
    {
        NS_ABORT_MSG_UNLESS(ib->GetDevice(srcRank) && ib->GetDevice(dstRank),
                            "FlowTopology: rank " << (ib->GetDevice(srcRank) ? dstRank : srcRank)
                                                  << " has no HCA device to walk (a described "
                                                     "plane: its InfinibandFlowTopology routes)");
        Walk(ib->GetDevice(srcRank),
             ib->GetDevice(dstRank)->GetLid(),
             dstNode,
             1.0,
             true,
             route,
             0);
        return route;
    }
    // The GPU's spray: a direct bundle to the destination if it has one, else its switch
    // planes, each in proportion to its links (NvLinkGpu's smooth weighted round-robin).
    auto nv = DynamicCast<NvLinkTransportPlane>(m_packet);
    Ptr<NvLinkGpu> src = nv->GetGpu(srcRank);
    const uint32_t gpuId = nv->GetGpu(dstRank)->GetGpuId();
    std::vector<Ptr<NvLinkNetDevice>> direct;
    std::vector<Ptr<NvLinkNetDevice>> switched;
    for (uint32_t i = 0; i < src->GetNDevices(); ++i)
    {
        Ptr<NvLinkNetDevice> d = src->GetDevice(i);
        if (d->GetPeer() && d->GetPeer()->GetSwitch())
        {
            switched.push_back(d);
        }
        else if (d->GetPeer() && d->GetPeer()->GetNode()->GetId() == dstNode)
        {
            direct.push_back(d);
        }
    }
    const auto& spray = direct.empty() ? switched : direct;
    double links = 0;
    for (const auto& d : spray)
    {
        links += d->GetLinks();
    }
    for (std::size_t i = 0; i < spray.size(); ++i)
    {
        Walk(spray[i], gpuId, dstNode, spray[i]->GetLinks() / links, i == 0, route, 0);
    }
    return route;
}

uint64_t
PacketPlaneFlowTopology::GetSourceQueueBytes(uint32_t srcRank) const
{
    // What the rank's devices take before they refuse: the NVLink bundles' transmit queues
    // (one VC each), the HCA's message queue (packets while less than it waits per VL).
    UintegerValue q;
    if (auto ib = DynamicCast<InfinibandTransportPlane>(m_packet))
    {
        NS_ABORT_MSG_UNLESS(ib->GetDevice(srcRank),
                            "FlowTopology: rank " << srcRank << " has no HCA device");
        ib->GetDevice(srcRank)->GetAttribute("MessageQueueBytes", q);
        return q.Get();
    }
    uint64_t bytes = 0;
    Ptr<NvLinkGpu> gpu = DynamicCast<NvLinkTransportPlane>(m_packet)->GetGpu(srcRank);
    for (uint32_t i = 0; i < gpu->GetNDevices(); ++i)
    {
        gpu->GetDevice(i)->GetAttribute("TxQueueBytes", q);
        bytes += q.Get();
    }
    return bytes;
}

std::vector<FlowTopology::SwitchPlane>
PacketPlaneFlowTopology::GetSwitchPlanes(uint32_t rank) const
{
    auto nv = DynamicCast<NvLinkTransportPlane>(m_packet);
    NS_ABORT_MSG_UNLESS(nv, "FlowTopology: switch planes of a plane that is not NVLink");
    Ptr<NvLinkGpu> gpu = nv->GetGpu(rank);
    NS_ABORT_MSG_UNLESS(gpu, "FlowTopology: rank " << rank << " is not on the NVLink plane");
    const uint32_t gpuId = gpu->GetGpuId();
    std::vector<SwitchPlane> planes;
    for (uint32_t i = 0; i < gpu->GetNDevices(); ++i)
    {
        Ptr<NvLinkNetDevice> d = gpu->GetDevice(i);
        if (!d->GetPeer() || !d->GetPeer()->GetSwitch())
        {
            continue;
        }
        SwitchPlane p;
        p.up = {GetLinkKey(d), GetWireRate_byte_per_s(d), 0};
        p.upLinks = d->GetLinks();
        UintegerValue queue;
        d->GetAttribute("TxQueueBytes", queue);
        p.txQueueBytes = queue.Get();
        Ptr<CreditSwitch> sw = d->GetPeer()->GetSwitch();
        const std::vector<uint32_t>& ports = sw->GetRoute(gpuId);
        NS_ABORT_MSG_IF(ports.empty(),
                        "FlowTopology: switch at node " << sw->GetObject<Node>()->GetId()
                                                        << " has no route to GPU " << gpuId);
        for (uint32_t port : ports)
        {
            Ptr<CreditLinkNetDevice> dev = sw->GetPort(port);
            p.down.push_back({GetLinkKey(dev), GetWireRate_byte_per_s(dev), 0});
            Ptr<NvLinkNetDevice> link = DynamicCast<NvLinkNetDevice>(dev);
            p.downLinks += link ? link->GetLinks() : 1;
        }
        p.engineKey = uint64_t{sw->GetObject<Node>()->GetId()} << 32 | gpuId;
        Ptr<NvSwitch> nvswitch = DynamicCast<NvSwitch>(sw);
        NS_ABORT_MSG_UNLESS(nvswitch,
                            "FlowTopology: switch at node " << sw->GetObject<Node>()->GetId()
                                                            << " is not an NVSwitch");
        p.engineRatePerLink_bps = nvswitch->GetNvlsEngineRatePerLink().GetBitRate();
        p.engineLatency = nvswitch->GetNvlsEngineLatency();
        planes.push_back(p);
    }
    return planes;
}

void
PacketPlaneFlowTopology::DoDispose()
{
    m_packet = nullptr;
    FlowTopology::DoDispose();
}

NvLinkFlowDomain
NvLinkFlowDomain::FromFabric(const NvLinkFabricSpec& spec, std::vector<uint32_t> ranks)
{
    NvLinkFlowDomain d;
    const auto n = static_cast<uint32_t>(ranks.size());
    d.ranks = std::move(ranks);
    d.switches = spec.switches;
    d.linksPerPair = spec.linksPerPair;
    if (d.linksPerPair.empty())
    {
        d.linksPerPair.assign(n, spec.linksPerSwitch);
    }
    for (const auto& l : spec.directLinks)
    {
        d.directLinks.push_back({l.gpuA, l.gpuB, l.links});
    }
    // NvLinkNetDevice's rate: the generation's signalling per link, its line coding.
    const NvLinkGeneration& g = GetNvLinkGeneration(spec.generation);
    d.linkSignalling_bps = g.linkSignallingBps;
    d.encodingEfficiency =
        static_cast<double>(g.linkDataRateBps) / static_cast<double>(g.linkSignallingBps);
    return d;
}

uint64_t
NvLinkFlowDomain::GetSignalling_bps(uint32_t links) const
{
    return linkData_bps > 0
               ? static_cast<uint64_t>(std::llround(linkData_bps * links / encodingEfficiency))
               : linkSignalling_bps * links;
}

uint32_t
NvLinkFlowDomain::GetNSwitchBundles(uint32_t gpu) const
{
    uint32_t n = 0;
    for (uint32_t p = 0; p < switches; ++p)
    {
        n += linksPerPair[gpu][p] != 0;
    }
    return n;
}

std::vector<uint32_t>
NvLinkFlowDomain::GetBundleLinks(uint32_t gpu) const
{
    // NvLinkHelper::Install's order: switch planes, then the direct bundles.
    std::vector<uint32_t> links;
    for (uint32_t p = 0; p < switches; ++p)
    {
        if (linksPerPair[gpu][p] != 0)
        {
            links.push_back(linksPerPair[gpu][p]);
        }
    }
    for (const auto& l : directLinks)
    {
        if (l.gpuA == gpu || l.gpuB == gpu)
        {
            links.push_back(l.links);
        }
    }
    return links;
}

bool
NvLinkFlowDomain::HasPath(uint32_t a, uint32_t b) const
{
    for (const auto& l : directLinks)
    {
        if ((l.gpuA == a && l.gpuB == b) || (l.gpuA == b && l.gpuB == a))
        {
            return true;
        }
    }
    return GetNSwitchBundles(a) != 0;
}

TypeId
NvLinkFlowTopology::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NvLinkFlowTopology")
                            .SetParent<FlowTopology>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<NvLinkFlowTopology>();
    return tid;
}

NvLinkFlowTopology::NvLinkFlowTopology()
{
    NS_LOG_FUNCTION(this);
}

NvLinkFlowTopology::~NvLinkFlowTopology() = default;

void
NvLinkFlowTopology::AddDomain(const NvLinkFlowDomain& domain)
{
    NS_LOG_FUNCTION(this << domain.ranks.size() << domain.switches);
    NS_ABORT_MSG_UNLESS(domain.linksPerPair.size() == domain.ranks.size(),
                        "NvLinkFlowTopology: links of " << domain.linksPerPair.size()
                                                        << " GPUs for " << domain.ranks.size()
                                                        << " ranks");
    NS_ABORT_MSG_IF(domain.switches >= (1u << 15) || domain.ranks.size() >= (1u << 15),
                    "NvLinkFlowTopology: domain too large for its link keys");
    const auto index = static_cast<uint32_t>(m_domains.size());
    for (uint32_t g = 0; g < domain.ranks.size(); ++g)
    {
        NS_ABORT_MSG_UNLESS(domain.linksPerPair[g].size() == domain.switches,
                            "NvLinkFlowTopology: GPU " << g << " has bundles to "
                                                       << domain.linksPerPair[g].size() << " of "
                                                       << domain.switches << " switch planes");
        const uint32_t rank = domain.ranks[g];
        if (rank >= m_places.size())
        {
            m_places.resize(rank + 1);
            m_known.resize(rank + 1, false);
        }
        NS_ABORT_MSG_IF(m_known[rank], "NvLinkFlowTopology: rank " << rank << " in two domains");
        m_places[rank] = {index, g};
        m_known[rank] = true;
    }
    m_domains.push_back(domain);
}

uint32_t
NvLinkFlowTopology::GetNDomains() const
{
    return m_domains.size();
}

bool
NvLinkFlowTopology::HasRank(uint32_t rank) const
{
    return rank < m_known.size() && m_known[rank];
}

bool
NvLinkFlowTopology::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    return srcRank != dstRank && HasRank(srcRank) && HasRank(dstRank) &&
           GetPlace(srcRank).domain == GetPlace(dstRank).domain;
}

const NvLinkFlowTopology::Place&
NvLinkFlowTopology::GetPlace(uint32_t rank) const
{
    NS_ABORT_MSG_UNLESS(HasRank(rank), "NvLinkFlowTopology: rank " << rank << " has no NVLink");
    return m_places[rank];
}

double
NvLinkFlowTopology::Wire(const NvLinkFlowDomain& d, uint32_t links) const
{
    // As a bundle device: its signalling rate (an integer bit rate) times the line coding.
    return d.GetSignalling_bps(links) * d.encodingEfficiency / 8.0;
}

FlowTopology::Route
NvLinkFlowTopology::GetRoute(uint32_t srcRank, uint32_t dstRank) const
{
    const Place& s = GetPlace(srcRank);
    const Place& t = GetPlace(dstRank);
    NS_ABORT_MSG_UNLESS(s.domain == t.domain,
                        "NvLinkFlowTopology: ranks " << srcRank << " and " << dstRank
                                                     << " are in different NVLink domains");
    const NvLinkFlowDomain& d = m_domains[s.domain];
    Route route;
    Hop last; // at the destination: no switch
    last.propagation = d.propagation;
    // A direct bundle (or several) to the destination takes everything, in order.
    double direct = 0;
    for (const auto& l : d.directLinks)
    {
        if ((l.gpuA == s.gpu && l.gpuB == t.gpu) || (l.gpuB == s.gpu && l.gpuA == t.gpu))
        {
            direct += l.links;
        }
    }
    if (direct > 0)
    {
        bool first = true;
        for (const auto& l : d.directLinks)
        {
            if ((l.gpuA == s.gpu && l.gpuB == t.gpu) || (l.gpuB == s.gpu && l.gpuA == t.gpu))
            {
                const double wire = Wire(d, l.links);
                // Both directions of a direct pair share one key per (from, to, bundle).
                const auto bundle = static_cast<uint32_t>(&l - d.directLinks.data());
                AddUse(route,
                       DomainLinkKey(s.domain, GPU_TO_GPU, s.gpu, bundle),
                       wire,
                       l.links / direct);
                if (first)
                {
                    last.wire_byte_per_s = wire;
                    route.hops.push_back(last);
                    first = false;
                }
            }
        }
        return route;
    }
    double links = 0;
    for (uint32_t p = 0; p < d.switches; ++p)
    {
        links += d.linksPerPair[s.gpu][p];
    }
    bool first = true;
    for (uint32_t p = 0; p < d.switches; ++p)
    {
        const uint32_t up = d.linksPerPair[s.gpu][p];
        if (up == 0)
        {
            continue;
        }
        const uint32_t down = d.linksPerPair[t.gpu][p];
        NS_ABORT_MSG_IF(down == 0,
                        "NvLinkFlowTopology: switch plane " << p << " has no route to GPU "
                                                            << t.gpu);
        const double share = up / links;
        AddUse(route, DomainLinkKey(s.domain, GPU_TO_SWITCH, s.gpu, p), Wire(d, up), share);
        AddUse(route, DomainLinkKey(s.domain, SWITCH_TO_GPU, t.gpu, p), Wire(d, down), share);
        if (first)
        {
            Hop hop;
            hop.wire_byte_per_s = Wire(d, up);
            hop.propagation = d.propagation;
            hop.traversal = d.traversal;
            hop.cutThroughBytes = d.cutThroughBytes;
            route.hops.push_back(hop);
            last.wire_byte_per_s = Wire(d, down);
            route.hops.push_back(last);
            first = false;
        }
    }
    return route;
}

uint64_t
NvLinkFlowTopology::GetSourceQueueBytes(uint32_t srcRank) const
{
    const Place& s = GetPlace(srcRank);
    const NvLinkFlowDomain& d = m_domains[s.domain];
    return d.GetBundleLinks(s.gpu).size() * d.txQueueBytes;
}

std::vector<FlowTopology::SwitchPlane>
NvLinkFlowTopology::GetSwitchPlanes(uint32_t rank) const
{
    const Place& s = GetPlace(rank);
    const NvLinkFlowDomain& d = m_domains[s.domain];
    std::vector<SwitchPlane> planes;
    for (uint32_t p = 0; p < d.switches; ++p)
    {
        const uint32_t links = d.linksPerPair[s.gpu][p];
        if (links == 0)
        {
            continue;
        }
        // The switch plane routes to the GPU over its one bundle down.
        SwitchPlane plane;
        plane.up = {DomainLinkKey(s.domain, GPU_TO_SWITCH, s.gpu, p), Wire(d, links), 0};
        plane.upLinks = links;
        plane.txQueueBytes = d.txQueueBytes;
        plane.down.push_back({DomainLinkKey(s.domain, SWITCH_TO_GPU, s.gpu, p), Wire(d, links), 0});
        plane.downLinks = links;
        plane.engineKey = DomainLinkKey(s.domain, NVLS_ENGINE, s.gpu, p);
        plane.engineRatePerLink_bps = d.nvlsEngineRatePerLink_bps;
        plane.engineLatency = d.nvlsEngineLatency;
        planes.push_back(plane);
    }
    return planes;
}

} // namespace ns3
