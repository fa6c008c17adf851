/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-port.h"

#include "ns3/boolean.h"
#include "ns3/credit-arbiter.h"
#include "ns3/double.h"
#include "ns3/infiniband-link-preset.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandPort");
NS_OBJECT_ENSURE_REGISTERED(InfinibandPort);

TypeId
InfinibandPort::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::InfinibandPort")
            .SetParent<CreditLinkNetDevice>()
            .SetGroupName("AiFabric")
            .AddConstructor<InfinibandPort>()
            .AddAttribute("Lid",
                          "Local identifier of this port (set by the subnet manager)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&InfinibandPort::m_lid),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute(
                "DataVls",
                "Data virtual lanes (IBA: 1, 2, 4, 8 or 15); sets NumVcs",
                UintegerValue(1),
                MakeUintegerAccessor(&InfinibandPort::SetDataVlsAttr, &InfinibandPort::GetDataVls),
                MakeUintegerChecker<uint32_t>(1, 32))
            .AddAttribute("IbMtu",
                          "InfiniBand MTU: payload bytes per packet (256, 512, 1024, 2048, 4096)",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&InfinibandPort::m_ibMtu),
                          MakeUintegerChecker<uint32_t>())
            // 4 (16 KiB at MTU 4096): what GpuTransport's 32 packets per 512 KiB ring
            // chunk ask for; granularity-bench: 64 MiB ring -0.1%, 1 MiB +1.4% against
            // exact packets with 1/4 (resp. 1/2) of the events.
            .AddAttribute("MaxBurstPackets",
                          "Largest burst SendPacket takes, in IbMtu packets: one simulated "
                          "packet for up to this many back-to-back packets of one message "
                          "(fewer events; wire bytes and PSNs as the real packets); 1 = exact",
                          UintegerValue(4),
                          MakeUintegerAccessor(&InfinibandPort::m_maxBurstPackets),
                          MakeUintegerChecker<uint32_t>(1, 1024))
            .AddAttribute("Preset",
                          "Link speed and width, e.g. NDR, HDR-4x, EDR_1x; when not empty it "
                          "sets DataRate and EncodingEfficiency",
                          StringValue("NDR"),
                          MakeStringAccessor(&InfinibandPort::SetPresetAttr),
                          MakeStringChecker())
            .AddAttribute("SlToVl",
                          "SL->VL table of an HCA port: 16 comma-separated VLs; empty = SL "
                          "modulo DataVls",
                          StringValue(""),
                          MakeStringAccessor(&InfinibandPort::SetSlToVlString,
                                             &InfinibandPort::GetSlToVlString),
                          MakeStringChecker())
            .AddAttribute("VlArbitrationHigh",
                          "High-priority VL arbitration table \"vl:weight,...\" (64-byte units)",
                          StringValue(""),
                          MakeStringAccessor(&InfinibandPort::m_vlArbHigh),
                          MakeStringChecker())
            .AddAttribute("VlArbitrationLow",
                          "Low-priority VL arbitration table; empty = every data VL weight 64",
                          StringValue(""),
                          MakeStringAccessor(&InfinibandPort::m_vlArbLow),
                          MakeStringChecker())
            .AddAttribute("VlArbitrationHighLimit",
                          "Limit of high priority, 4 KiB units (255 unbounded, 0 one packet)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&InfinibandPort::m_vlArbHighLimit),
                          MakeUintegerChecker<uint32_t>(0, 255))
            .AddAttribute("ComputeCrcs",
                          "Compute ICRC/VCRC (false: zero trailers of the right size, faster)",
                          BooleanValue(true),
                          MakeBooleanAccessor(&InfinibandPort::m_computeCrcs),
                          MakeBooleanChecker());
    return tid;
}

InfinibandPort::InfinibandPort()
    : m_lid(0),
      m_dataVls(1),
      m_ibMtu(4096),
      m_maxBurstPackets(4),
      m_vlArbHighLimit(0),
      m_computeCrcs(true),
      m_constructed(false)
{
}

