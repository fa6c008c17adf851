/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_LINK_STRIPE_H
#define AI_FABRIC_LINK_STRIPE_H

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * A transfer striped over parallel lanes (an NVLink GPU's switch planes or a bundle, with their
 * link counts \p links summing to \p linksTotal) goes in rounds of one packet per lane, each lane
 * carrying its links' part of the bytes: the rounds that keep every packet within
 * \p burstBytes (at least one).
 */
uint32_t StripeRounds(uint64_t bytes,
                      const std::vector<uint32_t>& links,
                      uint64_t linksTotal,
                      uint32_t burstBytes);

/**
 * Payload of packet \p index of \p bytes striped in \p rounds (StripeRounds): lane
 * index % lanes, round index / lanes.  A lane's share is its links' part of the bytes (the
 * last lane takes the rest), split evenly over the rounds (the last round takes the rest).
 */
uint32_t StripePacketBytes(uint64_t bytes,
                           const std::vector<uint32_t>& links,
                           uint64_t linksTotal,
                           uint32_t rounds,
                           uint64_t index);

} // namespace ns3

#endif
