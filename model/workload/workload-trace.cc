/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/workload-trace.h"

#include "ns3/log.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadTrace");

namespace
{

struct KindName
{
    WorkloadOpKind kind;
    const char* name;
};

const KindName g_kindNames[] = {
    {WorkloadOpKind::Compute, "compute"},
    {WorkloadOpKind::Send, "send"},
    {WorkloadOpKind::Recv, "recv"},
    {WorkloadOpKind::SendRecv, "sendrecv"},
    {WorkloadOpKind::AllReduce, "allreduce"},
    {WorkloadOpKind::AllGather, "allgather"},
    {WorkloadOpKind::ReduceScatter, "reducescatter"},
    {WorkloadOpKind::AllToAll, "alltoall"},
    {WorkloadOpKind::Broadcast, "broadcast"},
    {WorkloadOpKind::Reduce, "reduce"},
    {WorkloadOpKind::Load, "load"},
    {WorkloadOpKind::Checkpoint, "checkpoint"},
};

} // namespace

const char*
WorkloadOpKindName(WorkloadOpKind kind)
{
    for (const auto& k : g_kindNames)
    {
        if (k.kind == kind)
        {
            return k.name;
        }
    }
    return "?";
}

bool
WorkloadOpKindFromName(const std::string& name, WorkloadOpKind* kind)
{
    for (const auto& k : g_kindNames)
    {
        if (name == k.name)
        {
            *kind = k.kind;
            return true;
        }
    }
    return false;
}

bool
IsCollective(WorkloadOpKind kind)
{
    return kind >= WorkloadOpKind::AllReduce && kind <= WorkloadOpKind::Reduce;
}

CollectiveKind
CollectiveKindOf(WorkloadOpKind kind)
{
    switch (kind)
    {
    case WorkloadOpKind::AllReduce:
        return CollectiveKind::AllReduce;
    case WorkloadOpKind::AllGather:
        return CollectiveKind::AllGather;
    case WorkloadOpKind::ReduceScatter:
        return CollectiveKind::ReduceScatter;
    case WorkloadOpKind::AllToAll:
        return CollectiveKind::AllToAll;
    case WorkloadOpKind::Broadcast:
        return CollectiveKind::Broadcast;
    case WorkloadOpKind::Reduce:
        return CollectiveKind::Reduce;
    case WorkloadOpKind::Compute:
    case WorkloadOpKind::Send:
    case WorkloadOpKind::Recv:
    case WorkloadOpKind::SendRecv:
    case WorkloadOpKind::Load:
    case WorkloadOpKind::Checkpoint:
        break;
    }
    throw std::logic_error(std::string(WorkloadOpKindName(kind)) + " is not a collective");
}

bool
IsFrontEnd(WorkloadOpKind kind)
{
    return kind == WorkloadOpKind::Load || kind == WorkloadOpKind::Checkpoint;
}

namespace
{
// Indexed by ParallelismKind: the breakdown's name and the native format's key.
const struct
{
    const char* name;
    const char* key;
} kParallelismKindText[kNumParallelismKinds] = {
    {"TP", "tp"},
    {"PP", "pp"},
    {"DP", "dp"},
    {"EP", "ep"},
    {"other", "other"},
    {"front-end", "front-end"},
};
} // namespace

const char*
ParallelismKindName(ParallelismKind kind)
{
    return kParallelismKindText[static_cast<std::size_t>(kind)].name;
}

const char*
ParallelismKindKey(ParallelismKind kind)
{
    return kParallelismKindText[static_cast<std::size_t>(kind)].key;
}

