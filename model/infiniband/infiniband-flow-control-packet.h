/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_FLOW_CONTROL_PACKET_H
#define AI_FABRIC_INFINIBAND_FLOW_CONTROL_PACKET_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Link-level flow-control packet, 6 bytes (IBA vol. 1 §7.9.4; Wireshark
 * packet-infiniband.c dissect_infiniband_link):
 *
 *   Op(4) FCTBS(12) VL(4) FCCL(12) LPCRC(16)
 *
 * LPCRC is the VCRC polynomial over the first 4 bytes; Serialize computes it.
 */
class InfinibandFlowControlPacket : public Header
{
  public:
    enum Op : uint8_t
    {
        OP_NORMAL = 0,
        OP_INIT = 1
    };

    static constexpr uint32_t SIZE_BYTES = 6;

    InfinibandFlowControlPacket();

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    void SetOp(uint8_t op);
    uint8_t GetOp() const;
    /// Total blocks sent, modulo 4096.
    void SetFctbs(uint16_t blocks);
    uint16_t GetFctbs() const;
    void SetVl(uint8_t vl);
    uint8_t GetVl() const;
    /// Credit limit: blocks received + free buffer blocks, modulo 4096.
    void SetFccl(uint16_t blocks);
    uint16_t GetFccl() const;
    /// LPCRC as received (after Deserialize) or as it will be sent.
    uint16_t GetLpcrc() const;
    /// True if the received LPCRC matches the received fields.
    bool IsLpcrcOk() const;

  private:
    uint16_t ComputeLpcrc() const;

    uint8_t m_op;
    uint16_t m_fctbs;
    uint8_t m_vl;
    uint16_t m_fccl;
    uint16_t m_receivedLpcrc;
    bool m_deserialized;
};

} // namespace ns3

#endif
