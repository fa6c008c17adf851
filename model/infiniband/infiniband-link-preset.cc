/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "infiniband-link-preset.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("InfinibandLinkPreset");

namespace
{

struct SpeedRow
{
    const char* name;
    uint64_t laneSignallingBps;
    double encodingEfficiency;
};

// Lane signalling rates: IBA vol. 2 (SDR/DDR/QDR 2.5/5/10 Gbaud 8b/10b; FDR10
// 10.3125 and FDR 14.0625 Gb/s, EDR 25.78125 Gb/s, 64b/66b); HDR/NDR/XDR
// 53.125/106.25/212.5 Gb/s PAM4 with RS-FEC, where 4x gives 200/400/800 Gb/s of
// data (NVIDIA transceiver docs), i.e. efficiency 16/17 ~ 0.941.  The 4x data
// rates match OpenSM osm_console.c and the IBTA speed table.
const SpeedRow kSpeeds[] = {
    {"SDR", 2500000000ULL, 0.8},
    {"DDR", 5000000000ULL, 0.8},
    {"QDR", 10000000000ULL, 0.8},
    {"FDR10", 10312500000ULL, 64.0 / 66.0},
    {"FDR", 14062500000ULL, 64.0 / 66.0},
    {"EDR", 25781250000ULL, 64.0 / 66.0},
    {"HDR", 53125000000ULL, 16.0 / 17.0},
    {"NDR", 106250000000ULL, 16.0 / 17.0},
    {"XDR", 212500000000ULL, 16.0 / 17.0},
};

const uint32_t kWidths[] = {1, 4, 8, 12};

std::string
ValidNames()
{
    std::ostringstream os;
    os << "valid speeds:";
    for (const auto& row : kSpeeds)
    {
        os << " " << row.name;
    }
    os << "; widths: 1x 4x 8x 12x (default 4x), e.g. \"NDR\", \"ndr-4x\", \"HDR-12x\"";
    return os.str();
}

std::string
Upper(const std::string& s)
{
    std::string out;
    for (char c : s)
    {
        out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    return out;
}

} // namespace

std::string
InfinibandLinkPreset::GetName() const
{
    return speed + "-" + std::to_string(widthLanes) + "x";
}

uint64_t
InfinibandLinkPreset::GetSignallingBps() const
{
    return laneSignallingBps * widthLanes;
}

DataRate
InfinibandLinkPreset::GetSignallingRate() const
{
    return DataRate(GetSignallingBps());
}

uint64_t
InfinibandLinkPreset::GetDataRateBps() const
{
    return static_cast<uint64_t>(
        std::llround(static_cast<double>(GetSignallingBps()) * encodingEfficiency));
}

std::vector<std::string>
InfinibandLinkSpeedNames()
{
    std::vector<std::string> names;
    for (const auto& row : kSpeeds)
    {
        names.emplace_back(row.name);
    }
    return names;
}

std::string
InfinibandFindLinkPreset(const std::string& name, InfinibandLinkPreset& preset)
{
    NS_LOG_FUNCTION(name);
    // Split into letters-and-digits tokens; one is the speed, an optional one
    // "<n>X" the width.  "EDR1X" and "1XEDR" are split at the speed name.
    std::string s = Upper(name);
    std::string speedToken;
    uint32_t width = 4;
    std::vector<std::string> tokens;
    std::string cur;
    for (char c : s)
    {
        if (std::isalnum(static_cast<unsigned char>(c)))
        {
            cur.push_back(c);
        }
        else if (!cur.empty())
        {
            tokens.push_back(cur);
            cur.clear();
        }
    }
    if (!cur.empty())
    {
        tokens.push_back(cur);
    }
    auto parseWidth = [&](const std::string& t) {
        if (t.size() >= 2 && t.back() == 'X' &&
            std::all_of(t.begin(), t.end() - 1, [](char c) { return std::isdigit(c) != 0; }))
        {
            width = static_cast<uint32_t>(std::stoul(t.substr(0, t.size() - 1)));
            return true;
        }
        return false;
    };
    bool bad = tokens.empty() || tokens.size() > 2;
    for (const auto& t : tokens)
    {
        if (bad)
        {
            break;
        }
        if (parseWidth(t))
        {
            continue;
        }
        // Longest speed name that prefixes or suffixes the token (FDR10 before FDR).
        std::string found;
        for (const auto& row : kSpeeds)
        {
            const std::string n = row.name;
            if (t == n ||
                (t.size() > n.size() && t.compare(0, n.size(), n) == 0 &&
                 parseWidth(t.substr(n.size()))) ||
                (t.size() > n.size() && t.compare(t.size() - n.size(), n.size(), n) == 0 &&
                 parseWidth(t.substr(0, t.size() - n.size()))))
            {
                found = n;
                break;
            }
        }
        if (found.empty() || !speedToken.empty())
        {
            bad = true;
        }
        speedToken = found;
    }
    if (bad || speedToken.empty() ||
        std::find(std::begin(kWidths), std::end(kWidths), width) == std::end(kWidths))
    {
        return "unknown InfiniBand link preset \"" + name + "\"; " + ValidNames();
    }
    for (const auto& row : kSpeeds)
    {
        if (speedToken == row.name)
        {
            preset.speed = row.name;
            preset.widthLanes = width;
            preset.laneSignallingBps = row.laneSignallingBps;
            preset.encodingEfficiency = row.encodingEfficiency;
            return "";
        }
    }
    return "unknown InfiniBand link preset \"" + name + "\"; " + ValidNames();
}

InfinibandLinkPreset
InfinibandGetLinkPreset(const std::string& name)
{
    InfinibandLinkPreset preset{};
    InfinibandAbortOnError(InfinibandFindLinkPreset(name, preset));
    return preset;
}

std::string
InfinibandValidateMtu(uint32_t mtuBytes)
{
    for (uint32_t m : {256U, 512U, 1024U, 2048U, 4096U})
    {
        if (mtuBytes == m)
        {
            return "";
        }
    }
    return "InfiniBand MTU " + std::to_string(mtuBytes) +
           " bytes is invalid; valid MTU values: 256, 512, 1024, 2048, 4096";
}

std::string
InfinibandValidateDataVlCount(uint32_t dataVls)
{
    for (uint32_t n : {1U, 2U, 4U, 8U, 15U})
    {
        if (dataVls == n)
        {
            return "";
        }
    }
    return "InfiniBand data VL count " + std::to_string(dataVls) +
           " is invalid; valid data VL counts: 1, 2, 4, 8, 15 (VL15 is management only)";
}

std::string
InfinibandValidateSlToVl(const std::vector<uint8_t>& slToVl, uint32_t dataVls)
{
    std::string vlError = InfinibandValidateDataVlCount(dataVls);
    if (!vlError.empty())
    {
        return vlError;
    }
    if (slToVl.size() != 16)
    {
        return "InfiniBand SL-to-VL table has " + std::to_string(slToVl.size()) +
               " entries; it needs one per SL (16)";
    }
    for (size_t sl = 0; sl < slToVl.size(); ++sl)
    {
        if (slToVl[sl] == 15)
        {
            return "InfiniBand SL-to-VL table maps SL " + std::to_string(sl) +
                   " to VL 15, which is reserved for subnet management";
        }
        if (slToVl[sl] >= dataVls)
        {
            return "InfiniBand SL-to-VL table maps SL " + std::to_string(sl) + " to VL " +
                   std::to_string(slToVl[sl]) + ", but only " + std::to_string(dataVls) +
                   " data VLs (0.." + std::to_string(dataVls - 1) + ") exist";
        }
    }
    return "";
}

std::vector<uint8_t>
InfinibandParseSlToVl(const std::string& text)
{
    std::vector<uint8_t> table;
    std::istringstream is(text);
    std::string item;
    while (std::getline(is, item, ','))
    {
        table.push_back(static_cast<uint8_t>(std::stoul(item)));
    }
    return table;
}

uint8_t
InfinibandMtuCode(uint32_t mtuBytes)
{
    InfinibandAbortOnError(InfinibandValidateMtu(mtuBytes));
    uint8_t code = 1;
    for (uint32_t m = 256; m < mtuBytes; m *= 2)
    {
        ++code;
    }
    return code;
}

void
InfinibandAbortOnError(const std::string& message)
{
    NS_ABORT_MSG_IF(!message.empty(), message);
}

} // namespace ns3
