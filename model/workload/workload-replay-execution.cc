/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Running the ops: dependency release, the GPU queue, point-to-point messages, front-end
// transfers and collectives handed to the engine.

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/workload-replay.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadReplayExecution");

void
WorkloadReplay::Begin()
{
    NS_LOG_FUNCTION(this);
    m_startNs = Simulator::Now().GetNanoSeconds();
    m_endNs = m_startNs;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        m_ranks[r].lastChangeNs = m_startNs;
        for (uint32_t i = 0; i < m_ranks[r].ops.size() && m_local[r]; ++i)
        {
            if (m_ranks[r].ops[i].pendingDeps == 0)
            {
                m_readyQueue.emplace_back(r, i);
            }
        }
    }
    Drain();
}

void
WorkloadReplay::Drain()
{
    // Iterative, so that long chains of ops finishing at one instant do not recurse.
    if (m_draining)
    {
        return;
    }
    m_draining = true;
    while (!m_readyQueue.empty())
    {
        const auto [r, i] = m_readyQueue.front();
        m_readyQueue.pop_front();
        StartOp(r, i);
    }
    m_draining = false;
}

void
WorkloadReplay::StartOp(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    const WorkloadOpRef op = m_trace.ops[rank][index];
    RankState& rs = m_ranks[rank];
    OpState& s = rs.ops[index];
    if (m_trace.logGops && (op.kind == WorkloadOpKind::Compute || op.kind == WorkloadOpKind::Send ||
                            op.kind == WorkloadOpKind::Recv))
    {
        HostStartOp(rank, index);
        return;
    }
    if (op.kind == WorkloadOpKind::Compute)
    {
        s.state = State::Queued;
        if (m_concurrentCompute || rs.computeRunning == 0)
        {
            StartCompute(rank, index);
        }
        else
        {
            rs.gpuQueue.push_back(index);
        }
        return;
    }
    Account(rank);
    s.state = State::Running;
    s.startNs = Simulator::Now().GetNanoSeconds();
    ++rs.commRunning[static_cast<std::size_t>(s.pkind)];
    ++rs.commRunningAny;
    m_opBeginTrace(rank, index, op.label);
    Started(rank, index);
    NS_LOG_LOGIC("rank " << rank << " starts " << WorkloadOpKindName(op.kind) << " " << op.label);
    switch (op.kind)
    {
    case WorkloadOpKind::Send:
    case WorkloadOpKind::SendRecv: {
        const uint32_t to = static_cast<uint32_t>(op.to);
        const uint32_t peer = static_cast<uint32_t>(op.sendPeerOp);
        try
        {
            m_transport->SendMessage(
                rank,
                to,
                op.bytes,
                Callback<void>([this, rank, index]() { SendDone(rank, index); }),
                Callback<void>([this, to, peer]() { Arrived(to, peer); }),
                m_p2pChannel,
                static_cast<int64_t>(GetOpId(rank, index)),
                m_client,
                (uint64_t(to) << 32) | peer);
        }
        catch (const std::exception& e)
        {
            Fail(rank, index, e.what());
        }
        break;
    }
    case WorkloadOpKind::Recv:
        MaybeFinishP2p(rank, index);
        break;
    case WorkloadOpKind::Load:
    case WorkloadOpKind::Checkpoint: {
        rs.planeActive[m_frontEndPlane] += 1;
        const Callback<void> done([this, rank, index]() { FrontEndDone(rank, index); });
        const uint32_t storage = static_cast<uint32_t>(op.storage);
        const int64_t opId = static_cast<int64_t>(GetOpId(rank, index));
        try
        {
            if (op.kind == WorkloadOpKind::Load)
            {
                m_frontEnd->Load(rank, storage, op.bytes, done, opId);
            }
            else
            {
                m_frontEnd->Checkpoint(rank, storage, op.bytes, done, opId);
            }
        }
        catch (const std::exception& e)
        {
            Fail(rank, index, e.what());
        }
        break;
    }
    default: {
        MemberReady(static_cast<uint32_t>(op.collective));
        break;
    }
    }
}

