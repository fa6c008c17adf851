/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/log.h"
#include "ns3/trace-native.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NativeTracePrinter");

std::string
NativeTracePrinter::Print(const WorkloadTrace& trace)
{
    std::ostringstream os;
    os << "fabric-trace 1\nranks " << trace.numRanks << "\n";
    for (const auto& g : trace.groups)
    {
        os << "group " << g.name << " " << FormatRankList(g.ranks);
        if (g.kind != ParallelismKindOfGroup(g.name))
        {
            os << " kind=" << ParallelismKindKey(g.kind);
        }
        os << "\n";
    }
    auto body = [&](const WorkloadOpRef& op) {
        std::ostringstream b;
        b << op.label << " " << WorkloadOpKindName(op.kind);
        if (op.kind == WorkloadOpKind::Compute)
        {
            b << " time=" << FormatTimeNs(op.timeNs);
        }
        else
        {
            b << " bytes=" << FormatBytes(op.bytes);
        }
        if (op.group >= 0)
        {
            b << " group=" << trace.groups[op.group].name;
        }
        if (op.kind == WorkloadOpKind::Checkpoint)
        {
            b << " to=storage" << op.storage;
        }
        if (op.kind == WorkloadOpKind::Load)
        {
            b << " from=storage" << op.storage;
        }
        if (op.to >= 0)
        {
            b << " to=" << op.to;
        }
        if (op.from >= 0)
        {
            b << " from=" << op.from;
        }
        if (op.root >= 0)
        {
            b << " root=" << op.root;
        }
        if (op.stream != 0)
        {
            b << " stream=" << op.stream;
        }
        if (op.algorithm != CollectiveAlgorithm::Auto)
        {
            b << " algorithm=" << CollectiveAlgorithmName(op.algorithm);
        }
        for (size_t i = 0; i < op.after.size(); ++i)
        {
            b << (i == 0 ? " after=" : ",") << op.after[i];
        }
        return b.str();
    };
    // (statement, rank, index): a rank's ops have increasing statement numbers,
    // so printing statements in order keeps every rank's program order.
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> order;
    order.reserve(trace.CountOps());
    for (uint32_t r = 0; r < trace.ops.size(); ++r)
    {
        for (uint32_t i = 0; i < trace.ops[r].size(); ++i)
        {
            order.emplace_back(trace.ops[r][i].statement, r, i);
        }
    }
    std::stable_sort(order.begin(), order.end());
    size_t i = 0;
    while (i < order.size())
    {
        size_t j = i;
        while (j < order.size() && std::get<0>(order[j]) == std::get<0>(order[i]))
        {
            ++j;
        }
        // Within one statement, ranks with identical ops share a line.
        std::vector<std::pair<std::string, std::vector<uint32_t>>> lines;
        for (size_t k = i; k < j; ++k)
        {
            const auto& [st, r, idx] = order[k];
            std::string b = body(trace.ops[r][idx]);
            auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) {
                return l.first == b;
            });
            if (it == lines.end())
            {
                lines.push_back({b, {r}});
            }
            else
            {
                it->second.push_back(r);
            }
        }
        for (const auto& [b, ranks] : lines)
        {
            os << FormatRankList(ranks) << " " << b << "\n";
        }
        i = j;
    }
    return os.str();
}

void
NativeTracePrinter::WriteFile(const WorkloadTrace& trace, const std::string& path)
{
    std::ofstream out(path);
    out << Print(trace);
    if (!out)
    {
        throw WorkloadError(path, 0, "", "cannot write file");
    }
}

} // namespace ns3
