/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/workload-replay.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
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

const char*
ParallelismKindName(ParallelismKind kind)
{
    switch (kind)
    {
    case ParallelismKind::Tp:
        return "TP";
    case ParallelismKind::Pp:
        return "PP";
    case ParallelismKind::Dp:
        return "DP";
    case ParallelismKind::Ep:
        return "EP";
    case ParallelismKind::FrontEnd:
        return "front-end";
    case ParallelismKind::Other:
        break;
    }
    return "other";
}

ParallelismKind
ParallelismKindOfGroup(const std::string& groupName)
{
    auto starts = [&groupName](const char* prefix) { return groupName.rfind(prefix, 0) == 0; };
    // "dpep"/"xdp" (expert-data-parallel) reduce gradients: DP.
    if (starts("tp"))
    {
        return ParallelismKind::Tp;
    }
    if (starts("pp"))
    {
        return ParallelismKind::Pp;
    }
    if (starts("dp") || starts("xdp"))
    {
        return ParallelismKind::Dp;
    }
    if (starts("ep"))
    {
        return ParallelismKind::Ep;
    }
    return ParallelismKind::Other;
}

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

void
WorkloadReplay::Start()
{
    NS_ABORT_MSG_IF(m_started, "WorkloadReplay::Start called twice");
    const WorkloadTrace& t = m_trace;
    const uint32_t n = static_cast<uint32_t>(t.ops.size());
    auto bad = [&t](uint32_t r, uint32_t i, const std::string& what) {
        std::ostringstream os;
        os << t.source << ": rank " << r << " op " << i << " ('" << t.ops[r][i].label
           << "'): " << what;
        throw std::invalid_argument(os.str());
    };
    bool needTransport = false;
    bool needEngine = false;
    bool needFrontEnd = false;
    for (uint32_t r = 0; r < n; ++r)
    {
        const auto& ops = t.ops[r];
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOp& op = ops[i];
            for (uint32_t d : op.deps)
            {
                if (d >= ops.size() || d == i)
                {
                    bad(r, i, "dependency index " + std::to_string(d) + " out of range");
                }
            }
            if (op.kind == WorkloadOpKind::Send || op.kind == WorkloadOpKind::SendRecv)
            {
                needTransport = true;
                if (op.to < 0 || static_cast<uint32_t>(op.to) >= n || op.sendPeerOp < 0 ||
                    static_cast<uint64_t>(op.sendPeerOp) >= t.ops[op.to].size())
                {
                    bad(r, i, "send without a matching receive");
                }
            }
            if (op.kind == WorkloadOpKind::Recv || op.kind == WorkloadOpKind::SendRecv)
            {
                needTransport = true;
                if (op.from < 0 || static_cast<uint32_t>(op.from) >= n)
                {
                    bad(r, i, "receive without a valid source rank");
                }
            }
            if (IsFrontEnd(op.kind))
            {
                needFrontEnd = true;
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
                needEngine = true;
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
    const bool distributed = m_transport && m_transport->GetNSystems() > 1;
    if (distributed && needFrontEnd)
    {
        throw std::invalid_argument(t.source +
                                    ": load and checkpoint ops do not run split over MPI "
                                    "processes (the front-end is simulated by process 0 only)");
    }
    if (needTransport && !m_transport)
    {
        throw std::invalid_argument("WorkloadReplay: the trace sends messages but no "
                                    "GpuTransport is set");
    }
    if (needEngine && !m_engine)
    {
        throw std::invalid_argument("WorkloadReplay: the trace has collectives but no "
                                    "CollectiveEngine is set");
    }
    if (needFrontEnd && !m_frontEnd)
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
    if (needFrontEnd)
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
        const auto& ops = t.ops[r];
        RankState& rs = m_ranks[r];
        rs.ops.resize(ops.size());
        rs.planeActive.assign(m_planeNames.size(), 0);
        rs.planeNs.assign(m_planeNames.size(), 0);
        rs.planeExposedNs.assign(m_planeNames.size(), 0);
        rs.succOffset.assign(ops.size() + 1, 0);
        for (const auto& op : ops)
        {
            for (uint32_t d : op.deps)
            {
                ++rs.succOffset[d + 1];
            }
        }
        for (std::size_t i = 0; i < ops.size(); ++i)
        {
            rs.succOffset[i + 1] += rs.succOffset[i];
        }
        rs.succ.resize(rs.succOffset.back());
        std::vector<uint32_t> fill(rs.succOffset.begin(), rs.succOffset.end() - 1);
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOp& op = ops[i];
            OpState& s = rs.ops[i];
            for (uint32_t d : op.deps)
            {
                rs.succ[fill[d]++] = i;
            }
            s.pendingDeps = static_cast<uint32_t>(op.deps.size());
            if (IsCollective(op.kind))
            {
                s.pkind = ParallelismKindOfGroup(
                    t.groups[op.group >= 0 ? op.group : t.collectives[op.collective].group].name);
            }
            else if (IsFrontEnd(op.kind))
            {
                s.pkind = ParallelismKind::FrontEnd;
            }
            else if (op.kind != WorkloadOpKind::Compute)
            {
                s.pkind = ParallelismKind::Pp;
            }
            if (m_local[r] && !m_marker.empty() &&
                fnmatch(m_marker.c_str(), op.label.c_str(), 0) == 0)
            {
                auto [it, inserted] =
                    markerIndex.emplace(op.label, static_cast<int32_t>(m_markerLabels.size()));
                if (inserted)
                {
                    m_markerLabels.push_back(op.label);
                    m_markerRemaining.push_back(0);
                    m_markerEndNs.push_back(-1);
                }
                s.marker = it->second;
                ++m_markerRemaining[it->second];
            }
        }
        m_opIdBase[r + 1] = m_opIdBase[r] + ops.size();
        m_totalOps += m_local[r] ? ops.size() : 0;
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

void
WorkloadReplay::Begin()
{
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
WorkloadReplay::Account(uint32_t rank)
{
    RankState& rs = m_ranks[rank];
    const int64_t now = Simulator::Now().GetNanoSeconds();
    const uint64_t dt = static_cast<uint64_t>(now - rs.lastChangeNs);
    rs.lastChangeNs = now;
    if (dt == 0)
    {
        return;
    }
    ReplayBreakdown& b = rs.breakdown;
    const bool computing = rs.computeRunning > 0;
    if (computing)
    {
        b.computeNs += dt;
    }
    bool moving = false;
    for (std::size_t p = 0; p < rs.planeActive.size(); ++p)
    {
        if (rs.planeActive[p] > 0)
        {
            moving = true;
            rs.planeNs[p] += dt;
            if (!computing)
            {
                rs.planeExposedNs[p] += dt;
            }
        }
    }
    if (rs.commRunningAny > 0)
    {
        const bool waiting = !computing && !moving;
        b.commNs += dt;
        if (!computing)
        {
            b.exposedCommNs += dt;
        }
        if (waiting)
        {
            b.waitingNs += dt;
        }
        for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
        {
            if (rs.commRunning[k] > 0)
            {
                b.commByKindNs[k] += dt;
                if (!computing)
                {
                    b.exposedByKindNs[k] += dt;
                }
                if (waiting)
                {
                    b.waitingByKindNs[k] += dt;
                }
            }
        }
    }
}

void
WorkloadReplay::StartOp(uint32_t rank, uint32_t index)
{
    const WorkloadOp& op = m_trace.ops[rank][index];
    RankState& rs = m_ranks[rank];
    OpState& s = rs.ops[index];
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
    NS_LOG_DEBUG("rank " << rank << " starts " << op.label);
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
    RankState& rs = m_ranks[rank];
    Account(rank);
    ++rs.computeRunning;
    OpState& s = rs.ops[index];
    s.state = State::Running;
    s.startNs = Simulator::Now().GetNanoSeconds();
    const WorkloadOp& op = m_trace.ops[rank][index];
    m_opBeginTrace(rank, index, op.label);
    Simulator::Schedule(NanoSeconds(op.timeNs), &WorkloadReplay::ComputeDone, this, rank, index);
}

void
WorkloadReplay::ComputeDone(uint32_t rank, uint32_t index)
{
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
    // The members learn that the last of them arrived by its notification.
    Ptr<GpuTransport> t = m_engine ? m_engine->GetTransport() : nullptr;
    const Time start = NanoSeconds(cs.lastReadyNs) + (t ? t->GetNotificationLatency() : Time(0));
    Simulator::Schedule(start - Simulator::Now(), &WorkloadReplay::StartCollective, this, c);
}

void
WorkloadReplay::Received(uint64_t key)
{
    Arrived(static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key & 0xffffffff));
}

void
WorkloadReplay::StartCollective(uint32_t c)
{
    const WorkloadCollective& coll = m_trace.collectives[c];
    m_collectives[c].started = true;
    const auto& [firstRank, firstIndex] = coll.members.front();
    const WorkloadOp& first = m_trace.ops[firstRank][firstIndex];
    CollectiveSpec spec;
    spec.kind = WorkloadOpKindName(coll.kind);
    spec.algorithm = first.algorithm.empty() ? "auto" : first.algorithm;
    spec.bytes = coll.bytes;
    spec.groupName = m_trace.groups[coll.group].name;
    spec.ranks.reserve(coll.members.size());
    for (const auto& member : coll.members)
    {
        spec.ranks.push_back(member.first);
    }
    spec.root = first.root >= 0 ? static_cast<uint32_t>(first.root) : firstRank;
    try
    {
        if (m_engine->ResolveAlgorithm(spec) == "nvls" && m_transport)
        {
            for (uint32_t p = 0; p < m_transport->GetNPlanes(); ++p)
            {
                Ptr<TransportPlane> plane = m_transport->GetPlane(p);
                auto* inSwitch = dynamic_cast<InSwitchReductionPlane*>(PeekPointer(plane));
                if (inSwitch && inSwitch->CanReduceInSwitch(spec.ranks))
                {
                    m_collectives[c].inSwitchPlane = static_cast<int32_t>(m_planeNameOfIndex[p]);
                    break;
                }
            }
        }
        m_engine->Start(spec,
                        CollectiveEngine::DoneCallback(
                            [this, c](const CollectiveResult&) { CollectiveDone(c); }),
                        c);
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
    m_ranks[rank].ops[index].arrived = true;
    MaybeFinishP2p(rank, index);
}

void
WorkloadReplay::FrontEndDone(uint32_t rank, uint32_t index)
{
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
    RankState& rs = m_ranks[rank];
    OpState& s = rs.ops[index];
    const WorkloadOp& op = m_trace.ops[rank][index];
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
    if (m_db)
    {
        OpRecord row;
        row.rank = rank;
        row.opId = static_cast<int64_t>(GetOpId(rank, index));
        row.label = op.label;
        row.kind = WorkloadOpKindName(op.kind);
        row.startNs = s.startNs;
        row.endNs = now;
        m_db->AddOp(row);
    }
    m_opEndTrace(rank, index, op.label, NanoSeconds(now - s.startNs));
    NS_LOG_DEBUG("rank " << rank << " done " << op.label);
    for (uint32_t k = rs.succOffset[index]; k < rs.succOffset[index + 1]; ++k)
    {
        if (--rs.ops[rs.succ[k]].pendingDeps == 0)
        {
            m_readyQueue.emplace_back(rank, rs.succ[k]);
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

void
WorkloadReplay::MessageSent(uint64_t, uint32_t src, uint32_t dst, uint64_t)
{
    PlaneChange(src, dst, +1);
}

void
WorkloadReplay::MessageReceived(uint64_t, uint32_t src, uint32_t dst, uint64_t, Time)
{
    PlaneChange(src, dst, -1);
}

void
WorkloadReplay::PlaneChange(uint32_t src, uint32_t dst, int delta)
{
    const int32_t plane = m_transport->SelectPlane(src, dst);
    if (plane < 0 || static_cast<uint32_t>(plane) >= m_planeNameOfIndex.size())
    {
        return;
    }
    const uint32_t p = m_planeNameOfIndex[plane];
    for (uint32_t r : {src, dst})
    {
        if (r < m_ranks.size() && m_local[r])
        {
            Account(r);
            m_ranks[r].planeActive[p] += delta;
        }
    }
}

void
WorkloadReplay::InSwitchChange(uint32_t c, int delta)
{
    const int32_t p = m_collectives[c].inSwitchPlane;
    if (p < 0)
    {
        return;
    }
    for (const auto& member : m_trace.collectives[c].members)
    {
        if (m_local[member.first])
        {
            Account(member.first);
            m_ranks[member.first].planeActive[p] += delta;
        }
    }
}

bool
WorkloadReplay::IsComplete() const
{
    return m_started && m_completed == m_totalOps && m_errors.empty();
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

std::vector<Time>
WorkloadReplay::GetIterationTimes() const
{
    std::vector<Time> out;
    if (m_marker.empty())
    {
        if (IsComplete())
        {
            out.push_back(NanoSeconds(m_endNs - m_startNs));
        }
        return out;
    }
    std::vector<int64_t> ends;
    for (std::size_t m = 0; m < m_markerLabels.size(); ++m)
    {
        if (m_markerRemaining[m] == 0)
        {
            ends.push_back(m_markerEndNs[m]);
        }
    }
    std::sort(ends.begin(), ends.end());
    int64_t previous = m_startNs;
    for (int64_t e : ends)
    {
        out.push_back(NanoSeconds(e - previous));
        previous = e;
    }
    return out;
}

std::vector<std::string>
WorkloadReplay::GetIterationMarkers() const
{
    std::vector<std::pair<int64_t, std::string>> done;
    for (std::size_t m = 0; m < m_markerLabels.size(); ++m)
    {
        if (m_markerRemaining[m] == 0)
        {
            done.emplace_back(m_markerEndNs[m], m_markerLabels[m]);
        }
    }
    std::sort(done.begin(), done.end());
    std::vector<std::string> out;
    for (auto& d : done)
    {
        out.push_back(std::move(d.second));
    }
    return out;
}

ReplayBreakdown
WorkloadReplay::GetBreakdown(uint32_t rank) const
{
    const RankState& rs = m_ranks.at(rank);
    ReplayBreakdown b = rs.breakdown;
    for (std::size_t p = 0; p < m_planeNames.size(); ++p)
    {
        b.commByPlaneNs[m_planeNames[p]] += rs.planeNs[p];
        b.exposedByPlaneNs[m_planeNames[p]] += rs.planeExposedNs[p];
    }
    return b;
}

ReplayBreakdown
WorkloadReplay::GetMeanBreakdown() const
{
    ReplayBreakdown sum;
    uint64_t n = 0;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        if (m_ranks[r].ops.empty() || !m_local[r])
        {
            continue;
        }
        ++n;
        const ReplayBreakdown b = GetBreakdown(r);
        sum.computeNs += b.computeNs;
        sum.commNs += b.commNs;
        sum.exposedCommNs += b.exposedCommNs;
        sum.waitingNs += b.waitingNs;
        for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
        {
            sum.commByKindNs[k] += b.commByKindNs[k];
            sum.exposedByKindNs[k] += b.exposedByKindNs[k];
            sum.waitingByKindNs[k] += b.waitingByKindNs[k];
        }
        for (const auto& [name, ns] : b.commByPlaneNs)
        {
            sum.commByPlaneNs[name] += ns;
        }
        for (const auto& [name, ns] : b.exposedByPlaneNs)
        {
            sum.exposedByPlaneNs[name] += ns;
        }
    }
    if (n == 0)
    {
        return sum;
    }
    auto div = [n](uint64_t v) { return (v + n / 2) / n; };
    sum.computeNs = div(sum.computeNs);
    sum.commNs = div(sum.commNs);
    sum.exposedCommNs = div(sum.exposedCommNs);
    sum.waitingNs = div(sum.waitingNs);
    for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
    {
        sum.commByKindNs[k] = div(sum.commByKindNs[k]);
        sum.exposedByKindNs[k] = div(sum.exposedByKindNs[k]);
        sum.waitingByKindNs[k] = div(sum.waitingByKindNs[k]);
    }
    for (auto& [name, ns] : sum.commByPlaneNs)
    {
        ns = div(ns);
    }
    for (auto& [name, ns] : sum.exposedByPlaneNs)
    {
        ns = div(ns);
    }
    return sum;
}

std::string
WorkloadReplay::Describe(uint32_t rank, uint32_t index) const
{
    const WorkloadOp& op = m_trace.ops[rank][index];
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
        os << " queued for the GPU";
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
    return os.str();
}

} // namespace ns3
