/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/nccl-protocol.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <cctype>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NcclProtocol");
NS_OBJECT_ENSURE_REGISTERED(NcclProtocol);
NS_OBJECT_ENSURE_REGISTERED(NcclLlProtocol);
NS_OBJECT_ENSURE_REGISTERED(NcclLl128Protocol);
NS_OBJECT_ENSURE_REGISTERED(NcclSimpleProtocol);

const char*
NcclProtocolName(NcclProtocolId id)
{
    switch (id)
    {
    case NcclProtocolId::Ll:
        return "ll";
    case NcclProtocolId::Ll128:
        return "ll128";
    case NcclProtocolId::Simple:
        return "simple";
    }
    return "simple";
}

bool
ParseNcclProtocol(const std::string& text, NcclProtocolId* id)
{
    std::string t;
    for (char c : text)
    {
        t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (uint32_t i = 0; i < kNcclNumProtocols; ++i)
    {
        if (t == NcclProtocolName(static_cast<NcclProtocolId>(i)))
        {
            *id = static_cast<NcclProtocolId>(i);
            return true;
        }
    }
    return false;
}

TypeId
NcclProtocol::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NcclProtocol").SetParent<Object>().SetGroupName("AiFabric");
    return tid;
}

TypeId
NcclProtocol::AddCostAttributes(TypeId tid, const Costs& d)
{
    // MicroSeconds(double) would truncate to whole microseconds.
    auto us = [](double v) { return TimeValue(NanoSeconds(static_cast<int64_t>(v * 1000 + 0.5))); };
    return tid
        .AddAttribute("RingBaseLatency",
                      "Once per ring collective: launch and set-up (NCCL baseLatencies)",
                      us(d.ringBase_us),
                      MakeTimeAccessor(&NcclProtocol::m_ringBase),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("TreeBaseLatency",
                      "Once per tree collective (NCCL baseLatencies)",
                      us(d.treeBase_us),
                      MakeTimeAccessor(&NcclProtocol::m_treeBase),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("RingNvlinkHopLatency",
                      "Before every ring/chain message over NVLink (NCCL hwLatencies NVLINK)",
                      us(d.ringNvlinkHop_us),
                      MakeTimeAccessor(&NcclProtocol::m_ringNvlinkHop),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("RingNetHopLatency",
                      "Before every ring/chain message over the network (hwLatencies NET)",
                      us(d.ringNetHop_us),
                      MakeTimeAccessor(&NcclProtocol::m_ringNetHop),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("TreeNvlinkHopLatency",
                      "Before every tree message over NVLink (hwLatencies NVLINK)",
                      us(d.treeNvlinkHop_us),
                      MakeTimeAccessor(&NcclProtocol::m_treeNvlinkHop),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("TreeNetHopLatency",
                      "Before every tree message over the network (hwLatencies NET)",
                      us(d.treeNetHop_us),
                      MakeTimeAccessor(&NcclProtocol::m_treeNetHop),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("RingChannelBandwidth",
                      "GB/s one ring channel copies/reduces at most; 0 = no limit "
                      "(NCCL perChMaxRingLL128Bws)",
                      DoubleValue(d.ringChannel_gbyte_per_s),
                      MakeDoubleAccessor(&NcclProtocol::m_ringChannel_gbyte_per_s),
                      MakeDoubleChecker<double>(0))
        .AddAttribute("TreeChannelBandwidth",
                      "GB/s one tree channel reaches at most on one node; 0 = no limit "
                      "(NCCL perChMaxTreeBws, perChMaxTreeLL128Bws, column N1)",
                      DoubleValue(d.treeChannel_gbyte_per_s),
                      MakeDoubleAccessor(&NcclProtocol::m_treeChannel_gbyte_per_s),
                      MakeDoubleChecker<double>(0))
        .AddAttribute("TreeChannelBandwidthN2",
                      "The same on two nodes (column N2)",
                      DoubleValue(d.treeChannelN2_gbyte_per_s),
                      MakeDoubleAccessor(&NcclProtocol::m_treeChannelN2_gbyte_per_s),
                      MakeDoubleChecker<double>(0))
        .AddAttribute("TreeChannelBandwidthN4",
                      "The same on more than two nodes (column N4)",
                      DoubleValue(d.treeChannelN4_gbyte_per_s),
                      MakeDoubleAccessor(&NcclProtocol::m_treeChannelN4_gbyte_per_s),
                      MakeDoubleChecker<double>(0))
        .AddAttribute("MaxBandwidth",
                      "GB/s all channels of a rank reach together inside one node; 0 = no "
                      "limit (NCCL llMaxBws, GPU row)",
                      DoubleValue(d.max_gbyte_per_s),
                      MakeDoubleAccessor(&NcclProtocol::m_max_gbyte_per_s),
                      MakeDoubleChecker<double>(0))
        .AddAttribute("MaxNetBandwidth",
                      "The same on two nodes; 0 = no limit (NCCL llMaxBws, CPU rows, "
                      "column N2)",
                      DoubleValue(d.maxNet_gbyte_per_s),
                      MakeDoubleAccessor(&NcclProtocol::m_maxNet_gbyte_per_s),
                      MakeDoubleChecker<double>(0))
        .AddAttribute("MaxNetBandwidthN4",
                      "The same on more than two nodes (llMaxBws column N4: 20.4 on x86 "
                      "Intel hosts)",
                      DoubleValue(d.maxNetN4_gbyte_per_s),
                      MakeDoubleAccessor(&NcclProtocol::m_maxNetN4_gbyte_per_s),
                      MakeDoubleChecker<double>(0))
        .AddAttribute("ThreadsPerChannel",
                      "Threads of one channel (NCCL_*_MAX_NTHREADS)",
                      UintegerValue(d.threads),
                      MakeUintegerAccessor(&NcclProtocol::m_threads),
                      MakeUintegerChecker<uint32_t>(1))
        .AddAttribute("ThreadThresholdBytes",
                      "Bytes per thread below which NCCL drops a channel "
                      "(NCCL_*_THREAD_THRESHOLD)",
                      UintegerValue(d.threadThreshold),
                      MakeUintegerAccessor(&NcclProtocol::m_threadThreshold),
                      MakeUintegerChecker<uint32_t>(1))
        .AddAttribute("ChunkBytes",
                      "Largest ring/chain piece, stored and forwarded whole at each hop: one "
                      "NCCL step of data, the protocol's buffer / NCCL_STEPS (src/init.cc "
                      "DEFAULT_*BUFFSIZE): Simple 4 MiB / 8, LL 512 KiB of 16-byte lines / 8 "
                      "(half data), LL128 4.9 MB of 128-byte lines / 8 (120/128 data)",
                      UintegerValue(d.chunkBytes),
                      MakeUintegerAccessor(&NcclProtocol::m_chunkBytes),
                      MakeUintegerChecker<uint64_t>(1))
        .AddAttribute("ForwardBytes",
                      "Data a chain hop (broadcast, reduce) passes on at once: LL and LL128 "
                      "forward each line as soon as its flag arrives, so a hop holds one round "
                      "of the channel's threads, not a step (src/device/prims_ll.h: a 16-byte "
                      "line of 8 data bytes per thread, 512 threads; prims_ll128.h: "
                      "NCCL_LL128_SHMEM_ELEMS_PER_THREAD = 8 words per thread, 120/128 data, 640 "
                      "threads).  0: whole slices (Simple waits for a slice's flag)",
                      UintegerValue(d.forwardBytes),
                      MakeUintegerAccessor(&NcclProtocol::m_forwardBytes),
                      MakeUintegerChecker<uint64_t>());
}

NcclProtocol::NcclProtocol()
    : m_ringChannel_gbyte_per_s(0),
      m_treeChannel_gbyte_per_s(0),
      m_treeChannelN2_gbyte_per_s(0),
      m_treeChannelN4_gbyte_per_s(0),
      m_max_gbyte_per_s(0),
      m_maxNet_gbyte_per_s(0),
      m_maxNetN4_gbyte_per_s(0),
      m_threads(512),
      m_threadThreshold(64),
      m_chunkBytes(512 * 1024),
      m_forwardBytes(0)
{
}

uint64_t
NcclProtocol::LineBytes(uint64_t payloadBytes, uint32_t dataBytes, uint32_t lineBytes)
{
    return (payloadBytes + dataBytes - 1) / dataBytes * lineBytes;
}

double
NcclProtocol::GetWireEfficiency() const
{
    const uint64_t probe = 1 << 20;
    return static_cast<double>(probe) / static_cast<double>(WireBytes(probe));
}

Time
NcclProtocol::GetRingBaseLatency() const
{
    return m_ringBase;
}

Time
NcclProtocol::GetTreeBaseLatency() const
{
    return m_treeBase;
}

Time
NcclProtocol::GetRingNvlinkHopLatency() const
{
    return m_ringNvlinkHop;
}

Time
NcclProtocol::GetRingNetHopLatency() const
{
    return m_ringNetHop;
}

Time
NcclProtocol::GetTreeNvlinkHopLatency() const
{
    return m_treeNvlinkHop;
}

Time
NcclProtocol::GetTreeNetHopLatency() const
{
    return m_treeNetHop;
}

double
NcclProtocol::GetRingChannelBandwidth_gbyte_per_s() const
{
    return m_ringChannel_gbyte_per_s;
}

double
NcclProtocol::GetTreeChannelBandwidth_gbyte_per_s(uint32_t nodes) const
{
    // NCCL's column: nNodes <= 2 ? nNodes - 1 : 2 (tuning.cc index2).
    return nodes <= 1   ? m_treeChannel_gbyte_per_s
           : nodes == 2 ? m_treeChannelN2_gbyte_per_s
                        : m_treeChannelN4_gbyte_per_s;
}

double
NcclProtocol::GetMaxBandwidth_gbyte_per_s(uint32_t nodes) const
{
    return nodes <= 1   ? m_max_gbyte_per_s
           : nodes == 2 ? m_maxNet_gbyte_per_s
                        : m_maxNetN4_gbyte_per_s;
}

uint32_t
NcclProtocol::GetThreadsPerChannel() const
{
    return m_threads;
}

uint32_t
NcclProtocol::GetThreadThresholdBytes() const
{
    return m_threadThreshold;
}

uint64_t
NcclProtocol::GetChunkBytes() const
{
    return m_chunkBytes;
}

uint64_t
NcclProtocol::GetForwardBytes() const
{
    return m_forwardBytes;
}

// Defaults: NCCL src/graph/tuning.cc (ncclTunerConstantsDefaults, Hopper rows; llMaxBws' x86
// Intel row across nodes; the N1, N2 and N4 columns: one node, two, more) and src/include/device.h,
// comm.h (threads, thread thresholds).  Other GPU generations are NcclEndpoint presets.
// The last two figures: a step of data (ChunkBytes), a round of lines (ForwardBytes).
namespace
{
const NcclProtocol::Costs kLlCosts =
    {6.6, 6.8, 0.6, 2.7, 0.6, 5.0, 0, 0, 0, 0, 141.0, 39.0, 20.4, 512, 8, 32 * 1024, 512 * 8};
const NcclProtocol::Costs kLl128Costs =
    {14.0, 14.0, 1.9, 4.0, 1.25, 8.5, 36.7, 36.7, 36.7, 29.0, 0, 0, 0, 640, 8, 576000, 38400};
const NcclProtocol::Costs kSimpleCosts =
    {8.4, 8.4, 3.4, 14.0, 4.0, 14.0, 0, 38.7, 41.4, 36.0, 0, 0, 0, 512, 64, 512 * 1024, 0};
} // namespace

TypeId
NcclLlProtocol::GetTypeId()
{
    static TypeId tid = AddCostAttributes(TypeId("ns3::NcclLlProtocol")
                                              .SetParent<NcclProtocol>()
                                              .SetGroupName("AiFabric")
                                              .AddConstructor<NcclLlProtocol>(),
                                          kLlCosts);
    return tid;
}

NcclProtocolId
NcclLlProtocol::GetId() const
{
    return NcclProtocolId::Ll;
}

uint64_t
NcclLlProtocol::WireBytes(uint64_t payloadBytes) const
{
    return LineBytes(payloadBytes, 8, 16);
}

TypeId
NcclLl128Protocol::GetTypeId()
{
    static TypeId tid = AddCostAttributes(TypeId("ns3::NcclLl128Protocol")
                                              .SetParent<NcclProtocol>()
                                              .SetGroupName("AiFabric")
                                              .AddConstructor<NcclLl128Protocol>(),
                                          kLl128Costs);
    return tid;
}

NcclProtocolId
NcclLl128Protocol::GetId() const
{
    return NcclProtocolId::Ll128;
}

uint64_t
NcclLl128Protocol::WireBytes(uint64_t payloadBytes) const
{
    return LineBytes(payloadBytes, 120, 128);
}

TypeId
NcclSimpleProtocol::GetTypeId()
{
    static TypeId tid = AddCostAttributes(TypeId("ns3::NcclSimpleProtocol")
                                              .SetParent<NcclProtocol>()
                                              .SetGroupName("AiFabric")
                                              .AddConstructor<NcclSimpleProtocol>(),
                                          kSimpleCosts);
    return tid;
}

NcclProtocolId
NcclSimpleProtocol::GetId() const
{
    return NcclProtocolId::Simple;
}

uint64_t
NcclSimpleProtocol::WireBytes(uint64_t payloadBytes) const
{
    return payloadBytes;
}

} // namespace ns3
