/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// From the ops the front ends collected to a consistent WorkloadTrace: labels resolved into
// dependencies, collectives and send/recv matched, cycles refused.

#include "ns3/log.h"
#include "ns3/workload-trace.h"

#include <algorithm>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadTraceBuilder");

namespace
{
uint32_t g_maxRanks = 1000000;

// What ranks share: everything but the source position and what Build resolves.
uint64_t
HashOp(const WorkloadOp& op)
{
    uint64_t h = std::hash<std::string>()(op.label);
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001B3ULL + (h >> 29); };
    mix(op.timeNs);
    mix(op.bytes);
    mix(op.stream);
    mix(static_cast<uint32_t>(op.group));
    mix(static_cast<uint32_t>(op.to));
    mix(static_cast<uint32_t>(op.from));
    mix(static_cast<uint32_t>(op.root));
    mix(static_cast<uint16_t>(op.storage));
    mix(static_cast<uint64_t>(op.kind) << 8 | static_cast<uint64_t>(op.algorithm));
    for (const auto& a : op.after)
    {
        mix(std::hash<std::string>()(a));
    }
    mix(op.tag);
    mix(uint64_t(op.cpu) << 24 | uint64_t(op.nic) << 16 | uint64_t(op.anyTag) << 8 |
        uint64_t(op.unpaired));
    return h;
}

bool
SameOp(const WorkloadOp& a, const WorkloadOp& b)
{
    return a.label == b.label && a.timeNs == b.timeNs && a.bytes == b.bytes &&
           a.stream == b.stream && a.group == b.group && a.to == b.to && a.from == b.from &&
           a.root == b.root && a.storage == b.storage && a.kind == b.kind &&
           a.algorithm == b.algorithm && a.after == b.after && a.collective == b.collective &&
           a.sendPeerOp == b.sendPeerOp && a.recvPeerOp == b.recvPeerOp && a.tag == b.tag &&
           a.cpu == b.cpu && a.nic == b.nic && a.anyTag == b.anyTag && a.unpaired == b.unpaired;
}

uint64_t g_maxOps = 20000000;
} // namespace

void
WorkloadTraceBuilder::SetLimits(uint32_t maxRanks, uint64_t maxOps)
{
    g_maxRanks = maxRanks;
    g_maxOps = maxOps;
}

uint32_t
WorkloadTraceBuilder::GetMaxRanks()
{
    return g_maxRanks;
}

uint64_t
WorkloadTraceBuilder::GetMaxOps()
{
    return g_maxOps;
}

WorkloadTraceBuilder::WorkloadTraceBuilder(std::string source)
{
    m_trace.source = std::move(source);
}

void
WorkloadTraceBuilder::Fail(uint32_t line, const std::string& field, const std::string& message)
{
    throw WorkloadError(m_trace.source, line, field, message);
}

void
WorkloadTraceBuilder::SetNumRanks(uint32_t ranks, uint32_t line)
{
    if (m_haveRanks)
    {
        Fail(line, "ranks", "rank count given twice");
    }
    if (ranks == 0 || ranks > g_maxRanks)
    {
        Fail(line,
             "ranks",
             "expected 1 to " + std::to_string(g_maxRanks) + " ranks, got " +
                 std::to_string(ranks));
    }
    m_haveRanks = true;
    m_trace.numRanks = ranks;
    m_trace.ops.resize(ranks);
    m_sequence.assign(ranks, {});
    m_lastStatement.assign(ranks, -1);
}

uint32_t
WorkloadTraceBuilder::GetNumRanks() const
{
    return m_trace.numRanks;
}

int32_t
WorkloadTraceBuilder::AddGroup(const std::string& name, std::vector<uint32_t> ranks, uint32_t line)
{
    return AddGroup(name, std::move(ranks), line, ParallelismKindOfGroup(name));
}