void
InfinibandPort::NotifyConstructionCompleted()
{
    NS_LOG_FUNCTION(this);
    CreditLinkNetDevice::NotifyConstructionCompleted();
    // Parent attributes are initialised after ours: apply ours on top of them.
    m_constructed = true;
    ApplyDataVls();
    ApplyPreset();
    ApplyArbitration();
}

void
InfinibandPort::DoInitialize()
{
    NS_LOG_FUNCTION(this);
    InfinibandAbortOnError(Validate());
    ApplyArbitration();
    CreditLinkNetDevice::DoInitialize();
}

bool
InfinibandPort::IsConstructed() const
{
    return m_constructed;
}

bool
InfinibandPort::SetIbMtu(uint32_t ibMtu)
{
    NS_LOG_FUNCTION(this << ibMtu);
    m_ibMtu = ibMtu;
    return InfinibandValidateMtu(m_ibMtu).empty();
}

void
InfinibandPort::SetDataVlsAttr(uint32_t n)
{
    NS_LOG_FUNCTION(this << n);
    m_dataVls = n;
    if (m_constructed)
    {
        ApplyDataVls();
        ApplyArbitration();
    }
}

void
InfinibandPort::ApplyDataVls()
{
    SetAttribute("NumVcs", UintegerValue(m_dataVls));
}

void
InfinibandPort::SetPresetAttr(std::string preset)
{
    NS_LOG_FUNCTION(this << preset);
    m_preset = preset;
    if (m_constructed)
    {
        ApplyPreset();
    }
}

void
InfinibandPort::ApplyPreset()
{
    if (m_preset.empty())
    {
        return;
    }
    InfinibandLinkPreset preset;
    const std::string error = InfinibandFindLinkPreset(m_preset, preset);
    if (!error.empty())
    {
        m_configError = "Preset: " + error;
        return;
    }
    SetAttribute("DataRate", DataRateValue(preset.GetSignallingRate()));
    SetAttribute("EncodingEfficiency", DoubleValue(preset.encodingEfficiency));
}

void
InfinibandPort::ApplyArbitration()
{
    NS_LOG_FUNCTION(this);
    // The device keeps the arbiter it was given (e.g. by CreditLinkHelper::SetArbiter).
    PointerValue current;
    GetAttribute("Arbiter", current);
    Ptr<WeightedTableArbiter> arbiter = current.Get<WeightedTableArbiter>();
    if (current.Get<CreditArbiter>() && !arbiter)
    {
        return;
    }
    if (!arbiter)
    {
        arbiter = CreateObject<WeightedTableArbiter>();
        SetAttribute("Arbiter", PointerValue(arbiter));
    }
    std::string low = m_vlArbLow;
    if (low.empty())
    {
        std::ostringstream os;
        for (uint32_t vl = 0; vl < m_dataVls; ++vl)
        {
            os << (vl ? "," : "") << vl << ":64";
        }
        low = os.str();
    }
    arbiter->SetAttribute("HighTable", StringValue(m_vlArbHigh));
    arbiter->SetAttribute("LowTable", StringValue(low));
    arbiter->SetAttribute("HighPriorityLimit", UintegerValue(m_vlArbHighLimit));
}

void
InfinibandPort::SetSlToVlString(std::string text)
{
    NS_LOG_FUNCTION(this << text);
    m_slToVlText = text;
    m_slToVl = InfinibandParseSlToVl(text);
}

std::string
InfinibandPort::GetSlToVlString() const
{
    return m_slToVlText;
}

void
InfinibandPort::SetSlToVl(const std::vector<uint8_t>& table)
{
    NS_LOG_FUNCTION(this << table.size());
    m_slToVl = table;
    std::ostringstream os;
    for (std::size_t i = 0; i < table.size(); ++i)
    {
        os << (i ? "," : "") << static_cast<uint32_t>(table[i]);
    }
    m_slToVlText = os.str();
}

const std::vector<uint8_t>&
InfinibandPort::GetSlToVl() const
{
    return m_slToVl;
}

uint8_t
InfinibandPort::VlForSl(uint8_t sl) const
{
    return m_slToVl.empty() ? static_cast<uint8_t>(sl % m_dataVls) : m_slToVl[sl];
}

