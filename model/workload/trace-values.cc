/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ns3/trace-values.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TraceValues");

namespace
{

// Parses "<digits>[.<digits>]<unit>" exactly, scaling by the unit's factor and
// rounding to the nearest integer; 128-bit intermediates make overflow checks exact.
bool
ParseScaled(const std::string& text,
            const std::vector<std::pair<const char*, uint64_t>>& units,
            uint64_t bareFactor,
            uint64_t* out)
{
    size_t i = 0;
    unsigned __int128 mantissa = 0;
    unsigned __int128 divisor = 1;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    {
        mantissa = mantissa * 10 + static_cast<unsigned>(text[i] - '0');
        if (mantissa > UINT64_MAX)
        {
            return false;
        }
        ++i;
        ++digits;
    }
    if (i < text.size() && text[i] == '.')
    {
        ++i;
        size_t fracDigits = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9')
        {
            if (fracDigits < 12) // beyond 1e-12 of the unit nothing survives rounding
            {
                mantissa = mantissa * 10 + static_cast<unsigned>(text[i] - '0');
                divisor *= 10;
            }
            ++i;
            ++fracDigits;
            ++digits;
        }
        if (fracDigits == 0)
        {
            return false;
        }
    }
    if (digits == 0)
    {
        return false;
    }
    const std::string unit = text.substr(i);
    uint64_t factor = 0;
    if (unit.empty())
    {
        factor = bareFactor;
    }
    for (const auto& u : units)
    {
        if (unit == u.first)
        {
            factor = u.second;
        }
    }
    if (factor == 0)
    {
        return false;
    }
    // mantissa < 2^64 * 1e12: the product may not fit 128 bits, but then the
    // value (>= product / 1e12) is far beyond 64 bits anyway.
    if (mantissa > ~static_cast<unsigned __int128>(0) / factor)
    {
        return false;
    }
    unsigned __int128 scaled = mantissa * factor;
    unsigned __int128 value = (scaled + divisor / 2) / divisor;
    if (value > UINT64_MAX)
    {
        return false;
    }
    *out = static_cast<uint64_t>(value);
    return true;
}

std::string
FormatScaled(uint64_t value, const std::vector<std::pair<const char*, uint64_t>>& units)
{
    if (value != 0)
    {
        for (const auto& u : units)
        {
            if (value % u.second == 0)
            {
                return std::to_string(value / u.second) + u.first;
            }
        }
    }
    return std::to_string(value) + units.back().first;
}

const std::vector<std::pair<const char*, uint64_t>> g_timeUnits = {
    {"s", 1000000000ULL},
    {"ms", 1000000ULL},
    {"us", 1000ULL},
    {"ns", 1ULL},
};

const std::vector<std::pair<const char*, uint64_t>> g_byteUnits = {
    {"GiB", 1ULL << 30},
    {"GB", 1000000000ULL},
    {"MiB", 1ULL << 20},
    {"MB", 1000000ULL},
    {"KiB", 1ULL << 10},
    {"KB", 1000ULL},
    {"B", 1ULL},
};

} // namespace

bool
ParseTimeNs(const std::string& text, uint64_t* timeNs)
{
    return ParseScaled(text, g_timeUnits, 1, timeNs);
}

bool
ParseBytes(const std::string& text, uint64_t* bytes)
{
    return ParseScaled(text, g_byteUnits, 1, bytes);
}

std::string
FormatTimeNs(uint64_t timeNs)
{
    return FormatScaled(timeNs, g_timeUnits);
}

std::string
FormatBytes(uint64_t bytes)
{
    return FormatScaled(bytes, g_byteUnits);
}

bool
ParseUnsigned(const std::string& text, uint64_t* value)
{
    if (text.empty() || text.size() > 20)
    {
        return false;
    }
    unsigned __int128 v = 0;
    for (char c : text)
    {
        if (c < '0' || c > '9')
        {
            return false;
        }
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    if (v > UINT64_MAX)
    {
        return false;
    }
    *value = static_cast<uint64_t>(v);
    return true;
}

bool
ParseRankList(const std::string& text,
              uint32_t numRanks,
              std::vector<uint32_t>* ranks,
              std::string* why)
{
    ranks->clear();
    if (text.empty())
    {
        *why = "expected ranks like 0-7,9, got nothing";
        return false;
    }
    size_t start = 0;
    uint64_t total = 0;
    while (start <= text.size())
    {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos)
        {
            comma = text.size();
        }
        const std::string item = text.substr(start, comma - start);
        const size_t dash = item.find('-');
        uint64_t lo = 0;
        uint64_t hi = 0;
        bool ok = dash == std::string::npos ? ParseUnsigned(item, &lo) && (hi = lo, true)
                                            : ParseUnsigned(item.substr(0, dash), &lo) &&
                                                  ParseUnsigned(item.substr(dash + 1), &hi);
        if (!ok)
        {
            *why = "expected ranks like 0-7,9, got '" + item + "'";
            return false;
        }
        if (lo > hi)
        {
            *why = "empty range '" + item + "'";
            return false;
        }
        if (hi >= numRanks)
        {
            *why = "rank " + std::to_string(hi) + " out of range: the trace has " +
                   std::to_string(numRanks) + " ranks";
            return false;
        }
        total += hi - lo + 1;
        if (total > 4ULL * numRanks + 16)
        {
            *why = "too many repeated ranks";
            return false;
        }
        for (uint64_t r = lo; r <= hi; ++r)
        {
            ranks->push_back(static_cast<uint32_t>(r));
        }
        start = comma + 1;
    }
    std::sort(ranks->begin(), ranks->end());
    ranks->erase(std::unique(ranks->begin(), ranks->end()), ranks->end());
    return true;
}

std::string
FormatRankList(const std::vector<uint32_t>& sortedRanks)
{
    std::string out;
    size_t i = 0;
    while (i < sortedRanks.size())
    {
        size_t j = i;
        while (j + 1 < sortedRanks.size() && sortedRanks[j + 1] == sortedRanks[j] + 1)
        {
            ++j;
        }
        if (!out.empty())
        {
            out += ',';
        }
        out += std::to_string(sortedRanks[i]);
        if (j > i)
        {
            out += '-' + std::to_string(sortedRanks[j]);
        }
        i = j + 1;
    }
    return out;
}

} // namespace ns3
