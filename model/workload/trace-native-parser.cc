/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/log.h"
#include "ns3/trace-native.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NativeTraceParser");

namespace
{

struct Token
{
    std::string text;
    uint32_t column; // 1-based
};

// One op line (before repeat expansion) or a repeat block.
struct Statement
{
    uint32_t line = 0;
    // op line
    std::vector<uint32_t> ranks;
    std::string label;
    WorkloadOp proto; // label/after/line filled per expansion
    std::vector<std::string> after;
    // repeat block
    bool isRepeat = false;
    bool isShift = false;
    int64_t shift = 0;
    uint64_t count = 0;
    uint64_t start = 0;
    std::vector<Statement> body;
    std::set<std::string> labels; // labels written directly in body
};

bool
IsLabel(const std::string& s)
{
    if (s.empty() || s.size() > 200 || !(isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    {
        return false;
    }
    for (char c : s)
    {
        if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
              c == ':'))
        {
            return false;
        }
    }
    return true;
}

class Parser
{
  public:
    Parser(const std::string& text, std::string source)
        : m_text(text),
          m_source(source),
          m_builder(source)
    {
    }

    WorkloadTrace Run()
    {
        std::vector<Statement>* stack[NativeTraceParser::MAX_NESTING + 1];
        std::vector<Statement*> openBlocks;
        stack[0] = &m_top;
        uint32_t depth = 0;
        bool haveHeader = false;
        size_t pos = 0;
        uint32_t line = 0;
        while (pos < m_text.size())
        {
            size_t end = m_text.find('\n', pos);
            if (end == std::string::npos)
            {
                end = m_text.size();
            }
            ++line;
            m_line = line;
            Tokenise(m_text.substr(pos, end - pos));
            pos = end + 1;
            if (m_tokens.empty())
            {
                continue;
            }
            const std::string& head = m_tokens[0].text;
            if (!haveHeader)
            {
                if (head != "fabric-trace" || m_tokens.size() != 2 || m_tokens[1].text != "1")
                {
                    Fail("", m_tokens[0].column, "expected the header 'fabric-trace 1'");
                }
                haveHeader = true;
                continue;
            }
            if (head == "ranks")
            {
                uint64_t n = 0;
                if (m_tokens.size() != 2 || !ParseUnsigned(m_tokens[1].text, &n) ||
                    n > WorkloadTraceBuilder::GetMaxRanks() || n == 0)
                {
                    Fail("ranks",
                         0,
                         "expected 'ranks N' with 1 <= N <= " +
                             std::to_string(WorkloadTraceBuilder::GetMaxRanks()));
                }
                if (m_builder.GetNumRanks() != 0)
                {
                    Fail("ranks", 0, "rank count given twice");
                }
                m_builder.SetNumRanks(static_cast<uint32_t>(n), line);
                continue;
            }
            if (m_builder.GetNumRanks() == 0)
            {
                Fail("ranks", m_tokens[0].column, "expected 'ranks N' before '" + head + "'");
            }
            if (head == "group")
            {
                if (depth > 0)
                {
                    Fail("group", m_tokens[0].column, "groups must be defined outside repeat");
                }
                if ((m_tokens.size() != 3 && m_tokens.size() != 4) || !IsLabel(m_tokens[1].text))
                {
                    Fail("group", m_tokens[0].column, "expected 'group NAME RANKS [kind=K]'");
                }
                // Traces written before kind= existed: the kind follows the group's name.
                ParallelismKind kind = ParallelismKindOfGroup(m_tokens[1].text);
                if (m_tokens.size() == 4)
                {
                    const std::string& text = m_tokens[3].text;
                    const size_t eq = text.find('=');
                    if (eq == std::string::npos)
                    {
                        Fail("", m_tokens[3].column, "expected kind=K, got '" + text + "'");
                    }
                    if (text.compare(0, eq, "kind") != 0)
                    {
                        Fail(text.substr(0, eq), 0, "unknown key; a group line takes kind=");
                    }
                    if (!ParseParallelismKind(text.substr(5), &kind))
                    {
                        Fail("kind",
                             0,
                             "unknown parallelism kind '" + text.substr(5) +
                                 "'; expected tp, pp, dp, ep or other");
                    }
                }
                m_builder.AddGroup(m_tokens[1].text, Ranks(m_tokens[2]), line, kind);
                continue;
            }
            if (head == "repeat")
            {
                if (depth >= NativeTraceParser::MAX_NESTING)
                {
                    Fail("repeat", m_tokens[0].column, "repeat blocks nested too deeply");
                }
                Statement block;
                block.isRepeat = true;
                block.line = line;
                size_t i = 1;
                if (i >= m_tokens.size() || !ParseUnsigned(m_tokens[i].text, &block.count) ||
                    block.count > 100000000)
                {
                    Fail("repeat",
                         i < m_tokens.size() ? m_tokens[i].column : 0,
                         "expected 'repeat N [start=K] {' with N <= 100000000");
                }
                ++i;
                if (i < m_tokens.size() && m_tokens[i].text.rfind("start=", 0) == 0)
                {
                    if (!ParseUnsigned(m_tokens[i].text.substr(6), &block.start) ||
                        block.start > 1000000000)
                    {
                        Fail("start",
                             m_tokens[i].column,
                             "expected a number, got '" + m_tokens[i].text.substr(6) + "'");
                    }
                    ++i;
                }
                if (i + 1 != m_tokens.size() || m_tokens[i].text != "{")
                {
                    Fail("repeat",
                         i < m_tokens.size() ? m_tokens[i].column : 0,
                         "expected '{' at the end of the repeat line");
                }
                stack[depth]->push_back(std::move(block));
                Statement* opened = &stack[depth]->back();
                openBlocks.push_back(opened);
                ++depth;
                stack[depth] = &opened->body;
                continue;
            }
            if (head == "shift")
            {
                // shift D { ... }: inside, the innermost repeat's iteration number is
                // offset by D (for labels of ops that run a fixed distance apart).
                if (openBlocks.empty() || depth >= NativeTraceParser::MAX_NESTING)
                {
                    Fail("shift", m_tokens[0].column, "shift must be inside a repeat block");
                }
                Statement block;
                block.isShift = true;
                block.line = line;
                const std::string d = m_tokens.size() > 1 ? m_tokens[1].text : "";
                uint64_t mag = 0;
                const bool neg = !d.empty() && d[0] == '-';
                const std::string digits =
                    (!d.empty() && (d[0] == '-' || d[0] == '+')) ? d.substr(1) : d;
                if (m_tokens.size() != 3 || m_tokens[2].text != "{" ||
                    !ParseUnsigned(digits, &mag) || mag > 1000000000)
                {
                    Fail("shift", m_tokens[0].column, "expected 'shift D {' with a whole number D");
                }
                block.shift = neg ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
                stack[depth]->push_back(std::move(block));
                Statement* opened = &stack[depth]->back();
                openBlocks.push_back(opened);
                ++depth;
                stack[depth] = &opened->body;
                continue;
            }
            if (head == "}")
            {
                if (m_tokens.size() != 1)
                {
                    Fail("", m_tokens[1].column, "expected nothing after '}'");
                }
                if (depth == 0)
                {
                    Fail("", m_tokens[0].column, "'}' without repeat or shift");
                }
                --depth;
                openBlocks.pop_back();
                continue;
            }
            Statement st = OpLine();
            Statement* owner = nullptr; // innermost repeat: shift blocks own no labels
            for (auto it = openBlocks.rbegin(); it != openBlocks.rend() && !owner; ++it)
            {
                owner = (*it)->isRepeat ? *it : nullptr;
            }
            if (owner)
            {
                owner->labels.insert(st.label);
            }
            else
            {
                m_topLabels.insert(st.label);
            }
            stack[depth]->push_back(std::move(st));
        }
        if (!haveHeader)
        {
            throw WorkloadError(m_source,
                                0,
                                "",
                                "empty trace: expected the header 'fabric-trace 1'");
        }
        if (depth != 0)
        {
            throw WorkloadError(m_source,
                                openBlocks.back()->line,
                                "repeat",
                                "block is never closed with '}'");
        }
        if (m_builder.GetNumRanks() == 0)
        {
            throw WorkloadError(m_source, 0, "ranks", "no 'ranks N' line");
        }
        // Exact per-rank capacity before expanding: growing by doubling would leave up to
        // half of every rank's op vector unused (about 100 bytes per op).
        std::vector<uint64_t> perRank(m_builder.GetNumRanks(), 0);
        if (CountOps(m_top, 1, perRank))
        {
            m_builder.ReserveOps(perRank);
        }
        std::vector<const Statement*> scopes;
        std::vector<uint64_t> iters;
        Expand(m_top, scopes, iters);
        return m_builder.Build();
    }

