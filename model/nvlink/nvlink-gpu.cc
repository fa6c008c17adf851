/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "nvlink-gpu.h"

#include "ns3/abort.h"
#include "ns3/link-stripe.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NvLinkGpu");

NS_OBJECT_ENSURE_REGISTERED(NvLinkGpu);

TypeId
NvLinkGpu::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::NvLinkGpu")
            .SetParent<Object>()
            .SetGroupName("AiFabric")
            .AddConstructor<NvLinkGpu>()
            .AddAttribute("GpuId",
                          "Id of this GPU in its NVLink domain (the switches route on it)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&NvLinkGpu::m_gpuId),
                          MakeUintegerChecker<uint32_t>(0, 0xfffe))
            .AddAttribute("Vc",
                          "Virtual channel the GPU sends on",
                          UintegerValue(0),
                          MakeUintegerAccessor(&NvLinkGpu::m_vc),
                          MakeUintegerChecker<uint32_t>(0, 31))
            .AddTraceSource("NvlsChunkReceived",
                            "A reduced NVLS chunk arrived: (group, chunk, payload bytes)",
                            MakeTraceSourceAccessor(&NvLinkGpu::m_nvlsChunkTrace),
                            "ns3::NvLinkGpu::NvlsChunkTracedCallback");
    return tid;
}

NvLinkGpu::NvLinkGpu()
    : m_gpuId(0),
      m_vc(0),
      m_pendingBytes(0),
      m_blockedDevice(0),
      m_pumping(false),
      m_packetRefused(false),
      m_transferNext(false),
      m_unclaimed(0)
{
    NS_LOG_FUNCTION(this);
}

void
NvLinkGpu::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_devices.clear();
    m_nvlsOps.clear();
    m_earlyChunks.clear();
    m_blockedPacket = nullptr;
    m_packetReceived = PacketReceivedCallback();
    m_packetTxReady = PacketTxReadyCallback();
    Object::DoDispose();
}

uint32_t
NvLinkGpu::GetGpuId() const
{
    return m_gpuId;
}

void
NvLinkGpu::AddDevice(Ptr<NvLinkNetDevice> device, uint32_t peerGpu)
{
    NS_LOG_FUNCTION(this << device << peerGpu);
    m_devices.push_back(device);
    m_peers.push_back(peerGpu);
    device->SetTxReadyCallback(MakeCallback(&NvLinkGpu::TxReady, this));
    device->SetReceiveCallback(MakeCallback(&NvLinkGpu::Receive, this));
    RebuildSprays();
}

uint32_t
NvLinkGpu::GetNDevices() const
{
    return static_cast<uint32_t>(m_devices.size());
}

Ptr<NvLinkNetDevice>
NvLinkGpu::GetDevice(uint32_t i) const
{
    return m_devices.at(i);
}

uint32_t
NvLinkGpu::GetGranularityBytes() const
{
    NS_ABORT_MSG_IF(m_devices.empty(), "NvLinkGpu " << m_gpuId << " has no NVLink device");
    return m_devices[0]->GetGranularityBytes();
}

uint32_t
NvLinkGpu::GetMaxBurstBytes() const
{
    NS_ABORT_MSG_IF(m_devices.empty(), "NvLinkGpu " << m_gpuId << " has no NVLink device");
    return m_devices[0]->GetMaxBurstBytes();
}

uint64_t
NvLinkGpu::GetPendingBytes() const
{
    return m_pendingBytes;
}

uint64_t
NvLinkGpu::GetUnclaimedChunks() const
{
    return m_unclaimed;
}

void
NvLinkGpu::BuildSpray(Spray& spray,
                      const std::vector<uint32_t>& devices,
                      const std::vector<uint32_t>& weights)
{
    // Smooth weighted round-robin (as in nginx): each plane's turns are spread
    // evenly over the cycle of sum(weights) packets instead of coming in runs.
    spray.sequence.clear();
    spray.next = 0;
    uint64_t total = 0;
    for (uint32_t w : weights)
    {
        total += w;
    }
    std::vector<int64_t> current(devices.size(), 0);
    for (uint64_t step = 0; step < total; ++step)
    {
        std::size_t best = 0;
        for (std::size_t i = 0; i < devices.size(); ++i)
        {
            current[i] += weights[i];
            if (current[i] > current[best])
            {
                best = i;
            }
        }
        current[best] -= static_cast<int64_t>(total);
        spray.sequence.push_back(devices[best]);
    }
}

