/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_NVLINK_HEADER_H
#define AI_FABRIC_NVLINK_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Routing header of a simulated NVLink packet (16 bytes).  NVLink's real packet
 * format is not public; these 16 bytes stand for the header of the first real
 * packet of a burst (NvLinkNetDevice charges the others as wire overhead).
 *
 * Data (NvLinkGpu::SendPacket): protocol = the transport's, which owns the
 * message fields (its TransportPacketTag); tag and count unused.
 * NVLS reduce contribution / multicast result / store: tag = group, count = chunk id.
 * An NVLS_LD_REDUCE contribution's destination is the one member that gets the reduced
 * chunk (multimem.ld_reduce); NVLS_REDUCE's go to all; a store to every member
 * (multimem.st).
 */
class NvLinkHeader : public Header
{
  public:
    static constexpr uint32_t SIZE_BYTES = 16;
    /// NvlsReduce owner (and NVLS_REDUCE destination): the reduced chunk goes to all;
    /// NVLS_MULTICAST destination of a store's one packet for every member (NvSwitch).
    static constexpr uint16_t ALL_MEMBERS = 0xffff;

    enum Type : uint8_t
    {
        DATA = 0,
        NVLS_REDUCE = 1,    //!< one member's contribution to (group, chunk)
        NVLS_MULTICAST = 2, //!< the reduced or stored (group, chunk), switch to member
        NVLS_STORE = 3,     //!< one member's (group, chunk) for every member
        NVLS_LD_REDUCE = 4, //!< a contribution to (group, chunk) reduced for destination
    };

    NvLinkHeader();

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint16_t destination{0}; //!< GPU id in the NVLink domain
    uint16_t source{0};
    Type type{DATA};
    uint8_t vc{0};
    uint16_t protocol{0};
    uint32_t tag{0};
    uint32_t count{0};
};

} // namespace ns3

#endif
