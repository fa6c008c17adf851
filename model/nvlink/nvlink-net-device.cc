/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "nvlink-net-device.h"

#include "nvlink-header.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <array>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NvLinkNetDevice");

NS_OBJECT_ENSURE_REGISTERED(NvLinkNetDevice);

namespace
{

constexpr uint64_t kGbytePerS = 8'000'000'000ULL; // one GB/s in bit/s

// NVIDIA NVLink product pages and the NVLink Switch SGXLS10 manual:
// 25 GB/s per link and direction for NVLink 2-4, 50 GB/s for
// NVLink 5; NVLink 4/5 signal at 26.5625 / 53.125 GB/s (PAM4 + FEC, 0.941).
// NVLink 2/3 raw rates are not in our sources: data rate taken as the signalling
// rate.  NVSwitch ports: gen1 18 (DGX-2), gen2 36 (DGX A100), gen3 64 NVLink4
// (DGX H100, Hot Chips 34), gen4 72 NVLink5 (GB200 NVL72).
const std::array<NvLinkGeneration, 4> kGenerations{{
    {2, 25 * kGbytePerS, 25 * kGbytePerS, 6, 1, 18},
    {3, 25 * kGbytePerS, 25 * kGbytePerS, 12, 2, 36},
    {4, 25 * kGbytePerS, 212'500'000'000ULL, 18, 3, 64},
    {5, 50 * kGbytePerS, 425'000'000'000ULL, 18, 4, 72},
}};

} // namespace

std::string
CheckNvLinkGeneration(uint32_t generation)
{
    if (generation < 2 || generation > 5)
    {
        std::ostringstream os;
        os << "NVLink generation " << generation << " is not modelled; valid: 2, 3, 4, 5";
        return os.str();
    }
    return "";
}

const NvLinkGeneration&
GetNvLinkGeneration(uint32_t generation)
{
    const std::string error = CheckNvLinkGeneration(generation);
    NS_ABORT_MSG_IF(!error.empty(), error);
    return kGenerations[generation - 2];
}

TypeId
NvLinkNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvLinkNetDevice")
            .SetParent<CreditLinkNetDevice>()
            .SetGroupName("AiFabric")
            .AddConstructor<NvLinkNetDevice>()
            .AddAttribute("Generation",
                          "NVLink generation 2-5: per-link rate and line-coding efficiency",
                          UintegerValue(4),
                          MakeUintegerAccessor(&NvLinkNetDevice::SetGeneration,
                                               &NvLinkNetDevice::GetGeneration),
                          MakeUintegerChecker<uint32_t>(2, 5))
            .AddAttribute(
                "Links",
                "NVLink links in this bundle; the device runs at Links x link rate",
                UintegerValue(1),
                MakeUintegerAccessor(&NvLinkNetDevice::SetLinks, &NvLinkNetDevice::GetLinks),
                MakeUintegerChecker<uint32_t>(1, 64))
            // NVLink's packet format is not public [unconfirmed]: 16 B of header and
            // CRC per 256 B of payload is our assumption (payload efficiency 0.941).
            .AddAttribute("HeaderBytes",
                          "Wire bytes of header/CRC per real NVLink packet (>= the 16-byte "
                          "NvLinkHeader a simulated packet carries)",
                          UintegerValue(16),
                          MakeUintegerAccessor(&NvLinkNetDevice::m_headerBytes),
                          MakeUintegerChecker<uint32_t>(NvLinkHeader::SIZE_BYTES))
            .AddAttribute("MaxPayloadBytes",
                          "Payload bytes of one real NVLink packet",
                          UintegerValue(256),
                          MakeUintegerAccessor(&NvLinkNetDevice::m_maxPayloadBytes),
                          MakeUintegerChecker<uint32_t>(1))
            // Default from the measurement in doc/nvlink.md: at 4 KiB a 1 GiB transfer
            // ends within 0.01% and a 1 MiB one within 2% of 256-B packets, with 1/16
            // of the events; 64 KiB bursts distort transfers of a few MiB.
            .AddAttribute("Granularity",
                          "Payload bytes one simulated packet carries (event granularity)",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&NvLinkNetDevice::m_granularityBytes),
                          MakeUintegerChecker<uint32_t>(1, 1 << 24))
            // 64 KiB: a 64 MiB transfer takes 1/16 of the 4 KiB events while its
            // store-and-forward fill stays ~0.5 us per switch (granularity-bench);
            // 1/16 of the 1 MiB buffers NvLinkHelper gives every VC.  Transport
            // planes also keep bursts within each device's queue and peer buffer.
            .AddAttribute("MaxBurstBytes",
                          "Largest payload of one simulated packet a transport may send for "
                          "a bulk message (several Granularity units; header overhead is "
                          "still charged per real packet); <= Granularity disables bursts",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&NvLinkNetDevice::m_maxBurstBytes),
                          MakeUintegerChecker<uint32_t>(1, 1 << 24));
    return tid;
}