int32_t
WorkloadTraceBuilder::AddGroup(const std::string& name,
                               std::vector<uint32_t> ranks,
                               uint32_t line,
                               ParallelismKind kind)
{
    if (m_groupIndex.count(name))
    {
        Fail(line, "group", "group '" + name + "' defined twice");
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (ranks.empty() || ranks.back() >= m_trace.numRanks)
    {
        Fail(line,
             "group",
             "group '" + name + "' has ranks outside 0.." + std::to_string(m_trace.numRanks));
    }
    const auto index = static_cast<int32_t>(m_trace.groups.size());
    m_trace.groups.push_back({name, std::move(ranks), kind});
    m_groupIndex[name] = index;
    return index;
}

int32_t
WorkloadTraceBuilder::FindGroup(const std::string& name) const
{
    auto it = m_groupIndex.find(name);
    return it == m_groupIndex.end() ? -1 : it->second;
}

const WorkloadGroup&
WorkloadTraceBuilder::GetGroup(int32_t index) const
{
    return m_trace.groups.at(index);
}

void
WorkloadTraceBuilder::AddOp(uint32_t rank, WorkloadOp op)
{
    if (rank >= m_trace.numRanks)
    {
        Fail(op.line, "ranks", "rank " + std::to_string(rank) + " out of range");
    }
    if (++m_opCount > g_maxOps)
    {
        Fail(op.line, "", "trace expands to more than " + std::to_string(g_maxOps) + " ops");
    }
    // Build resolves these per program and rank.
    op.deps.clear();
    op.collective = -1;
    op.sendPeerOp = -1;
    op.recvPeerOp = -1;
    WorkloadOp e = WorkloadOpTable::Encode(rank, op, m_trace.ops.m_ranks[rank]);
    // Shared with an equal op of another rank (line and statement aside) whose statement
    // is after this rank's last one: a rank's statements keep increasing (the printer relies
    // on it), and two ops of one rank are never one.
    const uint64_t h = HashOp(e);
    auto [lo, hi] = m_poolIndex.equal_range(h);
    uint32_t id = UINT32_MAX;
    for (auto it = lo; it != hi; ++it)
    {
        const WorkloadOp& c = m_pool[it->second];
        if (static_cast<int64_t>(c.statement) > m_lastStatement[rank] && SameOp(c, e))
        {
            id = it->second;
            break;
        }
    }
    if (id == UINT32_MAX)
    {
        id = static_cast<uint32_t>(m_pool.size());
        m_pool.push_back(std::move(e));
        m_poolIndex.emplace(h, id);
    }
    m_sequence[rank].push_back(id);
    m_lastStatement[rank] = m_pool[id].statement;
}

void
WorkloadTraceBuilder::ReserveOps(const std::vector<uint64_t>& perRank)
{
    for (std::size_t r = 0; r < perRank.size() && r < m_sequence.size(); ++r)
    {
        m_sequence[r].reserve(perRank[r]);
    }
}

void
WorkloadTraceBuilder::AddWarning(uint32_t line, const std::string& text)
{
    if (m_trace.warnings.size() < 100)
    {
        m_trace.warnings.push_back(m_trace.source + ":" + std::to_string(line) + ": " + text);
    }
}

void
WorkloadTraceBuilder::AddStartDependency(uint32_t rank,
                                         uint32_t op,
                                         uint32_t started,
                                         uint32_t line)
{
    if (rank >= m_trace.numRanks || op >= m_sequence[rank].size() ||
        started >= m_sequence[rank].size())
    {
        Fail(line, "irequires", "op index out of range on rank " + std::to_string(rank));
    }
    if (op == started)
    {
        Fail(line,
             "irequires",
             "dependency cycle: '" + m_pool[m_sequence[rank][op]].label +
                 "' waits for its own start");
    }
    m_trace.startDeps.push_back({rank, op, started, line});
}

void
WorkloadTraceBuilder::SetLogGops()
{
    m_trace.logGops = true;
}

WorkloadTrace
WorkloadTraceBuilder::Build()
{
    if (!m_haveRanks)
    {
        Fail(0, "ranks", "no rank count given");
    }
    FormPrograms();
    ResolveDependencies();
    std::sort(m_trace.startDeps.begin(),
              m_trace.startDeps.end(),
              [](const WorkloadStartDependency& a, const WorkloadStartDependency& b) {
                  return std::tie(a.rank, a.op, a.started) < std::tie(b.rank, b.op, b.started);
              });
    MatchCollectives();
    MatchPointToPoint();
    CheckAcyclic();
    NS_LOG_INFO(m_trace.source << ": " << m_trace.numRanks << " ranks, " << m_trace.CountOps()
                               << " ops in " << m_trace.ops.CountPrograms() << " programs, "
                               << m_trace.collectives.size() << " collectives");
    return std::move(m_trace);
}

void
WorkloadTraceBuilder::FormPrograms()
{
    WorkloadOpTable& table = m_trace.ops;
    table.m_programs.clear();
    table.m_sharers.clear();
    std::vector<uint32_t> first; // per program: its first rank (whose sequence is kept)
    std::unordered_multimap<uint64_t, uint32_t> byHash;
    for (uint32_t rank = 0; rank < m_trace.numRanks; ++rank)
    {
        const auto& seq = m_sequence[rank];
        uint64_t h = seq.size();
        for (uint32_t id : seq)
        {
            h = h * 0x9E3779B97F4A7C15ULL + id + 1;
        }
        auto [lo, hi] = byHash.equal_range(h);
        auto it =
            std::find_if(lo, hi, [&](const auto& p) { return m_sequence[first[p.second]] == seq; });
        uint32_t program;
        if (it != hi)
        {
            program = it->second;
        }
        else
        {
            program = static_cast<uint32_t>(table.m_programs.size());
            std::vector<WorkloadOp> ops;
            ops.reserve(seq.size());
            for (uint32_t id : seq)
            {
                ops.push_back(m_pool[id]);
            }
            table.m_programs.push_back(std::move(ops));
            table.m_sharers.push_back(0);
            first.push_back(rank);
            byHash.emplace(h, program);
        }
        table.m_ranks[rank].program = program;
        ++table.m_sharers[program];
    }
    std::vector<WorkloadOp>().swap(m_pool);
    m_poolIndex.clear();
    std::vector<std::vector<uint32_t>>().swap(m_sequence);
}

WorkloadOp&
WorkloadTraceBuilder::SharedOp(uint32_t rank, uint32_t index)
{
    return m_trace.ops.m_programs[m_trace.ops.m_ranks[rank].program][index];
}

void
WorkloadTraceBuilder::ResolveDependencies()
{
    // Per program: its ranks have the same labels and streams.  Errors name its first rank.
    std::vector<bool> done(m_trace.ops.m_programs.size(), false);
    for (uint32_t rank = 0; rank < m_trace.numRanks; ++rank)
    {
        const uint32_t program = m_trace.ops.m_ranks[rank].program;
        if (done[program])
        {
            continue;
        }
        done[program] = true;
        auto& ops = m_trace.ops.m_programs[program];
        std::unordered_map<std::string, uint32_t> byLabel;
        byLabel.reserve(ops.size());
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            auto [it, fresh] = byLabel.emplace(ops[i].label, i);
            if (!fresh)
            {
                Fail(ops[i].line,
                     "label",
                     "duplicate label '" + ops[i].label + "' on rank " + std::to_string(rank) +
                         " (first used at line " + std::to_string(ops[it->second].line) + ")");
            }
        }
        std::unordered_map<uint32_t, uint32_t> lastOnStream;
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            auto& op = ops[i];
            op.deps.clear();
            auto prev = lastOnStream.find(op.stream);
            if (prev != lastOnStream.end())
            {
                op.deps.push_back(prev->second);
            }
            lastOnStream[op.stream] = i;
            for (const auto& label : op.after)
            {
                auto it = byLabel.find(label);
                if (it == byLabel.end())
                {
                    Fail(op.line,
                         "after",
                         "unknown label '" + label + "' on rank " + std::to_string(rank));
                }
                if (it->second == i)
                {
                    Fail(op.line, "after", "dependency cycle: '" + label + "' waits for itself");
                }
                if (std::find(op.deps.begin(), op.deps.end(), it->second) == op.deps.end())
                {
                    op.deps.push_back(it->second);
                }
            }
        }
    }
}

