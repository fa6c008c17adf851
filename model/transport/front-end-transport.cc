/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/front-end-transport.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <limits>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FrontEndTransport");
NS_OBJECT_ENSURE_REGISTERED(FrontEndTransport);

TypeId
FrontEndTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FrontEndTransport")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<FrontEndTransport>()
            .AddAttribute("SegmentSize",
                          "TCP maximum segment size, bytes (1448: a 1500-byte IPv4 MTU with the "
                          "timestamp option)",
                          UintegerValue(1448),
                          MakeUintegerAccessor(&FrontEndTransport::m_segmentSize),
                          MakeUintegerChecker<uint32_t>(64, 65000))
            .AddAttribute("SocketBuffer",
                          "Send and receive buffer of every socket, bytes (ns-3's default of "
                          "128 KiB caps one connection below a 400 Gb/s link's "
                          "bandwidth-delay product)",
                          UintegerValue(4u << 20),
                          MakeUintegerAccessor(&FrontEndTransport::m_bufferBytes),
                          MakeUintegerChecker<uint32_t>(4096))
            .AddAttribute("MinRto",
                          "Minimum TCP retransmission timeout (ns-3's default of 1 s is far "
                          "above a data centre's; Linux clusters lower rto_min to milliseconds)",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&FrontEndTransport::m_minRto),
                          MakeTimeChecker())
            .AddAttribute("FirstPort",
                          "First listening port per receiving node; each stage takes the next",
                          UintegerValue(20000),
                          MakeUintegerAccessor(&FrontEndTransport::m_firstPort),
                          MakeUintegerChecker<uint16_t>(1024))
            .AddAttribute("FlowIdOffset",
                          "Added to the stage number to make a flows row's flow_id, apart from "
                          "the GPU transport's message ids",
                          UintegerValue(uint64_t(1) << 40),
                          MakeUintegerAccessor(&FrontEndTransport::m_flowIdOffset),
                          MakeUintegerChecker<uint64_t>())
            .AddTraceSource("LoadDone",
                            "A load reached the GPU",
                            MakeTraceSourceAccessor(&FrontEndTransport::m_loadDone),
                            "ns3::FrontEndTransport::TransferTracedCallback")
            .AddTraceSource("CheckpointDone",
                            "A checkpoint reached storage",
                            MakeTraceSourceAccessor(&FrontEndTransport::m_checkpointDone),
                            "ns3::FrontEndTransport::TransferTracedCallback");
    return tid;
}

FrontEndTransport::FrontEndTransport()
    : m_segmentSize(1448),
      m_bufferBytes(4u << 20),
      m_minRto(MilliSeconds(1)),
      m_firstPort(20000),
      m_flowIdOffset(uint64_t(1) << 40)
{
    NS_LOG_FUNCTION(this);
}

FrontEndTransport::~FrontEndTransport() = default;

void
FrontEndTransport::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_stages.clear();
    m_transfers.clear();
    m_ranks.clear();
    m_storage.clear();
    m_db = nullptr;
    Object::DoDispose();
}

void
FrontEndTransport::AddRank(uint32_t rank,
                           Ptr<Node> gpu,
                           Ipv4Address gpuAddress,
                           Ptr<Node> cpu,
                           Ipv4Address cpuAddress)
{
    NS_LOG_FUNCTION(this << rank << gpu << gpuAddress << cpu << cpuAddress);
    m_ranks[rank] = {Endpoint{gpu, gpuAddress, rank}, Endpoint{cpu, cpuAddress, -1}};
}

uint32_t
FrontEndTransport::AddStorage(Ptr<Node> node, Ipv4Address address)
{
    NS_LOG_FUNCTION(this << node << address);
    m_storage.push_back(Endpoint{node, address, -1});
    return static_cast<uint32_t>(m_storage.size() - 1);
}

bool
FrontEndTransport::HasRank(uint32_t rank) const
{
    return m_ranks.count(rank) > 0;
}

uint32_t
FrontEndTransport::GetNStorage() const
{
    return static_cast<uint32_t>(m_storage.size());
}

void
FrontEndTransport::SetResultsDatabase(Ptr<ResultsDatabase> db)
{
    NS_LOG_FUNCTION(this << db);
    m_db = db;
}

uint64_t
FrontEndTransport::Load(uint32_t rank,
                        uint32_t storage,
                        uint64_t bytes,
                        DoneCallback done,
                        int64_t opId)
{
    return Start(true, rank, storage, bytes, done, opId);
}

