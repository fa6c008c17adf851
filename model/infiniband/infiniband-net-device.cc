/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-net-device.h"

#include "ns3/boolean.h"
#include "ns3/infiniband-a10-congestion-control.h"
#include "ns3/ipv4-header.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandNetDevice");
NS_OBJECT_ENSURE_REGISTERED(InfinibandNetDevice);

void
InfinibandIpoibTable::Add(Ipv4Address address, uint16_t lid)
{
    m_lids[address.Get()] = lid;
}

uint16_t
InfinibandIpoibTable::Lookup(Ipv4Address address) const
{
    auto it = m_lids.find(address.Get());
    return it == m_lids.end() ? 0 : it->second;
}

std::size_t
InfinibandIpoibTable::GetSize() const
{
    return m_lids.size();
}

TypeId
InfinibandNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandNetDevice")
            .SetParent<InfinibandPort>()
            .SetGroupName("AiFabric")
            .AddConstructor<InfinibandNetDevice>()
            .AddAttribute("MessageQueueBytes",
                          "SendPacket keeps at most this much queued per VL, so that "
                          "injection delays act on the wire, not on a deep queue",
                          UintegerValue(16384),
                          MakeUintegerAccessor(&InfinibandNetDevice::m_messageQueueBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("LocalQp",
                          "QP of this port's IPoIB UD queue pair (DETH SrcQP, DestQP of IPoIB "
                          "packets) and of its CNPs; not 0 or 1, which are the SMI/GSI QPs",
                          UintegerValue(0x100),
                          MakeUintegerAccessor(&InfinibandNetDevice::m_localQp),
                          MakeUintegerChecker<uint32_t>(2, 0xffffff))
            .AddAttribute("CcEnabled",
                          "Congestion control when CongestionControl is not set: true = "
                          "InfinibandA10CongestionControl (IBA Annex A10: CNP return, CCT), "
                          "false = InfinibandNoCongestionControl",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InfinibandNetDevice::SetCcEnabled,
                                              &InfinibandNetDevice::GetCcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("CongestionControl",
                          "Congestion control strategy (an InfinibandCongestionControl); the "
                          "HCA runs its own fork of it, so one object can configure every HCA "
                          "a helper installs.  Null: chosen by CcEnabled",
                          PointerValue(),
                          MakePointerAccessor(&InfinibandNetDevice::SetCongestionControl,
                                              &InfinibandNetDevice::GetCongestionControl),
                          MakePointerChecker<InfinibandCongestionControl>())
            .AddTraceSource("Ccti",
                            "CCT index towards a DLID changed (a CCT-based congestion "
                            "control's Ccti): DLID, new index",
                            MakeTraceSourceAccessor(&InfinibandNetDevice::m_cctiTrace),
                            "ns3::InfinibandNetDevice::CctiTracedCallback");
    return tid;
}

InfinibandNetDevice::InfinibandNetDevice()
    : m_messageQueueBytes(16384),
      m_localQp(0x100),
      m_ccEnabled(false),
      m_nextPsn(0),
      m_packetRefused(false)
{
    CreditLinkNetDevice::SetReceiveCallback(
        MakeCallback(&InfinibandNetDevice::ReceiveFromLink, this));
}

void
InfinibandNetDevice::NotifyConstructionCompleted()
{
    NS_LOG_FUNCTION(this);
    InfinibandPort::NotifyConstructionCompleted();
    SelectCongestionControl();
}

void
InfinibandNetDevice::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_pacedWakeup.Cancel();
    m_paced.clear();
    m_packetTxReady.clear();
    m_packetQps.clear();
    m_ipoib = nullptr;
    m_userRx = NetDevice::ReceiveCallback();
    m_userPromisc = NetDevice::PromiscReceiveCallback();
    if (m_ccGiven && m_ccGiven != m_cc)
    {
        m_ccGiven->Dispose();
    }
    if (m_cc)
    {
        m_cc->Dispose();
    }
    m_ccGiven = nullptr;
    m_cc = nullptr;
    InfinibandPort::DoDispose();
}

// ---- congestion control -----------------------------------------------------

void
InfinibandNetDevice::SetCongestionControl(Ptr<InfinibandCongestionControl> cc)
{
    NS_LOG_FUNCTION(this << cc);
    m_ccGiven = cc ? cc->Fork() : nullptr;
    if (IsConstructed())
    {
        SelectCongestionControl();
    }
}

Ptr<InfinibandCongestionControl>
InfinibandNetDevice::GetCongestionControl() const
{
    return m_cc;
}

void
InfinibandNetDevice::SetCcEnabled(bool enabled)
{
    NS_LOG_FUNCTION(this << enabled);
    m_ccEnabled = enabled;
    if (IsConstructed())
    {
        SelectCongestionControl();
    }
}

bool
InfinibandNetDevice::GetCcEnabled() const
{
    return m_ccEnabled;
}

void
InfinibandNetDevice::SelectCongestionControl()
{
    NS_LOG_FUNCTION(this);
    Ptr<InfinibandCongestionControl> cc = m_ccGiven;
    if (!cc)
    {
        cc = m_ccEnabled
                 ? Ptr<InfinibandCongestionControl>(CreateObject<InfinibandA10CongestionControl>())
                 : Ptr<InfinibandCongestionControl>(CreateObject<InfinibandNoCongestionControl>());
    }
    // This device's Ccti re-exports the strategy's, for strategies that have a CCT.
    auto ccti = MakeCallback(&TracedCallback<uint16_t, uint32_t>::operator(), &m_cctiTrace);
    if (m_cc)
    {
        m_cc->TraceDisconnectWithoutContext("Ccti", ccti);
    }
    m_cc = cc;
    m_cc->TraceConnectWithoutContext("Ccti", ccti);
    NS_LOG_LOGIC("congestion control " << m_cc->GetName());
}

uint32_t
InfinibandNetDevice::GetCcti(uint16_t dlid) const
{
    return m_cc->GetCcti(dlid);
}

void
InfinibandNetDevice::OnBecn(uint16_t slid)
{
    m_ibCounters.becnReceived++;
    m_cc->NotifyBecn(slid);
}

void
InfinibandNetDevice::SendCnp(uint16_t dlid, uint8_t sl, uint32_t srcQp)
{
    Ptr<Packet> cnp =
        BuildPacket(Create<Packet>(CNP_PAYLOAD_BYTES), dlid, sl, OPCODE_CNP, srcQp, 0, true);
    if (SendOnVc(cnp, VlForSl(sl)))
    {
        m_ibCounters.cnpSent++;
    }
}

uint64_t
InfinibandNetDevice::GetReceiveDiscards() const
{
    return m_ibCounters.misdelivered + m_ibCounters.unclaimed;
}

const InfinibandNetDevice::IbCounters&
InfinibandNetDevice::GetIbCounters() const
{
    return m_ibCounters;
}

// ---- send -------------------------------------------------------------------

bool
InfinibandNetDevice::SendPacket(Ptr<Packet> payload, uint16_t dlid, uint8_t sl, uint32_t destQp)
{
    NS_ABORT_MSG_IF(sl >= NUM_SLS, "SendPacket: SL " << +sl << " > 15");
    NS_ABORT_MSG_IF(payload->GetSize() > GetMaxBurstPackets() * GetIbMtu(),
                    "SendPacket: " << payload->GetSize() << " B > MaxBurstPackets "
                                   << GetMaxBurstPackets() << " x IbMtu " << GetIbMtu());
    NS_ABORT_MSG_IF(GetLid() == 0, "SendPacket on a port without LID (run the subnet manager)");
    // Congestion control delays the packets towards a DLID by holding them here, not
    // by refusing them: only that destination waits, and the caller (a transport
    // taking turns over its destinations) goes on sending to the others.
    if ((!m_paced.empty() && m_paced.count(dlid) != 0) ||
        Simulator::Now() < m_cc->GetNextInjection(dlid))
    {
        m_paced[dlid].push_back(PacedPacket{payload, sl, destQp});
        ReleasePaced();
        return true;
    }
    if (GetQueueBytes(VlForSl(sl)) >= m_messageQueueBytes || !Transmit(payload, dlid, sl, destQp))
    {
        m_packetRefused = true; // TxEnded will come: the queue is not empty
        return false;
    }
    return true;
}

bool
InfinibandNetDevice::Transmit(Ptr<Packet> payload, uint16_t dlid, uint8_t sl, uint32_t destQp)
{
    const uint32_t k = RealPackets(payload->GetSize());
    Ptr<Packet> p = BuildPacket(payload, dlid, sl, InfinibandBth::RC_SEND_ONLY, destQp, m_nextPsn);
    if (!SendOnVc(p, VlForSl(sl)))
    {
        return false;
    }
    m_nextPsn = (m_nextPsn + k) & 0xffffff;
    m_cc->NotifySent(dlid, k); // a burst waits the injection delays of all its real packets
    return true;
}

void
InfinibandNetDevice::ReleasePaced()
{
    // Each DLID's held packets go in order, each at its injection time and while its VL
    // queue is below MessageQueueBytes (else TxEnded calls again).
    const Time now = Simulator::Now();
    Time wakeup = Time::Max();
    for (auto it = m_paced.begin(); it != m_paced.end();)
    {
        const uint16_t dlid = it->first;
        std::deque<PacedPacket>& held = it->second;
        while (!held.empty())
        {
            const Time next = m_cc->GetNextInjection(dlid);
            const PacedPacket& head = held.front();
            if (now < next)
            {
                wakeup = std::min(wakeup, next);
                break;
            }
            // A copy: a packet the queue refuses must stay unchanged for the next try.
            if (GetQueueBytes(VlForSl(head.sl)) >= m_messageQueueBytes ||
                !Transmit(head.payload->Copy(), dlid, head.sl, head.destQp))
            {
                break;
            }
            held.pop_front();
        }
        it = held.empty() ? m_paced.erase(it) : std::next(it);
    }
    if (wakeup != Time::Max() &&
        (!m_pacedWakeup.IsRunning() || Simulator::GetDelayLeft(m_pacedWakeup) > wakeup - now))
    {
        m_pacedWakeup.Cancel();
        m_pacedWakeup = Simulator::Schedule(wakeup - now, &InfinibandNetDevice::ReleasePaced, this);
    }
}

uint32_t
InfinibandNetDevice::GetPacedPackets() const
{
    uint32_t n = 0;
    for (const auto& [dlid, held] : m_paced)
    {
        n += static_cast<uint32_t>(held.size());
    }
    return n;
}

namespace
{

// Registers \p cb for \p qp in \p callbacks, replacing an earlier one; null unregisters.
template <typename C>
void
SetForQp(std::vector<std::pair<uint32_t, C>>& callbacks, uint32_t qp, C cb)
{
    auto it = std::find_if(callbacks.begin(), callbacks.end(), [qp](const auto& e) {
        return e.first == qp;
    });
    if (it != callbacks.end())
    {
        callbacks.erase(it);
    }
    if (!cb.IsNull())
    {
        callbacks.emplace_back(qp, cb);
    }
}

} // namespace

void
InfinibandNetDevice::SetPacketTxReadyCallback(uint32_t qp, PacketTxReadyCallback cb)
{
    NS_LOG_FUNCTION(this << qp);
    SetForQp(m_packetTxReady, qp, cb);
}

void
InfinibandNetDevice::SetPacketReceivedCallback(uint32_t qp, PacketReceivedCallback cb)
{
    NS_LOG_FUNCTION(this << qp);
    SetForQp(m_packetQps, qp, cb);
}

void
InfinibandNetDevice::NotifyPacketTxReady()
{
    if (m_packetRefused)
    {
        m_packetRefused = false;
        for (const auto& [qp, cb] : m_packetTxReady)
        {
            cb(this);
        }
    }
}

void
InfinibandNetDevice::TxEnded(Ptr<const Packet> packet, uint32_t vc)
{
    if (!m_paced.empty())
    {
        ReleasePaced();
    }
    NotifyPacketTxReady();
}

// ---- receive ----------------------------------------------------------------

uint16_t
InfinibandNetDevice::ExtractProtocol(Ptr<const Packet> packet) const
{
    // Only UD packets carry an EtherType (IPoIB); its position is fixed for LNH=2.
    InfinibandLrh lrh;
    packet->PeekHeader(lrh);
    uint8_t bytes[InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES +
                  InfinibandDeth::SIZE_BYTES + 2];
    if (packet->GetSize() < sizeof(bytes) || lrh.GetLnh() != InfinibandLrh::LNH_IBA_LOCAL)
    {
        return 0;
    }
    packet->CopyData(bytes, sizeof(bytes));
    if (bytes[InfinibandLrh::SIZE_BYTES] != InfinibandBth::UD_SEND_ONLY)
    {
        return 0;
    }
    return static_cast<uint16_t>(bytes[sizeof(bytes) - 2] << 8 | bytes[sizeof(bytes) - 1]);
}

bool
InfinibandNetDevice::ReceiveFromLink(Ptr<NetDevice> device,
                                     Ptr<const Packet> packet,
                                     uint16_t protocol,
                                     const Address& from)
{
    Ptr<Packet> p = packet->Copy();
    InfinibandLrh lrh;
    p->RemoveHeader(lrh);
    InfinibandVcrc vcrc;
    p->RemoveTrailer(vcrc);
    InfinibandIcrc icrc;
    p->RemoveTrailer(icrc);
    if (lrh.GetDlid() != GetLid())
    {
        NS_LOG_WARN("LID " << GetLid() << " got a packet for DLID " << lrh.GetDlid());
        m_ibCounters.misdelivered++;
        return false;
    }
    InfinibandBth bth;
    p->RemoveHeader(bth);
    if (bth.GetPadCount() != 0)
    {
        p->RemoveAtEnd(bth.GetPadCount());
    }
    if (bth.GetFecn())
    {
        m_ibCounters.fecnReceived++;
        if (m_cc->NotifyFecn(lrh.GetSlid()))
        {
            SendCnp(lrh.GetSlid(), lrh.GetSl(), m_localQp);
        }
    }
    const uint8_t opcode = bth.GetOpcode();
    if (opcode == OPCODE_CNP)
    {
        if (bth.GetBecn())
        {
            OnBecn(lrh.GetSlid());
        }
        return true;
    }
    if (opcode == InfinibandBth::UD_SEND_ONLY)
    {
        InfinibandDeth deth;
        p->RemoveHeader(deth);
        InfinibandIpoibHeader ipoib;
        p->RemoveHeader(ipoib);
        const Address src = LidToAddress(lrh.GetSlid());
        if (!m_userPromisc.IsNull())
        {
            m_userPromisc(this, p, ipoib.etherType, src, GetAddress(), NetDevice::PACKET_HOST);
        }
        if (!m_userRx.IsNull())
        {
            m_userRx(this, p, ipoib.etherType, src);
        }
        return true;
    }
    for (const auto& [qp, cb] : m_packetQps)
    {
        if (qp == bth.GetDestQp())
        {
            cb(lrh.GetSlid(), p);
            return true;
        }
    }
    // Messages are a transport's (GpuTransport), which registers its QP: nobody
    // receives on this one, so the packet is lost above the lossless link.
    NS_LOG_WARN("LID " << GetLid() << ": no receiver on QP " << bth.GetDestQp());
    m_ibCounters.unclaimed++;
    return true;
}

// ---- NetDevice: IPoIB -------------------------------------------------------

void
InfinibandNetDevice::SetIpoibTable(Ptr<InfinibandIpoibTable> table)
{
    NS_LOG_FUNCTION(this << table);
    m_ipoib = table;
}

bool
InfinibandNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber)
{
    uint16_t dlid = AddressToLid(dest);
    if (dlid == 0 && protocolNumber == 0x0800 && m_ipoib)
    {
        Ipv4Header ip;
        packet->PeekHeader(ip);
        dlid = m_ipoib->Lookup(ip.GetDestination());
    }
    if (dlid == 0)
    {
        // IPoIB broadcast/multicast needs multicast forwarding, which is not modelled.
        NS_LOG_WARN("IPoIB: no LID for destination of protocol 0x" << std::hex << protocolNumber);
        m_ibCounters.ipoibUnresolved++;
        return false;
    }
    NS_ABORT_MSG_IF(packet->GetSize() > GetMtu(),
                    "IPoIB packet of " << packet->GetSize() << " B exceeds MTU " << GetMtu());
    InfinibandIpoibHeader ipoib;
    ipoib.etherType = protocolNumber;
    packet->AddHeader(ipoib);
    InfinibandDeth deth;
    deth.srcQp = m_localQp;
    packet->AddHeader(deth);
    const uint8_t sl = 0;
    Ptr<Packet> p =
        BuildPacket(packet, dlid, sl, InfinibandBth::UD_SEND_ONLY, m_localQp, m_nextPsn);
    m_nextPsn = (m_nextPsn + 1) & 0xffffff;
    return SendOnVc(p, VlForSl(sl));
}

bool
InfinibandNetDevice::SendFrom(Ptr<Packet> packet,
                              const Address& source,
                              const Address& dest,
                              uint16_t protocolNumber)
{
    return Send(packet, dest, protocolNumber);
}

bool
InfinibandNetDevice::SetMtu(const uint16_t mtu)
{
    NS_LOG_FUNCTION(this << mtu);
    return SetIbMtu(mtu + InfinibandIpoibHeader::SIZE_BYTES);
}

uint16_t
InfinibandNetDevice::GetMtu() const
{
    // IPoIB datagram mode (RFC 4391 §5): the IB MTU minus the 4-byte encapsulation;
    // DETH is a transport header, not payload.
    return static_cast<uint16_t>(GetIbMtu() - InfinibandIpoibHeader::SIZE_BYTES);
}

bool
InfinibandNetDevice::NeedsArp() const
{
    return false;
}

bool
InfinibandNetDevice::IsPointToPoint() const
{
    return false;
}

void
InfinibandNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_userRx = cb;
}

void
InfinibandNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_userPromisc = cb;
}

} // namespace ns3
