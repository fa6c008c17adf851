/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * SimAI / ASTRA-sim 1.0 layer files to per-rank programs: ASTRA-sim's training loops
 * (Workload::iterate_* of ASTRA-sim 1.0 and SimAI), SimAI's TP / DP / EP / DP_EP
 * groups, and a 1F1B pipeline for pp > 1.  Rules and sources: doc/workload.md.
 */
#include "ns3/log.h"
#include "ns3/trace-simai.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("AstraSimLoop");

namespace
{

/// The communicator a phase's collective runs on, before the _EP / _DP_EP suffix.
enum class Role : uint8_t
{
    None,  ///< ASTRA-sim involves no dimension: the collective is not issued
    Inner, ///< consecutive blocks of the first dimension's size
    Outer, ///< the ranks of a stage with the same inner index
    World, ///< every rank
};

struct Placement
{
    Role fwd = Role::None;
    Role ig = Role::None;
    Role wg = Role::None;
};

/// ASTRA-sim's decode_involved_dimensions, with the first dimension as "inner".
Placement
PlacementOf(const std::string& p, bool customizedRow)
{
    if (p == "DATA")
    {
        return {Role::None, Role::None, customizedRow ? Role::World : Role::Outer};
    }
    if (p == "MICRO" || p == "HYBRID_DLRM")
    {
        return {Role::None, Role::None, Role::Outer};
    }
    if (p == "MODEL")
    {
        return customizedRow ? Placement{Role::World, Role::World, Role::None}
                             : Placement{Role::Inner, Role::Inner, Role::None};
    }
    if (p == "HYBRID_MODEL_DATA")
    {
        return {Role::Outer, Role::Outer, Role::Inner};
    }
    return {Role::Inner, Role::Inner, Role::Outer}; // DATA_MODEL, TRANSFORMER*, CUSTOMIZED
}

enum class Loop : uint8_t
{
    Data,        ///< iterate_data_parallel: no fwd / ig collectives, wg before ig
    Model,       ///< iterate_model_parallel: no wg collective
    Hybrid,      ///< DATA_MODEL, MODEL_DATA, CUSTOMIZED: no ig collective on layer 0
    Transformer, ///< HYBRID_TRANSFORMER(_FWD_IN_BCKWD): ig collective on every layer
    Dlrm,        ///< iterate_hybrid_parallel_DLRM
    Micro,       ///< the wg collectives of every row
};

Loop
LoopOf(const std::string& p)
{
    if (p == "DATA")
    {
        return Loop::Data;
    }
    if (p == "MODEL")
    {
        return Loop::Model;
    }
    if (p == "HYBRID_DLRM")
    {
        return Loop::Dlrm;
    }
    if (p == "MICRO")
    {
        return Loop::Micro;
    }
    if (p.rfind("HYBRID_TRANSFORMER", 0) == 0)
    {
        return Loop::Transformer;
    }
    return Loop::Hybrid;
}

/// One step of a stage's pipeline schedule.
struct PipelineStep
{
    bool forward;
    uint32_t microBatch;
    uint32_t chunk;
};

// Megatron-LM's 1F1B order (forward_backward_pipelining_without_interleaving) and its
// interleaved form for vpp > 1 (model chunks, warm-up of (pp-s-1)*2 + (vpp-1)*pp).
std::vector<PipelineStep>
OneFOneB(uint32_t pp, uint32_t vpp, uint32_t m, uint32_t stage)
{
    const uint64_t total = uint64_t(m) * vpp;
    uint64_t warmup =
        vpp == 1 ? pp - stage - 1 : uint64_t(pp - stage - 1) * 2 + uint64_t(vpp - 1) * pp;
    if (vpp > 1 && m == pp)
    {
        warmup = total;
    }
    warmup = std::min(warmup, total);
    auto chunk = [&](uint64_t k, bool fwd) {
        const auto c = static_cast<uint32_t>((k % (uint64_t(pp) * vpp)) / pp);
        return fwd ? c : vpp - 1 - c;
    };
    auto mb = [&](uint64_t k) {
        return static_cast<uint32_t>((k / (uint64_t(pp) * vpp)) * pp + k % pp);
    };
    std::vector<PipelineStep> steps;
    steps.reserve(2 * total);
    for (uint64_t k = 0; k < warmup; ++k)
    {
        steps.push_back({true, mb(k), chunk(k, true)});
    }
    for (uint64_t i = 0; i + warmup < total; ++i)
    {
        steps.push_back({true, mb(warmup + i), chunk(warmup + i, true)});
        steps.push_back({false, mb(i), chunk(i, false)});
    }
    for (uint64_t k = total - warmup; k < total; ++k)
    {
        steps.push_back({false, mb(k), chunk(k, false)});
    }
    return steps;
}

/// Row ranges of an AICB-style file: ga copies of one block of rows, between a prologue
/// (gradient norm and the DP collectives) and an epilogue (loss, optimizer).
struct MicroBatches
{
    size_t begin = 0;  ///< first row of the first block
    size_t length = 0; ///< rows per block
    uint32_t count = 1;
};

MicroBatches
FindMicroBatches(const SimAiWorkload& w)
{
    MicroBatches mb;
    mb.length = w.layers.size();
    const size_t n = w.layers.size();
    if (w.ga <= 1 || n == 0)
    {
        return mb;
    }
    // The first row name that occurs exactly ga times opens every block.
    std::map<std::string, std::vector<size_t>> at;
    for (size_t i = 0; i < n; ++i)
    {
        at[w.layers[i].name].push_back(i);
    }
    for (size_t i = 0; i < n; ++i)
    {
        const auto& pos = at[w.layers[i].name];
        if (pos.size() != w.ga || pos.front() != i)
        {
            continue;
        }
        const size_t len = pos.size() > 1 ? pos[1] - pos[0] : 0;
        bool same = len > 0 && pos[0] + len * w.ga <= n;
        for (size_t b = 1; same && b < w.ga; ++b)
        {
            same = pos[b] == pos[0] + b * len;
            for (size_t r = 0; same && r < len; ++r)
            {
                same = w.layers[pos[0] + r].name == w.layers[pos[b] + r].name;
            }
        }
        if (same)
        {
            return {pos[0], len, w.ga};
        }
        break;
    }
    return mb;
}

/// Ranks, groups and their roles.
class Layout
{
  public:
    Layout(WorkloadTraceBuilder& b,
           const SimAiWorkload& w,
           const SimAiImportOptions& options,
           const std::string& src,
           bool pipelined);

