/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// The replay object: attributes, wiring, the per-rank state Start builds, and queries.  The
// rest is in workload-replay-{validation,execution,accounting,stuck-report}.cc.
#include "ns3/workload-replay.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <fnmatch.h>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadReplay");
NS_OBJECT_ENSURE_REGISTERED(WorkloadReplay);

TypeId
WorkloadReplay::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::WorkloadReplay")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<WorkloadReplay>()
            .AddAttribute("IterationMarker",
                          "Glob over op labels; each matching label ends an iteration when its "
                          "last op completed (\"\": the whole trace is one iteration)",
                          StringValue(""),
                          MakeStringAccessor(&WorkloadReplay::m_marker),
                          MakeStringChecker())
            .AddAttribute("ConcurrentCompute",
                          "Compute ops of different streams of one rank may run at once "
                          "(false: the GPU runs one kernel at a time, in ready order)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&WorkloadReplay::m_concurrentCompute),
                          MakeBooleanChecker())
            .AddAttribute("P2pChannel",
                          "GpuTransport channel of send/recv messages (apart from the "
                          "collectives' channels, so they do not queue behind them)",
                          UintegerValue(1u << 20),
                          MakeUintegerAccessor(&WorkloadReplay::m_p2pChannel),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("LogGopsCost",
                          "Host cost of LogGOPS schedules (GOAL): CPU overhead o, O and NIC gap "
                          "g, G per message (null: a LogGopsCost with its defaults)",
                          PointerValue(),
                          MakePointerAccessor(&WorkloadReplay::m_logGops),
                          MakePointerChecker<LogGopsCost>())
            .AddTraceSource("OpBegin",
                            "An op started (compute: its kernel began)",
                            MakeTraceSourceAccessor(&WorkloadReplay::m_opBeginTrace),
                            "ns3::WorkloadReplay::OpBeginTracedCallback")
            .AddTraceSource("OpEnd",
                            "An op completed",
                            MakeTraceSourceAccessor(&WorkloadReplay::m_opEndTrace),
                            "ns3::WorkloadReplay::OpEndTracedCallback");
    return tid;
}

WorkloadReplay::WorkloadReplay()
    : m_concurrentCompute(false),
      m_p2pChannel(1u << 20)
{
}

WorkloadReplay::~WorkloadReplay() = default;

void
WorkloadReplay::DoDispose()
{
    if (m_transport && m_started)
    {
        m_transport->TraceDisconnectWithoutContext(
            "MessageSent",
            MakeCallback(&WorkloadReplay::MessageSent, this));
        m_transport->TraceDisconnectWithoutContext(
            "MessageReceived",
            MakeCallback(&WorkloadReplay::MessageReceived, this));
    }
    m_transport = nullptr;
    m_logGops = nullptr;
    m_engine = nullptr;
    m_frontEnd = nullptr;
    m_db = nullptr;
    Object::DoDispose();
}

void
WorkloadReplay::SetTrace(WorkloadTrace trace)
{
    NS_ABORT_MSG_IF(m_started, "WorkloadReplay::SetTrace after Start");
    m_trace = std::move(trace);
}

const WorkloadTrace&
WorkloadReplay::GetTrace() const
{
    return m_trace;
}

void
WorkloadReplay::SetTransport(Ptr<GpuTransport> transport)
{
    m_transport = transport;
}

void
WorkloadReplay::SetCollectiveEngine(Ptr<CollectiveEngine> engine)
{
    m_engine = engine;
}

void
WorkloadReplay::SetFrontEndTransport(Ptr<FrontEndTransport> frontEnd)
{
    m_frontEnd = frontEnd;
}

void
WorkloadReplay::SetResultsDatabase(Ptr<ResultsDatabase> db)
{
    m_db = db;
}

Ptr<LogGopsCost>
WorkloadReplay::GetLogGopsCost() const
{
    return m_logGops;
}

