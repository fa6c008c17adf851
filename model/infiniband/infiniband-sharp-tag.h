/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_SHARP_TAG_H
#define AI_FABRIC_INFINIBAND_SHARP_TAG_H

#include "ns3/tag.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * What a SHARP aggregation packet carries beyond its RC headers: the aggregation group,
 * the chunk (in packet units, equal at every member) and the QP the result goes back to.
 * Rides as a PacketTag: the real SHARP header is not charged on the wire (an assumption,
 * like the NVLS fields of NvLinkHeader).  Sent by a member to its switch's LID, by a leaf
 * to its parent (an aggregate), by a parent down to a leaf (a result).
 */
class InfinibandSharpTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer buffer) const override;
    void Deserialize(TagBuffer buffer) override;
    void Print(std::ostream& os) const override;

    uint32_t group{0};
    uint32_t chunk{0};
    uint32_t resultQp{0};
    bool down{false}; //!< a result going down the aggregation tree, else a contribution
};

} // namespace ns3

#endif