    /// The group rank r's collective runs on, or -1 when it moves nothing.
    int32_t GroupOf(uint32_t r, Role role, SimAiGroupKind suffix) const;

    uint32_t Stage(uint32_t r) const
    {
        return r / m_perStage;
    }

    uint32_t RankAt(uint32_t stage, uint32_t local) const
    {
        return stage * m_perStage + local;
    }

    uint32_t PerStage() const
    {
        return m_perStage;
    }

  private:
    std::vector<int32_t> m_inner, m_outer, m_ep, m_dpep;
    int32_t m_world = -1;
    uint32_t m_perStage = 1;
    bool m_dataInner = false;
};

Layout::Layout(WorkloadTraceBuilder& b,
               const SimAiWorkload& w,
               const SimAiImportOptions& options,
               const std::string& src,
               bool pipelined)
{
    const uint32_t n = b.GetNumRanks();
    const std::string& p = w.parallelism;
    const Loop loop = LoopOf(p);
    const uint32_t pp = pipelined ? w.pp : 1;
    if (n % pp != 0)
    {
        throw WorkloadError(src,
                            1,
                            "pp",
                            std::to_string(n) + " ranks are not a multiple of pp " +
                                std::to_string(pp));
    }
    m_perStage = n / pp;
    uint32_t t = 1; // size of the inner dimension
    if (loop == Loop::Model)
    {
        t = m_perStage;
    }
    else if (loop == Loop::Transformer)
    {
        // SimAI: model_parallel_NPU_group 0 is every rank (Sys::mock_nccl_comms_init).
        t = w.modelParallelGroup ? w.modelParallelGroup : m_perStage;
    }
    else if (loop == Loop::Hybrid)
    {
        // The first dimension is the model group, or under HYBRID_MODEL_DATA the data
        // group; model_parallel_NPU_group, when written, is the model group's size.
        const uint32_t mp = w.modelParallelGroup;
        t = mp == 0                    ? options.firstDimension
            : p != "HYBRID_MODEL_DATA" ? mp
            : m_perStage % mp == 0     ? m_perStage / mp
                                       : 0;
        if (mp != 0 && t == 0)
        {
            throw WorkloadError(src,
                                1,
                                "model_parallel_NPU_group",
                                std::to_string(n) + " ranks are not a multiple of tp " +
                                    std::to_string(mp));
        }
        if (t == 0)
        {
            throw WorkloadError(src,
                                1,
                                "model_parallel_NPU_group",
                                p + " needs the size of ASTRA-sim's first network dimension: "
                                    "give model_parallel_NPU_group in the header or the import's "
                                    "first dimension (cluster-replay: the GPUs of one server)");
        }
    }
    if (m_perStage % t != 0)
    {
        throw WorkloadError(src,
                            1,
                            "model_parallel_NPU_group",
                            std::to_string(n) + " ranks are not a multiple of tp " +
                                std::to_string(t) + " x pp " + std::to_string(pp));
    }
    const uint32_t d = m_perStage / t;
    m_dataInner = p == "HYBRID_MODEL_DATA";
    const uint32_t dataSize = m_dataInner ? t : d;
    const uint32_t ep = w.ep;
    if (ep > 1 && dataSize % ep != 0)
    {
        throw WorkloadError(src,
                            1,
                            "ep",
                            "ep " + std::to_string(ep) + " does not divide dp " +
                                std::to_string(dataSize));
    }
    m_inner.assign(n, -1);
    m_outer.assign(n, -1);
    m_ep.assign(n, -1);
    m_dpep.assign(n, -1);
    const char* innerName = m_dataInner ? "dp" : "tp";
    const char* outerName = m_dataInner ? "tp" : "dp";
    auto add = [&](const std::string& prefix,
                   uint32_t index,
                   const std::vector<uint32_t>& ranks,
                   std::vector<int32_t>& of) {
        const ParallelismKind kind = prefix == "tp"   ? ParallelismKind::Tp
                                     : prefix == "ep" ? ParallelismKind::Ep
                                                      : ParallelismKind::Dp;
        const int32_t g = b.AddGroup(prefix + std::to_string(index), ranks, 1, kind);
        for (uint32_t r : ranks)
        {
            of[r] = g;
        }
    };
    // Expert groups inside a data group: blocks of ep consecutive members (EP) and the
    // members with equal index mod ep (DP_EP), as SimAI's MockNcclGroup.
    auto experts = [&](const std::vector<uint32_t>& data, uint32_t base) {
        if (ep <= 1)
        {
            return;
        }
        const uint32_t blocks = static_cast<uint32_t>(data.size()) / ep;
        for (uint32_t e = 0; e < blocks; ++e)
        {
            add("ep",
                base * blocks + e,
                std::vector<uint32_t>(data.begin() + e * ep, data.begin() + (e + 1) * ep),
                m_ep);
        }
        for (uint32_t k = 0; k < ep; ++k)
        {
            std::vector<uint32_t> x;
            for (uint32_t e = 0; e < blocks; ++e)
            {
                x.push_back(data[e * ep + k]);
            }
            add("dpep", base * ep + k, x, m_dpep);
        }
    };
    for (uint32_t s = 0; s < pp; ++s)
    {
        for (uint32_t o = 0; t > 1 && o < d; ++o)
        {
            std::vector<uint32_t> ranks;
            for (uint32_t k = 0; k < t; ++k)
            {
                ranks.push_back(RankAt(s, o * t + k));
            }
            add(innerName, s * d + o, ranks, m_inner);
            if (m_dataInner)
            {
                experts(ranks, s * d + o);
            }
        }
        for (uint32_t k = 0; k < t; ++k)
        {
            std::vector<uint32_t> ranks;
            for (uint32_t o = 0; o < d; ++o)
            {
                ranks.push_back(RankAt(s, o * t + k));
            }
            if (d > 1)
            {
                add(outerName, s * t + k, ranks, m_outer);
            }
            if (!m_dataInner)
            {
                experts(ranks, s * t + k);
            }
        }
    }
    if (ep <= 1)
    {
        m_dpep = m_dataInner ? m_inner : m_outer; // DP_EP is the DP group, EP one rank
    }
    // The whole job, for HYBRID_CUSTOMIZED rows of DATA or MODEL and DLRM's first layer.
    bool needWorld = loop == Loop::Dlrm;
    for (const auto& l : w.layers)
    {
        needWorld = needWorld || l.policy == "DATA" || l.policy == "MODEL";
    }
    if (needWorld && n > 1)
    {
        m_world = pp == 1 && t == 1 ? m_outer[0] : pp == 1 && d == 1 ? m_inner[0] : -1;
        if (m_world < 0)
        {
            std::vector<uint32_t> all(n);
            for (uint32_t r = 0; r < n; ++r)
            {
                all[r] = r;
            }
            m_world = b.AddGroup("world", all, 1, ParallelismKind::Other);
        }
    }
}

int32_t
Layout::GroupOf(uint32_t r, Role role, SimAiGroupKind suffix) const
{
    if (role == Role::None)
    {
        return -1;
    }
    if (suffix == SimAiGroupKind::Ep)
    {
        return m_ep[r];
    }
    if (suffix == SimAiGroupKind::DpEp)
    {
        return m_dpep[r];
    }
    return role == Role::Inner ? m_inner[r] : role == Role::Outer ? m_outer[r] : m_world;
}

/// One rank's program: ops in program order on stream 0 (compute and blocking
/// collectives), 1 (input-gradient collectives), 2 (weight-gradient collectives) and
/// 3 (pipeline sends); waits are dependencies of the next stream-0 op.
class RankProgram
{
  public:
    RankProgram(WorkloadTraceBuilder& b,
                const Layout& layout,
                const SimAiWorkload& w,
                const SimAiImportOptions& options,
                uint32_t rank)
        : m_b(b),
          m_layout(layout),
          m_w(w),
          m_options(options),
          m_rank(rank),
          m_loop(LoopOf(w.parallelism)),
          m_wgDone(w.layers.size())
    {
        for (uint32_t c : w.checkpoints)
        {
            m_checkpoint.insert(c);
        }
        for (uint32_t c : w.checkpointInitiates)
        {
            m_initiates.insert(c);
        }
        m_recompute = w.parallelism == "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
    }

