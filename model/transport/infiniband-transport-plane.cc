/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-transport-plane.h"

#include "ns3/abort.h"
#include "ns3/infiniband-headers.h"
#include "ns3/infiniband-sharp-tag.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/transport-packet-tag.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>
#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandTransportPlane");
NS_OBJECT_ENSURE_REGISTERED(InfinibandTransportPlane);

TypeId
InfinibandTransportPlane::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandTransportPlane")
            .SetParent<TransportPlane>()
            .SetGroupName("AiFabric")
            .AddConstructor<InfinibandTransportPlane>()
            .AddAttribute("ServiceLevel",
                          "SL of the plane's packets (the HCA's SL->VL table picks the VL)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&InfinibandTransportPlane::m_sl),
                          MakeUintegerChecker<uint8_t>(0, InfinibandNetDevice::NUM_SLS - 1))
            .AddAttribute("Qp",
                          "Destination QP of the plane's RC packets; the plane receives on it "
                          "at every HCA (not 0/1, the SMI/GSI QPs, nor an HCA's LocalQp)",
                          UintegerValue(0x4754),
                          MakeUintegerAccessor(&InfinibandTransportPlane::m_qp),
                          MakeUintegerChecker<uint32_t>(2, 0xffffff))
            .AddAttribute("SharpQp",
                          "QP the SHARP results come back on (in-network reduction)",
                          UintegerValue(0x5348),
                          MakeUintegerAccessor(&InfinibandTransportPlane::m_sharpQp),
                          MakeUintegerChecker<uint32_t>(2, 0xffffff))
            // NCCL's CollNet runs Simple: NCCL_STEPS (8) slots of its 4 MiB buffer per
            // channel (src/include/device.h, src/init.cc DEFAULT_BUFFSIZE), 512 KiB a step.
            .AddAttribute("SharpWindowBytes",
                          "Bytes a member may have sent to the switch and not yet got back "
                          "reduced",
                          UintegerValue(4 << 20),
                          MakeUintegerAccessor(&InfinibandTransportPlane::m_sharpWindowBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("SharpGroupBase",
                          "First SHARP group id the plane registers",
                          UintegerValue(0x53000000),
                          MakeUintegerAccessor(&InfinibandTransportPlane::m_sharpGroupBase),
                          MakeUintegerChecker<uint32_t>());
    return tid;
}

InfinibandTransportPlane::InfinibandTransportPlane()
    : m_sl(0),
      m_qp(0x4754),
      m_mtu(std::numeric_limits<uint32_t>::max()),
      m_burstPackets(std::numeric_limits<uint32_t>::max()),
      m_burstRoom(std::numeric_limits<uint64_t>::max()),
      m_sharpQp(0x5348),
      m_sharpWindowBytes(4 << 20),
      m_sharpGroupBase(0x53000000),
      m_nextSharpOp(0),
      m_nextSharpChunk(0)
{
    NS_LOG_FUNCTION(this);
}

void
InfinibandTransportPlane::NotifyConstructionCompleted()
{
    TransportPlane::NotifyConstructionCompleted();
    if (GetPlaneName() == "generic")
    {
        SetPlaneName("infiniband");
    }
}

void
InfinibandTransportPlane::AddRank(uint32_t rank, Ptr<InfinibandNetDevice> hca)
{
    NS_LOG_FUNCTION(this << rank << hca);
    NS_ABORT_MSG_IF(!hca, "InfinibandTransportPlane::AddRank: null HCA for rank " << rank);
    NS_ABORT_MSG_IF(HasRank(rank), "InfinibandTransportPlane: rank " << rank << " added twice");
    NS_ABORT_MSG_IF(hca->GetLid() == 0,
                    "InfinibandTransportPlane: HCA of rank " << rank << " has no LID");
    UintegerValue localQp;
    hca->GetAttribute("LocalQp", localQp);
    NS_ABORT_MSG_IF(localQp.Get() == m_qp,
                    "InfinibandTransportPlane: Qp " << m_qp << " is the HCA's LocalQp");
    if (m_ranks.size() <= rank)
    {
        m_ranks.resize(rank + 1);
    }
    // A burst must fit the HCA's transmit queue and its peer's receive buffer on every VL.
    UintegerValue queue;
    hca->GetAttribute("TxQueueBytes", queue);
    uint64_t room = queue.Get();
    for (uint32_t vl = 0; hca->GetPeer() && vl < hca->GetNumVcs(); ++vl)
    {
        room = std::min<uint64_t>(room, hca->GetPeer()->GetReceiveBufferBytes(vl));
    }
    AddPortLimits(hca->GetIbMtu(), hca->GetMaxBurstPackets(), room);
    DeviceRanks& shared = m_ranksOfDevice[PeekPointer(hca)]; // nodes: stable addresses
    std::vector<uint32_t>& ranks = shared.ranks;
    m_ranks[rank] = RankEntry{hca, hca->GetLid(), 0, &shared, static_cast<uint32_t>(ranks.size())};
    if (ranks.empty())
    {
        hca->SetPacketTxReadyCallback(
            m_qp,
            InfinibandNetDevice::PacketTxReadyCallback(
                [this, &shared](Ptr<InfinibandNetDevice>) { DeviceReady(shared); }));
        hca->SetPacketReceivedCallback(m_qp,
                                       MakeCallback(&InfinibandTransportPlane::Receive, this));
    }
    ranks.push_back(rank);
}

void
InfinibandTransportPlane::AddPortLimits(uint32_t ibMtu, uint32_t burstPackets, uint64_t room)
{
    m_mtu = std::min(m_mtu, ibMtu);
    m_burstPackets = std::min(m_burstPackets, burstPackets);
    const uint64_t headers = InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES +
                             InfinibandIcrc::SIZE_BYTES + InfinibandVcrc::SIZE_BYTES;
    m_burstRoom = std::min<uint64_t>(m_burstRoom, room > headers ? room - headers : 0);
}

void
InfinibandTransportPlane::AddDescribedRanks(const InfinibandFlowFabric& described)
{
    NS_LOG_FUNCTION(this << described.hcaNodes.size());
    NS_ABORT_MSG_UNLESS(described.subnetManager,
                        "InfinibandTransportPlane::AddDescribedRanks: no subnet manager");
    NS_ABORT_MSG_UNLESS(described.nodeIds.size() == described.hcaNodes.size(),
                        "InfinibandTransportPlane::AddDescribedRanks: "
                            << described.nodeIds.size() << " nodes for "
                            << described.hcaNodes.size() << " HCAs");
    NS_ABORT_MSG_IF(described.localQp == m_qp,
                    "InfinibandTransportPlane: Qp " << m_qp << " is the HCA's LocalQp");
    if (described.hcaNodes.empty())
    {
        return;
    }
    m_described.push_back(described);
    const InfinibandFlowFabric* d = &m_described.back();
    // As AddRank of an HCA whose peer is a switch port of the same parameters.
    AddPortLimits(d->ibMtu,
                  d->maxBurstPackets,
                  std::min<uint64_t>(d->txQueueBytes, d->rxBufferBytes));
    if (m_ranks.size() < d->hcaNodes.size())
    {
        m_ranks.resize(d->hcaNodes.size());
    }
    for (uint32_t rank = 0; rank < d->hcaNodes.size(); ++rank)
    {
        NS_ABORT_MSG_IF(HasRank(rank), "InfinibandTransportPlane: rank " << rank << " added twice");
        RankEntry& e = m_ranks[rank];
        e.lid = d->subnetManager->GetLid(d->hcaNodes[rank], 1);
        NS_ABORT_MSG_IF(e.lid == 0,
                        "InfinibandTransportPlane: HCA of rank " << rank << " has no LID");
        e.described = d;
        e.nodeId = d->nodeIds[rank];
    }
}

void
InfinibandTransportPlane::AddHosts(const InfinibandFabric& fabric,
                                   const std::vector<uint32_t>& rankOfHost)
{
    NS_ABORT_MSG_IF(rankOfHost.size() > fabric.hosts.GetN(),
                    "InfinibandTransportPlane::AddHosts: " << rankOfHost.size() << " ranks for "
                                                           << fabric.hosts.GetN() << " hosts");
    for (uint32_t h = 0; h < rankOfHost.size(); ++h)
    {
        Ptr<InfinibandNetDevice> hca = fabric.GetHostDevice(h);
        NS_ABORT_MSG_IF(h < fabric.hostLids.size() && hca->GetLid() != fabric.hostLids[h],
                        "InfinibandTransportPlane: host " << h << " LID mismatch");
        AddRank(rankOfHost[h], hca);
    }
}

Ptr<InfinibandNetDevice>
InfinibandTransportPlane::GetDevice(uint32_t rank) const
{
    return HasRank(rank) ? m_ranks[rank].device : nullptr;
}

void
InfinibandTransportPlane::SetRankSubnet(uint32_t rank, uint32_t subnet)
{
    NS_LOG_FUNCTION(this << rank << subnet);
    NS_ABORT_MSG_UNLESS(HasRank(rank), "InfinibandTransportPlane: no rank " << rank);
    m_ranks[rank].subnet = subnet;
}

uint32_t
InfinibandTransportPlane::GetRankSubnet(uint32_t rank) const
{
    NS_ABORT_MSG_UNLESS(HasRank(rank), "InfinibandTransportPlane: no rank " << rank);
    return m_ranks[rank].subnet;
}

bool
InfinibandTransportPlane::HasRank(uint32_t rank) const
{
    return rank < m_ranks.size() && (m_ranks[rank].device || m_ranks[rank].described);
}

bool
InfinibandTransportPlane::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    return srcRank != dstRank && HasRank(srcRank) && HasRank(dstRank) &&
           m_ranks[srcRank].subnet == m_ranks[dstRank].subnet;
}