void
WorkloadReplay::StartCompute(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    RankState& rs = m_ranks[rank];
    Account(rank);
    ++rs.computeRunning;
    OpState& s = rs.ops[index];
    s.state = State::Running;
    s.startNs = Simulator::Now().GetNanoSeconds();
    const WorkloadOpRef op = m_trace.ops[rank][index];
    m_opBeginTrace(rank, index, op.label);
    Started(rank, index);
    Simulator::Schedule(NanoSeconds(op.timeNs), &WorkloadReplay::ComputeDone, this, rank, index);
}

void
WorkloadReplay::ComputeDone(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    RankState& rs = m_ranks[rank];
    Account(rank);
    --rs.computeRunning;
    if (!rs.gpuQueue.empty())
    {
        const uint32_t next = rs.gpuQueue.front();
        rs.gpuQueue.pop_front();
        StartCompute(rank, next);
    }
    Finish(rank, index);
    Drain();
}

void
WorkloadReplay::MemberReady(uint32_t c)
{
    NS_LOG_FUNCTION(this << c);
    CollectiveState& cs = m_collectives[c];
    ++cs.ready;
    cs.lastReadyNs = std::max(cs.lastReadyNs, Simulator::Now().GetNanoSeconds());
    if (++cs.localReady == cs.localMembers)
    {
        for (uint32_t system : cs.others)
        {
            m_transport->Notify(system, m_client, c, cs.localMembers);
        }
    }
    CheckCollectiveStart(c);
}

void
WorkloadReplay::Notified(uint64_t c, uint64_t count)
{
    NS_LOG_FUNCTION(this << c << count);
    CollectiveState& cs = m_collectives[c];
    cs.ready += count;
    cs.lastReadyNs =
        std::max(cs.lastReadyNs,
                 (Simulator::Now() - m_transport->GetNotificationLatency()).GetNanoSeconds());
    CheckCollectiveStart(c);
}

void
WorkloadReplay::CheckCollectiveStart(uint32_t c)
{
    const CollectiveState& cs = m_collectives[c];
    if (cs.ready != m_trace.collectives[c].members.size())
    {
        return;
    }
    NS_LOG_LOGIC("collective " << c << " '" << m_trace.collectives[c].label
                               << "': all members ready");
    // The members learn that the last of them arrived by its notification.
    Ptr<GpuTransport> t = m_engine ? m_engine->GetTransport() : nullptr;
    const Time start = NanoSeconds(cs.lastReadyNs) + (t ? t->GetNotificationLatency() : Time(0));
    Simulator::Schedule(start - Simulator::Now(), &WorkloadReplay::StartCollective, this, c);
}

void
WorkloadReplay::Received(uint64_t key)
{
    NS_LOG_FUNCTION(this << key);
    Arrived(static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key & 0xffffffff));
}

void
WorkloadReplay::StartCollective(uint32_t c)
{
    NS_LOG_FUNCTION(this << c);
    const WorkloadCollective& coll = m_trace.collectives[c];
    m_collectives[c].started = true;
    const auto& [firstRank, firstIndex] = coll.members.front();
    const WorkloadOpRef first = m_trace.ops[firstRank][firstIndex];
    CollectiveCall call;
    call.kind = CollectiveKindOf(coll.kind);
    call.algorithm = first.algorithm;
    call.bytes = coll.bytes;
    call.groupName = m_trace.groups[coll.group].name;
    call.ranks.reserve(coll.members.size());
    for (const auto& member : coll.members)
    {
        call.ranks.push_back(member.first);
    }
    call.root = first.root >= 0 ? static_cast<uint32_t>(first.root) : firstRank;
    try
    {
        CollectiveResolution how;
        m_engine->Start(call,
                        CollectiveEngine::DoneCallback(
                            [this, c](const CollectiveResult&) { CollectiveDone(c); }),
                        c,
                        &how);
        // The engine calls done in a later event, so the plane is known before it ends.
        if (how.inSwitchPlane >= 0 && m_transport &&
            static_cast<uint32_t>(how.inSwitchPlane) < m_planeNameOfIndex.size())
        {
            m_collectives[c].inSwitchPlane =
                static_cast<int32_t>(m_planeNameOfIndex[how.inSwitchPlane]);
        }
        InSwitchChange(c, +1);
    }
    catch (const std::exception& e)
    {
        for (const auto& [r, i] : coll.members)
        {
            if (m_local[r])
            {
                Fail(r, i, e.what());
            }
        }
    }
}

