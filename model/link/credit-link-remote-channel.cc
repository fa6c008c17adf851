/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-link-remote-channel.h"

#include "credit-link-net-device.h"

#include "ns3/abort.h"
#include "ns3/header.h"
#include "ns3/log.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreditLinkRemoteChannel");

NS_OBJECT_ENSURE_REGISTERED(CreditLinkRemoteChannel);

namespace
{

/// What a local channel keeps in its in-flight queue besides the packet: frame kind, VC,
/// credits, tail arrival (time steps).
class CreditLinkRemoteHeader : public Header
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CreditLinkRemoteHeader")
                                .SetParent<Header>()
                                .SetGroupName("AiFabric")
                                .AddConstructor<CreditLinkRemoteHeader>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 14;
    }

    void Serialize(Buffer::Iterator start) const override
    {
        start.WriteU8(kind);
        start.WriteU8(static_cast<uint8_t>(vc));
        start.WriteHtonU32(credits);
        start.WriteHtonU64(static_cast<uint64_t>(tail));
    }

    uint32_t Deserialize(Buffer::Iterator start) override
    {
        kind = start.ReadU8();
        vc = start.ReadU8();
        credits = start.ReadNtohU32();
        tail = static_cast<int64_t>(start.ReadNtohU64());
        return 14;
    }

    void Print(std::ostream& os) const override
    {
        os << (kind == DATA      ? "data"
               : kind == CREDITS ? "credits"
                                 : "control")
           << " vc=" << vc << " credits=" << credits << " tail=" << tail;
    }

    static constexpr uint8_t CREDITS = 0;
    static constexpr uint8_t DATA = 1;
    static constexpr uint8_t CONTROL = 2;
    uint8_t kind{CREDITS};
    uint32_t vc{0};
    uint32_t credits{0};
    int64_t tail{0};
};

NS_OBJECT_ENSURE_REGISTERED(CreditLinkRemoteHeader);

/// Per process: (node id, interface index) of a cut link's end in each other process.
std::map<uint32_t, std::pair<uint32_t, uint32_t>>&
EndInSystem()
{
    static std::map<uint32_t, std::pair<uint32_t, uint32_t>> ends;
    return ends;
}

Callback<void, Ptr<Packet>>&
ControlReceiver()
{
    static Callback<void, Ptr<Packet>> receiver;
    return receiver;
}

} // namespace

TypeId
CreditLinkRemoteChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CreditLinkRemoteChannel")
                            .SetParent<CreditLinkChannel>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<CreditLinkRemoteChannel>();
    return tid;
}

CreditLinkRemoteChannel::CreditLinkRemoteChannel()
    : m_nEnds(0)
{
}

void
CreditLinkRemoteChannel::DoDispose()
{
    m_ends = {nullptr, nullptr};
    CreditLinkChannel::DoDispose();
}

void
CreditLinkRemoteChannel::Attach(Ptr<CreditLinkNetDevice> device)
{
    NS_ABORT_MSG_IF(GetDelay().IsZero(),
                    "credit link between MPI processes needs a channel Delay > 0 (the "
                    "lookahead; ClusterHelper: --ibDelay)");
    CreditLinkChannel::Attach(device);
    const uint32_t end = m_nEnds++;
    m_ends[end] = device;
    Ptr<Node> node = device->GetNode();
    NS_ABORT_MSG_UNLESS(node, "CreditLinkRemoteChannel: attach the device to a node first");
    if (node->GetSystemId() == MpiInterface::GetSystemId())
    {
        Ptr<MpiReceiver> receiver = CreateObject<MpiReceiver>();
        receiver->SetReceiveCallback(Callback<void, Ptr<Packet>>(
            [this, end](Ptr<Packet> packet) { ReceiveRemote(end, packet); }));
        device->AggregateObject(receiver);
    }
    else
    {
        // Its process registered this end's MpiReceiver: a way in for control frames.
        EndInSystem().emplace(node->GetSystemId(),
                              std::make_pair(node->GetId(), device->GetIfIndex()));
    }
}

bool
CreditLinkRemoteChannel::SendControl(uint32_t systemId, Time rxTime, Ptr<Packet> packet)
{
    auto it = EndInSystem().find(systemId);
    if (it == EndInSystem().end())
    {
        return false;
    }
    CreditLinkRemoteHeader h;
    h.kind = CreditLinkRemoteHeader::CONTROL;
    Ptr<Packet> frame = packet->Copy();
    frame->AddHeader(h);
    MpiInterface::SendPacket(frame, rxTime, it->second.first, it->second.second);
    return true;
}

void
CreditLinkRemoteChannel::SetControlReceiver(Callback<void, Ptr<Packet>> receiver)
{
    ControlReceiver() = receiver;
}

void
CreditLinkRemoteChannel::SendRemote(const CreditLinkNetDevice* from,
                                    Ptr<Packet> packet,
                                    Time headTime)
{
    Ptr<CreditLinkNetDevice> to = GetPeer(from);
    MpiInterface::SendPacket(packet,
                             Simulator::Now() + headTime + GetDelay(),
                             to->GetNode()->GetId(),
                             to->GetIfIndex());
}

void
CreditLinkRemoteChannel::TransmitData(const CreditLinkNetDevice* from,
                                      Ptr<Packet> packet,
                                      uint32_t vc,
                                      Time headTime,
                                      Time txTime)
{
    Ptr<Packet> frame = packet->Copy();
    CreditLinkRemoteHeader h;
    h.kind = CreditLinkRemoteHeader::DATA;
    h.vc = vc;
    h.tail = (Simulator::Now() + txTime + GetDelay()).GetTimeStep();
    frame->AddHeader(h);
    SendRemote(from, frame, headTime);
}

void
CreditLinkRemoteChannel::TransmitCredits(const CreditLinkNetDevice* from,
                                         uint32_t vc,
                                         uint32_t credits,
                                         Time txTime)
{
    Ptr<Packet> frame = Create<Packet>();
    CreditLinkRemoteHeader h;
    h.vc = vc;
    h.credits = credits;
    frame->AddHeader(h);
    SendRemote(from, frame, txTime);
}

void
CreditLinkRemoteChannel::ReceiveRemote(uint32_t end, Ptr<Packet> packet)
{
    CreditLinkRemoteHeader h;
    packet->RemoveHeader(h);
    NS_LOG_LOGIC("remote " << h << " for " << m_ends[end]->GetLinkName());
    if (h.kind == CreditLinkRemoteHeader::CONTROL)
    {
        NS_ABORT_MSG_IF(ControlReceiver().IsNull(),
                        "CreditLinkRemoteChannel: control frame without a receiver");
        ControlReceiver()(packet);
    }
    else if (h.kind == CreditLinkRemoteHeader::DATA)
    {
        m_ends[end]->ReceiveData(packet, h.vc, TimeStep(h.tail));
    }
    else
    {
        m_ends[end]->ReceiveCredits(h.vc, h.credits);
    }
}

} // namespace ns3