    void Pass(uint32_t pass, const MicroBatches& mbs, uint32_t vpp, bool pipelined);

  private:
    void Emit(WorkloadOp op, uint32_t line)
    {
        op.line = line;
        op.statement = m_statement++;
        if (op.stream == 0)
        {
            op.after.insert(op.after.end(), m_pending.begin(), m_pending.end());
            m_pending.clear();
            m_lastMain = op.label;
        }
        m_b.AddOp(m_rank, std::move(op));
    }

    /// What a side-stream op issued here waits for: the rank's position in its program.
    std::vector<std::string> Point() const
    {
        std::vector<std::string> p = m_pending;
        if (!m_lastMain.empty())
        {
            p.insert(p.begin(), m_lastMain);
        }
        return p;
    }

    uint64_t Ns(uint64_t ticks) const
    {
        const double ns = std::round(static_cast<double>(ticks) * m_options.nsPerTick);
        return ns >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(ns);
    }

    void Compute(uint64_t ticks, const std::string& label, uint32_t stream, uint32_t line)
    {
        if (Ns(ticks) == 0)
        {
            return;
        }
        WorkloadOp op;
        op.kind = WorkloadOpKind::Compute;
        op.label = label;
        op.timeNs = Ns(ticks);
        op.stream = stream;
        Emit(std::move(op), line);
    }

