/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/flow-nvls.h"

#include "ns3/abort.h"
#include "ns3/flow-transport-plane.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowNvls");

namespace
{
// The owner of a loop's contributions (every owner's piece) and of the multicast
// allreduce's chunk (reduced for every member).
constexpr uint32_t kAll = std::numeric_limits<uint32_t>::max();
} // namespace

FlowNvls::FlowNvls(FlowTransportPlane& plane,
                   FlowNetwork& network,
                   Ptr<NvLinkTransportPlane> nvlink,
                   Ptr<FlowTopology> topology)
    : m_plane(plane),
      m_network(network),
      m_nvlink(nvlink),
      m_topology(topology)
{
    NS_LOG_FUNCTION(this << nvlink);
}

FlowNvls::Gpu&
FlowNvls::GetGpu(uint32_t rank)
{
    auto it = m_gpus.find(rank);
    if (it != m_gpus.end())
    {
        return it->second;
    }
    const std::vector<FlowTopology::SwitchPlane> planes = m_topology->GetSwitchPlanes(rank);
    NS_ABORT_MSG_IF(planes.empty(), "FlowNvls: rank " << rank << " has no switch plane");
    double links = 0;
    for (const auto& p : planes)
    {
        links += p.upLinks;
    }
    Gpu g;
    g.queueBytes = std::numeric_limits<double>::max();
    for (const auto& p : planes)
    {
        // NvLinkGpu::PlaneForChunk's sequence: each plane in proportion to its links.
        const double share = p.upLinks / links;
        g.up.push_back({m_plane.GetLinkOf(p.up.link, p.up.wire_byte_per_s), share});
        // The GPU sprays in strict order: it waits when the first bundle's queue is full.
        g.queueBytes = std::min(g.queueBytes, p.txQueueBytes / share);
        for (const auto& down : p.down)
        {
            g.down.push_back(
                {m_plane.GetLinkOf(down.link, down.wire_byte_per_s), share / p.down.size()});
        }
        // The packet model's engine: NvSwitch::EngineTail, per output towards a member at
        // NvlsEngineRatePerLink times that port's links.
        g.engineLatency = std::max(g.engineLatency, p.engineLatency);
        if (p.engineRatePerLink_bps == 0)
        {
            continue;
        }
        auto e = m_engines.find(p.engineKey);
        if (e == m_engines.end())
        {
            const double capacity_byte_per_s =
                p.engineRatePerLink_bps / 8.0 * std::max<uint32_t>(p.downLinks, 1);
            e = m_engines.emplace(p.engineKey, m_network.AddLink(capacity_byte_per_s)).first;
        }
        g.engine.push_back({e->second, share});
    }
    return m_gpus.emplace(rank, std::move(g)).first->second;
}

uint32_t
FlowNvls::GetEngineLink(uint32_t rank)
{
    const Gpu& g = GetGpu(rank);
    NS_ABORT_MSG_IF(g.engine.empty(), "FlowNvls: no engine rate towards rank " << rank);
    return g.engine.front().link;
}

uint32_t
FlowNvls::GetNInFlight() const
{
    return static_cast<uint32_t>(m_ops.size());
}

void
FlowNvls::Start(Op op,
                const std::vector<uint32_t>& ranks,
                uint64_t bytes,
                Callback<void, uint32_t> rankDone)
{
    NS_LOG_FUNCTION(this << static_cast<int>(op) << ranks.size() << bytes);
    NS_ABORT_MSG_IF(!m_nvlink->CanReduceInSwitch(ranks),
                    "FlowNvls: in-switch operation over ranks outside one NVLS-capable "
                    "NVLink domain");
    if (bytes == 0)
    {
        for (uint32_t r : ranks)
        {
            Simulator::ScheduleNow([rankDone, r]() { rankDone(r); });
        }
        return;
    }
    Operation o;
    o.op = op;
    o.plan = m_nvlink->GetNvlsPlan(op, ranks, bytes);
    o.ranks = ranks;
    const auto p = ranks.size();
    o.issued.assign(p, 0);
    o.completed.assign(p, 0);
    o.released.assign(p, 0);
    o.issuedAt.assign(p * o.plan.loops, Time(0));
    o.uploaded.assign(o.plan.loops, 0);
    o.left.assign(p * o.plan.loops, 0);
    o.rankDone = rankDone;
    const uint64_t id = m_nextOp++;
    NS_LOG_INFO("NVLS operation " << id << " as flows: " << p << " ranks, " << bytes << " B, "
                                  << o.plan.loops << " loops of " << o.plan.pieceBytes
                                  << " B, window " << o.plan.window);
    const Time scatter = o.plan.scatterDelay; // as the packet model (NvlsPlan)
    m_ops.emplace(id, std::move(o));
    auto issueAll = [this, id, p]() {
        for (uint32_t m = 0; m < p; ++m)
        {
            Issue(id, m);
        }
    };
    if (scatter.IsStrictlyPositive())
    {
        Simulator::Schedule(scatter, issueAll);
        return;
    }
    issueAll();
}

