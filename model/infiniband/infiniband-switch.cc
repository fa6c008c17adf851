/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-switch.h"

#include "ns3/boolean.h"
#include "ns3/infiniband-crc.h"
#include "ns3/infiniband-headers.h"
#include "ns3/infiniband-link-preset.h"
#include "ns3/infiniband-sharp-tag.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandSwitch");
NS_OBJECT_ENSURE_REGISTERED(InfinibandSwitch);

TypeId
InfinibandSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandSwitch")
            .SetParent<CreditSwitch>()
            .SetGroupName("AiFabric")
            .AddConstructor<InfinibandSwitch>()
            .AddAttribute("Lid",
                          "LID of the switch (port 0)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&InfinibandSwitch::m_lid),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("AdaptiveRouting",
                          "Route over the subnet manager's AR group (least bytes waiting) "
                          "instead of the single LFT port",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSwitch::m_adaptive),
                          MakeBooleanChecker())
            .AddAttribute("PortToPortLatency",
                          "Switch traversal latency after the LRH is in (cut-through) or "
                          "after full arrival (Forwarding=StoreAndForward); drives "
                          "CreditSwitch::TraversalLatency.  Default 130 ns: NVIDIA claims "
                          "~130-150 ns for NDR Quantum-2 [unconfirmed]",
                          TimeValue(NanoSeconds(130)),
                          MakeTimeAccessor(&InfinibandSwitch::SetPortToPortLatency,
                                           &InfinibandSwitch::GetPortToPortLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("SlToVl",
                          "Default SL->VL table of every (in, out) port pair: 16 "
                          "comma-separated VLs; empty = SL modulo the output's DataVls",
                          StringValue(""),
                          MakeStringAccessor(&InfinibandSwitch::SetDefaultSlToVl,
                                             &InfinibandSwitch::GetDefaultSlToVl),
                          MakeStringChecker())
            .AddAttribute("CcEnabled",
                          "Mark BTH.FECN when the output port is congested (IBA Annex A10)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSwitch::m_ccEnabled),
                          MakeBooleanChecker())
            .AddAttribute("CcThresholdBytes",
                          "Bytes waiting for an output port above which packets are marked",
                          UintegerValue(32768),
                          MakeUintegerAccessor(&InfinibandSwitch::m_ccThresholdBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("CcMarkingRate",
                          "Mark one in this many packets above the threshold (Marking_Rate+1)",
                          UintegerValue(1),
                          MakeUintegerAccessor(&InfinibandSwitch::m_ccMarkingRate),
                          MakeUintegerChecker<uint32_t>(1))
            // NVIDIA Quantum-2 (QM9700: 64 x NDR 400 Gb/s, 51.2 Tb/s) carries SHARPv3; off by
            // default, as on fabrics whose switches or subnet manager do not run SHARP.
            .AddAttribute("SharpEnabled",
                          "The switch is a SHARP aggregation node: it reduces the contributions "
                          "of the groups registered on it (NVIDIA Quantum-2 class, SHARPv3)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandSwitch::m_sharp),
                          MakeBooleanChecker())
            // SHARPv2 (Quantum HDR) introduced streaming aggregation at the port's wire
            // speed; SHARPv3 keeps it for several trees at once (SHARP 3.x documentation):
            // by default only the link limits the result stream.
            .AddAttribute("SharpEngineRatePerPort",
                          "Payload rate at which the aggregation engine delivers results "
                          "towards each member port; 0 = unlimited (streaming aggregation at "
                          "the wire's rate)",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&InfinibandSwitch::m_sharpEngineRatePerPort),
                          MakeDataRateChecker())
            // No public per-switch figure: the port-to-port latency (TraversalLatency) still
            // applies to every result, as to any packet.
            .AddAttribute("SharpEngineLatency",
                          "Time from a chunk's last contribution being in to its results "
                          "leaving the aggregation engine",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&InfinibandSwitch::m_sharpEngineLatency),
                          MakeTimeChecker(Time(0)));
    return tid;
}

InfinibandSwitch::InfinibandSwitch()
    : m_lid(0),
      m_adaptive(false),
      m_latency(NanoSeconds(130)),
      m_constructed(false),
      m_ccEnabled(false),
      m_ccThresholdBytes(32768),
      m_ccMarkingRate(1),
      m_fecnMarked(0),
      m_sharp(false),
      m_sharpEngineRatePerPort(DataRate(0)),
      m_sharpEngineLatency(Time(0)),
      m_sharpAbsorbed(0)
{
}

void
InfinibandSwitch::NotifyConstructionCompleted()
{
    NS_LOG_FUNCTION(this);
    CreditSwitch::NotifyConstructionCompleted();
    m_constructed = true;
    SetAttribute("TraversalLatency", TimeValue(m_latency));
}

void
InfinibandSwitch::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_slToVl.clear();
    m_sharpEngine.Clear();
    m_sharpParent.clear();
    CreditSwitch::DoDispose();
}

