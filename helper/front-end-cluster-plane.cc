/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/front-end-cluster-plane.h"

#include "ns3/abort.h"
#include "ns3/arp-cache.h"
#include "ns3/arp-l3-protocol.h"
#include "ns3/bridge-helper.h"
#include "ns3/csma-helper.h"
#include "ns3/csma-net-device.h"
#include "ns3/data-rate.h"
#include "ns3/distributed-run.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/ipv4-interface.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4-static-routing.h"
#include "ns3/link-sampler.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/node-list.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/results-database.h"
#include "ns3/string.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FrontEndClusterPlane");

namespace
{

// Address plan: server s owns block s of 10.0.0.0/9, 2^bits addresses each
// (ClusterConfig::GetFrontEndServerBlockBits: a /22 up to 8,192 servers, beyond that the
// smallest block that holds the server's links); its CPU-ToR link (routed fabric; unused when
// bridged) is the first /30, PCIe link of local GPU i the (i+1)-th.  Switch-to-switch and
// storage links take /30s from 172.16.0.0/12.  Routes then follow the plan (one per server,
// not per link).
const Ipv4Mask kRackMask("255.255.252.0");
const Ipv4Mask kLinkMask("255.255.255.252");

Ipv4Address
ServerBlock(uint32_t server, uint32_t bits)
{
    return Ipv4Address(Ipv4Address("10.0.0.0").Get() + (server << bits));
}

Ipv4Mask
ServerMask(uint32_t bits)
{
    return Ipv4Mask(~((1u << bits) - 1));
}

// Bridged front-end: rack (ToR) t is one subnet 10.128.0.0 + t * 1024 (/22), the aggregation
// router's port first, then the CPUs; at most 4096 ToRs end below 10.192.0.0.
Ipv4Address
RackBlock(uint32_t tor)
{
    return Ipv4Address(Ipv4Address("10.128.0.0").Get() + (tor << 10));
}

Ipv4Address
Offset(Ipv4Address a, uint32_t n)
{
    return Ipv4Address(a.Get() + n);
}

} // namespace

ClusterPlane
FrontEndClusterPlane::GetPlane() const
{
    return ClusterPlane::ETHERNET;
}

ClusterPlaneReach
FrontEndClusterPlane::GetReach() const
{
    // Every GPU reaches every other one through its CPU.
    return ClusterPlaneReach::ANY_PAIR;
}

void
FrontEndClusterPlane::CreateNodes(const ClusterConfig& c, ClusterNodes& nodes)
{
    // Created right after the servers' GPUs and CPUs (node ids: storage, ToRs, aggregation
    // switches).  The front-end stays on process 0: ns-3's CSMA has no remote channel; PCIe
    // links to GPUs elsewhere become PointToPointRemoteChannels (PointToPointHelper does that).
    m_storage.Create(c.storageNodes);
    m_tors.Create(c.GetNTors());
    m_aggs.Create(c.ethAggSwitches);
    nodes.AddNameGroup("eth");
    for (uint32_t i = 0; i < c.storageNodes; ++i)
    {
        Names::Add("storage" + std::to_string(i), m_storage.Get(i));
    }
    for (uint32_t t = 0; t < m_tors.GetN(); ++t)
    {
        Names::Add("eth/tor" + std::to_string(t), m_tors.Get(t));
    }
    for (uint32_t a = 0; a < m_aggs.GetN(); ++a)
    {
        Names::Add("eth/agg" + std::to_string(a), m_aggs.Get(a));
    }
    m_nodes = NodeContainer(nodes.gpus, nodes.cpus, m_storage, m_tors, m_aggs);
}

