/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "roce-net-device.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/credit-switch.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceNetDevice");

NS_OBJECT_ENSURE_REGISTERED(RoceNetDevice);

namespace
{
constexpr uint32_t kFirstQpn = 0x100;
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
} // namespace

TypeId
RoceNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RoceNetDevice")
            .SetParent<CreditLinkNetDevice>()
            .SetGroupName("AiFabric")
            .AddConstructor<RoceNetDevice>()
            .AddAttribute("RoceMtu",
                          "Payload bytes of one RoCE packet (the path MTU: 256..4096, as IB)",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&RoceNetDevice::m_mtu),
                          MakeUintegerChecker<uint32_t>(256, 4096))
            .AddAttribute("MaxBurstPackets",
                          "Real packets one simulated packet may stand for (1 = exact)",
                          UintegerValue(4),
                          MakeUintegerAccessor(&RoceNetDevice::m_maxBurstPackets),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("MessageQueueBytes",
                          "Bytes a QP holds for pacing and the port queue keeps at most, so "
                          "that congestion control acts on the wire (as the HCA's)",
                          UintegerValue(16384),
                          MakeUintegerAccessor(&RoceNetDevice::m_messageQueueBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("DataPriority",
                          "Priority (VC) of RoCE data: the lossless class",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RoceNetDevice::m_dataVc),
                          MakeUintegerChecker<uint32_t>(0, 7))
            .AddAttribute("CnpPriority",
                          "Priority (VC) of CNPs (NVIDIA's default cnp_802p_prio is 6 of 8; "
                          "0 here when the fabric has one priority)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RoceNetDevice::m_cnpVc),
                          MakeUintegerChecker<uint32_t>(0, 7))
            .AddAttribute("Dscp",
                          "DSCP of RoCE data (NVIDIA's RoCE default: 26)",
                          UintegerValue(26),
                          MakeUintegerAccessor(&RoceNetDevice::m_dscp),
                          MakeUintegerChecker<uint8_t>(0, 63))
            .AddAttribute("EcnCapable",
                          "Send data ECT(0), so switches may mark it CE",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RoceNetDevice::m_ecnCapable),
                          MakeBooleanChecker())
            .AddAttribute("CnpInterval",
                          "Notification point: at most one CNP per QP per interval (DCQCN "
                          "paper: N = 50 us)",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&RoceNetDevice::m_cnpInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("ComputeIcrc",
                          "Compute the RoCEv2 ICRC (captures); zero otherwise",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RoceNetDevice::m_computeIcrc),
                          MakeBooleanChecker())
            .AddAttribute("Reliable",
                          "RC reliability for lossy Ethernet: the receiver takes packets in PSN "
                          "order only, acknowledges each (ACK) and asks for a resend from the "
                          "first missing one (NAK sequence error); the sender goes back to it "
                          "(go-back-N), or to its oldest unacknowledged packet after "
                          "RetransmitTimeout.  Off: every packet is delivered as it arrives "
                          "(lossless fabrics; spraying reorders freely)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RoceNetDevice::m_reliable),
                          MakeBooleanChecker())
            .AddAttribute("RetransmitTimeout",
                          "Go-back-N timer without acknowledgement progress (IBA local ACK "
                          "timeout 4.096 us x 2^Timeout: Timeout 8, ~1 ms; NCCL_IB_TIMEOUT's "
                          "default 18 is ~1 s)",
                          TimeValue(NanoSeconds(4096 * 256)),
                          MakeTimeAccessor(&RoceNetDevice::m_retransmitTimeout),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("CongestionControl",
                          "Reaction point (a RoceCongestionControl, one per NIC); none = "
                          "every QP at line rate",
                          PointerValue(),
                          MakePointerAccessor(&RoceNetDevice::m_cc),
                          MakePointerChecker<RoceCongestionControl>());
    return tid;
}

RoceNetDevice::RoceNetDevice()
    : m_mtu(4096),
      m_maxBurstPackets(4),
      m_messageQueueBytes(16384),
      m_dataVc(0),
      m_cnpVc(0),
      m_dscp(26),
      m_ecnCapable(true),
      m_cnpInterval(MicroSeconds(50)),
      m_computeIcrc(false),
      m_reliable(false),
      m_retransmitTimeout(NanoSeconds(4096 * 256))
{
    NS_LOG_FUNCTION(this);
    CreditLinkNetDevice::SetReceiveCallback(MakeCallback(&RoceNetDevice::ReceiveFromLink, this));
}

void
RoceNetDevice::NotifyConstructionCompleted()
{
    CreditLinkNetDevice::NotifyConstructionCompleted();
    if (!m_cc)
    {
        m_cc = CreateObject<RoceNoCongestionControl>();
    }
}

void
RoceNetDevice::DoDispose()
{
    m_paceWakeup.Cancel();
    for (Qp& q : m_qps)
    {
        q.timer.Cancel();
    }
    m_qps.clear();
    m_active.clear();
    if (m_cc)
    {
        m_cc->Dispose();
    }
    m_cc = nullptr;
    m_received = PacketReceivedCallback();
    m_txReady = PacketTxReadyCallback();
    m_nodeRx = NetDevice::ReceiveCallback();
    CreditLinkNetDevice::DoDispose();
}

void
RoceNetDevice::SetHostId(uint32_t host)
{
    NS_LOG_FUNCTION(this << host);
    m_host = host;
    SetAddress(RoceHostMac(host));
}

uint32_t
RoceNetDevice::GetHostId() const
{
    return m_host;
}

uint32_t
RoceNetDevice::GetRoceMtu() const
{
    return m_mtu;
}

uint32_t
RoceNetDevice::GetMaxBurstPackets() const
{
    return m_maxBurstPackets;
}

const RoceNetDevice::Counters&
RoceNetDevice::GetRoceCounters() const
{
    return m_counters;
}

Ptr<RoceCongestionControl>
RoceNetDevice::GetCongestionControl() const
{
    return m_cc;
}

uint32_t
RoceNetDevice::GetQpCount() const
{
    return static_cast<uint32_t>(m_qps.size());
}

uint64_t
RoceNetDevice::GetHeldPackets() const
{
    uint64_t n = 0;
    for (const Qp& q : m_qps)
    {
        n += q.held.size();
    }
    return n;
}

void
RoceNetDevice::SetPacketReceivedCallback(PacketReceivedCallback cb)
{
    m_received = cb;
}

void
RoceNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_nodeRx = cb;
}