void
InfinibandSwitch::SetPortToPortLatency(Time latency)
{
    NS_LOG_FUNCTION(this << latency);
    m_latency = latency;
    if (m_constructed)
    {
        SetAttribute("TraversalLatency", TimeValue(m_latency));
    }
}

Time
InfinibandSwitch::GetPortToPortLatency() const
{
    return m_latency;
}

void
InfinibandSwitch::SetLid(uint16_t lid)
{
    NS_LOG_FUNCTION(this << lid);
    m_lid = lid;
}

uint16_t
InfinibandSwitch::GetLid() const
{
    return m_lid;
}

uint32_t
InfinibandSwitch::AddIbPort(Ptr<CreditLinkNetDevice> device, uint32_t ibPort)
{
    NS_LOG_FUNCTION(this << device << ibPort);
    NS_ABORT_MSG_IF(ibPort == 0 || ibPort > 254, "InfinibandSwitch: IB port " << ibPort);
    const uint32_t index = AddPort(device);
    if (m_indexOfIbPort.size() <= ibPort)
    {
        m_indexOfIbPort.resize(ibPort + 1, UINT32_MAX);
    }
    m_indexOfIbPort[ibPort] = index;
    return index;
}

uint32_t
InfinibandSwitch::IndexOfIbPort(uint32_t ibPort) const
{
    if (m_indexOfIbPort.empty())
    {
        return ibPort - 1;
    }
    NS_ABORT_MSG_IF(ibPort >= m_indexOfIbPort.size() || m_indexOfIbPort[ibPort] == UINT32_MAX,
                    "InfinibandSwitch: no device on IB port " << ibPort);
    return m_indexOfIbPort[ibPort];
}

void
InfinibandSwitch::SetForwardingTable(const std::vector<uint8_t>& lft,
                                     const std::vector<std::vector<uint8_t>>& arGroups)
{
    NS_LOG_FUNCTION(this << lft.size() << arGroups.size());
    m_lft = lft;
    NS_LOG_LOGIC("LID " << m_lid << ": LFT of " << lft.size() << " entries"
                        << (m_adaptive ? ", adaptive" : ""));
    ClearRoutes();
    for (uint32_t dlid = 0; dlid < lft.size(); ++dlid)
    {
        const uint8_t port = lft[dlid];
        if (port == 0 || port == 0xff)
        {
            continue; // own LID (management, not modelled) or unreachable
        }
        std::vector<uint32_t> candidates;
        if (m_adaptive && dlid < arGroups.size() && arGroups[dlid].size() > 1)
        {
            for (uint8_t p : arGroups[dlid])
            {
                candidates.push_back(IndexOfIbPort(p));
            }
        }
        else
        {
            candidates.push_back(IndexOfIbPort(port));
        }
        SetRoute(dlid, candidates);
    }
}

uint8_t
InfinibandSwitch::GetLftEntry(uint16_t dlid) const
{
    return dlid < m_lft.size() ? m_lft[dlid] : 0xff;
}

void
InfinibandSwitch::SetSlToVl(uint32_t inIbPort,
                            uint32_t outIbPort,
                            const std::vector<uint8_t>& table)
{
    NS_LOG_FUNCTION(this << inIbPort << outIbPort);
    NS_ABORT_MSG_IF(table.size() != 16, "InfinibandSwitch::SetSlToVl: need 16 entries");
    std::array<uint8_t, 16> t{};
    std::copy(table.begin(), table.end(), t.begin());
    m_slToVl[static_cast<uint64_t>(IndexOfIbPort(inIbPort)) << 32 | IndexOfIbPort(outIbPort)] = t;
}