std::string
FrontEndClusterPlane::Build(const ClusterConfig& c,
                            const ClusterLayout& /* layout */,
                            ClusterNodes& nodes)
{
    NS_LOG_FUNCTION(this << c.ethFabric << c.ethRouting);
    CreateNodes(c, nodes);
    m_staticRouting = c.ethRouting == "static";
    m_serverBits = c.GetFrontEndServerBlockBits();
    m_gpuAddress.assign(c.GetNRanks(), Ipv4Address());
    m_cpuAddress.assign(c.servers, Ipv4Address());
    m_storageAddress.assign(c.storageNodes, Ipv4Address());
    if (c.IsEthBridged())
    {
        BuildBridged(c, nodes);
    }
    else
    {
        BuildRouted(c, nodes);
    }
    if (!m_staticRouting)
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }
    return "";
}

void
FrontEndClusterPlane::BuildRouted(const ClusterConfig& c, ClusterNodes& nodes)
{
    InternetStackHelper internet;
    internet.Install(nodes.gpus);
    internet.Install(nodes.cpus);
    internet.Install(m_storage);
    internet.Install(m_tors);
    internet.Install(m_aggs);

    const uint32_t perTor = c.GetServersPerTor();
    const uint32_t aggs = c.ethAggSwitches;

    // [tor][agg] -> (ToR address, ToR interface, agg address, agg interface)
    struct Uplink
    {
        Ipv4Address torAddr;
        uint32_t torIf;
        Ipv4Address aggAddr;
        uint32_t aggIf;
    };

    std::vector<std::vector<Uplink>> uplink(m_tors.GetN(), std::vector<Uplink>(aggs));
    for (uint32_t t = 0; t < m_tors.GetN(); ++t)
    {
        for (uint32_t a = 0; a < aggs; ++a)
        {
            Uplink& u = uplink[t][a];
            auto [ta, aa] = Link(m_tors.Get(t),
                                 m_aggs.Get(a),
                                 c.GetTorUplinkRate_gbit_per_s(),
                                 c.ethDelay_ns,
                                 NextInfraNetwork(),
                                 u.torIf,
                                 u.aggIf);
            u.torAddr = ta;
            u.aggAddr = aa;
            ++m_ethLinks;
        }
    }
    for (uint32_t s = 0; s < c.servers; ++s)
    {
        Ptr<Node> cpu = nodes.cpus.Get(s);
        const uint32_t t = s / perTor;
        Ptr<Node> tor = m_tors.Get(t);
        uint32_t cpuIf;
        uint32_t torIf;
        // The server's ports as one link of ports x rate (a LAG); the per-GPU share is what
        // the 36 : 4 : 1 comparison uses.
        auto [cpuAddr, torAddr] = Link(cpu,
                                       tor,
                                       c.ethPortsPerServer * c.ethRate_gbit_per_s,
                                       c.ethDelay_ns,
                                       ServerBlock(s, m_serverBits),
                                       cpuIf,
                                       torIf);
        ++m_ethLinks;
        m_cpuAddress[s] = cpuAddr;
        AddDefaultRoute(cpu, torAddr, cpuIf);
        AddNetworkRoute(tor,
                        ServerBlock(s, m_serverBits),
                        ServerMask(m_serverBits),
                        cpuAddr,
                        torIf);
        for (uint32_t a = 0; a < aggs; ++a)
        {
            AddNetworkRoute(m_aggs.Get(a),
                            ServerBlock(s, m_serverBits),
                            ServerMask(m_serverBits),
                            uplink[t][a].torAddr,
                            uplink[t][a].aggIf);
        }
        LinkServerGpus(c, nodes, s);
    }
    // Server-to-server traffic across ToRs takes aggregation switch 0; storage i hangs off
    // aggregation switch i mod aggs and every ToR reaches it through that switch.
    for (uint32_t t = 0; t < m_tors.GetN(); ++t)
    {
        AddDefaultRoute(m_tors.Get(t), uplink[t][0].aggAddr, uplink[t][0].torIf);
    }
    for (uint32_t i = 0; i < c.storageNodes; ++i)
    {
        const uint32_t a = i % aggs;
        const Ipv4Address stAddr = LinkStorage(c, i, a);
        for (uint32_t t = 0; t < m_tors.GetN(); ++t)
        {
            AddNetworkRoute(m_tors.Get(t),
                            stAddr,
                            Ipv4Mask("255.255.255.255"),
                            uplink[t][a].aggAddr,
                            uplink[t][a].torIf);
        }
    }
}