uint32_t
InfinibandTransportPlane::GetMaxPayloadBytes() const
{
    NS_ABORT_MSG_IF(m_ranksOfDevice.empty() && m_described.empty(),
                    "InfinibandTransportPlane: no rank added");
    return m_mtu;
}

uint32_t
InfinibandTransportPlane::GetMaxBurstBytes() const
{
    const uint32_t mtu = GetMaxPayloadBytes();
    const uint64_t fits = std::max<uint64_t>(1, m_burstRoom / mtu);
    return mtu * static_cast<uint32_t>(std::min<uint64_t>(m_burstPackets, fits));
}

uint32_t
InfinibandTransportPlane::GetPacketOverheadBytes() const
{
    uint32_t framing = 0;
    if (!m_ranksOfDevice.empty())
    {
        UintegerValue v;
        m_ranks[m_ranksOfDevice.begin()->second.ranks.front()].device->GetAttribute("OverheadBytes",
                                                                                    v);
        framing = static_cast<uint32_t>(v.Get());
    }
    else if (!m_described.empty())
    {
        framing = m_described.front().framingBytes;
    }
    // A full packet (MTU, a multiple of 4) has no pad.
    return InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES + InfinibandIcrc::SIZE_BYTES +
           InfinibandVcrc::SIZE_BYTES + framing;
}