void
RoceNetDevice::SetPacketTxReadyCallback(PacketTxReadyCallback cb)
{
    m_txReady = cb;
}

uint32_t
RoceNetDevice::QpIndex(uint32_t dstHost, uint32_t qpKey)
{
    const uint64_t key = static_cast<uint64_t>(dstHost) << 32 | qpKey;
    if (auto it = m_qpOf.find(key); it != m_qpOf.end())
    {
        return it->second;
    }
    if (m_qps.empty())
    {
        m_cc->SetLineRate(GetClock().GetDataRateBps());
        const std::string error = m_cc->Validate();
        NS_ABORT_MSG_IF(!error.empty(), error);
    }
    const auto index = static_cast<uint32_t>(m_qps.size());
    Qp q;
    q.dstHost = dstHost;
    q.qpn = kFirstQpn + index;
    // mlx5 takes a QP's UDP source port from 0xC000-0xFFFF: a hash of the connection.
    RoceFlowKey tuple;
    tuple.srcIp = m_host;
    tuple.dstIp = dstHost;
    tuple.srcPort = static_cast<uint16_t>(qpKey);
    tuple.dstPort = static_cast<uint16_t>(qpKey >> 16);
    q.udpSrcPort = static_cast<uint16_t>(0xC000 | (RoceFiveTupleHash(tuple, 0x52) & 0x3FFF));
    m_qps.push_back(std::move(q));
    m_qpOf[key] = index;
    m_qpOfQpn[kFirstQpn + index] = index;
    m_cc->AddQp();
    return index;
}

uint16_t
RoceNetDevice::GetUdpSourcePort(uint32_t dstHost, uint32_t qpKey)
{
    return m_qps[QpIndex(dstHost, qpKey)].udpSrcPort;
}

