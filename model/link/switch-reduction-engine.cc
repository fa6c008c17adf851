/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/switch-reduction-engine.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SwitchReductionEngine");

std::string
SwitchReductionEngine::CheckGroup(const std::string& label,
                                  uint32_t groupId,
                                  const std::vector<uint32_t>& members) const
{
    std::ostringstream os;
    if (members.size() < 2)
    {
        os << label << " " << groupId << " needs at least 2 members, has " << members.size();
    }
    else if (m_groups.count(groupId) != 0)
    {
        os << label << " " << groupId << " is already registered";
    }
    else
    {
        std::vector<bool> seen;
        for (uint32_t m : members)
        {
            if (m >= seen.size())
            {
                seen.resize(m + 1, false);
            }
            if (seen[m])
            {
                os << label << " " << groupId << " lists member " << m << " twice";
                break;
            }
            seen[m] = true;
        }
    }
    return os.str();
}

void
SwitchReductionEngine::RegisterGroup(uint32_t groupId, const std::vector<uint32_t>& members)
{
    NS_LOG_FUNCTION(this << groupId << members.size());
    Group& g = m_groups[groupId].group;
    g.members = members;
    for (uint32_t i = 0; i < members.size(); ++i)
    {
        if (members[i] >= g.memberIndex.size())
        {
            g.memberIndex.resize(members[i] + 1, -1);
        }
        g.memberIndex[members[i]] = static_cast<int32_t>(i);
    }
}

const SwitchReductionEngine::Group*
SwitchReductionEngine::FindGroup(uint32_t groupId) const
{
    auto it = m_groups.find(groupId);
    return it == m_groups.end() ? nullptr : &it->second.group;
}

int32_t
SwitchReductionEngine::MemberIndex(const Group& group, uint32_t id)
{
    return id < group.memberIndex.size() ? group.memberIndex[id] : -1;
}

SwitchReductionEngine::Outcome
SwitchReductionEngine::Contribute(uint32_t groupId,
                                  uint32_t chunk,
                                  uint32_t member,
                                  Held held,
                                  std::vector<Held>& all)
{
    GroupState& g = m_groups.at(groupId);
    auto [it, inserted] = g.pending.try_emplace(chunk, 0);
    if (inserted)
    {
        if (m_freeSlots.empty())
        {
            m_slots.emplace_back();
            m_freeSlots.push_back(static_cast<uint32_t>(m_slots.size() - 1));
        }
        it->second = m_freeSlots.back();
        m_freeSlots.pop_back();
        m_slots[it->second].held.assign(g.group.members.size(), Held());
        m_slots[it->second].arrived = 0;
        m_pendingChunks++;
    }
    Slot& slot = m_slots[it->second];
    if (slot.held[member].packet)
    {
        return Outcome::Duplicate;
    }
    slot.held[member] = std::move(held);
    slot.arrived++;
    m_held++;
    if (slot.arrived < g.group.members.size())
    {
        return Outcome::Held;
    }
    const uint32_t index = it->second;
    g.pending.erase(it);
    m_pendingChunks--;
    m_reducedChunks++;
    m_held -= slot.arrived;
    all = std::move(slot.held);
    slot.held.clear();
    m_freeSlots.push_back(index);
    return Outcome::Complete;
}

Time
SwitchReductionEngine::EngineTail(uint32_t destination,
                                  double rate_bit_per_s,
                                  uint32_t payloadBytes,
                                  Time dataTail)
{
    if (rate_bit_per_s <= 0)
    {
        return dataTail;
    }
    if (destination >= m_engineFree.size())
    {
        m_engineFree.resize(destination + 1, Time(0));
    }
    // A transfer's packets repeat one (size, rate): Seconds(double) converts through
    // long double and 128-bit integers, a few percent of an NVLS run when made per result.
    if (payloadBytes != m_lastPayloadBytes || rate_bit_per_s != m_lastRate_bit_per_s)
    {
        m_lastPayloadBytes = payloadBytes;
        m_lastRate_bit_per_s = rate_bit_per_s;
        m_lastDuration = Seconds(payloadBytes * 8.0 / rate_bit_per_s);
    }
    const Time begin = std::max(Simulator::Now(), m_engineFree[destination]);
    const Time done = std::max(dataTail, begin + m_lastDuration);
    m_engineFree[destination] = done;
    return done;
}

void
SwitchReductionEngine::Emit(std::vector<Result>&& results,
                            Time latency,
                            const EmitFunction& emitNow)
{
    if (latency.IsZero())
    {
        emitNow(results);
        return;
    }
    // Counted held until they leave: with the absorbed count, received packets balance.
    const uint64_t holding = results.size();
    for (auto& r : results)
    {
        r.tail += latency;
    }
    m_inEngine += holding;
    Simulator::Schedule(latency, [this, holding, emitNow, results = std::move(results)]() mutable {
        m_inEngine -= holding;
        emitNow(results);
    });
}

uint64_t
SwitchReductionEngine::GetHeldPackets() const
{
    return m_held + m_inEngine;
}

uint64_t
SwitchReductionEngine::GetReducedChunks() const
{
    return m_reducedChunks;
}

uint32_t
SwitchReductionEngine::GetPendingChunks() const
{
    return m_pendingChunks;
}

void
SwitchReductionEngine::Clear()
{
    m_groups.clear();
    m_slots.clear();
    m_freeSlots.clear();
    m_engineFree.clear();
}

} // namespace ns3
