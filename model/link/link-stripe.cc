/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/link-stripe.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

namespace
{

// Lane \p lane's part of \p bytes: its links' share, the last lane taking the rest.
uint64_t
LaneShare(uint64_t bytes, const std::vector<uint32_t>& links, uint64_t linksTotal, uint32_t lane)
{
    uint64_t before = 0;
    for (uint32_t i = 0; i < lane; ++i)
    {
        before += links[i];
    }
    const uint64_t begin = bytes * before / linksTotal;
    const uint64_t end =
        lane + 1 == links.size() ? bytes : bytes * (before + links[lane]) / linksTotal;
    return end - begin;
}

} // namespace

uint32_t
StripeRounds(uint64_t bytes,
             const std::vector<uint32_t>& links,
             uint64_t linksTotal,
             uint32_t burstBytes)
{
    NS_ABORT_MSG_IF(links.empty() || linksTotal == 0 || burstBytes == 0,
                    "StripeRounds: no lanes, no links or no burst");
    uint64_t most = 0;
    for (uint32_t lane = 0; lane < links.size(); ++lane)
    {
        most = std::max(most, LaneShare(bytes, links, linksTotal, lane));
    }
    return static_cast<uint32_t>(std::max<uint64_t>(1, (most + burstBytes - 1) / burstBytes));
}

uint32_t
StripePacketBytes(uint64_t bytes,
                  const std::vector<uint32_t>& links,
                  uint64_t linksTotal,
                  uint32_t rounds,
                  uint64_t index)
{
    const auto lanes = static_cast<uint32_t>(links.size());
    const uint64_t share =
        LaneShare(bytes, links, linksTotal, static_cast<uint32_t>(index % lanes));
    // Round r takes share x (r + 1) / rounds less what the rounds before took: no packet
    // exceeds ceil(share / rounds), so StripeRounds' bursts bound every one.
    const uint64_t round = index / lanes;
    return static_cast<uint32_t>(share * (round + 1) / rounds - share * round / rounds);
}

} // namespace ns3