uint64_t
FrontEndTransport::Checkpoint(uint32_t rank,
                              uint32_t storage,
                              uint64_t bytes,
                              DoneCallback done,
                              int64_t opId)
{
    return Start(false, rank, storage, bytes, done, opId);
}

uint64_t
FrontEndTransport::Start(bool load,
                         uint32_t rank,
                         uint32_t storage,
                         uint64_t bytes,
                         DoneCallback done,
                         int64_t opId)
{
    NS_LOG_FUNCTION(this << load << rank << storage << bytes << opId);
    auto r = m_ranks.find(rank);
    if (r == m_ranks.end())
    {
        throw std::invalid_argument("front-end: no GPU for rank " + std::to_string(rank));
    }
    if (storage >= m_storage.size())
    {
        throw std::invalid_argument("front-end: no storage node " + std::to_string(storage) +
                                    " (the cluster has " + std::to_string(m_storage.size()) + ")");
    }
    const uint64_t id = m_nextTransfer++;
    Transfer& t = m_transfers[id];
    t.id = id;
    t.load = load;
    t.rank = rank;
    t.storage = storage;
    t.bytes = bytes;
    t.opId = opId;
    t.start = Simulator::Now();
    t.done = done;
    const Endpoint& gpu = r->second.first;
    const Endpoint& cpu = r->second.second;
    const Endpoint& st = m_storage[storage];
    if (load)
    {
        t.hops = {{st, cpu}, {cpu, gpu}};
    }
    else
    {
        t.hops = {{gpu, cpu}, {cpu, st}};
    }
    if (bytes == 0)
    {
        Simulator::ScheduleNow(&FrontEndTransport::TransferDone, this, id);
    }
    else
    {
        StartStage(id);
    }
    return id;
}

Ptr<Socket>
FrontEndTransport::MakeSocket(Ptr<Node> node) const
{
    Ptr<Socket> s = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
    s->SetAttribute("SegmentSize", UintegerValue(m_segmentSize));
    s->SetAttribute("SndBufSize", UintegerValue(m_bufferBytes));
    s->SetAttribute("RcvBufSize", UintegerValue(m_bufferBytes));
    s->SetAttribute("MinRto", TimeValue(m_minRto));
    s->SetAttribute("ConnTimeout", TimeValue(m_minRto)); // SYN retransmission (default 3 s)
    return s;
}

uint16_t
FrontEndTransport::NextPort(Ptr<Node> node)
{
    auto [it, inserted] = m_nextPort.emplace(node->GetId(), m_firstPort);
    const uint16_t port = it->second;
    it->second = it->second == std::numeric_limits<uint16_t>::max() ? m_firstPort : port + 1;
    return port;
}

void
FrontEndTransport::StartStage(uint64_t transfer)
{
    NS_LOG_FUNCTION(this << transfer);
    Transfer& t = m_transfers.at(transfer);
    const auto& [src, dst] = t.hops[t.next++];
    const uint64_t id = m_nextStage++;
    Stage& s = m_stages[id];
    s.transfer = transfer;
    s.src = src;
    s.dst = dst;
    s.bytes = t.bytes;
    s.start = Simulator::Now();
    const uint16_t port = NextPort(dst.node);
    s.listener = MakeSocket(dst.node);
    if (s.listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port)) != 0 ||
        s.listener->Listen() != 0)
    {
        NS_FATAL_ERROR("front-end: cannot listen on port " << port << " of node "
                                                           << dst.node->GetId());
    }
    s.listener->SetAcceptCallback(
        MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
        Callback<void, Ptr<Socket>, const Address&>(
            [this, id](Ptr<Socket> socket, const Address& from) { Accept(id, socket, from); }));
    s.sender = MakeSocket(src.node);
    s.sender->Bind();
    s.sender->SetConnectCallback(
        Callback<void, Ptr<Socket>>([this, id](Ptr<Socket> socket) { Connected(id, socket); }),
        Callback<void, Ptr<Socket>>([this, id](Ptr<Socket> socket) { ConnectFailed(id, socket); }));
    s.sender->SetSendCallback(Callback<void, Ptr<Socket>, uint32_t>(
        [this, id](Ptr<Socket> socket, uint32_t available) { Fill(id, socket, available); }));
    s.sender->Connect(InetSocketAddress(dst.address, port));
}

void
FrontEndTransport::Accept(uint64_t stage, Ptr<Socket> socket, const Address&)
{
    auto it = m_stages.find(stage);
    if (it == m_stages.end())
    {
        return;
    }
    it->second.receiver = socket;
    socket->SetRecvCallback(
        Callback<void, Ptr<Socket>>([this, stage](Ptr<Socket> s) { Receive(stage, s); }));
}

