/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/workload-trace.h"

#include "ns3/log.h"

#include <algorithm>
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