std::string
InfinibandSwitch::Validate() const
{
    NS_LOG_FUNCTION(this);
    const std::vector<uint8_t>& defaults = m_defaultTable;
    std::ostringstream where;
    where << "InfinibandSwitch on node " << (GetNPorts() ? GetPort(0)->GetNode()->GetId() : 0);
    for (uint32_t out = 0; out < GetNPorts(); ++out)
    {
        const uint32_t vls = GetPort(out)->GetNumVcs();
        if (!defaults.empty())
        {
            const std::string e = InfinibandValidateSlToVl(defaults, vls);
            if (!e.empty())
            {
                return where.str() + " SlToVl towards port " + std::to_string(out + 1) + ": " + e;
            }
        }
        for (uint32_t in = 0; in < GetNPorts(); ++in)
        {
            auto it = m_slToVl.find(static_cast<uint64_t>(in) << 32 | out);
            if (it == m_slToVl.end())
            {
                continue;
            }
            const std::string e =
                InfinibandValidateSlToVl(std::vector<uint8_t>(it->second.begin(), it->second.end()),
                                         vls);
            if (!e.empty())
            {
                return where.str() + " SL->VL from port " + std::to_string(in + 1) + " to port " +
                       std::to_string(out + 1) + ": " + e;
            }
        }
    }
    return "";
}

void
InfinibandSwitch::SetDefaultSlToVl(std::string text)
{
    NS_LOG_FUNCTION(this << text);
    m_defaultSlToVl = text;
    m_defaultTable = InfinibandParseSlToVl(text);
}

std::string
InfinibandSwitch::GetDefaultSlToVl() const
{
    return m_defaultSlToVl;
}

uint64_t
InfinibandSwitch::GetFecnMarked() const
{
    return m_fecnMarked;
}

uint32_t
InfinibandSwitch::ExtractDestination(Ptr<const Packet> packet) const
{
    InfinibandLrh lrh;
    packet->PeekHeader(lrh);
    return lrh.GetDlid();
}

bool
InfinibandSwitch::DefaultCutThrough() const
{
    return true;
}

uint32_t
InfinibandSwitch::DefaultCutThroughBytes() const
{
    return InfinibandLrh::SIZE_BYTES;
}

void
InfinibandSwitch::OnForward(Ptr<const Packet> packet, uint32_t inPort, uint32_t outPort)
{
    m_waitingBytes[outPort] -= packet->GetSize();
}

uint32_t
InfinibandSwitch::SelectOutputVc(Ptr<const Packet> packet,
                                 uint32_t inPort,
                                 uint32_t inVc,
                                 uint32_t outPort)
{
    if (m_waitingBytes.size() < GetNPorts())
    {
        m_waitingBytes.resize(GetNPorts(), 0);
        m_overThresholdCount.resize(GetNPorts(), 0);
    }
    InfinibandLrh lrh;
    packet->PeekHeader(lrh);
    const uint8_t sl = lrh.GetSl();
    uint32_t vl;
    auto it = m_slToVl.empty() ? m_slToVl.end()
                               : m_slToVl.find(static_cast<uint64_t>(inPort) << 32 | outPort);
    if (it != m_slToVl.end())
    {
        vl = it->second[sl];
    }
    else if (m_defaultTable.size() == 16)
    {
        vl = m_defaultTable[sl];
    }
    else
    {
        vl = sl % GetPort(outPort)->GetNumVcs();
    }
    bool mark = false;
    if (m_ccEnabled && m_waitingBytes[outPort] > m_ccThresholdBytes &&
        lrh.GetLnh() == InfinibandLrh::LNH_IBA_LOCAL)
    {
        mark = ++m_overThresholdCount[outPort] % m_ccMarkingRate == 0;
    }
    m_waitingBytes[outPort] += packet->GetSize();
    if (vl != lrh.GetVl() || mark)
    {
        // The switch owns the packet (CreditSwitch holds the only reference in flight).
        Ptr<Packet> p = ConstCast<Packet>(packet);
        InfinibandVcrc vcrc;
        p->RemoveTrailer(vcrc);
        p->RemoveHeader(lrh);
        if (mark)
        {
            InfinibandBth bth;
            p->RemoveHeader(bth);
            if (!bth.GetFecn() && bth.GetOpcode() != InfinibandBth::CNP)
            {
                bth.SetFecn(true);
                m_fecnMarked++;
            }
            p->AddHeader(bth);
        }
        lrh.SetVl(static_cast<uint8_t>(vl));
        p->AddHeader(lrh);
        RewriteVcrc(p);
    }
    return vl;
}

void
InfinibandSwitch::RewriteVcrc(Ptr<Packet> packet)
{
    m_scratch.resize(packet->GetSize());
    packet->CopyData(m_scratch.data(), m_scratch.size());
    packet->AddTrailer(InfinibandVcrc(InfinibandVcrc::Compute(m_scratch.data(), m_scratch.size())));
}

bool
InfinibandSwitch::SupportsSharp() const
{
    return m_sharp;
}

