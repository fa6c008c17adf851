/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "nvlink-header.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvLinkHeader);

NvLinkHeader::NvLinkHeader() = default;

TypeId
NvLinkHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NvLinkHeader")
                            .SetParent<Header>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<NvLinkHeader>();
    return tid;
}

TypeId
NvLinkHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
NvLinkHeader::GetSerializedSize() const
{
    return SIZE_BYTES;
}

void
NvLinkHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU16(destination);
    start.WriteHtonU16(source);
    start.WriteU8(type);
    start.WriteU8(vc);
    start.WriteHtonU16(protocol);
    start.WriteHtonU32(tag);
    start.WriteHtonU32(count);
}

uint32_t
NvLinkHeader::Deserialize(Buffer::Iterator start)
{
    destination = start.ReadNtohU16();
    source = start.ReadNtohU16();
    type = static_cast<Type>(start.ReadU8());
    vc = start.ReadU8();
    protocol = start.ReadNtohU16();
    tag = start.ReadNtohU32();
    count = start.ReadNtohU32();
    return SIZE_BYTES;
}

void
NvLinkHeader::Print(std::ostream& os) const
{
    static const char* names[] = {"data",
                                  "nvls-reduce",
                                  "nvls-multicast",
                                  "nvls-store",
                                  "nvls-ld-reduce"};
    os << "NvLink " << (type <= NVLS_LD_REDUCE ? names[type] : "?") << " " << source << "->"
       << destination << " vc " << unsigned(vc) << " tag " << tag << " count " << count;
}

} // namespace ns3