  private:
    [[noreturn]] void Fail(const std::string& field, uint32_t column, const std::string& msg)
    {
        std::string text = msg;
        if (column > 0 && field.empty())
        {
            text = "column " + std::to_string(column) + ": " + msg;
        }
        throw WorkloadError(m_source, m_line, field, text);
    }

    void Tokenise(const std::string& line)
    {
        m_tokens.clear();
        size_t i = 0;
        while (i < line.size())
        {
            unsigned char c = static_cast<unsigned char>(line[i]);
            if (c == '#')
            {
                break;
            }
            if (isspace(c))
            {
                ++i;
                continue;
            }
            size_t j = i;
            while (j < line.size() && !isspace(static_cast<unsigned char>(line[j])) &&
                   line[j] != '#')
            {
                ++j;
            }
            m_tokens.push_back({line.substr(i, j - i), static_cast<uint32_t>(i + 1)});
            i = j;
        }
    }

    std::vector<uint32_t> Ranks(const Token& t)
    {
        std::vector<uint32_t> ranks;
        std::string why;
        if (!ParseRankList(t.text, m_builder.GetNumRanks(), &ranks, &why))
        {
            Fail("ranks", t.column, why);
        }
        return ranks;
    }

    int32_t Rank(const std::string& field, const std::string& value)
    {
        uint64_t r = 0;
        if (!ParseUnsigned(value, &r) || r >= m_builder.GetNumRanks())
        {
            Fail(field,
                 0,
                 "expected a rank below " + std::to_string(m_builder.GetNumRanks()) + ", got '" +
                     value + "'");
        }
        return static_cast<int32_t>(r);
    }

