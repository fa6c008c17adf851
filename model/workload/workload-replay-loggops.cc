/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// LogGOPS schedules (GOAL): every compute, send and recv op runs on its rank's CPU stream,
// one job at a time per stream; messages pay the LogGopsCost's CPU overhead at both ends and
// keep its NIC gap, and receives match messages by source and tag in arrival order.  The
// rules and their LogGOPSim counterparts: doc/workload.md, "GOAL".

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/workload-replay.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadReplayLogGops");

void
WorkloadReplay::HostStartOp(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    const WorkloadOpRef op = m_trace.ops[rank][index];
    m_ranks[rank].ops[index].state = State::Queued;
    m_ranks[rank].cpus[op.cpu].queue.push_back({false, index});
    HostRun(rank, op.cpu);
}

void
WorkloadReplay::HostBegin(uint32_t rank, uint32_t index)
{
    RankState& rs = m_ranks[rank];
    OpState& s = rs.ops[index];
    const WorkloadOpRef op = m_trace.ops[rank][index];
    Account(rank);
    s.state = State::Running;
    s.startNs = Simulator::Now().GetNanoSeconds();
    if (op.kind == WorkloadOpKind::Compute)
    {
        ++rs.computeRunning;
    }
    else
    {
        ++rs.commRunning[static_cast<std::size_t>(s.pkind)];
        ++rs.commRunningAny;
    }
    m_opBeginTrace(rank, index, op.label);
    Started(rank, index);
}

void
WorkloadReplay::HostRun(uint32_t rank, uint32_t cpu)
{
    RankState& rs = m_ranks[rank];
    CpuStream& stream = rs.cpus[cpu];
    const int64_t now = Simulator::Now().GetNanoSeconds();
    while (!stream.busy)
    {
        // The first job in queue order that can go: one whose NIC still keeps its gap waits,
        // and the CPU serves later jobs meanwhile (LogGOPSim re-queues such an op).
        int64_t nicWaitNs = -1;
        auto it = stream.queue.begin();
        for (; it != stream.queue.end(); ++it)
        {
            const WorkloadOpRef op =
                it->message ? m_trace.ops[m_messages[it->index].src][m_messages[it->index].srcOp]
                            : m_trace.ops[rank][it->index];
            if (!it->message && op.kind != WorkloadOpKind::Send)
            {
                break;
            }
            const int64_t nicFree =
                it->message ? rs.nicRecvFreeNs[op.nic] : rs.nicSendFreeNs[op.nic];
            if (nicFree <= now)
            {
                break;
            }
            nicWaitNs = nicWaitNs < 0 ? nicFree : std::min(nicWaitNs, nicFree);
        }
        if (it == stream.queue.end())
        {
            if (nicWaitNs >= 0 && (stream.wakeNs < now || stream.wakeNs > nicWaitNs))
            {
                stream.wakeNs = nicWaitNs;
                Simulator::Schedule(NanoSeconds(nicWaitNs - now),
                                    &WorkloadReplay::HostWake,
                                    this,
                                    rank,
                                    cpu);
            }
            return;
        }
        const CpuJob job = *it;
        stream.queue.erase(it);
        // A message is received on the CPU and NIC its send names, as in LogGOPSim.
        const WorkloadOpRef op =
            job.message ? m_trace.ops[m_messages[job.index].src][m_messages[job.index].srcOp]
                        : m_trace.ops[rank][job.index];
        Time busy(0);
        if (job.message || op.kind == WorkloadOpKind::Send)
        {
            (job.message ? rs.nicRecvFreeNs : rs.nicSendFreeNs)[op.nic] =
                now + m_logGops->NicGap(op.bytes).GetNanoSeconds();
            busy = m_logGops->CpuOverhead(op.bytes);
            if (!job.message)
            {
                HostBegin(rank, job.index);
            }
        }
        else if (op.kind == WorkloadOpKind::Compute)
        {
            HostBegin(rank, job.index);
            busy = NanoSeconds(op.timeNs);
        }
        else
        {
            // A receive is posted when its CPU reaches it; it takes no CPU time itself.
            HostBegin(rank, job.index);
            auto m = std::find_if(rs.unexpected.begin(),
                                  rs.unexpected.end(),
                                  [&](uint32_t message) { return HostMatches(op, message); });
            if (m == rs.unexpected.end())
            {
                rs.posted.push_back(job.index);
            }
            else
            {
                const uint32_t message = *m;
                rs.unexpected.erase(m);
                HostDeliver(message, job.index);
            }
            continue;
        }
        stream.busy = true;
        Simulator::Schedule(busy, &WorkloadReplay::HostCpuDone, this, rank, cpu, job);
    }
}

