/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/collective-cost-model.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

CollectiveCostModel::CollectiveCostModel(double alphaSeconds, double betaSecondsPerByte)
    : m_alpha(alphaSeconds),
      m_beta(betaSecondsPerByte)
{
}

CollectiveCostModel
CollectiveCostModel::FromLink(DataRate signallingRate,
                              double encodingEfficiency,
                              uint32_t payloadBytesPerPacket,
                              uint32_t overheadBytesPerPacket,
                              Time softwareLatency,
                              uint32_t hops,
                              Time propagationPerHop,
                              Time switchLatency,
                              uint32_t cutThroughBytes)
{
    const double wireBytesPerSecond = signallingRate.GetBitRate() * encodingEfficiency / 8.0;
    const double packetWire = payloadBytesPerPacket + overheadBytesPerPacket;
    const double beta = packetWire / payloadBytesPerPacket / wireBytesPerSecond;
    const uint32_t switches = hops > 0 ? hops - 1 : 0;
    const double waitBytes = cutThroughBytes == 0 ? packetWire : cutThroughBytes;
    const double alpha = softwareLatency.GetSeconds() + hops * propagationPerHop.GetSeconds() +
                         switches * (switchLatency.GetSeconds() + waitBytes / wireBytesPerSecond);
    return CollectiveCostModel(alpha, beta);
}

double
CollectiveCostModel::Alpha() const
{
    return m_alpha;
}

double
CollectiveCostModel::Beta() const
{
    return m_beta;
}

double
CollectiveCostModel::RingAllReduce(uint32_t p, double n) const
{
    return 2.0 * (p - 1) * m_alpha + 2.0 * (p - 1) / p * n * m_beta;
}

double
CollectiveCostModel::RingAllGather(uint32_t p, double n) const
{
    return (p - 1) * m_alpha + double(p - 1) / p * n * m_beta;
}

double
CollectiveCostModel::RingReduceScatter(uint32_t p, double n) const
{
    return RingAllGather(p, n);
}

double
CollectiveCostModel::HalvingDoublingAllReduce(uint32_t p, double n) const
{
    uint32_t q = 1;
    uint32_t steps = 0;
    while (q * 2 <= p)
    {
        q *= 2;
        ++steps;
    }
    double t = 2.0 * steps * m_alpha + 2.0 * (q - 1) / q * n * m_beta;
    if (q != p)
    {
        t += 2.0 * (m_alpha + n * m_beta);
    }
    return t;
}

double
CollectiveCostModel::TreeAllReduce(uint32_t p, double n) const
{
    return 2.0 * std::log2(double(p)) * (m_alpha + n * m_beta);
}

double
CollectiveCostModel::DoubleBinaryTreeAllReduce(uint32_t depth, double n, double chunkBytes) const
{
    const double c = std::min(chunkBytes, n / 2);
    return 2.0 * depth * (m_alpha + 2.0 * c * m_beta) + (2.0 * n - 4.0 * c) * m_beta;
}

double
CollectiveCostModel::AllToAll(uint32_t p, double n) const
{
    return (p - 1) * (m_alpha + n / p * m_beta);
}

double
CollectiveCostModel::ChainBroadcast(uint32_t p, double n, double chunkBytes) const
{
    const double c = std::min(chunkBytes, n);
    const double k = std::ceil(n / c);
    return (p - 1) * (m_alpha + c * m_beta) + (k - 1) * c * m_beta;
}

double
CollectiveCostModel::HierarchicalAllReduce(const CollectiveCostModel& intra,
                                           const CollectiveCostModel& inter,
                                           uint32_t ranksPerDomain,
                                           uint32_t numDomains,
                                           double n)
{
    return intra.RingReduceScatter(ranksPerDomain, n) +
           inter.RingAllReduce(numDomains, n / ranksPerDomain) +
           intra.RingAllGather(ranksPerDomain, n);
}

double
CollectiveCostModel::PipelinedHierarchicalAllReduce(const CollectiveCostModel& intra,
                                                    const CollectiveCostModel& inter,
                                                    uint32_t ranksPerDomain,
                                                    uint32_t numDomains,
                                                    double n,
                                                    double sliceBytes)
{
    const uint32_t l = ranksPerDomain;
    const double k = std::max(1.0, std::ceil(n / sliceBytes));
    auto intraTime = [&](double bytes) {
        return intra.RingReduceScatter(l, bytes) + intra.RingAllGather(l, bytes);
    };
    auto interTime = [&](double bytes) { return inter.RingAllReduce(numDomains, bytes / l); };
    return std::max(intraTime(n), interTime(n) + intraTime(n / k));
}

double
CollectiveCostModel::RingAllReduceAcrossDomains(const CollectiveCostModel& intra,
                                                const CollectiveCostModel& inter,
                                                uint32_t p,
                                                uint32_t ranksPerDomain,
                                                uint32_t numChannels,
                                                double n)
{
    const uint32_t c = std::max<uint32_t>(numChannels, 1);
    const uint32_t l = ranksPerDomain;
    const double crossing = (c + l - 1) / l; // ceil(C/L) channels leave by one HCA
    const double staying = c - c / l;        // the others' hops on NVLink
    const double domains = double(p) / l;
    const double perHop = 2.0 * (p - 1) / p * n / c;
    const double fill =
        2.0 * (p - 1) / p * ((p - domains) * intra.Alpha() + domains * inter.Alpha());
    return fill + perHop * std::max(crossing * inter.Beta(), staying * intra.Beta());
}

} // namespace ns3