bool
RoceNetDevice::SendPacket(Ptr<Packet> payload, uint32_t dstHost, uint32_t qpKey)
{
    NS_ABORT_MSG_IF(payload->GetSize() > m_maxBurstPackets * m_mtu,
                    "RoceNetDevice::SendPacket: " << payload->GetSize() << " B > MaxBurstPackets "
                                                  << m_maxBurstPackets << " x RoceMtu " << m_mtu);
    Qp& q = m_qps[QpIndex(dstHost, qpKey)];
    if (q.heldBytes >= m_messageQueueBytes)
    {
        m_refused = true;
        return false;
    }
    const uint32_t k = std::max<uint32_t>(1, (payload->GetSize() + m_mtu - 1) / m_mtu);
    InfinibandBth bth;
    bth.SetOpcode(InfinibandBth::RC_SEND_ONLY);
    bth.SetDestQp(q.qpn); // the peer QP is numbered as ours: no connection setup modelled
    bth.SetPsn(q.psn);
    bth.SetPadCount(InfinibandBth::PadBytesFor(payload->GetSize()));
    q.psn = (q.psn + k) & 0xffffff;
    Ptr<Packet> p = RoceBuildPacket(payload,
                                    m_host,
                                    dstHost,
                                    q.udpSrcPort,
                                    m_dscp,
                                    m_ecnCapable ? RoceFraming::ECT0 : RoceFraming::NOT_ECT,
                                    bth,
                                    m_computeIcrc);
    q.heldBytes += p->GetSize();
    q.held.push_back(p);
    if (!q.active)
    {
        q.active = true;
        m_active.push_back(static_cast<uint32_t>(&q - m_qps.data()));
    }
    Serve();
    return true;
}

void
RoceNetDevice::Serve()
{
    const Time now = Simulator::Now();
    const uint64_t line = GetClock().GetDataRateBps();
    Time wakeup = Time::Max();
    bool moved = false;
    std::size_t waiting = 0; // active QPs in a row that could not send
    while (!m_active.empty() && waiting < m_active.size() &&
           GetQueueBytes(m_dataVc) < m_messageQueueBytes)
    {
        const uint32_t index = m_active.front();
        m_active.pop_front();
        Qp& q = m_qps[index];
        if (now < q.nextSend)
        {
            wakeup = std::min(wakeup, q.nextSend);
            m_active.push_back(index);
            ++waiting;
            continue;
        }
        Ptr<Packet> p = q.held.front();
        if (!SendOnVc(p, m_dataVc))
        {
            m_active.push_front(index);
            break;
        }
        waiting = 0;
        moved = true;
        const uint32_t size = p->GetSize();
        if (m_reliable)
        {
            RoceFlowKey key;
            InfinibandBth bth;
            Ptr<Packet> copy = p->Copy();
            Ptr<Packet> headers = p->Copy();
            RoceStrip(headers, key, bth);
            q.unacked.emplace_back(bth.GetPsn(), copy);
            if (!q.timer.IsRunning())
            {
                q.timer =
                    Simulator::Schedule(m_retransmitTimeout, &RoceNetDevice::Timeout, this, index);
            }
        }
        q.held.pop_front();
        q.heldBytes -= size;
        m_counters.dataPacketsSent += GetBurstShape(p).realPackets;
        const uint64_t wire = size + GetWireOverheadBytes(p);
        m_cc->NotifySent(index, size);
        const uint64_t rate = m_cc->GetRate_bps(index);
        if (rate < line && rate != 0)
        {
            q.nextSend = now + NanoSeconds((wire * 8 * 1000000000ULL + rate - 1) / rate);
        }
        if (q.held.empty())
        {
            q.active = false;
        }
        else
        {
            m_active.push_back(index);
        }
    }
    if (wakeup != Time::Max() &&
        (!m_paceWakeup.IsRunning() || Simulator::GetDelayLeft(m_paceWakeup) > wakeup - now))
    {
        m_paceWakeup.Cancel();
        m_paceWakeup = Simulator::Schedule(wakeup - now, &RoceNetDevice::Serve, this);
    }
    if (moved && m_refused && !m_txReady.IsNull())
    {
        m_refused = false;
        m_txReady(this);
    }
}

