/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-arbiter.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreditArbiter");

NS_OBJECT_ENSURE_REGISTERED(CreditArbiter);
NS_OBJECT_ENSURE_REGISTERED(RoundRobinArbiter);
NS_OBJECT_ENSURE_REGISTERED(StrictPriorityArbiter);
NS_OBJECT_ENSURE_REGISTERED(WeightedTableArbiter);

TypeId
CreditArbiter::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CreditArbiter").SetParent<Object>().SetGroupName("AiFabric");
    return tid;
}

void
CreditArbiter::NotifySent(uint32_t vc, uint32_t bytes)
{
}

TypeId
RoundRobinArbiter::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoundRobinArbiter")
                            .SetParent<CreditArbiter>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<RoundRobinArbiter>();
    return tid;
}

RoundRobinArbiter::RoundRobinArbiter()
{
    NS_LOG_FUNCTION(this);
}

int32_t
RoundRobinArbiter::Select(uint32_t eligibleMask)
{
    if (eligibleMask == 0)
    {
        return -1;
    }
    // First eligible VC at or after m_next, wrapping: two count-trailing-zeros.
    const uint32_t upper = m_next < 32 ? eligibleMask & (~0u << m_next) : 0;
    return upper != 0 ? __builtin_ctz(upper) : __builtin_ctz(eligibleMask);
}

void
RoundRobinArbiter::NotifySent(uint32_t vc, uint32_t bytes)
{
    m_next = vc + 1;
}

TypeId
StrictPriorityArbiter::GetTypeId()
{
    static TypeId tid = TypeId("ns3::StrictPriorityArbiter")
                            .SetParent<CreditArbiter>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<StrictPriorityArbiter>();
    return tid;
}

StrictPriorityArbiter::StrictPriorityArbiter()
{
    NS_LOG_FUNCTION(this);
}

int32_t
StrictPriorityArbiter::Select(uint32_t eligibleMask)
{
    return eligibleMask == 0 ? -1 : __builtin_ctz(eligibleMask);
}

TypeId
WeightedTableArbiter::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::WeightedTableArbiter")
            .SetParent<CreditArbiter>()
            .SetGroupName("AiFabric")
            .AddConstructor<WeightedTableArbiter>()
            .AddAttribute("HighTable",
                          "High-priority table, \"vc:weight,...\", weight in 64-byte units",
                          StringValue(""),
                          MakeStringAccessor(&WeightedTableArbiter::SetHighTableString,
                                             &WeightedTableArbiter::GetHighTableString),
                          MakeStringChecker())
            .AddAttribute("LowTable",
                          "Low-priority table, \"vc:weight,...\", weight in 64-byte units",
                          StringValue("0:1"),
                          MakeStringAccessor(&WeightedTableArbiter::SetLowTableString,
                                             &WeightedTableArbiter::GetLowTableString),
                          MakeStringChecker())
            .AddAttribute("HighPriorityLimit",
                          "High-priority bytes (4 KiB units) sent while low-priority data "
                          "waits before one low-priority packet goes; 255 = unbounded, 0 = one "
                          "packet",
                          UintegerValue(255),
                          MakeUintegerAccessor(&WeightedTableArbiter::m_highLimit),
                          MakeUintegerChecker<uint32_t>(0, 255));
    return tid;
}

WeightedTableArbiter::WeightedTableArbiter()
{
    NS_LOG_FUNCTION(this);
}