    Statement OpLine()
    {
        Statement st;
        st.line = m_line;
        if (m_tokens.size() < 3)
        {
            Fail("", m_tokens[0].column, "expected '<ranks> <label> <op> [key=value ...]'");
        }
        if (!isdigit(static_cast<unsigned char>(m_tokens[0].text[0])))
        {
            Fail("",
                 m_tokens[0].column,
                 "expected ranks, 'group', 'repeat', 'shift' or '}', got '" + m_tokens[0].text +
                     "'");
        }
        st.ranks = Ranks(m_tokens[0]);
        if (!IsLabel(m_tokens[1].text))
        {
            Fail("label",
                 m_tokens[1].column,
                 "expected a label (letter or '_', then letters, digits, '_.:-'), got '" +
                     m_tokens[1].text + "'");
        }
        st.label = m_tokens[1].text;
        WorkloadOp& op = st.proto;
        if (!WorkloadOpKindFromName(m_tokens[2].text, &op.kind))
        {
            Fail("op",
                 m_tokens[2].column,
                 "expected compute, send, recv, sendrecv, allreduce, allgather, "
                 "reducescatter, alltoall, broadcast, reduce, load or checkpoint, got '" +
                     m_tokens[2].text + "'");
        }
        std::set<std::string> seen;
        for (size_t i = 3; i < m_tokens.size(); ++i)
        {
            const auto& tok = m_tokens[i];
            const size_t eq = tok.text.find('=');
            if (eq == std::string::npos || eq == 0)
            {
                Fail("", tok.column, "expected key=value, got '" + tok.text + "'");
            }
            const std::string key = tok.text.substr(0, eq);
            const std::string value = tok.text.substr(eq + 1);
            if (key != "after" && !seen.insert(key).second)
            {
                Fail(key, 0, "given twice");
            }
            Key(op, key, value);
        }
        const bool coll = IsCollective(op.kind);
        const bool p2p = !coll && op.kind != WorkloadOpKind::Compute;
        // \p optional: the key may be given although it is not required.
        auto require =
            [&](bool cond, const std::string& key, const std::string& what, bool optional = false) {
                if (cond && !seen.count(key))
                {
                    Fail(key,
                         0,
                         "missing: " + std::string(WorkloadOpKindName(op.kind)) + " needs " + what);
                }
                if (!cond && !optional && seen.count(key))
                {
                    Fail(key, 0, "not allowed for " + std::string(WorkloadOpKindName(op.kind)));
                }
            };
        require(op.kind == WorkloadOpKind::Compute, "time", "time=DURATION");
        require(coll || p2p, "bytes", "bytes=SIZE");
        require(coll, "group", "group=NAME");
        require(op.kind == WorkloadOpKind::Send || op.kind == WorkloadOpKind::SendRecv,
                "to",
                "to=RANK",
                op.kind == WorkloadOpKind::Checkpoint);
        require(op.kind == WorkloadOpKind::Recv || op.kind == WorkloadOpKind::SendRecv,
                "from",
                "from=RANK",
                op.kind == WorkloadOpKind::Load);
        if (IsFrontEnd(op.kind) && op.storage < 0)
        {
            op.storage = 0; // rule: the first storage node unless named
        }
        if (seen.count("root") && op.kind != WorkloadOpKind::Broadcast &&
            op.kind != WorkloadOpKind::Reduce)
        {
            Fail("root", 0, "only broadcast and reduce have a root");
        }
        if (seen.count("algorithm") && !coll)
        {
            Fail("algorithm", 0, "only collectives have an algorithm");
        }
        if (coll)
        {
            // Rule: the op exists on the line's ranks that are members of the group.
            const auto& members = m_builder.GetGroup(op.group).ranks;
            std::vector<uint32_t> kept;
            std::set_intersection(st.ranks.begin(),
                                  st.ranks.end(),
                                  members.begin(),
                                  members.end(),
                                  std::back_inserter(kept));
            if (kept.empty())
            {
                Fail("group",
                     0,
                     "none of the ranks " + m_tokens[0].text + " is a member of group '" +
                         m_builder.GetGroup(op.group).name + "'");
            }
            if (kept.size() != st.ranks.size())
            {
                m_builder.AddWarning(m_line,
                                     "ranks outside group '" + m_builder.GetGroup(op.group).name +
                                         "' skip collective '" + st.label + "'");
            }
            st.ranks = std::move(kept);
        }
        return st;
    }

