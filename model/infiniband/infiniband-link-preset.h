/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_LINK_PRESET_H
#define AI_FABRIC_INFINIBAND_LINK_PRESET_H

#include "ns3/data-rate.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * One InfiniBand link generation and width.  As everywhere in ai-fabric
 * (see SerializationClock), the rate is the signalling rate and
 * encodingEfficiency turns it into the rate available to packets.
 */
struct InfinibandLinkPreset
{
    std::string speed;   //!< "SDR" ... "XDR"
    uint32_t widthLanes; //!< 1, 4, 8 or 12
    uint64_t laneSignallingBps;
    double encodingEfficiency; //!< 8b/10b = 0.8, 64b/66b, PAM4 + RS-FEC = 16/17

    std::string GetName() const; //!< e.g. "NDR-4x"
    uint64_t GetSignallingBps() const;
    DataRate GetSignallingRate() const;
    uint64_t GetDataRateBps() const; //!< signalling x efficiency, rounded to 1 b/s
};

/// All speed names, in generation order.
std::vector<std::string> InfinibandLinkSpeedNames();

/**
 * Looks up "NDR", "ndr-4x", "NDR_12X", "4x-hdr", "edr1x" (case-insensitive;
 * width defaults to 4x).  Returns an empty string on success, otherwise a
 * message naming the valid speeds and widths.
 */
std::string InfinibandFindLinkPreset(const std::string& name, InfinibandLinkPreset& preset);

/// As InfinibandFindLinkPreset, aborting with its message on an unknown name.
InfinibandLinkPreset InfinibandGetLinkPreset(const std::string& name);

// Validators: an empty string means valid, otherwise the message names the
// field and the rejected value.  Sources: MTU 256..4096 (IBA §7.7.8, OpenSM
// ib_types.h IB_MTU_LEN_*); 1, 2, 4, 8 or 15 data VLs (IBA §7.6.1, PortInfo
// VLCap); SL2VL table 16 entries, VL15 reserved for management (IBA §7.6.6).
std::string InfinibandValidateMtu(uint32_t mtuBytes);
std::string InfinibandValidateDataVlCount(uint32_t dataVls);
std::string InfinibandValidateSlToVl(const std::vector<uint8_t>& slToVl, uint32_t dataVls);
/// The VLs of a comma-separated SL->VL table ("0,1,0,..."); empty text, empty table.
std::vector<uint8_t> InfinibandParseSlToVl(const std::string& text);

/// IBA MTU code (1 = 256 ... 5 = 4096, PortInfo NeighborMTU); aborts if invalid.
uint8_t InfinibandMtuCode(uint32_t mtuBytes);

/// Aborts with \p message unless it is empty; wraps the validators above.
void InfinibandAbortOnError(const std::string& message);

} // namespace ns3

#endif