std::string
InfinibandSwitch::CheckSharpGroup(uint32_t groupId, const std::vector<uint32_t>& memberLids) const
{
    if (!m_sharp)
    {
        return "SHARP (in-network reduction) is off on switch LID " + std::to_string(m_lid) +
               " (InfinibandSwitch SharpEnabled)";
    }
    return m_sharpEngine.CheckGroup("SHARP group", groupId, memberLids);
}

void
InfinibandSwitch::RegisterSharpGroup(uint32_t groupId,
                                     const std::vector<uint32_t>& memberLids,
                                     uint16_t parentLid)
{
    NS_LOG_FUNCTION(this << groupId << memberLids.size() << parentLid);
    const std::string error = CheckSharpGroup(groupId, memberLids);
    NS_ABORT_MSG_IF(!error.empty(), "InfinibandSwitch::RegisterSharpGroup: " << error);
    m_sharpEngine.RegisterGroup(groupId, memberLids);
    m_sharpParent[groupId] = parentLid;
}

uint64_t
InfinibandSwitch::GetSharpReducedChunks() const
{
    return m_sharpEngine.GetReducedChunks();
}

uint64_t
InfinibandSwitch::GetHeldPackets() const
{
    return m_sharpEngine.GetHeldPackets();
}

int64_t
InfinibandSwitch::GetNetAbsorbedPackets() const
{
    return m_sharpAbsorbed;
}

void
InfinibandSwitch::ReceiveFromPort(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    if (m_sharp)
    {
        InfinibandLrh lrh;
        packet->PeekHeader(lrh);
        InfinibandSharpTag tag;
        if (lrh.GetDlid() == m_lid && packet->PeekPacketTag(tag))
        {
            if (tag.down)
            {
                ReceiveSharpResult(inPort, packet, vc, tail);
            }
            else
            {
                ReceiveSharp(inPort, packet, vc, tail);
            }
            return;
        }
    }
    CreditSwitch::ReceiveFromPort(inPort, packet, vc, tail);
}

uint32_t
InfinibandSwitch::SharpPayload(uint32_t size)
{
    return size - InfinibandLrh::SIZE_BYTES - InfinibandBth::SIZE_BYTES -
           InfinibandIcrc::SIZE_BYTES - InfinibandVcrc::SIZE_BYTES;
}

void
InfinibandSwitch::Readdress(Ptr<Packet> p,
                            uint32_t inPort,
                            uint16_t dlid,
                            const InfinibandSharpTag& tag) const
{
    InfinibandVcrc vcrc;
    p->RemoveTrailer(vcrc);
    InfinibandIcrc icrc;
    p->RemoveTrailer(icrc);
    InfinibandLrh h;
    p->RemoveHeader(h);
    InfinibandBth bth;
    p->RemoveHeader(bth);
    h.SetDlid(dlid);
    h.SetSlid(m_lid);
    bth.SetDestQp(tag.resultQp);
    p->AddHeader(bth);
    p->AddHeader(h);
    InfinibandSharpTag old;
    p->RemovePacketTag(old);
    p->AddPacketTag(tag);
    BooleanValue crcs;
    GetPort(inPort)->GetAttribute("ComputeCrcs", crcs);
    if (crcs.Get())
    {
        InfinibandAddCrcs(p);
    }
    else
    {
        p->AddTrailer(icrc);
        p->AddTrailer(vcrc);
    }
}

void
InfinibandSwitch::EmitSharp(std::vector<SwitchReductionEngine::Result>&& results)
{
    m_sharpEngine.Emit(std::move(results),
                       m_sharpEngineLatency,
                       [this](std::vector<SwitchReductionEngine::Result>& rs) {
                           for (auto& r : rs)
                           {
                               if (r.holdsInput)
                               {
                                   CreditSwitch::ReceiveFromPort(r.inPort, r.packet, r.vc, r.tail);
                               }
                               else
                               {
                                   ForwardCopy(r.inPort, r.packet, r.vc, r.tail);
                               }
                           }
                       });
}