void
RoceNetDevice::TxEnded(Ptr<const Packet>, uint32_t)
{
    if (!GetSwitch() && !m_active.empty())
    {
        Serve();
    }
}

void
RoceNetDevice::SendCnp(uint32_t dstHost, uint32_t qpn)
{
    InfinibandBth bth;
    bth.SetOpcode(InfinibandBth::CNP);
    bth.SetBecn(true);
    bth.SetDestQp(qpn);
    Ptr<Packet> p = RoceBuildPacket(Create<Packet>(RoceFraming::CNP_PAYLOAD_BYTES),
                                    m_host,
                                    dstHost,
                                    0xC000, // CNPs of every QP share one port
                                    m_dscp,
                                    RoceFraming::NOT_ECT,
                                    bth,
                                    m_computeIcrc);
    if (SendOnVc(p, m_cnpVc))
    {
        m_counters.cnpsSent++;
    }
}

bool
RoceNetDevice::ReceiveFromLink(Ptr<NetDevice>, Ptr<const Packet> packet, uint16_t, const Address&)
{
    Ptr<Packet> p = packet->Copy();
    RoceFlowKey key;
    InfinibandBth bth;
    RoceStrip(p, key, bth);
    const uint32_t src = RoceHostOf(key.srcIp);
    if (bth.GetOpcode() == InfinibandBth::RC_ACKNOWLEDGE)
    {
        uint8_t syndrome = 0;
        p->CopyData(&syndrome, 1);
        if (auto it = m_qpOfQpn.find(bth.GetDestQp()); it != m_qpOfQpn.end())
        {
            ReceiveAck(it->second, bth.GetPsn(), syndrome != 0);
        }
        return true;
    }
    if (bth.GetOpcode() == InfinibandBth::CNP)
    {
        m_counters.cnpsReceived++;
        if (auto it = m_qpOfQpn.find(bth.GetDestQp()); it != m_qpOfQpn.end())
        {
            m_cc->NotifyCnp(it->second);
        }
        return true;
    }
    m_counters.dataPacketsReceived++;
    if (key.ecn == RoceFraming::CE)
    {
        m_counters.ceReceived++;
        const uint64_t np = static_cast<uint64_t>(src) << 32 | bth.GetDestQp();
        const Time now = Simulator::Now();
        auto [it, first] = m_lastCnp.emplace(np, now);
        if (first || now - it->second >= m_cnpInterval)
        {
            it->second = now;
            SendCnp(src, bth.GetDestQp());
        }
    }
    if (m_reliable && !AcceptInOrder(src,
                                     bth.GetDestQp(),
                                     bth.GetPsn(),
                                     std::max<uint32_t>(1, (p->GetSize() + m_mtu - 1) / m_mtu)))
    {
        return true;
    }
    if (!m_received.IsNull())
    {
        m_received(src, p);
    }
    return true;
}

namespace
{
/// a - b in the 24-bit PSN space, as a signed distance.
int32_t
PsnDistance(uint32_t a, uint32_t b)
{
    const uint32_t d = (a - b) & 0xffffff;
    return d < 0x800000 ? static_cast<int32_t>(d) : static_cast<int32_t>(d) - 0x1000000;
}
} // namespace

bool
RoceNetDevice::AcceptInOrder(uint32_t srcHost, uint32_t qpn, uint32_t psn, uint32_t k)
{
    Responder& r = m_responders[static_cast<uint64_t>(srcHost) << 32 | qpn];
    const int32_t ahead = PsnDistance(psn, r.expectedPsn);
    if (ahead == 0)
    {
        r.expectedPsn = (r.expectedPsn + k) & 0xffffff;
        r.nakSent = false;
        SendAck(srcHost, qpn, (r.expectedPsn - 1) & 0xffffff, false);
        return true;
    }
    m_counters.outOfOrderDropped++;
    if (ahead > 0)
    {
        // A packet before this one was lost: one NAK per gap, from the first missing PSN.
        if (!r.nakSent)
        {
            r.nakSent = true;
            SendAck(srcHost, qpn, r.expectedPsn, true);
        }
    }
    else
    {
        SendAck(srcHost, qpn, (r.expectedPsn - 1) & 0xffffff, false); // a duplicate: re-ACK
    }
    return false;
}

