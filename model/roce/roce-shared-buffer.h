/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_SHARED_BUFFER_H
#define AI_FABRIC_ROCE_SHARED_BUFFER_H

#include "ns3/object.h"
#include "ns3/priority-flow-control.h"

namespace ns3
{

/**
 * \ingroup ai-fabric
 * A switch's shared packet buffer with dynamic thresholds (Choudhury and Hahne, "Dynamic
 * Queue Length Thresholds for Shared-Memory Packet Switches", IEEE/ACM ToN 1998): an ingress
 * queue may hold up to Alpha x (SizeBytes - bytes held by all queues).  With N queues
 * congested together each settles at Alpha S / (1 + N Alpha), so a lone congested queue
 * gets more of the buffer than one of many, and some buffer always stays free.
 */
class RoceSharedBuffer : public Object
{
  public:
    static TypeId GetTypeId();
    RoceSharedBuffer();

    uint64_t GetSizeBytes() const;
    uint64_t GetUsedBytes() const;
    uint64_t GetPeakUsedBytes() const;
    /// Alpha x free bytes: what one queue may hold now.
    uint64_t GetThresholdBytes() const;
    void Add(int64_t delta);

  private:
    uint64_t m_size;
    double m_alpha;
    uint64_t m_used{0};
    uint64_t m_peak{0};
};

/**
 * \ingroup ai-fabric
 * PFC on a port of a shared-buffer switch: XOFF when an ingress queue reaches the dynamic
 * threshold (instead of a static one), XON one XonOffsetBytes below it, and a queue may
 * exceed the threshold by its headroom (what is already on the cable when XOFF leaves).
 * Lossy: a packet above the dynamic threshold is dropped.  Set the ports'
 * ReceiveBufferBytes to the buffer's size (the most one queue could ever hold).
 */
class RoceSharedBufferFlowControl : public PriorityFlowControl
{
  public:
    static TypeId GetTypeId();

    void SetBuffer(Ptr<RoceSharedBuffer> buffer);
    Ptr<RoceSharedBuffer> GetBuffer() const;
    std::string Validate(const CreditLinkNetDevice* device) const override;

  protected:
    void DoDispose() override;
    uint64_t GetLimitBytes(uint32_t vc) const override;
    uint64_t GetXoffNow(uint32_t vc) const override;
    uint64_t GetXonNow(uint32_t vc) const override;
    void NotifyOccupancy(int64_t delta) override;

  private:
    Ptr<RoceSharedBuffer> m_buffer;
    mutable uint64_t m_headroom{0};
};

} // namespace ns3

#endif