void
FrontEndClusterPlane::BuildBridged(const ClusterConfig& c, ClusterNodes& nodes)
{
    // ToRs are L2 switches: no IP stack, only their BridgeNetDevice.
    InternetStackHelper internet;
    internet.Install(nodes.gpus);
    internet.Install(nodes.cpus);
    internet.Install(m_storage);
    internet.Install(m_aggs);

    const uint32_t perTor = c.GetServersPerTor();
    const uint32_t aggs = c.ethAggSwitches;
    const uint32_t tors = m_tors.GetN();

    // ns-3 has no spanning tree protocol: a BridgeNetDevice floods broadcasts and unknown
    // destinations on every port, so two uplinks from one ToR (to two aggregation routers,
    // which are both on the rack's subnet) would make a loop and more than one path for the
    // rack's frames.  Each ToR therefore has exactly one uplink, to aggregation router
    // t mod aggs, at the capacity of the routed ToR's uplinks together; redundancy is lost.
    // Traffic between racks of different aggregation routers and to storage on another
    // router crosses a full point-to-point mesh of the aggregation routers, each link at
    // the uplink capacity of one router's ToRs (non-blocking).
    struct Hop
    {
        Ipv4Address gateway;
        uint32_t interface {
            0
        };
    };

    std::vector<std::vector<Hop>> mesh(aggs, std::vector<Hop>(aggs));
    const double meshRate = ((tors + aggs - 1) / aggs) * c.GetTorUplinkTotal_gbit_per_s();
    for (uint32_t a = 0; a < aggs; ++a)
    {
        for (uint32_t b = a + 1; b < aggs; ++b)
        {
            uint32_t ifA;
            uint32_t ifB;
            auto [addrA, addrB] = Link(m_aggs.Get(a),
                                       m_aggs.Get(b),
                                       meshRate,
                                       c.ethDelay_ns,
                                       NextInfraNetwork(),
                                       ifA,
                                       ifB);
            mesh[a][b] = {addrB, ifA};
            mesh[b][a] = {addrA, ifB};
            ++m_ethLinks;
        }
    }
    // Every other aggregation router reaches what \p owner serves through the mesh.
    auto viaMesh = [&](uint32_t owner, Ipv4Address net, Ipv4Mask mask) {
        for (uint32_t b = 0; b < aggs; ++b)
        {
            if (b != owner)
            {
                AddNetworkRoute(m_aggs.Get(b),
                                net,
                                mask,
                                mesh[b][owner].gateway,
                                mesh[b][owner].interface);
            }
        }
    };

    for (uint32_t t = 0; t < tors; ++t)
    {
        Ptr<Node> tor = m_tors.Get(t);
        const uint32_t owner = t % aggs;
        Ptr<Node> agg = m_aggs.Get(owner);
        // The rack's subnet: aggregation router first (.1), then the CPUs.
        const Ipv4Address rackNet = RackBlock(t);
        Ipv4AddressHelper address;
        address.SetBase(rackNet, kRackMask);
        NetDeviceContainer ports;
        NetDeviceContainer up =
            CsmaSegment(tor, agg, c.GetTorUplinkTotal_gbit_per_s(), c.ethDelay_ns);
        ++m_ethLinks;
        ports.Add(up.Get(0));
        Ipv4InterfaceContainer aggIfc = address.Assign(NetDeviceContainer(up.Get(1)));
        const Ipv4Address aggAddr = aggIfc.GetAddress(0);
        const uint32_t aggIf = aggIfc.Get(0).second;
        viaMesh(owner, rackNet, kRackMask);
        for (uint32_t s = t * perTor; s < std::min(c.servers, (t + 1) * perTor); ++s)
        {
            Ptr<Node> cpu = nodes.cpus.Get(s);
            // The server's ports as one segment of ports x rate (as the routed LAG).
            NetDeviceContainer seg =
                CsmaSegment(cpu, tor, c.ethPortsPerServer * c.ethRate_gbit_per_s, c.ethDelay_ns);
            ++m_ethLinks;
            ports.Add(seg.Get(1));
            Ipv4InterfaceContainer cpuIfc = address.Assign(NetDeviceContainer(seg.Get(0)));
            m_cpuAddress[s] = cpuIfc.GetAddress(0);
            AddDefaultRoute(cpu, aggAddr, cpuIfc.Get(0).second);
            // The server's block holds its GPUs' PCIe links.
            AddNetworkRoute(agg,
                            ServerBlock(s, m_serverBits),
                            ServerMask(m_serverBits),
                            m_cpuAddress[s],
                            aggIf);
            viaMesh(owner, ServerBlock(s, m_serverBits), ServerMask(m_serverBits));
            LinkServerGpus(c, nodes, s);
        }
        BridgeHelper bridge;
        bridge.Install(tor, ports);
    }
    for (uint32_t i = 0; i < c.storageNodes; ++i)
    {
        const uint32_t a = i % aggs;
        const Ipv4Address stAddr = LinkStorage(c, i, a);
        viaMesh(a, stAddr, Ipv4Mask("255.255.255.255"));
    }
}