void
WorkloadReplay::CollectiveDone(uint32_t c)
{
    NS_LOG_FUNCTION(this << c);
    InSwitchChange(c, -1);
    for (const auto& [r, i] : m_trace.collectives[c].members)
    {
        if (m_local[r])
        {
            Finish(r, i);
        }
    }
    Drain();
}

void
WorkloadReplay::SendDone(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    OpState& s = m_ranks[rank].ops[index];
    s.sent = true;
    if (m_trace.ops[rank][index].kind == WorkloadOpKind::Send)
    {
        Finish(rank, index);
        Drain();
    }
    else
    {
        MaybeFinishP2p(rank, index);
    }
}

void
WorkloadReplay::Arrived(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    m_ranks[rank].ops[index].arrived = true;
    MaybeFinishP2p(rank, index);
}

void
WorkloadReplay::FrontEndDone(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    Account(rank);
    m_ranks[rank].planeActive[m_frontEndPlane] -= 1;
    Finish(rank, index);
    Drain();
}

void
WorkloadReplay::MaybeFinishP2p(uint32_t rank, uint32_t index)
{
    const OpState& s = m_ranks[rank].ops[index];
    if (s.state != State::Running || !s.arrived)
    {
        return;
    }
    if (m_trace.ops[rank][index].kind == WorkloadOpKind::SendRecv && !s.sent)
    {
        return;
    }
    Finish(rank, index);
    Drain();
}

void
WorkloadReplay::Finish(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    RankState& rs = m_ranks[rank];
    OpState& s = rs.ops[index];
    const WorkloadOpRef op = m_trace.ops[rank][index];
    if (op.kind != WorkloadOpKind::Compute)
    {
        Account(rank);
        --rs.commRunning[static_cast<std::size_t>(s.pkind)];
        --rs.commRunningAny;
    }
    const int64_t now = Simulator::Now().GetNanoSeconds();
    s.state = State::Done;
    s.endNs = now;
    m_endNs = std::max(m_endNs, now);
    ++rs.done;
    ++m_completed;
    if (s.marker >= 0 && --m_markerRemaining[s.marker] == 0)
    {
        m_markerEndNs[s.marker] = now;
    }
    WriteOpRow(rank, index, now);
    m_opEndTrace(rank, index, op.label, NanoSeconds(now - s.startNs));
    NS_LOG_LOGIC("rank " << rank << " done " << op.label << " after " << now - s.startNs << " ns");
    const ProgramState& ps = m_programs[rs.program];
    for (uint32_t k = ps.succOffset[index]; k < ps.succOffset[index + 1]; ++k)
    {
        if (--rs.ops[ps.succ[k]].pendingDeps == 0)
        {
            NS_LOG_LOGIC("rank " << rank << " releases " << m_trace.ops[rank][ps.succ[k]].label);
            m_readyQueue.emplace_back(rank, ps.succ[k]);
        }
    }
}

void
WorkloadReplay::Started(uint32_t rank, uint32_t index)
{
    RankState& rs = m_ranks[rank];
    if (rs.startSuccOffset.empty())
    {
        return;
    }
    for (uint32_t k = rs.startSuccOffset[index]; k < rs.startSuccOffset[index + 1]; ++k)
    {
        if (--rs.ops[rs.startSucc[k]].pendingDeps == 0)
        {
            m_readyQueue.emplace_back(rank, rs.startSucc[k]);
        }
    }
}

void
WorkloadReplay::Fail(uint32_t rank, uint32_t index, const std::string& why)
{
    std::ostringstream os;
    os << "rank " << rank << " op '" << m_trace.ops[rank][index].label << "': " << why;
    NS_LOG_WARN(os.str());
    m_errors.push_back(os.str());
    m_opError[{rank, index}] = why;
}

} // namespace ns3
