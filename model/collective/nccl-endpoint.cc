/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/nccl-endpoint.h"

#include "ns3/boolean.h"
#include "ns3/collective-schedule.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NcclEndpoint");
NS_OBJECT_ENSURE_REGISTERED(NcclEndpoint);

namespace
{
using Algo = CollectiveAlgorithm;
constexpr uint32_t kKinds = 7;
// NCCL's MAXCHANNELS; its ring graph searches at most half of them (src/init.cc).
constexpr uint32_t kNcclMaxChannels = 64;

// src/graph/search.cc: the per-channel speeds (GB/s) its search tries inside one node,
// fastest first, per compute capability (speedArrayIntra, sm90SpeedArrayIntra,
// sm100SpeedArrayIntra), and NCCL_MAX_NVLS_ARITY (src/include/device.h).
const std::vector<double>&
IntraSpeeds(const std::string& generation)
{
    static const std::vector<double> sm80{40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
    static const std::vector<double> sm90{60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
    static const std::vector<double> sm100{90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
    return generation == "a100" ? sm80 : generation == "b200" ? sm100 : sm90;
}

// src/graph/search.cc's ring search over one of its speed tables: from the fastest speed
// within maxSpeed down while a speed is above 0.49 of the best found, the most rings x speed,
// the faster on a tie; ringsAt(speed) is how many rings fit at that speed.  {rings, speed}.
template <typename RingsAt>
std::pair<uint32_t, double>
SearchRings(const std::vector<double>& speeds, double maxSpeed, RingsAt ringsAt)
{
    uint32_t rings = 0;
    double speed = 0;
    for (double s : speeds)
    {
        if (s > maxSpeed + 1e-9)
        {
            continue;
        }
        if (rings > 0 && s / speed <= 0.49)
        {
            break;
        }
        const uint32_t r = ringsAt(s);
        if (r * s > rings * speed + 1e-9)
        {
            rings = r;
            speed = s;
        }
    }
    return {rings, speed};
}

// NCCL_ALGO's element names (src/include/device.h ncclAlgoStr) and what the engine runs
// for each: NVLSTree is nvlstree (NVLS reduce-scatter inside each NVLink domain, the
// network across, NVLS all-gather); the engine's hierarchical allreduce (ring phases
// inside), which runs only when asked for by name, passes NCCL_ALGO's filter as NVLSTree.
const std::vector<std::string>&
AlgoNames()
{
    static const std::vector<std::string> names =
        {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
    return names;
}

int
NcclAlgoIndex(Algo a)
{
    switch (a)
    {
    case Algo::Tree:
        return 0;
    case Algo::Ring:
        return 1;
    case Algo::CollNetDirect:
        return 2;
    case Algo::CollNetChain:
        return 3;
    case Algo::Nvls:
        return 4;
    case Algo::NvlsTree:
    case Algo::Hierarchical:
        return 5;
    case Algo::Pat:
        return 6;
    default:
        return -1; // not an NCCL collective algorithm (p2p, halving-doubling)
    }
}

const std::vector<std::string>&
ProtoNames()
{
    static const std::vector<std::string> names = {"LL", "LL128", "Simple"};
    return names;
}

std::string
Lower(const std::string& s)
{
    std::string out;
    for (char c : s)
    {
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string
Trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string>
Split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
    {
        out.push_back(cur);
    }
    return out;
}

// busbw / algbw of nccl-tests (doc/PERFORMANCE.md).
double
BusFactor(CollectiveKind kind, uint32_t n)
{
    switch (kind)
    {
    case CollectiveKind::AllReduce:
        return 2.0 * (n - 1) / n;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
        return double(n - 1) / n;
    default:
        return 1.0;
    }
}

uint32_t
Steps(CollectiveKind kind, uint32_t n)
{
    switch (kind)
    {
    case CollectiveKind::AllReduce:
        return 2 * (n - 1);
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
        return n - 1;
    default:
        return n;
    }
}

// NCCL's log2i: floor.
uint32_t
FloorLog2(uint64_t n)
{
    uint32_t l = 0;
    while (n >>= 1)
    {
        ++l;
    }
    return l;
}

uint32_t
CeilLog2(uint32_t n)
{
    uint32_t l = 0;
    while ((1u << l) < n)
    {
        ++l;
    }
    return l;
}
} // namespace

TypeId
NcclEndpoint::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NcclEndpoint")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<NcclEndpoint>()
            .AddAttribute("Ll",
                          "The LL protocol's costs",
                          PointerValue(),
                          MakePointerAccessor(&NcclEndpoint::m_ll),
                          MakePointerChecker<NcclProtocol>())
            .AddAttribute("Ll128",
                          "The LL128 protocol's costs",
                          PointerValue(),
                          MakePointerAccessor(&NcclEndpoint::m_ll128),
                          MakePointerChecker<NcclProtocol>())
            .AddAttribute("Simple",
                          "The Simple protocol's costs",
                          PointerValue(),
                          MakePointerAccessor(&NcclEndpoint::m_simple),
                          MakePointerChecker<NcclProtocol>())
            .AddAttribute("MinChannels",
                          "Ring/tree channels the communicator is raised to at least, copying "
                          "its rings (NCCL_MIN_NCHANNELS, or NCCL_MIN_CTAS where larger: "
                          "src/graph/connect.cc copyChannels).  Small buffers still run on "
                          "fewer (src/enqueue.cc reduces to one channel whatever the minimum)",
                          UintegerValue(1),
                          MakeUintegerAccessor(&NcclEndpoint::m_minChannels),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("MaxChannels",
                          "Ring/tree channels of a communicator inside one node or NVLink "
                          "domain, as NCCL sets them (it prints them as 'coll channels' at "
                          "init): the topology search's rings (src/graph/search.cc: the "
                          "fastest of its speeds whose rings fit the GPU's NVLink bandwidth, "
                          "doubled at half the speed from 25 GB/s, on Hopper and later from 50 "
                          "or where they are at most 4), doubled again (src/graph/connect.cc).  "
                          "24 on H100: 6 rings at 60 GB/s -> 12 -> 24.  NCCL_MAX_NCHANNELS and "
                          "NCCL_MAX_CTAS only lower it",
                          UintegerValue(24),
                          MakeUintegerAccessor(&NcclEndpoint::m_maxChannels),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("MaxChannelsAcrossNodes",
                          "Most ring/tree channels of a communicator that spans several nodes "
                          "or NVLink domains (MAXCHANNELS); NCCL_MAX_NCHANNELS and "
                          "NCCL_MAX_CTAS lower it.  The search gives fewer: its rings over the "
                          "NICs (GetMaxChannels), 16 on 8 GPUs a node with one NIC each (NCCL "
                          "prints '16 coll channels' on 2 x 8 H100), 4 on one",
                          UintegerValue(64),
                          MakeUintegerAccessor(&NcclEndpoint::m_maxChannelsAcrossNodes),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("NetRingBandwidth",
                          "GB/s of one ring across nodes in NCCL's search: the fastest speed of "
                          "its inter-node table within the GPU-NIC path (src/graph/search.cc "
                          "sm90SpeedArrayInter, sm100SpeedArrayInter: 48 on PCIe Gen5; "
                          "speedArrayInter: 24 on A100's Gen4).  Rings of 25 GB/s or more are "
                          "doubled at half the speed when there are at most 4 "
                          "(ncclTopoDupChannels), and above 45 GB/s connect.cc doubles fewer "
                          "than 16 channels once more",
                          DoubleValue(48.0),
                          MakeDoubleAccessor(&NcclEndpoint::m_netRing_gbyte_per_s),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("NicPathBandwidth",
                          "GB/s of a GPU's path to its NIC as NCCL's search sees it (the HCA "
                          "behind PCIe, 48 on Gen5 x16): as many rings of NetRingBandwidth "
                          "cross one NIC as fit in it",
                          DoubleValue(48.0),
                          MakeDoubleAccessor(&NcclEndpoint::m_nicPath_gbyte_per_s),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("NvlsChannels",
                          "Channels of an NVLS collective of a communicator inside one node or "
                          "NVLink domain (src/transport/nvls.cc: 16 on Hopper, 24 on Blackwell "
                          "from NCCL 2.27; NCCL_MIN_CTAS / NCCL_MAX_CTAS bound it)",
                          UintegerValue(16),
                          MakeUintegerAccessor(&NcclEndpoint::m_nvlsChannels),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("NvlsChannelsAcrossNodes",
                          "Channels of an NVLS or NVLSTree collective of a communicator that "
                          "spans several nodes or NVLink domains (src/transport/nvls.cc: 16 on "
                          "Hopper, 32 on Blackwell)",
                          UintegerValue(16),
                          MakeUintegerAccessor(&NcclEndpoint::m_nvlsChannelsAcrossNodes),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("MaxSimulatedChannels",
                          "Simulation cost, not NCCL: a schedule runs at most this many channels "
                          "(but at least the ranks of a domain), each standing for several of "
                          "NCCL's with their summed rate",
                          UintegerValue(8),
                          MakeUintegerAccessor(&NcclEndpoint::m_maxSimulatedChannels),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("NvlsLatency",
                          "Latency of an NVLS collective (NCCL hwLatencies NVLINK NVLS Simple)",
                          TimeValue(MicroSeconds(25)),
                          MakeTimeAccessor(&NcclEndpoint::m_nvlsLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("HostLaunchTime",
                          "Host time to issue one GPU's collective: NCCL's enqueue and the "
                          "kernel launch.  Hidden behind the GPU when one thread drives one "
                          "GPU; the bound of a loop where one thread drives several "
                          "(nccl-tests -g).  5.3 us: the published one-thread 4-GPU H100 "
                          "floors (doc/endpoint.md)",
                          TimeValue(NanoSeconds(5300)),
                          MakeTimeAccessor(&NcclEndpoint::m_hostLaunchTime),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("HostChannelLaunchTime",
                          "Host time each further channel adds to issuing one GPU's "
                          "collective: NCCL plans and uploads one work batch per channel "
                          "(src/enqueue.cc scheduleCollTasksToPlan, uploadWork).  54 ns: the "
                          "published one-thread 4-GPU H100 loops rise by 4.6 (reducescatter), "
                          "5.0 (allreduce) and 5.7 us (allgather) from their 1-channel floors "
                          "to 24 channels, over 4 GPUs x 23 channels (doc/endpoint.md)",
                          TimeValue(NanoSeconds(54)),
                          MakeTimeAccessor(&NcclEndpoint::m_hostChannelLaunchTime),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("NetProxyStepTime",
                          "CPU time of the network proxy per step of one channel: the host "
                          "thread that drives every network channel of a GPU (src/proxy.cc) "
                          "sees the GPU's step, posts its RDMA write and polls its completion "
                          "(src/transport/net.cc, net_ib), one step after the other.  1 us: "
                          "NCCL's network post overhead on x86 (tuning.cc getNetOverhead, "
                          "NCCL_NET_OVERHEAD), by which its tuner bounds every step of an "
                          "inter-node ring.  0 = off",
                          TimeValue(MicroSeconds(1)),
                          MakeTimeAccessor(&NcclEndpoint::m_netProxyStepTime),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("TunerProxyPerChannel",
                          "How the tuner charges the network proxy of a ring across nodes: "
                          "false, as NCCL's tuner does, one net overhead per NVLink step and "
                          "the network steps at their hop latency (tuning.cc: intraLat = "
                          "max(intraLat, netOverhead)); true, every step at least the steps "
                          "of all channels one GPU's proxy passes (what the simulation "
                          "charges).  The simulation charges the proxies either way",
                          BooleanValue(false),
                          MakeBooleanAccessor(&NcclEndpoint::m_tunerProxyPerChannel),
                          MakeBooleanChecker())
            .AddAttribute("SimpleRingProxyFactor",
                          "Proxy steps of a Simple ring cost this many times NetProxyStepTime: "
                          "besides the send, the receiver flushes the GPU's PCIe writes with an "
                          "RDMA read before it frees the step (net_ib iflush).  3: tuning.cc, "
                          "netOverhead *= 3 for Simple rings",
                          DoubleValue(3.0),
                          MakeDoubleAccessor(&NcclEndpoint::m_simpleRingProxyFactor),
                          MakeDoubleChecker<double>(1))
            .AddAttribute("NvlsEfficiency",
                          "Share of the NVLink rate the tuner expects of NVLS (NCCL "
                          "nvlsEfficiency: 0.85 Hopper, 0.74 Blackwell)",
                          DoubleValue(0.85),
                          MakeDoubleAccessor(&NcclEndpoint::m_nvlsEfficiency),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("NvlsTreeNetLatency",
                          "Latency of one network step of NVLSTree (NCCL hwLatencies NET "
                          "NVLSTree Simple); the tuner counts 2 log2(nodes) of them",
                          TimeValue(NanoSeconds(20900)),
                          MakeTimeAccessor(&NcclEndpoint::m_nvlsTreeNetLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("NvlsNetLatency",
                          "Latency NVLS adds across nodes, where the heads' shares are reduced "
                          "in the network (NVLS with CollNet: NCCL hwLatencies NET NVLS Simple)",
                          TimeValue(NanoSeconds(18000)),
                          MakeTimeAccessor(&NcclEndpoint::m_nvlsNetLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("TunerNvlsTreeNetLatency",
                          "The NVLSTree network step latency NCCL's tuner assumes, where the "
                          "NCCL version modelled differs from the step's cost "
                          "(NvlsTreeNetLatency): hwLatencies NET NVLSTree Simple is 19 us in "
                          "NCCL 2.18, 14 us in 2.19-2.28, 20.9 us from 2.29; negative = "
                          "NvlsTreeNetLatency",
                          TimeValue(NanoSeconds(-1)),
                          MakeTimeAccessor(&NcclEndpoint::m_tunerNvlsTreeNetLatency),
                          MakeTimeChecker())
            .AddAttribute("NvlsTreeChannelBandwidth",
                          "GB/s the tuner allows one NVLSTree channel on two nodes (NCCL "
                          "perChMaxNVLSTreeBws N2: Hopper 57.7, Blackwell 96); 0 = no cap",
                          DoubleValue(57.7),
                          MakeDoubleAccessor(&NcclEndpoint::m_nvlsTreeChannel_gbyte_per_s),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("NvlsTreeChannelBandwidthN4",
                          "... on more than two nodes (perChMaxNVLSTreeBws N4: Hopper 45.5, "
                          "Blackwell 43.8); 0 = no cap",
                          DoubleValue(45.5),
                          MakeDoubleAccessor(&NcclEndpoint::m_nvlsTreeChannelN4_gbyte_per_s),
                          MakeDoubleChecker<double>(0))
            // NCCL src/graph/tuning.cc, hwLatencies NET / NVLINK, CollNetDirect and
            // CollNetChain (Simple only), and the latency formula's 0.4 us per extra GPU.
            .AddAttribute("CollNetDirectNetLatency",
                          "Network latency of CollNetDirect (NCCL hwLatencies NET "
                          "CollNetDirect Simple), once per collective",
                          TimeValue(MicroSeconds(31)),
                          MakeTimeAccessor(&NcclEndpoint::m_collNetDirectNetLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CollNetChainNetLatency",
                          "Network latency of CollNetChain (hwLatencies NET CollNetChain "
                          "Simple), once per collective",
                          TimeValue(MicroSeconds(30)),
                          MakeTimeAccessor(&NcclEndpoint::m_collNetChainNetLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CollNetDirectNvlinkLatency",
                          "One NVLink step of CollNetDirect (hwLatencies NVLINK CollNetDirect "
                          "Simple)",
                          TimeValue(NanoSeconds(3700)),
                          MakeTimeAccessor(&NcclEndpoint::m_collNetDirectNvlinkLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CollNetChainNvlinkLatency",
                          "One NVLink step of CollNetChain (hwLatencies NVLINK CollNetChain "
                          "Simple)",
                          TimeValue(NanoSeconds(2800)),
                          MakeTimeAccessor(&NcclEndpoint::m_collNetChainNvlinkLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CollNetArityLatency",
                          "CollNetDirect's serialisation per further GPU of a node (the "
                          "tuner's 0.4 us arity latency)",
                          TimeValue(NanoSeconds(400)),
                          MakeTimeAccessor(&NcclEndpoint::m_collNetArityLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("CollNetEfficiency",
                          "Share of CollNetDirect's bandwidth the tuner expects (NCCL: 0.85 "
                          "from compute capability 9.0, else 1)",
                          DoubleValue(0.85),
                          MakeDoubleAccessor(&NcclEndpoint::m_collNetEfficiency),
                          MakeDoubleChecker<double>(0, 1))
            // NCCL src/graph/tuning.cc, ncclTopoGetAlgoTime (unchanged from 2.7 to 2.29).
            .AddAttribute("TreeCorrection",
                          "Scale the tree allreduce's predicted bandwidth by NCCL's static "
                          "correction per protocol and power-of-two size from 64 B to 256 MiB "
                          "(treeCorrectionFactor: 0.4-1.0), as NCCL's tuner does",
                          BooleanValue(true),
                          MakeBooleanAccessor(&NcclEndpoint::m_treeCorrection),
                          MakeBooleanChecker())
            .AddAttribute("RingPlateauLatencyFactor",
                          "Factor on a Simple ring allreduce's predicted latency across nodes "
                          "once a channel's share of a rank is 64 B or more (NCCL's 'plateau "
                          "effect of ring': 1.4 from compute capability 8.0, 1.9 before)",
                          DoubleValue(1.4),
                          MakeDoubleAccessor(&NcclEndpoint::m_ringPlateauLatencyFactor),
                          MakeDoubleChecker<double>(1))
            // NCCL 2.23+ PAT: baseLatencies PAT 8 us, the per-rank 2.8 us, the bandwidth
            // factor 0.75 (tuning.cc).
            .AddAttribute("PatBaseLatency",
                          "Base latency of PAT (NCCL baseLatencies PAT)",
                          TimeValue(MicroSeconds(8)),
                          MakeTimeAccessor(&NcclEndpoint::m_patBaseLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("PatRankLatency",
                          "PAT's latency per rank (the tuner's linear part, 2.8 us x ranks)",
                          TimeValue(NanoSeconds(2800)),
                          MakeTimeAccessor(&NcclEndpoint::m_patRankLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("PatEfficiency",
                          "Share of the ring's bandwidth the tuner expects of PAT (0.75)",
                          DoubleValue(0.75),
                          MakeDoubleAccessor(&NcclEndpoint::m_patEfficiency),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("RingFinalCopy",
                          "A ring channel ends each loop with a receive that only copies "
                          "(all_gather.h, all_reduce.h directRecv; reduce_scatter.h "
                          "recvReduceCopy): its SM copies the loop's last chunk from the "
                          "FIFO at the protocol's per-channel rate (TreeChannelBandwidth, "
                          "NCCL's perChMaxTreeBws / perChMaxTreeLL128Bws: one SM's copy "
                          "when no link binds it) and sends nothing meanwhile.  false: the "
                          "channel sends without that pause",
                          BooleanValue(true),
                          MakeBooleanAccessor(&NcclEndpoint::m_ringFinalCopy),
                          MakeBooleanChecker())
            // Simple's step structure inside one NVLink domain (doc/endpoint.md).
            .AddAttribute("RingChunkSteps",
                          "Simple ring chunk of one channel per ring step, in protocol steps "
                          "(NCCL src/include/collectives.h ALLGATHER_CHUNKSTEPS, "
                          "ALLREDUCE_CHUNKSTEPS, REDUCESCATTER_CHUNKSTEPS: NCCL_STEPS / 2)",
                          UintegerValue(4),
                          MakeUintegerAccessor(&NcclEndpoint::m_ringChunkSteps),
                          MakeUintegerChecker<uint32_t>(1, 8))
            .AddAttribute("RingSliceSteps",
                          "Simple ring slice, the unit one flag wait and fence covers, in "
                          "protocol steps (collectives.h *_SLICESTEPS: NCCL_STEPS / 4); a "
                          "chunk is cut in chunk / slice slices of at least slice / 32 "
                          "(src/device/prims_simple.h genericOp)",
                          UintegerValue(2),
                          MakeUintegerAccessor(&NcclEndpoint::m_ringSliceSteps),
                          MakeUintegerChecker<uint32_t>(1, 8))
            .AddAttribute("BroadcastChunkSteps",
                          "Simple chunk of one channel of a broadcast or reduce, the ring's "
                          "chain from or to the root, in protocol steps (collectives.h "
                          "BROADCAST_CHUNKSTEPS, REDUCE_CHUNKSTEPS: 1); each hop forwards a "
                          "chunk once all of it has arrived",
                          UintegerValue(1),
                          MakeUintegerAccessor(&NcclEndpoint::m_broadcastChunkSteps),
                          MakeUintegerChecker<uint32_t>(1, 8))
            .AddAttribute("BroadcastSliceSteps",
                          "Simple slice of a broadcast or reduce, in protocol steps "
                          "(BROADCAST_SLICESTEPS, REDUCE_SLICESTEPS: 1)",
                          UintegerValue(1),
                          MakeUintegerAccessor(&NcclEndpoint::m_broadcastSliceSteps),
                          MakeUintegerChecker<uint32_t>(1, 8))
            .AddAttribute("P2pChunkBytes",
                          "Bytes of one point-to-point step over NVLink (NCCL "
                          "NCCL_P2P_NVL_CHUNKSIZE, src/init.cc: 512 KiB)",
                          UintegerValue(512 * 1024),
                          MakeUintegerAccessor(&NcclEndpoint::m_p2pChunkBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute(
                "Pxn",
                "Which point-to-point sends of an alltoall or sendrecv to a GPU of another "
                "server on another rail leave from "
                "the NIC of the sender's server-mate on the peer's rail, copied there over "
                "NVLink (NCCL's PXN, src/graph/search.cc ncclTopoGetNetDev): Never; "
                "Unreachable, only where the sender's own NIC does not reach the peer (one "
                "subnet per rail); CrossRail (the default), every such peer, which is what "
                "NCCL's NCCL_P2P_PXN_LEVEL 1 and 2 (its default) do on servers whose GPUs "
                "reach another GPU's NIC only through the CPU (src/graph/paths.cc: a PXN path)",
                EnumValue(PXN_CROSS_RAIL),
                MakeEnumAccessor(&NcclEndpoint::m_pxn),
                MakeEnumChecker(PXN_NEVER,
                                "Never",
                                PXN_UNREACHABLE,
                                "Unreachable",
                                PXN_CROSS_RAIL,
                                "CrossRail"))
            .AddAttribute("PxnChunkBytes",
                          "Bytes a PXN relay forwards per network step (NCCL "
                          "NCCL_P2P_NET_CHUNKSIZE, src/init.cc: 128 KiB)",
                          UintegerValue(128 * 1024),
                          MakeUintegerAccessor(&NcclEndpoint::m_pxnChunkBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("PxnMaxChunks",
                          "Most chunks one relayed piece is cut into; larger pieces get larger "
                          "chunks (a simulation cost: at 16 the two legs' pipeline fill is "
                          "1/16 of the piece's NVLink time, already hidden)",
                          UintegerValue(16),
                          MakeUintegerAccessor(&NcclEndpoint::m_pxnMaxChunks),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("P2pChannelsPerPeer",
                          "Most channels one point-to-point peer gets (NCCL "
                          "p2pnChannelsPerPeer, src/graph/paths.cc: 2 x the NVLinks of the "
                          "path, a power of two, at most the p2p channels: 32 on NVSwitch "
                          "systems of 24 or 32 channels)",
                          UintegerValue(32),
                          MakeUintegerAccessor(&NcclEndpoint::m_p2pChannelsPerPeer),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("Algorithms",
                          "NCCL_ALGO: algorithms the tuner may pick, NCCL's list syntax "
                          "(\"ring,tree\", \"^nvls\", \"allreduce:tree;broadcast:ring\"); "
                          "\"\" = all",
                          StringValue(""),
                          MakeStringAccessor(&NcclEndpoint::m_algorithms),
                          MakeStringChecker())
            .AddAttribute("Protocols",
                          "NCCL_PROTO: protocols the tuner may pick (LL, LL128, Simple); "
                          "\"\" = all",
                          StringValue(""),
                          MakeStringAccessor(&NcclEndpoint::m_protocolList),
                          MakeStringChecker())
            .AddAttribute("NvlsEnable",
                          "NCCL_NVLS_ENABLE: 0 off, 1 on, 2 where the switches support it",
                          UintegerValue(2),
                          MakeUintegerAccessor(&NcclEndpoint::m_nvlsEnable),
                          MakeUintegerChecker<uint32_t>(0, 2))
            .AddAttribute("CollNetEnable",
                          "NCCL_COLLNET_ENABLE: allow in-network reduction in the scale-out "
                          "switches (SHARP)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&NcclEndpoint::m_collNetEnable),
                          MakeBooleanChecker())
            .AddAttribute("Generation",
                          "GPU generation these parameters describe (reports only)",
                          StringValue("h100"),
                          MakeStringAccessor(&NcclEndpoint::m_generation),
                          MakeStringChecker());
    return tid;
}

NcclEndpoint::NcclEndpoint()
    : m_minChannels(1),
      m_maxChannels(24),
      m_maxChannelsAcrossNodes(64),
      m_netRing_gbyte_per_s(48.0),
      m_nicPath_gbyte_per_s(48.0),
      m_nvlsChannels(16),
      m_nvlsChannelsAcrossNodes(16),
      m_maxSimulatedChannels(8),
      m_tunerProxyPerChannel(false),
      m_simpleRingProxyFactor(3.0),
      m_nvlsTreeChannel_gbyte_per_s(57.7),
      m_nvlsTreeChannelN4_gbyte_per_s(45.5),
      m_nvlsEfficiency(0.85),
      m_collNetEfficiency(0.85),
      m_patEfficiency(0.75),
      m_treeCorrection(true),
      m_ringPlateauLatencyFactor(1.4),
      m_ringFinalCopy(true),
      m_ringChunkSteps(4),
      m_ringSliceSteps(2),
      m_broadcastChunkSteps(1),
      m_broadcastSliceSteps(1),
      m_p2pChunkBytes(512 * 1024),
      m_p2pChannelsPerPeer(32),
      m_pxn(PXN_UNREACHABLE),
      m_pxnChunkBytes(128 * 1024),
      m_pxnMaxChunks(16),
      m_nvlsEnable(2),
      m_collNetEnable(false),
      m_generation("h100")
{
}

const std::vector<std::pair<CollectiveAlgorithm, std::string>>&
NcclEndpoint::NcclAlgorithms()
{
    static const std::vector<std::pair<CollectiveAlgorithm, std::string>> algorithms = [] {
        const Algo order[] = {Algo::Tree,
                              Algo::Ring,
                              Algo::CollNetDirect,
                              Algo::CollNetChain,
                              Algo::Nvls,
                              Algo::NvlsTree,
                              Algo::Pat};
        std::vector<std::pair<CollectiveAlgorithm, std::string>> v;
        for (Algo a : order)
        {
            v.emplace_back(a, AlgoNames()[NcclAlgoIndex(a)]);
        }
        return v;
    }();
    return algorithms;
}

const std::vector<std::pair<CollectiveKind, std::string>>&
NcclEndpoint::NcclFunctions()
{
    static const std::vector<std::pair<CollectiveKind, std::string>> functions = {
        {CollectiveKind::Broadcast, "Broadcast"},
        {CollectiveKind::Reduce, "Reduce"},
        {CollectiveKind::AllGather, "AllGather"},
        {CollectiveKind::ReduceScatter, "ReduceScatter"},
        {CollectiveKind::AllReduce, "AllReduce"}};
    return functions;
}

const std::vector<std::pair<NcclProtocolId, std::string>>&
NcclEndpoint::NcclProtocols()
{
    static const std::vector<std::pair<NcclProtocolId, std::string>> protocols = {
        {NcclProtocolId::Ll, ProtoNames()[0]},
        {NcclProtocolId::Ll128, ProtoNames()[1]},
        {NcclProtocolId::Simple, ProtoNames()[2]}};
    return protocols;
}

Ptr<NcclProtocol>
NcclEndpoint::GetProtocol(NcclProtocolId id) const
{
    // Unset: the protocol's own NCCL defaults.
    auto* self = const_cast<NcclEndpoint*>(this);
    switch (id)
    {
    case NcclProtocolId::Ll:
        if (!m_ll)
        {
            self->m_ll = CreateObject<NcclLlProtocol>();
        }
        return m_ll;
    case NcclProtocolId::Ll128:
        if (!m_ll128)
        {
            self->m_ll128 = CreateObject<NcclLl128Protocol>();
        }
        return m_ll128;
    case NcclProtocolId::Simple:
        break;
    }
    if (!m_simple)
    {
        self->m_simple = CreateObject<NcclSimpleProtocol>();
    }
    return m_simple;
}

std::pair<uint32_t, double>
NcclEndpoint::NetRingSearch(uint32_t ppn, double nvlink_gbyte_per_s) const
{
    // Across nodes: from the inter-node table within the GPU-NIC path (NetRingBandwidth), as
    // many rings as fit in the NIC of each of the communicator's GPUs in a node and, with more
    // than one, in each GPU's NVLink (every ring passes every GPU), at most MAXCHANNELS / 2.
    // 8 x H100 a node: 7 rings at 48 GB/s (370.8), 8 at 45.
    static const std::vector<double> kSpeeds =
        {96, 48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3};
    const uint32_t gpus = std::max<uint32_t>(ppn, 1);
    const auto [rings, speed] =
        SearchRings(kSpeeds, std::min(m_netRing_gbyte_per_s, m_nicPath_gbyte_per_s), [&](double s) {
            uint32_t r = std::min<uint32_t>(gpus * uint32_t(m_nicPath_gbyte_per_s / s + 1e-9),
                                            kNcclMaxChannels / 2);
            if (gpus > 1 && nvlink_gbyte_per_s > 0)
            {
                r = std::min<uint32_t>(r, uint32_t(nvlink_gbyte_per_s / s + 1e-9));
            }
            return r;
        });
    return {std::max<uint32_t>(rings, 1), speed};
}

uint32_t
NcclEndpoint::GetMaxChannels(uint32_t nodes, uint32_t ppn, double nvlink_gbyte_per_s) const
{
    uint32_t found = m_maxChannels;
    if (nodes > 1)
    {
        // ncclTopoDupChannels then doubles rings of 25 GB/s or more at half the speed, on
        // Hopper and later only up to 4 of them below 50 GB/s; connect.cc doubles the
        // channels, and on Hopper and later once more while fewer than 16 run above 45 GB/s
        // ("4 compute channels per search channel ... on <8 PPN").  H100, one GPU a node: 1
        // -> 2 -> 4; eight: 8 -> 16.
        auto [rings, speed] = NetRingSearch(ppn, nvlink_gbyte_per_s);
        if (speed >= 25 && !(speed < 50 && rings > 4))
        {
            rings *= 2;
            speed /= 2;
        }
        uint32_t channels = std::min<uint32_t>(2 * rings, kNcclMaxChannels);
        if (speed > 45 && channels < 16)
        {
            channels *= 2;
        }
        found = std::min(m_maxChannelsAcrossNodes, channels);
    }
    // src/graph/connect.cc: the rings are copied up to the minimum after the maximum caps
    // them, so a minimum above the maximum wins.
    return std::max(found, m_minChannels);
}

double
NcclEndpoint::IntraRingGraph_gbyte_per_s(double nvlink_gbyte_per_s) const
{
    if (nvlink_gbyte_per_s <= 0)
    {
        return 0;
    }
    // Every ring enters and leaves each GPU once, so a GPU holds nvlink / speed rings.
    const auto [rings,
                speed] = SearchRings(IntraSpeeds(m_generation), nvlink_gbyte_per_s, [&](double s) {
        return std::min<uint32_t>(uint32_t(nvlink_gbyte_per_s / s + 1e-9), kNcclMaxChannels / 2);
    });
    return rings * speed;
}

NcclEndpoint::NvlsGraph
NcclEndpoint::IntraNvlsGraph(uint32_t gpus, double nvlink_gbyte_per_s) const
{
    NvlsGraph g;
    if (gpus < 2 || nvlink_gbyte_per_s <= 0)
    {
        return g;
    }
    // search.cc: inside one node the NVLS graph has as many channels as heads, one per GPU
    // (minChannels = maxChannels), so no faster speed with fewer channels is tried.  The
    // search starts at the fastest speed x heads within the GPU's NVLink x gpus / (gpus - 1)
    // ("algo other than RING ... increase the NVLink bw artificially") and tries each
    // slower one until every GPU's links carry the heads' pulls, their own head's twice
    // (ncclTopoSearchTryNvls).  Its second pass raises the network speed while it is below
    // twice the NVLink one.
    const std::vector<double>& speeds = IntraSpeeds(m_generation);
    g.heads = std::min(gpus, MAX_NVLS_ARITY);
    const double total = nvlink_gbyte_per_s * gpus / (gpus - 1.0);
    size_t i = 0;
    while (i + 1 < speeds.size() &&
           (speeds[i] > nvlink_gbyte_per_s + 1e-9 || speeds[i] * g.heads > total + 1e-9))
    {
        ++i;
    }
    while (i + 1 < speeds.size() && (g.heads + 1) * speeds[i] > nvlink_gbyte_per_s + 1e-9)
    {
        ++i;
    }
    g.bwIntra_gbyte_per_s = speeds[i];
    g.bwInter_gbyte_per_s = speeds[i];
    while (i > 0 && g.bwInter_gbyte_per_s < 2 * g.bwIntra_gbyte_per_s)
    {
        g.bwInter_gbyte_per_s = speeds[--i];
    }
    return g;
}

uint32_t
NcclEndpoint::GetMaxChannels(const NcclTuneInput& in) const
{
    const uint32_t nodes = std::max<uint32_t>(in.nodes, 1);
    return GetMaxChannels(nodes, std::max<uint32_t>(in.ranks / nodes, 1), in.intra_gbyte_per_s);
}

uint32_t
NcclEndpoint::GetNvlsChannels(uint32_t nodes) const
{
    return nodes > 1 ? m_nvlsChannelsAcrossNodes : m_nvlsChannels;
}

Time
NcclEndpoint::GetNvlsLatency() const
{
    return m_nvlsLatency;
}

Time
NcclEndpoint::GetNvlsNetLatency() const
{
    return m_nvlsNetLatency;
}

Time
NcclEndpoint::GetNvlsTreeNetLatency() const
{
    return m_nvlsTreeNetLatency;
}

Time
NcclEndpoint::GetHostLaunchTime() const
{
    return m_hostLaunchTime;
}

Time
NcclEndpoint::GetNetProxyStepTime() const
{
    return m_netProxyStepTime;
}

Time
NcclEndpoint::ProxyStepTime(CollectiveAlgorithm algorithm, NcclProtocolId protocol) const
{
    switch (algorithm)
    {
    case Algo::Ring:
    case Algo::Hierarchical:
        return protocol == NcclProtocolId::Simple ? m_netProxyStepTime * m_simpleRingProxyFactor
                                                  : m_netProxyStepTime;
    case Algo::NvlsTree:
        return m_netProxyStepTime;
    default:
        return Time(0);
    }
}

double
NcclEndpoint::RingProxyStep_us(const NcclTuneInput& in, NcclProtocolId protocol) const
{
    const uint32_t n = std::max<uint32_t>(in.ranks, 1);
    const uint32_t nodes = std::max<uint32_t>(in.nodes, 1);
    if (nodes <= 1)
    {
        return 0;
    }
    // Multi-rail rings cross between the domains at a different GPU per channel (up to the
    // GPUs of a domain); otherwise every channel crosses at the same one.
    const uint32_t channels =
        Channels(Algo::Ring, protocol, in.bytes, n, nodes, in.intra_gbyte_per_s);
    const uint32_t ppn = std::max<uint32_t>(n / nodes, 1);
    const uint32_t gpus = in.multiRailRings ? std::min(channels, ppn) : 1;
    return ProxyStepTime(Algo::Ring, protocol).GetSeconds() * 1e6 * ((channels + gpus - 1) / gpus);
}

Time
NcclEndpoint::HostIssueTime(uint32_t channels) const
{
    // The host plans and uploads one work batch per channel the collective runs on
    // (src/enqueue.cc scheduleCollTasksToPlan: ncclAddWorkBatchToPlan for every channel
    // of channelLo..channelHi, then uploadWork), so each further channel adds to the launch.
    return m_hostLaunchTime +
           m_hostChannelLaunchTime * static_cast<int64_t>(std::max<uint32_t>(channels, 1) - 1);
}

Time
NcclEndpoint::LoopIterationTime(Time collective,
                                uint32_t gpusPerThread,
                                uint32_t iterations,
                                uint32_t channels) const
{
    // Iteration k can start on the GPUs once the host issued its last launch, at
    // (k + 1) x gpusPerThread x the issue time, and once iteration k - 1 is done: the end
    // of the last iteration is the larger of host-bound (every launch, then one
    // collective) and GPU-bound (the first iteration's launches, then every collective).
    const uint32_t n = std::max<uint32_t>(iterations, 1);
    const Time issue =
        HostIssueTime(channels) * static_cast<int64_t>(std::max<uint32_t>(gpusPerThread, 1));
    const Time hostBound = issue * static_cast<int64_t>(n) + collective;
    const Time gpuBound = issue + collective * static_cast<int64_t>(n);
    return std::max(hostBound, gpuBound) / static_cast<int64_t>(n);
}

Time
NcclEndpoint::GetStartLatency(CollectiveAlgorithm algorithm, uint32_t ranks, uint32_t nodes) const
{
    const uint32_t ppn = std::max<uint32_t>(ranks / std::max<uint32_t>(nodes, 1), 1);
    // With one rank per node NCCL takes the tree's network latency (ppn == 1 in tuning.cc).
    const Time tree = GetProtocol(NcclProtocolId::Simple)->GetTreeNetHopLatency();
    switch (algorithm)
    {
    case Algo::CollNetDirect:
        return ppn == 1 ? tree : m_collNetDirectNetLatency;
    case Algo::CollNetChain:
        return ppn == 1 ? tree : m_collNetChainNetLatency;
    case Algo::Pat:
        return m_patBaseLatency + m_patRankLatency * static_cast<int64_t>(ranks);
    default:
        return Time(0);
    }
}

Time
NcclEndpoint::GetStepLatency(CollectiveAlgorithm algorithm, bool network) const
{
    switch (algorithm)
    {
    case Algo::CollNetDirect:
        return network ? Time(0) : m_collNetDirectNvlinkLatency;
    case Algo::CollNetChain:
        return network ? Time(0) : m_collNetChainNvlinkLatency;
    case Algo::Pat:
        // tuning.cc: log2i(nNodes) x interLat / 3.5, interLat the tree's (ppn = 1).
        return network ? GetProtocol(NcclProtocolId::Simple)->GetTreeNetHopLatency() / 3.5
                       : Time(0);
    default:
        return Time(0);
    }
}

std::string
NcclEndpoint::GetGeneration() const
{
    return m_generation;
}

uint32_t
NcclEndpoint::GetNvlsEnable() const
{
    return m_nvlsEnable;
}

bool
NcclEndpoint::GetCollNetEnable() const
{
    return m_collNetEnable;
}

std::string
NcclEndpoint::NcclAlgorithmNames()
{
    std::string out;
    for (const auto& n : AlgoNames())
    {
        out += (out.empty() ? "" : ", ") + n;
    }
    return out;
}

std::string
NcclEndpoint::ParseList(const std::string& text,
                        const std::string& variable,
                        const std::vector<std::string>& elements,
                        std::vector<std::vector<bool>>& enabled)
{
    // NCCL's parseList (src/graph/tuning.cc): "[prefix:][^]e1,e2;prefix:..."; the first
    // entry may lack a prefix and then applies to every function.
    enabled.assign(kKinds, std::vector<bool>(elements.size(), true));
    if (Trim(text).empty())
    {
        return "";
    }
    const std::vector<std::string> entries = Split(text, ';');
    for (std::size_t k = 0; k < entries.size(); ++k)
    {
        const std::string entry = Trim(entries[k]);
        std::string prefix;
        std::string list = entry;
        const auto colon = entry.find(':');
        if (colon != std::string::npos)
        {
            prefix = Trim(entry.substr(0, colon));
            list = Trim(entry.substr(colon + 1));
        }
        else if (k != 0)
        {
            return variable + "=" + text + ": every entry but the first needs a prefix (\"" +
                   entry + "\")";
        }
        std::vector<uint32_t> kinds;
        if (prefix.empty())
        {
            for (uint32_t i = 0; i < kKinds; ++i)
            {
                kinds.push_back(i);
            }
        }
        else
        {
            CollectiveKind kind;
            if (!ParseCollectiveKind(prefix, &kind))
            {
                return variable + "=" + text + ": unknown function \"" + prefix + "\" (" +
                       CollectiveKindNames() + ")";
            }
            kinds.push_back(static_cast<uint32_t>(kind));
        }
        const bool negate = !list.empty() && list[0] == '^';
        if (negate)
        {
            list = list.substr(1);
        }
        std::vector<bool> set(elements.size(), negate);
        for (const std::string& raw : Split(list, ','))
        {
            const std::string e = Lower(Trim(raw));
            auto it = std::find_if(elements.begin(), elements.end(), [&e](const std::string& n) {
                return Lower(n) == e;
            });
            if (it == elements.end())
            {
                std::string names;
                for (const auto& n : elements)
                {
                    names += (names.empty() ? "" : ", ") + n;
                }
                return variable + "=" + text + ": unknown element \"" + Trim(raw) +
                       "\" (valid: " + names + ")";
            }
            set[it - elements.begin()] = !negate;
        }
        for (uint32_t kind : kinds)
        {
            enabled[kind] = set;
        }
    }
    return "";
}

std::string
NcclEndpoint::CheckOverrides() const
{
    std::vector<std::vector<bool>> scratch;
    std::string e = ParseList(m_algorithms, "NCCL_ALGO", AlgoNames(), scratch);
    if (e.empty())
    {
        e = ParseList(m_protocolList, "NCCL_PROTO", ProtoNames(), scratch);
    }
    return e;
}

const NcclEndpoint::ParsedList&
NcclEndpoint::Parsed(ParsedList& cache,
                     const std::string& text,
                     const std::string& variable,
                     const std::vector<std::string>& elements)
{
    if (!cache.parsed || cache.text != text)
    {
        cache.text = text;
        cache.parsed = true;
        cache.valid = ParseList(text, variable, elements, cache.enabled).empty();
    }
    return cache;
}

bool
NcclEndpoint::AlgorithmEnabled(CollectiveKind kind, CollectiveAlgorithm algorithm) const
{
    const int i = NcclAlgoIndex(algorithm);
    if (i < 0)
    {
        return true;
    }
    const ParsedList& list = Parsed(m_algorithmList, m_algorithms, "NCCL_ALGO", AlgoNames());
    return list.valid && list.enabled[static_cast<uint32_t>(kind)][i];
}

bool
NcclEndpoint::ProtocolEnabled(CollectiveKind kind, NcclProtocolId protocol) const
{
    const ParsedList& list = Parsed(m_protocolParsed, m_protocolList, "NCCL_PROTO", ProtoNames());
    return list.valid && list.enabled[static_cast<uint32_t>(kind)][static_cast<uint32_t>(protocol)];
}

double
NcclEndpoint::PredictLatency_us(const NcclTuneInput& in,
                                CollectiveAlgorithm algorithm,
                                NcclProtocolId protocol) const
{
    // NCCL's latency model (ncclTopoTuneModel): a base latency per algorithm and protocol
    // plus one hardware latency per pipeline step, NVLink or network.
    const Ptr<NcclProtocol> p = GetProtocol(protocol);
    const uint32_t n = std::max<uint32_t>(in.ranks, 1);
    const uint32_t nodes = std::max<uint32_t>(in.nodes, 1);
    const uint32_t ppn = std::max<uint32_t>(n / nodes, 1);
    auto toUs = [](Time t) { return t.GetSeconds() * 1e6; };
    switch (algorithm)
    {
    case Algo::Ring: {
        const uint32_t steps = Steps(in.kind, n);
        if (CollectiveHasRoot(in.kind))
        {
            // NCCL (tuning.cc) charges a chain one hardware latency when every channel of the
            // ring graph is the same ring (sameChannels: the search's first try, which an
            // NVSwitch node meets), else one per step, Simple's at the tree's figure.  Across
            // nodes each channel leaves on its own NIC, so the channels differ; every step
            // then takes the network's latency (hw = NET there).
            if (nodes == 1)
            {
                return toUs(p->GetRingBaseLatency()) + toUs(p->GetRingNvlinkHopLatency());
            }
            return toUs(p->GetRingBaseLatency()) + steps * toUs(protocol == NcclProtocolId::Simple
                                                                    ? p->GetTreeNetHopLatency()
                                                                    : p->GetRingNetHopLatency());
        }
        const uint32_t inter = nodes == 1                             ? 0
                               : in.kind == CollectiveKind::AllReduce ? 2 * (nodes - 1)
                                                                      : nodes - 1;
        // Across nodes every step of the ring waits for the proxies that pass it over the
        // network.  NCCL's tuner charges one net overhead per NVLink step (intraLat =
        // max(intraLat, netOverhead), "inter-node rings still have to launch nsteps * net
        // overhead") and leaves the network steps at their hop latency; with
        // TunerProxyPerChannel the tuner charges every step, network ones too, the steps
        // of all the channels one GPU's proxy passes, as the simulation does.
        const double proxy = m_tunerProxyPerChannel
                                 ? RingProxyStep_us(in, protocol)
                                 : (nodes > 1 ? toUs(ProxyStepTime(algorithm, protocol)) : 0);
        // NCCL's tuner at one rank per node: "latencies are fully exposed, use the Tree
        // network latency" (tuning.cc interLat); the per-channel bound keeps the ring's.
        const double netHop = toUs(ppn == 1 && !m_tunerProxyPerChannel ? p->GetTreeNetHopLatency()
                                                                       : p->GetRingNetHopLatency());
        return toUs(p->GetRingBaseLatency()) +
               (steps - std::min(steps, inter)) *
                   std::max(toUs(p->GetRingNvlinkHopLatency()), proxy) +
               inter * (m_tunerProxyPerChannel ? std::max(netHop, proxy) : netHop);
    }
    case Algo::Tree: {
        // NCCL's tree is a chain inside each node and a double binary tree across nodes:
        // 2 x ((ppn - 1) NVLink steps + log2(nodes) network steps), up and down.
        const uint32_t net = nodes > 1 ? CeilLog2(nodes) : 0;
        return toUs(p->GetTreeBaseLatency()) + 2 * ((ppn - 1) * toUs(p->GetTreeNvlinkHopLatency()) +
                                                    net * toUs(p->GetTreeNetHopLatency()));
    }
    case Algo::Nvls:
        // NCCL: intraLat (NVLS), + interLat across nodes (NVLS with CollNet).
        return toUs(m_nvlsLatency) + (nodes > 1 ? toUs(m_nvlsNetLatency) : 0.0);
    case Algo::NvlsTree:
        // NCCL: baseLatency 0 + intraLat (NVLS) + 2 log2i(nNodes) interLat.
        return toUs(m_nvlsLatency) + 2.0 * FloorLog2(nodes) *
                                         toUs(m_tunerNvlsTreeNetLatency.IsNegative()
                                                  ? m_nvlsTreeNetLatency
                                                  : m_tunerNvlsTreeNetLatency);
    case Algo::Hierarchical: {
        // Every rank of a rail passes all of its channels' steps through its own proxy.
        const double proxy =
            nodes > 1 ? toUs(ProxyStepTime(algorithm, protocol)) *
                            Channels(Algo::Ring, protocol, in.bytes, n, nodes, in.intra_gbyte_per_s)
                      : 0;
        return toUs(p->GetRingBaseLatency()) + 2 * (ppn - 1) * toUs(p->GetRingNvlinkHopLatency()) +
               2 * (nodes - 1) * std::max(toUs(p->GetRingNetHopLatency()), proxy);
    }
    case Algo::CollNetDirect:
        // NCCL: 2 (min(1, ppn - 1) intraLat + (ppn - 1) 0.4) + interLat (base 0).
        return 2 * (std::min<uint32_t>(1, ppn - 1) * toUs(m_collNetDirectNvlinkLatency) +
                    (ppn - 1) * toUs(m_collNetArityLatency)) +
               toUs(GetStartLatency(algorithm, n, nodes));
    case Algo::CollNetChain:
        // NCCL: 2 (ppn - 1) intraLat + interLat.
        return 2 * (ppn - 1) * toUs(m_collNetChainNvlinkLatency) +
               toUs(GetStartLatency(algorithm, n, nodes));
    case Algo::Pat:
        // NCCL: base + log2i(nNodes) interLat / 3.5 + 2.8 nRanks.
        return toUs(GetStartLatency(algorithm, n, nodes)) +
               FloorLog2(nodes) * toUs(GetStepLatency(algorithm, true));
    case Algo::HalvingDoubling:
        return toUs(p->GetRingBaseLatency()) +
               2 * CeilLog2(n) *
                   toUs(nodes > 1 ? p->GetRingNetHopLatency() : p->GetRingNvlinkHopLatency());
    default: // direct: one step to every peer at once
        return toUs(p->GetRingBaseLatency()) +
               toUs(nodes > 1 ? p->GetRingNetHopLatency() : p->GetRingNvlinkHopLatency());
    }
}

double
NcclEndpoint::PredictBusBandwidth_gbyte_per_s(const NcclTuneInput& in,
                                              CollectiveAlgorithm algorithm,
                                              NcclProtocolId protocol) const
{
    const Ptr<NcclProtocol> p = GetProtocol(protocol);
    const uint32_t n = std::max<uint32_t>(in.ranks, 1);
    const uint32_t nodes = std::max<uint32_t>(in.nodes, 1);
    const uint32_t ppn = std::max<uint32_t>(n / nodes, 1);
    const double big = 1e9;
    const double intra = in.intra_gbyte_per_s > 0 ? in.intra_gbyte_per_s : big;
    const double inter = in.inter_gbyte_per_s > 0 ? in.inter_gbyte_per_s : big;
    const uint32_t nc = GetMaxChannels(in);
    const bool simpleOnly = algorithm == Algo::Nvls || algorithm == Algo::NvlsTree ||
                            algorithm == Algo::CollNetDirect || algorithm == Algo::CollNetChain ||
                            algorithm == Algo::Pat;
    if (simpleOnly && protocol != NcclProtocolId::Simple)
    {
        return 0; // NVLS, CollNet and PAT run Simple only (tuning.cc sets the others' to 0)
    }
    double bw = 0;
    double channelCap = 0;
    switch (algorithm)
    {
    case Algo::Ring:
        // Inside one node the tuner weighs its ring graph (rings x speed), which the
        // simulated channels do not share: they move what the GPU's NVLink carries.
        bw = nodes == 1 && in.intra_gbyte_per_s > 0 ? IntraRingGraph_gbyte_per_s(intra)
                                                    : RingRate_gbyte_per_s(in);
        if (nodes > 1 && in.intra_gbyte_per_s > 0 && in.inter_gbyte_per_s > 0 && in.multiRailRings)
        {
            // Across nodes NCCL weighs its ring graph's rings x speed too (8 x H100: 8 rings
            // at 45 GB/s = 360), within the rate the rings cross on.
            const auto [rings, speed] = NetRingSearch(ppn, intra);
            bw = std::min(bw, rings * speed);
        }
        channelCap = p->GetRingChannelBandwidth_gbyte_per_s();
        break;
    case Algo::Tree:
        bw = nodes == 1 ? (in.intra_gbyte_per_s > 0 ? IntraRingGraph_gbyte_per_s(intra) : intra)
                        : std::min(intra, inter);
        channelCap = p->GetTreeChannelBandwidth_gbyte_per_s(nodes);
        break;
    case Algo::Nvls:
        if (nodes == 1 && in.intra_gbyte_per_s > 0)
        {
            // tuning.cc over the NVLS graph: per channel bwIntra x nvlsEfficiency x (nCh -
            // 1) / nCh, x 2 for allreduce (its reduce-scatter and all-gather pipelined) or x
            // (ppn - 1) / ppn, within the graph's network speed, summed over the channels.
            const NvlsGraph g = IntraNvlsGraph(ppn, intra);
            if (g.heads < 2)
            {
                return 0;
            }
            const double perChannel =
                g.bwIntra_gbyte_per_s * m_nvlsEfficiency * (g.heads - 1.0) / g.heads *
                (in.kind == CollectiveKind::AllReduce ? 2.0 : (ppn - 1.0) / ppn);
            bw = g.heads * std::min(perChannel, g.bwInter_gbyte_per_s);
            break;
        }
        {
            // Across nodes (and where the plane tells no rate): the NVLink rate x
            // nvlsEfficiency x (nCh - 1) / nCh over the NVLS channels, x 2 for allreduce.
            const double c = GetNvlsChannels(nodes);
            bw = intra * m_nvlsEfficiency * (c - 1) / c *
                 (in.kind == CollectiveKind::AllReduce ? 2.0 : (ppn - 1.0) / ppn);
            if (nodes > 1)
            {
                // Across nodes (NVLS with CollNet) the heads' NICs bound it too: bwInter per
                // channel, one channel per head.
                bw = std::min(bw, inter * ppn);
            }
            break;
        }
    case Algo::NvlsTree: {
        // NCCL's NVLS graph has one channel per head, a GPU and its NIC (search.cc: at most
        // the GPUs of a node), so per node: the NVLS rate x nvlsEfficiency x (heads - 1) /
        // heads, x 2 for allreduce; the heads' NICs, x 2 on two nodes (the tree's up and
        // down phases each carry half); and the per-channel cap, all as busbw.
        const double heads = ppn;
        const double intraBw = intra * m_nvlsEfficiency * (heads - 1) / heads *
                               (in.kind == CollectiveKind::AllReduce ? 2.0 : (ppn - 1.0) / ppn);
        const double interBw = inter * heads * (nodes <= 2 ? 2.0 : 1.0);
        const double perChannel =
            nodes <= 2 ? m_nvlsTreeChannel_gbyte_per_s : m_nvlsTreeChannelN4_gbyte_per_s;
        bw = std::min(intraBw, interBw);
        if (perChannel > 0)
        {
            bw = std::min(bw, heads * perChannel);
        }
        break;
    }
    case Algo::Hierarchical: {
        // Inside: reduce-scatter + all-gather over ppn ranks; across: allreduce of 1/ppn
        // of the buffer per rail over `nodes` domains.  algbw per phase, then combined.
        const double a = ppn > 1 ? intra / (2.0 * (ppn - 1) / ppn) : big;
        const double b = inter * ppn / (2.0 * (nodes - 1) / nodes);
        const double algbw = in.pipelinedHierarchical ? std::min(a, b) : 1.0 / (1.0 / a + 1.0 / b);
        bw = algbw * BusFactor(in.kind, n);
        channelCap = p->GetRingChannelBandwidth_gbyte_per_s();
        break;
    }
    case Algo::CollNetDirect: {
        // One collnet channel per head (a GPU and its NIC), each at the head's path
        // (its NIC, at most its NVLink); NCCL divides by the GPU/NIC ratio's penalty and
        // takes 0.85 of it from Hopper on.
        const double heads = ppn;
        double factor = ppn / heads;
        factor -= (factor - 1) / 2;
        bw = heads * std::min(inter, intra) / factor * m_collNetEfficiency;
        break;
    }
    case Algo::CollNetChain: {
        // The chain moves every byte through each GPU's NVLink up and down again; the heads'
        // NICs carry 1/ppn each way: as NCCL's "busBw" (2 x algbw).
        const double heads = ppn;
        bw = std::min(intra, 2.0 * heads * inter);
        break;
    }
    case Algo::Pat:
        // The ring's graph (one GPU per node: its NIC), x 0.75.
        bw = RingRate_gbyte_per_s(in) * m_patEfficiency;
        break;
    default:
        bw = nodes == 1 ? intra : std::min(intra, inter);
        break;
    }
    bw *= TunerBandwidthFactor(algorithm, protocol, in.kind, nodes);
    if (channelCap > 0)
    {
        bw = std::min(bw, nc * channelCap);
    }
    const double cap = p->GetMaxBandwidth_gbyte_per_s(nodes);
    if (cap > 0)
    {
        bw = std::min(bw, cap);
    }
    return bw;
}

double
NcclEndpoint::PredictAlgorithmBandwidth_gbyte_per_s(const NcclTuneInput& in,
                                                    CollectiveAlgorithm algorithm,
                                                    NcclProtocolId protocol) const
{
    const double busbw = PredictBusBandwidth_gbyte_per_s(in, algorithm, protocol);
    if (busbw <= 0)
    {
        return 0;
    }
    const uint32_t n = std::max<uint32_t>(in.ranks, 1);
    // Bus to algorithm bandwidth (tuning.cc): nccl-tests' factor for rings and NVLS; NCCL
    // halves the tree's and CollNet's, and leaves an allgather or reducescatter of any
    // algorithm but the ring (NVLS, CollNet, PAT) as it is.
    const bool gatherOrScatter =
        in.kind == CollectiveKind::AllGather || in.kind == CollectiveKind::ReduceScatter;
    const bool halved = algorithm == Algo::Tree || algorithm == Algo::CollNetDirect ||
                        algorithm == Algo::CollNetChain;
    return algorithm == Algo::Pat || (gatherOrScatter && algorithm != Algo::Ring) ? busbw
           : halved                                                               ? busbw * 0.5
                    : busbw / std::max(BusFactor(in.kind, n), 1e-9);
}

double
NcclEndpoint::PredictTime_us(const NcclTuneInput& in,
                             CollectiveAlgorithm algorithm,
                             NcclProtocolId protocol) const
{
    double algbw = PredictAlgorithmBandwidth_gbyte_per_s(in, algorithm, protocol);
    if (algbw <= 0)
    {
        return -1;
    }
    const uint32_t n = std::max<uint32_t>(in.ranks, 1);
    double latency = PredictLatency_us(in, algorithm, protocol);
    if (in.kind == CollectiveKind::AllReduce)
    {
        if (algorithm == Algo::Tree && m_treeCorrection)
        {
            algbw *= TreeCorrectionFactor(protocol, in.bytes);
        }
        // NCCL compares the bytes per channel and rank with its communicator's channels.
        if (algorithm == Algo::Ring && protocol == NcclProtocolId::Simple && in.nodes > 1 &&
            in.bytes / (uint64_t(GetMaxChannels(in)) * n) >= 64)
        {
            latency *= m_ringPlateauLatencyFactor;
        }
    }
    return latency + in.bytes / (1e3 * algbw);
}

double
NcclEndpoint::TunerBandwidthFactor(CollectiveAlgorithm algorithm,
                                   NcclProtocolId protocol,
                                   CollectiveKind kind,
                                   uint32_t nodes) const
{
    // NCCL src/graph/tuning.cc "various model refinements": the ring's LL128 at 0.92 (not
    // its 120/128 line format); the tree allreduce at 0.92, its LL at 1/3.8 and its LL128 at
    // 7/9 inside one node, 120/128 across. Elsewhere the protocol's line format.
    const double wire = GetProtocol(protocol)->GetWireEfficiency();
    if (algorithm == Algo::Ring && protocol == NcclProtocolId::Ll128)
    {
        return 0.92;
    }
    if (algorithm == Algo::Tree && kind == CollectiveKind::AllReduce)
    {
        switch (protocol)
        {
        case NcclProtocolId::Ll:
            return 0.92 / 3.8;
        case NcclProtocolId::Ll128:
            return 0.92 * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0);
        case NcclProtocolId::Simple:
            return 0.92;
        }
    }
    return wire;
}

double
NcclEndpoint::TreeCorrectionFactor(NcclProtocolId protocol, uint64_t bytes)
{
    // NCCL src/graph/tuning.cc treeCorrectionFactor, indexed by log2(bytes / 64): trees fall
    // behind their alpha-beta prediction at medium sizes, most (0.4-0.5) around 256 KiB-1 MiB.
    static const double factors[kNcclNumProtocols][23] = {
        {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
         .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0}, // LL
        {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
         .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0}, // LL128
        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
         .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}, // Simple
    };
    const uint64_t units = bytes >> 6;
    if (units == 0)
    {
        return 1.0;
    }
    const uint32_t logSize = FloorLog2(units);
    return logSize < 23 ? factors[static_cast<uint32_t>(protocol)][logSize] : 1.0;
}

uint32_t
NcclEndpoint::Channels(CollectiveAlgorithm algorithm,
                       NcclProtocolId protocol,
                       uint64_t bytes,
                       uint32_t ranks,
                       uint32_t nodes,
                       double nvlink_gbyte_per_s) const
{
    if (algorithm == Algo::Nvls || algorithm == Algo::NvlsTree)
    {
        return GetNvlsChannels(nodes);
    }
    const Ptr<NcclProtocol> p = GetProtocol(protocol);
    uint64_t threshold = p->GetThreadThresholdBytes();
    if (algorithm == Algo::Ring && protocol == NcclProtocolId::Ll)
    {
        threshold *= ranks; // NCCL: threadThresholds[RING][LL] *= nRanks
    }
    const uint64_t perChannel = uint64_t(p->GetThreadsPerChannel()) * threshold;
    uint32_t nc = GetMaxChannels(nodes,
                                 std::max<uint32_t>(ranks / std::max<uint32_t>(nodes, 1), 1),
                                 nvlink_gbyte_per_s);
    while (nc > 1 && bytes < nc * perChannel)
    {
        --nc;
    }
    return nc;
}

uint32_t
NcclEndpoint::SimulatedChannels(CollectiveAlgorithm algorithm,
                                uint32_t channels,
                                uint32_t ranksPerDomain) const
{
    if (algorithm == Algo::Nvls || algorithm == Algo::NvlsTree)
    {
        // Their slices follow the channels (one in-switch operation per slice): folding
        // them would change the pipeline, not only its cost.
        return std::max<uint32_t>(channels, 1);
    }
    return std::max<uint32_t>(1,
                              std::min(channels, std::max(m_maxSimulatedChannels, ranksPerDomain)));
}

bool
NcclEndpoint::GetRingFinalCopy() const
{
    return m_ringFinalCopy;
}

// NCCL's broadcast and reduce, the collectives with a root, are chains from or to it
// (src/device/broadcast.h, reduce.h), with their own chunk and slice steps.
uint32_t
NcclEndpoint::GetRingChunkSteps(CollectiveKind kind) const
{
    return CollectiveHasRoot(kind) ? m_broadcastChunkSteps : m_ringChunkSteps;
}

uint32_t
NcclEndpoint::GetRingSliceSteps(CollectiveKind kind) const
{
    return CollectiveHasRoot(kind) ? m_broadcastSliceSteps : m_ringSliceSteps;
}

uint64_t
NcclEndpoint::GetP2pChunkBytes() const
{
    return m_p2pChunkBytes;
}

NcclEndpoint::PxnMode
NcclEndpoint::GetPxn() const
{
    return m_pxn;
}

uint64_t
NcclEndpoint::GetPxnChunkBytes() const
{
    return m_pxnChunkBytes;
}

uint32_t
NcclEndpoint::GetPxnMaxChunks() const
{
    return m_pxnMaxChunks;
}

uint32_t
NcclEndpoint::GetP2pChannelCount() const
{
    // src/graph/paths.cc ncclTopoComputeP2pChannels: the communicator's, a power of two.
    uint32_t p2p = 1;
    while (p2p < GetMaxChannels())
    {
        p2p *= 2;
    }
    return p2p;
}

uint32_t
NcclEndpoint::P2pSendWarps(uint32_t works)
{
    const uint32_t perWork = P2P_WARPS / std::max<uint32_t>(works, 1);
    const uint32_t recv = perWork <= 4 ? perWork / 2 : (perWork - 1) / 2;
    return perWork <= 4 ? recv : recv + 1;
}

uint32_t
NcclEndpoint::P2pChannels(uint64_t bytes, uint32_t ranks) const
{
    // src/enqueue.cc: the p2p channels are shared by the peers of a round, so a peer
    // starts on nChannelsMin, halved while nChannelsMin x ranks exceed them; a send takes
    // at most one channel per 1/8 chunk and doubles its channels while each part is above
    // 32 chunks (addP2pToPlan, one node).
    const uint32_t p2p = GetP2pChannelCount();
    const uint32_t perPeer = std::min(m_p2pChannelsPerPeer, p2p);
    uint32_t minChannels = perPeer;
    while (uint64_t(minChannels) * std::max<uint32_t>(ranks, 1) > p2p && minChannels > 1)
    {
        minChannels /= 2;
    }
    if (bytes == 0)
    {
        return 1;
    }
    const uint64_t minPart = std::max<uint64_t>(m_p2pChunkBytes / 8, 1);
    const uint64_t maxPart = m_p2pChunkBytes * 32;
    uint32_t nc =
        static_cast<uint32_t>(std::min<uint64_t>(minChannels, (bytes + minPart - 1) / minPart));
    uint64_t part = std::max(minPart, (bytes + nc - 1) / nc);
    while (part > maxPart && nc <= perPeer / 2)
    {
        nc *= 2;
        part = (bytes + nc - 1) / nc;
    }
    return nc;
}

double
NcclEndpoint::RingRate_gbyte_per_s(const NcclTuneInput& in) const
{
    const double big = 1e9;
    const double intra = in.intra_gbyte_per_s > 0 ? in.intra_gbyte_per_s : big;
    const uint32_t nodes = std::max<uint32_t>(in.nodes, 1);
    if (nodes == 1)
    {
        return intra;
    }
    const double inter = in.inter_gbyte_per_s > 0 ? in.inter_gbyte_per_s : big;
    const uint32_t ppn = std::max<uint32_t>(in.ranks / nodes, 1);
    return std::min(intra, in.multiRailRings ? inter * std::min(GetMaxChannels(in), ppn) : inter);
}

double
NcclEndpoint::RingChannelShare_gbyte_per_s(const NcclTuneInput& in,
                                           CollectiveAlgorithm algorithm,
                                           uint32_t channels) const
{
    // A plane that cannot tell its rate (0) gives no share to limit by.
    if (in.intra_gbyte_per_s <= 0 ||
        (algorithm == Algo::Ring && in.nodes > 1 && in.inter_gbyte_per_s <= 0))
    {
        return 0;
    }
    double ring = 0;
    if (algorithm == Algo::Ring)
    {
        ring = RingRate_gbyte_per_s(in);
    }
    else if (algorithm == Algo::Hierarchical ||
             (algorithm == Algo::Direct && in.kind == CollectiveKind::AllToAll && in.nodes <= 1))
    {
        ring = in.intra_gbyte_per_s;
    }
    return ring / std::max<uint32_t>(channels, 1);
}

double
NcclEndpoint::NvlsTreeRailRate_gbyte_per_s(uint32_t ranks, uint32_t nodes) const
{
    const double cap = nodes <= 2 ? m_nvlsTreeChannel_gbyte_per_s : m_nvlsTreeChannelN4_gbyte_per_s;
    if (cap <= 0 || nodes < 2 || ranks < 2)
    {
        return 0;
    }
    const double n = ranks;
    const double ppn = n / nodes;
    const double algbw = ppn * cap * n / (2 * (n - 1));
    // Halves of its share a rank receives over both trees: one from each child and one from
    // the parent in each.
    std::vector<uint32_t> halves(nodes, 0);
    for (const auto& parents : {CollectiveBuild::BinaryTreeParents(nodes),
                                CollectiveBuild::ComplementaryTreeParents(nodes)})
    {
        for (uint32_t r = 0; r < nodes; ++r)
        {
            if (parents[r] >= 0)
            {
                ++halves[r];
                ++halves[parents[r]];
            }
        }
    }
    const double busiest = *std::max_element(halves.begin(), halves.end()) / 2.0;
    return algbw / ppn * busiest;
}

NcclChoice
NcclEndpoint::Choose(const NcclTuneInput& in) const
{
    NS_LOG_FUNCTION(this << CollectiveKindName(in.kind) << in.ranks << in.nodes << in.bytes);
    NcclChoice best;
    bool found = false;
    std::string disabled;
    for (CollectiveAlgorithm a : in.runnable)
    {
        if (!AlgorithmEnabled(in.kind, a))
        {
            continue;
        }
        if ((a == Algo::Nvls || a == Algo::NvlsTree) && m_nvlsEnable == 0)
        {
            continue;
        }
        if ((a == Algo::CollNetDirect || a == Algo::CollNetChain) && !m_collNetEnable)
        {
            continue; // tuning.cc: disabled unless collnetEnable
        }
        for (uint32_t pi = 0; pi < kNcclNumProtocols; ++pi)
        {
            const auto proto = static_cast<NcclProtocolId>(pi);
            // Point-to-point (direct) and halving-doubling run Simple, as NCCL's p2p does.
            const bool simpleOnly = a == Algo::Nvls || a == Algo::NvlsTree ||
                                    a == Algo::CollNetDirect || a == Algo::CollNetChain ||
                                    a == Algo::Pat || NcclAlgoIndex(a) < 0;
            if ((simpleOnly && proto != NcclProtocolId::Simple) ||
                (!simpleOnly && !ProtocolEnabled(in.kind, proto)))
            {
                continue;
            }
            const double t = PredictTime_us(in, a, proto);
            if (t >= 0 && (!found || t < best.predicted_us))
            {
                found = true;
                best.algorithm = a;
                best.protocol = proto;
                best.predicted_us = t;
            }
        }
    }
    if (!found)
    {
        std::string runnable;
        for (CollectiveAlgorithm a : in.runnable)
        {
            runnable += (runnable.empty() ? "" : ", ") + std::string(CollectiveAlgorithmName(a));
        }
        throw std::invalid_argument(std::string("no algorithm/protocol left for ") +
                                    CollectiveKindName(in.kind) + ": NCCL_ALGO=\"" + m_algorithms +
                                    "\", NCCL_PROTO=\"" + m_protocolList +
                                    "\", NCCL_NVLS_ENABLE=" + std::to_string(m_nvlsEnable) +
                                    ", NCCL_COLLNET_ENABLE=" + (m_collNetEnable ? "1" : "0") +
                                    " leave none of what this fabric can run (" + runnable + ")");
    }
    best.channels =
        Channels(best.algorithm, best.protocol, in.bytes, in.ranks, in.nodes, in.intra_gbyte_per_s);
    NS_LOG_LOGIC("tuner: " << CollectiveAlgorithmName(best.algorithm) << "/"
                           << NcclProtocolName(best.protocol) << " on " << best.channels
                           << " channels, predicted " << best.predicted_us << " us");
    return best;
}

} // namespace ns3