void
NvLinkGpu::RebuildSprays()
{
    NS_LOG_FUNCTION(this);
    std::vector<uint32_t> devices;
    std::vector<uint32_t> weights;
    uint32_t maxPeer = 0;
    for (uint32_t i = 0; i < m_devices.size(); ++i)
    {
        if (m_peers[i] == NO_PEER)
        {
            devices.push_back(i);
            weights.push_back(m_devices[i]->GetLinks());
        }
        else
        {
            maxPeer = std::max(maxPeer, m_peers[i] + 1);
        }
    }
    BuildSpray(m_switchSpray, devices, weights);
    m_planeDevices = devices;
    m_planeLinks = weights;
    m_planeLinksTotal = 0;
    for (uint32_t w : weights)
    {
        m_planeLinksTotal += w;
    }
    m_directSpray.assign(maxPeer, Spray());
    m_directDevices.assign(maxPeer, {});
    m_directLinks.assign(maxPeer, {});
    for (uint32_t peer = 0; peer < maxPeer; ++peer)
    {
        devices.clear();
        weights.clear();
        for (uint32_t i = 0; i < m_devices.size(); ++i)
        {
            if (m_peers[i] == peer)
            {
                devices.push_back(i);
                weights.push_back(m_devices[i]->GetLinks());
            }
        }
        BuildSpray(m_directSpray[peer], devices, weights);
        m_directDevices[peer] = devices;
        m_directLinks[peer] = weights;
    }
    NS_LOG_LOGIC("GPU " << m_gpuId << ": " << m_devices.size() << " devices, switch spray of "
                        << m_switchSpray.sequence.size() << " turns, direct bundles to " << maxPeer
                        << " GPU ids");
}

uint32_t
NvLinkGpu::PlaneForChunk(uint32_t chunk) const
{
    NS_ABORT_MSG_IF(m_switchSpray.sequence.empty(),
                    "NvLinkGpu " << m_gpuId << " has no switch plane (NVLS needs NVSwitches)");
    return m_switchSpray.sequence[chunk % m_switchSpray.sequence.size()];
}

uint32_t
NvLinkGpu::StartTransfer(Transfer&& t)
{
    uint32_t index;
    if (m_freeTransfers.empty())
    {
        index = static_cast<uint32_t>(m_transfers.size());
        m_transfers.push_back(t);
    }
    else
    {
        index = m_freeTransfers.back();
        m_freeTransfers.pop_back();
        m_transfers[index] = t;
    }
    m_pendingBytes += t.remaining;
    m_active.push_back(index);
    Pump();
    return index;
}

bool
NvLinkGpu::Direct(uint32_t dstGpu) const
{
    return dstGpu < m_directSpray.size() && !m_directSpray[dstGpu].sequence.empty();
}

bool
NvLinkGpu::HasPath(uint32_t dstGpu) const
{
    return Direct(dstGpu) || !m_switchSpray.sequence.empty();
}

uint32_t
NvLinkGpu::NextDataDevice(uint32_t dstGpu)
{
    Spray& spray = Direct(dstGpu) ? m_directSpray[dstGpu] : m_switchSpray;
    const uint32_t device = spray.sequence[spray.next];
    spray.next = (spray.next + 1) % spray.sequence.size();
    return device;
}

uint32_t
NvLinkGpu::NvlsPackets(uint32_t firstChunk, uint64_t bytes, uint32_t& packetBytes) const
{
    NS_ABORT_MSG_IF(bytes == 0, "NvLinkGpu: NVLS transfer of 0 bytes");
    PlaneForChunk(firstChunk); // aborts without switch planes
    if (packetBytes == PACKETS_PER_PLANE)
    {
        if (bytes >= m_planeLinksTotal)
        {
            const uint64_t packets =
                static_cast<uint64_t>(PlaneRounds(bytes)) * m_planeDevices.size();
            NS_ABORT_MSG_IF(packets > std::numeric_limits<uint32_t>::max() - firstChunk,
                            "NvLinkGpu: NVLS chunk ids overflow");
            return static_cast<uint32_t>(packets);
        }
        packetBytes = 0;
    }
    const uint64_t unit = packetBytes == 0 ? GetGranularityBytes() : packetBytes;
    NS_ABORT_MSG_IF(unit > GetMaxBurstBytes(),
                    "NvLinkGpu: NVLS " << unit << "-byte packets > MaxBurstBytes "
                                       << GetMaxBurstBytes());
    const uint64_t chunks = (bytes + unit - 1) / unit;
    NS_ABORT_MSG_IF(chunks > std::numeric_limits<uint32_t>::max() - firstChunk,
                    "NvLinkGpu: NVLS chunk ids overflow");
    packetBytes = static_cast<uint32_t>(unit);
    return static_cast<uint32_t>(chunks);
}

