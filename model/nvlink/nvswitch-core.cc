/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "nvswitch-core.h"

#include "nvlink-gpu.h"
#include "nvlink-header.h"
#include "nvlink-net-device.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NvSwitch");

NS_OBJECT_ENSURE_REGISTERED(NvSwitch);

TypeId
NvSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvSwitch")
            .SetParent<CreditSwitch>()
            .SetGroupName("AiFabric")
            .AddConstructor<NvSwitch>()
            // gen1 DGX-2, gen2 DGX A100, gen3 DGX H100 (first with SHARP/NVLS), gen4 GB200.
            .AddAttribute("Generation",
                          "NVSwitch generation 1-4; NVLS needs 3 or later",
                          UintegerValue(3),
                          MakeUintegerAccessor(&NvSwitch::m_generation),
                          MakeUintegerChecker<uint32_t>(1, 4))
            // NCCL models NVLS as the NVLink bandwidth times nvlsEfficiency (src/graph/
            // tuning.cc: 0.85 Hopper, 0.74 Blackwell): the switch's multimem processing,
            // not the wire, bounds it, in proportion to each GPU's links.
            .AddAttribute("NvlsEngineRatePerLink",
                          "Payload rate at which the reduction/multicast engine delivers NVLS "
                          "results towards a member, per NVLink link of its port; 0 = unlimited",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&NvSwitch::m_engineRatePerLink),
                          MakeDataRateChecker())
            .AddAttribute("NvlsEngineLatency",
                          "Time from a chunk's data being in (all contributions of a reduction, "
                          "a store) to its results leaving the engine",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&NvSwitch::m_engineLatency),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("NvlsReduce",
                            "All contributions of a chunk arrived: (group, chunk, payload bytes)",
                            MakeTraceSourceAccessor(&NvSwitch::m_nvlsReduceTrace),
                            "ns3::NvSwitch::NvlsReduceTracedCallback");
    return tid;
}

NvSwitch::NvSwitch()
    : m_generation(3),
      m_engineRatePerLink(DataRate(0)),
      m_engineLatency(Time(0)),
      m_absorbed(0)
{
    NS_LOG_FUNCTION(this);
}

void
NvSwitch::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_engine.Clear();
    m_gpuLinks.clear();
    m_gpuDirect.clear();
    CreditSwitch::DoDispose();
}

uint32_t
NvSwitch::GetGeneration() const
{
    return m_generation;
}

bool
NvSwitch::SupportsNvls() const
{
    return m_generation >= 3;
}

DataRate
NvSwitch::GetNvlsEngineRatePerLink() const
{
    return m_engineRatePerLink;
}

Time
NvSwitch::GetNvlsEngineLatency() const
{
    return m_engineLatency;
}

std::string
NvSwitch::CheckNvlsGroup(uint32_t groupId, const std::vector<uint32_t>& members) const
{
    if (!SupportsNvls())
    {
        return "NVLS (in-switch reduction and multicast) needs NVSwitch gen3 or later; this "
               "switch is gen" +
               std::to_string(m_generation);
    }
    return m_engine.CheckGroup("NVLS group", groupId, members);
}

void
NvSwitch::RegisterNvlsGroup(uint32_t groupId, const std::vector<uint32_t>& members)
{
    NS_LOG_FUNCTION(this << groupId << members.size());
    const std::string error = CheckNvlsGroup(groupId, members);
    NS_ABORT_MSG_IF(!error.empty(), "NvSwitch::RegisterNvlsGroup: " << error);
    m_engine.RegisterGroup(groupId, members);
}

uint64_t
NvSwitch::GetNvlsReducedChunks() const
{
    return m_engine.GetReducedChunks();
}

uint32_t
NvSwitch::GetNvlsPendingChunks() const
{
    return m_engine.GetPendingChunks();
}

uint64_t
NvSwitch::GetHeldPackets() const
{
    return m_engine.GetHeldPackets();
}

int64_t
NvSwitch::GetNetAbsorbedPackets() const
{
    return m_absorbed;
}

uint32_t
NvSwitch::ExtractDestination(Ptr<const Packet> packet) const
{
    NvLinkHeader header;
    NS_ABORT_MSG_IF(packet->GetSize() < NvLinkHeader::SIZE_BYTES,
                    "NvSwitch: packet of " << packet->GetSize() << " B carries no NvLinkHeader");
    packet->PeekHeader(header);
    return header.destination;
}

bool
NvSwitch::DefaultCutThrough() const
{
    return true;
}

uint32_t
NvSwitch::DefaultCutThroughBytes() const
{
    return NvLinkHeader::SIZE_BYTES;
}

