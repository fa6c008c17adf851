/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// GOAL schedules (LogGOPSim's txt2bin grammar, doc/workload.md "GOAL"), read line by line
// after the comments are blanked out.
#include "ns3/trace-goal.h"

#include "ns3/log.h"

#include <algorithm>
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
    std::string goalLabel; ///< empty: an op without a label
    uint64_t value = 0;    ///< bytes or calc time
    int32_t peer = -1;     ///< recv: -1 is any source
    uint64_t tag = 0;
    bool anyTag = false;
    uint8_t cpu = 0;
    uint8_t nic = 0;
    uint32_t line = 0;
    std::vector<std::pair<std::string, uint32_t>> requires_;  // label, line
    std::vector<std::pair<std::string, uint32_t>> irequires_; // label, line
};

// The text with /* */, // and # comments turned into blanks, line breaks kept.  A block
// comment left open throws at the line where it opened.
std::string
BlankComments(const std::string& text, const std::string& src)
{
    std::string out = text;
    uint32_t line = 1;
    for (std::size_t i = 0; i < out.size(); ++i)
    {
        if (out[i] == '\n')
        {
            ++line;
        }
        else if (out[i] == '#' || (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '/'))
        {
            for (; i < out.size() && out[i] != '\n'; ++i)
            {
                out[i] = ' ';
            }
            --i;
        }
        else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '*')
        {
            const uint32_t opened = line;
            const std::size_t end = out.find("*/", i + 2);
            if (end == std::string::npos)
            {
                throw WorkloadError(src, opened, "comment", "'/*' is never closed with '*/'");
            }
            for (; i < end + 2; ++i)
            {
                if (out[i] == '\n')
                {
                    ++line;
                }
                else
                {
                    out[i] = ' ';
                }
            }
            --i;
        }
    }
    return out;
}

// Whitespace-separated tokens; braces stand alone and a colon ends the token before it,
// so "rank 0{", "l1 : calc" and "l1:calc" read as written with spaces.
std::vector<std::string>
Tokens(const std::string& line)
{
    std::vector<std::string> tok;
    std::string cur;
    auto flush = [&]() {
        if (!cur.empty())
        {
            tok.push_back(cur);
            cur.clear();
        }
    };
    for (char c : line)
    {
        if (c == '{' || c == '}')
        {
            flush();
            tok.emplace_back(1, c);
        }
        else if (c == ':')
        {
            if (cur.empty() && !tok.empty() && tok.back() != "{" && tok.back() != "}")
            {
                tok.back() += ':';
            }
            else
            {
                cur += ':';
                flush();
            }
        }
        else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f')
        {
            flush();
        }
        else
        {
            cur += c;
        }
    }
    flush();
    return tok;
}

std::string
Trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

} // namespace

WorkloadTrace
GoalScheduleImporter::ImportFile(const std::string& path)
{
    return ImportString(ReadWorkloadFile(path), path);
}