int64_t
InfinibandTransportPlane::GetNodeId(uint32_t rank) const
{
    if (!HasRank(rank))
    {
        return -1;
    }
    const RankEntry& e = m_ranks[rank];
    return e.device ? static_cast<int64_t>(e.device->GetNode()->GetId()) : e.nodeId;
}

bool
InfinibandTransportPlane::Inject(uint32_t srcRank,
                                 uint32_t dstRank,
                                 uint32_t payloadBytes,
                                 const TransportTag& tag)
{
    Ptr<Packet> p = Create<Packet>(payloadBytes);
    AddTransportTags(p, srcRank, dstRank, tag);
    const RankEntry& src = m_ranks[srcRank];
    NS_ABORT_MSG_UNLESS(src.device,
                        "InfinibandTransportPlane: rank "
                            << srcRank
                            << " has no HCA device (a flow-level plane built from its "
                               "description): its messages run as flows (FlowTransportPlane), "
                               "not as packets");
    if (!src.device->SendPacket(p, m_ranks[dstRank].lid, m_sl, m_qp))
    {
        NS_LOG_LOGIC("rank " << srcRank << ": HCA refused the packet to rank " << dstRank);
        return false;
    }
    // Ranks sharing the HCA: the next wake-up starts after the one that got in.
    src.shared->next = src.slot + 1 == src.shared->ranks.size() ? 0 : src.slot + 1;
    return true;
}

