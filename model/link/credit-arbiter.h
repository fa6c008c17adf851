/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_ARBITER_H
#define AI_FABRIC_CREDIT_ARBITER_H

#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Picks the next virtual channel of a link transmitter.  The device passes a
 * bit mask of the VCs whose head packet is covered by credits (at most 32 VCs)
 * and reports every packet it sends, so weighted arbiters can charge it.
 */
class CreditArbiter : public Object
{
  public:
    static TypeId GetTypeId();

    /// \return the chosen VC, or -1 when the policy serves none of \p eligibleMask.
    virtual int32_t Select(uint32_t eligibleMask) = 0;
    virtual void NotifySent(uint32_t vc, uint32_t bytes);
};

/// Round-robin over eligible VCs, one packet per turn.
class RoundRobinArbiter : public CreditArbiter
{
  public:
    static TypeId GetTypeId();
    RoundRobinArbiter();
    int32_t Select(uint32_t eligibleMask) override;
    void NotifySent(uint32_t vc, uint32_t bytes) override;

  private:
    uint32_t m_next{0};
};

/// Strict priority: the lowest-numbered eligible VC wins.
class StrictPriorityArbiter : public CreditArbiter
{
  public:
    static TypeId GetTypeId();
    StrictPriorityArbiter();
    int32_t Select(uint32_t eligibleMask) override;
};

/**
 * InfiniBand VL arbitration: a high- and a low-priority table of (VC, weight)
 * entries, weight in 64-byte units (0 skips the entry).  The current entry
 * keeps the link while it has weight left (a packet may overdraw it; the
 * overdraft is not carried, as in IBA 7.6.9).  High-priority entries win
 * unless HighPriorityLimit (4 KiB units, 255 = unbounded, 0 = one packet) has
 * been used up while low-priority data waits.  A VC in neither table is never
 * served.
 */
class WeightedTableArbiter : public CreditArbiter
{
  public:
    struct Entry
    {
        uint32_t vc;
        uint32_t weight; //!< 64-byte units
    };

    static TypeId GetTypeId();
    WeightedTableArbiter();

    void SetHighTable(const std::vector<Entry>& entries);
    void SetLowTable(const std::vector<Entry>& entries);
    int32_t Select(uint32_t eligibleMask) override;
    void NotifySent(uint32_t vc, uint32_t bytes) override;

    /// Parses "vc:weight,vc:weight,..." (the string form of the table attributes).
    static std::vector<Entry> ParseTable(const std::string& text);

  private:
    struct Table
    {
        std::vector<Entry> entries;
        size_t index{0};
        int64_t remainingUnits{0};
    };

    static int32_t SelectFrom(Table& table, uint32_t eligibleMask);
    static void Advance(Table& table);
    void SetHighTableString(std::string text);
    std::string GetHighTableString() const;
    void SetLowTableString(std::string text);
    std::string GetLowTableString() const;
    static std::string Format(const Table& table);

    Table m_high;
    Table m_low;
    uint32_t m_highLimit{255};
    uint64_t m_highBytesWhileLowWaits{0};
    bool m_lastFromHigh{false};
    bool m_lowWaiting{false};
};

} // namespace ns3

#endif