WorkloadTrace
GoalScheduleImporter::ImportString(const std::string& text, const std::string& src)
{
    std::istringstream in(BlankComments(text, src));
    std::string line;
    uint32_t lineNo = 0;
    auto fail = [&](const std::string& field, const std::string& msg) {
        throw WorkloadError(src, lineNo, field, msg);
    };
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
    uint64_t numRanks = 0;
    std::vector<std::vector<GoalOp>> ranks;
    std::vector<std::unordered_map<std::string, size_t>> byLabel;
    int64_t current = -1;
    while (std::getline(in, line))
    {
        ++lineNo;
        const std::vector<std::string> tok = Tokens(line);
        size_t p = 0;
        while (p < tok.size())
        {
            if (tok[p] == "num_ranks")
            {
                if (numRanks != 0 || p + 1 >= tok.size())
                {
                    fail("num_ranks", "expected one 'num_ranks N' line");
                }
                numRanks = number("num_ranks", tok[p + 1], WorkloadTraceBuilder::GetMaxRanks());
                if (numRanks == 0)
                {
                    fail("num_ranks", "expected at least 1 rank");
                }
                ranks.resize(numRanks);
                byLabel.resize(numRanks);
                p += 2;
                continue;
            }
            if (numRanks == 0)
            {
                fail("num_ranks", "expected 'num_ranks N' first");
            }
            if (tok[p] == "rank")
            {
                if (current >= 0)
                {
                    fail("rank", "rank block inside another rank block");
                }
                if (p + 2 >= tok.size() || tok[p + 2] != "{")
                {
                    fail("rank", "expected 'rank R {'");
                }
                current = static_cast<int64_t>(number("rank", tok[p + 1], numRanks - 1));
                p += 3;
                continue;
            }
            if (tok[p] == "}")
            {
                if (current < 0)
                {
                    fail("", "unexpected '}'");
                }
                current = -1;
                ++p;
                continue;
            }
            if (current < 0)
            {
                fail("", "expected 'rank R {' before '" + tok[p] + "'");
            }
            // A statement: the rest of the line.
            auto& ops = ranks[current];
            const size_t n = tok.size() - p;
            if (n == 3 && (tok[p + 1] == "requires" || tok[p + 1] == "irequires"))
            {
                auto it = byLabel[current].find(tok[p]);
                if (it == byLabel[current].end())
                {
                    fail(tok[p + 1],
                         "unknown label '" + tok[p] + "' on rank " + std::to_string(current));
                }
                auto& list = tok[p + 1] == "requires" ? ops[it->second].requires_
                                                      : ops[it->second].irequires_;
                list.emplace_back(tok[p + 2], lineNo);
                break;
            }
            GoalOp op;
            op.line = lineNo;
            size_t q = p;
            if (tok[p].size() >= 2 && tok[p].back() == ':')
            {
                op.goalLabel = tok[p].substr(0, tok[p].size() - 1);
                ++q;
            }
            else if (tok[p] != "send" && tok[p] != "recv" && tok[p] != "calc")
            {
                fail("",
                     "expected 'label: send|recv|calc ...' or 'a requires b', got '" + Trim(line) +
                         "'");
            }
            if (tok.size() - q < 2)
            {
                fail("op", "expected send, recv or calc with arguments");
            }
            size_t next = 0;
            const std::string& verb = tok[q];
            if (verb == "send" || verb == "recv")
            {
                const bool send = verb == "send";
                op.kind = send ? WorkloadOpKind::Send : WorkloadOpKind::Recv;
                // "1024 b": the unit may stand apart from the number.
                const size_t unit = q + 2 < tok.size() && (tok[q + 2] == "b" || tok[q + 2] == "B");
                const size_t dir = q + 2 + unit;
                if (dir + 1 >= tok.size() || tok[dir] != (send ? "to" : "from"))
                {
                    fail(verb,
                         std::string("expected '") + verb + " <bytes>b " + (send ? "to" : "from") +
                             " <rank> [tag <t>]'");
                }
                op.value = number("size", tok[q + 1], UINT64_MAX);
                if (!send && tok[dir + 1] == "-1")
                {
                    op.peer = -1; // MPI_ANY_SOURCE
                }
                else if (tok[dir + 1] == "-1")
                {
                    fail("to", "a send needs a destination rank (-1, any source, is for recv)");
                }
                else
                {
                    op.peer = static_cast<int32_t>(number(tok[dir], tok[dir + 1], numRanks - 1));
                }
                next = dir + 2;
            }
            else if (verb == "calc")
            {
                op.kind = WorkloadOpKind::Compute;
                op.value = number("calc", tok[q + 1], UINT64_MAX);
                next = q + 2;
            }
            else
            {
                fail("op", "expected send, recv or calc, got '" + verb + "'");
            }
            for (; next < tok.size(); next += 2)
            {
                const std::string& key = tok[next];
                if (key != "tag" && key != "cpu" && key != "nic")
                {
                    fail(key, "expected tag, cpu or nic");
                }
                if (next + 1 >= tok.size())
                {
                    fail(key, "expected a value");
                }
                const std::string& value = tok[next + 1];
                if (key == "tag" && op.kind == WorkloadOpKind::Compute)
                {
                    fail("tag", "a calc has no tag");
                }
                else if (key == "tag" && value == "-1")
                {
                    if (op.kind == WorkloadOpKind::Send)
                    {
                        fail("tag", "a send needs a tag (-1, any tag, is for recv)");
                    }
                    op.anyTag = true; // MPI_ANY_TAG
                }
                else if (key == "tag")
                {
                    op.tag = number("tag", value, UINT64_MAX);
                }
                else
                {
                    // LogGOPSim keeps CPU and NIC numbers in a byte.
                    (key == "cpu" ? op.cpu : op.nic) =
                        static_cast<uint8_t>(number(key, value, 255));
                }
            }
            if (!op.goalLabel.empty() && !byLabel[current].emplace(op.goalLabel, ops.size()).second)
            {
                fail("label",
                     "duplicate label '" + op.goalLabel + "' on rank " + std::to_string(current));
            }
            ops.push_back(std::move(op));
            break;
        }
    }
    if (current >= 0)
    {
        fail("rank", "rank block not closed with '}'");
    }
    if (numRanks == 0)
    {
        throw WorkloadError(src, 0, "num_ranks", "no 'num_ranks N' line");
    }

    // A rank with a wildcard receive matches all its messages at run time (MPI order); the
    // others are paired here too, the k-th send from s to d with tag t with the k-th receive
    // posted on d for (s, t), so that a message nobody receives is refused before the run.
    std::vector<bool> wildcard(numRanks, false);
    std::vector<uint64_t> sendsTo(numRanks, 0);
    std::vector<uint32_t> lastSendTo(numRanks, 0);
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        for (const auto& op : ranks[r])
        {
            if (op.kind == WorkloadOpKind::Recv && (op.peer < 0 || op.anyTag))
            {
                wildcard[r] = true;
            }
            if (op.kind == WorkloadOpKind::Send)
            {
                ++sendsTo[op.peer];
                lastSendTo[op.peer] = op.line;
            }
        }
    }
    std::vector<std::vector<std::string>> native(numRanks);
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint64_t> sendCount, recvCount;
    std::map<std::string, uint64_t> wildcardCount;
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        uint64_t recvs = 0;
        uint32_t lastRecv = 0;
        for (const auto& op : ranks[r])
        {
            std::string label;
            if (op.kind == WorkloadOpKind::Compute)
            {
                label = op.goalLabel.empty() ? "c@" + std::to_string(op.line) : "c_" + op.goalLabel;
            }
            else if (op.kind == WorkloadOpKind::Recv && wildcard[r])
            {
                ++recvs;
                lastRecv = op.line;
                label = "m" + (op.peer < 0 ? std::string("*") : std::to_string(op.peer)) + "_" +
                        std::to_string(r) + "_" +
                        (op.anyTag ? std::string("*") : std::to_string(op.tag)) + "_";
                label += std::to_string(wildcardCount[label]++);
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
        if (wildcard[r] && recvs != sendsTo[r])
        {
            lineNo = recvs > sendsTo[r] ? lastRecv : lastSendTo[r];
            fail(recvs > sendsTo[r] ? "from" : "to",
                 "rank " + std::to_string(r) + " posts " + std::to_string(recvs) +
                     " receives but " + std::to_string(sendsTo[r]) + " messages are sent to it");
        }
    }

    WorkloadTraceBuilder b(src);
    b.SetNumRanks(static_cast<uint32_t>(numRanks), 1);
    b.SetLogGops();
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
            op.cpu = g.cpu;
            op.nic = g.nic;
            if (g.kind == WorkloadOpKind::Compute)
            {
                op.timeNs = g.value;
            }
            else
            {
                op.bytes = g.value;
                op.tag = g.tag;
                op.anyTag = g.anyTag;
                (g.kind == WorkloadOpKind::Send ? op.to : op.from) = g.peer;
                op.unpaired = wildcard[g.kind == WorkloadOpKind::Send ? g.peer : r];
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
    for (uint32_t r = 0; r < numRanks; ++r)
    {
        for (size_t i = 0; i < ranks[r].size(); ++i)
        {
            for (const auto& [req, reqLine] : ranks[r][i].irequires_)
            {
                auto it = byLabel[r].find(req);
                if (it == byLabel[r].end())
                {
                    throw WorkloadError(src,
                                        reqLine,
                                        "irequires",
                                        "unknown label '" + req + "' on rank " + std::to_string(r));
                }
                b.AddStartDependency(r, static_cast<uint32_t>(i), it->second, reqLine);
            }
        }
    }
    return b.Build();
}

} // namespace ns3
