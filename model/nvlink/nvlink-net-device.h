/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_NET_DEVICE_H
#define AI_FABRIC_NVLINK_NET_DEVICE_H

// Complete types for the base class's implicit destructor (its Ptr members).
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-link-watchdog.h"
#include "ns3/credit-switch.h"
#include "ns3/node.h"

#include <cstdint>
#include <string>

namespace ns3
{

/// Per-generation NVLink figures (NVIDIA NVLink product pages, NVLink Switch manual).
struct NvLinkGeneration
{
    uint32_t generation;        //!< NVLink 2..5
    uint64_t linkDataRateBps;   //!< per link and direction, after line coding
    uint64_t linkSignallingBps; //!< per link and direction, raw
    uint32_t linksPerGpu;       //!< V100 6, A100 12, H100 18, B200 18
    uint32_t switchGeneration;  //!< NVSwitch generation built for this NVLink
    uint32_t switchPorts;       //!< NVLink ports of that NVSwitch
};

/// The figures of NVLink \p generation (2..5); aborts on another value.
const NvLinkGeneration& GetNvLinkGeneration(uint32_t generation);
/// Empty, or why \p generation is not an NVLink generation.
std::string CheckNvLinkGeneration(uint32_t generation);

/**
 * \ingroup ai-fabric
 * One GPU<->switch (or GPU<->GPU) connection: a bundle of Links NVLink links
 * modelled as one credit link at Links x the per-link rate (the hardware
 * stripes a transfer over the bundle's links, so one queue per bundle is its
 * ideal form).  Generation and Links set the base DataRate and
 * EncodingEfficiency.
 *
 * One simulated packet carries Granularity payload bytes plus a 16-byte
 * NvLinkHeader; it stands for ceil(payload / MaxPayloadBytes) real packets,
 * each charged HeaderBytes on the wire, so bandwidth efficiency
 * (MaxPayloadBytes / (MaxPayloadBytes + HeaderBytes)) does not depend on the
 * granularity.  Credits charge the simulated packet's bytes.  A transport may
 * send larger packets, up to MaxBurstBytes (adaptive bursts for bulk messages,
 * GpuTransport's MinPacketsPerMessage), charged the same way.
 */
class NvLinkNetDevice : public CreditLinkNetDevice
{
  public:
    static TypeId GetTypeId();
    NvLinkNetDevice();

    uint32_t GetGeneration() const;
    uint32_t GetLinks() const;
    uint32_t GetGranularityBytes() const;
    /// Largest payload of one simulated packet: max(Granularity, MaxBurstBytes).
    uint32_t GetMaxBurstBytes() const;
    uint32_t GetMaxPayloadBytes() const;
    uint32_t GetHeaderBytes() const;
    /// Payload rate of the bundle: data rate x MaxPayload / (MaxPayload + Header).
    double GetPayloadRateBps() const;
    /// Real NVLink packets a simulated one of \p payloadBytes stands for.
    uint32_t RealPackets(uint32_t payloadBytes) const;

  protected:
    void NotifyConstructionCompleted() override;
    uint32_t ClassifyVc(Ptr<const Packet> packet) const override;
    uint16_t ExtractProtocol(Ptr<const Packet> packet) const override;
    BurstShape GetBurstShape(Ptr<const Packet> packet) const override;
    uint32_t GetMaxPacketBytes() const override;

  private:
    void SetGeneration(uint32_t generation);
    void SetLinks(uint32_t links);
    void ApplyRate();

    uint32_t m_generation;
    uint32_t m_links;
    uint32_t m_headerBytes;
    uint32_t m_maxPayloadBytes;
    uint32_t m_granularityBytes;
    uint32_t m_maxBurstBytes;
    bool m_constructed;
};

} // namespace ns3

#endif
