/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/trace-simai.h"

#include "ns3/log.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SimAiWorkloadImporter");

namespace
{

std::vector<std::pair<std::string, uint32_t>>
Split(const std::string& line)
{
    std::vector<std::pair<std::string, uint32_t>> out;
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
        out.emplace_back(line.substr(i, j - i), static_cast<uint32_t>(i + 1));
        i = j;
    }
    return out;
}

bool
KnownPolicy(const std::string& p)
{
    return p == "DATA" || p == "MODEL" || p == "HYBRID_TRANSFORMER" ||
           p == "HYBRID_TRANSFORMER_FWD_IN_BCKWD" || p == "HYBRID_DATA_MODEL" ||
           p == "HYBRID_MODEL_DATA" || p == "MICRO";
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
    SimAiWorkload w;
    std::istringstream in(text);
    std::string line;
    uint32_t lineNo = 0;
    auto fail = [&](const std::string& field, const std::string& msg) {
        throw WorkloadError(src, lineNo, field, msg);
    };
    auto number = [&](const std::string& field, const std::string& value, uint64_t limit) {
        uint64_t v = 0;
        if (!ParseUnsigned(value, &v) || v > limit)
        {
            fail(field,
                 "expected a whole number up to " + std::to_string(limit) + ", got '" + value +
                     "'");
        }
        return v;
    };

    // Line 1: parallelism policy and "key: value" pairs.
    std::vector<std::pair<std::string, uint32_t>> tok;
    while (tok.empty() && std::getline(in, line))
    {
        ++lineNo;
        tok = Split(line);
    }
    if (tok.empty())
    {
        fail("parallelism", "empty file: expected a parallelism type like DATA");
    }
    w.parallelism = tok[0].first;
    if (!KnownPolicy(w.parallelism))
    {
        fail("parallelism",
             "expected DATA, MODEL, HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, "
             "HYBRID_DATA_MODEL, HYBRID_MODEL_DATA or MICRO, got '" +
                 w.parallelism + "'");
    }
    for (size_t i = 1; i < tok.size(); ++i)
    {
        std::string key = tok[i].first;
        if (!key.empty() && key.back() == ':')
        {
            key.pop_back();
        }
        if (i + 1 >= tok.size())
        {
            fail(key, "expected a value after '" + tok[i].first + "'");
        }
        const std::string& value = tok[i + 1].first;
        if (key == "model_parallel_NPU_group")
        {
            w.modelParallelGroup = static_cast<uint32_t>(number(key, value, 1000000));
        }
        else if (key == "ep")
        {
            w.ep = static_cast<uint32_t>(number(key, value, 1000000));
        }
        else if (key == "pp")
        {
            w.pp = static_cast<uint32_t>(number(key, value, 1000000));
        }
        else if (key == "vpp")
        {
            w.vpp = static_cast<uint32_t>(number(key, value, 1000000));
        }
        else if (key == "ga")
        {
            w.ga = static_cast<uint32_t>(number(key, value, 1000000));
        }
        else if (key == "all_gpus")
        {
            w.allGpus = static_cast<uint32_t>(number(key, value, 1000000));
        }
        else if (key == "pp_comm")
        {
            w.ppCommBytes = number(key, value, UINT64_MAX);
        }
        else if (key == "checkpoints" || key == "checkpoint_initiates")
        {
            // a count followed by that many layer numbers
            const uint64_t n = number(key, value, tok.size());
            if (n > 0)
            {
                NS_LOG_WARN(src << ": activation checkpoints are not modelled");
            }
            i += n;
        }
        else
        {
            NS_LOG_WARN(src << ":" << lineNo << ": ignoring header key '" << key << "'");
        }
        ++i;
    }
    if (w.modelParallelGroup == 0 || w.ep == 0 || w.pp == 0)
    {
        fail("model_parallel_NPU_group", "group sizes must be at least 1");
    }

    // Line 2: number of layers.
    tok.clear();
    while (tok.empty() && std::getline(in, line))
    {
        ++lineNo;
        tok = Split(line);
    }
    if (tok.size() != 1)
    {
        fail("layers", "expected the number of layers on a line of its own");
    }
    const uint64_t declared = number("layers", tok[0].first, 1000000);

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
                                    "update time"};
    while (std::getline(in, line))
    {
        ++lineNo;
        tok = Split(line);
        if (tok.empty())
        {
            continue;
        }
        if (w.layers.size() == declared)
        {
            fail("layers", "more layer rows than the " + std::to_string(declared) + " declared");
        }
        if (tok.size() != 12)
        {
            fail(tok.size() < 12 ? columns[tok.size()] : "layers",
                 "expected 12 columns (name, reserved, fwd compute, fwd comm, fwd bytes, ig "
                 "compute, ig comm, ig bytes, wg compute, wg comm, wg bytes, update), got " +
                     std::to_string(tok.size()));
        }
        SimAiLayer layer;
        layer.line = lineNo;
        layer.name = tok[0].first;
        const std::string& res = tok[1].first;
        uint64_t reserved = 0;
        if (res != "-1" && !(ParseUnsigned(res, &reserved) && reserved < INT64_MAX))
        {
            fail(columns[1], "expected -1 or a number, got '" + res + "'");
        }
        auto comm = [&](size_t col, SimAiCollective* c) {
            std::string type = tok[col].first;
            c->bytes = number(columns[col + 1], tok[col + 1].first, UINT64_MAX);
            if (type == "NONE")
            {
                return;
            }
            c->present = true;
            c->group = SimAiGroupKind::None;
            auto strip = [&](const std::string& suffix, SimAiGroupKind kind) {
                if (type.size() > suffix.size() &&
                    type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0)
                {
                    type.resize(type.size() - suffix.size());
                    c->group = kind;
                    return true;
                }
                return false;
            };
            strip("_DP_EP", SimAiGroupKind::DpEp) || strip("_EP", SimAiGroupKind::Ep);
            if (type == "ALLREDUCE")
            {
                c->kind = WorkloadOpKind::AllReduce;
            }
            else if (type == "ALLGATHER")
            {
                c->kind = WorkloadOpKind::AllGather;
            }
            else if (type == "REDUCESCATTER")
            {
                c->kind = WorkloadOpKind::ReduceScatter;
            }
            else if (type == "ALLTOALL")
            {
                c->kind = WorkloadOpKind::AllToAll;
            }
            else if (type == "BROADCAST")
            {
                c->kind = WorkloadOpKind::Broadcast;
            }
            else
            {
                fail(columns[col],
                     "expected NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or "
                     "BROADCAST (optionally _EP or _DP_EP), got '" +
                         tok[col].first + "'");
            }
        };
        layer.reserved = res == "-1" ? -1 : static_cast<int64_t>(reserved);
        layer.fwdCompute = number(columns[2], tok[2].first, UINT64_MAX);
        comm(3, &layer.fwdComm);
        layer.igCompute = number(columns[5], tok[5].first, UINT64_MAX);
        comm(6, &layer.igComm);
        layer.wgCompute = number(columns[8], tok[8].first, UINT64_MAX);
        comm(9, &layer.wgComm);
        layer.updateTime = number(columns[11], tok[11].first, UINT64_MAX);
        w.layers.push_back(std::move(layer));
    }
    if (w.layers.size() != declared)
    {
        fail("layers",
             "file declares " + std::to_string(declared) + " layers but has " +
                 std::to_string(w.layers.size()));
    }
    return w;
}

