/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/nvlink-transport-plane.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/transport-packet-tag.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NvLinkTransportPlane");
NS_OBJECT_ENSURE_REGISTERED(NvLinkTransportPlane);

TypeId
NvLinkTransportPlane::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvLinkTransportPlane")
            .SetParent<TransportPlane>()
            .SetGroupName("AiFabric")
            .AddConstructor<NvLinkTransportPlane>()
            .AddAttribute("Protocol",
                          "NvLinkHeader protocol of transport packets (not 0, the unset header's)",
                          UintegerValue(0x4754),
                          MakeUintegerAccessor(&NvLinkTransportPlane::m_protocol),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("NvlsChunkBytes",
                          "Bytes per NVLS reduction chunk (NCCL_NVLS_CHUNKSIZE, 128 KiB)",
                          UintegerValue(128 * 1024),
                          MakeUintegerAccessor(&NvLinkTransportPlane::m_nvlsChunkBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("NvlsChunksInFlight",
                          "NVLS chunks each member has outstanding (NCCL: 16 NVLS channels, "
                          "one chunk each)",
                          UintegerValue(16),
                          MakeUintegerAccessor(&NvLinkTransportPlane::m_nvlsChunksInFlight),
                          MakeUintegerChecker<uint32_t>(1))
            // 256: a 1 MiB allreduce keeps 4 KiB packets (32 KiB ones move it by
            // +9.8% through store-and-forward switches), 16 MiB and more get the
            // largest bursts (granularity-bench, doc/performance.md).
            .AddAttribute("NvlsMinPackets",
                          "Packets each member's buffer is cut into at least where bursts "
                          "allow (larger packets for larger allreduces); 0 = Granularity",
                          UintegerValue(256),
                          MakeUintegerAccessor(&NvLinkTransportPlane::m_nvlsMinPackets),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("NvlsMinWindow",
                          "NCCL NVLS allreduce: loops a member keeps in flight at least when "
                          "one simulated loop stands for several of NCCL's (fewer events, the "
                          "same bytes in flight); 0 = one simulated loop per NCCL loop",
                          UintegerValue(4),
                          MakeUintegerAccessor(&NvLinkTransportPlane::m_nvlsMinWindow),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("NvlsGroupBase",
                          "First NVLS group id this plane registers on the switches (keep "
                          "clear of groups registered through NvLinkHelper)",
                          UintegerValue(0x40000000),
                          MakeUintegerAccessor(&NvLinkTransportPlane::m_nvlsGroupBase),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("NvlsAllReduce",
                          "In-switch allreduce traffic: \"multicast\" (each buffer up once, "
                          "the reduced one multicast back) or \"reducescatter-allgather\" "
                          "(NCCL's NVLS kernel: multimem.ld_reduce then multimem.st)",
                          EnumValue(NVLS_MULTICAST),
                          MakeEnumAccessor(&NvLinkTransportPlane::m_nvlsAllReduce),
                          MakeEnumChecker(NVLS_MULTICAST,
                                          "multicast",
                                          NVLS_REDUCESCATTER_ALLGATHER,
                                          "reducescatter-allgather"))
            .AddAttribute("NvlsChunkRule",
                          "Piece per owner and loop: \"fixed\" (NvlsChunkBytes) or \"nccl\" "
                          "(src/enqueue.cc: NvlsChunkBytes halved to 64, 32, 16 KiB for buffers "
                          "of fewer than 64, 8, 2 loops per channel)",
                          EnumValue(NVLS_CHUNK_FIXED),
                          MakeEnumAccessor(&NvLinkTransportPlane::m_nvlsChunkRule),
                          MakeEnumChecker(NVLS_CHUNK_FIXED, "fixed", NVLS_CHUNK_NCCL, "nccl"))
            // src/device/all_reduce.h (NVLS): a channel's reduce warps wait for every
            // rank's flag of the step (multimem.ld_reduce.min, prims_simple.h
            // NvlsMinPolling), ld_reduce and store the chunk, fence and post their flag
            // before the next step: a step latency in series with the channel's data.
            .AddAttribute("NvlsStepLatency",
                          "Per NVLS channel and loop, spent after the loop's data before the "
                          "channel's next loop (the endpoint sets NCCL's NVLink Simple step "
                          "latency, tuning.cc hwLatencies; 0 = none)",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&NvLinkTransportPlane::m_nvlsStepLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("NvlsPacketsPerPlane",
                          "Cut each NVLS piece into one packet per switch plane, sized by its "
                          "links (the GPU interleaves multicast addresses over every NVSwitch), "
                          "and store each reduced packet on as it comes back (NCCL's reduce "
                          "warps); false: packets sprayed by chunk id",
                          BooleanValue(false),
                          MakeBooleanAccessor(&NvLinkTransportPlane::m_nvlsPacketsPerPlane),
                          MakeBooleanChecker())
            .AddAttribute("StripeMessages",
                          "Cut a GPU-to-GPU message into one packet per switch plane (or "
                          "direct link bundle) sized by its links, in rounds of at most "
                          "MaxBurstBytes, while the narrowest plane's share fills a "
                          "Granularity unit: the hardware stripes every transfer over all "
                          "of a GPU's links; false: GpuTransport's equal packets, sprayed",
                          BooleanValue(true),
                          MakeBooleanAccessor(&NvLinkTransportPlane::m_stripeMessages),
                          MakeBooleanChecker());
    return tid;
}

NvLinkTransportPlane::NvLinkTransportPlane()
    : m_protocol(0x4754),
      m_nvlsChunkBytes(128 * 1024),
      m_nvlsChunksInFlight(16),
      m_nvlsMinPackets(256),
      m_nvlsMinWindow(4),
      m_nvlsGroupBase(0x40000000),
      m_nvlsAllReduce(NVLS_MULTICAST),
      m_nvlsChunkRule(NVLS_CHUNK_FIXED),
      m_nvlsStepLatency(Time(0)),
      m_nvlsPacketsPerPlane(false),
      m_stripeMessages(true),
      m_granularity(0),
      m_maxBurst(0),
      m_overhead(0),
      m_nextOpId(0),
      m_nextGroup(0)
{
    NS_LOG_FUNCTION(this);
}

void
NvLinkTransportPlane::NotifyConstructionCompleted()
{
    TransportPlane::NotifyConstructionCompleted();
    // The base attribute's default is "generic"; an explicit other name is kept.
    if (GetPlaneName() == "generic")
    {
        SetPlaneName("nvlink");
    }
}

uint32_t
NvLinkTransportPlane::AddDomain(const NvLinkDomain& built, const std::vector<uint32_t>& rankOfGpu)
{
    NS_ABORT_MSG_IF(rankOfGpu.empty(), "NvLinkTransportPlane::AddDomain: no GPU");
    const auto domain = static_cast<uint32_t>(m_domains.size());
    Domain d;
    d.rankOfGpu = rankOfGpu;
    d.switches = built.switches;
    for (uint32_t g = 0; g < rankOfGpu.size(); ++g)
    {
        const uint32_t rank = rankOfGpu[g];
        Ptr<NvLinkGpu> gpu = built.gpus.at(g);
        NS_ABORT_MSG_IF(!gpu, "NvLinkTransportPlane::AddDomain: GPU " << g << " not installed");
        NS_ABORT_MSG_IF(HasRank(rank), "NvLinkTransportPlane: rank " << rank << " added twice");
        const uint32_t granularity = gpu->GetGranularityBytes();
        if (m_granularity == 0)
        {
            Ptr<NvLinkNetDevice> dev = gpu->GetDevice(0);
            UintegerValue base;
            dev->GetAttribute("OverheadBytes", base);
            m_granularity = granularity;
            m_maxBurst = gpu->GetMaxBurstBytes();
            // As the link layer charges a burst: every real packet its header and framing.
            m_overhead = dev->RealPackets(granularity) *
                         (dev->GetHeaderBytes() + static_cast<uint32_t>(base.Get()));
        }
        NS_ABORT_MSG_IF(granularity != m_granularity,
                        "NvLinkTransportPlane: domains with different Granularity");
        NS_ABORT_MSG_IF(gpu->GetMaxBurstBytes() != m_maxBurst,
                        "NvLinkTransportPlane: domains with different MaxBurstBytes");
        if (m_ranks.size() <= rank)
        {
            m_ranks.resize(rank + 1);
        }
        m_ranks[rank] = RankEntry{gpu, domain, g, true, -1};
        gpu->SetPacketReceivedCallback(MakeCallback(&NvLinkTransportPlane::Receive, this));
        gpu->SetPacketTxReadyCallback(
            Callback<void, uint32_t>([this, rank](uint32_t) { GpuReady(rank); }));
    }
    m_domains.push_back(std::move(d));
    return domain;
}

uint32_t
NvLinkTransportPlane::AddDescribedDomain(const NvLinkFlowDomain& described,
                                         const std::vector<int64_t>& nodeOfGpu)
{
    NS_LOG_FUNCTION(this << described.ranks.size());
    NS_ABORT_MSG_IF(described.ranks.empty(), "NvLinkTransportPlane::AddDescribedDomain: no GPU");
    NS_ABORT_MSG_UNLESS(nodeOfGpu.size() == described.ranks.size(),
                        "NvLinkTransportPlane::AddDescribedDomain: "
                            << nodeOfGpu.size() << " nodes for " << described.ranks.size()
                            << " GPUs");
    if (m_granularity == 0)
    {
        m_granularity = described.granularityBytes;
        m_maxBurst = described.maxBurstBytes;
        m_overhead = described.packetOverheadBytes;
    }
    NS_ABORT_MSG_IF(described.granularityBytes != m_granularity,
                    "NvLinkTransportPlane: domains with different Granularity");
    NS_ABORT_MSG_IF(described.maxBurstBytes != m_maxBurst,
                    "NvLinkTransportPlane: domains with different MaxBurstBytes");
    const auto domain = static_cast<uint32_t>(m_domains.size());
    m_described.push_back(described);
    Domain d;
    d.rankOfGpu = described.ranks;
    d.described = &m_described.back();
    for (uint32_t g = 0; g < described.ranks.size(); ++g)
    {
        const uint32_t rank = described.ranks[g];
        NS_ABORT_MSG_IF(HasRank(rank), "NvLinkTransportPlane: rank " << rank << " added twice");
        if (m_ranks.size() <= rank)
        {
            m_ranks.resize(rank + 1);
        }
        m_ranks[rank] = RankEntry{nullptr, domain, g, true, nodeOfGpu[g]};
    }
    m_domains.push_back(std::move(d));
    return domain;
}

uint32_t
NvLinkTransportPlane::GetNDomains() const
{
    return static_cast<uint32_t>(m_domains.size());
}

const NvLinkTransportPlane::RankEntry*
NvLinkTransportPlane::Entry(uint32_t rank) const
{
    return rank < m_ranks.size() && m_ranks[rank].present ? &m_ranks[rank] : nullptr;
}

uint32_t
NvLinkTransportPlane::GetDomain(uint32_t rank) const
{
    const RankEntry* e = Entry(rank);
    NS_ABORT_MSG_IF(!e, "NvLinkTransportPlane: rank " << rank << " is not on this plane");
    return e->domain;
}

Ptr<NvLinkGpu>
NvLinkTransportPlane::GetGpu(uint32_t rank) const
{
    const RankEntry* e = Entry(rank);
    return e ? e->gpu : nullptr;
}

bool
NvLinkTransportPlane::HasRank(uint32_t rank) const
{
    return Entry(rank) != nullptr;
}

bool
NvLinkTransportPlane::CanReach(uint32_t srcRank, uint32_t dstRank) const
{
    const RankEntry* a = Entry(srcRank);
    const RankEntry* b = Entry(dstRank);
    if (!a || !b || srcRank == dstRank || a->domain != b->domain)
    {
        return false;
    }
    if (const NvLinkFlowDomain* d = m_domains[a->domain].described)
    {
        return d->HasPath(a->gpuId, b->gpuId);
    }
    return a->gpu->HasPath(b->gpuId);
}

uint32_t
NvLinkTransportPlane::GetMaxPayloadBytes() const
{
    NS_ABORT_MSG_IF(m_granularity == 0, "NvLinkTransportPlane: AddDomain before use");
    return m_granularity;
}

uint32_t
NvLinkTransportPlane::GetMaxBurstBytes() const
{
    NS_ABORT_MSG_IF(m_granularity == 0, "NvLinkTransportPlane: AddDomain before use");
    return m_maxBurst;
}

uint32_t
NvLinkTransportPlane::GetPacketOverheadBytes() const
{
    return m_overhead;
}

int64_t
NvLinkTransportPlane::GetNodeId(uint32_t rank) const
{
    const RankEntry* e = Entry(rank);
    if (!e)
    {
        return -1;
    }
    if (!e->gpu)
    {
        return e->nodeId;
    }
    Ptr<Node> node = e->gpu->GetObject<Node>();
    return node ? static_cast<int64_t>(node->GetId()) : -1;
}

bool
NvLinkTransportPlane::Inject(uint32_t srcRank,
                             uint32_t dstRank,
                             uint32_t payloadBytes,
                             const TransportTag& tag)
{
    const RankEntry& src = m_ranks[srcRank];
    NS_ABORT_MSG_UNLESS(src.gpu,
                        "NvLinkTransportPlane: rank " << srcRank
                                                      << " is described only (no devices)");
    Ptr<Packet> p = Create<Packet>(payloadBytes);
    AddTransportTags(p, srcRank, dstRank, tag);
    const bool accepted =
        src.gpu->SendPacket(m_ranks[dstRank].gpuId,
                            p,
                            m_protocol,
                            tag.lane == TransportTag::NO_LANE ? NvLinkGpu::NO_PEER : tag.lane);
    if (!accepted)
    {
        NS_LOG_LOGIC("rank " << srcRank << ": GPU busy, packet to rank " << dstRank << " refused");
    }
    return accepted;
}

const std::vector<uint32_t>&
NvLinkTransportPlane::GetStripeLinks(uint32_t srcRank, uint32_t dstRank) const
{
    const RankEntry* src = Entry(srcRank);
    const RankEntry* dst = Entry(dstRank);
    if (!m_stripeMessages || !src || !src->gpu || !dst)
    {
        return TransportPlane::GetStripeLinks(srcRank, dstRank);
    }
    return src->gpu->GetStripeLinks(dst->gpuId);
}

double
NvLinkTransportPlane::GetStripeLaneRate_gbyte_per_s(uint32_t srcRank,
                                                    uint32_t dstRank,
                                                    uint32_t lane) const
{
    const std::vector<uint32_t>& links = GetStripeLinks(srcRank, dstRank);
    if (lane >= links.size())
    {
        return 0;
    }
    // The lane's device at the sender; its bundle has the same links at the receiver.
    const Ptr<NvLinkGpu> gpu = m_ranks[srcRank].gpu;
    return DeviceLine_bps(gpu->GetDevice(gpu->GetStripeDevices(m_ranks[dstRank].gpuId)[lane])) *
           PayloadShare() / 8e9;
}

double
NvLinkTransportPlane::PayloadShare() const
{
    const double payload = GetMaxPayloadBytes();
    return payload / (payload + GetPacketOverheadBytes());
}

double
NvLinkTransportPlane::DeviceLine_bps(Ptr<NvLinkNetDevice> device)
{
    return device->GetDataRate().GetBitRate() * device->GetEncodingEfficiency();
}

void
NvLinkTransportPlane::GpuReady(uint32_t rank)
{
    NS_LOG_LOGIC("rank " << rank << " ready: its GPU takes packets again");
    NotifyTxReady(rank);
}

void
NvLinkTransportPlane::Receive(uint32_t srcGpu,
                              Ptr<const Packet> packet,
                              uint32_t payloadBytes,
                              uint16_t protocol)
{
    NS_ABORT_MSG_IF(protocol != m_protocol,
                    "NvLinkTransportPlane: packet of protocol " << protocol << " from GPU "
                                                                << srcGpu);
    TransportPacketTag t;
    const bool found = PeekTransportTags(packet, t);
    NS_ABORT_MSG_IF(!found, "NvLinkTransportPlane: packet without TransportPacketTag");
    NS_ASSERT_MSG(Entry(t.srcRank) && m_ranks[t.srcRank].gpuId == srcGpu,
                  "rank " << t.srcRank << " is not NVLink GPU " << srcGpu);
    NotifyDelivered(t.srcRank, t.dstRank, payloadBytes, t.tag);
}

// ---- NVLS ---------------------------------------------------------------------

bool
NvLinkTransportPlane::CanReduceInSwitch(const std::vector<uint32_t>& ranks) const
{
    if (ranks.size() < 2)
    {
        return false;
    }
    const RankEntry* first = Entry(ranks[0]);
    if (!first)
    {
        return false;
    }
    std::vector<uint32_t> gpus;
    for (uint32_t r : ranks)
    {
        const RankEntry* e = Entry(r);
        if (!e || e->domain != first->domain)
        {
            return false;
        }
        gpus.push_back(e->gpuId);
    }
    std::sort(gpus.begin(), gpus.end());
    if (std::adjacent_find(gpus.begin(), gpus.end()) != gpus.end())
    {
        return false;
    }
    const Domain& d = m_domains[first->domain];
    if (d.described)
    {
        // As below: NVLS-capable switch planes, and a switch bundle on every member.
        if (d.described->switches == 0 || !d.described->nvls)
        {
            return false;
        }
        return std::all_of(ranks.begin(), ranks.end(), [this, &d](uint32_t r) {
            return d.described->GetNSwitchBundles(m_ranks[r].gpuId) != 0;
        });
    }
    if (d.switches.empty())
    {
        return false;
    }
    for (const auto& sw : d.switches)
    {
        if (!sw->SupportsNvls())
        {
            return false;
        }
    }
    // Every member must have switch planes (PlaneForChunk); a GPU only on direct
    // links cannot take part.
    for (uint32_t r : ranks)
    {
        const Ptr<NvLinkGpu>& gpu = m_ranks[r].gpu;
        bool switched = false;
        for (const auto& sw : d.switches)
        {
            for (uint32_t i = 0; i < gpu->GetNDevices() && !switched; ++i)
            {
                Ptr<CreditLinkNetDevice> peer = gpu->GetDevice(i)->GetPeer();
                switched = peer && peer->GetNode() == sw->GetObject<Node>();
            }
        }
        if (!switched)
        {
            return false;
        }
    }
    return true;
}

uint32_t
NvLinkTransportPlane::GroupFor(uint32_t domain, std::vector<uint32_t> gpuIds)
{
    std::sort(gpuIds.begin(), gpuIds.end());
    Domain& d = m_domains[domain];
    auto it = d.groupOfMembers.find(gpuIds);
    if (it != d.groupOfMembers.end())
    {
        return it->second;
    }
    const uint32_t group = m_nvlsGroupBase + m_nextGroup++;
    NS_LOG_LOGIC("NVLS group " << group << " of " << gpuIds.size() << " GPUs registered on "
                               << d.switches.size() << " switches of domain " << domain);
    for (const auto& sw : d.switches)
    {
        sw->RegisterNvlsGroup(group, gpuIds);
    }
    d.groupOfMembers.emplace(std::move(gpuIds), group);
    m_groups[group] = NvlsGroup();
    return group;
}

uint32_t
NvLinkTransportPlane::GroupOfRanks(const std::vector<uint32_t>& ranks)
{
    std::vector<uint32_t> gpuIds;
    for (uint32_t r : ranks)
    {
        gpuIds.push_back(m_ranks[r].gpuId);
    }
    return GroupFor(m_ranks[ranks[0]].domain, gpuIds);
}

uint32_t
NvLinkTransportPlane::ReserveIds(uint32_t group, uint64_t ids, uint64_t bytes)
{
    NvlsGroup& g = m_groups[group];
    NS_ABORT_MSG_IF(ids > std::numeric_limits<uint32_t>::max(),
                    "NvLinkTransportPlane: NVLS operation of " << bytes << " B is too large");
    if (g.nextChunk > std::numeric_limits<uint32_t>::max() - ids)
    {
        NS_ABORT_MSG_IF(g.inFlight != 0, "NvLinkTransportPlane: NVLS chunk ids exhausted");
        g.nextChunk = 0; // ids may be reused once nothing of the group is in flight
    }
    const uint32_t first = g.nextChunk;
    g.nextChunk += static_cast<uint32_t>(ids);
    g.inFlight++;
    return first;
}

void
NvLinkTransportPlane::StartInSwitch(Op op,
                                    const std::vector<uint32_t>& ranks,
                                    uint64_t bytes,
                                    Callback<void, uint32_t> rankDone)
{
    NS_LOG_FUNCTION(this << static_cast<int>(op) << ranks.size() << bytes);
    NS_ABORT_MSG_IF(!CanReduceInSwitch(ranks),
                    "NvLinkTransportPlane: in-switch operation over ranks outside one NVLS-"
                    "capable NVLink domain");
    NS_ABORT_MSG_IF(m_domains[m_ranks[ranks[0]].domain].described,
                    "NvLinkTransportPlane: in-switch operation on a domain described only (no "
                    "devices)");
    if (bytes == 0)
    {
        // Nothing to move: every rank holds the (empty) result, but not inside the call.
        for (uint32_t r : ranks)
        {
            Simulator::ScheduleNow([rankDone, r]() { rankDone(r); });
        }
        return;
    }
    if (op == Op::AllReduce && m_nvlsAllReduce == NVLS_MULTICAST)
    {
        StartMulticastAllReduce(ranks, bytes, rankDone);
        return;
    }
    StartShareOp(op, ranks, bytes, rankDone);
}

uint64_t
NvLinkTransportPlane::NvlsPlan::PieceBytes(uint32_t loop, uint32_t owner) const
{
    const uint64_t offset = static_cast<uint64_t>(loop) * pieceBytes;
    const uint64_t total = toAll ? bytes : shareBytes.at(owner);
    return offset < total ? std::min(pieceBytes, total - offset) : 0;
}

uint64_t
NvLinkTransportPlane::NcclNvlsChunkBytes(uint64_t bytes,
                                         uint32_t ranks,
                                         uint32_t channels,
                                         uint64_t maxChunkBytes)
{
    // src/enqueue.cc (NCCL_ALGO_NVLS): concurrentOps = nChannels * nHeads.
    const uint64_t ops = static_cast<uint64_t>(channels) * ranks;
    uint64_t chunk = maxChunkBytes;
    if (bytes < 64 * ops * chunk && chunk > 65536)
    {
        chunk = 65536;
    }
    if (bytes < 8 * ops * chunk && chunk > 32768)
    {
        chunk = 32768;
    }
    if (bytes < 2 * ops * chunk && chunk > 16384)
    {
        chunk = 16384;
    }
    return chunk;
}

uint64_t
NvLinkTransportPlane::NvlsPlan::LoopBytesIn(Op op, uint32_t loop, uint32_t member) const
{
    uint64_t in = op != Op::AllGather ? PieceBytes(loop, member) : 0;
    for (uint32_t r = 0; op != Op::ReduceScatter && r < shareBytes.size(); ++r)
    {
        in += PieceBytes(loop, r);
    }
    return in;
}

Time
NvLinkTransportPlane::NvlsPlan::SlotFreeAt(Time issued, uint64_t bytesIn) const
{
    Time free = Simulator::Now();
    if (slotRate_byte_per_s > 0)
    {
        free = std::max(free, issued + Seconds(static_cast<double>(bytesIn) / slotRate_byte_per_s));
    }
    return free + stepDelay;
}

NvLinkTransportPlane::NvlsPlan
NvLinkTransportPlane::GetNvlsPlan(Op op, const std::vector<uint32_t>& ranks, uint64_t bytes) const
{
    NvlsPlan plan;
    plan.toAll = op == Op::AllReduce && m_nvlsAllReduce == NVLS_MULTICAST;
    plan.bytes = bytes;
    // A multicast chunk, or NCCL's loop: one chunk per head (loopCount = nHeads * chunkSize).
    // NCCL's NVLS allreduce kernel (one node): its chunk, channels and steps.  The
    // reduce-scatter and all-gather NVLS-tree pipelines through the engine keep the fixed
    // chunk and no step costs: their pipeline is the collective engine's.
    const bool ncclKernel = op == Op::AllReduce && !plan.toAll;
    const uint64_t chunk = ncclKernel && m_nvlsChunkRule == NVLS_CHUNK_NCCL
                               ? NcclNvlsChunkBytes(bytes,
                                                    static_cast<uint32_t>(ranks.size()),
                                                    m_nvlsChunksInFlight,
                                                    m_nvlsChunkBytes)
                               : m_nvlsChunkBytes;
    // Packets of the buffer, each within a burst and within the piece.
    const auto packetBytes = [this, bytes](uint64_t pieceBytes) {
        return AdaptivePacketBytes(
            bytes,
            m_granularity,
            static_cast<uint32_t>(std::min<uint64_t>(GetMaxBurstBytes(), pieceBytes)),
            m_nvlsMinPackets);
    };
    plan.pieceBytes = std::max<uint64_t>(chunk, m_granularity);
    plan.packetBytes = packetBytes(plan.pieceBytes);
    if (plan.toAll)
    {
        plan.loops = static_cast<uint32_t>((bytes + plan.pieceBytes - 1) / plan.pieceBytes);
        plan.window = m_nvlsChunksInFlight;
        return plan;
    }
    const auto p = static_cast<uint32_t>(ranks.size());
    for (uint32_t m = 0; m < p; ++m)
    {
        plan.shareBytes.push_back(bytes / p + (m < bytes % p ? 1 : 0));
    }
    plan.loops =
        static_cast<uint32_t>((plan.shareBytes[0] + plan.pieceBytes - 1) / plan.pieceBytes);
    // A contribution is held in the switch until every member's has come: a member has
    // as many loops outstanding as its switch input buffers hold (at most one per NVLS
    // channel), else the ones waiting for a late member block the others.
    const Domain& d = m_domains[m_ranks[ranks[0]].domain];
    DataRate engineRate(0);
    uint64_t buffers = 0;
    uint32_t switchLinks = 0;
    uint32_t fewestLinks = std::numeric_limits<uint32_t>::max();
    uint32_t mostLinks = 0;
    if (const NvLinkFlowDomain* described = d.described)
    {
        engineRate = DataRate(described->nvlsEngineRatePerLink_bps);
        const uint32_t gpu0 = m_ranks[ranks[0]].gpuId;
        const std::vector<uint32_t> bundles = described->GetBundleLinks(gpu0);
        buffers = uint64_t{described->rxBufferBytes} * bundles.size();
        for (uint32_t i = 0; i < described->GetNSwitchBundles(gpu0); ++i)
        {
            switchLinks += bundles[i];
            fewestLinks = std::min(fewestLinks, bundles[i]);
            mostLinks = std::max(mostLinks, bundles[i]);
        }
    }
    else
    {
        if (!d.switches.empty())
        {
            engineRate = d.switches[0]->GetNvlsEngineRatePerLink();
        }
        const Ptr<NvLinkGpu>& gpu0 = m_ranks[ranks[0]].gpu;
        UintegerValue vc;
        gpu0->GetAttribute("Vc", vc);
        for (uint32_t i = 0; i < gpu0->GetNDevices(); ++i)
        {
            if (Ptr<CreditLinkNetDevice> peer = gpu0->GetDevice(i)->GetPeer())
            {
                buffers += peer->GetReceiveBufferBytes(static_cast<uint32_t>(vc.Get()));
                if (peer->GetNode()->GetObject<NvSwitch>())
                {
                    const uint32_t links = gpu0->GetDevice(i)->GetLinks();
                    switchLinks += links;
                    fewestLinks = std::min(fewestLinks, links);
                    mostLinks = std::max(mostLinks, links);
                }
            }
        }
    }
    // One packet per plane while the narrowest plane's still fills a Granularity unit;
    // finer pieces (many planes, small chunks) keep the sprayed bursts, whose loops span
    // the planes many times over.
    plan.perPlane = ncclKernel && m_nvlsPacketsPerPlane && switchLinks > 0 &&
                    plan.pieceBytes * fewestLinks / switchLinks >= m_granularity;
    const uint64_t loopBytes = plan.pieceBytes * p;
    plan.window =
        static_cast<uint32_t>(std::clamp<uint64_t>(buffers / loopBytes, 1, m_nvlsChunksInFlight));
    // Event cost, not a mechanism: once a member has many NCCL loops, one simulated loop
    // stands for several consecutive ones, their step latencies charged together.  The
    // bytes in flight stay the same (the window shrinks by as much), at least
    // NvlsMinWindow loops stay in flight, and a plane's share stays within one burst.
    uint32_t group = 1;
    if (ncclKernel && m_nvlsMinWindow > 0)
    {
        const uint64_t planeBytes =
            plan.perPlane ? plan.pieceBytes * mostLinks / switchLinks : plan.pieceBytes;
        const uint64_t burstGroups = GetMaxBurstBytes() / std::max<uint64_t>(planeBytes, 1);
        // Each slot keeps 8 loops at least: the last, larger loop's drain stays a small part.
        while (group * 2 <= burstGroups && plan.window % 2 == 0 &&
               plan.window / 2 >= m_nvlsMinWindow && plan.loops / 2 >= 8 * (plan.window / 2))
        {
            group *= 2;
            plan.window /= 2;
            plan.pieceBytes *= 2;
            plan.loops =
                static_cast<uint32_t>((plan.shareBytes[0] + plan.pieceBytes - 1) / plan.pieceBytes);
        }
        plan.packetBytes = packetBytes(plan.pieceBytes);
    }
    // A slot stands for channels / window of NCCL's channels, each running its own loops
    // one after the other: their step latencies over the slot's loops, and their share of
    // the engine's rate towards the GPU.
    if (ncclKernel && m_nvlsStepLatency.IsStrictlyPositive())
    {
        plan.stepDelay = PicoSeconds(m_nvlsStepLatency.GetPicoSeconds() * group * plan.window /
                                     m_nvlsChunksInFlight);
        // Without registered buffers the kernel copies the input into the NVLS buffer
        // (scatter warps) and the result out of it (gather warps), each stage handing its
        // steps on by flag: the first reduction waits for the scatter's first step, the
        // output for the gather's last (all_reduce.h).
        plan.scatterDelay = m_nvlsStepLatency;
        plan.gatherDelay = m_nvlsStepLatency;
        plan.slotRate_byte_per_s =
            static_cast<double>(engineRate.GetBitRate()) / 8 * switchLinks / plan.window;
    }
    return plan;
}

void
NvLinkTransportPlane::StartMulticastAllReduce(const std::vector<uint32_t>& ranks,
                                              uint64_t bytes,
                                              Callback<void, uint32_t> rankDone)
{
    const uint32_t group = GroupOfRanks(ranks);
    const NvlsPlan plan = GetNvlsPlan(Op::AllReduce, ranks, bytes);
    NvlsOp op;
    op.group = group;
    op.ranks = ranks;
    op.bytes = bytes;
    const uint64_t chunkBytes = plan.pieceBytes;
    op.chunks = plan.loops;
    op.packetBytes = plan.packetBytes;
    op.idsPerChunk = static_cast<uint32_t>((chunkBytes + op.packetBytes - 1) / op.packetBytes);
    op.firstChunk = ReserveIds(group, static_cast<uint64_t>(op.chunks) * op.idsPerChunk, bytes);
    for (uint32_t r : ranks)
    {
        op.gpus.push_back(m_ranks[r].gpu);
    }
    op.issued.assign(ranks.size(), 0);
    op.completed.assign(ranks.size(), 0);
    op.rankDone = rankDone;
    const uint64_t id = m_nextOpId++;
    m_nvlsOps.emplace(id, std::move(op));
    NS_LOG_INFO("NVLS allreduce " << id << ": " << ranks.size() << " ranks, " << bytes
                                  << " B, group " << group);
    for (uint32_t m = 0; m < ranks.size(); ++m)
    {
        IssueChunks(id, m);
    }
}

void
NvLinkTransportPlane::IssueChunks(uint64_t opId, uint32_t member)
{
    NvlsOp& op = m_nvlsOps.at(opId);
    const uint64_t chunkBytes = std::max<uint64_t>(m_nvlsChunkBytes, m_granularity);
    while (op.issued[member] < op.chunks &&
           op.issued[member] - op.completed[member] < m_nvlsChunksInFlight)
    {
        const uint32_t c = op.issued[member]++;
        const uint64_t offset = static_cast<uint64_t>(c) * chunkBytes;
        const uint64_t size = std::min(chunkBytes, op.bytes - offset);
        op.gpus[member]->NvlsReduce(
            op.group,
            op.firstChunk + c * op.idsPerChunk,
            size,
            NvLinkGpu::NvlsDoneCallback(
                [this, opId, member](uint32_t, uint32_t) { ChunkDone(opId, member); }),
            op.packetBytes);
    }
}

void
NvLinkTransportPlane::ChunkDone(uint64_t opId, uint32_t member)
{
    auto it = m_nvlsOps.find(opId);
    NS_ASSERT(it != m_nvlsOps.end());
    NvlsOp& op = it->second;
    if (++op.completed[member] < op.chunks)
    {
        IssueChunks(opId, member);
        return;
    }
    const uint32_t rank = op.ranks[member];
    Callback<void, uint32_t> done = op.rankDone;
    NS_LOG_LOGIC("NVLS allreduce " << opId << ": rank " << rank << " has all " << op.chunks
                                   << " chunks");
    if (++op.membersDone == op.ranks.size())
    {
        m_groups[op.group].inFlight--;
        m_nvlsOps.erase(it);
    }
    done(rank); // last: may start another allreduce (and rehash m_nvlsOps)
}

// ---- reduce-scatter, all-gather, NCCL-pattern allreduce ------------------------

void
NvLinkTransportPlane::StartShareOp(Op op,
                                   const std::vector<uint32_t>& ranks,
                                   uint64_t bytes,
                                   Callback<void, uint32_t> rankDone)
{
    ShareOp s;
    s.op = op;
    s.group = GroupOfRanks(ranks);
    s.ranks = ranks;
    const auto p = static_cast<uint32_t>(ranks.size());
    for (uint32_t m = 0; m < p; ++m)
    {
        s.gpus.push_back(m_ranks[ranks[m]].gpu);
    }
    s.plan = GetNvlsPlan(op, ranks, bytes);
    const NvlsPlan& plan = s.plan;
    s.shareBytes = plan.shareBytes;
    s.pieceBytes = plan.pieceBytes;
    s.loops = plan.loops;
    s.window = plan.window;
    s.perPlane = plan.perPlane;
    s.packetBytes = s.perPlane ? NvLinkGpu::PACKETS_PER_PLANE : plan.packetBytes;
    s.idsPerPiece = s.perPlane
                        ? s.gpus[0]->GetNvlsPacketCount(s.pieceBytes, s.packetBytes)
                        : static_cast<uint32_t>((s.pieceBytes + s.packetBytes - 1) / s.packetBytes);
    const uint64_t phases = op == Op::AllReduce ? 2 : 1;
    s.firstId =
        ReserveIds(s.group, phases * s.loops * static_cast<uint64_t>(p) * s.idsPerPiece, bytes);
    s.issued.assign(p, 0);
    s.completed.assign(p, 0);
    s.released.assign(p, 0);
    s.issuedAt.assign(static_cast<std::size_t>(p) * s.loops, Time(0));
    s.left.assign(static_cast<std::size_t>(p) * s.loops, 0);
    s.rankDone = rankDone;
    const uint64_t id = m_nextOpId++;
    NS_LOG_INFO("NVLS " << (op == Op::AllReduce       ? "allreduce (reduce-scatter + all-gather)"
                            : op == Op::ReduceScatter ? "reduce-scatter"
                                                      : "all-gather")
                        << " " << id << ": " << p << " ranks, " << bytes << " B, " << s.loops
                        << " loops, group " << s.group);
    const Time scatter = s.plan.scatterDelay;
    m_shareOps.emplace(id, std::move(s));
    if (scatter.IsStrictlyPositive())
    {
        Simulator::Schedule(scatter, [this, id, p]() {
            for (uint32_t m = 0; m < p; ++m)
            {
                IssueLoops(id, m);
            }
        });
        return;
    }
    for (uint32_t m = 0; m < p; ++m)
    {
        IssueLoops(id, m);
    }
}

uint64_t
NvLinkTransportPlane::PieceBytes(const ShareOp& op, uint32_t loop, uint32_t owner)
{
    const uint64_t offset = static_cast<uint64_t>(loop) * op.pieceBytes;
    const uint64_t share = op.shareBytes[owner];
    return offset < share ? std::min(op.pieceBytes, share - offset) : 0;
}

uint32_t
NvLinkTransportPlane::PieceId(const ShareOp& op, uint32_t phase, uint32_t loop, uint32_t owner)
{
    const auto p = static_cast<uint64_t>(op.ranks.size());
    const uint64_t piece = (phase * op.loops + loop) * p + owner;
    return op.firstId + static_cast<uint32_t>(piece * op.idsPerPiece);
}

void
NvLinkTransportPlane::IssueLoops(uint64_t opId, uint32_t member)
{
    ShareOp& op = m_shareOps.at(opId);
    const auto p = static_cast<uint32_t>(op.ranks.size());
    const Ptr<NvLinkGpu>& gpu = op.gpus[member];
    while (op.issued[member] < op.loops && op.issued[member] - op.released[member] < op.window)
    {
        const uint32_t k = op.issued[member]++;
        op.issuedAt[static_cast<std::size_t>(member) * op.loops + k] = Simulator::Now();
        uint32_t& left = op.left[static_cast<std::size_t>(member) * op.loops + k];
        const uint32_t storePhase = op.op == Op::AllReduce ? 1 : 0;
        if (op.op != Op::ReduceScatter)
        {
            // Every owner's stored piece of this loop comes here (multimem.st).
            for (uint32_t r = 0; r < p; ++r)
            {
                if (const uint64_t b = PieceBytes(op, k, r); b != 0)
                {
                    ++left;
                    gpu->NvlsExpect(
                        op.group,
                        PieceId(op, storePhase, k, r),
                        b,
                        op.packetBytes,
                        NvLinkGpu::NvlsDoneCallback([this, opId, member, k](uint32_t, uint32_t) {
                            PieceArrived(opId, member, k);
                        }));
                }
            }
        }
        if (op.op == Op::AllGather)
        {
            if (const uint64_t b = PieceBytes(op, k, member); b != 0)
            {
                gpu->NvlsStore(op.group, PieceId(op, 0, k, member), b, op.packetBytes);
            }
        }
        else
        {
            // Each owner's piece, reduced for that owner only (multimem.ld_reduce).
            for (uint32_t r = 0; r < p; ++r)
            {
                const uint64_t b = PieceBytes(op, k, r);
                if (b == 0)
                {
                    continue;
                }
                NvLinkGpu::NvlsDoneCallback done;
                NvLinkGpu::NvlsPacketCallback packetDone;
                if (r == member)
                {
                    left += op.op == Op::ReduceScatter ? 1 : 0;
                    if (op.op == Op::AllReduce && op.perPlane)
                    {
                        packetDone = NvLinkGpu::NvlsPacketCallback(
                            [this, opId, member, k](uint32_t index, uint32_t bytes) {
                                PacketReduced(opId, member, k, index, bytes);
                            });
                    }
                    else
                    {
                        done = NvLinkGpu::NvlsDoneCallback(
                            [this, opId, member, k](uint32_t, uint32_t) {
                                PieceReduced(opId, member, k);
                            });
                    }
                }
                const auto owner = static_cast<uint16_t>(m_ranks[op.ranks[r]].gpuId);
                gpu->NvlsReduce(op.group,
                                PieceId(op, 0, k, r),
                                b,
                                done,
                                op.packetBytes,
                                owner,
                                packetDone);
            }
        }
        if (left == 0)
        {
            op.completed[member]++; // a reduce-scatter loop past this member's share
            op.released[member]++;
        }
    }
    if (op.completed[member] == op.loops)
    {
        // Only a reduce-scatter member whose share ended before the last loop gets here
        // without an arrival; its rankDone must not run inside StartInSwitch.
        Simulator::ScheduleNow(&NvLinkTransportPlane::PieceArrived,
                               this,
                               opId,
                               member,
                               std::numeric_limits<uint32_t>::max());
    }
}

void
NvLinkTransportPlane::PieceReduced(uint64_t opId, uint32_t member, uint32_t loop)
{
    ShareOp& op = m_shareOps.at(opId);
    if (op.op == Op::ReduceScatter)
    {
        PieceArrived(opId, member, loop);
        return;
    }
    // Allreduce: the owner writes its reduced piece to every member (multimem.st).
    op.gpus[member]->NvlsStore(op.group,
                               PieceId(op, 1, loop, member),
                               PieceBytes(op, loop, member),
                               op.packetBytes);
}

void
NvLinkTransportPlane::PacketReduced(uint64_t opId,
                                    uint32_t member,
                                    uint32_t loop,
                                    uint32_t index,
                                    uint32_t bytes)
{
    ShareOp& op = m_shareOps.at(opId);
    // The reduce warps store what they loaded: the same addresses' plane, at once.
    op.gpus[member]->NvlsStorePacket(op.group, PieceId(op, 1, loop, member) + index, bytes, index);
}

void
NvLinkTransportPlane::PieceArrived(uint64_t opId, uint32_t member, uint32_t loop)
{
    auto it = m_shareOps.find(opId);
    NS_ASSERT(it != m_shareOps.end());
    ShareOp& op = it->second;
    if (loop != std::numeric_limits<uint32_t>::max())
    {
        if (--op.left[static_cast<std::size_t>(member) * op.loops + loop] != 0)
        {
            return;
        }
        if (++op.completed[member] < op.loops)
        {
            const Time release =
                op.plan.SlotFreeAt(op.issuedAt[static_cast<std::size_t>(member) * op.loops + loop],
                                   op.plan.LoopBytesIn(op.op, loop, member));
            if (release == Simulator::Now())
            {
                op.released[member]++;
                IssueLoops(opId, member);
            }
            else
            {
                // The member's last loops may end (and the operation with them) first.
                Simulator::Schedule(release - Simulator::Now(), [this, opId, member]() {
                    auto again = m_shareOps.find(opId);
                    if (again != m_shareOps.end() &&
                        again->second.completed[member] < again->second.loops)
                    {
                        again->second.released[member]++;
                        IssueLoops(opId, member);
                    }
                });
            }
            return;
        }
    }
    const uint32_t rank = op.ranks[member];
    Callback<void, uint32_t> done = op.rankDone;
    const Time gather = op.plan.gatherDelay;
    NS_LOG_LOGIC("NVLS operation " << opId << ": rank " << rank << " done");
    if (++op.membersDone == op.ranks.size())
    {
        m_groups[op.group].inFlight--;
        m_shareOps.erase(it);
    }
    if (gather.IsStrictlyPositive())
    {
        Simulator::Schedule(gather, [done, rank]() { done(rank); });
        return;
    }
    done(rank); // last: may start another operation (and rehash m_shareOps)
}

uint32_t
NvLinkTransportPlane::GetNvlsInFlight() const
{
    return static_cast<uint32_t>(m_nvlsOps.size() + m_shareOps.size());
}

void
NvLinkTransportPlane::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& r : m_ranks)
    {
        if (r.gpu)
        {
            r.gpu->SetPacketReceivedCallback(NvLinkGpu::PacketReceivedCallback());
            r.gpu->SetPacketTxReadyCallback(NvLinkGpu::PacketTxReadyCallback());
        }
    }
    m_ranks.clear();
    m_domains.clear();
    m_described.clear();
    m_nvlsOps.clear();
    m_shareOps.clear();
    m_groups.clear();
    TransportPlane::DoDispose();
}

double
NvLinkTransportPlane::GetLineRate_gbyte_per_s(uint32_t rank) const
{
    const RankEntry* e = Entry(rank);
    if (!e)
    {
        return 0;
    }
    if (const NvLinkFlowDomain* d = m_domains[e->domain].described)
    {
        double bps = 0;
        for (uint32_t links : d->GetBundleLinks(e->gpuId))
        {
            bps += d->GetSignalling_bps(links) * d->encodingEfficiency;
        }
        return bps * PayloadShare() / 8e9;
    }
    double bps = 0;
    for (uint32_t i = 0; i < e->gpu->GetNDevices(); ++i)
    {
        bps += DeviceLine_bps(e->gpu->GetDevice(i));
    }
    return bps * PayloadShare() / 8e9;
}

} // namespace ns3