uint32_t
NvLinkGpu::GetNvlsPacketCount(uint64_t bytes, uint32_t packetBytes) const
{
    return NvlsPackets(0, bytes, packetBytes);
}

uint32_t
NvLinkGpu::PlaneRounds(uint64_t bytes) const
{
    return StripeRounds(bytes, m_planeLinks, m_planeLinksTotal, GetMaxBurstBytes());
}

uint32_t
NvLinkGpu::PlanePacketBytes(uint64_t bytes, uint32_t index) const
{
    return StripePacketBytes(bytes, m_planeLinks, m_planeLinksTotal, PlaneRounds(bytes), index);
}

uint32_t
NvLinkGpu::StartNvls(NvLinkHeader::Type type,
                     uint16_t destination,
                     uint32_t groupId,
                     uint32_t firstChunk,
                     uint64_t bytes,
                     uint32_t packetBytes)
{
    const uint32_t chunks = NvlsPackets(firstChunk, bytes, packetBytes);
    Transfer t;
    t.type = type;
    t.destination = destination;
    t.group = groupId;
    t.nextChunk = firstChunk;
    t.packets = chunks;
    t.packetBytes = packetBytes;
    t.remaining = bytes;
    t.bytes = bytes;
    StartTransfer(std::move(t));
    return chunks;
}

uint32_t
NvLinkGpu::NvlsReduce(uint32_t groupId,
                      uint32_t firstChunk,
                      uint64_t bytes,
                      NvlsDoneCallback done,
                      uint32_t packetBytes,
                      uint16_t owner,
                      NvlsPacketCallback packetDone)
{
    NS_LOG_FUNCTION(this << groupId << firstChunk << bytes << packetBytes << owner);
    const bool returns = owner == NvLinkHeader::ALL_MEMBERS || owner == m_gpuId;
    NS_ABORT_MSG_IF(!returns && !done.IsNull(),
                    "NvLinkGpu::NvlsReduce: GPU " << m_gpuId << " gets nothing back of a "
                                                  << "reduction for GPU " << owner);
    NS_ABORT_MSG_IF(!returns && !packetDone.IsNull(),
                    "NvLinkGpu::NvlsReduce: GPU " << m_gpuId << " gets no packet back");
    if (returns)
    {
        NvlsExpect(groupId, firstChunk, bytes, packetBytes, done);
        if (!packetDone.IsNull())
        {
            // Nothing of a reduction comes before this member's own contribution is in.
            NS_ASSERT(!m_nvlsOps.empty() && m_nvlsOps.back().firstChunk == firstChunk);
            m_nvlsOps.back().packetDone = packetDone;
        }
    }
    return StartNvls(owner == NvLinkHeader::ALL_MEMBERS ? NvLinkHeader::NVLS_REDUCE
                                                        : NvLinkHeader::NVLS_LD_REDUCE,
                     owner,
                     groupId,
                     firstChunk,
                     bytes,
                     packetBytes);
}

uint32_t
NvLinkGpu::NvlsStore(uint32_t groupId, uint32_t firstChunk, uint64_t bytes, uint32_t packetBytes)
{
    NS_LOG_FUNCTION(this << groupId << firstChunk << bytes << packetBytes);
    return StartNvls(NvLinkHeader::NVLS_STORE,
                     NvLinkHeader::ALL_MEMBERS,
                     groupId,
                     firstChunk,
                     bytes,
                     packetBytes);
}

void
NvLinkGpu::NvlsStorePacket(uint32_t groupId, uint32_t chunk, uint32_t bytes, uint32_t plane)
{
    NS_LOG_FUNCTION(this << groupId << chunk << bytes << plane);
    NS_ABORT_MSG_IF(bytes == 0 || bytes > GetMaxBurstBytes() || m_planeDevices.empty(),
                    "NvLinkGpu::NvlsStorePacket: " << bytes << " B on GPU " << m_gpuId);
    Transfer t;
    t.type = NvLinkHeader::NVLS_STORE;
    t.destination = NvLinkHeader::ALL_MEMBERS;
    t.group = groupId;
    t.nextChunk = chunk;
    t.packets = 1;
    t.packetBytes = bytes;
    t.remaining = bytes;
    t.bytes = bytes;
    t.plane = plane % static_cast<uint32_t>(m_planeDevices.size());
    StartTransfer(std::move(t));
}