std::string
InfinibandPort::Validate() const
{
    NS_LOG_FUNCTION(this);
    // Named by the installed class (ns3::InfinibandNetDevice for HCAs and switch ports).
    std::string type = GetInstanceTypeId().GetName();
    type = type.substr(type.find("::") + 2);
    std::ostringstream where;
    where << type << " node " << (GetNode() ? GetNode()->GetId() : 0) << " if " << GetIfIndex()
          << ": ";
    if (!m_configError.empty())
    {
        return where.str() + m_configError;
    }
    for (const std::string& e :
         {InfinibandValidateMtu(m_ibMtu),
          InfinibandValidateDataVlCount(m_dataVls),
          m_slToVl.empty() ? std::string() : InfinibandValidateSlToVl(m_slToVl, m_dataVls)})
    {
        if (!e.empty())
        {
            return where.str() + e;
        }
    }
    if (!GetChannel())
    {
        return where.str() + "port not connected";
    }
    return "";
}

void
InfinibandPort::SetLid(uint16_t lid)
{
    NS_LOG_FUNCTION(this << lid);
    m_lid = lid;
}

uint32_t
InfinibandPort::GetDataVls() const
{
    return m_dataVls;
}

uint32_t
InfinibandPort::RealPackets(uint32_t payloadBytes) const
{
    return payloadBytes <= m_ibMtu ? 1 : (payloadBytes + m_ibMtu - 1) / m_ibMtu;
}

namespace
{
constexpr uint32_t kRcHeaderBytes = InfinibandLrh::SIZE_BYTES + InfinibandBth::SIZE_BYTES +
                                    InfinibandIcrc::SIZE_BYTES + InfinibandVcrc::SIZE_BYTES;
} // namespace

uint32_t
InfinibandPort::RealPacketsOf(uint32_t packetBytes) const
{
    // A single packet, RC or UD (DETH + IPoIB header + at most Mtu), is at most
    // IbMtu + 34 bytes; anything larger is an RC burst of full packets and a rest.
    if (packetBytes <= m_ibMtu + kRcHeaderBytes + InfinibandDeth::SIZE_BYTES)
    {
        return 1;
    }
    return RealPackets(packetBytes - kRcHeaderBytes);
}

CreditLinkNetDevice::BurstShape
InfinibandPort::GetBurstShape(Ptr<const Packet> packet) const
{
    // The packet holds one LRH, BTH, ICRC and VCRC: the first real packet's.
    return BurstShape{RealPacketsOf(packet->GetSize()), kRcHeaderBytes, kRcHeaderBytes};
}

uint32_t
InfinibandPort::GetMaxPacketBytes() const
{
    return std::max<uint32_t>(CreditLinkNetDevice::GetMaxPacketBytes(),
                              m_maxBurstPackets * m_ibMtu + kRcHeaderBytes);
}

std::vector<Ptr<Packet>>
InfinibandPort::SplitBurst(Ptr<const Packet> packet) const
{
    const uint32_t k = RealPacketsOf(packet->GetSize());
    if (k == 1)
    {
        return {packet->Copy()};
    }
    Ptr<Packet> p = packet->Copy();
    InfinibandLrh lrh;
    p->RemoveHeader(lrh);
    InfinibandBth bth;
    p->RemoveHeader(bth);
    InfinibandVcrc vcrc;
    p->RemoveTrailer(vcrc);
    InfinibandIcrc icrc;
    p->RemoveTrailer(icrc);
    const uint32_t payload = p->GetSize() - bth.GetPadCount();
    std::vector<Ptr<Packet>> real;
    for (uint32_t i = 0; i < k; ++i)
    {
        const uint32_t offset = i * m_ibMtu;
        const uint32_t bytes = std::min(m_ibMtu, payload - offset);
        Ptr<Packet> r = p->CreateFragment(offset, bytes);
        const uint8_t pad = InfinibandBth::PadBytesFor(bytes);
        if (pad != 0)
        {
            r->AddPaddingAtEnd(pad);
        }
        InfinibandBth b = bth;
        b.SetPsn((bth.GetPsn() + i) & 0xffffff);
        b.SetPadCount(pad);
        r->AddHeader(b);
        InfinibandLrh l = lrh;
        l.SetPacketLengthFromBytes(r->GetSize() + InfinibandLrh::SIZE_BYTES +
                                   InfinibandIcrc::SIZE_BYTES);
        r->AddHeader(l);
        InfinibandAddCrcs(r);
        real.push_back(r);
    }
    return real;
}