void
RoceNetDevice::SendAck(uint32_t dstHost, uint32_t qpn, uint32_t psn, bool nak)
{
    InfinibandBth bth;
    bth.SetOpcode(InfinibandBth::RC_ACKNOWLEDGE);
    bth.SetDestQp(qpn);
    bth.SetPsn(psn);
    // AETH: syndrome 0 = ACK, 0x60 = NAK PSN sequence error (IBA 9.7.5.2.1); MSN not kept.
    uint8_t aeth[4] = {static_cast<uint8_t>(nak ? 0x60 : 0x00), 0, 0, 0};
    Ptr<Packet> p = RoceBuildPacket(Create<Packet>(aeth, sizeof(aeth)),
                                    m_host,
                                    dstHost,
                                    0xC000,
                                    m_dscp,
                                    RoceFraming::NOT_ECT,
                                    bth,
                                    m_computeIcrc);
    SendOnVc(p, m_cnpVc);
}

void
RoceNetDevice::ReceiveAck(uint32_t index, uint32_t psn, bool nak)
{
    Qp& q = m_qps[index];
    // ACK psn: everything up to psn arrived; NAK psn: everything before psn arrived.
    const uint32_t done = nak ? psn : (psn + 1) & 0xffffff;
    bool progress = false;
    while (!q.unacked.empty() && PsnDistance(done, q.unacked.front().first) > 0)
    {
        q.unacked.pop_front();
        progress = true;
    }
    if (nak)
    {
        GoBack(index, psn);
    }
    if (progress || nak)
    {
        q.timer.Cancel();
        if (!q.unacked.empty())
        {
            q.timer =
                Simulator::Schedule(m_retransmitTimeout, &RoceNetDevice::Timeout, this, index);
        }
    }
}

void
RoceNetDevice::GoBack(uint32_t index, uint32_t psn)
{
    Qp& q = m_qps[index];
    auto from = q.unacked.begin();
    while (from != q.unacked.end() && PsnDistance(from->first, psn) < 0)
    {
        ++from;
    }
    if (from == q.unacked.end())
    {
        return;
    }
    for (auto it = q.unacked.end(); it != from;)
    {
        --it;
        q.heldBytes += it->second->GetSize();
        q.held.push_front(it->second->Copy());
        m_counters.retransmittedPackets++;
    }
    q.unacked.erase(from, q.unacked.end());
    if (!q.active)
    {
        q.active = true;
        m_active.push_front(index);
    }
    Serve();
}

void
RoceNetDevice::Timeout(uint32_t index)
{
    Qp& q = m_qps[index];
    if (q.unacked.empty())
    {
        return;
    }
    m_counters.timeouts++;
    GoBack(index, q.unacked.front().first);
    if (!q.timer.IsRunning())
    {
        q.timer = Simulator::Schedule(m_retransmitTimeout, &RoceNetDevice::Timeout, this, index);
    }
}

CreditLinkNetDevice::BurstShape
RoceNetDevice::GetBurstShape(Ptr<const Packet> packet) const
{
    constexpr uint32_t framing = RoceFraming::HEADER_BYTES + RoceFraming::TRAILER_BYTES;
    const uint32_t size = packet->GetSize();
    const uint32_t payload = size > framing ? size - framing : 0;
    BurstShape b;
    b.realPackets = std::max<uint32_t>(1, (payload + m_mtu - 1) / m_mtu);
    b.realHeaderBytes = framing;
    b.headerBytesInPacket = framing;
    return b;
}

uint32_t
RoceNetDevice::GetMaxPacketBytes() const
{
    return m_maxBurstPackets * m_mtu + RoceFraming::HEADER_BYTES + RoceFraming::TRAILER_BYTES;
}

uint32_t
RoceNetDevice::ClassifyVc(Ptr<const Packet>) const
{
    return m_dataVc;
}

uint16_t
RoceNetDevice::ExtractProtocol(Ptr<const Packet>) const
{
    return kEtherTypeIpv4;
}

} // namespace ns3