void
NvLinkGpu::NvlsExpect(uint32_t groupId,
                      uint32_t firstChunk,
                      uint64_t bytes,
                      uint32_t packetBytes,
                      NvlsDoneCallback done)
{
    const uint32_t chunks = NvlsPackets(firstChunk, bytes, packetBytes);
    uint32_t early = 0;
    for (uint32_t c = 0; c < chunks && !m_earlyChunks.empty(); ++c)
    {
        auto it = m_earlyChunks.find(static_cast<uint64_t>(groupId) << 32 | (firstChunk + c));
        if (it != m_earlyChunks.end())
        {
            ++early;
            --m_unclaimed;
            if (--it->second == 0)
            {
                m_earlyChunks.erase(it);
            }
        }
    }
    if (early == chunks)
    {
        NS_LOG_LOGIC("GPU " << m_gpuId << ": NVLS group " << groupId << " from chunk " << firstChunk
                            << " was all here already");
        if (!done.IsNull())
        {
            Simulator::ScheduleNow([done, groupId, firstChunk]() { done(groupId, firstChunk); });
        }
        return;
    }
    m_nvlsOps.push_back(NvlsOp{groupId, firstChunk, chunks, early, done, NvlsPacketCallback()});
}

void
NvLinkGpu::Pump()
{
    if (m_pumping)
    {
        return;
    }
    m_pumping = true;
    while (true)
    {
        if (m_blockedPacket)
        {
            if (!m_devices[m_blockedDevice]->SendOnVc(m_blockedPacket, m_vc))
            {
                break;
            }
            m_blockedPacket = nullptr;
        }
        // A refused SendPacket caller and the NVLS transfers alternate packet by packet.
        if (m_packetRefused && (m_active.empty() || !m_transferNext))
        {
            m_packetRefused = false;
            if (!m_packetTxReady.IsNull())
            {
                m_packetTxReady(m_gpuId); // may inject and block again: checked above
            }
            continue;
        }
        if (m_active.empty())
        {
            break;
        }
        m_transferNext = false;
        const uint32_t index = m_active.front();
        m_active.pop_front();
        Transfer& t = m_transfers[index];
        const bool perPlane = t.packetBytes == PACKETS_PER_PLANE;
        const auto payload =
            perPlane ? PlanePacketBytes(t.bytes, t.sent)
                     : static_cast<uint32_t>(std::min<uint64_t>(t.packetBytes, t.remaining));
        NvLinkHeader h;
        h.source = static_cast<uint16_t>(m_gpuId);
        h.type = t.type;
        h.vc = static_cast<uint8_t>(m_vc);
        h.tag = t.group;
        h.destination = t.destination; // read by the switch
        h.count = t.nextChunk;
        const uint32_t device = t.plane != NO_PEER ? m_planeDevices[t.plane]
                                : perPlane         ? m_planeDevices[t.sent % m_planeDevices.size()]
                                                   : PlaneForChunk(t.nextChunk);
        t.nextChunk++;
        t.remaining -= payload;
        t.sent++;
        m_pendingBytes -= payload;
        if (t.sent < t.packets)
        {
            m_active.push_back(index);
        }
        else
        {
            m_freeTransfers.push_back(index);
        }
        Ptr<Packet> packet = Create<Packet>(payload);
        packet->AddHeader(h);
        if (!m_devices[device]->SendOnVc(packet, m_vc))
        {
            NS_LOG_LOGIC("GPU " << m_gpuId << " waits for device " << device);
            m_blockedPacket = packet;
            m_blockedDevice = device;
            break;
        }
    }
    m_pumping = false;
}

const std::vector<uint32_t>&
NvLinkGpu::GetStripeLinks(uint32_t dstGpu) const
{
    return Direct(dstGpu) ? m_directLinks[dstGpu] : m_planeLinks;
}

const std::vector<uint32_t>&
NvLinkGpu::GetStripeDevices(uint32_t dstGpu) const
{
    return Direct(dstGpu) ? m_directDevices[dstGpu] : m_planeDevices;
}