    void Key(WorkloadOp& op, const std::string& key, const std::string& value)
    {
        if (key == "time")
        {
            if (!ParseTimeNs(value, &op.timeNs))
            {
                Fail(key, 0, "expected a duration like 1.5ms (ns, us, ms, s), got '" + value + "'");
            }
        }
        else if (key == "bytes")
        {
            if (!ParseBytes(value, &op.bytes))
            {
                Fail(key,
                     0,
                     "expected a size like 64MiB (B, KiB, MiB, GiB, KB, MB, GB), got '" + value +
                         "'");
            }
        }
        else if (key == "group")
        {
            op.group = m_builder.FindGroup(value);
            if (op.group < 0)
            {
                Fail(key, 0, "unknown group '" + value + "'");
            }
        }
        else if ((key == "to" && op.kind == WorkloadOpKind::Checkpoint) ||
                 (key == "from" && op.kind == WorkloadOpKind::Load))
        {
            uint64_t index = 0;
            if (value.rfind("storage", 0) != 0 || !ParseUnsigned(value.substr(7), &index) ||
                index > 32767)
            {
                Fail(key, 0, "expected a storage node like storage0, got '" + value + "'");
            }
            op.storage = static_cast<int16_t>(index);
        }
        else if ((key == "to" || key == "from") && IsFrontEnd(op.kind))
        {
            Fail(key,
                 0,
                 op.kind == WorkloadOpKind::Load
                     ? "not allowed for load; it reads from=storageN"
                     : "not allowed for checkpoint; it writes to=storageN");
        }
        else if (key == "to")
        {
            op.to = Rank(key, value);
        }
        else if (key == "from")
        {
            op.from = Rank(key, value);
        }
        else if (key == "root")
        {
            op.root = Rank(key, value);
        }
        else if (key == "stream")
        {
            uint64_t s = 0;
            if (!ParseUnsigned(value, &s) || s > UINT32_MAX)
            {
                Fail(key, 0, "expected a stream number, got '" + value + "'");
            }
            op.stream = static_cast<uint32_t>(s);
        }
        else if (key == "algorithm")
        {
            if (!ParseCollectiveAlgorithm(value, &op.algorithm))
            {
                Fail(key,
                     0,
                     "unknown algorithm '" + value + "'; expected " + CollectiveAlgorithmNames());
            }
        }
        else if (key == "after")
        {
            size_t start = 0;
            while (true)
            {
                size_t comma = value.find(',', start);
                const std::string label =
                    value.substr(start,
                                 comma == std::string::npos ? std::string::npos : comma - start);
                if (!IsLabel(label))
                {
                    Fail(key, 0, "expected labels like fwd0,ar0, got '" + value + "'");
                }
                op.after.push_back(label);
                if (comma == std::string::npos)
                {
                    break;
                }
                start = comma + 1;
            }
            if (op.after.size() > 1000)
            {
                Fail(key, 0, "too many labels");
            }
        }
        else
        {
            Fail(key,
                 0,
                 "unknown key; expected time, bytes, group, to, from, after, stream, "
                 "algorithm or root");
        }
    }