void
InfinibandTransportPlane::DeviceReady(const DeviceRanks& d)
{
    // The first woken rank takes the room, so start after the last one that got in.
    const auto n = static_cast<uint32_t>(d.ranks.size());
    const uint32_t first = d.next;
    NS_LOG_LOGIC(n << " ranks of the HCA ready, from rank " << d.ranks[first]);
    for (uint32_t i = 0; i < n; ++i)
    {
        NotifyTxReady(d.ranks[(first + i) % n]);
    }
}

void
InfinibandTransportPlane::Receive(uint16_t slid, Ptr<Packet> packet)
{
    TransportPacketTag t;
    const bool found = PeekTransportTags(packet, t);
    NS_ABORT_MSG_IF(!found, "InfinibandTransportPlane: packet without TransportPacketTag");
    NS_ASSERT_MSG(HasRank(t.srcRank) && m_ranks[t.srcRank].lid == slid,
                  "rank " << t.srcRank << " does not have LID " << slid);
    NotifyDelivered(t.srcRank, t.dstRank, packet->GetSize(), t.tag);
}

void
InfinibandTransportPlane::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& r : m_ranks)
    {
        if (r.device)
        {
            r.device->SetPacketTxReadyCallback(m_qp, InfinibandNetDevice::PacketTxReadyCallback());
            r.device->SetPacketReceivedCallback(m_qp,
                                                InfinibandNetDevice::PacketReceivedCallback());
            r.device->SetPacketTxReadyCallback(m_sharpQp,
                                               InfinibandNetDevice::PacketTxReadyCallback());
            r.device->SetPacketReceivedCallback(m_sharpQp,
                                                InfinibandNetDevice::PacketReceivedCallback());
        }
    }
    m_sharpOps.clear();
    m_sharpOpOfChunk.clear();
    m_sharpMembers.clear();
    m_sharpGroups.clear();
    m_ranks.clear();
    m_ranksOfDevice.clear();
    m_described.clear();
    TransportPlane::DoDispose();
}

double
InfinibandTransportPlane::GetLineRate_gbyte_per_s(uint32_t rank) const
{
    if (!HasRank(rank))
    {
        return 0;
    }
    const RankEntry& e = m_ranks[rank];
    const uint64_t signalling_bps =
        e.device ? e.device->GetDataRate().GetBitRate() : e.described->signalling_bps;
    const double efficiency =
        e.device ? e.device->GetEncodingEfficiency() : e.described->encodingEfficiency;
    const double payload = GetMaxPayloadBytes();
    const double share = payload / (payload + GetPacketOverheadBytes());
    return signalling_bps * efficiency * share / 8e9;
}

Ptr<InfinibandSwitch>
InfinibandTransportPlane::SharpSwitch(uint32_t rank) const
{
    // A described rank has no switch device to reduce in.
    if (!HasRank(rank) || !m_ranks[rank].device || !m_ranks[rank].device->GetPeer())
    {
        return nullptr;
    }
    Ptr<InfinibandSwitch> sw =
        DynamicCast<InfinibandSwitch>(m_ranks[rank].device->GetPeer()->GetSwitch());
    return sw && sw->SupportsSharp() ? sw : nullptr;
}

Ptr<InfinibandSwitch>
InfinibandTransportPlane::SharpRoot(const std::vector<uint32_t>& ranks) const
{
    if (ranks.size() < 2)
    {
        return nullptr;
    }
    std::set<const InfinibandNetDevice*> hcas;
    std::vector<Ptr<InfinibandSwitch>> leaves;
    for (uint32_t r : ranks)
    {
        Ptr<InfinibandSwitch> sw = SharpSwitch(r);
        // Each member's own HCA (the switch tells members by LID).
        if (!sw || m_ranks[r].shared->ranks.size() != 1 ||
            !hcas.insert(PeekPointer(m_ranks[r].device)).second)
        {
            return nullptr;
        }
        if (std::find(leaves.begin(), leaves.end(), sw) == leaves.end())
        {
            leaves.push_back(sw);
        }
    }
    if (leaves.size() == 1)
    {
        return leaves.front(); // single level: the members' switch
    }
    // Two levels: a SHARP switch cabled to every leaf (a spine of a two-tier fat tree).
    auto neighbours = [](Ptr<InfinibandSwitch> sw) {
        std::set<Ptr<InfinibandSwitch>> out;
        for (uint32_t i = 0; i < sw->GetNPorts(); ++i)
        {
            Ptr<CreditLinkNetDevice> peer = sw->GetPort(i)->GetPeer();
            Ptr<InfinibandSwitch> n =
                peer ? DynamicCast<InfinibandSwitch>(peer->GetSwitch()) : nullptr;
            if (n && n->SupportsSharp())
            {
                out.insert(n);
            }
        }
        return out;
    };
    std::set<Ptr<InfinibandSwitch>> common = neighbours(leaves.front());
    for (std::size_t i = 1; i < leaves.size() && !common.empty(); ++i)
    {
        const std::set<Ptr<InfinibandSwitch>> n = neighbours(leaves[i]);
        std::set<Ptr<InfinibandSwitch>> both;
        for (const auto& sw : common)
        {
            if (n.count(sw))
            {
                both.insert(sw);
            }
        }
        common = std::move(both);
    }
    if (common.empty())
    {
        return nullptr;
    }
    // The one with the lowest LID: every operation on these members takes the same root.
    Ptr<InfinibandSwitch> root = *common.begin();
    for (const auto& sw : common)
    {
        root = sw->GetLid() < root->GetLid() ? sw : root;
    }
    return root;
}

