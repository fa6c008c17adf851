/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRANSPORT_HEADER_H
#define AI_FABRIC_TRANSPORT_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * 20-byte GPU transport header of one message packet: message id, source and
 * destination rank, packet sequence number (a stand-in for an RDMA BTH/RETH or
 * an NVLink write request's address).
 */
class TransportHeader : public Header
{
  public:
    static constexpr uint32_t SIZE_BYTES = 20;

    TransportHeader();
    TransportHeader(uint64_t messageId, uint32_t srcRank, uint32_t dstRank, uint32_t sequence);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint64_t GetMessageId() const;
    uint32_t GetSrcRank() const;
    uint32_t GetDstRank() const;
    uint32_t GetSequence() const;

  private:
    uint64_t m_messageId;
    uint32_t m_srcRank;
    uint32_t m_dstRank;
    uint32_t m_sequence;
};

} // namespace ns3

#endif