int32_t
FlowNvls::Expected(const Operation& o, uint32_t member, uint32_t loop)
{
    if (o.plan.toAll)
    {
        return 1;
    }
    if (o.op == Op::ReduceScatter)
    {
        return o.plan.PieceBytes(loop, member) != 0 ? 1 : 0;
    }
    int32_t n = 0; // every owner's stored piece of the loop
    for (uint32_t r = 0; r < o.ranks.size(); ++r)
    {
        n += o.plan.PieceBytes(loop, r) != 0 ? 1 : 0;
    }
    return n;
}

void
FlowNvls::Issue(uint64_t id, uint32_t member)
{
    Operation& o = m_ops.at(id);
    const auto p = static_cast<uint32_t>(o.ranks.size());
    const uint32_t loops = o.plan.loops;
    bool immediate = false;
    while (o.issued[member] < loops && o.issued[member] - o.released[member] < o.plan.window)
    {
        const uint32_t k = o.issued[member]++;
        o.issuedAt[static_cast<std::size_t>(member) * loops + k] = Simulator::Now();
        int32_t& left = o.left[static_cast<std::size_t>(member) * loops + k];
        left += Expected(o, member, k); // pieces that came before are counted already
        Upload u{id, k, kAll, 0, 0};
        if (o.op == Op::AllGather)
        {
            u.owner = member;
            u.payloadBytes = o.plan.PieceBytes(k, member);
            u.wireBytes = m_plane.GetWireBytes(u.payloadBytes);
        }
        else if (o.plan.toAll)
        {
            u.payloadBytes = o.plan.PieceBytes(k, 0);
            u.wireBytes = m_plane.GetWireBytes(u.payloadBytes);
        }
        else
        {
            // Every owner's piece, each its own packets.
            for (uint32_t r = 0; r < p; ++r)
            {
                const uint64_t b = o.plan.PieceBytes(k, r);
                u.payloadBytes += b;
                u.wireBytes += b != 0 ? m_plane.GetWireBytes(b) : 0.0;
            }
        }
        if (u.payloadBytes != 0)
        {
            QueueUpload(o.ranks[member], u);
        }
        if (left == 0)
        {
            o.completed[member]++;
            o.released[member]++;
            immediate = true;
        }
    }
    if (immediate && o.completed[member] == loops)
    {
        // Its rankDone must not run inside Start.
        Simulator::ScheduleNow(&FlowNvls::MemberDone, this, id, member);
    }
}

void
FlowNvls::QueueUpload(uint32_t rank, const Upload& u)
{
    Gpu& g = GetGpu(rank);
    if (g.inTurn != 0)
    {
        StartInTurn(rank, u); // the queue holds turns' packets: it takes its own turn
    }
    else if (g.turns.empty() && g.queuedBytes < g.queueBytes)
    {
        g.queuedBytes += u.wireBytes;
        g.uploads.push_back(u);
        if (!g.uploading)
        {
            NextUpload(rank);
        }
    }
    else
    {
        g.turns.push_back(u);
    }
}

void
FlowNvls::NextUpload(uint32_t rank)
{
    Gpu& g = GetGpu(rank);
    if (g.uploads.empty())
    {
        g.uploading = false;
        std::vector<Upload> turns;
        turns.swap(g.turns);
        for (const auto& u : turns)
        {
            StartInTurn(rank, u);
        }
        return;
    }
    g.uploading = true;
    const Upload u = g.uploads.front();
    g.uploads.pop_front();
    m_network.Start(g.up, u.wireBytes, 1.0, [this, rank, u]() {
        GetGpu(rank).queuedBytes -= u.wireBytes;
        NextUpload(rank);
        Uploaded(u);
    });
}

void
FlowNvls::StartInTurn(uint32_t rank, const Upload& u)
{
    Gpu& g = GetGpu(rank);
    g.inTurn++;
    m_network.Start(g.up, u.wireBytes, 1.0, [this, rank, u]() {
        GetGpu(rank).inTurn--;
        Uploaded(u);
    });
}

void
FlowNvls::Uploaded(const Upload& u)
{
    Operation& o = m_ops.at(u.op);
    if (o.op == Op::AllGather || (o.op == Op::AllReduce && !o.plan.toAll && u.owner != kAll))
    {
        // A stored piece: a copy towards every member.
        for (uint32_t rank : o.ranks)
        {
            QueueDownload(rank, Download{u.op, u.loop, u.owner, true, u.payloadBytes, 1});
        }
        return;
    }
    if (++o.uploaded[u.loop] < o.ranks.size())
    {
        return; // the switch holds the contributions until the last member's is in
    }
    for (uint32_t r = 0; r < o.ranks.size(); ++r)
    {
        const uint64_t b = o.plan.PieceBytes(u.loop, o.plan.toAll ? 0 : r);
        if (b != 0)
        {
            QueueDownload(o.ranks[r], Download{u.op, u.loop, o.plan.toAll ? kAll : r, false, b, 1});
        }
    }
}

