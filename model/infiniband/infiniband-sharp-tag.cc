/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/infiniband-sharp-tag.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(InfinibandSharpTag);

TypeId
InfinibandSharpTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::InfinibandSharpTag")
                            .SetParent<Tag>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<InfinibandSharpTag>();
    return tid;
}

TypeId
InfinibandSharpTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
InfinibandSharpTag::GetSerializedSize() const
{
    return 13;
}

void
InfinibandSharpTag::Serialize(TagBuffer buffer) const
{
    buffer.WriteU32(group);
    buffer.WriteU32(chunk);
    buffer.WriteU32(resultQp);
    buffer.WriteU8(down ? 1 : 0);
}

void
InfinibandSharpTag::Deserialize(TagBuffer buffer)
{
    group = buffer.ReadU32();
    chunk = buffer.ReadU32();
    resultQp = buffer.ReadU32();
    down = buffer.ReadU8() != 0;
}

void
InfinibandSharpTag::Print(std::ostream& os) const
{
    os << "sharp group=" << group << " chunk=" << chunk << " qp=" << resultQp
       << (down ? " down" : " up");
}

} // namespace ns3