    std::string Expanded(const std::string& label,
                         const std::vector<const Statement*>& scopes,
                         const std::vector<uint64_t>& iters,
                         size_t depth) const
    {
        std::string out = label;
        for (size_t i = 0; i < depth; ++i)
        {
            out += '.';
            out += std::to_string(iters[i]);
        }
        return out;
    }

    // Innermost block that writes \p label gets its iteration suffixes;
    // otherwise the label is taken literally.
    std::string Resolve(const std::string& label,
                        const std::vector<const Statement*>& scopes,
                        const std::vector<uint64_t>& iters) const
    {
        for (size_t d = scopes.size(); d > 0; --d)
        {
            if (scopes[d - 1]->labels.count(label))
            {
                return Expanded(label, scopes, iters, d);
            }
        }
        return label;
    }

    // Adds to perRank the ops \p body expands to, \p times over; false once the total is past
    // the op limit (the expansion then fails with the usual message).
    bool CountOps(const std::vector<Statement>& body,
                  uint64_t times,
                  std::vector<uint64_t>& perRank) const
    {
        const uint64_t limit = WorkloadTraceBuilder::GetMaxOps();
        for (const auto& st : body)
        {
            if (st.isShift || st.isRepeat)
            {
                const uint64_t n = st.isShift ? 1 : st.count;
                if (n != 0 && (times > limit / n || !CountOps(st.body, times * n, perRank)))
                {
                    return false;
                }
                continue;
            }
            for (uint32_t r : st.ranks)
            {
                perRank[r] += times;
                if (perRank[r] > limit)
                {
                    return false;
                }
            }
        }
        return true;
    }

    void Expand(const std::vector<Statement>& body,
                std::vector<const Statement*>& scopes,
                std::vector<uint64_t>& iters)
    {
        for (const auto& st : body)
        {
            if (++m_work > 4 * WorkloadTraceBuilder::GetMaxOps())
            {
                throw WorkloadError(m_source, st.line, "repeat", "trace expands too far");
            }
            if (st.isShift)
            {
                const uint64_t saved = iters.back();
                const int64_t shifted = static_cast<int64_t>(saved) + st.shift;
                if (shifted < 0)
                {
                    throw WorkloadError(m_source,
                                        st.line,
                                        "shift",
                                        "iteration " + std::to_string(saved) + " shifted by " +
                                            std::to_string(st.shift) + " is negative");
                }
                iters.back() = static_cast<uint64_t>(shifted);
                Expand(st.body, scopes, iters);
                iters.back() = saved;
                continue;
            }
            if (st.isRepeat)
            {
                scopes.push_back(&st);
                iters.push_back(0);
                for (uint64_t i = 0; i < st.count; ++i)
                {
                    iters.back() = st.start + i;
                    Expand(st.body, scopes, iters);
                    if (st.body.empty() && ++m_work > 4 * WorkloadTraceBuilder::GetMaxOps())
                    {
                        throw WorkloadError(m_source, st.line, "repeat", "trace expands too far");
                    }
                }
                scopes.pop_back();
                iters.pop_back();
                continue;
            }
            WorkloadOp op = st.proto;
            op.label = Expanded(st.label, scopes, iters, scopes.size());
            op.line = st.line;
            op.statement = m_statement++;
            op.after.clear();
            for (const auto& a : st.proto.after)
            {
                op.after.push_back(Resolve(a, scopes, iters));
            }
            for (uint32_t r : st.ranks)
            {
                m_builder.AddOp(r, op);
            }
        }
    }

    const std::string& m_text;
    std::string m_source;
    WorkloadTraceBuilder m_builder;
    std::vector<Token> m_tokens;
    uint32_t m_line = 0;
    std::vector<Statement> m_top;
    std::set<std::string> m_topLabels;
    uint32_t m_statement = 0;
    uint64_t m_work = 0;
};

} // namespace

WorkloadTrace
NativeTraceParser::ParseFile(const std::string& path)
{
    return ParseString(ReadWorkloadFile(path), path);
}

WorkloadTrace
NativeTraceParser::ParseString(const std::string& text, const std::string& sourceName)
{
    Parser parser(text, sourceName);
    return parser.Run();
}

} // namespace ns3