void
WorkloadReplay::HostWake(uint32_t rank, uint32_t cpu)
{
    NS_LOG_FUNCTION(this << rank << cpu);
    if (m_ranks[rank].cpus[cpu].wakeNs == Simulator::Now().GetNanoSeconds())
    {
        m_ranks[rank].cpus[cpu].wakeNs = -1;
    }
    HostRun(rank, cpu);
    Drain();
}

void
WorkloadReplay::HostCpuDone(uint32_t rank, uint32_t cpu, CpuJob job)
{
    NS_LOG_FUNCTION(this << rank << cpu << job.message << job.index);
    RankState& rs = m_ranks[rank];
    rs.cpus[cpu].busy = false;
    if (job.message)
    {
        // Received: the first posted receive that matches takes it, else it waits.
        auto it = std::find_if(rs.posted.begin(), rs.posted.end(), [&](uint32_t recv) {
            return HostMatches(m_trace.ops[rank][recv], job.index);
        });
        if (it == rs.posted.end())
        {
            rs.unexpected.push_back(job.index);
        }
        else
        {
            const uint32_t recv = *it;
            rs.posted.erase(it);
            HostDeliver(job.index, recv);
        }
    }
    else if (m_trace.ops[rank][job.index].kind == WorkloadOpKind::Compute)
    {
        Account(rank);
        --rs.computeRunning;
        Finish(rank, job.index);
    }
    else
    {
        // The sender's overhead is over: the message enters the fabric.
        const WorkloadOpRef op = m_trace.ops[rank][job.index];
        rs.ops[job.index].hostDone = true;
        const uint32_t message = static_cast<uint32_t>(m_messages.size());
        const uint32_t index = job.index;
        const uint32_t to = static_cast<uint32_t>(op.to);
        m_messages.push_back({rank, index, to});
        try
        {
            m_transport->SendMessage(
                rank,
                to,
                op.bytes,
                Callback<void>([this, rank, index]() { HostSendDone(rank, index); }),
                Callback<void>([this, message]() { HostArrived(message); }),
                m_p2pChannel,
                static_cast<int64_t>(GetOpId(rank, index)),
                m_client,
                (uint64_t(to) << 32) | 0xffffffffu);
        }
        catch (const std::exception& e)
        {
            Fail(rank, index, e.what());
        }
    }
    HostRun(rank, cpu);
    Drain();
}

void
WorkloadReplay::HostArrived(uint32_t message)
{
    NS_LOG_FUNCTION(this << message);
    const HostMessage& m = m_messages[message];
    const uint32_t cpu = m_trace.ops[m.src][m.srcOp].cpu;
    m_ranks[m.dst].cpus[cpu].queue.push_back({true, message});
    HostRun(m.dst, cpu);
    Drain();
}

bool
WorkloadReplay::HostMatches(const WorkloadOpRef& recv, uint32_t message) const
{
    const HostMessage& m = m_messages[message];
    const WorkloadOpRef send = m_trace.ops[m.src][m.srcOp];
    return (recv.from < 0 || static_cast<uint32_t>(recv.from) == m.src) &&
           (recv.anyTag || recv.tag == send.tag);
}

void
WorkloadReplay::HostDeliver(uint32_t message, uint32_t recvIndex)
{
    const HostMessage& m = m_messages[message];
    NS_LOG_LOGIC("rank " << m.dst << " '" << m_trace.ops[m.dst][recvIndex].label
                         << "' takes the message of '" << m_trace.ops[m.src][m.srcOp].label
                         << "' from rank " << m.src);
    m_ranks[m.dst].ops[recvIndex].arrived = true;
    m_ranks[m.dst].taken[recvIndex] = message + 1;
    Finish(m.dst, recvIndex);
    if (!m_logGops->IsEager(m_trace.ops[m.src][m.srcOp].bytes))
    {
        m_ranks[m.src].ops[m.srcOp].matched = true;
        HostMaybeFinishSend(m.src, m.srcOp);
    }
}

void
WorkloadReplay::HostSendDone(uint32_t rank, uint32_t index)
{
    NS_LOG_FUNCTION(this << rank << index);
    m_ranks[rank].ops[index].sent = true;
    HostMaybeFinishSend(rank, index);
    Drain();
}

void
WorkloadReplay::HostMaybeFinishSend(uint32_t rank, uint32_t index)
{
    const OpState& s = m_ranks[rank].ops[index];
    if (s.state == State::Running && s.sent && s.hostDone &&
        (s.matched || m_logGops->IsEager(m_trace.ops[rank][index].bytes)))
    {
        Finish(rank, index);
    }
}

uint64_t
WorkloadReplay::CountUnexpected() const
{
    uint64_t n = 0;
    for (const RankState& rs : m_ranks)
    {
        n += rs.unexpected.size();
    }
    return n;
}

} // namespace ns3
