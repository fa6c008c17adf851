/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/trace-goal.h"

#include "ns3/log.h"

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("GoalScheduleImporter");

namespace
{

struct GoalOp
{
    WorkloadOpKind kind;
    std::string goalLabel;
    uint64_t value = 0; // bytes or calc time
    int32_t peer = -1;
    uint64_t tag = 0;
    uint32_t line = 0;
    std::vector<std::pair<std::string, uint32_t>> requires_; // label, line
};

} // namespace

WorkloadTrace
GoalScheduleImporter::ImportFile(const std::string& path)
{
    return ImportString(ReadWorkloadFile(path), path);
}

WorkloadTrace
GoalScheduleImporter::ImportString(const std::string& text, const std::string& src)
{
    std::istringstream in(text);
    std::string raw;
    uint32_t lineNo = 0;
    auto fail = [&](const std::string& field, const std::string& msg) {
        throw WorkloadError(src, lineNo, field, msg);
    };
    uint64_t numRanks = 0;
    std::vector<std::vector<GoalOp>> ranks;
    std::vector<std::unordered_map<std::string, size_t>> byLabel;
    int64_t current = -1;
    while (std::getline(in, raw))
    {
        ++lineNo;
        std::string line = raw.substr(0, std::min(raw.find('#'), raw.find("//")));
        std::istringstream ls(line);
        std::vector<std::string> tok;
        std::string t;
        while (ls >> t)
        {
            tok.push_back(t);
        }
        if (tok.empty())
        {
            continue;
        }
        auto number = [&](const std::string& field, std::string value, uint64_t limit) {
            if (field == "size" && !value.empty() && (value.back() == 'b' || value.back() == 'B'))
            {
                value.pop_back();
            }
            uint64_t v = 0;
            if (!ParseUnsigned(value, &v) || v > limit)
            {
                fail(field,
                     "expected a number up to " + std::to_string(limit) + ", got '" + value + "'");
            }
            return v;
        };
        if (tok[0] == "num_ranks")
        {
            if (numRanks != 0 || tok.size() != 2)
            {
                fail("num_ranks", "expected one 'num_ranks N' line");
            }
            numRanks = number("num_ranks", tok[1], WorkloadTraceBuilder::GetMaxRanks());
            if (numRanks == 0)
            {
                fail("num_ranks", "expected at least 1 rank");
            }
            ranks.resize(numRanks);
            byLabel.resize(numRanks);
            continue;
        }
        if (numRanks == 0)
        {
            fail("num_ranks", "expected 'num_ranks N' first");
        }
        if (tok[0] == "rank")
        {
            if (current >= 0)
            {
                fail("rank", "rank block inside another rank block");
            }
            if (tok.size() != 3 || tok[2] != "{")
            {
                fail("rank", "expected 'rank R {'");
            }
            current = static_cast<int64_t>(number("rank", tok[1], numRanks - 1));
            continue;
        }
        if (tok[0] == "}")
        {
            if (current < 0 || tok.size() != 1)
            {
                fail("", "unexpected '}'");
            }
            current = -1;
            continue;
        }
        if (current < 0)
        {
            fail("", "expected 'rank R {' before '" + tok[0] + "'");
        }
        auto& ops = ranks[current];
        if (tok.size() == 3 && (tok[1] == "requires" || tok[1] == "irequires"))
        {
            auto it = byLabel[current].find(tok[0]);
            if (it == byLabel[current].end())
            {
                fail("requires",
                     "unknown label '" + tok[0] + "' on rank " + std::to_string(current));
            }
            // irequires (start after the other op started) is replayed as requires.
            ops[it->second].requires_.emplace_back(tok[2], lineNo);
            continue;
        }
        if (tok[0].size() < 2 || tok[0].back() != ':')
        {
            fail("", "expected 'label: send|recv|calc ...' or 'a requires b', got '" + line + "'");
        }
        GoalOp op;
        op.goalLabel = tok[0].substr(0, tok[0].size() - 1);
        op.line = lineNo;
        if (tok.size() < 3)
        {
            fail("op", "expected send, recv or calc with arguments");
        }
        size_t next = 0;
        if (tok[1] == "send" || tok[1] == "recv")
        {
            const bool send = tok[1] == "send";
            op.kind = send ? WorkloadOpKind::Send : WorkloadOpKind::Recv;
            if (tok.size() < 5 || tok[3] != (send ? "to" : "from"))
            {
                fail(tok[1],
                     std::string("expected '") + tok[1] + " <bytes>b " + (send ? "to" : "from") +
                         " <rank> [tag <t>]'");
            }
            op.value = number("size", tok[2], UINT64_MAX);
            op.peer = static_cast<int32_t>(number(send ? "to" : "from", tok[4], numRanks - 1));
            next = 5;
        }
        else if (tok[1] == "calc")
        {
            op.kind = WorkloadOpKind::Compute;
            op.value = number("calc", tok[2], UINT64_MAX);
            next = 3;
        }
        else
        {
            fail("op", "expected send, recv or calc, got '" + tok[1] + "'");
        }
        for (; next < tok.size(); next += 2)
        {
            if (next + 1 >= tok.size())
            {
                fail(tok[next], "expected a value");
            }
            if (tok[next] == "tag")
            {
                op.tag = number("tag", tok[next + 1], UINT64_MAX);
            }
            else if (tok[next] == "cpu" || tok[next] == "nic")
            {
                number(tok[next], tok[next + 1], 1000000); // resources are not modelled
            }
            else
            {
                fail(tok[next], "expected tag, cpu or nic");
            }
        }
        if (!byLabel[current].emplace(op.goalLabel, ops.size()).second)
        {
            fail("label",
                 "duplicate label '" + op.goalLabel + "' on rank " + std::to_string(current));
        }
        ops.push_back(std::move(op));
    }
    if (current >= 0)
    {
        fail("rank", "rank block not closed with '}'");
    }
    if (numRanks == 0)
    {
        throw WorkloadError(src, 0, "num_ranks", "no 'num_ranks N' line");
    }

    // Message labels: the k-th send from s to d with tag t matches the k-th
    // receive posted on d for (s, t).
    std::vector<std::vector<std::string>> native(numRanks);
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint64_t> sendCount, recvCount;
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        for (const auto& op : ranks[r])
        {
            std::string label;
            if (op.kind == WorkloadOpKind::Compute)
            {
                label = "c_" + op.goalLabel;
            }
            else
            {
                const bool send = op.kind == WorkloadOpKind::Send;
                const uint32_t s = send ? r : static_cast<uint32_t>(op.peer);
                const uint32_t d = send ? static_cast<uint32_t>(op.peer) : r;
                auto& count = (send ? sendCount : recvCount)[{s, d, op.tag}];
                label = "m" + std::to_string(s) + "_" + std::to_string(d) + "_" +
                        std::to_string(op.tag) + "_" + std::to_string(count++);
            }
            native[r].push_back(label);
        }
    }

    WorkloadTraceBuilder b(src);
    b.SetNumRanks(static_cast<uint32_t>(numRanks), 1);
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        for (size_t i = 0; i < ranks[r].size(); ++i)
        {
            const auto& g = ranks[r][i];
            WorkloadOp op;
            op.kind = g.kind;
            op.label = native[r][i];
            op.line = g.line;
            op.statement = static_cast<uint32_t>(i);
            op.stream = static_cast<uint32_t>(i); // GOAL orders only through requires
            if (g.kind == WorkloadOpKind::Compute)
            {
                op.timeNs = g.value;
            }
            else
            {
                op.bytes = g.value;
                (g.kind == WorkloadOpKind::Send ? op.to : op.from) = g.peer;
            }
            for (const auto& [req, reqLine] : g.requires_)
            {
                auto it = byLabel[r].find(req);
                if (it == byLabel[r].end())
                {
                    throw WorkloadError(src,
                                        reqLine,
                                        "requires",
                                        "unknown label '" + req + "' on rank " + std::to_string(r));
                }
                op.after.push_back(native[r][it->second]);
            }
            b.AddOp(r, std::move(op));
        }
    }
    return b.Build();
}

} // namespace ns3
