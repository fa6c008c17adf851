/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Checking a trace against the cluster it is to run on, before anything is scheduled.

#include "ns3/log.h"
#include "ns3/workload-replay.h"

#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadReplayValidation");

WorkloadReplay::ReplayNeeds
WorkloadReplay::Validate() const
{
    NS_LOG_FUNCTION(this);
    const WorkloadTrace& t = m_trace;
    const uint32_t n = static_cast<uint32_t>(t.ops.size());
    auto bad = [&t](uint32_t r, uint32_t i, const std::string& what) {
        std::ostringstream os;
        os << t.source << ": rank " << r << " op " << i << " ('" << t.ops[r][i].label
           << "'): " << what;
        throw std::invalid_argument(os.str());
    };
    ReplayNeeds needs;
    for (uint32_t r = 0; r < n; ++r)
    {
        const auto& ops = t.ops[r];
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOpRef op = ops[i];
            for (uint32_t d : op.deps)
            {
                if (d >= ops.size() || d == i)
                {
                    bad(r, i, "dependency index " + std::to_string(d) + " out of range");
                }
            }
            if (op.kind == WorkloadOpKind::Send || op.kind == WorkloadOpKind::SendRecv)
            {
                needs.transport = true;
                // A LogGOPS schedule matches its messages at run time.
                const bool paired =
                    t.logGops ||
                    (op.sendPeerOp >= 0 && op.to >= 0 && static_cast<uint32_t>(op.to) < n &&
                     static_cast<uint64_t>(op.sendPeerOp) < t.ops[op.to].size());
                if (op.to < 0 || static_cast<uint32_t>(op.to) >= n || !paired)
                {
                    bad(r, i, "send without a matching receive");
                }
            }
            if (op.kind == WorkloadOpKind::Recv || op.kind == WorkloadOpKind::SendRecv)
            {
                needs.transport = true;
                const bool anySource =
                    t.logGops && op.kind == WorkloadOpKind::Recv && op.from == -1;
                if (!anySource && (op.from < 0 || static_cast<uint32_t>(op.from) >= n))
                {
                    bad(r, i, "receive without a valid source rank");
                }
            }
            if (t.logGops && (op.cpu > 0 || op.nic > 0) && op.kind != WorkloadOpKind::Compute &&
                op.kind != WorkloadOpKind::Send && op.kind != WorkloadOpKind::Recv)
            {
                bad(r, i, "only compute, send and recv ops run on CPU and NIC streams");
            }
            if (IsFrontEnd(op.kind))
            {
                needs.frontEnd = true;
                if (m_frontEnd && (op.storage < 0 ||
                                   static_cast<uint32_t>(op.storage) >= m_frontEnd->GetNStorage()))
                {
                    bad(r,
                        i,
                        "storage" + std::to_string(op.storage) +
                            " does not exist (the front-end "
                            "has " +
                            std::to_string(m_frontEnd->GetNStorage()) + " storage node(s))");
                }
                if (m_frontEnd && !m_frontEnd->HasRank(r))
                {
                    bad(r, i, "the front-end has no GPU for this rank");
                }
            }
            if (IsCollective(op.kind))
            {
                needs.engine = true;
                if (op.collective < 0 ||
                    static_cast<uint64_t>(op.collective) >= t.collectives.size())
                {
                    bad(r, i, "collective index out of range");
                }
            }
        }
    }
    for (const auto& c : t.collectives)
    {
        for (const auto& [r, i] : c.members)
        {
            if (r >= n || i >= t.ops[r].size())
            {
                throw std::invalid_argument(t.source + ": collective '" + c.label +
                                            "' has a member outside the trace");
            }
        }
        if (c.group < 0 || static_cast<std::size_t>(c.group) >= t.groups.size())
        {
            throw std::invalid_argument(t.source + ": collective '" + c.label + "' has no group");
        }
    }
    for (const auto& d : t.startDeps)
    {
        if (d.rank >= n || d.op >= t.ops[d.rank].size() || d.started >= t.ops[d.rank].size())
        {
            throw std::invalid_argument(t.source + ": start dependency outside the trace");
        }
    }
    const bool distributed = m_transport && m_transport->GetNSystems() > 1;
    if (distributed && t.logGops)
    {
        throw std::invalid_argument(t.source +
                                    ": a LogGOPS schedule does not run split over MPI processes "
                                    "(its receives match messages at run time, in one process)");
    }
    if (distributed && needs.frontEnd)
    {
        throw std::invalid_argument(t.source +
                                    ": load and checkpoint ops do not run split over MPI "
                                    "processes (the front-end is simulated by process 0 only)");
    }
    if (needs.transport && !m_transport)
    {
        throw std::invalid_argument("WorkloadReplay: the trace sends messages but no "
                                    "GpuTransport is set");
    }
    if (needs.engine && !m_engine)
    {
        throw std::invalid_argument("WorkloadReplay: the trace has collectives but no "
                                    "CollectiveEngine is set");
    }
    if (needs.frontEnd && !m_frontEnd)
    {
        throw std::invalid_argument("WorkloadReplay: the trace has load or checkpoint ops but "
                                    "no FrontEndTransport is set");
    }
    if (m_transport)
    {
        for (uint32_t r = 0; r < n; ++r)
        {
            if (!t.ops[r].empty() && !m_transport->HasRank(r))
            {
                throw std::invalid_argument(
                    t.source + ": the trace needs " + std::to_string(t.numRanks) +
                    " ranks but the transport has no rank " + std::to_string(r));
            }
        }
    }
    return needs;
}

} // namespace ns3
