/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_CRC_H
#define AI_FABRIC_INFINIBAND_CRC_H

#include "ns3/packet.h"
#include "ns3/trailer.h"

#include <cstddef>
#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Invariant CRC trailer, 4 bytes (IBA vol. 1 §7.8.1): CRC-32 of IEEE 802.3
 * over LRH..payload with the variant fields set to all ones: LRH.VL and BTH
 * byte 4 (Resv8a, later FECN/BECN) of a local packet; the whole LRH, GRH
 * TClass, FlowLabel, HopLmt and BTH byte 4 of a global one (IBA §7.8.1 as
 * given in Shanley, "InfiniBand Network Architecture" ch. 25; the 8 bytes of
 * ones rxe_icrc.c feeds for RoCE's missing LRH agree).  Transmitted in the
 * byte order of the Ethernet FCS, as Linux drivers/infiniband/sw/rxe/rxe_icrc.c
 * (which interoperates with HCAs) stores it.
 */
class InfinibandIcrc : public Trailer
{
  public:
    static constexpr uint32_t SIZE_BYTES = 4;

    InfinibandIcrc();
    explicit InfinibandIcrc(uint32_t crc);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator end) const override;
    uint32_t Deserialize(Buffer::Iterator end) override;
    void Print(std::ostream& os) const override;

    void SetCrc(uint32_t crc);
    uint32_t GetCrc() const;

    /// ICRC of \p bytes = LRH up to the last payload/pad byte (no trailers).
    static uint32_t Compute(const uint8_t* bytes, size_t length);
    /// RoCEv2 ICRC of \p bytes = IPv4 header up to the last payload byte: 8 bytes of ones
    /// for the missing LRH, then IPv4 with TOS, TTL and header checksum, UDP checksum and
    /// BTH byte 4 masked to ones (IBA Annex A17; Linux rxe_icrc.c).
    static uint32_t ComputeRoceV2(const uint8_t* bytes, size_t length);

  private:
    uint32_t m_crc;
};

/**
 * \ingroup ai-fabric
 * Variant CRC trailer, 2 bytes (IBA vol. 1 §7.8.2): CRC-16 with polynomial
 * x^16+x^12+x^3+x+1 (0x100B), seed 0xFFFF, over LRH..ICRC, recomputed per hop.
 * Bit order and final inversion as the ICRC (reflected, complemented) — the
 * convention of Endace's dagcrc "infiniband_vcrc16_r".
 */
class InfinibandVcrc : public Trailer
{
  public:
    static constexpr uint32_t SIZE_BYTES = 2;

    InfinibandVcrc();
    explicit InfinibandVcrc(uint16_t crc);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator end) const override;
    uint32_t Deserialize(Buffer::Iterator end) override;
    void Print(std::ostream& os) const override;

    void SetCrc(uint16_t crc);
    uint16_t GetCrc() const;

    /// VCRC of \p bytes = LRH through ICRC.
    static uint16_t Compute(const uint8_t* bytes, size_t length);

  private:
    uint16_t m_crc;
};

/// Appends ICRC and VCRC to \p packet, which must start with the LRH and hold
/// LRH..payload+pad (LNH 2 or 3).
void InfinibandAddCrcs(Ptr<Packet> packet);

/// Checks the ICRC and VCRC of a packet that ends with them.
bool InfinibandCheckCrcs(Ptr<const Packet> packet);

} // namespace ns3

#endif
