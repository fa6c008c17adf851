/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NCCL_PROTOCOL_H
#define AI_FABRIC_NCCL_PROTOCOL_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>

namespace ns3
{

/// NCCL's three wire protocols, in NCCL's order (src/include/device.h NCCL_PROTO_*).
enum class NcclProtocolId : uint8_t
{
    Ll,
    Ll128,
    Simple,
};

constexpr uint32_t kNcclNumProtocols = 3;

/// "ll", "ll128", "simple": the collectives row's protocol column.
const char* NcclProtocolName(NcclProtocolId id);
/// Case-insensitive: LL, LL128, Simple.  false for anything else.
bool ParseNcclProtocol(const std::string& text, NcclProtocolId* id);

/**
 * \ingroup ai-fabric
 * What one NCCL protocol costs a GPU endpoint, as a strategy (NcclLlProtocol,
 * NcclLl128Protocol, NcclSimpleProtocol).  The protocols differ in how data travels:
 * LL writes 8-byte lines of 4 data bytes and a 4-byte flag, so the receiver polls
 * memory instead of waiting for a fence (low latency, half the wire rate); LL128 the
 * same with 128-byte lines holding 120 data bytes; Simple moves plain data and
 * synchronises each step with a memory fence and a flag (full rate, a few microseconds
 * per step).  Latency and bandwidth figures are NCCL's own performance model
 * (src/graph/tuning.cc: baseLatencies, hwLatencies, perChMax*Bws, llMaxBws), which
 * NVIDIA fitted to its hardware; the simulator charges them as mechanisms:
 *  - BaseLatency once per collective (kernel launch and set-up),
 *  - a hop latency before every message (one pipeline step through GPU memory),
 *    NVLink or network according to the plane the message takes,
 *  - WireBytes: the message grows by the flags of its line format,
 *  - ChannelBandwidth: one channel (one thread block) copies or reduces at most
 *    this fast, and MaxBandwidth: all channels of a rank together.
 */
class NcclProtocol : public Object
{
  public:
    static TypeId GetTypeId();
    NcclProtocol();

    virtual NcclProtocolId GetId() const = 0;
    /// Bytes on the wire for \p payloadBytes of data in this protocol's line format.
    virtual uint64_t WireBytes(uint64_t payloadBytes) const = 0;

    /// Wire efficiency of the line format: data bytes per line / line bytes.
    double GetWireEfficiency() const;
    Time GetRingBaseLatency() const;
    Time GetTreeBaseLatency() const;
    /// Per-step latency of a ring (or chain) hop over NVLink / the network.
    Time GetRingNvlinkHopLatency() const;
    Time GetRingNetHopLatency() const;
    Time GetTreeNvlinkHopLatency() const;
    Time GetTreeNetHopLatency() const;
    /// GB/s; 0 = no limit.
    double GetRingChannelBandwidth_gbyte_per_s() const;
    /// NCCL's per-channel tree cap, per node count as its tables (one node, two, more).
    double GetTreeChannelBandwidth_gbyte_per_s(uint32_t nodes) const;
    /// NCCL's threads per channel and per-thread threshold (enqueue.cc channel tuning).
    uint32_t GetThreadsPerChannel() const;
    uint32_t GetThreadThresholdBytes() const;
    /// Bytes of a ring/chain piece: the unit the simulator stores and forwards per hop.
    uint64_t GetChunkBytes() const;
    /// Data one round of a channel's threads passes on in a chain (0: whole slices only).
    uint64_t GetForwardBytes() const;

    /// The cost figures of a protocol; each subclass declares them as its own attributes
    /// (AddCostAttributes) so that each has its own NCCL defaults.
    struct Costs
    {
        double ringBase_us;
        double treeBase_us;
        double ringNvlinkHop_us;
        double ringNetHop_us;
        double treeNvlinkHop_us;
        double treeNetHop_us;
        double ringChannel_gbyte_per_s;
        double treeChannel_gbyte_per_s;
        double treeChannelN2_gbyte_per_s;
        double treeChannelN4_gbyte_per_s;
        double max_gbyte_per_s;
        double maxNet_gbyte_per_s;
        double maxNetN4_gbyte_per_s;
        uint32_t threads;
        uint32_t threadThreshold;
        uint64_t chunkBytes;
        uint64_t forwardBytes;
    };

    /// GB/s a rank's channels reach together in this protocol on \p nodes nodes; 0 = no limit.
    double GetMaxBandwidth_gbyte_per_s(uint32_t nodes) const;

  protected:
    static TypeId AddCostAttributes(TypeId tid, const Costs& defaults);

    /// Line format: \p lineBytes per line, of which \p dataBytes are data.
    static uint64_t LineBytes(uint64_t payloadBytes, uint32_t dataBytes, uint32_t lineBytes);

    Time m_ringBase;
    Time m_treeBase;
    Time m_ringNvlinkHop;
    Time m_ringNetHop;
    Time m_treeNvlinkHop;
    Time m_treeNetHop;
    double m_ringChannel_gbyte_per_s;
    double m_treeChannel_gbyte_per_s;
    double m_treeChannelN2_gbyte_per_s;
    double m_treeChannelN4_gbyte_per_s;
    double m_max_gbyte_per_s;
    double m_maxNet_gbyte_per_s;
    double m_maxNetN4_gbyte_per_s;
    uint32_t m_threads;
    uint32_t m_threadThreshold;
    uint64_t m_chunkBytes;
    uint64_t m_forwardBytes;
};

/// LL: 16-byte FIFO lines of two 4-byte data words, each with its 4-byte flag
/// (src/device/prims_ll.h, union ncclLLFifoLine): half the wire rate.
class NcclLlProtocol : public NcclProtocol
{
  public:
    static TypeId GetTypeId();
    NcclProtocolId GetId() const override;
    uint64_t WireBytes(uint64_t payloadBytes) const override;
};

/// LL128: 128-byte lines of which 8 bytes are a flag (src/device/prims_ll128.h,
/// NCCL_LL128_LINEELEMS / NCCL_LL128_DATAELEMS: 16 and 15 eight-byte words).
class NcclLl128Protocol : public NcclProtocol
{
  public:
    static TypeId GetTypeId();
    NcclProtocolId GetId() const override;
    uint64_t WireBytes(uint64_t payloadBytes) const override;
};

/// Simple: plain data, one fence and flag per step.
class NcclSimpleProtocol : public NcclProtocol
{
  public:
    static TypeId GetTypeId();
    NcclProtocolId GetId() const override;
    uint64_t WireBytes(uint64_t payloadBytes) const override;
};

} // namespace ns3

#endif