bool
InfinibandTransportPlane::CanReduceInSwitch(const std::vector<uint32_t>& ranks) const
{
    return SharpRoot(ranks) != nullptr;
}

uint32_t
InfinibandTransportPlane::SharpGroup(const std::vector<uint32_t>& ranks)
{
    // LIDs repeat across subnets: the key leads with the members' subnet.
    std::vector<uint32_t> lids;
    for (uint32_t r : ranks)
    {
        lids.push_back(m_ranks[r].lid);
    }
    std::sort(lids.begin(), lids.end());
    lids.insert(lids.begin(), ranks.empty() ? 0 : m_ranks[ranks.front()].subnet);
    auto it = m_sharpGroups.find(lids);
    if (it != m_sharpGroups.end())
    {
        return it->second;
    }
    const uint32_t group = m_sharpGroupBase + static_cast<uint32_t>(m_sharpGroups.size());
    Ptr<InfinibandSwitch> root = SharpRoot(ranks);
    // Each leaf aggregates its members; with several leaves, each goes up to the root.
    std::map<Ptr<InfinibandSwitch>, std::vector<uint32_t>> membersOf;
    for (uint32_t r : ranks)
    {
        membersOf[SharpSwitch(r)].push_back(m_ranks[r].lid);
    }
    std::vector<uint32_t> leafLids;
    for (auto& [leaf, members] : membersOf)
    {
        std::sort(members.begin(), members.end());
        leaf->RegisterSharpGroup(group, members, leaf == root ? 0 : root->GetLid());
        leafLids.push_back(leaf->GetLid());
    }
    if (!membersOf.count(root))
    {
        std::sort(leafLids.begin(), leafLids.end());
        root->RegisterSharpGroup(group, leafLids, 0);
    }
    m_sharpGroups.emplace(lids, group);
    return group;
}

void
InfinibandTransportPlane::StartInSwitch(Op op,
                                        const std::vector<uint32_t>& ranks,
                                        uint64_t bytes,
                                        Callback<void, uint32_t> rankDone)
{
    NS_LOG_FUNCTION(this << ranks.size() << bytes);
    NS_ABORT_MSG_IF(op != Op::AllReduce,
                    "InfinibandTransportPlane: SHARP runs allreduce only in this model");
    NS_ABORT_MSG_IF(!CanReduceInSwitch(ranks),
                    "InfinibandTransportPlane: no SHARP switch reduces these " << ranks.size()
                                                                               << " ranks");
    const uint64_t id = m_nextSharpOp++;
    SharpOp& o = m_sharpOps[id];
    o.group = SharpGroup(ranks);
    o.ranks = ranks;
    o.bytes = bytes;
    o.packetBytes = AdaptivePacketBytes(bytes, GetMaxPayloadBytes(), GetMaxBurstBytes(), 32);
    o.sent.assign(ranks.size(), 0);
    o.arrived.assign(ranks.size(), 0);
    o.rankDone = rankDone;
    const uint64_t packets = bytes == 0 ? 0 : (bytes + o.packetBytes - 1) / o.packetBytes;
    o.firstChunk = m_nextSharpChunk;
    m_nextSharpChunk += static_cast<uint32_t>(packets);
    if (bytes == 0)
    {
        // Nothing to reduce: every member is done, after this call.
        Simulator::ScheduleNow([this, id]() {
            SharpOp done = std::move(m_sharpOps.at(id));
            m_sharpOps.erase(id);
            for (uint32_t r : done.ranks)
            {
                done.rankDone(r);
            }
        });
        return;
    }
    m_sharpOpOfChunk[o.firstChunk] = id;
    for (uint32_t r : ranks)
    {
        SharpMember& m = m_sharpMembers[r];
        if (!m.hooked)
        {
            m.hooked = true;
            Ptr<InfinibandNetDevice> hca = m_ranks[r].device;
            hca->SetPacketTxReadyCallback(
                m_sharpQp,
                InfinibandNetDevice::PacketTxReadyCallback(
                    [this, r](Ptr<InfinibandNetDevice>) { SharpPump(r); }));
            hca->SetPacketReceivedCallback(
                m_sharpQp,
                InfinibandNetDevice::PacketReceivedCallback(
                    [this, r](uint16_t, Ptr<Packet> p) { SharpReceive(r, p); }));
        }
        m.ops.push_back(id);
        SharpPump(r);
    }
}