void
InfinibandSwitch::ReceiveSharp(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    InfinibandLrh lrh;
    packet->PeekHeader(lrh);
    InfinibandSharpTag tag;
    packet->PeekPacketTag(tag);
    const SwitchReductionEngine::Group* group = m_sharpEngine.FindGroup(tag.group);
    NS_ABORT_MSG_IF(!group,
                    "InfinibandSwitch LID " << m_lid << ": SHARP group " << tag.group
                                            << " is not registered");
    const int32_t member = SwitchReductionEngine::MemberIndex(*group, lrh.GetSlid());
    NS_ABORT_MSG_IF(member < 0,
                    "InfinibandSwitch LID " << m_lid << ": LID " << lrh.GetSlid()
                                            << " is not a member of SHARP group " << tag.group);
    std::vector<SwitchReductionEngine::Held> all;
    const auto outcome =
        m_sharpEngine.Contribute(tag.group,
                                 tag.chunk,
                                 static_cast<uint32_t>(member),
                                 SwitchReductionEngine::Held{packet, inPort, vc, tail},
                                 all);
    NS_ABORT_MSG_IF(outcome == SwitchReductionEngine::Outcome::Duplicate,
                    "InfinibandSwitch LID " << m_lid << ": LID " << lrh.GetSlid()
                                            << " contributed chunk " << tag.chunk
                                            << " of SHARP group " << tag.group << " twice");
    if (outcome == SwitchReductionEngine::Outcome::Held)
    {
        return;
    }
    // The aggregation streams: the reduced chunk is complete when the last contribution is.
    Time reducedTail = tail;
    for (const auto& held : all)
    {
        reducedTail = std::max(reducedTail, held.tail);
        NS_ABORT_MSG_IF(held.packet->GetSize() != all[0].packet->GetSize(),
                        "InfinibandSwitch: SHARP group " << tag.group << " chunk " << tag.chunk
                                                         << " contributions differ in size ("
                                                         << held.packet->GetSize() << " vs "
                                                         << all[0].packet->GetSize() << " B)");
    }
    const uint32_t payload = SharpPayload(all[0].packet->GetSize());
    const double rate = static_cast<double>(m_sharpEngineRatePerPort.GetBitRate());
    const uint16_t parent = m_sharpParent[tag.group];
    std::vector<SwitchReductionEngine::Result> results;
    if (parent != 0)
    {
        // Not the root: one aggregate up, in the first contribution's input buffer; the
        // others are read and released.
        for (uint32_t i = 1; i < all.size(); ++i)
        {
            GetPort(all[i].inPort)->ReleaseReceiveBuffer(all[i].vc, all[i].packet->GetSize());
            m_sharpAbsorbed++;
        }
        Readdress(all[0].packet, all[0].inPort, parent, tag);
        results.push_back(SwitchReductionEngine::Result{
            all[0].packet,
            all[0].inPort,
            all[0].vc,
            m_sharpEngine.EngineTail(parent, rate, payload, reducedTail),
            true});
        EmitSharp(std::move(results));
        return;
    }
    // The root: the reduced chunk to every member, each in its contribution's input buffer.
    InfinibandSharpTag down = tag;
    down.down = true;
    for (uint32_t i = 0; i < all.size(); ++i)
    {
        const uint32_t memberLid = group->members[i];
        Readdress(all[i].packet, all[i].inPort, static_cast<uint16_t>(memberLid), down);
        results.push_back(SwitchReductionEngine::Result{
            all[i].packet,
            all[i].inPort,
            all[i].vc,
            m_sharpEngine.EngineTail(memberLid, rate, payload, reducedTail),
            true});
    }
    EmitSharp(std::move(results));
}

void
InfinibandSwitch::ReceiveSharpResult(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    InfinibandSharpTag tag;
    packet->PeekPacketTag(tag);
    const SwitchReductionEngine::Group* group = m_sharpEngine.FindGroup(tag.group);
    NS_ABORT_MSG_IF(!group,
                    "InfinibandSwitch LID " << m_lid << ": SHARP result of group " << tag.group
                                            << ", which is not registered");
    const uint32_t payload = SharpPayload(packet->GetSize());
    const double rate = static_cast<double>(m_sharpEngineRatePerPort.GetBitRate());
    std::vector<SwitchReductionEngine::Result> results;
    for (uint32_t i = 0; i < group->members.size(); ++i)
    {
        // The first child gets the packet (holding its input buffer), the others copies.
        const bool first = i == 0;
        Ptr<Packet> p = first ? packet : packet->Copy();
        const uint32_t child = group->members[i];
        Readdress(p, inPort, static_cast<uint16_t>(child), tag);
        results.push_back(
            SwitchReductionEngine::Result{p,
                                          inPort,
                                          vc,
                                          m_sharpEngine.EngineTail(child, rate, payload, tail),
                                          first});
    }
    m_sharpAbsorbed -= static_cast<int64_t>(group->members.size()) - 1;
    EmitSharp(std::move(results));
}

} // namespace ns3