    /// Issues a collective (and the row's update time after it); returns the label
    /// whose completion the loop waits for, or "" when nothing moves.
    std::string Collective(const SimAiCollective& c,
                           Role role,
                           const SimAiLayer& row,
                           const std::string& label,
                           uint32_t stream)
    {
        const int32_t g = c.present ? m_layout.GroupOf(m_rank, role, c.group) : -1;
        if (g < 0 || m_b.GetGroup(g).ranks.size() < 2)
        {
            return "";
        }
        WorkloadOp op;
        op.kind = c.kind;
        op.label = label;
        op.bytes = c.bytes;
        op.group = g;
        op.stream = stream;
        if (stream != 0)
        {
            op.after = Point();
        }
        Emit(std::move(op), row.line);
        if (Ns(row.updateTime) == 0)
        {
            return label;
        }
        Compute(row.updateTime, label + "u", stream, row.line);
        return label + "u";
    }

    void Wait(const std::string& label)
    {
        if (!label.empty())
        {
            m_pending.push_back(label);
        }
    }

    Placement PlacementAt(size_t i) const
    {
        const SimAiLayer& L = m_w.layers[i];
        if (m_loop == Loop::Dlrm && i == 0)
        {
            return {Role::World, Role::World, Role::World};
        }
        return L.policy.empty() ? PlacementOf(m_w.parallelism, false) : PlacementOf(L.policy, true);
    }