// GPU <-> CPU PCIe links of server \p s, addressed inside the server's block.
void
FrontEndClusterPlane::LinkServerGpus(const ClusterConfig& c, ClusterNodes& nodes, uint32_t s)
{
    Ptr<Node> cpu = nodes.cpus.Get(s);
    for (uint32_t i = 0; i < c.gpusPerServer; ++i)
    {
        const uint32_t rank = s * c.gpusPerServer + i;
        Ptr<Node> gpu = nodes.gpus.Get(rank);
        uint32_t cpuPcieIf;
        uint32_t gpuIf;
        auto [cpuPcie, gpuAddr] = Link(cpu,
                                       gpu,
                                       c.pcieRate_gbit_per_s,
                                       c.pcieDelay_ns,
                                       Offset(ServerBlock(s, m_serverBits), 4 * (i + 1)),
                                       cpuPcieIf,
                                       gpuIf);
        ++m_pcieLinks;
        m_gpuAddress[rank] = gpuAddr;
        AddDefaultRoute(gpu, cpuPcie, gpuIf);
    }
}

// With global routing the static tables stay empty (static routes would take precedence in
// the list routing) and GlobalRouteManager fills its own after the links exist.
void
FrontEndClusterPlane::AddDefaultRoute(Ptr<Node> node, Ipv4Address gateway, uint32_t interface) const
{
    if (m_staticRouting)
    {
        Ipv4StaticRoutingHelper()
            .GetStaticRouting(node->GetObject<Ipv4>())
            ->SetDefaultRoute(gateway, interface);
    }
}

void
FrontEndClusterPlane::AddNetworkRoute(Ptr<Node> node,
                                      Ipv4Address network,
                                      Ipv4Mask mask,
                                      Ipv4Address gateway,
                                      uint32_t interface) const
{
    if (m_staticRouting)
    {
        Ipv4StaticRoutingHelper()
            .GetStaticRouting(node->GetObject<Ipv4>())
            ->AddNetworkRouteTo(network, mask, gateway, interface);
    }
}

Ipv4Address
FrontEndClusterPlane::LinkStorage(const ClusterConfig& c, uint32_t storage, uint32_t agg)
{
    uint32_t stIf;
    uint32_t aggIf;
    auto [stAddr, aggAddr] = Link(m_storage.Get(storage),
                                  m_aggs.Get(agg),
                                  c.storageRate_gbit_per_s,
                                  c.ethDelay_ns,
                                  NextInfraNetwork(),
                                  stIf,
                                  aggIf);
    ++m_ethLinks;
    m_storageAddress[storage] = stAddr;
    AddDefaultRoute(m_storage.Get(storage), aggAddr, stIf);
    return stAddr;
}