void
WorkloadReplay::Start()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_started, "WorkloadReplay::Start called twice");
    const ReplayNeeds needs = Validate();
    const WorkloadTrace& t = m_trace;
    const uint32_t n = static_cast<uint32_t>(t.ops.size());
    const bool distributed = m_transport && m_transport->GetNSystems() > 1;

    // Plane names: several planes may share one ("nvlink" per domain).
    if (m_transport)
    {
        for (uint32_t p = 0; p < m_transport->GetNPlanes(); ++p)
        {
            const std::string name = m_transport->GetPlane(p)->GetPlaneName();
            auto it = std::find(m_planeNames.begin(), m_planeNames.end(), name);
            m_planeNameOfIndex.push_back(static_cast<uint32_t>(it - m_planeNames.begin()));
            if (it == m_planeNames.end())
            {
                m_planeNames.push_back(name);
            }
        }
    }
    if (needs.frontEnd)
    {
        m_frontEndPlane = static_cast<int32_t>(m_planeNames.size());
        m_planeNames.push_back("ethernet");
    }

    std::unordered_map<std::string, int32_t> markerIndex;
    m_local.assign(n, true);
    for (uint32_t r = 0; r < n && distributed; ++r)
    {
        m_local[r] = m_transport->IsLocal(r);
    }
    m_ranks.resize(n);
    m_opIdBase.resize(n + 1, 0);
    for (uint32_t r = 0; r < n; ++r)
    {
        const auto ops = t.ops[r];
        RankState& rs = m_ranks[r];
        rs.ops.resize(ops.size());
        rs.planeActive.assign(m_planeNames.size(), 0);
        rs.planeNs.assign(m_planeNames.size(), 0);
        rs.planeExposedNs.assign(m_planeNames.size(), 0);
        rs.program = t.ops.ProgramOf(r);
        if (rs.program >= m_programs.size())
        {
            m_programs.resize(rs.program + 1);
        }
        ProgramState& ps = m_programs[rs.program];
        if (!ps.built)
        {
            // Successors from the program's deps, once for all its ranks.
            const auto& shared = t.ops.GetProgram(rs.program);
            ps.built = true;
            ps.succOffset.assign(shared.size() + 1, 0);
            for (const auto& op : shared)
            {
                for (uint32_t d : op.deps)
                {
                    ++ps.succOffset[d + 1];
                }
            }
            for (std::size_t i = 0; i < shared.size(); ++i)
            {
                ps.succOffset[i + 1] += ps.succOffset[i];
            }
            ps.succ.resize(ps.succOffset.back());
            std::vector<uint32_t> fill(ps.succOffset.begin(), ps.succOffset.end() - 1);
            for (uint32_t i = 0; i < shared.size(); ++i)
            {
                for (uint32_t d : shared[i].deps)
                {
                    ps.succ[fill[d]++] = i;
                }
                if (!m_marker.empty() && fnmatch(m_marker.c_str(), shared[i].label.c_str(), 0) == 0)
                {
                    ps.markerOps.push_back(i);
                }
            }
        }
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOpRef op = ops[i];
            OpState& s = rs.ops[i];
            s.pendingDeps = static_cast<uint32_t>(op.deps.size());
            if (IsCollective(op.kind))
            {
                s.pkind =
                    t.groups[op.group >= 0 ? op.group : t.collectives[op.collective].group].kind;
            }
            else if (IsFrontEnd(op.kind))
            {
                s.pkind = ParallelismKind::FrontEnd;
            }
            else if (op.kind != WorkloadOpKind::Compute)
            {
                s.pkind = ParallelismKind::Pp;
            }
        }
        for (uint32_t i : ps.markerOps)
        {
            if (!m_local[r])
            {
                break;
            }
            const std::string& label = t.ops.GetProgram(rs.program)[i].label;
            auto [it, inserted] =
                markerIndex.emplace(label, static_cast<int32_t>(m_markerLabels.size()));
            if (inserted)
            {
                m_markerLabels.push_back(label);
                m_markerRemaining.push_back(0);
                m_markerEndNs.push_back(-1);
            }
            rs.ops[i].marker = it->second;
            ++m_markerRemaining[it->second];
        }
        m_opIdBase[r + 1] = m_opIdBase[r] + ops.size();
        m_totalOps += m_local[r] ? ops.size() : 0;
    }
    // Start dependencies (irequires): counted with the deps, released by Started().
    for (const auto& d : t.startDeps)
    {
        RankState& rs = m_ranks[d.rank];
        if (rs.startSuccOffset.empty())
        {
            rs.startSuccOffset.assign(rs.ops.size() + 1, 0);
        }
        ++rs.startSuccOffset[d.started + 1];
        ++rs.ops[d.op].pendingDeps;
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        RankState& rs = m_ranks[r];
        if (rs.startSuccOffset.empty())
        {
            continue;
        }
        for (std::size_t i = 0; i < rs.ops.size(); ++i)
        {
            rs.startSuccOffset[i + 1] += rs.startSuccOffset[i];
        }
        rs.startSucc.resize(rs.startSuccOffset.back());
    }
    {
        std::vector<std::vector<uint32_t>> fill(n);
        for (const auto& d : t.startDeps)
        {
            RankState& rs = m_ranks[d.rank];
            if (fill[d.rank].empty())
            {
                fill[d.rank].assign(rs.startSuccOffset.begin(), rs.startSuccOffset.end() - 1);
            }
            rs.startSucc[fill[d.rank][d.started]++] = d.op;
        }
    }
    if (t.logGops)
    {
        if (!m_logGops)
        {
            m_logGops = CreateObject<LogGopsCost>();
        }
        uint32_t cpus = 1;
        uint32_t nics = 1;
        for (const auto& ops : t.ops)
        {
            for (const auto& op : ops)
            {
                cpus = std::max<uint32_t>(cpus, op.cpu + 1u);
                nics = std::max<uint32_t>(nics, op.nic + 1u);
            }
        }
        // Every rank gets every stream: a message is received on its send's CPU and NIC.
        for (RankState& rs : m_ranks)
        {
            rs.cpus.resize(cpus);
            rs.taken.assign(rs.ops.size(), 0);
            rs.nicSendFreeNs.assign(nics, 0);
            rs.nicRecvFreeNs.assign(nics, 0);
        }
    }
    m_collectives.assign(t.collectives.size(), CollectiveState());
    for (uint32_t c = 0; c < t.collectives.size(); ++c)
    {
        CollectiveState& cs = m_collectives[c];
        std::set<uint32_t> others;
        for (const auto& member : t.collectives[c].members)
        {
            if (m_local[member.first])
            {
                ++cs.localMembers;
            }
            else
            {
                others.insert(m_transport->GetSystemOf(member.first));
            }
        }
        cs.others.assign(others.begin(), others.end());
    }

    if (m_transport)
    {
        m_client = m_transport->AddClient(MakeCallback(&WorkloadReplay::Notified, this),
                                          MakeCallback(&WorkloadReplay::Received, this));
        m_transport->TraceConnectWithoutContext("MessageSent",
                                                MakeCallback(&WorkloadReplay::MessageSent, this));
        m_transport->TraceConnectWithoutContext(
            "MessageReceived",
            MakeCallback(&WorkloadReplay::MessageReceived, this));
    }
    m_started = true;
    Simulator::ScheduleNow(&WorkloadReplay::Begin, this);
}