void
WorkloadTraceBuilder::MatchCollectives()
{
    std::map<std::pair<int32_t, std::string>, size_t> index;
    for (uint32_t rank = 0; rank < m_trace.numRanks; ++rank)
    {
        const auto ops = m_trace.ops[rank];
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOpRef op = ops[i];
            if (!IsCollective(op.kind))
            {
                continue;
            }
            if (op.group < 0 || op.group >= static_cast<int32_t>(m_trace.groups.size()))
            {
                Fail(op.line, "group", "collective '" + op.label + "' needs group=NAME");
            }
            const auto& group = m_trace.groups[op.group];
            if (!std::binary_search(group.ranks.begin(), group.ranks.end(), rank))
            {
                Fail(op.line,
                     "group",
                     "rank " + std::to_string(rank) + " is not a member of group '" + group.name +
                         "'");
            }
            if (op.root >= 0 &&
                !std::binary_search(group.ranks.begin(), group.ranks.end(), op.root))
            {
                Fail(op.line,
                     "root",
                     "root " + std::to_string(op.root) + " is not a member of group '" +
                         group.name + "'");
            }
            auto key = std::make_pair(op.group, op.label);
            auto it = index.find(key);
            if (it == index.end())
            {
                it = index.emplace(key, m_trace.collectives.size()).first;
                m_trace.collectives.push_back({op.kind, op.group, op.label, op.bytes, {}});
            }
            auto& coll = m_trace.collectives[it->second];
            const auto& first = m_trace.ops[coll.members.empty() ? rank : coll.members[0].first]
                                           [coll.members.empty() ? i : coll.members[0].second];
            if (coll.kind != op.kind)
            {
                Fail(op.line,
                     "op",
                     "collective '" + op.label + "' on group '" + group.name + "' is " +
                         WorkloadOpKindName(coll.kind) + " at line " + std::to_string(first.line) +
                         " but " + WorkloadOpKindName(op.kind) + " here");
            }
            if (coll.bytes != op.bytes)
            {
                Fail(op.line,
                     "bytes",
                     "collective '" + op.label + "' on group '" + group.name + "' has " +
                         std::to_string(coll.bytes) + " bytes at line " +
                         std::to_string(first.line) + " but " + std::to_string(op.bytes) + " here");
            }
            if (op.root != first.root)
            {
                Fail(op.line,
                     "root",
                     "collective '" + op.label + "' has a different root at line " +
                         std::to_string(first.line));
            }
            m_trace.ops.m_ranks[rank].collectives[SharedOp(rank, i).collective] =
                static_cast<int64_t>(it->second);
            coll.members.emplace_back(rank, i);
        }
    }
    for (const auto& coll : m_trace.collectives)
    {
        const auto& group = m_trace.groups[coll.group];
        if (coll.members.size() == group.ranks.size())
        {
            continue;
        }
        const auto& first = m_trace.ops[coll.members[0].first][coll.members[0].second];
        for (size_t k = 0; k < group.ranks.size(); ++k)
        {
            if (k >= coll.members.size() || coll.members[k].first != group.ranks[k])
            {
                Fail(first.line,
                     "label",
                     std::string(WorkloadOpKindName(coll.kind)) + " '" + coll.label +
                         "' on group '" + group.name + "': member rank " +
                         std::to_string(group.ranks[k]) + " never reaches it");
            }
        }
    }
}

