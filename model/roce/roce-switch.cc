/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "roce-switch.h"

#include "roce-headers.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceSwitch");

NS_OBJECT_ENSURE_REGISTERED(RoceSwitch);

TypeId
RoceSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceSwitch")
            .SetParent<CreditSwitch>()
            .SetGroupName("AiFabric")
            .AddConstructor<RoceSwitch>()
            .AddAttribute(
                "EcmpMode",
                "How a packet picks among equal-cost ports: Hash (five-tuple), "
                "Spray (per packet in turn), Adaptive (fewest bytes waiting)",
                EnumValue(ECMP_HASH),
                MakeEnumAccessor(&RoceSwitch::m_ecmp),
                MakeEnumChecker(ECMP_HASH, "Hash", ECMP_SPRAY, "Spray", ECMP_ADAPTIVE, "Adaptive"))
            .AddAttribute("HashSeed",
                          "Seed of the five-tuple hash; 0 = the node id (switches differ)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RoceSwitch::m_hashSeed),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnEnabled",
                          "Mark ECN-capable packets CE by RED on the egress queue",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RoceSwitch::m_ecn),
                          MakeBooleanChecker())
            .AddAttribute("EcnKminBytes",
                          "Egress queue below which nothing is marked (DCQCN paper: 5 KB)",
                          UintegerValue(5 * 1024),
                          MakeUintegerAccessor(&RoceSwitch::m_kminBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnKmaxBytes",
                          "Egress queue above which every packet is marked (DCQCN paper: "
                          "200 KB)",
                          UintegerValue(200 * 1024),
                          MakeUintegerAccessor(&RoceSwitch::m_kmaxBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnPmax",
                          "Marking probability at EcnKmaxBytes (DCQCN paper: 1 %)",
                          DoubleValue(0.01),
                          MakeDoubleAccessor(&RoceSwitch::m_pmax),
                          MakeDoubleChecker<double>(0.0, 1.0));
    return tid;
}

RoceSwitch::RoceSwitch()
    : m_ecmp(ECMP_HASH),
      m_hashSeed(0),
      m_ecn(false),
      m_kminBytes(5 * 1024),
      m_kmaxBytes(200 * 1024),
      m_pmax(0.01),
      m_random(CreateObject<UniformRandomVariable>())
{
    NS_LOG_FUNCTION(this);
}

void
RoceSwitch::DoDispose()
{
    m_random = nullptr;
    CreditSwitch::DoDispose();
}

std::string
RoceSwitch::Validate() const
{
    if (m_kmaxBytes <= m_kminBytes)
    {
        return "RoCE switch: EcnKmaxBytes " + std::to_string(m_kmaxBytes) +
               " must exceed EcnKminBytes " + std::to_string(m_kminBytes);
    }
    return "";
}

int64_t
RoceSwitch::AssignStreams(int64_t stream)
{
    m_random->SetStream(stream);
    return 1;
}

uint64_t
RoceSwitch::GetEcnMarked() const
{
    return m_markedTotal;
}

uint64_t
RoceSwitch::GetEcnMarked(uint32_t port) const
{
    return port < m_marked.size() ? m_marked[port] : 0;
}

uint64_t
RoceSwitch::GetWaitingBytes(uint32_t port) const
{
    return port < m_waitingBytes.size() ? m_waitingBytes[port] : 0;
}

uint32_t
RoceSwitch::ExtractDestination(Ptr<const Packet> packet) const
{
    RoceFlowKey key;
    return RocePeekFlow(packet, key) ? RoceHostOf(key.dstIp) : NO_ROUTE;
}

uint32_t
RoceSwitch::Route(Ptr<const Packet> packet, uint32_t inPort, uint32_t vc)
{
    if (m_ecmp == ECMP_ADAPTIVE)
    {
        return CreditSwitch::Route(packet, inPort, vc);
    }
    RoceFlowKey key;
    if (!RocePeekFlow(packet, key))
    {
        return CreditSwitch::Route(packet, inPort, vc);
    }
    const uint32_t destination = RoceHostOf(key.dstIp);
    const std::vector<uint32_t>& candidates = GetRoute(destination);
    if (candidates.size() <= 1)
    {
        return CreditSwitch::Route(packet, inPort, vc); // one port, or none (a drop)
    }
    uint32_t pick;
    if (m_ecmp == ECMP_HASH)
    {
        const uint32_t seed = m_hashSeed != 0 ? m_hashSeed : GetPort(0)->GetNode()->GetId();
        pick = RoceFiveTupleHash(key, seed) % candidates.size();
    }
    else
    {
        if (m_sprayTurn.size() <= destination)
        {
            m_sprayTurn.resize(destination + 1, 0);
        }
        pick = m_sprayTurn[destination]++ % candidates.size();
    }
    return candidates[pick];
}

uint32_t
RoceSwitch::SelectOutputVc(Ptr<const Packet> packet,
                           uint32_t inPort,
                           uint32_t inVc,
                           uint32_t outPort)
{
    if (m_waitingBytes.size() < GetNPorts())
    {
        m_waitingBytes.resize(GetNPorts(), 0);
        m_marked.resize(GetNPorts(), 0);
    }
    const uint64_t q = m_waitingBytes[outPort];
    m_waitingBytes[outPort] += packet->GetSize();
    if (!m_ecn || q <= m_kminBytes)
    {
        return inVc;
    }
    RoceFlowKey key;
    if (!RocePeekFlow(packet, key) || key.ecn == RoceFraming::NOT_ECT || key.ecn == RoceFraming::CE)
    {
        return inVc;
    }
    const double p = q > m_kmaxBytes ? 1.0
                                     : m_pmax * static_cast<double>(q - m_kminBytes) /
                                           static_cast<double>(m_kmaxBytes - m_kminBytes);
    if (m_random->GetValue() < p)
    {
        // The switch holds the only reference to a packet in flight.
        RoceMarkCe(ConstCast<Packet>(packet));
        m_marked[outPort]++;
        m_markedTotal++;
    }
    return inVc;
}

void
RoceSwitch::OnForward(Ptr<const Packet> packet, uint32_t inPort, uint32_t outPort)
{
    m_waitingBytes[outPort] -= packet->GetSize();
}

bool
RoceSwitch::DefaultCutThrough() const
{
    return true;
}

uint32_t
RoceSwitch::DefaultCutThroughBytes() const
{
    return RoceFraming::ROUTING_BYTES;
}

} // namespace ns3