Ipv4Address
FrontEndClusterPlane::NextInfraNetwork()
{
    return Ipv4Address(Ipv4Address("172.16.0.0").Get() + 4 * m_infraLinks++);
}

std::pair<Ipv4Address, Ipv4Address>
FrontEndClusterPlane::Link(Ptr<Node> a,
                           Ptr<Node> b,
                           double rate_gbit_per_s,
                           double delay_ns,
                           Ipv4Address network,
                           uint32_t& ifA,
                           uint32_t& ifB)
{
    const uint64_t rate_bps = static_cast<uint64_t>(rate_gbit_per_s * 1e9);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate_bps)));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(static_cast<int64_t>(delay_ns))));
    NetDeviceContainer devices = p2p.Install(a, b);
    const Ipv4Address addrA = Offset(network, 1);
    const Ipv4Address addrB = Offset(network, 2);
    ifA = AddLinkInterface(devices.Get(0), addrA);
    ifB = AddLinkInterface(devices.Get(1), addrB);
    TraceLink(devices, a, b, rate_gbit_per_s);
    return {addrA, addrB};
}

// What Ipv4AddressHelper::Assign does for one device (interface, address, metric 1, up, the
// default queue disc), without its registration in ns-3's global Ipv4AddressGenerator: that
// walks every range allocated so far (the /30s do not merge: their .0 and .3 stay free), so
// a front end of n links cost n^2 (half the build of 2,048 servers). The address plan gives
// every link its own /30 by construction.
uint32_t
FrontEndClusterPlane::AddLinkInterface(Ptr<NetDevice> device, Ipv4Address address)
{
    Ptr<Node> node = device->GetNode();
    Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
    NS_ABORT_MSG_UNLESS(ipv4, "front end: node " << node->GetId() << " has no IPv4 stack");
    int32_t interface = ipv4->GetInterfaceForDevice(device);
    if (interface == -1)
    {
        interface = static_cast<int32_t>(ipv4->AddInterface(device));
    }
    ipv4->AddAddress(interface, Ipv4InterfaceAddress(address, kLinkMask));
    ipv4->SetMetric(interface, 1);
    ipv4->SetUp(interface);
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
    if (tc && !tc->GetRootQueueDiscOnDevice(device))
    {
        if (Ptr<NetDeviceQueueInterface> ndqi = device->GetObject<NetDeviceQueueInterface>())
        {
            TrafficControlHelper::Default(ndqi->GetNTxQueues()).Install(device);
        }
    }
    return static_cast<uint32_t>(interface);
}

void
FrontEndClusterPlane::TraceLink(const NetDeviceContainer& devices,
                                Ptr<Node> a,
                                Ptr<Node> b,
                                double rate_gbit_per_s)
{
    const uint64_t rate_bps = static_cast<uint64_t>(rate_gbit_per_s * 1e9);
    for (uint32_t i = 0; i < 2; ++i)
    {
        m_directions.emplace_back();
        Direction* d = &m_directions.back();
        d->device = devices.Get(i);
        if (auto p2p = DynamicCast<PointToPointNetDevice>(d->device))
        {
            d->queue = p2p->GetQueue();
        }
        else
        {
            d->queue = DynamicCast<CsmaNetDevice>(d->device)->GetQueue();
        }
        d->srcNode = (i == 0 ? a : b)->GetId();
        d->dstNode = (i == 0 ? b : a)->GetId();
        d->rate_bps = rate_bps;
        // Both device types have these traces; CSMA fires PhyTxBegin once per frame that
        // gets the medium (not per backoff attempt).
        d->device->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&TxBegin, d));
        d->device->TraceConnectWithoutContext("MacTxDrop", MakeBoundCallback(&Drop, d));
        d->device->TraceConnectWithoutContext("PhyTxDrop", MakeBoundCallback(&Drop, d));
        d->queue->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&Enqueue, d));
    }
}

