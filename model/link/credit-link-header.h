/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_HEADER_H
#define AI_FABRIC_CREDIT_LINK_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Generic 8-byte routing header of the credit link layer: destination id,
 * virtual channel, protocol.  Technologies with real headers (InfiniBand
 * LRH/BTH) replace it by overriding the classification hooks of
 * CreditLinkNetDevice and CreditSwitch; nothing else depends on it.
 */
class CreditLinkHeader : public Header
{
  public:
    static constexpr uint32_t SIZE_BYTES = 8;

    CreditLinkHeader();
    CreditLinkHeader(uint32_t destination, uint8_t vc, uint16_t protocol = 0);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint32_t GetDestination() const;
    void SetDestination(uint32_t destination);
    uint8_t GetVc() const;
    void SetVc(uint8_t vc);
    uint16_t GetProtocol() const;
    void SetProtocol(uint16_t protocol);

  private:
    uint32_t m_destination;
    uint8_t m_vc;
    uint16_t m_protocol;
};

} // namespace ns3

#endif