void
NvSwitch::ReceiveFromPort(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    NvLinkHeader header;
    packet->PeekHeader(header);
    if (header.type == NvLinkHeader::NVLS_REDUCE || header.type == NvLinkHeader::NVLS_LD_REDUCE)
    {
        ReceiveNvls(inPort, packet, vc, tail);
        return;
    }
    if (header.type == NvLinkHeader::NVLS_STORE)
    {
        ReceiveStore(inPort, packet, vc, tail);
        return;
    }
    CreditSwitch::ReceiveFromPort(inPort, packet, vc, tail);
}

void
NvSwitch::ReceiveNvls(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    NvLinkHeader header;
    packet->PeekHeader(header);
    NS_ABORT_MSG_IF(!SupportsNvls(),
                    "NvSwitch on node " << NodeIdOf(inPort) << " is gen" << m_generation
                                        << ": NVLS reduction needs gen3 or later");
    const SwitchReductionEngine::Group* group = m_engine.FindGroup(header.tag);
    NS_ABORT_MSG_IF(!group,
                    "NvSwitch on node " << NodeIdOf(inPort) << ": NVLS group " << header.tag
                                        << " is not registered");
    const SwitchReductionEngine::Group& g = *group;
    const int32_t memberIndex = SwitchReductionEngine::MemberIndex(g, header.source);
    NS_ABORT_MSG_IF(memberIndex < 0,
                    "NvSwitch on node " << NodeIdOf(inPort) << ": GPU " << header.source
                                        << " is not a member of NVLS group " << header.tag);
    std::vector<SwitchReductionEngine::Held> all;
    const auto outcome = m_engine.Contribute(header.tag,
                                             header.count,
                                             static_cast<uint32_t>(memberIndex),
                                             SwitchReductionEngine::Held{packet, inPort, vc, tail},
                                             all);
    NS_ABORT_MSG_IF(outcome == SwitchReductionEngine::Outcome::Duplicate,
                    "NvSwitch: GPU " << header.source << " contributed chunk " << header.count
                                     << " of NVLS group " << header.tag << " twice");
    if (outcome == SwitchReductionEngine::Outcome::Held)
    {
        return;
    }

    // Every contribution is in: the reduced chunk goes back to each member (or the one
    // the header names), each copy using the input buffer its contribution held
    // (released when the copy leaves).
    const uint32_t chunk = header.count;
    const uint32_t bytes = all[0].packet->GetSize();
    const bool toAll = header.type == NvLinkHeader::NVLS_REDUCE;
    NS_ABORT_MSG_IF(!toAll && SwitchReductionEngine::MemberIndex(g, header.destination) < 0,
                    "NvSwitch: NVLS group " << header.tag << " chunk " << chunk
                                            << " reduced for GPU " << header.destination
                                            << ", not a member");
    NS_LOG_LOGIC(
        "NVLS group " << header.tag << " chunk " << chunk << ": all " << g.members.size()
                      << " contributions in, "
                      << (toAll ? "multicast" : "to GPU " + std::to_string(header.destination)));
    m_nvlsReduceTrace(header.tag, chunk, bytes - NvLinkHeader::SIZE_BYTES);
    // The reduction streams: its result is complete when the last contribution is.
    Time reducedTail = tail;
    for (const auto& held : all)
    {
        reducedTail = std::max(reducedTail, held.tail);
    }
    std::vector<Result> results;
    for (uint32_t i = 0; i < all.size(); ++i)
    {
        SwitchReductionEngine::Held held = std::move(all[i]);
        NS_ABORT_MSG_IF(held.packet->GetSize() != bytes,
                        "NvSwitch: NVLS group "
                            << header.tag << " chunk " << chunk << " contributions differ in size ("
                            << held.packet->GetSize() << " vs " << bytes << " B)");
        if (!toAll && g.members[i] != header.destination)
        {
            // Read by the switch, not returned: its buffer is free once reduced.
            GetPort(held.inPort)->ReleaseReceiveBuffer(held.vc, bytes);
            m_absorbed++;
            continue;
        }
        NvLinkHeader h;
        held.packet->RemoveHeader(h);
        h.type = NvLinkHeader::NVLS_MULTICAST;
        h.destination = static_cast<uint16_t>(g.members[i]);
        held.packet->AddHeader(h);
        const Time out = EngineTail(g.members[i], bytes - NvLinkHeader::SIZE_BYTES, reducedTail);
        results.push_back(Result{held.packet, held.inPort, held.vc, out, true});
    }
    Emit(std::move(results));
}