NvLinkNetDevice::NvLinkNetDevice()
    : m_generation(4),
      m_links(1),
      m_headerBytes(16),
      m_maxPayloadBytes(256),
      m_granularityBytes(4096),
      m_maxBurstBytes(64 * 1024),
      m_constructed(false)
{
    NS_LOG_FUNCTION(this);
}

void
NvLinkNetDevice::NotifyConstructionCompleted()
{
    NS_LOG_FUNCTION(this);
    // Base attributes are set after ours (derived TypeIds first): apply the rate last.
    CreditLinkNetDevice::NotifyConstructionCompleted();
    m_constructed = true;
    ApplyRate();
}

void
NvLinkNetDevice::ApplyRate()
{
    if (!m_constructed)
    {
        return;
    }
    const NvLinkGeneration& g = GetNvLinkGeneration(m_generation);
    const double efficiency =
        static_cast<double>(g.linkDataRateBps) / static_cast<double>(g.linkSignallingBps);
    NS_LOG_LOGIC("NVLink " << m_generation << " x" << m_links << ": "
                           << g.linkSignallingBps * m_links << " bps signalling, efficiency "
                           << efficiency);
    SetAttribute("DataRate", DataRateValue(DataRate(g.linkSignallingBps * m_links)));
    SetAttribute("EncodingEfficiency", DoubleValue(efficiency));
}

void
NvLinkNetDevice::SetGeneration(uint32_t generation)
{
    NS_LOG_FUNCTION(this << generation);
    m_generation = generation;
    ApplyRate();
}

void
NvLinkNetDevice::SetLinks(uint32_t links)
{
    NS_LOG_FUNCTION(this << links);
    m_links = links;
    ApplyRate();
}

uint32_t
NvLinkNetDevice::GetGeneration() const
{
    return m_generation;
}

uint32_t
NvLinkNetDevice::GetLinks() const
{
    return m_links;
}

uint32_t
NvLinkNetDevice::GetGranularityBytes() const
{
    return m_granularityBytes;
}

uint32_t
NvLinkNetDevice::GetMaxBurstBytes() const
{
    return std::max(m_granularityBytes, m_maxBurstBytes);
}

uint32_t
NvLinkNetDevice::GetMaxPayloadBytes() const
{
    return m_maxPayloadBytes;
}

uint32_t
NvLinkNetDevice::GetHeaderBytes() const
{
    return m_headerBytes;
}

double
NvLinkNetDevice::GetPayloadRateBps() const
{
    return static_cast<double>(GetClock().GetDataRateBps()) * m_maxPayloadBytes /
           (m_maxPayloadBytes + m_headerBytes);
}

uint32_t
NvLinkNetDevice::RealPackets(uint32_t payloadBytes) const
{
    return payloadBytes == 0 ? 1 : (payloadBytes + m_maxPayloadBytes - 1) / m_maxPayloadBytes;
}

uint32_t
NvLinkNetDevice::ClassifyVc(Ptr<const Packet> packet) const
{
    NvLinkHeader header;
    packet->PeekHeader(header);
    return header.vc;
}

uint16_t
NvLinkNetDevice::ExtractProtocol(Ptr<const Packet> packet) const
{
    NvLinkHeader header;
    packet->PeekHeader(header);
    return header.protocol;
}

CreditLinkNetDevice::BurstShape
NvLinkNetDevice::GetBurstShape(Ptr<const Packet> packet) const
{
    // The NvLinkHeader in the packet is the first real packet's; every real packet has
    // HeaderBytes on the wire.
    const uint32_t size = packet->GetSize();
    const uint32_t payload = size > NvLinkHeader::SIZE_BYTES ? size - NvLinkHeader::SIZE_BYTES : 0;
    return BurstShape{RealPackets(payload), m_headerBytes, NvLinkHeader::SIZE_BYTES};
}

uint32_t
NvLinkNetDevice::GetMaxPacketBytes() const
{
    return std::max<uint32_t>(GetMtu(), GetMaxBurstBytes() + NvLinkHeader::SIZE_BYTES);
}

} // namespace ns3