Ptr<Packet>
InfinibandPort::BuildPacket(Ptr<Packet> payload,
                            uint16_t dlid,
                            uint8_t sl,
                            uint8_t opcode,
                            uint32_t destQp,
                            uint32_t psn,
                            bool becn) const
{
    const uint8_t pad = InfinibandBth::PadBytesFor(payload->GetSize());
    if (pad != 0)
    {
        payload->AddPaddingAtEnd(pad);
    }
    InfinibandBth bth;
    bth.SetOpcode(opcode);
    bth.SetPadCount(pad);
    bth.SetDestQp(destQp);
    bth.SetPsn(psn & 0xffffff);
    bth.SetBecn(becn);
    payload->AddHeader(bth);
    InfinibandLrh lrh;
    lrh.SetVl(VlForSl(sl));
    lrh.SetSl(sl);
    lrh.SetLnh(InfinibandLrh::LNH_IBA_LOCAL);
    lrh.SetDlid(dlid);
    lrh.SetSlid(m_lid);
    // A burst's LRH is its first real packet's (PktLen has 11 bits of 4-byte words).
    const uint32_t first = opcode != InfinibandBth::UD_SEND_ONLY &&
                                   payload->GetSize() > m_ibMtu + bth.GetSerializedSize()
                               ? m_ibMtu + bth.GetSerializedSize()
                               : payload->GetSize();
    lrh.SetPacketLengthFromBytes(first + InfinibandLrh::SIZE_BYTES + InfinibandIcrc::SIZE_BYTES);
    payload->AddHeader(lrh);
    if (m_computeCrcs)
    {
        // As InfinibandAddCrcs, with a reused buffer: no heap allocation per packet.
        const uint32_t size = payload->GetSize();
        m_crcScratch.resize(size + InfinibandIcrc::SIZE_BYTES);
        payload->CopyData(m_crcScratch.data(), size);
        payload->AddTrailer(InfinibandIcrc(InfinibandIcrc::Compute(m_crcScratch.data(), size)));
        payload->CopyData(m_crcScratch.data(), m_crcScratch.size());
        payload->AddTrailer(
            InfinibandVcrc(InfinibandVcrc::Compute(m_crcScratch.data(), m_crcScratch.size())));
    }
    else
    {
        payload->AddTrailer(InfinibandIcrc(0));
        payload->AddTrailer(InfinibandVcrc(0));
    }
    return payload;
}

uint32_t
InfinibandPort::ClassifyVc(Ptr<const Packet> packet) const
{
    InfinibandLrh lrh;
    packet->PeekHeader(lrh);
    return lrh.GetVl();
}

Mac48Address
InfinibandPort::LidToAddress(uint16_t lid)
{
    uint8_t buffer[6] = {0, 0, 0, 0, static_cast<uint8_t>(lid >> 8), static_cast<uint8_t>(lid)};
    Mac48Address address;
    address.CopyFrom(buffer);
    return address;
}

uint16_t
InfinibandPort::AddressToLid(const Address& address)
{
    if (!Mac48Address::IsMatchingType(address))
    {
        return 0;
    }
    uint8_t buffer[6];
    Mac48Address::ConvertFrom(address).CopyTo(buffer);
    if (buffer[0] || buffer[1] || buffer[2] || buffer[3])
    {
        return 0; // broadcast or not LID-as-MAC
    }
    return static_cast<uint16_t>(buffer[4] << 8 | buffer[5]);
}

Address
InfinibandPort::GetAddress() const
{
    return LidToAddress(m_lid);
}

void
InfinibandPort::SetAddress(Address address)
{
    NS_LOG_FUNCTION(this << address);
    m_lid = AddressToLid(address);
}

} // namespace ns3
