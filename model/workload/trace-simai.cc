/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/trace-simai.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SimAiWorkloadImporter");

namespace
{

/// Whitespace-separated words: runs of tabs or spaces, CR and trailing blanks are
/// separators, as for SimAI's and ASTRA-sim's `>>` reads.
std::vector<std::string>
Split(const std::string& line)
{
    std::vector<std::string> out;
    size_t i = 0;
    while (i < line.size())
    {
        if (isspace(static_cast<unsigned char>(line[i])))
        {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < line.size() && !isspace(static_cast<unsigned char>(line[j])))
        {
            ++j;
        }
        out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

bool
KnownPolicy(const std::string& p)
{
    return p == "DATA" || p == "MODEL" || p == "HYBRID_TRANSFORMER" ||
           p == "HYBRID_TRANSFORMER_FWD_IN_BCKWD" || p == "HYBRID_DATA_MODEL" ||
           p == "HYBRID_MODEL_DATA" || p == "HYBRID_DLRM" || p == "HYBRID_CUSTOMIZED" ||
           p == "MICRO";
}

const char* const kPolicies = "DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, "
                              "HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, "
                              "HYBRID_DLRM, HYBRID_CUSTOMIZED or MICRO";

/// Reads one file, keeping the line number and one warning per kind.
class SimAiParser
{
  public:
    SimAiParser(const std::string& text, const std::string& src)
        : m_in(text),
          m_src(src)
    {
    }

    SimAiWorkload Parse();

  private:
    [[noreturn]] void Fail(const std::string& field, const std::string& msg) const
    {
        throw WorkloadError(m_src, m_line, field, msg);
    }

    void Warn(const std::string& kind, const std::string& text)
    {
        if (m_warned.insert(kind).second)
        {
            NS_LOG_WARN(m_src << ":" << m_line << ": " << text);
            m_w.warnings.emplace_back(m_line, text);
        }
    }

    /// The next line with a word on it; false at the end of the file.
    bool NextWords(std::vector<std::string>* words)
    {
        std::string line;
        while (std::getline(m_in, line))
        {
            ++m_line;
            *words = Split(line);
            if (!words->empty())
            {
                return true;
            }
        }
        return false;
    }

    uint64_t Number(const std::string& field, const std::string& value, uint64_t limit);
    void Header(const std::vector<std::string>& tok);
    SimAiCollective Comm(const std::string& field, const std::string& type, uint64_t bytes);

    std::istringstream m_in;
    const std::string& m_src;
    uint32_t m_line = 0;
    std::set<std::string> m_warned;
    SimAiWorkload m_w;
};

// A whole number, also written as a float ("8388608.0", "1e+16": Python's str() of
// AICB's float sizes); SimAI reads it with stoi / operator>>, which stop at the dot, so
// a fraction is cut off (with a warning).
uint64_t
SimAiParser::Number(const std::string& field, const std::string& value, uint64_t limit)
{
    size_t i = 0;
    while (i < value.size() && isdigit(static_cast<unsigned char>(value[i])))
    {
        ++i;
    }
    const std::string whole = value.substr(0, i);
    bool fraction = false;
    bool ok = !whole.empty();
    if (i < value.size() && value[i] == '.')
    {
        size_t j = ++i;
        while (i < value.size() && isdigit(static_cast<unsigned char>(value[i])))
        {
            fraction = fraction || value[i] != '0';
            ++i;
        }
        ok = ok || i > j;
    }
    int64_t exponent = 0;
    bool hasExponent = false;
    if (ok && i < value.size() && (value[i] == 'e' || value[i] == 'E'))
    {
        hasExponent = true;
        size_t j = ++i;
        if (i < value.size() && (value[i] == '+' || value[i] == '-'))
        {
            ++i;
        }
        size_t digits = i;
        while (i < value.size() && isdigit(static_cast<unsigned char>(value[i])) && i - digits < 4)
        {
            exponent = exponent * 10 + (value[i] - '0');
            ++i;
        }
        ok = i > digits;
        if (value[j] == '-')
        {
            exponent = -exponent;
        }
    }
    uint64_t v = 0;
    if (ok && i == value.size() && !hasExponent)
    {
        ok = whole.empty() || ParseUnsigned(whole, &v);
    }
    else if (ok && i == value.size())
    {
        const long double x = std::strtold(value.c_str(), nullptr);
        ok = std::isfinite(x) && x < 1.8e19L;
        if (ok)
        {
            v = static_cast<uint64_t>(x);
            fraction = static_cast<long double>(v) != x;
        }
    }
    if (!ok || i != value.size() || v > limit)
    {
        Fail(field,
             "expected a whole number up to " + std::to_string(limit) + ", got '" + value + "'");
    }
    if (fraction)
    {
        Warn("fraction",
             "field '" + field + "': fraction of '" + value +
                 "' cut off, as SimAI's integer reads do");
    }
    return v;
}

void
SimAiParser::Header(const std::vector<std::string>& tok)
{
    m_w.parallelism = tok[0];
    if (!KnownPolicy(m_w.parallelism))
    {
        Fail("parallelism", std::string("expected ") + kPolicies + ", got '" + tok[0] + "'");
    }
    bool sawEp = false;
    bool sawPp = false;
    bool sawVpp = false;
    bool sawGa = false;
    size_t i = 1;
    if (m_w.parallelism == "HYBRID_DLRM" && tok.size() > 1 &&
        isdigit(static_cast<unsigned char>(tok[1][0])))
    {
        // ASTRA-sim 1.0 writes the last bottom-MLP layer right after the keyword.
        m_w.dlrmLastBottomLayer =
            static_cast<int64_t>(Number("DLRM_LAST_BOTTOM_LAYER", tok[1], 1000000));
        i = 2;
    }
    for (; i < tok.size(); ++i)
    {
        std::string key = tok[i];
        if (!key.empty() && key.back() == ':')
        {
            key.pop_back();
        }
        if (i + 1 >= tok.size())
        {
            Fail(key, "expected a value after '" + tok[i] + "'");
        }
        const std::string& value = tok[i + 1];
        auto group = [&](uint32_t* out) {
            *out = static_cast<uint32_t>(Number(key, value, 1000000));
        };
        if (key == "model_parallel_NPU_group")
        {
            group(&m_w.modelParallelGroup);
        }
        else if (key == "ep")
        {
            group(&m_w.ep);
            sawEp = true;
        }
        else if (key == "pp")
        {
            group(&m_w.pp);
            sawPp = true;
        }
        else if (key == "vpp")
        {
            group(&m_w.vpp);
            sawVpp = true;
        }
        else if (key == "ga")
        {
            group(&m_w.ga);
            sawGa = true;
        }
        else if (key == "all_gpus")
        {
            group(&m_w.allGpus);
        }
        else if (key == "pp_comm")
        {
            m_w.ppCommBytes = Number(key, value, UINT64_MAX);
        }
        else if (key == "DLRM_LAST_BOTTOM_LAYER")
        {
            m_w.dlrmLastBottomLayer = static_cast<int64_t>(Number(key, value, 1000000));
        }
        else if (key == "checkpoints" || key == "checkpoint_initiates")
        {
            // a count, then that many layer numbers
            auto& list = key == "checkpoints" ? m_w.checkpoints : m_w.checkpointInitiates;
            const uint64_t n = Number(key, value, 1000000);
            if (n > tok.size() - i - 2)
            {
                Fail(key,
                     "'" + tok[i] + " " + value + "' announces " + std::to_string(n) +
                         " layer numbers but the line has " + std::to_string(tok.size() - i - 2));
            }
            for (uint64_t k = 0; k < n; ++k)
            {
                list.push_back(static_cast<uint32_t>(Number(key, tok[i + 2 + k], 1000000)));
            }
            i += n;
        }
        else
        {
            // SimAI ignores words it does not know (AICB once wrote
            // "expert_parallel_npu_group:", which SimAI never read as ep).
            Warn("key", "ignoring header key '" + tok[i] + "' and its value");
        }
        ++i;
    }
    for (auto [name, v] : {std::pair<const char*, uint32_t>{"ep", m_w.ep},
                           {"pp", m_w.pp},
                           {"vpp", m_w.vpp},
                           {"ga", m_w.ga}})
    {
        if (v == 0)
        {
            Fail(name, std::string("'") + name + "' must be at least 1");
        }
    }
    // SimAI's own check (it only warns): the new header with every key, pp_comm given
    // exactly when pp > 1.
    const bool transformer = m_w.parallelism.rfind("HYBRID_TRANSFORMER", 0) == 0;
    std::string missing;
    for (auto [name, seen] :
         {std::pair<const char*, bool>{"model_parallel_NPU_group", m_w.modelParallelGroup != 0},
          {"ep", sawEp},
          {"pp", sawPp},
          {"vpp", sawVpp},
          {"ga", sawGa},
          {"all_gpus", m_w.allGpus != 0}})
    {
        missing += seen ? "" : std::string(missing.empty() ? "" : ", ") + name;
    }
    if (transformer && !missing.empty())
    {
        Warn("header",
             "old header without " + missing +
                 " (SimAI warns 'Input workload format mismatch'): ep, pp, vpp and ga are 1 "
                 "unless given");
    }
    else if (transformer && (m_w.pp != 1) != (m_w.ppCommBytes != 0))
    {
        Warn("header",
             "pp " + std::to_string(m_w.pp) + " with pp_comm " + std::to_string(m_w.ppCommBytes) +
                 " (SimAI warns 'Input workload format mismatch')" +
                 (m_w.pp != 1 ? ": the pipeline stages exchange no activations"
                              : ": pp_comm unused"));
    }
}

// SimAI matches the type by prefix (ALLREDUCE, ALLTOALL, ALLREDUCEALLTOALL, ALLGATHER,
// REDUCESCATTER) and the group by the whole word; anything else, BROADCAST included,
// is ComType::None there and in ASTRA-sim 1.0: no communication.
SimAiCollective
SimAiParser::Comm(const std::string& field, const std::string& type, uint64_t bytes)
{
    SimAiCollective c;
    c.bytes = bytes;
    std::string base = type;
    auto strip = [&](const std::string& suffix, SimAiGroupKind kind) {
        if (base.size() > suffix.size() &&
            base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
        {
            base.resize(base.size() - suffix.size());
            c.group = kind;
            return true;
        }
        return false;
    };
    strip("_DP_EP", SimAiGroupKind::DpEp) || strip("_EP", SimAiGroupKind::Ep);
    if (type == "NONE")
    {
        return c;
    }
    if (base == "ALLREDUCE")
    {
        c.kind = WorkloadOpKind::AllReduce;
    }
    else if (base == "ALLGATHER")
    {
        c.kind = WorkloadOpKind::AllGather;
    }
    else if (base == "REDUCESCATTER")
    {
        c.kind = WorkloadOpKind::ReduceScatter;
    }
    else if (base == "ALLTOALL")
    {
        c.kind = WorkloadOpKind::AllToAll;
    }
    else if (base == "ALLREDUCEALLTOALL")
    {
        // SimAI's prefix test takes it for ALLREDUCE (ASTRA-sim 1.0 panics on it).
        c.kind = WorkloadOpKind::AllReduce;
        Warn("arata",
             "field '" + field + "': " + type + " replayed as an all-reduce, as SimAI reads it");
    }
    else if (base == "BROADCAST")
    {
        Warn("broadcast",
             "field '" + field +
                 "': BROADCAST moves nothing in SimAI and ASTRA-sim 1.0 (no such "
                 "collective there); not replayed");
        return c;
    }
    else
    {
        Fail(field,
             "expected NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, ALLREDUCEALLTOALL or "
             "BROADCAST (optionally _EP or _DP_EP), got '" +
                 type + "'");
    }
    c.present = bytes > 0;
    return c;
}

SimAiWorkload
SimAiParser::Parse()
{
    std::vector<std::string> tok;
    if (!NextWords(&tok))
    {
        Fail("parallelism", "empty file: expected a parallelism type like DATA");
    }
    Header(tok);

    if (!NextWords(&tok))
    {
        Fail("layers", "expected the number of layers on the second line");
    }
    if (!isdigit(static_cast<unsigned char>(tok[0][0])))
    {
        Fail("layers", "expected the number of layers, got '" + tok[0] + "'");
    }
    if (tok.size() != 1)
    {
        Fail("layers", "expected the number of layers on a line of its own");
    }
    const uint64_t declared = Number("layers", tok[0], 1000000);

    static const char* columns[] = {"name",
                                    "reserved",
                                    "fwd compute",
                                    "fwd comm type",
                                    "fwd bytes",
                                    "ig compute",
                                    "ig comm type",
                                    "ig bytes",
                                    "wg compute",
                                    "wg comm type",
                                    "wg bytes",
                                    "update time",
                                    "parallelism"};
    const bool customized = m_w.parallelism == "HYBRID_CUSTOMIZED";
    const size_t want = customized ? 13 : 12;
    while (NextWords(&tok))
    {
        if (m_w.layers.size() == declared)
        {
            // SimAI reads the declared rows and stops.
            Warn("extra", "rows after the " + std::to_string(declared) + " declared are ignored");
            continue;
        }
        if (tok.size() != want)
        {
            Fail(tok.size() < want ? columns[tok.size()] : "layers",
                 "expected " + std::to_string(want) +
                     " columns (name, reserved, fwd compute, fwd comm, fwd bytes, ig compute, ig "
                     "comm, ig bytes, wg compute, wg comm, wg bytes, update" +
                     (customized ? ", parallelism" : "") + "), got " + std::to_string(tok.size()));
        }
        SimAiLayer layer;
        layer.line = m_line;
        layer.name = tok[0];
        const std::string& res = tok[1];
        if (res == "-1")
        {
            layer.reserved = -1;
        }
        else
        {
            uint64_t reserved = 0;
            if (!ParseUnsigned(res, &reserved) || reserved >= INT64_MAX)
            {
                Fail(columns[1], "expected -1 or a number, got '" + res + "'");
            }
            layer.reserved = static_cast<int64_t>(reserved);
        }
        auto comm = [&](size_t col) {
            return Comm(columns[col], tok[col], Number(columns[col + 1], tok[col + 1], UINT64_MAX));
        };
        layer.fwdCompute = Number(columns[2], tok[2], UINT64_MAX);
        layer.fwdComm = comm(3);
        layer.igCompute = Number(columns[5], tok[5], UINT64_MAX);
        layer.igComm = comm(6);
        layer.wgCompute = Number(columns[8], tok[8], UINT64_MAX);
        layer.wgComm = comm(9);
        layer.updateTime = Number(columns[11], tok[11], UINT64_MAX);
        if (customized)
        {
            layer.policy = tok[12];
            const std::string& p = layer.policy;
            if (p != "DATA" && p != "MODEL" && p != "HYBRID_DATA_MODEL" &&
                p != "HYBRID_MODEL_DATA" && p != "HYBRID_TRANSFORMER" &&
                p != "HYBRID_TRANSFORMER_FWD_IN_BCKWD")
            {
                Fail(columns[12],
                     "expected DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA or "
                     "HYBRID_TRANSFORMER, got '" +
                         p + "'");
            }
        }
        m_w.layers.push_back(std::move(layer));
    }
    if (m_w.layers.size() != declared)
    {
        Fail("layers",
             "file declares " + std::to_string(declared) + " layers but has " +
                 std::to_string(m_w.layers.size()));
    }
    auto checkList = [&](const std::vector<uint32_t>& list, const char* field) {
        for (uint32_t l : list)
        {
            if (l >= declared)
            {
                m_line = 1;
                Fail(field,
                     "layer " + std::to_string(l) + " does not exist (" + std::to_string(declared) +
                         " layers)");
            }
        }
    };
    checkList(m_w.checkpoints, "checkpoints");
    checkList(m_w.checkpointInitiates, "checkpoint_initiates");
    for (uint32_t l : m_w.checkpointInitiates)
    {
        if (m_w.parallelism == "HYBRID_TRANSFORMER_FWD_IN_BCKWD" &&
            std::none_of(m_w.checkpoints.begin(), m_w.checkpoints.end(), [l](uint32_t c) {
                return c <= l;
            }))
        {
            m_line = 1;
            Fail("checkpoints",
                 "layer " + std::to_string(l) +
                     " initiates a recomputation but no checkpoint is at or below it");
        }
    }
    if (m_w.parallelism == "HYBRID_DLRM" &&
        (m_w.dlrmLastBottomLayer < 0 || static_cast<uint64_t>(m_w.dlrmLastBottomLayer) >= declared))
    {
        m_line = 1;
        Fail("DLRM_LAST_BOTTOM_LAYER",
             "HYBRID_DLRM needs the last bottom layer (a layer number after the keyword), got " +
                 std::to_string(m_w.dlrmLastBottomLayer) + " for " + std::to_string(declared) +
                 " layers");
    }
    return std::move(m_w);
}

} // namespace

SimAiWorkload
SimAiWorkloadImporter::ParseFile(const std::string& path)
{
    return ParseString(ReadWorkloadFile(path), path);
}

SimAiWorkload
SimAiWorkloadImporter::ParseString(const std::string& text, const std::string& src)
{
    return SimAiParser(text, src).Parse();
}

WorkloadTrace
SimAiWorkloadImporter::ImportFile(const std::string& path, const SimAiImportOptions& options)
{
    return ToTrace(ParseFile(path), options, path);
}

} // namespace ns3