void
FlowNvls::QueueDownload(uint32_t receiver, const Download& d)
{
    Gpu& g = GetGpu(receiver);
    // A stored piece joins its loop's pieces still queued here, wherever they wait.  An
    // owner's stores of many loops drain from its uplinks at one instant (they share them),
    // so they come here owner by owner; the packets reach the engine interleaved, every
    // owner's piece of a loop after the other, and the engine delivers loop by loop.
    Download* same = nullptr;
    for (auto it = g.downloads.rbegin(); d.stored && it != g.downloads.rend(); ++it)
    {
        if (it->stored && it->op == d.op && it->loop == d.loop)
        {
            same = &*it;
            break;
        }
    }
    if (same)
    {
        same->payloadBytes += d.payloadBytes;
        same->pieces += d.pieces;
    }
    else
    {
        g.downloads.push_back(d);
    }
    if (!g.downloading)
    {
        NextDownload(receiver);
    }
}

void
FlowNvls::NextDownload(uint32_t receiver)
{
    Gpu& g = GetGpu(receiver);
    if (g.downloads.empty())
    {
        g.downloading = false;
        return;
    }
    g.downloading = true;
    const Download d = g.downloads.front();
    g.downloads.pop_front();
    const Operation& o = m_ops.at(d.op);
    // Merged pieces: each its own packets.
    const uint64_t piece = d.payloadBytes / d.pieces;
    const double wire = m_plane.GetWireBytes(piece) * (d.pieces - 1) +
                        m_plane.GetWireBytes(d.payloadBytes - piece * (d.pieces - 1));
    std::vector<FlowNetwork::Use> path = g.down;
    for (const auto& e : g.engine)
    {
        path.push_back({e.link, e.share * d.payloadBytes / wire});
    }
    if (g.tailPacketBytes != o.plan.packetBytes)
    {
        // A member's message to this GPU through the switch, in the plan's packets.
        const uint32_t src = o.ranks[0] != receiver ? o.ranks[0] : o.ranks[1];
        g.tailPacketBytes = o.plan.packetBytes;
        g.tail = m_plane.GetTailLatency(src, receiver, o.plan.packetBytes) + g.engineLatency;
    }
    const Time tail = g.tail;
    const uint32_t member = static_cast<uint32_t>(
        std::find(o.ranks.begin(), o.ranks.end(), receiver) - o.ranks.begin());
    m_network.Start(std::move(path), wire, 1.0, [this, receiver, d, tail, member]() {
        NextDownload(receiver);
        Simulator::Schedule(tail, &FlowNvls::Downloaded, this, d, member);
    });
}

void
FlowNvls::Downloaded(const Download& d, uint32_t member)
{
    if (d.stored || m_ops.at(d.op).plan.toAll || m_ops.at(d.op).op == Op::ReduceScatter)
    {
        for (uint32_t i = 0; i < d.pieces; ++i)
        {
            Arrived(d.op, member, d.loop);
        }
        return;
    }
    // Allreduce: the owner writes its reduced piece to every member (multimem.st), after
    // what it has queued already.
    QueueUpload(
        m_ops.at(d.op).ranks[member],
        Upload{d.op, d.loop, d.owner, d.payloadBytes, m_plane.GetWireBytes(d.payloadBytes)});
}

void
FlowNvls::Arrived(uint64_t id, uint32_t member, uint32_t loop)
{
    Operation& o = m_ops.at(id);
    int32_t& left = o.left[static_cast<std::size_t>(member) * o.plan.loops + loop];
    if (--left != 0 || loop >= o.issued[member])
    {
        return; // more to come, or counted when the member issues the loop
    }
    if (++o.completed[member] < o.plan.loops)
    {
        const Time free = o.plan.SlotFreeAt(
            o.issuedAt[static_cast<std::size_t>(member) * o.plan.loops + loop],
            o.plan.toAll ? o.plan.PieceBytes(loop, 0) : o.plan.LoopBytesIn(o.op, loop, member));
        if (free == Simulator::Now())
        {
            o.released[member]++;
            Issue(id, member);
            return;
        }
        // The member's last loops may end (and the operation with them) first.
        Simulator::Schedule(free - Simulator::Now(), [this, id, member]() {
            auto again = m_ops.find(id);
            if (again != m_ops.end() && again->second.completed[member] < again->second.plan.loops)
            {
                again->second.released[member]++;
                Issue(id, member);
            }
        });
        return;
    }
    MemberDone(id, member);
}

void
FlowNvls::MemberDone(uint64_t id, uint32_t member)
{
    auto it = m_ops.find(id);
    NS_ASSERT(it != m_ops.end());
    Operation& o = it->second;
    const uint32_t rank = o.ranks[member];
    Callback<void, uint32_t> done = o.rankDone;
    const Time gather = o.plan.gatherDelay;
    NS_LOG_LOGIC("NVLS operation " << id << " as flows: rank " << rank << " done");
    if (++o.membersDone == o.ranks.size())
    {
        m_ops.erase(it);
    }
    if (gather.IsStrictlyPositive())
    {
        Simulator::Schedule(gather, [done, rank]() { done(rank); });
        return;
    }
    done(rank); // last: may start another operation (and rehash m_ops)
}

} // namespace ns3