    void Forward(size_t i, const std::string& id, bool recompute);
    void Backward(size_t k, const std::string& id);
    void Rows(size_t begin, size_t end, bool forward, const std::string& pfx);
    void PipeTransfer(bool send, bool activation, uint32_t mb, uint32_t v, const std::string& pfx);

    WorkloadTraceBuilder& m_b;
    const Layout& m_layout;
    const SimAiWorkload& m_w;
    const SimAiImportOptions& m_options;
    uint32_t m_rank;
    Loop m_loop;
    uint32_t m_statement = 0;
    std::vector<std::string> m_pending;
    std::string m_lastMain;
    std::vector<std::string> m_wgDone; ///< completion label of each row's last wg collective
    std::string m_dlrmFwd0, m_dlrmIg0;
    std::set<uint32_t> m_checkpoint, m_initiates;
    bool m_recompute = false;
};

void
RankProgram::Forward(size_t i, const std::string& id, bool recompute)
{
    const SimAiLayer& L = m_w.layers[i];
    const Placement pl = PlacementAt(i);
    if (!recompute)
    {
        Wait(m_wgDone[i]); // the previous pass's weight-gradient collective of this row
    }
    Compute(L.fwdCompute, id + ".f", 0, L.line);
    if (m_loop == Loop::Dlrm)
    {
        // Only all-to-alls are issued (non-blocking); the last bottom layer waits for
        // the first layer's.
        if (L.fwdComm.kind == WorkloadOpKind::AllToAll)
        {
            const std::string done = Collective(L.fwdComm, pl.fwd, L, id + ".fc", 1);
            if (i == 0)
            {
                m_dlrmFwd0 = done;
            }
        }
        if (static_cast<int64_t>(i) == m_w.dlrmLastBottomLayer)
        {
            Wait(m_dlrmFwd0);
        }
        return;
    }
    if (m_loop != Loop::Data)
    {
        Collective(L.fwdComm, pl.fwd, L, id + ".fc", 0);
    }
}

void
RankProgram::Backward(size_t k, const std::string& id)
{
    const SimAiLayer& L = m_w.layers[k];
    const Placement pl = PlacementAt(k);
    if (m_loop == Loop::Data || m_loop == Loop::Dlrm)
    {
        // Weight gradient first, then the input gradient of every layer but the first.
        Compute(L.wgCompute, id + ".wg", 0, L.line);
        const std::string wg = Collective(L.wgComm, pl.wg, L, id + ".wgc", 2);
        if (!wg.empty())
        {
            m_wgDone[k] = wg;
        }
        if (m_loop == Loop::Dlrm && k == 0)
        {
            Wait(m_dlrmIg0);
        }
        if (k > 0)
        {
            Compute(L.igCompute, id + ".ig", 0, L.line);
        }
        if (m_loop == Loop::Dlrm && static_cast<int64_t>(k) == m_w.dlrmLastBottomLayer + 1)
        {
            const SimAiLayer& first = m_w.layers[0];
            m_dlrmIg0 = Collective(first.igComm, Role::World, first, id + ".l0igc", 1);
        }
        return;
    }
    if (m_recompute && m_initiates.count(static_cast<uint32_t>(k)))
    {
        // Forward-in-backward: recompute from the nearest checkpoint at or below k.
        size_t c = k; // the parser made sure there is one
        while (c > 0 && !m_checkpoint.count(static_cast<uint32_t>(c)))
        {
            --c;
        }
        for (size_t j = c; j < std::max(k, c + 1); ++j)
        {
            const std::string rid =
                id.substr(0, id.rfind(".l")) + ".l" + std::to_string(j) + ".r" + std::to_string(k);
            Forward(j, rid, true);
        }
    }
    Compute(L.igCompute, id + ".ig", 0, L.line);
    std::string ig;
    if (k > 0 || m_loop == Loop::Transformer)
    {
        ig = Collective(L.igComm, pl.ig, L, id + ".igc", 1);
    }
    Compute(L.wgCompute, id + ".wg", 0, L.line);
    if (m_loop != Loop::Model)
    {
        const std::string wg = Collective(L.wgComm, pl.wg, L, id + ".wgc", 2);
        if (!wg.empty())
        {
            m_wgDone[k] = wg;
        }
    }
    Wait(ig); // before the next layer
}

void
RankProgram::Rows(size_t begin, size_t end, bool forward, const std::string& pfx)
{
    if (forward)
    {
        for (size_t i = begin; i < end; ++i)
        {
            Forward(i, pfx + std::to_string(i), false);
        }
        return;
    }
    for (size_t k = end; k-- > begin;)
    {
        Backward(k, pfx + std::to_string(k));
    }
}

void
RankProgram::PipeTransfer(bool send,
                          bool activation,
                          uint32_t mb,
                          uint32_t v,
                          const std::string& pfx)
{
    // v: the virtual stage the data leaves; activations go to v + 1, gradients to v - 1.
    const uint32_t pp = m_w.pp;
    const uint32_t stage = m_layout.Stage(m_rank);
    const uint32_t local = m_rank - m_layout.RankAt(stage, 0);
    const uint32_t other = activation ? (v + 1) % pp : (v + pp - 1) % pp;
    const uint32_t peer = m_layout.RankAt(send ? other : v % pp, local);
    WorkloadOp op;
    op.kind = send ? WorkloadOpKind::Send : WorkloadOpKind::Recv;
    op.label = pfx + ".m" + std::to_string(mb) + (activation ? ".a" : ".g") + std::to_string(v);
    op.bytes = m_w.ppCommBytes;
    if (send)
    {
        op.to = static_cast<int32_t>(peer);
        op.stream = 3;
        op.after = Point();
    }
    else
    {
        op.from = static_cast<int32_t>(peer);
    }
    Emit(std::move(op), 1);
}

void
RankProgram::Pass(uint32_t pass, const MicroBatches& mbs, uint32_t vpp, bool pipelined)
{
    const std::string pfx = "p" + std::to_string(pass);
    const std::string rowPfx = pfx + ".l";
    const size_t n = m_w.layers.size();
    if (m_loop == Loop::Micro)
    {
        // Each row's wg collective, one after the other.
        for (size_t i = 0; i < n; ++i)
        {
            Collective(m_w.layers[i].wgComm,
                       Role::Outer,
                       m_w.layers[i],
                       rowPfx + std::to_string(i) + ".wgc",
                       0);
        }
        return;
    }
    if (!pipelined)
    {
        Rows(0, n, true, rowPfx);
        Rows(0, n, false, rowPfx);
        return;
    }
    const uint32_t pp = m_w.pp;
    const uint32_t stage = m_layout.Stage(m_rank);
    const uint32_t virtualStages = pp * vpp;
    const bool transfers = m_w.ppCommBytes > 0;
    auto chunkRows = [&](uint32_t mb, uint32_t c) {
        const size_t base = mbs.begin + mb * mbs.length;
        return std::make_pair(base + c * mbs.length / vpp, base + (c + 1) * mbs.length / vpp);
    };
    Rows(0, mbs.begin, true, rowPfx); // prologue
    for (const PipelineStep& s : OneFOneB(pp, vpp, mbs.count, stage))
    {
        const uint32_t v = s.chunk * pp + stage;
        const auto [b, e] = chunkRows(s.microBatch, s.chunk);
        if (s.forward)
        {
            if (transfers && v > 0)
            {
                PipeTransfer(false, true, s.microBatch, v - 1, pfx);
            }
            Rows(b, e, true, rowPfx);
            if (transfers && v + 1 < virtualStages)
            {
                PipeTransfer(true, true, s.microBatch, v, pfx);
            }
        }
        else
        {
            if (transfers && v + 1 < virtualStages)
            {
                PipeTransfer(false, false, s.microBatch, v + 1, pfx);
            }
            Rows(b, e, false, rowPfx);
            if (transfers && v > 0)
            {
                PipeTransfer(true, false, s.microBatch, v, pfx);
            }
        }
    }
    const size_t tail = mbs.begin + mbs.count * mbs.length;
    Rows(tail, n, true, rowPfx); // epilogue: loss and optimizer
    Rows(tail, n, false, rowPfx);
    Rows(0, mbs.begin, false, rowPfx); // the prologue's gradient collectives come last
}

} // namespace

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
    WorkloadTraceBuilder b(src);
    b.SetNumRanks(n, 1);
    for (const auto& [line, text] : w.warnings)
    {
        b.AddWarning(line, text);
    }
    // SimAI reads pp, vpp and ga for the transformer policies only.
    const bool pipelined = LoopOf(w.parallelism) == Loop::Transformer && w.pp > 1;
    const Layout layout(b, w, options, src, pipelined);
    MicroBatches mbs;
    mbs.length = w.layers.size();
    uint32_t vpp = 1;
    if (pipelined)
    {
        mbs = FindMicroBatches(w);
        if (w.ga > 1 && mbs.count == 1)
        {
            b.AddWarning(1,
                         "ga " + std::to_string(w.ga) + " but the rows are not " +
                             std::to_string(w.ga) +
                             " copies of one block: the file is replayed as one micro-batch");
        }
        vpp = w.vpp;
        if (vpp > 1 && (mbs.length < vpp || mbs.count % w.pp != 0))
        {
            b.AddWarning(1,
                         "vpp " + std::to_string(vpp) +
                             " needs at least vpp rows per "
                             "micro-batch and a micro-batch count that is a multiple of pp "
                             "(interleaved 1F1B): replayed without interleaving");
            vpp = 1;
        }
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        RankProgram program(b, layout, w, options, r);
        for (uint32_t pass = 0; pass < options.passes; ++pass)
        {
            program.Pass(pass, mbs, vpp, pipelined);
        }
    }
    return b.Build();
}

} // namespace ns3
