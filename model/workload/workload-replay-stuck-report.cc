/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Why a replay did not complete: per rank, the ops at the frontier and what they wait for.

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/workload-replay.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadReplayStuckReport");

std::string
WorkloadReplay::Describe(uint32_t rank, uint32_t index) const
{
    const WorkloadOpRef op = m_trace.ops[rank][index];
    const OpState& s = m_ranks[rank].ops[index];
    std::ostringstream os;
    os << "'" << op.label << "' (" << WorkloadOpKindName(op.kind);
    if (op.line > 0)
    {
        os << ", line " << op.line;
    }
    os << ")";
    auto err = m_opError.find({rank, index});
    if (err != m_opError.end())
    {
        os << " failed: " << err->second;
        return os.str();
    }
    if (s.state == State::Waiting)
    {
        os << " waits for";
        uint32_t listed = 0;
        for (uint32_t d : op.deps)
        {
            if (m_ranks[rank].ops[d].state != State::Done && listed++ < 3)
            {
                os << (listed > 1 ? ", '" : " '") << m_trace.ops[rank][d].label << "'";
            }
        }
        return os.str();
    }
    if (s.state == State::Queued)
    {
        if (m_trace.logGops)
        {
            os << " queued for CPU " << unsigned(op.cpu);
        }
        else
        {
            os << " queued for the GPU";
        }
        return os.str();
    }
    if (m_trace.logGops && op.kind == WorkloadOpKind::Recv)
    {
        os << " posted, no message from ";
        if (op.from < 0)
        {
            os << "any rank";
        }
        else
        {
            os << "rank " << op.from;
        }
        if (op.anyTag)
        {
            os << " with any tag";
        }
        else
        {
            os << " with tag " << op.tag;
        }
        os << " arrived";
        return os.str();
    }
    switch (op.kind)
    {
    case WorkloadOpKind::Compute:
        os << " computing";
        break;
    case WorkloadOpKind::Send:
        os << " sent to rank " << op.to << ", not delivered";
        break;
    case WorkloadOpKind::Load:
        os << " from storage" << op.storage << " never arrived";
        break;
    case WorkloadOpKind::Checkpoint:
        os << " to storage" << op.storage << " never completed";
        break;
    case WorkloadOpKind::Recv:
    case WorkloadOpKind::SendRecv:
        if (op.kind == WorkloadOpKind::SendRecv && !s.sent)
        {
            os << " its send to rank " << op.to << " is not delivered;";
        }
        if (s.arrived)
        {
            break;
        }
        os << " receive from rank " << op.from << " never arrived";
        if (op.recvPeerOp < 0 || static_cast<uint32_t>(op.from) >= m_trace.ops.size() ||
            static_cast<uint64_t>(op.recvPeerOp) >= m_trace.ops[op.from].size())
        {
            os << ": no matching send";
        }
        else
        {
            const OpState& peer = m_ranks[op.from].ops[op.recvPeerOp];
            os << ": send '" << m_trace.ops[op.from][op.recvPeerOp].label << "' on rank " << op.from
               << (peer.state == State::Waiting ? " never started" : " in flight");
        }
        break;
    default: {
        const WorkloadCollective& c = m_trace.collectives[op.collective];
        const CollectiveState& cs = m_collectives[op.collective];
        os << " on group " << m_trace.groups[c.group].name << ": ";
        if (cs.started)
        {
            os << "started, never completed";
            break;
        }
        os << cs.ready << " of " << c.members.size() << " members reached it; missing";
        uint32_t listed = 0;
        for (const auto& [r, i] : c.members)
        {
            if (m_ranks[r].ops[i].state == State::Waiting && listed++ < 4)
            {
                os << (listed > 1 ? ", rank " : " rank ") << r;
            }
        }
        break;
    }
    }
    return os.str();
}

std::string
WorkloadReplay::GetStuckReport(uint32_t maxOpsPerRank, uint32_t maxRanks) const
{
    if (IsComplete())
    {
        return "";
    }
    std::ostringstream os;
    if (!m_started)
    {
        return "replay of " + m_trace.source + " never started";
    }
    os << "replay of " << m_trace.source << " stuck at t=" << Simulator::Now().GetNanoSeconds()
       << " ns: " << m_completed << " of " << m_totalOps << " ops completed\n";
    for (const auto& e : m_errors)
    {
        os << "  error: " << e << "\n";
    }
    uint32_t ranksListed = 0;
    uint32_t ranksStuck = 0;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        const RankState& rs = m_ranks[r];
        if (rs.done == rs.ops.size() || !m_local[r])
        {
            continue;
        }
        ++ranksStuck;
        if (ranksListed >= maxRanks)
        {
            continue;
        }
        ++ranksListed;
        os << "  rank " << r << ": " << rs.ops.size() - rs.done << " ops unfinished; ";
        // The frontier (ready or running, not done) is the cause; waiting ops follow from it.
        std::vector<uint32_t> shown;
        for (uint32_t i = 0; i < rs.ops.size() && shown.size() < maxOpsPerRank; ++i)
        {
            if (rs.ops[i].state != State::Done && rs.ops[i].state != State::Waiting)
            {
                shown.push_back(i);
            }
        }
        for (uint32_t i = 0; i < rs.ops.size() && shown.empty(); ++i)
        {
            if (rs.ops[i].state != State::Done)
            {
                shown.push_back(i);
            }
        }
        for (std::size_t k = 0; k < shown.size(); ++k)
        {
            os << (k ? "; " : "") << Describe(r, shown[k]);
        }
        os << "\n";
    }
    if (ranksStuck > ranksListed)
    {
        os << "  ... and " << ranksStuck - ranksListed << " more ranks\n";
    }
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        for (uint32_t message : m_ranks[r].unexpected)
        {
            const HostMessage& m = m_messages[message];
            const WorkloadOpRef send = m_trace.ops[m.src][m.srcOp];
            os << "  rank " << r << ": the message of '" << send.label << "' (line " << send.line
               << ") from rank " << m.src << " with tag " << send.tag
               << " arrived, no receive took it\n";
        }
    }
    return os.str();
}

} // namespace ns3