NetDeviceContainer
FrontEndClusterPlane::CsmaSegment(Ptr<Node> a, Ptr<Node> b, double rate_gbit_per_s, double delay_ns)
{
    CsmaHelper csma;
    csma.SetChannelAttribute("DataRate",
                             DataRateValue(DataRate(static_cast<uint64_t>(rate_gbit_per_s * 1e9))));
    csma.SetChannelAttribute("Delay", TimeValue(NanoSeconds(static_cast<int64_t>(delay_ns))));
    NodeContainer ends;
    ends.Add(a);
    ends.Add(b);
    NetDeviceContainer devices = csma.Install(ends);
    TraceLink(devices, a, b, rate_gbit_per_s);
    return devices;
}

void
FrontEndClusterPlane::TxBegin(Direction* d, Ptr<const Packet> p)
{
    d->txBytes += p->GetSize();
    d->txPackets++;
    d->busy_ns += p->GetSize() * 8ULL * 1000000000ULL / d->rate_bps;
}

void
FrontEndClusterPlane::Drop(Direction* d, Ptr<const Packet> /* p */)
{
    d->drops++;
}

void
FrontEndClusterPlane::Enqueue(Direction* d, Ptr<const Packet> /* p */)
{
    d->peakQueueBytes = std::max<uint64_t>(d->peakQueueBytes, d->queue->GetNBytes());
}

uint64_t
FrontEndClusterPlane::TxBytes(const Direction* d)
{
    return d->txBytes;
}

int64_t
FrontEndClusterPlane::AssignStreams(int64_t stream)
{
    NS_LOG_FUNCTION(this << stream);
    int64_t next = stream;
    for (const Direction& d : m_directions)
    {
        if (auto csma = DynamicCast<CsmaNetDevice>(d.device))
        {
            next += csma->AssignStreams(next);
        }
    }
    next += InternetStackHelper().AssignStreams(m_nodes, next);
    return next - stream;
}

Ptr<FrontEndTransport>
FrontEndClusterPlane::InstallTransport(const ClusterLayout& layout, const ClusterNodes& nodes) const
{
    NS_LOG_FUNCTION(this);
    // A running job's neighbour caches are warm: no ARP request jitter (ns-3's default
    // U(0, 10 ms) would delay the first transfer by up to 10 ms per IPv4 hop), and caches
    // that queue 4096 packets while resolving (default 3: the SYNs of many connections
    // opened at once would be dropped).
    for (const NodeContainer* group : {&nodes.gpus, &nodes.cpus, &m_storage, &m_aggs, &m_tors})
    {
        for (uint32_t i = 0; i < group->GetN(); ++i)
        {
            if (Ptr<ArpL3Protocol> arp = group->Get(i)->GetObject<ArpL3Protocol>())
            {
                arp->SetAttribute("RequestJitter",
                                  StringValue("ns3::ConstantRandomVariable[Constant=0.0]"));
            }
            Ptr<Ipv4L3Protocol> ip = group->Get(i)->GetObject<Ipv4L3Protocol>();
            for (uint32_t k = 0; ip && k < ip->GetNInterfaces(); ++k)
            {
                if (Ptr<ArpCache> cache = ip->GetInterface(k)->GetArpCache())
                {
                    cache->SetAttribute("PendingQueueSize", UintegerValue(4096));
                }
            }
        }
    }
    Ptr<FrontEndTransport> frontEnd = CreateObject<FrontEndTransport>();
    for (uint32_t r = 0; r < layout.GetNRanks(); ++r)
    {
        const uint32_t server = layout.GetServer(r);
        frontEnd->AddRank(r,
                          nodes.gpus.Get(r),
                          m_gpuAddress[r],
                          nodes.cpus.Get(server),
                          m_cpuAddress[server]);
    }
    for (uint32_t i = 0; i < m_storage.GetN(); ++i)
    {
        frontEnd->AddStorage(m_storage.Get(i), m_storageAddress[i]);
    }
    return frontEnd;
}