void
InfinibandTransportPlane::SharpPump(uint32_t rank)
{
    SharpMember& m = m_sharpMembers[rank];
    const RankEntry& entry = m_ranks[rank];
    const uint16_t switchLid = SharpSwitch(rank)->GetLid();
    while (!m.ops.empty())
    {
        SharpOp& o = m_sharpOps.at(m.ops.front());
        const auto member = std::find(o.ranks.begin(), o.ranks.end(), rank) - o.ranks.begin();
        uint64_t& sent = o.sent[member];
        if (sent >= o.bytes)
        {
            m.ops.pop_front();
            continue;
        }
        const uint64_t n = std::min<uint64_t>(o.packetBytes, o.bytes - sent);
        if (m.inFlight + n > m_sharpWindowBytes && m.inFlight > 0)
        {
            return; // the window reopens as results come back
        }
        Ptr<Packet> p = Create<Packet>(static_cast<uint32_t>(n));
        InfinibandSharpTag tag;
        tag.group = o.group;
        tag.chunk = o.firstChunk + static_cast<uint32_t>(sent / o.packetBytes);
        tag.resultQp = m_sharpQp;
        p->AddPacketTag(tag);
        if (!entry.device->SendPacket(p, switchLid, m_sl, m_sharpQp))
        {
            return; // its PacketTxReady pumps again
        }
        sent += n;
        m.inFlight += n;
    }
}

void
InfinibandTransportPlane::SharpReceive(uint32_t rank, Ptr<Packet> packet)
{
    InfinibandSharpTag tag;
    const bool found = packet->PeekPacketTag(tag);
    NS_ABORT_MSG_IF(!found, "InfinibandTransportPlane: SHARP result without its tag");
    auto it = m_sharpOpOfChunk.upper_bound(tag.chunk);
    NS_ABORT_MSG_IF(it == m_sharpOpOfChunk.begin(),
                    "InfinibandTransportPlane: SHARP result of unknown chunk " << tag.chunk);
    const uint64_t id = std::prev(it)->second;
    SharpOp& o = m_sharpOps.at(id);
    const auto member = std::find(o.ranks.begin(), o.ranks.end(), rank) - o.ranks.begin();
    NS_ABORT_MSG_IF(member == static_cast<std::ptrdiff_t>(o.ranks.size()),
                    "InfinibandTransportPlane: SHARP result for rank " << rank << ", not a member");
    const uint32_t size = packet->GetSize();
    o.arrived[member] += size;
    m_sharpMembers[rank].inFlight -= size;
    if (o.arrived[member] == o.bytes)
    {
        const Callback<void, uint32_t> done = o.rankDone;
        if (++o.membersDone == o.ranks.size())
        {
            m_sharpOpOfChunk.erase(o.firstChunk);
            m_sharpOps.erase(id);
        }
        done(rank);
    }
    SharpPump(rank);
}

uint32_t
InfinibandTransportPlane::GetSharpInFlight() const
{
    return static_cast<uint32_t>(m_sharpOps.size());
}

} // namespace ns3