bool
ParseParallelismKind(const std::string& text, ParallelismKind* kind)
{
    // Every kind but FrontEnd, which no group has.
    for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
    {
        if (static_cast<ParallelismKind>(k) != ParallelismKind::FrontEnd &&
            text == kParallelismKindText[k].key)
        {
            *kind = static_cast<ParallelismKind>(k);
            return true;
        }
    }
    return false;
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

namespace
{
// A program's to/from for "no peer" (-1).
constexpr int32_t kNoRank = INT32_MIN;

int32_t
RelativeRank(uint32_t rank, int32_t peer)
{
    // Modular: every int32 value comes back exactly.
    return peer == -1 ? kNoRank : static_cast<int32_t>(static_cast<uint32_t>(peer) - rank);
}

int32_t
AbsoluteRank(uint32_t rank, int32_t code)
{
    return code == kNoRank ? -1 : static_cast<int32_t>(rank + static_cast<uint32_t>(code));
}

template <typename T>
int64_t
ValueAt(const std::vector<T>& values, int64_t ordinal)
{
    return ordinal < 0 ? -1 : static_cast<int64_t>(values[ordinal]);
}

uint64_t
StringHeapBytes(const std::string& s)
{
    return s.capacity() > 15 ? s.capacity() + 1 : 0; // beyond the short-string buffer
}
} // namespace

WorkloadOp
WorkloadOpRef::ToOp() const
{
    WorkloadOp op;
    op.label = label;
    op.timeNs = timeNs;
    op.bytes = bytes;
    op.stream = stream;
    op.group = group;
    op.to = to;
    op.from = from;
    op.root = root;
    op.storage = storage;
    op.kind = kind;
    op.algorithm = algorithm;
    op.after = after;
    op.deps = deps;
    op.collective = collective;
    op.sendPeerOp = sendPeerOp;
    op.recvPeerOp = recvPeerOp;
    op.line = line;
    op.statement = statement;
    op.tag = tag;
    op.cpu = cpu;
    op.nic = nic;
    op.anyTag = anyTag;
    op.unpaired = unpaired;
    return op;
}

std::size_t
WorkloadOpTable::Rank::size() const
{
    return m_table->m_programs[m_table->m_ranks[m_rank].program].size();
}

bool
WorkloadOpTable::Rank::empty() const
{
    return size() == 0;
}

WorkloadOpRef
WorkloadOpTable::Rank::operator[](std::size_t i) const
{
    const Binding& b = m_table->m_ranks[m_rank];
    const WorkloadOp& op = m_table->m_programs[b.program][i];
    return WorkloadOpRef{op.label,
                         op.timeNs,
                         op.bytes,
                         op.stream,
                         op.group < 0 ? op.group : b.groups[op.group],
                         AbsoluteRank(m_rank, op.to),
                         AbsoluteRank(m_rank, op.from),
                         static_cast<int32_t>(ValueAt(b.roots, op.root)),
                         op.storage,
                         op.kind,
                         op.algorithm,
                         op.after,
                         op.deps,
                         ValueAt(b.collectives, op.collective),
                         ValueAt(b.peers, op.sendPeerOp),
                         ValueAt(b.peers, op.recvPeerOp),
                         op.line,
                         op.statement,
                         op.tag,
                         op.cpu,
                         op.nic,
                         op.anyTag,
                         op.unpaired};
}

WorkloadOpRef
WorkloadOpTable::Rank::at(std::size_t i) const
{
    if (i >= size())
    {
        throw std::out_of_range("op " + std::to_string(i) + " of rank " + std::to_string(m_rank));
    }
    return (*this)[i];
}

WorkloadOpRef
WorkloadOpTable::Rank::front() const
{
    return (*this)[0];
}

WorkloadOpRef
WorkloadOpTable::Rank::back() const
{
    return (*this)[size() - 1];
}

std::size_t
WorkloadOpTable::size() const
{
    return m_ranks.size();
}

bool
WorkloadOpTable::empty() const
{
    return m_ranks.empty();
}

WorkloadOpTable::Rank
WorkloadOpTable::operator[](uint32_t rank) const
{
    return Rank(this, rank);
}

WorkloadOpTable::Rank
WorkloadOpTable::at(uint32_t rank) const
{
    if (rank >= m_ranks.size())
    {
        throw std::out_of_range("rank " + std::to_string(rank));
    }
    return Rank(this, rank);
}

void
WorkloadOpTable::resize(uint32_t ranks)
{
    // Every rank starts in the class of ranks without ops.
    if (m_programs.empty())
    {
        m_programs.emplace_back();
        m_sharers.push_back(0);
    }
    for (uint32_t r = ranks; r < m_ranks.size(); ++r)
    {
        --m_sharers[m_ranks[r].program];
    }
    const auto before = static_cast<uint32_t>(m_ranks.size());
    m_ranks.resize(ranks);
    for (uint32_t r = before; r < ranks; ++r)
    {
        m_ranks[r].program = 0;
        ++m_sharers[0];
    }
}

WorkloadOp
WorkloadOpTable::Encode(uint32_t rank, const WorkloadOp& op, Binding& b)
{
    WorkloadOp e = op;
    if (op.group >= 0)
    {
        auto it = std::find(b.groups.begin(), b.groups.end(), op.group);
        e.group = static_cast<int32_t>(it - b.groups.begin());
        if (it == b.groups.end())
        {
            b.groups.push_back(op.group);
        }
    }
    e.to = RelativeRank(rank, op.to);
    e.from = RelativeRank(rank, op.from);
    auto ordinal = [](auto& values, int64_t value) {
        values.push_back(static_cast<typename std::decay_t<decltype(values)>::value_type>(value));
        return static_cast<int64_t>(values.size() - 1);
    };
    e.root = op.root == -1 ? -1 : static_cast<int32_t>(ordinal(b.roots, op.root));
    const bool sends = op.kind == WorkloadOpKind::Send || op.kind == WorkloadOpKind::SendRecv;
    const bool recvs = op.kind == WorkloadOpKind::Recv || op.kind == WorkloadOpKind::SendRecv;
    e.collective =
        IsCollective(op.kind) || op.collective != -1 ? ordinal(b.collectives, op.collective) : -1;
    e.sendPeerOp = sends || op.sendPeerOp != -1 ? ordinal(b.peers, op.sendPeerOp) : -1;
    e.recvPeerOp = recvs || op.recvPeerOp != -1 ? ordinal(b.peers, op.recvPeerOp) : -1;
    return e;
}

std::vector<WorkloadOp>&
WorkloadOpTable::Diverge(uint32_t rank)
{
    Binding& b = m_ranks.at(rank);
    if (m_sharers[b.program] > 1)
    {
        --m_sharers[b.program];
        m_programs.push_back(m_programs[b.program]);
        m_sharers.push_back(1);
        b.program = static_cast<uint32_t>(m_programs.size() - 1);
    }
    return m_programs[b.program];
}

void
WorkloadOpTable::Append(uint32_t rank, const WorkloadOp& op)
{
    auto& ops = Diverge(rank);
    ops.push_back(Encode(rank, op, m_ranks[rank]));
}

void
WorkloadOpTable::SetRank(uint32_t rank, const std::vector<WorkloadOp>& ops)
{
    auto& program = Diverge(rank);
    program.clear();
    m_ranks[rank] = Binding{m_ranks[rank].program, {}, {}, {}, {}};
    for (const auto& op : ops)
    {
        program.push_back(Encode(rank, op, m_ranks[rank]));
    }
}

void
WorkloadOpTable::Set(uint32_t rank, uint32_t index, const WorkloadOp& op)
{
    std::vector<WorkloadOp> ops;
    for (const auto& o : (*this)[rank])
    {
        ops.push_back(o.ToOp());
    }
    ops.at(index) = op;
    SetRank(rank, ops);
}

uint32_t
WorkloadOpTable::CountPrograms() const
{
    uint32_t n = 0;
    for (uint32_t sharers : m_sharers)
    {
        n += sharers > 0;
    }
    return n;
}

uint32_t
WorkloadOpTable::ProgramOf(uint32_t rank) const
{
    return m_ranks.at(rank).program;
}

const std::vector<WorkloadOp>&
WorkloadOpTable::GetProgram(uint32_t program) const
{
    return m_programs.at(program);
}

uint64_t
WorkloadOpTable::MemoryBytes() const
{
    uint64_t bytes = sizeof(*this) + m_programs.capacity() * sizeof(m_programs[0]) +
                     m_sharers.capacity() * sizeof(uint32_t) + m_ranks.capacity() * sizeof(Binding);
    for (const auto& program : m_programs)
    {
        bytes += program.capacity() * sizeof(WorkloadOp);
        for (const auto& op : program)
        {
            bytes += StringHeapBytes(op.label) + op.deps.capacity() * sizeof(uint32_t) +
                     op.after.capacity() * sizeof(std::string);
            for (const auto& a : op.after)
            {
                bytes += StringHeapBytes(a);
            }
        }
    }
    for (const auto& b : m_ranks)
    {
        bytes += b.groups.capacity() * sizeof(int32_t) + b.roots.capacity() * sizeof(int32_t) +
                 b.collectives.capacity() * sizeof(int64_t) + b.peers.capacity() * sizeof(int64_t);
    }
    return bytes;
}

int32_t
WorkloadTrace::FindGroup(const std::string& name) const
{
    for (size_t i = 0; i < groups.size(); ++i)
    {
        if (groups[i].name == name)
        {
            return static_cast<int32_t>(i);
        }
    }
    return -1;
}

uint64_t
WorkloadTrace::CountOps() const
{
    uint64_t n = 0;
    for (const auto& r : ops)
    {
        n += r.size();
    }
    return n;
}

uint64_t
WorkloadTrace::SumBytes(uint32_t rank, WorkloadOpKind kind) const
{
    uint64_t sum = 0;
    for (const auto& op : ops.at(rank))
    {
        if (op.kind == kind)
        {
            sum += op.bytes;
        }
    }
    return sum;
}

bool
WorkloadTrace::HasFrontEndOps() const
{
    for (const auto& r : ops)
    {
        for (const auto& op : r)
        {
            if (IsFrontEnd(op.kind))
            {
                return true;
            }
        }
    }
    return false;
}

void
WorkloadTrace::CheckStorageNodes(uint32_t storageNodes) const
{
    for (const auto& r : ops)
    {
        for (const auto& op : r)
        {
            if (IsFrontEnd(op.kind) &&
                (op.storage < 0 || static_cast<uint32_t>(op.storage) >= storageNodes))
            {
                throw WorkloadError(source,
                                    op.line,
                                    op.kind == WorkloadOpKind::Load ? "from" : "to",
                                    std::string(WorkloadOpKindName(op.kind)) + " '" + op.label +
                                        "' names storage" + std::to_string(op.storage) +
                                        " but the cluster has " + std::to_string(storageNodes) +
                                        " storage node(s)");
            }
        }
    }
}

std::string
ReadWorkloadFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw WorkloadError(path, 0, "", "cannot open file");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace ns3