void
FrontEndClusterPlane::CountNodes(std::map<std::string, uint32_t>& counts) const
{
    counts["storage"] += m_storage.GetN();
    counts["eth-switch"] += m_tors.GetN() + m_aggs.GetN();
}

void
FrontEndClusterPlane::WriteNodes(Ptr<ResultsDatabase> db, const ClusterConfig& /* c */) const
{
    for (uint32_t i = 0; i < m_tors.GetN(); ++i)
    {
        WriteNodeRow(db, m_tors.Get(i), "eth-switch", -1, -1);
    }
    for (uint32_t i = 0; i < m_aggs.GetN(); ++i)
    {
        WriteNodeRow(db, m_aggs.Get(i), "eth-switch", -1, -1);
    }
    for (uint32_t i = 0; i < m_storage.GetN(); ++i)
    {
        WriteNodeRow(db, m_storage.Get(i), "storage", -1, -1);
    }
}

void
FrontEndClusterPlane::WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const
{
    for (const Direction& d : m_directions)
    {
        LinkRecord row;
        row.linkId = id++;
        // Each process writes the directions it transmits on (the same ids in every process).
        if (!DistributedRun::IsLocal(NodeList::GetNode(d.srcNode)))
        {
            continue;
        }
        row.plane = GetName();
        row.srcNode = d.srcNode;
        row.dstNode = d.dstNode;
        row.rateBitPerS = static_cast<int64_t>(d.rate_bps);
        row.txBytes = static_cast<int64_t>(d.txBytes);
        row.txPackets = static_cast<int64_t>(d.txPackets);
        row.busyNs = static_cast<int64_t>(d.busy_ns);
        row.creditStallNs = 0;
        row.peakQueueBytes = static_cast<int64_t>(d.peakQueueBytes);
        row.drops = static_cast<int64_t>(d.drops);
        db->AddLink(row);
    }
}

void
FrontEndClusterPlane::AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const
{
    for (const Direction& d : m_directions)
    {
        const int64_t linkId = id++;
        if (DistributedRun::IsLocal(NodeList::GetNode(d.srcNode)))
        {
            sampler->AddLink(linkId,
                             MakeBoundCallback(&TxBytes, &d),
                             GetName(),
                             static_cast<double>(d.rate_bps));
        }
    }
}

void
FrontEndClusterPlane::AddConservationNotes(CreditLinkConservationReport& report) const
{
    for (const Direction& d : m_directions)
    {
        if (d.drops != 0)
        {
            report.notes.push_back("ethernet n" + std::to_string(d.srcNode) + "->n" +
                                   std::to_string(d.dstNode) + ": " + std::to_string(d.drops) +
                                   " packets dropped (lossy front-end; TCP retransmits)");
        }
    }
}

std::string
FrontEndClusterPlane::DescribeLinks(const ClusterConfig& /* c */) const
{
    return "ethernet " + std::to_string(m_ethLinks) + "; pcie " + std::to_string(m_pcieLinks);
}

std::string
FrontEndClusterPlane::DescribeDetails(const ClusterConfig& c) const
{
    if (c.IsEthBridged())
    {
        return "front-end: bridged ToR (L2: CSMA port per server + BridgeNetDevice, one IPv4 "
               "subnet per rack, 1 uplink), IPv4 aggregation routers, " +
               c.ethRouting + " routing\n";
    }
    return "front-end: routed ToR (IPv4 router, point-to-point to every aggregation switch), "
           "IPv4 aggregation routers, " +
           c.ethRouting + " routing\n";
}

std::string
FrontEndClusterPlane::DescribePerGpu(const ClusterConfig& c) const
{
    std::ostringstream o;
    o << "  front-end   " << FormatGbitAsGbyte(GetPerGpu_gbit_per_s(c)) << "  ("
      << c.ethPortsPerServer << " x " << FormatDecimal(c.ethRate_gbit_per_s) << " GbE per server / "
      << c.gpusPerServer << " GPUs)\n";
    o << "  pcie        " << FormatGbitAsGbyte(c.pcieRate_gbit_per_s) << "  (GPU <-> CPU)\n";
    return o.str();
}