void
FrontEndTransport::Connected(uint64_t stage, Ptr<Socket> socket)
{
    Fill(stage, socket, socket->GetTxAvailable());
}

void
FrontEndTransport::ConnectFailed(uint64_t stage, Ptr<Socket>)
{
    const Stage& s = m_stages.at(stage);
    NS_LOG_WARN("front-end: connection from node " << s.src.node->GetId() << " to " << s.dst.address
                                                   << " failed");
}

void
FrontEndTransport::Fill(uint64_t stage, Ptr<Socket> socket, uint32_t available)
{
    auto it = m_stages.find(stage);
    if (it == m_stages.end())
    {
        return;
    }
    Stage& s = it->second;
    while (s.sent < s.bytes && available > 0)
    {
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(available, s.bytes - s.sent));
        const int accepted = socket->Send(Create<Packet>(n));
        if (accepted <= 0)
        {
            break;
        }
        s.sent += static_cast<uint64_t>(accepted);
        available = socket->GetTxAvailable();
    }
    if (s.sent == s.bytes)
    {
        socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        socket->Close(); // FIN once the buffer has drained
    }
}

void
FrontEndTransport::Receive(uint64_t stage, Ptr<Socket> socket)
{
    auto it = m_stages.find(stage);
    if (it == m_stages.end())
    {
        return;
    }
    Stage& s = it->second;
    while (Ptr<Packet> p = socket->Recv(std::numeric_limits<uint32_t>::max(), 0))
    {
        if (p->GetSize() == 0)
        {
            break;
        }
        s.received += p->GetSize();
    }
    if (s.received >= s.bytes)
    {
        StageDone(stage);
    }
}

void
FrontEndTransport::StageDone(uint64_t stage)
{
    Stage& s = m_stages.at(stage);
    const Time now = Simulator::Now();
    NS_LOG_INFO("stage " << stage << " node " << s.src.node->GetId() << " -> "
                         << s.dst.node->GetId() << ": " << s.bytes << " B in "
                         << (now - s.start).GetMicroSeconds() << " us");
    if (m_db)
    {
        FlowRecord row;
        row.flowId = static_cast<int64_t>(m_flowIdOffset + stage);
        row.plane = "ethernet";
        row.srcNode = s.src.node->GetId();
        row.dstNode = s.dst.node->GetId();
        row.srcRank = s.src.rank;
        row.dstRank = s.dst.rank;
        row.bytes = static_cast<int64_t>(s.bytes);
        row.packets = static_cast<int64_t>((s.bytes + m_segmentSize - 1) / m_segmentSize);
        row.startNs = s.start.GetNanoSeconds();
        row.endNs = now.GetNanoSeconds();
        row.opId = m_transfers.at(s.transfer).opId;
        m_db->AddFlow(row);
    }
    s.receiver->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    s.receiver->Close();
    s.listener->Close();
    const uint64_t transfer = s.transfer;
    // The sockets may still be inside this callback's caller: release them afterwards.
    Simulator::ScheduleNow([this, stage]() { m_stages.erase(stage); });
    Transfer& t = m_transfers.at(transfer);
    if (t.next < t.hops.size())
    {
        StartStage(transfer);
    }
    else
    {
        TransferDone(transfer);
    }
}

void
FrontEndTransport::TransferDone(uint64_t transfer)
{
    NS_LOG_FUNCTION(this << transfer);
    auto it = m_transfers.find(transfer);
    if (it == m_transfers.end())
    {
        return;
    }
    const Transfer t = it->second;
    m_transfers.erase(it);
    ++m_completed;
    const Time duration = Simulator::Now() - t.start;
    if (t.load)
    {
        m_bytesLoaded += t.bytes;
        m_loadDone(t.id, t.rank, t.storage, t.bytes, duration);
    }
    else
    {
        m_bytesCheckpointed += t.bytes;
        m_checkpointDone(t.id, t.rank, t.storage, t.bytes, duration);
    }
    if (!t.done.IsNull())
    {
        t.done();
    }
}

uint64_t
FrontEndTransport::GetTransfersCompleted() const
{
    return m_completed;
}

uint64_t
FrontEndTransport::GetTransfersInFlight() const
{
    return m_transfers.size();
}

uint64_t
FrontEndTransport::GetBytesLoaded() const
{
    return m_bytesLoaded;
}

uint64_t
FrontEndTransport::GetBytesCheckpointed() const
{
    return m_bytesCheckpointed;
}

} // namespace ns3