void
WorkloadTraceBuilder::MatchPointToPoint()
{
    struct Key
    {
        uint32_t from;
        uint32_t to;
        const std::string* label;

        bool operator<(const Key& o) const
        {
            if (from != o.from)
            {
                return from < o.from;
            }
            if (to != o.to)
            {
                return to < o.to;
            }
            return *label < *o.label;
        }
    };

    std::map<Key, uint32_t> sends;
    const auto n = static_cast<int32_t>(m_trace.numRanks);
    for (uint32_t rank = 0; rank < m_trace.numRanks; ++rank)
    {
        const auto ops = m_trace.ops[rank];
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOpRef op = ops[i];
            const bool sends_ =
                op.kind == WorkloadOpKind::Send || op.kind == WorkloadOpKind::SendRecv;
            const bool recvs =
                op.kind == WorkloadOpKind::Recv || op.kind == WorkloadOpKind::SendRecv;
            if (sends_ && (op.to < 0 || op.to >= n || op.to == static_cast<int32_t>(rank)))
            {
                Fail(op.line,
                     "to",
                     "expected a destination rank other than " + std::to_string(rank) + " below " +
                         std::to_string(n) + ", got " + std::to_string(op.to));
            }
            const bool anySource = op.unpaired && op.kind == WorkloadOpKind::Recv && op.from == -1;
            if (recvs && !anySource &&
                (op.from < 0 || op.from >= n || op.from == static_cast<int32_t>(rank)))
            {
                Fail(op.line,
                     "from",
                     "expected a source rank other than " + std::to_string(rank) + " below " +
                         std::to_string(n) + ", got " + std::to_string(op.from));
            }
            if (sends_ && !op.unpaired)
            {
                sends.emplace(Key{rank, static_cast<uint32_t>(op.to), &op.label}, i);
            }
        }
    }
    for (uint32_t rank = 0; rank < m_trace.numRanks; ++rank)
    {
        const auto ops = m_trace.ops[rank];
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            const WorkloadOpRef op = ops[i];
            if ((op.kind != WorkloadOpKind::Recv && op.kind != WorkloadOpKind::SendRecv) ||
                op.unpaired)
            {
                continue;
            }
            auto it = sends.find(Key{static_cast<uint32_t>(op.from), rank, &op.label});
            if (it == sends.end())
            {
                Fail(op.line,
                     "from",
                     "recv '" + op.label + "' on rank " + std::to_string(rank) +
                         " has no matching send with this label on rank " +
                         std::to_string(op.from));
            }
            const WorkloadOpRef peer = m_trace.ops[op.from][it->second];
            if (peer.bytes != op.bytes)
            {
                Fail(op.line,
                     "bytes",
                     "recv '" + op.label + "' on rank " + std::to_string(rank) + " expects " +
                         std::to_string(op.bytes) + " bytes but the send at line " +
                         std::to_string(peer.line) + " has " + std::to_string(peer.bytes));
            }
            m_trace.ops.m_ranks[rank].peers[SharedOp(rank, i).recvPeerOp] = it->second;
            m_trace.ops.m_ranks[op.from].peers[SharedOp(op.from, it->second).sendPeerOp] = i;
            sends.erase(it);
        }
    }
    if (!sends.empty())
    {
        const auto& [key, index] = *sends.begin();
        const auto& op = m_trace.ops[key.from][index];
        Fail(op.line,
             "to",
             "send '" + op.label + "' from rank " + std::to_string(key.from) + " to rank " +
                 std::to_string(key.to) + " is never received");
    }
}