std::string
FrontEndClusterPlane::DescribeBisection(const ClusterConfig& c) const
{
    std::ostringstream o;
    o << "  ethernet    " << FormatGbitAsGbyte(GetBisection_gbit_per_s(c)) << "  (" << c.GetNTors();
    if (c.IsEthBridged())
    {
        o << " bridged ToR(s) x 1 uplink of " << FormatDecimal(c.GetTorUplinkTotal_gbit_per_s())
          << " Gb/s; " << c.ethAggSwitches << " aggregation routers, meshed)\n";
    }
    else
    {
        o << " routed ToR(s) x " << c.ethAggSwitches << " aggregation uplinks of "
          << FormatDecimal(c.GetTorUplinkRate_gbit_per_s()) << " Gb/s)\n";
    }
    return o.str();
}

double
FrontEndClusterPlane::GetBisection_gbit_per_s(const ClusterConfig& c) const
{
    const double servers = c.servers * c.ethPortsPerServer * c.ethRate_gbit_per_s;
    if (c.GetNTors() <= 1)
    {
        return servers / 2;
    }
    const double uplinks = c.GetNTors() * c.ethAggSwitches * c.GetTorUplinkRate_gbit_per_s();
    return std::min(servers, uplinks) / 2;
}

double
FrontEndClusterPlane::GetPerGpu_gbit_per_s(const ClusterConfig& c) const
{
    return c.GetEthPerGpu_gbit_per_s();
}

void
FrontEndClusterPlane::ScaleBandwidth(ClusterConfig& c, double factor) const
{
    c.ethRate_gbit_per_s *= factor;
    c.storageRate_gbit_per_s *= factor;
    c.ethUplinkRate_gbit_per_s *= factor;
}

Ipv4Address
FrontEndClusterPlane::GetGpuAddress(uint32_t rank) const
{
    NS_ABORT_MSG_UNLESS(rank < m_gpuAddress.size(), "cluster: no GPU address for rank " << rank);
    return m_gpuAddress[rank];
}

Ipv4Address
FrontEndClusterPlane::GetCpuAddress(uint32_t server) const
{
    NS_ABORT_MSG_UNLESS(server < m_cpuAddress.size(), "cluster: no server " << server);
    return m_cpuAddress[server];
}

Ipv4Address
FrontEndClusterPlane::GetStorageAddress(uint32_t i) const
{
    NS_ABORT_MSG_UNLESS(i < m_storageAddress.size(), "cluster: no storage node " << i);
    return m_storageAddress[i];
}

NodeContainer
FrontEndClusterPlane::GetStorageNodes() const
{
    return m_storage;
}

NodeContainer
FrontEndClusterPlane::GetSwitchNodes() const
{
    return NodeContainer(m_tors, m_aggs);
}

uint32_t
FrontEndClusterPlane::GetNPcieLinks() const
{
    return m_pcieLinks;
}

uint32_t
FrontEndClusterPlane::GetNEthernetLinks() const
{
    return m_ethLinks;
}

std::vector<FrontEndLinkStats>
FrontEndClusterPlane::GetLinkStats(const ClusterNodes& nodes) const
{
    std::set<int64_t> gpus;
    for (uint32_t i = 0; i < nodes.gpus.GetN(); ++i)
    {
        gpus.insert(nodes.gpus.Get(i)->GetId());
    }
    std::vector<FrontEndLinkStats> out;
    out.reserve(m_directions.size());
    for (const Direction& d : m_directions)
    {
        FrontEndLinkStats s;
        s.srcNode = d.srcNode;
        s.dstNode = d.dstNode;
        s.pcie = gpus.count(d.srcNode) || gpus.count(d.dstNode);
        s.rate_bps = d.rate_bps;
        s.txBytes = d.txBytes;
        s.busy_ns = d.busy_ns;
        s.drops = d.drops;
        out.push_back(s);
    }
    return out;
}

} // namespace ns3
