/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/collective-engine.h"

#include "ns3/boolean.h"
#include "ns3/collective-bandwidth.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveEngine");
NS_OBJECT_ENSURE_REGISTERED(CollectiveEngine);

namespace
{
using Algo = CollectiveAlgorithm;

// The algorithms each kind can run, besides auto.
const std::vector<CollectiveAlgorithm>&
ValidAlgorithms(CollectiveKind kind)
{
    static const std::vector<CollectiveAlgorithm> table[] = {
        {Algo::Ring,
         Algo::Tree,
         Algo::HalvingDoubling,
         Algo::Hierarchical,
         Algo::Nvls,
         Algo::NvlsTree,
         Algo::CollNetDirect,
         Algo::CollNetChain},
        {Algo::Ring, Algo::Direct, Algo::Nvls, Algo::Pat},
        {Algo::Ring, Algo::Direct, Algo::Nvls, Algo::Pat},
        {Algo::Direct},
        {Algo::Ring},
        {Algo::Ring},
        {Algo::Direct},
    };
    return table[static_cast<std::size_t>(kind)];
}

std::string
Join(const std::vector<CollectiveAlgorithm>& v)
{
    std::string out;
    for (CollectiveAlgorithm a : v)
    {
        out += (out.empty() ? "" : ", ") + std::string(CollectiveAlgorithmName(a));
    }
    return out;
}

[[noreturn]] void
Reject(const std::string& what)
{
    throw CollectiveError("collective rejected: " + what);
}
} // namespace