bool
WorkloadReplay::IsComplete() const
{
    return m_started && m_completed == m_totalOps && m_errors.empty() && CountUnexpected() == 0;
}

uint64_t
WorkloadReplay::GetTotalOps() const
{
    return m_totalOps;
}

uint64_t
WorkloadReplay::GetCompletedOps() const
{
    return m_completed;
}

const std::vector<std::string>&
WorkloadReplay::GetErrors() const
{
    return m_errors;
}

uint64_t
WorkloadReplay::GetOpId(uint32_t rank, uint32_t index) const
{
    return m_opIdBase.at(rank) + index;
}

Time
WorkloadReplay::GetOpStart(uint32_t rank, uint32_t index) const
{
    return NanoSeconds(m_ranks.at(rank).ops.at(index).startNs);
}

Time
WorkloadReplay::GetOpEnd(uint32_t rank, uint32_t index) const
{
    return NanoSeconds(m_ranks.at(rank).ops.at(index).endNs);
}

std::pair<int64_t, int64_t>
WorkloadReplay::GetMatchedSend(uint32_t rank, uint32_t index) const
{
    const RankState& rs = m_ranks.at(rank);
    if (index >= rs.taken.size() || rs.taken[index] == 0)
    {
        return {-1, -1};
    }
    const HostMessage& m = m_messages[rs.taken[index] - 1];
    return {m.src, m.srcOp};
}

Time
WorkloadReplay::GetStartTime() const
{
    return NanoSeconds(m_startNs);
}

Time
WorkloadReplay::GetEndTime() const
{
    return NanoSeconds(m_endNs);
}

} // namespace ns3