void
NvSwitch::ReceiveStore(uint32_t inPort, Ptr<Packet> packet, uint32_t vc, Time tail)
{
    NvLinkHeader header;
    packet->RemoveHeader(header);
    NS_ABORT_MSG_IF(!SupportsNvls(),
                    "NvSwitch on node " << NodeIdOf(inPort) << " is gen" << m_generation
                                        << ": NVLS multicast needs gen3 or later");
    const SwitchReductionEngine::Group* group = m_engine.FindGroup(header.tag);
    NS_ABORT_MSG_IF(!group,
                    "NvSwitch on node " << NodeIdOf(inPort) << ": NVLS group " << header.tag
                                        << " is not registered");
    const SwitchReductionEngine::Group& g = *group;
    NS_ABORT_MSG_IF(SwitchReductionEngine::MemberIndex(g, header.source) < 0,
                    "NvSwitch on node " << NodeIdOf(inPort) << ": GPU " << header.source
                                        << " is not a member of NVLS group " << header.tag);
    const uint32_t payload = packet->GetSize();
    std::vector<Result> results;
    bool direct = true;
    for (uint32_t member : g.members)
    {
        direct = direct && ReachesDirectly(member);
    }
    if (direct)
    {
        // One packet for every member, the one back to the sender holding the input
        // buffer: no copy, no header per member.
        header.type = NvLinkHeader::NVLS_MULTICAST;
        header.destination = NvLinkHeader::ALL_MEMBERS;
        packet->AddHeader(header);
        for (uint32_t member : g.members)
        {
            results.push_back(Result{packet,
                                     inPort,
                                     vc,
                                     EngineTail(member, payload, tail),
                                     member == header.source,
                                     member});
        }
    }
    else
    {
        NvLinkHeader ownHeader;
        for (uint32_t member : g.members)
        {
            NvLinkHeader h = header;
            h.type = NvLinkHeader::NVLS_MULTICAST;
            h.destination = static_cast<uint16_t>(member);
            const bool own = member == header.source;
            // The copies are taken before the original gets its header back.
            Ptr<Packet> copy = own ? packet : packet->Copy();
            if (!own)
            {
                copy->AddHeader(h);
            }
            else
            {
                ownHeader = h;
            }
            results.push_back(Result{copy, inPort, vc, EngineTail(member, payload, tail), own});
        }
        packet->AddHeader(ownHeader);
    }
    // One packet in, one out per member: the copies beyond the first are created here.
    m_absorbed -= static_cast<int64_t>(g.members.size()) - 1;
    Emit(std::move(results));
}

uint32_t
NvSwitch::NodeIdOf(uint32_t inPort) const
{
    // Only for error messages: the node is not loaded on every NVLS packet's way.
    return GetPort(inPort)->GetNode()->GetId();
}

bool
NvSwitch::ReachesDirectly(uint32_t gpu)
{
    if (gpu >= m_gpuDirect.size())
    {
        m_gpuDirect.resize(gpu + 1, -1);
    }
    if (m_gpuDirect[gpu] < 0)
    {
        const std::vector<uint32_t>& ports = GetRoute(gpu);
        bool direct = !ports.empty();
        for (uint32_t port : ports)
        {
            const Ptr<CreditLinkNetDevice> peer = GetPort(port)->GetPeer();
            direct = direct && peer && peer->GetNode() && peer->GetNode()->GetObject<NvLinkGpu>();
        }
        m_gpuDirect[gpu] = direct ? 1 : 0;
    }
    return m_gpuDirect[gpu] == 1;
}

Time
NvSwitch::EngineTail(uint32_t gpu, uint32_t payloadBytes, Time dataTail)
{
    if (m_engineRatePerLink.GetBitRate() == 0)
    {
        return dataTail;
    }
    if (gpu >= m_gpuLinks.size())
    {
        m_gpuLinks.resize(gpu + 1, 0);
    }
    if (m_gpuLinks[gpu] == 0)
    {
        uint32_t links = 0;
        for (uint32_t port : GetRoute(gpu))
        {
            Ptr<NvLinkNetDevice> dev = DynamicCast<NvLinkNetDevice>(GetPort(port));
            links += dev ? dev->GetLinks() : 1;
        }
        m_gpuLinks[gpu] = std::max<uint32_t>(links, 1);
    }
    // Per port, in proportion to its links (NCCL scales NVLS with each GPU's NVLink rate).
    const double rateBps = static_cast<double>(m_engineRatePerLink.GetBitRate()) * m_gpuLinks[gpu];
    return m_engine.EngineTail(gpu, rateBps, payloadBytes, dataTail);
}

void
NvSwitch::Emit(std::vector<Result>&& results)
{
    m_engine.Emit(std::move(results), m_engineLatency, [this](std::vector<Result>& r) {
        EmitNow(r);
    });
}

void
NvSwitch::EmitNow(std::vector<Result>& results)
{
    for (auto& r : results)
    {
        if (r.destination >= 0)
        {
            ForwardTo(r.inPort,
                      r.packet,
                      r.vc,
                      r.tail,
                      r.holdsInput,
                      static_cast<uint32_t>(r.destination));
        }
        else if (r.holdsInput)
        {
            CreditSwitch::ReceiveFromPort(r.inPort, r.packet, r.vc, r.tail);
        }
        else
        {
            ForwardCopy(r.inPort, r.packet, r.vc, r.tail);
        }
    }
}

} // namespace ns3