void
WorkloadTraceBuilder::CheckAcyclic()
{
    // Nodes: every op, except that all members of a collective share one node
    // (they start together).  Edges: deps, and send -> recv.
    const uint32_t numRanks = m_trace.numRanks;
    std::vector<uint64_t> base(numRanks + 1, 0);
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        base[r + 1] = base[r] + m_trace.ops[r].size();
    }
    const uint64_t numOps = base[numRanks];
    const uint64_t numNodes = numOps + m_trace.collectives.size();
    auto node = [&](uint32_t rank, uint32_t i) -> uint64_t {
        const WorkloadOpRef op = m_trace.ops[rank][i];
        return op.collective >= 0 ? numOps + op.collective : base[rank] + i;
    };
    // Successors in compressed rows (two passes over the edges): a vector per node would
    // cost about 50 bytes per op at the peak of a large parse.
    auto forEachEdge = [&](auto&& edge) {
        for (uint32_t r = 0; r < numRanks; ++r)
        {
            const auto ops = m_trace.ops[r];
            for (uint32_t i = 0; i < ops.size(); ++i)
            {
                const WorkloadOpRef op = ops[i];
                for (uint32_t d : op.deps)
                {
                    edge(node(r, d), node(r, i));
                }
                if (op.recvPeerOp >= 0)
                {
                    edge(node(op.from, static_cast<uint32_t>(op.recvPeerOp)), node(r, i));
                }
            }
        }
        for (const auto& d : m_trace.startDeps)
        {
            edge(node(d.rank, d.started), node(d.rank, d.op));
        }
    };
    // A collective member waiting on the same collective (a == b) cannot happen: no edge.
    std::vector<uint64_t> first(numNodes + 1, 0);
    forEachEdge([&](uint64_t a, uint64_t b) { first[a + 1] += a != b; });
    for (uint64_t v = 0; v < numNodes; ++v)
    {
        first[v + 1] += first[v];
    }
    std::vector<uint64_t> succ(first[numNodes]);
    std::vector<uint32_t> indegree(numNodes, 0);
    {
        std::vector<uint64_t> fill(first.begin(), first.end() - 1);
        forEachEdge([&](uint64_t a, uint64_t b) {
            if (a != b)
            {
                succ[fill[a]++] = b;
                ++indegree[b];
            }
        });
    }
    std::vector<uint64_t> ready;
    for (uint64_t v = 0; v < numNodes; ++v)
    {
        if (indegree[v] == 0)
        {
            ready.push_back(v);
        }
    }
    uint64_t done = 0;
    while (!ready.empty())
    {
        const uint64_t v = ready.back();
        ready.pop_back();
        ++done;
        for (uint64_t e = first[v]; e < first[v + 1]; ++e)
        {
            if (--indegree[succ[e]] == 0)
            {
                ready.push_back(succ[e]);
            }
        }
    }
    if (done == numNodes)
    {
        return;
    }
    std::ostringstream os;
    os << "dependency cycle: " << (numNodes - done) << " ops can never start, e.g.";
    int shown = 0;
    uint32_t line = 0;
    for (uint32_t r = 0; r < numRanks && shown < 4; ++r)
    {
        const auto ops = m_trace.ops[r];
        for (uint32_t i = 0; i < ops.size() && shown < 4; ++i)
        {
            if (indegree[node(r, i)] > 0)
            {
                os << (shown ? "," : "") << " rank " << r << " '" << ops[i].label << "' (line "
                   << ops[i].line << ")";
                line = line ? line : ops[i].line;
                ++shown;
            }
        }
    }
    Fail(line, "after", os.str());
}

} // namespace ns3