TypeId
CollectiveEngine::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveEngine")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<CollectiveEngine>()
            .AddAttribute("ChunkBytes",
                          "Bytes per ring/chain step of one channel (NCCL chunk); the buffer is "
                          "walked in loops of NumChannels x ranks x ChunkBytes",
                          UintegerValue(512 * 1024),
                          MakeUintegerAccessor(&CollectiveEngine::m_chunkBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("TreeChunkBytes",
                          "Pipeline chunk of the double binary tree",
                          UintegerValue(256 * 1024),
                          MakeUintegerAccessor(&CollectiveEngine::m_treeChunkBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute(
                "NumChannels",
                "Ring channels (parallel transport streams, each its share of the buffer)",
                UintegerValue(1),
                MakeUintegerAccessor(&CollectiveEngine::m_numChannels),
                MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("ElementBytes",
                          "Data type size: pieces are rounded to whole elements",
                          UintegerValue(4),
                          MakeUintegerAccessor(&CollectiveEngine::m_elementBytes),
                          MakeUintegerChecker<uint32_t>(1, 16))
            .AddAttribute("PipelineSlots",
                          "Buffer slots per tree connection (NCCL_STEPS): how many chunks a "
                          "sender may run ahead of the receiver passing them on",
                          UintegerValue(8),
                          MakeUintegerAccessor(&CollectiveEngine::m_pipelineSlots),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("NvlsMinRanks",
                          "without an endpoint, auto picks NVLS only from this many ranks in "
                          "one NVLink domain (with one NCCL's tuner weighs it from 2)",
                          UintegerValue(5),
                          MakeUintegerAccessor(&CollectiveEngine::m_nvlsMinRanks),
                          MakeUintegerChecker<uint32_t>(2))
            .AddAttribute("TreeMaxBytes",
                          "auto picks the tree for allreduce up to this size ...",
                          UintegerValue(1024 * 1024),
                          MakeUintegerAccessor(&CollectiveEngine::m_treeMaxBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("TreeMinRanks",
                          "... on at least this many ranks",
                          UintegerValue(16),
                          MakeUintegerAccessor(&CollectiveEngine::m_treeMinRanks),
                          MakeUintegerChecker<uint32_t>(2))
            .AddAttribute("HierarchicalPipeline",
                          "Hierarchical allreduce pipelined per slice (one loop of the "
                          "intra-domain ring): slice k's network phase waits only for slice "
                          "k's reduce-scatter, as NCCL's multi-level algorithms; false: the "
                          "three phases one after the other",
                          BooleanValue(false),
                          MakeBooleanAccessor(&CollectiveEngine::m_hierarchicalPipeline),
                          MakeBooleanChecker())
            .AddAttribute("HierarchicalChunkBytes",
                          "Largest chunk of the pipelined hierarchical allreduce (a slice is "
                          "NumChannels x ranks per domain chunks), shrunk for small buffers by "
                          "NCCL's NVLS-tree rule; 128 KiB is NCCL_NVLS_CHUNKSIZE's default",
                          UintegerValue(128 * 1024),
                          MakeUintegerAccessor(&CollectiveEngine::m_hierarchicalChunkBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("NvlsTreeMaxChunkBytesN4",
                          "Largest chunk of NVLS-tree across four or more NVLink domains, before "
                          "the small-buffer rule (NCCL 2.19+ src/transport/nvls.cc, "
                          "NCCL_NVLSTREE_MAX_CHUNKSIZE: 64 KiB from 4 nodes, else the NVLS "
                          "chunk); 0 = HierarchicalChunkBytes at any node count",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&CollectiveEngine::m_nvlsTreeMaxChunkBytesN4),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("RingsAcrossDomains",
                          "A ring over several NVLink domains is one ring per channel, each "
                          "entering and leaving the domains at a local index rotated by the "
                          "channel (NCCL's ring graphs), so the channels cross between "
                          "domains on different HCAs; false: every channel in group order",
                          BooleanValue(false),
                          MakeBooleanAccessor(&CollectiveEngine::m_ringsAcrossDomains),
                          MakeBooleanChecker())
            .AddAttribute("TreesAcrossDomains",
                          "A tree allreduce over several NVLink domains runs NCCL's trees: a "
                          "chain in each domain and the double binary tree between the chains' "
                          "heads, one lane per GPU of a domain, each lane's head rotated so "
                          "that the lanes cross between domains on different HCAs; false: the "
                          "double binary tree over the ranks in group order, two lanes",
                          BooleanValue(false),
                          MakeBooleanAccessor(&CollectiveEngine::m_treesAcrossDomains),
                          MakeBooleanChecker())
            .AddAttribute("AggregateRingSteps",
                          "On flow-level planes, a ring pass whose channels each have one "
                          "equal piece per rank (a ring allreduce, reduce-scatter or all-gather "
                          "of one loop: the hierarchical allreduce's rails and domain phases) "
                          "moves as one flow per rank and run of channels, carrying its steps' "
                          "bytes and completing after their latencies, when every hop is on "
                          "one flow-level plane at one line rate; false: every step a message",
                          BooleanValue(false),
                          MakeBooleanAccessor(&CollectiveEngine::m_aggregateRingSteps),
                          MakeBooleanChecker())
            .AddAttribute("Endpoint",
                          "The GPU/NCCL endpoint model (NcclEndpoint): protocols, channels, "
                          "tuner; null = physics only (\"ideal\")",
                          PointerValue(),
                          MakePointerAccessor(&CollectiveEngine::m_endpoint),
                          MakePointerChecker<NcclEndpoint>())
            .AddAttribute("FirstCollectiveId",
                          "Id of the first collective (collectives.coll_id)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&CollectiveEngine::m_nextId),
                          MakeUintegerChecker<uint64_t>())
            .AddTraceSource("CollectiveBegin",
                            "A collective started (id, kind, algorithm, ranks, bytes)",
                            MakeTraceSourceAccessor(&CollectiveEngine::m_beginTrace),
                            "ns3::CollectiveEngine::BeginTracedCallback")
            .AddTraceSource("CollectiveEnd",
                            "A collective ended (id, duration, busbw GB/s)",
                            MakeTraceSourceAccessor(&CollectiveEngine::m_endTrace),
                            "ns3::CollectiveEngine::EndTracedCallback");
    return tid;
}

CollectiveEngine::CollectiveEngine()
    : m_chunkBytes(512 * 1024),
      m_treeChunkBytes(256 * 1024),
      m_numChannels(1),
      m_elementBytes(4),
      m_pipelineSlots(8),
      m_nvlsMinRanks(5),
      m_treeMaxBytes(1024 * 1024),
      m_treeMinRanks(16),
      m_hierarchicalPipeline(false),
      m_hierarchicalChunkBytes(128 * 1024),
      m_nvlsTreeMaxChunkBytesN4(64 * 1024),
      m_ringsAcrossDomains(false),
      m_treesAcrossDomains(false),
      m_aggregateRingSteps(false),
      m_nextId(0)
{
}

CollectiveEngine::~CollectiveEngine() = default;

namespace
{
constexpr uint64_t kPartDone = ~uint64_t(0);
} // namespace

void
CollectiveEngine::SetTransport(Ptr<GpuTransport> transport)
{
    m_transport = transport;
    if (transport)
    {
        m_client = transport->AddClient(MakeCallback(&CollectiveEngine::Notified, this),
                                        MakeCallback(&CollectiveEngine::Received, this));
    }
}

Ptr<GpuTransport>
CollectiveEngine::GetTransport() const
{
    return m_transport;
}

void
CollectiveEngine::SetResultsDatabase(Ptr<ResultsDatabase> db)
{
    m_db = db;
}

void
CollectiveEngine::SetDomainMap(const std::map<uint32_t, uint32_t>& domainOfRank)
{
    m_domainOfRank = domainOfRank;
}

void
CollectiveEngine::SetEndpoint(Ptr<NcclEndpoint> endpoint)
{
    m_endpoint = endpoint;
}

Ptr<NcclEndpoint>
CollectiveEngine::GetEndpoint() const
{
    return m_endpoint;
}

CollectiveSplit
CollectiveEngine::GetSplit() const
{
    return CollectiveSplit{m_chunkBytes, m_numChannels, m_elementBytes, m_pipelineSlots};
}

std::string
CollectiveEngine::Canonical(const std::string& name)
{
    return CanonicalCollectiveName(name);
}

CollectiveCall
CollectiveSpec::Parse() const
{
    CollectiveCall call;
    static_cast<CollectiveOperands&>(call) = *this;
    if (!ParseCollectiveKind(kind, &call.kind))
    {
        Reject("unknown collective \"" + kind + "\" (" + CollectiveKindNames() + ")");
    }
    if (!ParseCollectiveAlgorithm(algorithm, &call.algorithm))
    {
        Reject("unknown algorithm \"" + algorithm + "\" (" + CollectiveAlgorithmNames() + ")");
    }
    return call;
}

std::vector<std::vector<uint32_t>>
CollectiveEngine::Domains(const CollectiveCall& call) const
{
    const auto& map = call.domainOfRank.empty() ? m_domainOfRank : call.domainOfRank;
    std::map<uint32_t, std::vector<uint32_t>> byDomain;
    for (uint32_t r : call.ranks)
    {
        auto it = map.find(r);
        if (it == map.end())
        {
            return {}; // no (complete) domain map: the group's domains are unknown
        }
        byDomain[it->second].push_back(r);
    }
    std::vector<std::vector<uint32_t>> out;
    for (auto& [d, ranks] : byDomain)
    {
        out.push_back(std::move(ranks));
    }
    return out;
}

CollectiveSchedule::PairRelay
CollectiveEngine::PxnRelay(const CollectiveCall& call) const
{
    NS_LOG_FUNCTION(this << call.ranks.size());
    auto domains = Domains(call);
    if (domains.size() < 2)
    {
        return {};
    }
    // rank -> (domain, local index): the local index is the GPU's rail (its own NIC's).
    std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> where;
    where.reserve(call.ranks.size());
    for (uint32_t d = 0; d < domains.size(); ++d)
    {
        for (uint32_t i = 0; i < domains[d].size(); ++i)
        {
            where.emplace(domains[d][i], std::make_pair(d, i));
        }
    }
    const bool everyCrossRail = m_endpoint->GetPxn() == NcclEndpoint::PXN_CROSS_RAIL;
    return [this, everyCrossRail, domains = std::move(domains), where = std::move(where)](
               uint32_t src,
               uint32_t dst) -> int64_t {
        const auto from = where.find(src);
        const auto to = where.find(dst);
        if (from == where.end() || to == where.end() || from->second.first == to->second.first ||
            from->second.second == to->second.second)
        {
            return -1; // the same domain (NVLink) or the same rail: the sender's own NIC
        }
        if (!everyCrossRail && m_transport->CanReach(src, dst))
        {
            return -1; // Unreachable: only where the sender's NIC does not reach the peer
        }
        const auto& home = domains[from->second.first];
        if (to->second.second >= home.size())
        {
            return -1;
        }
        const uint32_t via = home[to->second.second];
        return m_transport->CanReach(src, via) && m_transport->CanReach(via, dst) ? via : -1;
    };
}

int32_t
CollectiveEngine::FindInSwitchPlane(const std::vector<uint32_t>& ranks, bool scaleOut) const
{
    for (uint32_t i = 0; i < m_transport->GetNPlanes(); ++i)
    {
        if (IsNetPlane(static_cast<int32_t>(i)) != scaleOut)
        {
            continue;
        }
        auto* plane = dynamic_cast<InSwitchReductionPlane*>(PeekPointer(m_transport->GetPlane(i)));
        if (plane && plane->CanReduceInSwitch(ranks))
        {
            return static_cast<int32_t>(i);
        }
    }
    return -1;
}

std::string
CollectiveEngine::NvlsTreeRefusal(const CollectiveCall& call,
                                  const std::vector<std::vector<uint32_t>>& domains) const
{
    if (domains.size() < 2)
    {
        return "needs a group spanning at least two NVLink domains (give every rank a domain: "
               "CollectiveSpec::domainOfRank or SetDomainMap); one domain runs nvls";
    }
    for (const auto& d : domains)
    {
        if (d.size() != domains.front().size())
        {
            return "needs the same number of ranks in every domain";
        }
    }
    for (const auto& d : domains)
    {
        if (FindInSwitchPlane(d) < 0)
        {
            return "needs in-switch reduction (NVSwitch gen3+, NVLS) over each domain; no plane "
                   "offers it over the " +
                   std::to_string(d.size()) + " ranks of group " + call.groupName + " from rank " +
                   std::to_string(d.front());
        }
    }
    return "";
}

std::string
CollectiveEngine::CollNetRefusal(const CollectiveCall& call,
                                 const std::vector<std::vector<uint32_t>>& domains) const
{
    if (domains.size() < 2)
    {
        return "needs a group spanning at least two domains (give every rank a domain: "
               "CollectiveSpec::domainOfRank or SetDomainMap)";
    }
    for (const auto& d : domains)
    {
        if (d.size() != domains.front().size())
        {
            return "needs the same number of ranks in every domain";
        }
    }
    // NCCL (enqueue.cc): CollNet only up to NCCL_MAX_DIRECT_ARITY + 1 = 8 local GPUs.
    if (domains.front().size() > 8)
    {
        return "runs at most 8 ranks per domain (NCCL_MAX_DIRECT_ARITY + 1); the domains have " +
               std::to_string(domains.front().size());
    }
    for (uint32_t r : call.ranks)
    {
        // A SHARP operation is started in one process for all its members.
        if (m_transport->GetSystemOf(r) != m_transport->GetSystemOf(call.ranks.front()))
        {
            return "needs the whole group in one process (a distributed run splits its rails)";
        }
    }
    for (uint32_t i = 0; i < domains.front().size(); ++i)
    {
        std::vector<uint32_t> rail;
        for (const auto& d : domains)
        {
            rail.push_back(d[i]);
        }
        if (FindInSwitchPlane(rail, true) < 0)
        {
            return "needs in-network reduction (SHARP switches: --sharp, InfinibandSwitch "
                   "SharpEnabled) under every rail; no plane offers it over the rail of rank " +
                   std::to_string(rail.front()) + " of group " + call.groupName;
        }
    }
    return "";
}

void
CollectiveEngine::Validate(const CollectiveCall& call) const
{
    if (!m_transport)
    {
        Reject("the engine has no transport");
    }
    const std::string kind = CollectiveKindName(call.kind);
    if (call.ranks.empty())
    {
        Reject(kind + " on an empty group");
    }
    std::set<uint32_t> seen;
    for (uint32_t r : call.ranks)
    {
        if (!seen.insert(r).second)
        {
            Reject("rank " + std::to_string(r) + " appears twice in group " + call.groupName);
        }
        if (!m_transport->HasRank(r))
        {
            Reject("rank " + std::to_string(r) + " of group " + call.groupName +
                   " is not attached to any transport plane");
        }
    }
    if (CollectiveHasRoot(call.kind) && !seen.count(call.root))
    {
        Reject("root " + std::to_string(call.root) + " is not in group " + call.groupName);
    }
    if (call.algorithm == CollectiveAlgorithm::Auto)
    {
        return;
    }
    const auto& algos = ValidAlgorithms(call.kind);
    if (std::find(algos.begin(), algos.end(), call.algorithm) == algos.end())
    {
        Reject("algorithm \"" + std::string(CollectiveAlgorithmName(call.algorithm)) +
               "\" cannot run " + kind + " (valid: auto, " + Join(algos) + ")");
    }
}

std::vector<CollectiveAlgorithm>
CollectiveEngine::TunerCandidates(const CollectiveCall& call,
                                  const std::vector<std::vector<uint32_t>>& domains,
                                  int32_t* nvlsPlane,
                                  std::string* why) const
{
    // NCCL's tuner: every algorithm the fabric can run for the call (or the one asked for).
    // NVLS from two ranks of a domain whose switches reduce (its graph needs two heads).
    const uint32_t p = call.ranks.size();
    const uint32_t nvlsMinRanks = 2;
    std::vector<CollectiveAlgorithm> runnable;
    if (call.algorithm != Algo::Auto)
    {
        runnable.push_back(call.algorithm);
    }
    else if (call.kind == CollectiveKind::AllReduce)
    {
        runnable = {Algo::Ring, Algo::Tree};
        if (domains.size() <= 1 && p >= nvlsMinRanks)
        {
            *nvlsPlane = FindInSwitchPlane(call.ranks);
        }
        if (*nvlsPlane >= 0)
        {
            runnable.push_back(Algo::Nvls);
        }
        else
        {
            *why += "; NVLS needs in-switch reduction (NVSwitch gen3+) over all ranks, in one "
                    "NVLink domain of at least " +
                    std::to_string(nvlsMinRanks) + " ranks";
        }
        // NVLSTree only where every domain's switches reduce.  Without NVLS NCCL has no
        // multi-level allreduce but CollNet: its tuner weighs ring and tree alone
        // (tuning.cc disables NVLS and NVLSTree when nvlsSupport is 0), so the engine's
        // hierarchical allreduce runs only when asked for by name.
        const std::string nvlsTree = m_endpoint->GetNvlsEnable() == 0
                                         ? std::string("is off (NCCL_NVLS_ENABLE=0)")
                                         : NvlsTreeRefusal(call, domains);
        if (nvlsTree.empty())
        {
            runnable.push_back(Algo::NvlsTree);
        }
        else
        {
            *why += "; NVLSTree " + nvlsTree;
        }
        // CollNet only where NCCL_COLLNET_ENABLE=1 and the network's switches reduce; with
        // NVLS in every domain NCCL then also runs NVLS across nodes (tuning.cc disables
        // NVLS on several nodes only without CollNet).
        if (m_endpoint->GetCollNetEnable())
        {
            const std::string collNet = CollNetRefusal(call, domains);
            if (collNet.empty())
            {
                runnable.push_back(Algo::CollNetDirect);
                runnable.push_back(Algo::CollNetChain);
                if (nvlsTree.empty())
                {
                    runnable.push_back(Algo::Nvls);
                }
            }
            else
            {
                *why += "; CollNet " + collNet;
            }
        }
    }
    else if ((call.kind == CollectiveKind::AllGather ||
              call.kind == CollectiveKind::ReduceScatter) &&
             p >= 2 && domains.size() == p)
    {
        // NCCL 2.23+ considers PAT at one GPU per node (ncclPatEnable: nNodes == nRanks).
        runnable = {Algo::Ring, Algo::Pat};
    }
    else if ((call.kind == CollectiveKind::AllGather ||
              call.kind == CollectiveKind::ReduceScatter) &&
             domains.size() <= 1)
    {
        // Inside one node NCCL also weighs NVLS, the switch's multicast (allgather) and
        // reduction (reducescatter), up to NCCL_MAX_NVLS_ARITY = 32 local ranks
        // (src/enqueue.cc updateCollCostTable; src/graph/tuning.cc, its bandwidth times
        // (ppn - 1) / ppn).  Across nodes it needs CollNet, which these do not model.
        runnable = {Algo::Ring};
        if (p >= nvlsMinRanks && p <= NcclEndpoint::MAX_NVLS_ARITY)
        {
            *nvlsPlane = FindInSwitchPlane(call.ranks);
        }
        if (*nvlsPlane >= 0)
        {
            runnable.push_back(Algo::Nvls);
        }
        else
        {
            *why += p > 32 ? "; NVLS runs an allgather or reducescatter of at most 32 ranks "
                             "(NCCL_MAX_NVLS_ARITY)"
                           : "; NVLS needs in-switch reduction (NVSwitch gen3+) over all "
                             "ranks, in one NVLink domain of at least " +
                                 std::to_string(nvlsMinRanks) + " ranks";
        }
    }
    else if (call.kind == CollectiveKind::AllToAll || call.kind == CollectiveKind::SendRecv)
    {
        runnable.push_back(Algo::Direct);
    }
    else
    {
        runnable.push_back(Algo::Ring);
    }
    return runnable;
}

std::string
CollectiveEngine::FormatTunerTable(const std::vector<uint32_t>& ranks,
                                   const std::string& prefix) const
{
    NS_LOG_FUNCTION(this << ranks.size());
    if (!m_endpoint || ranks.size() < 2)
    {
        return "";
    }
    // NCCL's order of functions, algorithms (three a block) and protocols.
    const auto& functions = NcclEndpoint::NcclFunctions();
    const auto& algorithms = NcclEndpoint::NcclAlgorithms();
    const auto& protocols = NcclEndpoint::NcclProtocols();

    // The bandwidth of each entry is the one the tuner divides a call's bytes by, before its
    // tree correction; the size given is large so that no latency counts fewer channels
    // than the communicator's (the hierarchical allreduce's proxy steps).
    struct Cells
    {
        std::vector<Algo> runnable;
        NcclTuneInput input;
    };

    std::vector<Cells> cells;
    for (const auto& function : functions)
    {
        CollectiveCall call;
        call.kind = function.first;
        call.ranks = ranks;
        call.bytes = uint64_t{1} << 30;
        call.root = ranks.front();
        const auto domains = Domains(call);
        int32_t nvlsPlane = -1;
        std::string why;
        Cells c;
        c.runnable = TunerCandidates(call, domains, &nvlsPlane, &why);
        c.input = TuneInput(call, domains, c.runnable);
        cells.push_back(c);
    }
    std::ostringstream out;
    char buf[64];
    for (std::size_t block = 0; block < algorithms.size(); block += 3)
    {
        const std::size_t end = std::min(block + 3, algorithms.size());
        out << prefix << "  Algorithm   |";
        for (std::size_t a = block; a < end; ++a)
        {
            std::snprintf(buf, sizeof(buf), " %48s |", algorithms[a].second.c_str());
            out << buf;
        }
        out << "\n" << prefix << "  Protocol    |";
        for (std::size_t a = block; a < end; ++a)
        {
            for (const auto& protocol : protocols)
            {
                std::snprintf(buf, sizeof(buf), " %14s |", protocol.second.c_str());
                out << buf;
            }
        }
        out << "\n";
        for (std::size_t f = 0; f < functions.size(); ++f)
        {
            std::snprintf(buf, sizeof(buf), "%13s |", functions[f].second.c_str());
            out << prefix << buf;
            for (std::size_t a = block; a < end; ++a)
            {
                const Algo algo = algorithms[a].first;
                const bool runs =
                    std::find(cells[f].runnable.begin(), cells[f].runnable.end(), algo) !=
                    cells[f].runnable.end();
                for (const auto& protocol : protocols)
                {
                    const NcclProtocolId p = protocol.first;
                    double latency = 0;
                    double bandwidth = 0;
                    // As NCCL's table: 0 where NCCL_ALGO or NCCL_PROTO disable the pair.
                    if (runs && m_endpoint->AlgorithmEnabled(functions[f].first, algo) &&
                        m_endpoint->ProtocolEnabled(functions[f].first, p))
                    {
                        bandwidth =
                            m_endpoint->PredictAlgorithmBandwidth_gbyte_per_s(cells[f].input,
                                                                              algo,
                                                                              p);
                        latency = bandwidth > 0
                                      ? m_endpoint->PredictLatency_us(cells[f].input, algo, p)
                                      : 0;
                    }
                    std::snprintf(buf, sizeof(buf), "%8.1f/%6.1f |", latency, bandwidth);
                    out << buf;
                }
            }
            out << "\n";
        }
    }
    return out.str();
}

CollectiveResolution
CollectiveEngine::Resolve(const CollectiveCall& call) const
{
    NS_LOG_FUNCTION(this << CollectiveKindName(call.kind) << CollectiveAlgorithmName(call.algorithm)
                         << call.ranks.size() << call.bytes);
    Validate(call);
    const uint32_t p = call.ranks.size();
    const auto domains = Domains(call);
    CollectiveResolution how;
    how.algorithm = call.algorithm;
    how.channels = m_numChannels;
    how.simulatedChannels = m_numChannels;
    if (call.algorithm == Algo::Nvls && domains.size() >= 2)
    {
        // NVLS across nodes: each domain's switches reduce-scatter and gather, the network's
        // reduce every rail in between (NCCL's NVLS with CollNet).
        std::string why = call.kind == CollectiveKind::AllReduce
                              ? NvlsTreeRefusal(call, domains)
                              : std::string("across domains runs allreduce only (NCCL's NVLS "
                                            "allgather and reducescatter across nodes are "
                                            "CollNet's, not modelled)");
        if (why.empty() && !(m_endpoint && m_endpoint->GetCollNetEnable()))
        {
            why = "across domains needs CollNet: NCCL_COLLNET_ENABLE is not 1 (NcclEndpoint "
                  "CollNetEnable)";
        }
        if (why.empty())
        {
            why = CollNetRefusal(call, domains);
        }
        if (!why.empty())
        {
            Reject("algorithm nvls " + why);
        }
    }
    else if (call.algorithm == Algo::Nvls)
    {
        how.inSwitchPlane = FindInSwitchPlane(call.ranks);
        if (how.inSwitchPlane < 0)
        {
            std::string planes;
            for (uint32_t i = 0; i < m_transport->GetNPlanes(); ++i)
            {
                planes += (planes.empty() ? "" : ", ") + m_transport->GetPlane(i)->GetPlaneName();
            }
            Reject("algorithm nvls needs in-switch reduction (NVSwitch gen3+) over all " +
                   std::to_string(p) + " ranks of group " + call.groupName +
                   "; no plane offers it (planes: " + planes + ")");
        }
    }
    if (call.algorithm == Algo::NvlsTree)
    {
        const std::string why = NvlsTreeRefusal(call, domains);
        if (!why.empty())
        {
            Reject("algorithm nvlstree " + why);
        }
    }
    if (call.algorithm == Algo::CollNetDirect || call.algorithm == Algo::CollNetChain)
    {
        const std::string why = CollNetRefusal(call, domains);
        if (!why.empty())
        {
            Reject("algorithm " + std::string(CollectiveAlgorithmName(call.algorithm)) + " " + why);
        }
        if (m_endpoint && !m_endpoint->GetCollNetEnable())
        {
            Reject("algorithm " + std::string(CollectiveAlgorithmName(call.algorithm)) +
                   ": NCCL_COLLNET_ENABLE is not 1 (NcclEndpoint CollNetEnable)");
        }
    }
    if (call.algorithm == Algo::Pat && domains.size() != p)
    {
        Reject("algorithm pat runs one rank per domain (NCCL: nNodes == nRanks); group " +
               call.groupName + " has " + std::to_string(p) + " ranks in " +
               std::to_string(domains.size()) + " domain(s)");
    }
    if (call.algorithm == Algo::Hierarchical)
    {
        if (domains.size() < 2)
        {
            Reject("hierarchical allreduce needs a group spanning at least two domains "
                   "(give every rank a domain: CollectiveSpec::domainOfRank or SetDomainMap)");
        }
        for (const auto& d : domains)
        {
            if (d.size() != domains.front().size())
            {
                Reject("hierarchical allreduce needs the same number of ranks in every domain");
            }
        }
    }
    const bool equalDomains = [&domains]() {
        bool equal = domains.size() >= 2 && domains.front().size() >= 2;
        for (const auto& d : domains)
        {
            equal = equal && d.size() == domains.front().size();
        }
        return equal;
    }();
    if (m_endpoint)
    {
        // NCCL's tuner: every algorithm the fabric can run, each protocol, the fastest.
        std::string why;
        int32_t nvlsPlane = how.inSwitchPlane;
        const std::vector<CollectiveAlgorithm> runnable =
            TunerCandidates(call, domains, &nvlsPlane, &why);
        if ((call.algorithm == Algo::Nvls || call.algorithm == Algo::NvlsTree) &&
            m_endpoint->GetNvlsEnable() == 0)
        {
            Reject("algorithm " + std::string(CollectiveAlgorithmName(call.algorithm)) +
                   ": NCCL_NVLS_ENABLE=0 (NcclEndpoint NvlsEnable) disables it");
        }
        NcclChoice choice;
        const NcclTuneInput input = TuneInput(call, domains, runnable);
        try
        {
            choice = m_endpoint->Choose(input);
        }
        catch (const std::invalid_argument& e)
        {
            Reject(e.what() + why);
        }
        how.algorithm = choice.algorithm;
        how.protocol = choice.protocol;
        how.channels = choice.channels;
        // One channel, one SM, moves no more than its share of NCCL's ring graph, also while
        // the call's other channels have finished.
        // Point-to-point channels are the communicator's: each a share of all of them.
        how.graphChannel_gbyte_per_s = m_endpoint->RingChannelShare_gbyte_per_s(
            input,
            how.algorithm,
            how.algorithm == Algo::Direct ? m_endpoint->GetP2pChannelCount() : how.channels);
        uint32_t perDomain = 0;
        for (const auto& d : domains)
        {
            perDomain = std::max<uint32_t>(perDomain, d.size());
        }
        how.simulatedChannels =
            m_endpoint->SimulatedChannels(how.algorithm, how.channels, perDomain);
        how.predicted_us = choice.predicted_us;
        how.inSwitchPlane = how.algorithm == Algo::Nvls ? nvlsPlane : -1;
        NS_LOG_LOGIC("tuner: " << CollectiveAlgorithmName(how.algorithm) << "/"
                               << NcclProtocolName(how.protocol) << ", " << how.channels
                               << " channels");
        return how;
    }
    if (call.algorithm != Algo::Auto)
    {
        return how;
    }
    switch (call.kind)
    {
    case CollectiveKind::AllReduce: {
        if (domains.size() <= 1 && p >= m_nvlsMinRanks)
        {
            how.inSwitchPlane = FindInSwitchPlane(call.ranks);
            if (how.inSwitchPlane >= 0)
            {
                how.algorithm = Algo::Nvls;
                break;
            }
        }
        if (equalDomains)
        {
            how.algorithm = Algo::Hierarchical;
        }
        else if (p >= m_treeMinRanks && call.bytes <= m_treeMaxBytes)
        {
            how.algorithm = Algo::Tree;
        }
        else
        {
            how.algorithm = Algo::Ring;
        }
        break;
    }
    case CollectiveKind::AllToAll:
    case CollectiveKind::SendRecv:
        how.algorithm = Algo::Direct;
        break;
    default:
        how.algorithm = Algo::Ring;
        break;
    }
    NS_LOG_LOGIC("auto resolved to " << CollectiveAlgorithmName(how.algorithm));
    return how;
}

NcclTuneInput
CollectiveEngine::TuneInput(const CollectiveCall& call,
                            const std::vector<std::vector<uint32_t>>& domains,
                            const std::vector<CollectiveAlgorithm>& runnable) const
{
    NcclTuneInput in;
    in.kind = call.kind;
    in.ranks = call.ranks.size();
    in.nodes = std::max<std::size_t>(domains.size(), 1);
    in.bytes = call.bytes;
    in.runnable = runnable;
    in.multiRailRings = m_ringsAcrossDomains;
    in.pipelinedHierarchical = m_hierarchicalPipeline;
    auto rate = [this](uint32_t a, uint32_t b) {
        const int32_t plane = m_transport->SelectPlane(a, b);
        return plane < 0 ? 0.0 : m_transport->GetPlane(plane)->GetRankRate_gbyte_per_s(a);
    };
    for (const auto& d : domains)
    {
        if (d.size() >= 2)
        {
            in.intra_gbyte_per_s = rate(d[0], d[1]);
            break;
        }
    }
    if (domains.empty() && call.ranks.size() >= 2)
    {
        in.intra_gbyte_per_s = rate(call.ranks[0], call.ranks[1]);
    }
    if (domains.size() >= 2)
    {
        in.inter_gbyte_per_s = rate(domains[0][0], domains[1][0]);
    }
    return in;
}

bool
CollectiveEngine::CanAggregateRing(const std::vector<uint32_t>& ring) const
{
    // In aggregate every rank's flow runs at its own rate; the per-step ring goes at its
    // slowest hop's.  So only a ring whose hops are all on one flow-level plane, from ranks
    // of one line rate, in this process.
    if (ring.size() < 2)
    {
        return false;
    }
    const int32_t plane = m_transport->SelectPlane(ring[0], ring[1]);
    if (plane < 0 || !m_transport->IsFluid(plane))
    {
        return false;
    }
    const Ptr<TransportPlane> tp = m_transport->GetPlane(plane);
    const double rate = tp->GetLineRate_gbyte_per_s(ring[0]);
    for (std::size_t x = 0; x < ring.size(); ++x)
    {
        const uint32_t next = ring[(x + 1) % ring.size()];
        if (m_transport->SelectPlane(ring[x], next) != plane || !m_transport->IsLocal(ring[x]) ||
            tp->GetLineRate_gbyte_per_s(ring[x]) != rate)
        {
            return false;
        }
    }
    return true;
}

bool
CollectiveEngine::IsNetPlane(int32_t plane) const
{
    return plane >= 0 && m_transport->GetPlane(plane)->GetPlaneName() != "nvlink";
}

void
CollectiveEngine::SetCosts(Running* run, uint32_t nodes) const
{
    run->oneDomain = nodes == 1;
    if (!m_endpoint)
    {
        return;
    }
    const Ptr<NcclProtocol> p = m_endpoint->GetProtocol(run->how.protocol);
    run->ringHop[0] = p->GetRingNvlinkHopLatency();
    run->ringHop[1] = p->GetRingNetHopLatency();
    run->treeHop[0] = p->GetTreeNvlinkHopLatency();
    run->treeHop[1] = p->GetTreeNetHopLatency();
    if (run->how.algorithm == Algo::NvlsTree)
    {
        // NCCL's NVLSTree network step (hwLatencies NET NVLSTree): its rails only.
        run->ringHop[1] = m_endpoint->GetNvlsTreeNetLatency();
    }
    if (run->how.algorithm == Algo::CollNetDirect || run->how.algorithm == Algo::CollNetChain ||
        run->how.algorithm == Algo::Pat)
    {
        // Their NVLink steps (hwLatencies NVLINK CollNet*), PAT's network step.
        run->ringHop[0] = m_endpoint->GetStepLatency(run->how.algorithm, false);
        run->ringHop[1] = m_endpoint->GetStepLatency(run->how.algorithm, true);
    }
    // One channel copies at most its per-channel rate; all of a rank's channels together
    // at most the protocol's MaxBandwidth.  The tree schedule's lanes (two, or one per GPU
    // of a domain across domains) stand for the channels NCCL spreads over its trees.
    const bool tree = run->how.algorithm == Algo::Tree;
    // The channels that carry traffic: a chain or a point-to-point schedule uses one, a
    // ring its pieces' channels, the tree one per tree.
    std::set<uint32_t> used;
    for (const auto& step : run->schedule.GetSteps())
    {
        if (!step.join && step.inSwitch < 0)
        {
            for (uint32_t lane = 0; lane < step.lanes; ++lane)
            {
                used.insert(step.channel + lane);
            }
        }
    }
    const double lanes = std::max<std::size_t>(used.size(), 1);
    // A simulated channel stands for channels / simulatedChannels of NCCL's.
    // A ring channel moves at most its protocol's cap and its share of the ring graph, in
    // data bytes: the graph's share carries the protocol's flags too (NCCL: LL x 0.5, LL128
    // x 120/128 of the share).
    double ringChannel = p->GetRingChannelBandwidth_gbyte_per_s();
    const double graph = run->how.graphChannel_gbyte_per_s * p->GetWireEfficiency();
    if (graph > 0)
    {
        ringChannel = ringChannel > 0 ? std::min(ringChannel, graph) : graph;
    }
    const CollectiveKind kind = run->call.kind;
    const double copy = p->GetTreeChannelBandwidth_gbyte_per_s(1);
    if (run->how.algorithm == Algo::Ring && run->how.protocol == NcclProtocolId::Simple && copy > 0)
    {
        // A Simple ring channel is one SM too, which copies no faster than a tree channel's
        // (NCCL's per-channel figure): it binds only with few channels (NCCL_MAX_NCHANNELS),
        // where the graph's share would exceed it.
        ringChannel = ringChannel > 0 ? std::min(ringChannel, copy) : copy;
    }
    if (run->how.algorithm == Algo::Ring && m_endpoint->GetRingFinalCopy() && ringChannel > 0 &&
        copy > 0 && run->call.ranks.size() > 1 &&
        (kind == CollectiveKind::AllReduce || kind == CollectiveKind::AllGather ||
         kind == CollectiveKind::ReduceScatter))
    {
        // Each loop of a channel sends one chunk per ring step and then only copies the
        // chunk it received last, at one SM's copy rate: the lockstep ring (every rank at
        // the same step of its loop) pauses so long once per loop, which comes to a channel
        // rate of hops chunks over their sends plus that copy.
        const double hops =
            double(run->call.ranks.size() - 1) * (kind == CollectiveKind::AllReduce ? 2.0 : 1.0);
        ringChannel = 1.0 / (1.0 / ringChannel + 1.0 / (hops * copy));
    }
    const double perLane =
        tree ? p->GetTreeChannelBandwidth_gbyte_per_s(nodes) * run->how.channels / 2.0
             : ringChannel * run->how.channels / std::max<uint32_t>(run->how.simulatedChannels, 1);
    const double max = p->GetMaxBandwidth_gbyte_per_s(nodes);
    double gbyte = perLane;
    if (max > 0)
    {
        gbyte = gbyte > 0 ? std::min(gbyte, max / lanes) : max / lanes;
    }
    if (run->how.algorithm == Algo::NvlsTree)
    {
        // NVLSTree's only messages are its rails': a rank takes them at NCCL's per-head cap,
        // its channels sharing it (TreeRailAllReduce sends a tree's on one channel, the
        // two trees' to one sink).
        gbyte = m_endpoint->NvlsTreeRailRate_gbyte_per_s(run->call.ranks.size(), nodes);
        run->sinkChannel = 0;
    }
    if (tree && nodes > 1 && m_treesAcrossDomains)
    {
        // NCCL's trees across nodes: a rank takes its lanes' up and down traffic at NCCL's
        // per-channel tree figure over the tree graph's channels, half the communicator's
        // (connect.cc doubles them; tuning.cc caps the tree at graph channels x
        // perChMaxTreeBws and halves that as algbw), all lanes sharing it: published 2 and
        // 4 x 8 B200 forced trees run at 180 and 99 GB/s algbw, where 8 graph channels x
        // 42.8 / 2 = 171 and x 24 / 2 = 96 (doc/fidelity.md).  A protocol without a
        // per-channel figure (LL) takes its per-rank cap alone.
        const double treeCopy = p->GetTreeChannelBandwidth_gbyte_per_s(nodes);
        gbyte = treeCopy * std::max(run->how.channels / 2.0, 1.0);
        if (max > 0)
        {
            gbyte = gbyte > 0 ? std::min(gbyte, max) : max;
        }
        run->sinkChannel = 0;
    }
    // The transport charges the bytes on the wire, flags included: the rate in wire bytes.
    run->channelRate = DataRate(static_cast<uint64_t>(gbyte * 8e9 / p->GetWireEfficiency()));
    // Simple inside one NVLink domain: every step of a channel ends with a fence and a flag
    // and the next waits for its peer's flag (src/device/prims_simple.h waitPeer, postPeer),
    // so the step latency is spent in series with the channel's data, at the receiving
    // channel after the step's bytes, not before its first packet as LL's and LL128's.
    if (nodes == 1 && run->how.protocol == NcclProtocolId::Simple)
    {
        // NCCL's hop latency is a ring step's, whose chunk is cut in RingChunkSteps /
        // RingSliceSteps slices, each ending with its fence and flag: one slice's share.
        const uint32_t chunkSteps = m_endpoint->GetRingChunkSteps(run->call.kind);
        const uint32_t sliceSteps =
            std::max<uint32_t>(std::min(m_endpoint->GetRingSliceSteps(run->call.kind), chunkSteps),
                               1);
        const Time slice =
            run->ringHop[0] / static_cast<int64_t>(std::max<uint32_t>(chunkSteps / sliceSteps, 1));
        const bool alltoall = run->call.kind == CollectiveKind::AllToAll;
        if (run->how.algorithm == Algo::Ring)
        {
            // A ring message is one slice.
            run->channelStep = slice;
        }
        else if (run->how.algorithm == Algo::Direct &&
                 (alltoall ? run->how.graphChannel_gbyte_per_s > 0
                           : run->call.kind == CollectiveKind::SendRecv && copy > 0))
        {
            // One message per peer on its NCCL p2p channels (src/enqueue.cc), in steps of
            // P2pChunkBytes, each one slice (src/device/sendrecv.h: ProtoSimple<1, 1>).
            const auto ranks = static_cast<uint32_t>(run->call.ranks.size());
            const uint64_t peer = alltoall
                                      ? (run->call.bytes + ranks - 1) / std::max<uint32_t>(ranks, 1)
                                      : run->call.bytes;
            const uint32_t c = m_endpoint->P2pChannels(peer, ranks);
            // The channels it runs on: c for each peer's part, the peers sharing NCCL's p2p
            // channels (a sendrecv's one peer: c).
            run->p2pChannels = alltoall ? std::min<uint32_t>(m_endpoint->GetP2pChannelCount(),
                                                             c * (std::max<uint32_t>(ranks, 1) - 1))
                                        : c;
            const uint64_t part = (peer + c - 1) / c;
            const uint64_t p2p = std::max<uint64_t>(m_endpoint->GetP2pChunkBytes(), 1);
            run->channelStep = slice * static_cast<int64_t>((part + p2p - 1) / p2p);
            double perPeer = 0;
            if (alltoall)
            {
                // A channel (one SM) moves the graph's channel share, split evenly among the
                // sends it runs (sendrecv.h: nWarps / nWorks): (ranks - 1) x channels per
                // peer over the p2p channels, at least one.  The rank's part for itself is
                // not among them: it is a copy in the GPU's own memory (sendrecv.h isCopy,
                // reduceCopy; enqueue.cc selfSend: no connection), which puts nothing on
                // NVLink.
                const double works = std::max(1.0,
                                              double(c) * (std::max<uint32_t>(ranks, 1) - 1) /
                                                  m_endpoint->GetP2pChannelCount());
                perPeer = c * run->how.graphChannel_gbyte_per_s / works;
            }
            else
            {
                // A sendrecv's one work a channel, whose warps the send and the receive share
                // (sendrecv.h): a channel sends at its send warps' share of one SM's copy
                // rate.  No other channel sends, so the GPU's NVLink bounds only their sum.
                perPeer = c * copy * NcclEndpoint::P2pSendWarps(1) / NcclEndpoint::P2P_WARPS;
            }
            run->channelRate = DataRate(static_cast<uint64_t>(perPeer * 8e9));
        }
    }
    if (nodes > 1)
    {
        // A simulated message stands for the NCCL steps of the channels its channel folds:
        // as many as its bytes fill NCCL's pieces (a step's chunk, at most the call's share
        // of a channel and rank), at most one per folded channel.
        run->proxyStep = m_endpoint->ProxyStepTime(run->how.algorithm, run->how.protocol);
        const uint32_t channels = std::max<uint32_t>(run->how.channels, 1);
        const uint32_t simulated = std::max<uint32_t>(run->how.simulatedChannels, 1);
        run->proxyFold = (channels + simulated - 1) / simulated;
        const uint64_t share = (run->call.bytes + uint64_t(channels) * run->call.ranks.size() - 1) /
                               std::max<uint64_t>(uint64_t(channels) * run->call.ranks.size(), 1);
        run->proxyPiece = std::max<uint64_t>(1, std::min(p->GetChunkBytes(), share));
    }
}

std::string
CollectiveEngine::ResolveAlgorithm(const CollectiveSpec& spec) const
{
    return CollectiveAlgorithmName(Resolve(spec.Parse()).algorithm);
}

CollectiveSplit
CollectiveEngine::Sliced(const CollectiveSplit& split,
                         uint64_t bytes,
                         uint32_t perDomain,
                         uint64_t maxChunkBytes) const
{
    CollectiveSplit sliced = split;
    const uint64_t largest = maxChunkBytes > 0
                                 ? std::min<uint64_t>(maxChunkBytes, m_hierarchicalChunkBytes)
                                 : m_hierarchicalChunkBytes;
    sliced.chunkBytes =
        CollectiveBuild::HierarchicalChunkBytes(bytes,
                                                uint64_t(split.numChannels) * perDomain,
                                                largest);
    NS_LOG_LOGIC("hierarchical pipelined in slices of "
                 << sliced.chunkBytes * sliced.numChannels * perDomain << " B");
    return sliced;
}

CollectiveSchedule
CollectiveEngine::Build(const CollectiveCall& call, const CollectiveResolution& how) const
{
    using namespace CollectiveBuild;
    CollectiveSchedule s;
    // Rings inside one NVLink domain too: there the aggregate is channel-paced (its first
    // packets before the channel, the lanes' first messages in turn, a Simple step's slices'
    // fences in series: RingStepAggregate::channelPaced, set in Launch).
    if (m_aggregateRingSteps && m_transport)
    {
        s.SetRingAggregation(
            [this](const std::vector<uint32_t>& ring) { return CanAggregateRing(ring); });
    }
    const CollectiveAlgorithm algorithm = how.algorithm;
    CollectiveSplit split = GetSplit();
    split.numChannels = std::max<uint32_t>(how.simulatedChannels, 1);
    if (m_endpoint)
    {
        split.chunkBytes = m_endpoint->GetProtocol(how.protocol)->GetChunkBytes();
        if (algorithm == Algo::Ring && how.protocol == NcclProtocolId::Simple &&
            Domains(call).size() <= 1)
        {
            // NCCL's Simple ring inside one domain: a chunk of RingChunkSteps steps per
            // channel and ring step, cut in slices of RingSliceSteps steps, at least 1/32
            // of that (prims_simple.h); a simulated channel carries the chunks of the
            // channels it stands for side by side.
            const double k = double(std::max<uint32_t>(how.channels, 1)) / split.numChannels;
            const uint64_t step = split.chunkBytes;
            const uint32_t chunkSteps = m_endpoint->GetRingChunkSteps(call.kind);
            const uint32_t sliceSteps =
                std::min(m_endpoint->GetRingSliceSteps(call.kind), chunkSteps);
            split.chunkBytes = static_cast<uint64_t>(k * step * chunkSteps);
            split.slicesPerChunk = chunkSteps / sliceSteps;
            split.minSliceBytes = static_cast<uint64_t>(k * step * sliceSteps / 32);
        }
        const uint64_t forward = m_endpoint->GetProtocol(how.protocol)->GetForwardBytes();
        if (CollectiveHasRoot(call.kind) && forward > 0)
        {
            // LL and LL128 pass each line on once its flag arrives: a hop of the chain holds
            // one round of each channel's threads, for the channels a simulated one stands for.
            const uint64_t k =
                (std::max<uint32_t>(how.channels, 1) + split.numChannels - 1) / split.numChannels;
            split.chunkBytes = std::min<uint64_t>(split.chunkBytes, k * forward);
        }
    }
    // NCCL relays every point-to-point transfer so (an alltoall's peers, a sendrecv's).
    if (m_endpoint && m_endpoint->GetPxn() != NcclEndpoint::PXN_NEVER && m_transport &&
        (call.kind == CollectiveKind::AllToAll || call.kind == CollectiveKind::SendRecv))
    {
        s.SetPairRelay(PxnRelay(call),
                       m_endpoint->GetPxnChunkBytes(),
                       m_endpoint->GetPxnMaxChunks());
    }
    const auto& ranks = call.ranks;
    const uint64_t bytes = call.bytes;
    const uint32_t rootPos = std::find(ranks.begin(), ranks.end(), call.root) - ranks.begin();
    ChannelRings rings;
    if (m_ringsAcrossDomains && algorithm == Algo::Ring)
    {
        const auto domains = Domains(call);
        if (domains.size() >= 2)
        {
            rings = RingsAcrossDomains(domains, split.numChannels);
            NS_LOG_LOGIC("ring channels cross " << domains.size() << " domains rotated");
        }
    }
    switch (call.kind)
    {
    case CollectiveKind::AllReduce:
        if (algorithm == Algo::Ring)
        {
            RingAllReduce(s, ranks, bytes, split, {}, rings);
        }
        else if (algorithm == Algo::Tree)
        {
            // Over several domains NCCL's trees: a chain in each domain, the double binary
            // tree between the chains' heads, one lane per GPU of a domain so that every
            // GPU's HCA carries a lane's network hops; in one domain (or without
            // TreesAcrossDomains) the double binary tree over the ranks, two lanes.
            const auto domains = Domains(call);
            const bool acrossDomains = m_treesAcrossDomains && domains.size() >= 2;
            const uint32_t lanes =
                acrossDomains
                    ? std::max<uint32_t>(
                          2,
                          std::min<uint32_t>(std::max<uint32_t>(how.channels, 1),
                                             static_cast<uint32_t>(domains.front().size())))
                    : 2;
            CollectiveSplit treeSplit = split;
            treeSplit.chunkBytes = m_treeChunkBytes;
            if (m_endpoint && how.protocol != NcclProtocolId::Simple)
            {
                // A tree lane stands for channels / lanes of NCCL's channels, each with its
                // own piece, and LL / LL128 pass lines on as their flags arrive
                // (prims_ll.h, prims_ll128.h): a hop forwards one channel's piece, not the
                // lane's whole chunk.
                const uint64_t perLane = std::max<uint32_t>(how.channels / lanes, 1);
                treeSplit.chunkBytes =
                    std::min<uint64_t>(treeSplit.chunkBytes,
                                       std::max<uint64_t>((bytes / lanes + perLane - 1) / perLane,
                                                          split.elementBytes));
                // Each of those channels has its own NCCL_STEPS slots.
                treeSplit.pipelineSlots = split.pipelineSlots * perLane;
            }
            if (acrossDomains)
            {
                NcclTreeAllReduce(s, ranks, domains, bytes, lanes, treeSplit, {});
            }
            else
            {
                DoubleBinaryTreeAllReduce(s, ranks, bytes, treeSplit, {});
            }
        }
        else if (algorithm == Algo::HalvingDoubling)
        {
            HalvingDoublingAllReduce(s, ranks, bytes, split, {});
        }
        else if (algorithm == Algo::Hierarchical && m_hierarchicalPipeline)
        {
            const auto domains = Domains(call);
            PipelinedHierarchicalAllReduce(s,
                                           domains,
                                           bytes,
                                           Sliced(split, bytes, domains.front().size()),
                                           RingDomainReduceScatter(),
                                           RingDomainAllGather());
        }
        else if (algorithm == Algo::Hierarchical)
        {
            HierarchicalAllReduce(s, Domains(call), bytes, split);
        }
        else if (algorithm == Algo::NvlsTree)
        {
            // Always pipelined, as NCCL's NVLSTree kernel: the switches reduce-scatter a
            // slice, each rank's share goes up and down its channel's tree over the rail,
            // the switches gather it back.
            using Op = InSwitchReductionPlane::Op;
            const auto domains = Domains(call);
            // NCCL caps NVLSTree's chunk from four nodes on (NvlsTreeMaxChunkBytesN4).
            const uint64_t maxChunk = domains.size() >= 4 ? m_nvlsTreeMaxChunkBytesN4 : 0;
            PipelinedHierarchicalAllReduce(s,
                                           domains,
                                           bytes,
                                           Sliced(split, bytes, domains.front().size(), maxChunk),
                                           InSwitchDomainPhase(Op::ReduceScatter),
                                           InSwitchDomainPhase(Op::AllGather),
                                           1,
                                           TreeRailAllReduce(),
                                           std::numeric_limits<uint32_t>::max());
        }
        else if (algorithm == Algo::Nvls)
        {
            // NVLS across domains (NCCL's NVLS with CollNet, all_reduce.h NVLS !oneNode):
            // per slice the switches reduce-scatter, each head's share is reduced in the
            // network over its rail, the switches gather it back, slice after slice.
            using Op = InSwitchReductionPlane::Op;
            const auto domains = Domains(call);
            PipelinedHierarchicalAllReduce(s,
                                           domains,
                                           bytes,
                                           Sliced(split, bytes, domains.front().size()),
                                           InSwitchDomainPhase(Op::ReduceScatter),
                                           InSwitchDomainPhase(Op::AllGather),
                                           1,
                                           InSwitchRailAllReduce());
        }
        else if (algorithm == Algo::CollNetDirect)
        {
            // NCCL's CollNetDirect: NVLink scatter to every head, SHARP across, NVLink gather,
            // pipelined slice by slice like NVLSTree.
            const auto domains = Domains(call);
            PipelinedHierarchicalAllReduce(s,
                                           domains,
                                           bytes,
                                           Sliced(split, bytes, domains.front().size()),
                                           DirectDomainReduceScatter(),
                                           DirectDomainAllGather(),
                                           0,
                                           InSwitchRailAllReduce());
        }
        else if (algorithm == Algo::CollNetChain)
        {
            // One chain per channel, each with its own head: at least one channel per local
            // rank, so that every GPU's NIC carries its share (NCCL: a head per NIC).
            const auto domains = Domains(call);
            const uint32_t depth = domains.front().size();
            CollectiveSplit chains = split;
            chains.numChannels = std::max(split.numChannels, depth);
            CollNetChainAllReduce(s,
                                  domains,
                                  bytes,
                                  chains,
                                  CollNetChainChunkBytes(bytes, chains.numChannels, depth));
        }
        break;
    case CollectiveKind::AllGather:
        if (algorithm == Algo::Ring)
        {
            RingAllGather(s, ranks, bytes, split, {}, rings);
        }
        else if (algorithm == Algo::Pat)
        {
            PatAllGather(s, ranks, bytes, split, {});
        }
        else
        {
            DirectAllGather(s, ranks, bytes, split, {});
        }
        break;
    case CollectiveKind::ReduceScatter:
        if (algorithm == Algo::Ring)
        {
            RingReduceScatter(s, ranks, bytes, split, {}, rings);
        }
        else if (algorithm == Algo::Pat)
        {
            PatReduceScatter(s, ranks, bytes, split, {});
        }
        else
        {
            DirectReduceScatter(s, ranks, bytes, split, {});
        }
        break;
    case CollectiveKind::AllToAll:
        DirectAllToAll(s, ranks, bytes, split, {});
        break;
    case CollectiveKind::Broadcast:
        ChainBroadcast(s, ranks, bytes, rootPos, split, {}, rings);
        break;
    case CollectiveKind::Reduce:
        ChainBroadcast(s, ranks, bytes, rootPos, split, {}, rings, true);
        break;
    case CollectiveKind::SendRecv:
        RingSendRecv(s, ranks, bytes, split, {});
        break;
    }
    s.SetPairRelay({}, 1, 1); // only the builders ask it: the schedule does not keep the maps
    // Reachability now, so a fabric that cannot run the algorithm fails before any traffic.
    for (const auto& op : s.GetInSwitch())
    {
        if (FindInSwitchPlane(op.ranks, op.scaleOut) < 0)
        {
            Reject("algorithm " + std::string(CollectiveAlgorithmName(algorithm)) +
                   " needs in-switch reduction over the " + std::to_string(op.ranks.size()) +
                   " ranks from rank " + std::to_string(op.ranks.front()) +
                   ", which no plane offers");
        }
    }
    for (const auto& step : s.GetSteps())
    {
        if (!step.join && step.inSwitch < 0 && !m_transport->CanReach(step.src, step.dst))
        {
            Reject("algorithm " + std::string(CollectiveAlgorithmName(algorithm)) + " needs rank " +
                   std::to_string(step.src) + " -> rank " + std::to_string(step.dst) +
                   ", which no plane reaches");
        }
    }
    return s;
}

CollectiveSchedule
CollectiveEngine::BuildSchedule(const CollectiveCall& call) const
{
    const CollectiveResolution how = Resolve(call);
    if (how.algorithm == Algo::Nvls && how.inSwitchPlane >= 0)
    {
        Reject("nvls runs in the switches: it has no message schedule");
    }
    return Build(call, how);
}

CollectiveSchedule
CollectiveEngine::BuildSchedule(const CollectiveSpec& spec) const
{
    return BuildSchedule(spec.Parse());
}

uint64_t
CollectiveEngine::Start(const CollectiveSpec& spec, DoneCallback done, int64_t id)
{
    return Start(spec.Parse(), done, id);
}

uint64_t
CollectiveEngine::Start(const CollectiveCall& call,
                        DoneCallback done,
                        int64_t forcedId,
                        CollectiveResolution* resolution)
{
    NS_LOG_FUNCTION(this << CollectiveKindName(call.kind) << call.ranks.size() << call.bytes
                         << forcedId);
    const CollectiveResolution how = Resolve(call);
    if (resolution)
    {
        *resolution = how;
    }
    const uint32_t self = Simulator::GetSystemId();
    std::set<uint32_t> systems;
    for (uint32_t rank : call.ranks)
    {
        systems.insert(m_transport->GetSystemOf(rank));
    }
    if (!systems.count(self))
    {
        NS_LOG_LOGIC("no rank of the group in this process");
        return forcedId >= 0 ? forcedId : m_nextId++; // none of this process's ranks takes part
    }
    auto run = std::make_unique<Running>();
    Running* r = run.get();
    r->call = call;
    r->how = how;
    r->start = Simulator::Now();
    r->done = done;
    for (uint32_t system : systems)
    {
        if (system != self)
        {
            r->others.push_back(system);
        }
    }
    r->partsPending = r->others.size();
    // NVLS inside one domain runs in its switches alone; across domains it has a schedule.
    const bool oneSwitchPlane = how.algorithm == Algo::Nvls && how.inSwitchPlane >= 0;
    if (!oneSwitchPlane)
    {
        r->schedule = Build(call, how);
    }
    SetCosts(r, std::max<std::size_t>(Domains(call).size(), 1));
    const uint64_t id = forcedId >= 0 ? forcedId : m_nextId++;
    NS_ABORT_MSG_IF(m_running.count(id), "CollectiveEngine: collective " << id << " is running");
    r->id = id;
    m_running.emplace(id, std::move(run));
    const char* kind = CollectiveKindName(call.kind);
    const char* algorithm = CollectiveAlgorithmName(how.algorithm);
    m_beginTrace(r->id, kind, algorithm, call.ranks.size(), call.bytes);
    NS_LOG_INFO("collective " << r->id << " " << kind << " " << algorithm << " on "
                              << call.ranks.size() << " ranks, " << call.bytes << " B, "
                              << r->schedule.GetNumMessages() << " messages");
    if (oneSwitchPlane)
    {
        // An NVLink domain is never split over processes: all of it is here.
        r->remaining = call.ranks.size();
        auto* plane = dynamic_cast<InSwitchReductionPlane*>(
            PeekPointer(m_transport->GetPlane(how.inSwitchPlane)));
        using Op = InSwitchReductionPlane::Op;
        const Op op = call.kind == CollectiveKind::AllGather       ? Op::AllGather
                      : call.kind == CollectiveKind::ReduceScatter ? Op::ReduceScatter
                                                                   : Op::AllReduce;
        auto start = [this, r, plane, op]() {
            plane->StartInSwitch(op,
                                 r->call.ranks,
                                 r->call.bytes,
                                 Callback<void, uint32_t>([this, r](uint32_t) {
                                     if (--r->remaining == 0)
                                     {
                                         LocalPartDone(r);
                                     }
                                 }));
        };
        const Time latency = m_endpoint ? m_endpoint->GetNvlsLatency() : Time(0);
        if (latency.IsStrictlyPositive() && call.bytes > 0)
        {
            Simulator::Schedule(latency, start);
        }
        else
        {
            start();
        }
        return id; // the plane may have finished (and freed) the run already
    }
    auto& steps = r->schedule.GetSteps();
    std::vector<uint32_t> roots;
    for (uint32_t i = 0; i < steps.size(); ++i)
    {
        if (m_transport->IsLocal(steps[i].dst))
        {
            ++r->remaining;
        }
        if (steps[i].numDeps == 0 && m_transport->IsLocal(steps[i].src))
        {
            roots.push_back(i);
        }
    }
    if (r->schedule.GetNumMessages() == 0 && r->schedule.GetInSwitch().empty())
    {
        // Nothing to move (0 bytes, one rank): end at once, but not inside Start.
        Simulator::ScheduleNow(&CollectiveEngine::LocalPartDone, this, r);
        return id;
    }
    Time base(0);
    if (m_endpoint)
    {
        const Ptr<NcclProtocol> p = m_endpoint->GetProtocol(how.protocol);
        // NVLSTree: NCCL's intra-node NVLS latency (its base latency is 0); CollNet: its
        // network latency (base 0), PAT its base and per-rank latency.
        const auto domains = static_cast<uint32_t>(Domains(call).size());
        base = how.algorithm == Algo::Tree       ? p->GetTreeBaseLatency()
               : how.algorithm == Algo::NvlsTree ? m_endpoint->GetNvlsLatency()
               : how.algorithm == Algo::Nvls
                   ? m_endpoint->GetNvlsLatency() + m_endpoint->GetNvlsNetLatency()
               : how.algorithm == Algo::CollNetDirect || how.algorithm == Algo::CollNetChain ||
                       how.algorithm == Algo::Pat
                   ? m_endpoint->GetStartLatency(how.algorithm, call.ranks.size(), domains)
                   : p->GetRingBaseLatency();
    }
    if (base.IsStrictlyPositive())
    {
        // The kernel launch and set-up before the first step (NCCL's base latency).
        Simulator::Schedule(base, &CollectiveEngine::LaunchRoots, this, r, roots);
    }
    else
    {
        LaunchRoots(r, roots);
    }
    return id;
}

void
CollectiveEngine::LaunchRoots(Running* run, const std::vector<uint32_t>& roots)
{
    // Messages complete in later events, so the run outlives this loop.
    for (uint32_t i : roots)
    {
        Launch(run, i);
    }
}

void
CollectiveEngine::Launch(Running* run, uint32_t step)
{
    const auto& s = run->schedule.GetSteps()[step];
    if (s.inSwitch >= 0)
    {
        NS_ASSERT_MSG(s.inSwitchStart, "an in-switch completion step was launched");
        LaunchInSwitch(run, s.inSwitch);
        return;
    }
    if (s.join)
    {
        StepDone(run, step);
        return;
    }
    Time delay(0);
    Time channelStep(0);
    uint64_t bytes = s.bytes;
    GpuTransport::Aggregate aggregate;
    aggregate.steps = run->schedule.GetAggregateSteps(step);
    aggregate.lanes = s.lanes;
    aggregate.loops = run->schedule.GetAggregateLoops(step);
    // An aggregate pays every step's costs: the first before its flow, the others' after it.
    const auto stepsAfter = static_cast<int64_t>(aggregate.steps - 1);
    // One message of the steps: one loop's piece on one lane (an uneven loop: its largest).
    const uint64_t piece = run->schedule.GetAggregatePiece(step);
    const uint64_t stepBytes =
        piece > 0 ? piece
                  : s.bytes / (uint64_t(aggregate.steps) * aggregate.lanes * aggregate.loops);
    aggregate.pieceBytes = piece;
    if (m_endpoint)
    {
        // One pipeline step of the protocol: its hop latency, its line format on the wire.
        const bool net = IsNetPlane(m_transport->SelectPlane(s.src, s.dst));
        delay = run->how.algorithm == Algo::Tree ? run->treeHop[net] : run->ringHop[net];
        const Ptr<NcclProtocol> protocol = m_endpoint->GetProtocol(run->how.protocol);
        if (piece > 0)
        {
            // The rank's own pieces differ: their sum, per lane, in the line format.
            bytes = protocol->WireBytes(s.bytes / aggregate.lanes) * aggregate.lanes;
            aggregate.pieceBytes = protocol->WireBytes(piece);
        }
        else
        {
            bytes = s.aggregate ? protocol->WireBytes(stepBytes) * aggregate.steps *
                                      aggregate.lanes * aggregate.loops
                                : protocol->WireBytes(s.bytes);
        }
        if (!net && run->channelStep.IsStrictlyPositive())
        {
            delay = Time(0); // spent at the receiving channel instead (SetCosts)
            channelStep = run->channelStep;
        }
        const Time each = delay; // one step's sender-side latency
        if (net && run->proxyStep.IsStrictlyPositive())
        {
            // The sender's proxy takes the network steps one after the other: this one
            // leaves once the proxy has posted it, and not before its hop latency.  An
            // aggregate's lanes are posted one after another at every step.
            const uint64_t steps =
                std::min<uint64_t>(
                    run->proxyFold,
                    std::max<uint64_t>(1, (stepBytes + run->proxyPiece - 1) / run->proxyPiece)) *
                aggregate.lanes * aggregate.loops;
            const Time now = Simulator::Now();
            if (run->proxyFree.size() <= s.src)
            {
                run->proxyFree.resize(s.src + 1, Time(0));
            }
            Time& free = run->proxyFree[s.src];
            const Time posting = run->proxyStep * static_cast<int64_t>(steps);
            const Time posted = std::max(now, free) + posting;
            // An aggregate's flow leaves once its first loop is posted; the later loops'
            // posting overlaps the transfer (the step's period, RingStepAggregate).
            delay =
                std::max(delay,
                         posted - posting + posting / static_cast<int64_t>(aggregate.loops) - now);
            free = posted;
            if (s.aggregate)
            {
                // The proxy posts the further steps of every aggregate of the rank that runs
                // at once (the slices of a pipeline's window), in turn: each step of this
                // one waits for theirs too.  Not retroactive: an aggregate that started
                // alone keeps its pace when another joins.
                auto& ends = run->proxyAggregates[s.src];
                ends.erase(std::remove_if(ends.begin(),
                                          ends.end(),
                                          [now](Time end) { return end <= now; }),
                           ends.end());
                aggregate.stepPosting = posting * static_cast<int64_t>(ends.size() + 1);
                ends.push_back(posted + std::max(each, aggregate.stepPosting) * stepsAfter);
            }
        }
        aggregate.stepLatency = each + channelStep;
        aggregate.channelPaced = run->oneDomain;
    }
    m_transport->SendMessage(s.src,
                             s.dst,
                             bytes,
                             GpuTransport::DoneCallback(),
                             Callback<void>([this, run, step]() { StepDone(run, step); }),
                             s.channel,
                             -1,
                             m_client,
                             (run->id << 32) | step,
                             delay,
                             run->channelRate,
                             channelStep,
                             aggregate,
                             run->sinkChannel);
}

void
CollectiveEngine::LaunchInSwitch(Running* run, int32_t index)
{
    const CollectiveSchedule::InSwitch& op = run->schedule.GetInSwitch()[index];
    NS_LOG_FUNCTION(this << run->id << index << op.bytes);
    // An NVLink domain is never split over processes: every rank of the operation is here,
    // so its completions are this process's own steps.
    for (uint32_t rank : op.ranks)
    {
        NS_ABORT_MSG_UNLESS(m_transport->IsLocal(rank),
                            "CollectiveEngine: in-switch operation over rank "
                                << rank << " of another process (a split NVLink domain)");
    }
    auto it = run->inSwitchPlanes.find(op.ranks);
    if (it == run->inSwitchPlanes.end())
    {
        it = run->inSwitchPlanes.emplace(op.ranks, FindInSwitchPlane(op.ranks, op.scaleOut)).first;
        NS_ABORT_MSG_IF(it->second < 0, "CollectiveEngine: in-switch step without a plane");
    }
    auto* plane =
        dynamic_cast<InSwitchReductionPlane*>(PeekPointer(m_transport->GetPlane(it->second)));
    // The start step first: a rankDone that fires at once then cannot meet a finished run.
    StepDone(run, op.start);
    plane->StartInSwitch(op.op,
                         op.ranks,
                         op.bytes,
                         Callback<void, uint32_t>([this, run, index](uint32_t rank) {
                             const auto& o = run->schedule.GetInSwitch()[index];
                             const auto pos =
                                 std::find(o.ranks.begin(), o.ranks.end(), rank) - o.ranks.begin();
                             StepDone(run, o.complete[pos]);
                         }));
}

void
CollectiveEngine::Received(uint64_t key)
{
    auto it = m_running.find(key >> 32);
    NS_ABORT_MSG_IF(it == m_running.end(),
                    "CollectiveEngine: message of collective " << (key >> 32)
                                                               << ", which is not running here");
    StepDone(it->second.get(), static_cast<uint32_t>(key & 0xffffffff));
}

void
CollectiveEngine::StepDone(Running* run, uint32_t step)
{
    auto& steps = run->schedule.GetSteps();
    const uint32_t here = steps[step].dst;
    // An in-switch start's successors are its completions: the plane completes them.
    if (!steps[step].inSwitchStart)
    {
        run->schedule.ForEachSuccessor(step, [this, run, here, &steps](uint32_t next) {
            if (steps[next].src == here)
            {
                Release(run, next);
            }
            else
            {
                // Another rank waits for this one (a rendezvous, a freed pipeline slot): it
                // learns of it by a notification, never in the same instant.
                m_transport->Notify(m_transport->GetSystemOf(steps[next].src),
                                    m_client,
                                    run->id,
                                    next);
            }
        });
    }
    if (--run->remaining == 0)
    {
        LocalPartDone(run);
    }
}

void
CollectiveEngine::Release(Running* run, uint32_t step)
{
    if (--run->schedule.GetSteps()[step].numDeps == 0)
    {
        Launch(run, step);
    }
}

void
CollectiveEngine::Notified(uint64_t id, uint64_t what)
{
    auto it = m_running.find(id);
    NS_ABORT_MSG_IF(it == m_running.end(),
                    "CollectiveEngine: notification for collective "
                        << id << ", which is not running here");
    Running* run = it->second.get();
    if (what != kPartDone)
    {
        Release(run, static_cast<uint32_t>(what));
        return;
    }
    NS_LOG_LOGIC("collective " << id << ": another process finished its part");
    run->lastPartEnd =
        std::max(run->lastPartEnd, Simulator::Now() - m_transport->GetNotificationLatency());
    --run->partsPending;
    TryFinish(run);
}

void
CollectiveEngine::LocalPartDone(Running* run)
{
    NS_LOG_FUNCTION(this << run->id);
    run->localDone = true;
    run->lastPartEnd = std::max(run->lastPartEnd, Simulator::Now());
    for (uint32_t system : run->others)
    {
        m_transport->Notify(system, m_client, run->id, kPartDone);
    }
    TryFinish(run);
}

void
CollectiveEngine::TryFinish(Running* run)
{
    if (run->localDone && run->partsPending == 0)
    {
        Finish(run, run->lastPartEnd);
    }
}

void
CollectiveEngine::Finish(Running* run, Time end)
{
    NS_LOG_FUNCTION(this << run->id << end);
    CollectiveResult res;
    res.id = run->id;
    res.kind = CollectiveKindName(run->call.kind);
    res.algorithm = CollectiveAlgorithmName(run->how.algorithm);
    res.protocol = m_endpoint ? NcclProtocolName(run->how.protocol) : "ideal";
    res.channels = run->p2pChannels > 0 ? run->p2pChannels : run->how.channels;
    res.numRanks = run->call.ranks.size();
    res.bytes = run->call.bytes;
    res.start = run->start;
    res.end = end;
    res.messages = run->schedule.GetNumMessages();
    res.inPlace = run->call.inPlace;
    res.loopTime = m_endpoint && run->call.loopIterations > 0
                       ? m_endpoint->LoopIterationTime(res.end - res.start,
                                                       run->call.loopGpusPerThread,
                                                       run->call.loopIterations,
                                                       run->how.channels)
                       : res.end - res.start;
    const int64_t ns = (res.end - res.start).GetNanoSeconds();
    res.algbw_gbyte_per_s = CollectiveAlgBw_gbyte_per_s(res.bytes, ns);
    res.busbw_gbyte_per_s = CollectiveBusBw_gbyte_per_s(res.kind, res.numRanks, res.bytes, ns);
    // One row per collective: the process of the group's first rank writes it.
    if (m_db && m_transport->IsLocal(run->call.ranks.front()))
    {
        CollectiveRecord row;
        row.collId = res.id;
        row.kind = res.kind;
        row.algorithm = res.algorithm;
        row.groupName = run->call.groupName;
        row.numRanks = res.numRanks;
        row.bytes = res.bytes;
        row.startNs = res.start.GetNanoSeconds();
        row.endNs = res.end.GetNanoSeconds();
        row.inPlace = res.inPlace ? 1 : 0;
        row.loopTimeNs = res.loopTime.GetNanoSeconds();
        m_db->AddCollective(row);
    }
    NS_LOG_LOGIC("collective " << res.id << " " << res.kind << " " << res.algorithm << " done, "
                               << (res.end - res.start).GetNanoSeconds() << " ns");
    m_endTrace(res.id, res.end - res.start, res.busbw_gbyte_per_s);
    DoneCallback done = run->done;
    m_running.erase(run->id);
    if (!done.IsNull())
    {
        // The caller learns that the last rank finished by that rank's notification.
        Simulator::Schedule(end + m_transport->GetNotificationLatency() - Simulator::Now(),
                            [done, res]() { done(res); });
    }
}

void
CollectiveEngine::DoDispose()
{
    m_running.clear();
    m_transport = nullptr;
    m_db = nullptr;
    m_endpoint = nullptr;
    Object::DoDispose();
}

} // namespace ns3