WorkloadTrace
SimAiWorkloadImporter::ToTrace(const SimAiWorkload& w,
                               const SimAiImportOptions& options,
                               const std::string& src)
{
    const uint32_t n = options.ranks ? options.ranks : w.allGpus;
    if (n == 0)
    {
        throw WorkloadError(src,
                            1,
                            "all_gpus",
                            "the header gives no all_gpus: pass the rank count explicitly");
    }
    const std::string& p = w.parallelism;
    const bool data = p == "DATA" || p == "MICRO";
    const bool model = p == "MODEL";
    const uint32_t tp = data ? 1 : model ? n : w.modelParallelGroup;
    const uint32_t pp = data || model ? 1 : w.pp;
    if (tp == 0 || n % (uint64_t(tp) * pp) != 0)
    {
        throw WorkloadError(src,
                            1,
                            "model_parallel_NPU_group",
                            std::to_string(n) + " ranks are not a multiple of tp " +
                                std::to_string(tp) + " x pp " + std::to_string(pp));
    }
    const uint32_t dp = n / (tp * pp);
    const uint32_t ep = w.ep;
    if (dp % ep != 0)
    {
        throw WorkloadError(src,
                            1,
                            "ep",
                            "ep " + std::to_string(ep) + " does not divide dp " +
                                std::to_string(dp));
    }
    // HYBRID_MODEL_DATA puts the data-parallel dimension first (innermost).
    const bool dpInner = p == "HYBRID_MODEL_DATA";
    auto rankOf = [&](uint32_t stage, uint32_t d, uint32_t t) {
        return dpInner ? (stage * tp + t) * dp + d : (stage * dp + d) * tp + t;
    };

    WorkloadTraceBuilder b(src);
    b.SetNumRanks(n, 1);
    // Group of each kind for each rank.
    std::vector<int32_t> tpOf(n, -1), dpOf(n, -1), epOf(n, -1), dpepOf(n, -1);
    for (uint32_t s = 0; s < pp; ++s)
    {
        for (uint32_t d = 0; d < dp; ++d)
        {
            std::vector<uint32_t> ranks;
            for (uint32_t t = 0; t < tp; ++t)
            {
                ranks.push_back(rankOf(s, d, t));
            }
            if (tp < 2)
            {
                continue; // one-rank groups move nothing
            }
            int32_t g =
                b.AddGroup("tp" + std::to_string(s * dp + d), ranks, 1, ParallelismKind::Tp);
            for (uint32_t r : ranks)
            {
                tpOf[r] = g;
            }
        }
        for (uint32_t t = 0; t < tp; ++t)
        {
            std::vector<uint32_t> ranks;
            for (uint32_t d = 0; d < dp; ++d)
            {
                ranks.push_back(rankOf(s, d, t));
            }
            int32_t g = -1;
            if (dp > 1)
            {
                g = b.AddGroup("dp" + std::to_string(s * tp + t), ranks, 1, ParallelismKind::Dp);
                for (uint32_t r : ranks)
                {
                    dpOf[r] = g;
                }
            }
            if (ep > 1)
            {
                for (uint32_t e = 0; e < dp / ep; ++e)
                {
                    std::vector<uint32_t> eranks;
                    for (uint32_t k = 0; k < ep; ++k)
                    {
                        eranks.push_back(rankOf(s, e * ep + k, t));
                    }
                    g = b.AddGroup("ep" + std::to_string((s * tp + t) * (dp / ep) + e),
                                   eranks,
                                   1,
                                   ParallelismKind::Ep);
                    for (uint32_t r : eranks)
                    {
                        epOf[r] = g;
                    }
                }
                for (uint32_t k = 0; k < ep; ++k)
                {
                    std::vector<uint32_t> xranks;
                    for (uint32_t e = 0; e < dp / ep; ++e)
                    {
                        xranks.push_back(rankOf(s, e * ep + k, t));
                    }
                    g = b.AddGroup("dpep" + std::to_string((s * tp + t) * ep + k),
                                   xranks,
                                   1,
                                   ParallelismKind::Dp);
                    for (uint32_t r : xranks)
                    {
                        dpepOf[r] = g;
                    }
                }
            }
        }
    }
    if (ep <= 1)
    {
        epOf = std::vector<int32_t>(n, -1);
        dpepOf = dpOf;
    }

    // Which communicator a collective of each phase runs on (ASTRA-sim's
    // involved dimensions): fwd/ig on the model group, wg on the data group.
    const bool fwdIgComm = !data;
    const bool wgComm = !model;
    uint32_t statement = 0;
    auto ticks = [&](uint64_t t) {
        const double ns = std::round(static_cast<double>(t) * options.nsPerTick);
        return ns >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(ns);
    };
    for (uint32_t r = 0; r < n; ++r)
    {
        statement = 0;
        std::vector<std::string> wgDone(w.layers.size()); // label of layer's last wg op
        auto add = [&](WorkloadOp op, uint32_t line) {
            op.line = line;
            op.statement = statement++;
            b.AddOp(r, std::move(op));
        };
        auto collective = [&](const SimAiCollective& c,
                              bool phaseAllowed,
                              SimAiGroupKind plain,
                              const std::string& label,
                              uint32_t stream,
                              std::vector<std::string> after,
                              uint32_t line) -> bool {
            if (!c.present || !phaseAllowed)
            {
                return false;
            }
            SimAiGroupKind kind = c.group == SimAiGroupKind::None ? plain : c.group;
            int32_t g = kind == SimAiGroupKind::Tp     ? tpOf[r]
                        : kind == SimAiGroupKind::Dp   ? dpOf[r]
                        : kind == SimAiGroupKind::Ep   ? epOf[r]
                        : kind == SimAiGroupKind::DpEp ? dpepOf[r]
                                                       : -1;
            if (g < 0 && (kind == SimAiGroupKind::Tp || kind == SimAiGroupKind::Dp))
            {
                return false; // tp 1 or dp 1: no such group, as SimAI moves nothing
            }
            if (g < 0)
            {
                throw WorkloadError(src,
                                    line,
                                    "ep",
                                    "an _EP collective needs ep > 1 in the header");
            }
            if (b.GetGroup(g).ranks.size() < 2)
            {
                return false; // a collective over one rank moves nothing
            }
            WorkloadOp op;
            op.kind = c.kind;
            op.label = label;
            op.bytes = c.bytes;
            op.group = g;
            op.stream = stream;
            op.after = std::move(after);
            if (op.kind == WorkloadOpKind::Broadcast)
            {
                op.root = static_cast<int32_t>(b.GetGroup(g).ranks.front());
            }
            add(std::move(op), line);
            return true;
        };
        auto compute = [&](uint64_t t,
                           const std::string& label,
                           std::vector<std::string> after,
                           uint32_t line) {
            if (t == 0)
            {
                return false;
            }
            WorkloadOp op;
            op.kind = WorkloadOpKind::Compute;
            op.label = label;
            op.timeNs = ticks(t);
            op.after = std::move(after);
            add(std::move(op), line);
            return true;
        };
        for (uint32_t pass = 0; pass < options.passes; ++pass)
        {
            const std::string pfx = "p" + std::to_string(pass) + ".l";
            if (p == "MICRO")
            {
                // Each layer's wg collective, one after the other.
                for (size_t i = 0; i < w.layers.size(); ++i)
                {
                    collective(w.layers[i].wgComm,
                               true,
                               SimAiGroupKind::Dp,
                               pfx + std::to_string(i) + ".wgc",
                               0,
                               {},
                               w.layers[i].line);
                }
                continue;
            }
            // Forward: compute then blocking collective; a layer waits for its
            // previous pass's weight-gradient collective.
            for (size_t i = 0; i < w.layers.size(); ++i)
            {
                const auto& L = w.layers[i];
                const std::string id = pfx + std::to_string(i);
                std::vector<std::string> after;
                if (!wgDone[i].empty())
                {
                    after.push_back(wgDone[i]);
                }
                if (!compute(L.fwdCompute, id + ".f", after, L.line) && !after.empty())
                {
                    compute(1, id + ".f", after, L.line); // keeps the dependency
                }
                collective(L.fwdComm, fwdIgComm, SimAiGroupKind::Tp, id + ".fc", 0, {}, L.line);
            }
            // Backward, last layer first: ig compute, ig collective (stream 1,
            // waited for before the next layer), wg compute, wg collective (stream 2).
            std::string pendingIg;
            for (size_t k = w.layers.size(); k-- > 0;)
            {
                const auto& L = w.layers[k];
                const std::string id = pfx + std::to_string(k);
                std::vector<std::string> after;
                if (!pendingIg.empty())
                {
                    after.push_back(pendingIg);
                }
                pendingIg.clear();
                // As ASTRA-sim: the first layer has no input-gradient collective,
                // and under DATA no input-gradient compute either.
                bool igc = !(data && k == 0) && compute(L.igCompute, id + ".ig", after, L.line);
                if (!igc && !after.empty())
                {
                    igc = compute(1, id + ".ig", after, L.line);
                }
                if (k > 0 && collective(L.igComm,
                                        fwdIgComm,
                                        SimAiGroupKind::Tp,
                                        id + ".igc",
                                        1,
                                        igc ? std::vector<std::string>{id + ".ig"}
                                            : std::vector<std::string>{},
                                        L.line))
                {
                    pendingIg = id + ".igc";
                }
                const bool wgc = compute(L.wgCompute, id + ".wg", {}, L.line);
                if (collective(L.wgComm,
                               wgComm,
                               SimAiGroupKind::Dp,
                               id + ".wgc",
                               2,
                               wgc ? std::vector<std::string>{id + ".wg"}
                                   : std::vector<std::string>{},
                               L.line))
                {
                    wgDone[k] = id + ".wgc";
                }
            }
        }
    }
    return b.Build();
}

WorkloadTrace
SimAiWorkloadImporter::ImportFile(const std::string& path, const SimAiImportOptions& options)
{
    return ToTrace(ParseFile(path), options, path);
}

} // namespace ns3