std::vector<WeightedTableArbiter::Entry>
WeightedTableArbiter::ParseTable(const std::string& text)
{
    NS_LOG_FUNCTION(text);
    std::vector<Entry> entries;
    std::istringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
    {
        if (item.empty())
        {
            continue;
        }
        const auto colon = item.find(':');
        NS_ABORT_MSG_IF(colon == std::string::npos,
                        "WeightedTableArbiter table entry \"" << item << "\" is not vc:weight");
        const unsigned long vc = std::stoul(item.substr(0, colon));
        const unsigned long weight = std::stoul(item.substr(colon + 1));
        NS_ABORT_MSG_IF(vc >= 32, "WeightedTableArbiter table entry VC " << vc << " >= 32");
        NS_ABORT_MSG_IF(weight > 255,
                        "WeightedTableArbiter table entry weight " << weight << " > 255");
        entries.push_back({static_cast<uint32_t>(vc), static_cast<uint32_t>(weight)});
    }
    NS_ABORT_MSG_IF(entries.size() > 64,
                    "WeightedTableArbiter table has " << entries.size() << " entries (max 64)");
    return entries;
}

void
WeightedTableArbiter::SetHighTable(const std::vector<Entry>& entries)
{
    NS_LOG_FUNCTION(this << entries.size());
    m_high = Table{entries, 0, entries.empty() ? 0 : entries[0].weight};
}

void
WeightedTableArbiter::SetLowTable(const std::vector<Entry>& entries)
{
    NS_LOG_FUNCTION(this << entries.size());
    m_low = Table{entries, 0, entries.empty() ? 0 : entries[0].weight};
}

void
WeightedTableArbiter::SetHighTableString(std::string text)
{
    SetHighTable(ParseTable(text));
}

void
WeightedTableArbiter::SetLowTableString(std::string text)
{
    SetLowTable(ParseTable(text));
}

std::string
WeightedTableArbiter::Format(const Table& table)
{
    std::ostringstream out;
    for (size_t i = 0; i < table.entries.size(); ++i)
    {
        out << (i ? "," : "") << table.entries[i].vc << ":" << table.entries[i].weight;
    }
    return out.str();
}

std::string
WeightedTableArbiter::GetHighTableString() const
{
    return Format(m_high);
}

std::string
WeightedTableArbiter::GetLowTableString() const
{
    return Format(m_low);
}

void
WeightedTableArbiter::Advance(Table& table)
{
    table.index = (table.index + 1) % table.entries.size();
    table.remainingUnits = table.entries[table.index].weight;
}

int32_t
WeightedTableArbiter::SelectFrom(Table& table, uint32_t eligibleMask)
{
    if (table.entries.empty() || eligibleMask == 0)
    {
        return -1;
    }
    // An entry with weight left but no eligible packet loses its turn (IBA 7.6.9).
    for (size_t tried = 0; tried <= table.entries.size(); ++tried)
    {
        const Entry& e = table.entries[table.index];
        if (table.remainingUnits > 0 && (eligibleMask >> e.vc) & 1u)
        {
            return static_cast<int32_t>(e.vc);
        }
        Advance(table);
    }
    return -1;
}

int32_t
WeightedTableArbiter::Select(uint32_t eligibleMask)
{
    const int32_t low = SelectFrom(m_low, eligibleMask);
    m_lowWaiting = low >= 0;
    const bool highAllowed = !m_lowWaiting || m_highLimit == 255 ||
                             m_highBytesWhileLowWaits < m_highLimit * 4096ULL ||
                             (m_highLimit == 0 && m_highBytesWhileLowWaits == 0);
    if (highAllowed)
    {
        const int32_t high = SelectFrom(m_high, eligibleMask);
        if (high >= 0)
        {
            m_lastFromHigh = true;
            return high;
        }
    }
    m_lastFromHigh = false;
    return low;
}

void
WeightedTableArbiter::NotifySent(uint32_t vc, uint32_t bytes)
{
    const int64_t units = (bytes + 63) / 64;
    if (m_lastFromHigh)
    {
        m_highBytesWhileLowWaits = m_lowWaiting ? m_highBytesWhileLowWaits + bytes : 0;
        m_high.remainingUnits -= units;
        if (m_high.remainingUnits <= 0)
        {
            Advance(m_high);
        }
    }
    else
    {
        m_highBytesWhileLowWaits = 0;
        m_low.remainingUnits -= units;
        if (m_low.remainingUnits <= 0)
        {
            Advance(m_low);
        }
    }
}

} // namespace ns3