bool
NvLinkGpu::SendPacket(uint32_t dstGpu, Ptr<Packet> payload, uint16_t protocol, uint32_t lane)
{
    NS_ABORT_MSG_IF(protocol == 0, "NvLinkGpu::SendPacket: protocol 0 is the unset header's");
    NS_ABORT_MSG_IF(dstGpu == m_gpuId || !HasPath(dstGpu),
                    "NvLinkGpu " << m_gpuId << " has no NVLink path to GPU " << dstGpu);
    NS_ABORT_MSG_IF(payload->GetSize() > GetMaxBurstBytes(),
                    "NvLinkGpu::SendPacket: " << payload->GetSize() << " B > MaxBurstBytes");
    // Outside Pump, active NVLS transfers imply a blocked packet, whose TxReady resumes
    // Pump; inside it, the loop resumes: a refusal here never loses the wake-up.
    if (m_blockedPacket || (m_transferNext && !m_active.empty()))
    {
        m_packetRefused = true;
        return false;
    }
    m_transferNext = true;
    NvLinkHeader h;
    h.destination = static_cast<uint16_t>(dstGpu);
    h.source = static_cast<uint16_t>(m_gpuId);
    h.type = NvLinkHeader::DATA;
    h.vc = static_cast<uint8_t>(m_vc);
    h.protocol = protocol;
    payload->AddHeader(h);
    uint32_t device;
    if (lane == NO_PEER)
    {
        device = NextDataDevice(dstGpu);
    }
    else
    {
        const std::vector<uint32_t>& lanes = GetStripeDevices(dstGpu);
        NS_ABORT_MSG_IF(lane >= lanes.size(),
                        "NvLinkGpu " << m_gpuId << ": lane " << lane << " of " << lanes.size()
                                     << " towards GPU " << dstGpu);
        device = lanes[lane];
    }
    if (!m_devices[device]->SendOnVc(payload, m_vc))
    {
        // Accepted: held like an NVLS transfer's blocked packet, which keeps the spray
        // order strict.
        m_blockedPacket = payload;
        m_blockedDevice = device;
    }
    return true;
}

void
NvLinkGpu::SetPacketReceivedCallback(PacketReceivedCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_packetReceived = cb;
}

void
NvLinkGpu::SetPacketTxReadyCallback(PacketTxReadyCallback cb)
{
    NS_LOG_FUNCTION(this);
    m_packetTxReady = cb;
}

void
NvLinkGpu::TxReady(Ptr<CreditLinkNetDevice> device, uint32_t vc)
{
    Pump();
}

bool
NvLinkGpu::Receive(Ptr<NetDevice> device,
                   Ptr<const Packet> packet,
                   uint16_t protocol,
                   const Address& from)
{
    NvLinkHeader h;
    packet->PeekHeader(h);
    const uint32_t payload = packet->GetSize() - NvLinkHeader::SIZE_BYTES;
    if (h.type == NvLinkHeader::DATA)
    {
        NS_ABORT_MSG_IF(h.destination != m_gpuId,
                        "NvLinkGpu " << m_gpuId << " got a packet for GPU " << h.destination);
        NS_ABORT_MSG_IF(h.protocol == 0 || m_packetReceived.IsNull(),
                        "NvLinkGpu " << m_gpuId << ": data packet of protocol " << h.protocol
                                     << " and no SendPacket receiver");
        m_packetReceived(h.source, packet, payload, h.protocol);
        return true;
    }
    NS_ABORT_MSG_IF(h.type != NvLinkHeader::NVLS_MULTICAST,
                    "NvLinkGpu " << m_gpuId << " got an NVLS reduce request");
    m_nvlsChunkTrace(h.tag, h.count, payload);
    for (auto it = m_nvlsOps.begin(); it != m_nvlsOps.end(); ++it)
    {
        if (it->group == h.tag && h.count - it->firstChunk < it->chunks)
        {
            if (!it->packetDone.IsNull())
            {
                // May start transfers (not NvlsExpect): the iterator stays valid.
                it->packetDone(h.count - it->firstChunk, payload);
            }
            if (++it->received == it->chunks)
            {
                NS_LOG_LOGIC("GPU " << m_gpuId << ": NVLS group " << it->group << " from chunk "
                                    << it->firstChunk << " reduced (" << it->chunks << " chunks)");
                const NvlsOp op = *it;
                m_nvlsOps.erase(it);
                if (!op.done.IsNull())
                {
                    op.done(op.group, op.firstChunk);
                }
            }
            return true;
        }
    }
    // Stored by a member ahead of this one: claimed by a later NvlsExpect.
    NS_LOG_LOGIC("GPU " << m_gpuId << ": NVLS chunk " << h.count << " of group " << h.tag
                        << " before its NvlsExpect");
    m_earlyChunks[static_cast<uint64_t>(h.tag) << 32 | h.count]++;
    m_unclaimed++;
    return true;
}

} // namespace ns3
