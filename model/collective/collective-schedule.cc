/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/collective-schedule.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace ns3
{

uint32_t
CollectiveSchedule::Add(Step&& step, const std::vector<int64_t>& deps)
{
    const uint32_t index = m_steps.size();
    for (int64_t d : deps)
    {
        if (d == NONE)
        {
            continue;
        }
        if (d < 0 || static_cast<uint64_t>(d) >= index)
        {
            throw std::logic_error("CollectiveSchedule: dependency on a later step");
        }
        Step& from = m_steps[d];
        const auto edge = static_cast<uint32_t>(m_edges.size());
        m_edges.push_back({index, kNoEdge});
        if (from.lastSuccessor == kNoEdge)
        {
            from.firstSuccessor = edge;
        }
        else
        {
            m_edges[from.lastSuccessor].next = edge;
        }
        from.lastSuccessor = edge;
        ++step.numDeps;
    }
    m_steps.push_back(std::move(step));
    return index;
}

uint32_t
CollectiveSchedule::AddMessage(uint32_t src,
                               uint32_t dst,
                               uint64_t bytes,
                               uint32_t channel,
                               const std::vector<int64_t>& deps)
{
    Step s;
    s.src = src;
    s.dst = dst;
    s.bytes = bytes;
    s.channel = channel;
    ++m_messages;
    ++m_stepMessages;
    return Add(std::move(s), deps);
}

uint32_t
CollectiveSchedule::AddAggregate(uint32_t src,
                                 uint32_t dst,
                                 uint64_t bytes,
                                 uint32_t channel,
                                 uint32_t steps,
                                 uint32_t lanes,
                                 const std::vector<int64_t>& deps,
                                 uint32_t loops,
                                 uint64_t pieceBytes)
{
    if (steps == 0 || lanes == 0 || lanes > 255 || loops == 0)
    {
        throw std::logic_error("CollectiveSchedule: an aggregate needs 1 to 255 lanes, steps");
    }
    Step s;
    s.src = src;
    s.dst = dst;
    s.bytes = bytes;
    s.channel = channel;
    s.lanes = static_cast<uint8_t>(lanes);
    s.aggregate = true;
    ++m_messages;
    m_stepMessages += uint64_t(steps) * lanes * loops;
    const uint32_t index = Add(std::move(s), deps);
    m_aggregateSteps.push_back({index, steps, loops});
    if (pieceBytes > 0)
    {
        m_aggregatePiece.emplace(index, pieceBytes);
    }
    return index;
}

const CollectiveSchedule::AggregateOf&
CollectiveSchedule::FindAggregate(uint32_t step) const
{
    const auto it =
        std::lower_bound(m_aggregateSteps.begin(),
                         m_aggregateSteps.end(),
                         step,
                         [](const AggregateOf& a, uint32_t index) { return a.step < index; });
    if (it == m_aggregateSteps.end() || it->step != step)
    {
        throw std::out_of_range("CollectiveSchedule: not an aggregate");
    }
    return *it;
}

uint32_t
CollectiveSchedule::GetAggregateSteps(uint32_t step) const
{
    return m_steps[step].aggregate ? FindAggregate(step).steps : 1;
}

uint32_t
CollectiveSchedule::GetAggregateLoops(uint32_t step) const
{
    return m_steps[step].aggregate ? FindAggregate(step).loops : 1;
}

uint64_t
CollectiveSchedule::GetAggregatePiece(uint32_t step) const
{
    const auto it = m_aggregatePiece.find(step);
    return it == m_aggregatePiece.end() ? 0 : it->second;
}

void
CollectiveSchedule::SetRingAggregation(RingAggregation allow)
{
    m_ringAggregation = std::move(allow);
}

bool
CollectiveSchedule::CanAggregateRing(const std::vector<uint32_t>& ring) const
{
    return m_ringAggregation && m_ringAggregation(ring);
}

void
CollectiveSchedule::SetPairRelay(PairRelay relay, uint64_t chunkBytes, uint32_t maxChunks)
{
    m_pairRelay = std::move(relay);
    m_relayChunkBytes = std::max<uint64_t>(chunkBytes, 1);
    m_relayMaxChunks = std::max<uint32_t>(maxChunks, 1);
}

int64_t
CollectiveSchedule::RelayOf(uint32_t src, uint32_t dst) const
{
    return m_pairRelay ? m_pairRelay(src, dst) : -1;
}

uint64_t
CollectiveSchedule::GetRelayChunkBytes(uint64_t bytes) const
{
    return std::max<uint64_t>(m_relayChunkBytes, (bytes + m_relayMaxChunks - 1) / m_relayMaxChunks);
}

uint64_t
CollectiveSchedule::GetNumStepMessages() const
{
    return m_stepMessages;
}

uint32_t
CollectiveSchedule::AddJoin(uint32_t rank, const std::vector<int64_t>& deps)
{
    Step s;
    s.src = rank;
    s.dst = rank;
    s.join = true;
    return Add(std::move(s), deps);
}

std::vector<int64_t>
CollectiveSchedule::AddInSwitch(InSwitchReductionPlane::Op op,
                                const std::vector<uint32_t>& ranks,
                                uint64_t bytes,
                                const std::vector<int64_t>& entry,
                                const std::vector<uint64_t>& rxBytes,
                                bool scaleOut)
{
    if (ranks.empty() || (!entry.empty() && entry.size() != ranks.size()) ||
        (!rxBytes.empty() && rxBytes.size() != ranks.size()))
    {
        throw std::logic_error("CollectiveSchedule: in-switch operation needs one entry and "
                               "one byte count per rank");
    }
    InSwitch op1;
    op1.op = op;
    op1.ranks = ranks;
    op1.bytes = bytes;
    op1.scaleOut = scaleOut;
    const auto index = static_cast<int32_t>(m_inSwitch.size());
    Step start;
    start.src = ranks.front();
    start.dst = ranks.front();
    start.inSwitch = index;
    start.inSwitchStart = true;
    op1.start = Add(std::move(start), entry);
    std::vector<int64_t> out;
    for (std::size_t i = 0; i < ranks.size(); ++i)
    {
        // Depends on the start only so that it is never a root and follows it in the DAG:
        // the plane's rankDone completes it.
        Step done;
        done.src = ranks[i];
        done.dst = ranks[i];
        done.bytes = rxBytes.empty() ? 0 : rxBytes[i];
        done.inSwitch = index;
        op1.complete.push_back(Add(std::move(done), {int64_t(op1.start)}));
        out.push_back(op1.complete.back());
    }
    m_inSwitch.push_back(std::move(op1));
    return out;
}

const std::vector<CollectiveSchedule::InSwitch>&
CollectiveSchedule::GetInSwitch() const
{
    return m_inSwitch;
}

const std::vector<CollectiveSchedule::Step>&
CollectiveSchedule::GetSteps() const
{
    return m_steps;
}

std::vector<CollectiveSchedule::Step>&
CollectiveSchedule::GetSteps()
{
    return m_steps;
}

std::vector<uint32_t>
CollectiveSchedule::GetSuccessors(uint32_t step) const
{
    std::vector<uint32_t> out;
    ForEachSuccessor(step, [&out](uint32_t next) { out.push_back(next); });
    return out;
}

uint64_t
CollectiveSchedule::GetNumMessages() const
{
    return m_messages;
}

std::vector<uint64_t>
CollectiveSchedule::GetRxBytesPerRank() const
{
    std::vector<uint64_t> rx;
    for (const auto& s : m_steps)
    {
        if (s.join)
        {
            continue;
        }
        if (rx.size() <= s.dst)
        {
            rx.resize(s.dst + 1, 0);
        }
        rx[s.dst] += s.bytes;
    }
    return rx;
}

namespace
{
uint64_t
DivUp(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

uint64_t
RoundUp(uint64_t a, uint64_t g)
{
    return DivUp(a, g) * g;
}
} // namespace

std::vector<RingPiece>
SplitRing(uint64_t bytes, uint32_t p, const CollectiveSplit& split)
{
    std::vector<RingPiece> pieces;
    const uint64_t e = std::max<uint32_t>(split.elementBytes, 1);
    const uint64_t chunk = std::max(RoundUp(split.chunkBytes, e), e);
    const uint64_t loopBytes = chunk * split.numChannels * p;
    for (uint64_t loop = 0; loop < bytes; loop += loopBytes)
    {
        const uint64_t real =
            std::min(chunk, RoundUp(DivUp(bytes - loop, uint64_t(split.numChannels) * p), e));
        // NCCL's Simple slices (prims_simple.h): half a chunk each, at least minSliceBytes.
        const uint64_t slice =
            split.slicesPerChunk > 1
                ? std::max(RoundUp(DivUp(real, split.slicesPerChunk), e), split.minSliceBytes)
                : real;
        for (uint32_t c = 0; c < split.numChannels; ++c)
        {
            for (uint32_t j = 0; j < p; ++j)
            {
                const uint64_t offset = loop + (uint64_t(c) * p + j) * real;
                const uint64_t n = offset >= bytes ? 0 : std::min(real, bytes - offset);
                if (n == 0)
                {
                    pieces.push_back(RingPiece{c, j, 0});
                }
                for (uint64_t done = 0; done < n; done += slice)
                {
                    pieces.push_back(RingPiece{c, j, std::min(slice, n - done)});
                }
            }
        }
    }
    return pieces;
}

std::vector<uint64_t>
SplitEven(uint64_t bytes, uint32_t parts, uint32_t elementBytes)
{
    const uint64_t e = std::max<uint32_t>(elementBytes, 1);
    const uint64_t share = RoundUp(DivUp(bytes, parts), e);
    std::vector<uint64_t> out(parts, 0);
    uint64_t offset = 0;
    for (uint32_t i = 0; i < parts; ++i)
    {
        out[i] = offset >= bytes ? 0 : std::min(share, bytes - offset);
        offset += out[i];
    }
    return out;
}

namespace CollectiveBuild
{
namespace
{
constexpr int64_t NONE = CollectiveSchedule::NONE;

int64_t
EntryOf(const PerRank& entry, uint32_t pos)
{
    return entry.empty() ? NONE : entry[pos];
}

// Each rank's position in the group \p ranks.
std::unordered_map<uint32_t, uint32_t>
GroupPositions(const std::vector<uint32_t>& ranks)
{
    std::unordered_map<uint32_t, uint32_t> pos;
    pos.reserve(ranks.size());
    for (uint32_t i = 0; i < ranks.size(); ++i)
    {
        pos[ranks[i]] = i;
    }
    return pos;
}

PerRank
Exits(CollectiveSchedule& s,
      const std::vector<uint32_t>& ranks,
      const std::vector<std::vector<int64_t>>& recv,
      const PerRank& entry)
{
    PerRank out(recv.size());
    for (uint32_t i = 0; i < recv.size(); ++i)
    {
        std::vector<int64_t> deps = recv[i];
        deps.push_back(EntryOf(entry, i));
        out[i] = s.AddJoin(ranks[i], deps);
    }
    return out;
}

// Prefix sums of \p sizes twice over (a window wrapping around the ring reads on into the
// second copy): prefix[i] is the sum of the first i entries of the two copies.
std::vector<uint64_t>
CircularPrefix(const std::vector<uint64_t>& sizes)
{
    const uint64_t p = sizes.size();
    std::vector<uint64_t> prefix(2 * p + 1, 0);
    for (uint64_t i = 0; i < 2 * p; ++i)
    {
        prefix[i + 1] = prefix[i] + sizes[i % p];
    }
    return prefix;
}

// Sum of sizes[(from - first - h) mod p] for h < hops, from CircularPrefix: the window of
// hops entries ending at (from - first) mod p, walked backwards.  A window longer than the
// ring (hops >= p, as an allreduce's 2 (p - 1)) holds whole turns of it and a remainder.
uint64_t
WindowEndingAt(const std::vector<uint64_t>& prefix,
               uint64_t p,
               uint32_t from,
               uint32_t first,
               uint32_t hops)
{
    const uint64_t turns = hops / p;
    const uint64_t rest = hops % p;
    const uint64_t last = (from + p - first % p) % p; // the window's last entry
    // The remainder: entries last - rest + 1 .. last, i.e. (last + p - rest + 1) .. last + p
    // in the repeated sizes.
    const uint64_t end = last + p + 1;
    return turns * prefix[p] + (prefix[end] - prefix[end - rest]);
}

// A ring pass on rings the schedule lets move in aggregate: per channel, the pieces of the
// loops in which every ring position has a piece of one size (the channel's first piece's)
// move as one message per rank and run of consecutive channels (same ring, same piece,
// same loops), carrying the `hops` steps it sends to the next rank of each of those loops.
// Its steps wait for nothing but the rank's entry: every rank enters at once in a ring of
// equal rates, where the per-step messages would go in lockstep.  The other pieces (a
// last, uneven loop) move in aggregate after them, round by round (below).  False (nothing
// added) when a ring may not move in aggregate.
bool
RingPassInAggregate(CollectiveSchedule& s,
                    const ChannelRings& rings,
                    const std::vector<RingPiece>& pieces,
                    const PerRank& entry,
                    uint32_t first,
                    uint32_t hops,
                    const std::vector<std::vector<uint32_t>>& posOf,
                    std::vector<std::vector<int64_t>>& recv)
{
    const uint32_t p = rings.front().size();
    for (const auto& ring : rings)
    {
        if (!s.CanAggregateRing(ring))
        {
            return false;
        }
    }

    // Per channel: its first piece's size, and per ring position the leading pieces of it.
    struct Channel
    {
        uint64_t piece{0};
        std::vector<uint32_t> leading;
        std::vector<bool> broken;
        uint32_t loops{0};
    };

    std::map<uint32_t, Channel> channels;
    for (const RingPiece& piece : pieces)
    {
        Channel& c = channels[piece.channel];
        if (c.leading.empty())
        {
            c.piece = piece.bytes;
            c.leading.assign(p, 0);
            c.broken.assign(p, false);
        }
        if (piece.index >= p)
        {
            return false;
        }
        if (piece.bytes == c.piece && piece.bytes > 0 && !c.broken[piece.index])
        {
            ++c.leading[piece.index];
        }
        else
        {
            c.broken[piece.index] = true;
        }
    }
    for (auto& [channel, c] : channels)
    {
        c.loops = *std::min_element(c.leading.begin(), c.leading.end());
    }
    // What the equal loops do not carry (a last, uneven loop; or its slices): per channel,
    // round r holds every position's r-th piece after them (0: none).
    std::map<uint32_t, std::vector<std::vector<uint64_t>>> rounds;
    // Pieces seen per (channel, position), flat: a ring pass has channels x p of them.
    const uint32_t channelSpan = channels.empty() ? 0 : channels.rbegin()->first + 1;
    std::vector<uint32_t> taken(uint64_t{channelSpan} * p, 0);
    for (const RingPiece& piece : pieces)
    {
        uint32_t& n = taken[uint64_t{piece.channel} * p + piece.index];
        const uint32_t loops = channels.at(piece.channel).loops;
        if (n >= loops)
        {
            auto& r = rounds[piece.channel];
            if (r.size() <= n - loops)
            {
                r.resize(n - loops + 1, std::vector<uint64_t>(p, 0));
            }
            r[n - loops][piece.index] = piece.bytes;
        }
        ++n;
    }
    // Per channel: the first channel of the loops' aggregate that carries it, and that
    // aggregate per sending ring position.
    std::map<uint32_t, uint32_t> loopsOn;
    std::map<uint32_t, std::vector<int64_t>> loopsFrom;
    for (auto it = channels.begin(); it != channels.end();)
    {
        if (it->second.loops == 0)
        {
            ++it;
            continue;
        }
        // A run of consecutive channels on one ring with one piece and as many loops moves
        // as lanes of one flow.
        const uint32_t first = it->first;
        const uint64_t piece = it->second.piece;
        const uint32_t loops = it->second.loops;
        const uint32_t k = first % rings.size();
        uint32_t lanes = 0;
        while (it != channels.end() && it->first == first + lanes && it->second.piece == piece &&
               it->second.loops == loops && rings[it->first % rings.size()] == rings[k] &&
               lanes < 255)
        {
            loopsOn[it->first] = first;
            ++lanes;
            ++it;
        }
        for (uint32_t from = 0; from < p; ++from)
        {
            const uint32_t to = (from + 1) % p;
            const int64_t msg = s.AddAggregate(rings[k][from],
                                               rings[k][to],
                                               piece * hops * lanes * loops,
                                               first,
                                               hops,
                                               lanes,
                                               {EntryOf(entry, posOf[k][from])},
                                               loops);
            recv[posOf[k][to]].push_back(msg);
            loopsFrom[first].push_back(msg);
        }
    }
    auto loopsOf = [&loopsOn](uint32_t channel) {
        const auto it = loopsOn.find(channel);
        return it == loopsOn.end() ? int64_t(NONE) : int64_t(it->second);
    };
    // Each round moves in aggregate too, after the loops of its channels, consecutive
    // channels with the same ring, pieces and loops' aggregate as lanes.  At
    // hop h the rank at ring position x sends piece (x - first - h) mod p: its aggregate
    // carries its own sum of them, and as the ring goes in lockstep (a step waits for the
    // one before it on every rank) each step lasts as long as the round's largest piece.
    size_t maxRounds = 0;
    for (const auto& [channel, r] : rounds)
    {
        maxRounds = std::max(maxRounds, r.size());
    }
    for (size_t round = 0; round < maxRounds; ++round)
    {
        for (auto it = rounds.begin(); it != rounds.end();)
        {
            if (it->second.size() <= round)
            {
                ++it;
                continue;
            }
            const uint32_t channel = it->first;
            const std::vector<uint64_t>& sizes = it->second[round];
            const uint32_t k = channel % rings.size();
            uint32_t lanes = 0;
            while (it != rounds.end() && it->first == channel + lanes &&
                   it->second.size() > round && it->second[round] == sizes &&
                   rings[it->first % rings.size()] == rings[k] &&
                   loopsOf(it->first) == loopsOf(channel) && lanes < 255)
            {
                ++lanes;
                ++it;
            }
            const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
            const bool even = *std::min_element(sizes.begin(), sizes.end()) == largest;
            // The rank at position x sends, over its hops, the pieces x - first - h (mod p)
            // for h < hops: a circular window of the sizes, summed from prefix sums (a
            // ring of p ranks, hops about p: not p^2 additions).
            const std::vector<uint64_t> prefix = CircularPrefix(sizes);
            for (uint32_t from = 0; from < p && largest > 0; ++from)
            {
                const uint64_t own = WindowEndingAt(prefix, sizes.size(), from, first, hops);
                if (own == 0)
                {
                    continue;
                }
                const uint32_t to = (from + 1) % p;
                // Behind its channels' loops: queued on the channel when the loops'
                // aggregate is on it, else after that aggregate of the rank.
                const int64_t loops = loopsOf(channel);
                const int64_t msg = s.AddAggregate(
                    rings[k][from],
                    rings[k][to],
                    own * lanes,
                    channel,
                    hops,
                    lanes,
                    {EntryOf(entry, posOf[k][from]),
                     loops == NONE || loops == channel ? NONE : loopsFrom.at(loops)[from]},
                    1,
                    even ? 0 : largest);
                recv[posOf[k][to]].push_back(msg);
            }
        }
    }
    return true;
}

// Ring passes: piece j of channel c moves `hops` times along rings[c % rings.size()] (a
// permutation of ranks), starting at ring position (j + first) mod p.  entry and the joins
// are indexed by position in ranks.
PerRank
RingPass(CollectiveSchedule& s,
         const std::vector<uint32_t>& ranks,
         const ChannelRings& rings,
         const std::vector<RingPiece>& pieces,
         const PerRank& entry,
         uint32_t first,
         uint32_t hops)
{
    const uint32_t p = ranks.size();
    std::vector<std::vector<int64_t>> recv(p);
    const auto groupPos = GroupPositions(ranks);
    // Ring position -> group position, per ring.
    std::vector<std::vector<uint32_t>> posOf(rings.size(), std::vector<uint32_t>(p));
    for (uint32_t k = 0; k < rings.size(); ++k)
    {
        for (uint32_t x = 0; x < p; ++x)
        {
            posOf[k][x] = groupPos.at(rings[k][x]);
        }
    }
    if (p > 1 && !RingPassInAggregate(s, rings, pieces, entry, first, hops, posOf, recv))
    {
        for (const RingPiece& piece : pieces)
        {
            if (piece.bytes == 0)
            {
                continue;
            }
            const uint32_t k = piece.channel % rings.size();
            int64_t prev = NONE;
            for (uint32_t h = 0; h < hops; ++h)
            {
                const uint32_t from = (piece.index + first + h) % p;
                const uint32_t to = (from + 1) % p;
                prev = s.AddMessage(rings[k][from],
                                    rings[k][to],
                                    piece.bytes,
                                    piece.channel,
                                    {h == 0 ? EntryOf(entry, posOf[k][from]) : prev});
                recv[posOf[k][to]].push_back(prev);
            }
        }
    }
    return Exits(s, ranks, recv, entry);
}
} // namespace

PerRank
RingReduceScatter(CollectiveSchedule& s,
                  const std::vector<uint32_t>& ranks,
                  uint64_t bytes,
                  const CollectiveSplit& split,
                  const PerRank& entry,
                  const ChannelRings& rings)
{
    // Piece j ends, fully reduced, at its owner position j.
    const ChannelRings& r = rings.empty() ? ChannelRings{ranks} : rings;
    return RingPass(s, ranks, r, SplitRing(bytes, ranks.size(), split), entry, 1, ranks.size() - 1);
}

PerRank
RingAllGather(CollectiveSchedule& s,
              const std::vector<uint32_t>& ranks,
              uint64_t bytes,
              const CollectiveSplit& split,
              const PerRank& entry,
              const ChannelRings& rings)
{
    const ChannelRings& r = rings.empty() ? ChannelRings{ranks} : rings;
    return RingPass(s, ranks, r, SplitRing(bytes, ranks.size(), split), entry, 0, ranks.size() - 1);
}

PerRank
RingAllReduce(CollectiveSchedule& s,
              const std::vector<uint32_t>& ranks,
              uint64_t bytes,
              const CollectiveSplit& split,
              const PerRank& entry,
              const ChannelRings& rings)
{
    const ChannelRings& r = rings.empty() ? ChannelRings{ranks} : rings;
    return RingPass(s,
                    ranks,
                    r,
                    SplitRing(bytes, ranks.size(), split),
                    entry,
                    0,
                    2 * (ranks.size() - 1));
}

ChannelRings
RingsAcrossDomains(const std::vector<std::vector<uint32_t>>& domains, uint32_t numChannels)
{
    ChannelRings rings(std::max<uint32_t>(numChannels, 1));
    for (uint32_t c = 0; c < rings.size(); ++c)
    {
        for (uint32_t d = 0; d < domains.size(); ++d)
        {
            const uint32_t l = domains[d].size();
            for (uint32_t k = 0; k < l; ++k)
            {
                // Even domains forward from local c, odd ones backward from local c - 1: the
                // ring leaves domain d at the local index where it enters domain d + 1.
                const uint32_t local = d % 2 == 0 ? (c + k) % l : (c + 2 * l - 1 - k) % l;
                rings[c].push_back(domains[d][local]);
            }
        }
    }
    return rings;
}

PerRank
HalvingDoublingAllReduce(CollectiveSchedule& s,
                         const std::vector<uint32_t>& ranks,
                         uint64_t bytes,
                         const CollectiveSplit& split,
                         const PerRank& entry)
{
    const uint32_t p = ranks.size();
    std::vector<std::vector<int64_t>> recv(p);
    if (p < 2)
    {
        return Exits(s, ranks, recv, entry);
    }
    uint32_t q = 1;
    while (q * 2 <= p)
    {
        q *= 2;
    }
    const uint32_t extra = p - q;
    // Non-power-of-two (Rabenseifner): odd positions 2i+1 < 2*extra hand their whole
    // buffer to 2i first and get the result back at the end.
    std::vector<uint32_t> posOf(q);
    std::vector<int64_t> ready(q);
    for (uint32_t v = 0; v < q; ++v)
    {
        if (v < extra)
        {
            posOf[v] = 2 * v;
            const int64_t pre =
                s.AddMessage(ranks[2 * v + 1], ranks[2 * v], bytes, 0, {EntryOf(entry, 2 * v + 1)});
            recv[2 * v].push_back(pre);
            ready[v] = s.AddJoin(ranks[2 * v], {pre, EntryOf(entry, 2 * v)});
        }
        else
        {
            posOf[v] = v + extra;
            ready[v] = EntryOf(entry, v + extra);
        }
    }
    const std::vector<uint64_t> block = SplitEven(bytes, q, split.elementBytes);
    auto rangeBytes = [&block](uint32_t lo, uint32_t hi) {
        uint64_t b = 0;
        for (uint32_t i = lo; i < hi; ++i)
        {
            b += block[i];
        }
        return b;
    };
    std::vector<uint32_t> lo(q, 0);
    std::vector<uint32_t> hi(q, q);
    // One exchange round: every v sends `sendBytes(v)` to v ^ d once both are ready
    // (a rendezvous sendrecv: a large send waits for the peer to post its receive, so
    // a rank still folding in its odd neighbour is not flooded early).
    auto exchange = [&](uint32_t d, const std::vector<uint64_t>& sendBytes) {
        std::vector<int64_t> got(q);
        for (uint32_t v = 0; v < q; ++v)
        {
            const uint32_t w = v ^ d;
            got[w] = s.AddMessage(ranks[posOf[v]],
                                  ranks[posOf[w]],
                                  sendBytes[v],
                                  0,
                                  {ready[v], ready[w]});
            recv[posOf[w]].push_back(got[w]);
        }
        ready = got;
    };
    for (uint32_t d = q / 2; d >= 1; d /= 2)
    {
        std::vector<uint64_t> send(q);
        for (uint32_t v = 0; v < q; ++v)
        {
            const uint32_t mid = (lo[v] + hi[v]) / 2;
            const bool keepLow = v < mid;
            send[v] = keepLow ? rangeBytes(mid, hi[v]) : rangeBytes(lo[v], mid);
        }
        exchange(d, send);
        for (uint32_t v = 0; v < q; ++v)
        {
            const uint32_t mid = (lo[v] + hi[v]) / 2;
            (v < mid ? hi[v] : lo[v]) = mid;
        }
    }
    for (uint32_t d = 1; d < q; d *= 2)
    {
        std::vector<uint64_t> send(q);
        for (uint32_t v = 0; v < q; ++v)
        {
            send[v] = rangeBytes(lo[v], hi[v]);
        }
        exchange(d, send);
        std::vector<uint32_t> nlo(q);
        std::vector<uint32_t> nhi(q);
        for (uint32_t v = 0; v < q; ++v)
        {
            nlo[v] = std::min(lo[v], lo[v ^ d]);
            nhi[v] = std::max(hi[v], hi[v ^ d]);
        }
        lo = nlo;
        hi = nhi;
    }
    for (uint32_t v = 0; v < extra; ++v)
    {
        const int64_t post = s.AddMessage(ranks[2 * v], ranks[2 * v + 1], bytes, 0, {ready[v]});
        recv[2 * v + 1].push_back(post);
    }
    return Exits(s, ranks, recv, entry);
}

std::vector<int32_t>
BinaryTreeParents(uint32_t p)
{
    std::vector<int32_t> parent(p, -1);
    for (uint32_t r = 1; r < p; ++r)
    {
        uint32_t bit = 1;
        while (!(bit & r))
        {
            bit <<= 1;
        }
        uint32_t up = (r ^ bit) | (bit << 1);
        if (up >= p)
        {
            up = r ^ bit;
        }
        parent[r] = up;
    }
    return parent;
}

std::vector<int32_t>
ComplementaryTreeParents(uint32_t p)
{
    const std::vector<int32_t> t0 = BinaryTreeParents(p);
    std::vector<int32_t> t1(p, -1);
    for (uint32_t r = 0; r < p; ++r)
    {
        // NCCL: mirror for even p, shift by one for odd p.
        const uint32_t r0 = (p % 2 == 0) ? p - 1 - r : (r + p - 1) % p;
        const int32_t parent0 = t0[r0];
        if (parent0 >= 0)
        {
            t1[r] = (p % 2 == 0) ? int32_t(p - 1 - parent0) : int32_t((parent0 + 1) % p);
        }
    }
    return t1;
}

namespace
{
std::vector<uint32_t>
Depths(const std::vector<int32_t>& parents)
{
    std::vector<uint32_t> depth(parents.size(), 0);
    for (uint32_t r = 0; r < parents.size(); ++r)
    {
        for (int32_t x = parents[r]; x >= 0; x = parents[x])
        {
            ++depth[r];
        }
    }
    return depth;
}

// A tree's ranks deepest first (the order its reduce walks up), each rank's children in
// that order, and its root.
struct TreeShape
{
    std::vector<uint32_t> upOrder;
    std::vector<std::vector<uint32_t>> children;
    uint32_t root{0};
};

TreeShape
ShapeOf(const std::vector<int32_t>& parent)
{
    const auto p = static_cast<uint32_t>(parent.size());
    const std::vector<uint32_t> depth = Depths(parent);
    TreeShape t;
    t.upOrder.resize(p);
    for (uint32_t i = 0; i < p; ++i)
    {
        t.upOrder[i] = i;
    }
    std::stable_sort(t.upOrder.begin(), t.upOrder.end(), [&depth](uint32_t a, uint32_t b) {
        return depth[a] > depth[b];
    });
    t.children.resize(p);
    for (uint32_t r : t.upOrder)
    {
        if (parent[r] >= 0)
        {
            t.children[parent[r]].push_back(r);
        }
        else
        {
            t.root = r;
        }
    }
    return t;
}
} // namespace

uint32_t
TreeDepth(const std::vector<int32_t>& parents)
{
    const std::vector<uint32_t> d = Depths(parents);
    return d.empty() ? 0 : *std::max_element(d.begin(), d.end());
}

namespace
{
// NCCL's chunk rule for pipelined trees and chains (enqueue.cc): halve the chunk while the
// buffer gives fewer than depth x a chunks per way above 128 KiB, depth x b above 64 KiB and
// depth above 32 KiB.
uint64_t
HalvedChunkBytes(uint64_t bytes, uint64_t ways, uint64_t depth, uint64_t c, uint64_t a, uint64_t b)
{
    while (bytes / (ways * c) < depth * a && c > 131072)
    {
        c /= 2;
    }
    while (bytes / (ways * c) < depth * b && c > 65536)
    {
        c /= 2;
    }
    while (bytes / (ways * c) < depth && c > 32768)
    {
        c /= 2;
    }
    return c;
}
} // namespace

uint64_t
TreeChunkBytes(uint64_t bytes, uint32_t depth, uint64_t maxChunkBytes)
{
    // NCCL (enqueue.cc, tree + Simple protocol): halve the chunk while the buffer
    // gives too few chunks per tree to fill a pipeline of `depth` levels.
    return HalvedChunkBytes(bytes, 2, depth, maxChunkBytes, 8, 4);
}

uint64_t
HierarchicalChunkBytes(uint64_t bytes, uint64_t concurrentOps, uint64_t maxChunkBytes)
{
    // NCCL (enqueue.cc, NVLS_TREE): each rule sees the chunk the previous one left.
    uint64_t c = maxChunkBytes;
    const uint64_t ops = std::max<uint64_t>(concurrentOps, 1);
    const std::pair<uint64_t, uint64_t> rules[] = {{32, 262144},
                                                   {16, 131072},
                                                   {4, 65536},
                                                   {1, 32768}};
    for (const auto& [chunks, limit] : rules)
    {
        if (bytes < chunks * ops * c && c > limit)
        {
            c = limit;
        }
    }
    return c;
}

namespace
{
// Reduce up and broadcast down each of \p trees (parents by position in \p ranks), tree t
// on channel t with its even share of the buffer, pipelined per chunk.
PerRank
TreesAllReduce(CollectiveSchedule& s,
               const std::vector<uint32_t>& ranks,
               uint64_t bytes,
               const CollectiveSplit& split,
               const PerRank& entry,
               const std::vector<std::vector<int32_t>>& trees)
{
    const uint32_t p = ranks.size();
    std::vector<std::vector<int64_t>> recv(p);
    if (p < 2 || trees.empty())
    {
        return Exits(s, ranks, recv, entry);
    }
    const std::vector<uint64_t> shares = SplitEven(bytes, trees.size(), split.elementBytes);
    const uint64_t e = std::max<uint32_t>(split.elementBytes, 1);
    uint32_t depth = 0;
    for (const auto& parent : trees)
    {
        depth = std::max(depth, TreeDepth(parent));
    }
    const uint64_t chunk = std::max(RoundUp(TreeChunkBytes(bytes, depth, split.chunkBytes), e), e);
    for (uint32_t t = 0; t < trees.size(); ++t)
    {
        const std::vector<int32_t>& parent = trees[t];
        const TreeShape shape = ShapeOf(parent);
        const std::vector<uint32_t>& upOrder = shape.upOrder;
        const std::vector<std::vector<uint32_t>>& children = shape.children;
        const uint32_t root = shape.root;
        // NCCL gives each connection NCCL_STEPS buffer slots: chunk k may only go to a
        // peer once that peer has passed chunk k - slots on.  Without this window a
        // leaf, whose chunks are all ready at once, would take more than its share of
        // its rank's injection and starve the rank's interior-tree flows.
        const uint64_t slots = std::max<uint32_t>(split.pipelineSlots, 1);
        std::vector<std::vector<int64_t>> upHist;
        std::vector<int64_t> rootHist;
        std::vector<std::vector<std::vector<int64_t>>> downHist;
        for (uint64_t off = 0, k = 0; off < shares[t]; off += chunk, ++k)
        {
            const uint64_t n = std::min(chunk, shares[t] - off);
            std::vector<int64_t> up(p, NONE);
            int64_t reduced = NONE; // the root has every child's chunk
            for (uint32_t r : upOrder)
            {
                std::vector<int64_t> deps{EntryOf(entry, r)};
                for (uint32_t c : children[r])
                {
                    deps.push_back(up[c]);
                }
                if (parent[r] < 0)
                {
                    reduced = s.AddJoin(ranks[r], deps);
                    continue;
                }
                if (k >= slots)
                {
                    deps.push_back(parent[parent[r]] < 0 && uint32_t(parent[r]) == root
                                       ? rootHist[k - slots]
                                       : upHist[k - slots][parent[r]]);
                }
                up[r] = s.AddMessage(ranks[r], ranks[parent[r]], n, t, deps);
                recv[parent[r]].push_back(up[r]);
            }
            std::vector<int64_t> have(p, NONE);
            std::vector<std::vector<int64_t>> out(p);
            have[root] = reduced;
            for (auto it = upOrder.rbegin(); it != upOrder.rend(); ++it)
            {
                for (uint32_t c : children[*it])
                {
                    std::vector<int64_t> deps{have[*it]};
                    if (k >= slots)
                    {
                        const auto& passedOn = downHist[k - slots][c];
                        deps.insert(deps.end(), passedOn.begin(), passedOn.end());
                    }
                    have[c] = s.AddMessage(ranks[*it], ranks[c], n, t, deps);
                    out[*it].push_back(have[c]);
                    recv[c].push_back(have[c]);
                }
            }
            upHist.push_back(std::move(up));
            rootHist.push_back(reduced);
            downHist.push_back(std::move(out));
        }
    }
    return Exits(s, ranks, recv, entry);
}
} // namespace

PerRank
DoubleBinaryTreeAllReduce(CollectiveSchedule& s,
                          const std::vector<uint32_t>& ranks,
                          uint64_t bytes,
                          const CollectiveSplit& split,
                          const PerRank& entry)
{
    const auto p = static_cast<uint32_t>(ranks.size());
    return TreesAllReduce(s,
                          ranks,
                          bytes,
                          split,
                          entry,
                          {BinaryTreeParents(p), ComplementaryTreeParents(p)});
}

std::vector<std::vector<int32_t>>
NcclTreesAcrossDomains(const std::vector<std::vector<uint32_t>>& domains, uint32_t lanes)
{
    const auto nodes = static_cast<uint32_t>(domains.size());
    uint32_t p = 0;
    for (const auto& d : domains)
    {
        p += d.size();
    }
    const std::vector<int32_t> dtree[2] = {BinaryTreeParents(nodes),
                                           ComplementaryTreeParents(nodes)};
    std::vector<std::vector<int32_t>> trees;
    for (uint32_t c = 0; c < lanes; ++c)
    {
        const std::vector<int32_t>& nodeParent = dtree[c % 2];
        std::vector<int32_t> parent(p, -1);
        for (uint32_t n = 0; n < nodes; ++n)
        {
            const std::vector<uint32_t>& d = domains[n];
            const auto ppn = static_cast<uint32_t>(d.size());
            NS_ABORT_MSG_IF(ppn == 0, "NcclTreesAcrossDomains: domain " << n << " is empty");
            // The chain from the head, local c on: each GPU's parent is the one before it.
            const uint32_t head = c % ppn;
            for (uint32_t i = 1; i < ppn; ++i)
            {
                parent[d[(head + i) % ppn]] = static_cast<int32_t>(d[(head + i - 1) % ppn]);
            }
            // The head's parent: the head of the parent node's chain, on the same rail.
            if (nodeParent[n] >= 0)
            {
                const std::vector<uint32_t>& up = domains[nodeParent[n]];
                parent[d[head]] = static_cast<int32_t>(up[c % up.size()]);
            }
        }
        trees.push_back(std::move(parent));
    }
    return trees;
}

PerRank
NcclTreeAllReduce(CollectiveSchedule& s,
                  const std::vector<uint32_t>& ranks,
                  const std::vector<std::vector<uint32_t>>& domains,
                  uint64_t bytes,
                  uint32_t lanes,
                  const CollectiveSplit& split,
                  const PerRank& entry)
{
    const auto groupPos = GroupPositions(ranks);
    std::vector<std::vector<uint32_t>> positions;
    for (const auto& d : domains)
    {
        positions.emplace_back();
        for (uint32_t r : d)
        {
            positions.back().push_back(groupPos.at(r));
        }
    }
    return TreesAllReduce(s, ranks, bytes, split, entry, NcclTreesAcrossDomains(positions, lanes));
}

namespace
{
/// One point-to-point part from src to dst on \p channel, its arrivals appended to \p recv:
/// one message, or through the schedule's PXN relay, where src writes each chunk into the
/// relay GPU's buffer over NVLink and the relay's proxy sends it from its own NIC, so the two
/// legs overlap chunk by chunk.
void
AddPeerPart(CollectiveSchedule& s,
            uint32_t src,
            uint32_t dst,
            uint64_t bytes,
            uint32_t channel,
            int64_t entry,
            std::vector<int64_t>& recv)
{
    const int64_t via = s.RelayOf(src, dst);
    if (via < 0)
    {
        recv.push_back(s.AddMessage(src, dst, bytes, channel, {entry}));
        return;
    }
    const uint64_t chunk = s.GetRelayChunkBytes(bytes);
    for (uint64_t done = 0; done < bytes; done += chunk)
    {
        const uint64_t n = std::min(chunk, bytes - done);
        const int64_t copied = s.AddMessage(src, static_cast<uint32_t>(via), n, channel, {entry});
        recv.push_back(s.AddMessage(static_cast<uint32_t>(via), dst, n, channel, {copied}));
    }
}
} // namespace

PerRank
DirectAllToAll(CollectiveSchedule& s,
               const std::vector<uint32_t>& ranks,
               uint64_t bytes,
               const CollectiveSplit& split,
               const PerRank& entry)
{
    const uint32_t p = ranks.size();
    std::vector<std::vector<int64_t>> recv(p);
    const std::vector<uint64_t> piece = SplitEven(bytes, p, split.elementBytes);
    for (uint32_t i = 0; i < p; ++i)
    {
        for (uint32_t k = 1; k < p; ++k)
        {
            const uint32_t j = (i + k) % p; // staggered start, as NCCL's p2p schedule
            if (piece[j] == 0)
            {
                continue;
            }
            // Channel k: each peer's part reaches j on channels of its own (NCCL's p2p
            // rounds), so a receiving channel's limits are per peer.
            AddPeerPart(s, ranks[i], ranks[j], piece[j], k, EntryOf(entry, i), recv[j]);
        }
    }
    return Exits(s, ranks, recv, entry);
}

PerRank
DirectAllGather(CollectiveSchedule& s,
                const std::vector<uint32_t>& ranks,
                uint64_t bytes,
                const CollectiveSplit& split,
                const PerRank& entry)
{
    const uint32_t p = ranks.size();
    std::vector<std::vector<int64_t>> recv(p);
    const std::vector<uint64_t> piece = SplitEven(bytes, p, split.elementBytes);
    for (uint32_t i = 0; i < p; ++i)
    {
        for (uint32_t k = 1; k < p && piece[i] > 0; ++k)
        {
            const uint32_t j = (i + k) % p;
            recv[j].push_back(s.AddMessage(ranks[i], ranks[j], piece[i], 0, {EntryOf(entry, i)}));
        }
    }
    return Exits(s, ranks, recv, entry);
}

PerRank
DirectReduceScatter(CollectiveSchedule& s,
                    const std::vector<uint32_t>& ranks,
                    uint64_t bytes,
                    const CollectiveSplit& split,
                    const PerRank& entry)
{
    return DirectAllToAll(s, ranks, bytes, split, entry);
}

PerRank
ChainBroadcast(CollectiveSchedule& s,
               const std::vector<uint32_t>& ranks,
               uint64_t bytes,
               uint32_t rootPosition,
               const CollectiveSplit& split,
               const PerRank& entry,
               const ChannelRings& rings,
               bool toRoot)
{
    const uint32_t p = ranks.size();
    const uint32_t root = p > 0 ? ranks[rootPosition % p] : 0;
    // A reduce's chain starts after the root in each ring, so that it ends there.
    const uint32_t offset = toRoot ? 1 : 0;
    std::vector<std::vector<int64_t>> recv(p);
    const uint64_t chunk = std::max<uint64_t>(split.chunkBytes, 1);
    // One chain per channel, each over its share of the buffer (NCCL's ring broadcast
    // splits the buffer over its channels as the ring collectives do), along the channel's
    // ring (broadcast.h, reduce.h: ring->userRanks).
    const std::vector<uint64_t> share =
        SplitEven(bytes, std::max<uint32_t>(split.numChannels, 1), split.elementBytes);
    std::unordered_map<uint32_t, uint32_t> position;
    for (uint32_t i = 0; i < p; ++i)
    {
        position[ranks[i]] = i;
    }
    for (uint32_t c = 0; c < share.size() && p > 1; ++c)
    {
        const std::vector<uint32_t>& ring = rings.empty() ? ranks : rings[c % rings.size()];
        const uint32_t start =
            (std::find(ring.begin(), ring.end(), root) - ring.begin() + offset) % p;
        for (uint64_t off = 0; off < share[c]; off += chunk)
        {
            const uint64_t n = std::min(chunk, share[c] - off);
            int64_t prev = NONE;
            for (uint32_t h = 1; h < p; ++h)
            {
                const uint32_t from = position.at(ring[(start + h - 1) % p]);
                const uint32_t to = position.at(ring[(start + h) % p]);
                prev = s.AddMessage(ranks[from], ranks[to], n, c, {EntryOf(entry, from), prev});
                recv[to].push_back(prev);
            }
        }
    }
    return Exits(s, ranks, recv, entry);
}

PerRank
RingSendRecv(CollectiveSchedule& s,
             const std::vector<uint32_t>& ranks,
             uint64_t bytes,
             const CollectiveSplit& split,
             const PerRank& entry)
{
    const uint32_t p = ranks.size();
    std::vector<std::vector<int64_t>> recv(p);
    for (uint32_t i = 0; i < p && p > 1 && bytes > 0; ++i)
    {
        const uint32_t j = (i + 1) % p;
        AddPeerPart(s, ranks[i], ranks[j], bytes, 0, EntryOf(entry, i), recv[j]);
    }
    return Exits(s, ranks, recv, entry);
}

namespace
{
// The rail of local index i: rank i of every domain.
std::vector<uint32_t>
Rail(const std::vector<std::vector<uint32_t>>& domains, uint32_t i)
{
    std::vector<uint32_t> rail;
    for (const auto& d : domains)
    {
        rail.push_back(d[i]);
    }
    return rail;
}
} // namespace

PerRank
HierarchicalAllReduce(CollectiveSchedule& s,
                      const std::vector<std::vector<uint32_t>>& domains,
                      uint64_t bytes,
                      const CollectiveSplit& split)
{
    const uint32_t numDomains = domains.size();
    const uint32_t local = domains.front().size();
    std::vector<PerRank> phase1(numDomains);
    for (uint32_t d = 0; d < numDomains; ++d)
    {
        phase1[d] = RingReduceScatter(s, domains[d], bytes, split, {});
    }
    // After the reduce-scatter, local index i owns piece i of every ring loop.
    std::vector<uint64_t> owned(local, 0);
    for (const RingPiece& piece : SplitRing(bytes, local, split))
    {
        owned[piece.index] += piece.bytes;
    }
    std::vector<PerRank> phase2(numDomains, PerRank(local));
    for (uint32_t i = 0; i < local; ++i)
    {
        PerRank entry(numDomains);
        for (uint32_t d = 0; d < numDomains; ++d)
        {
            entry[d] = phase1[d][i];
        }
        const PerRank out = RingAllReduce(s, Rail(domains, i), owned[i], split, entry);
        for (uint32_t d = 0; d < numDomains; ++d)
        {
            phase2[d][i] = out[d];
        }
    }
    PerRank exits;
    for (uint32_t d = 0; d < numDomains; ++d)
    {
        const PerRank out = RingAllGather(s, domains[d], bytes, split, phase2[d]);
        exits.insert(exits.end(), out.begin(), out.end());
    }
    return exits;
}

DomainPhase
RingDomainReduceScatter()
{
    return [](CollectiveSchedule& s,
              const std::vector<uint32_t>& domain,
              const std::vector<RingPiece>& slice,
              const PerRank& entry) {
        return RingPass(s, domain, {domain}, slice, entry, 1, domain.size() - 1);
    };
}

DomainPhase
RingDomainAllGather()
{
    return [](CollectiveSchedule& s,
              const std::vector<uint32_t>& domain,
              const std::vector<RingPiece>& slice,
              const PerRank& entry) {
        return RingPass(s, domain, {domain}, slice, entry, 0, domain.size() - 1);
    };
}

DomainPhase
InSwitchDomainPhase(InSwitchReductionPlane::Op op)
{
    return [op](CollectiveSchedule& s,
                const std::vector<uint32_t>& domain,
                const std::vector<RingPiece>& slice,
                const PerRank& entry) {
        uint64_t bytes = 0;
        std::vector<uint64_t> owned(domain.size(), 0);
        for (const RingPiece& piece : slice)
        {
            owned[piece.index] += piece.bytes;
            bytes += piece.bytes;
        }
        if (op != InSwitchReductionPlane::Op::ReduceScatter)
        {
            owned.assign(domain.size(), bytes);
        }
        return s.AddInSwitch(op, domain, bytes, entry, owned);
    };
}

namespace
{
/// Every member sends to every other, staggered as NCCL's direct sends: the receiver's shard
/// (reduce-scatter) or the sender's own (all-gather); a member without bytes sends none.
DomainPhase
DirectDomainExchange(bool receiversShard)
{
    return [receiversShard](CollectiveSchedule& s,
                            const std::vector<uint32_t>& domain,
                            const std::vector<RingPiece>& slice,
                            const PerRank& entry) {
        const uint32_t p = domain.size();
        std::vector<uint64_t> owned(p, 0);
        for (const RingPiece& piece : slice)
        {
            owned[piece.index] += piece.bytes;
        }
        std::vector<std::vector<int64_t>> recv(p);
        for (uint32_t i = 0; i < p; ++i)
        {
            for (uint32_t k = 1; k < p; ++k)
            {
                const uint32_t j = (i + k) % p;
                const uint64_t bytes = owned[receiversShard ? j : i];
                if (bytes > 0)
                {
                    recv[j].push_back(
                        s.AddMessage(domain[i], domain[j], bytes, 0, {EntryOf(entry, i)}));
                }
            }
        }
        return Exits(s, domain, recv, entry);
    };
}
} // namespace

DomainPhase
DirectDomainReduceScatter()
{
    return DirectDomainExchange(true);
}

DomainPhase
DirectDomainAllGather()
{
    return DirectDomainExchange(false);
}

RailPhase
RingRailAllReduce()
{
    return [](CollectiveSchedule& s,
              const std::vector<uint32_t>& rail,
              uint64_t bytes,
              const CollectiveSplit& split,
              const PerRank& entry) { return RingAllReduce(s, rail, bytes, split, entry); };
}

RailPhase
TreeRailAllReduce()
{
    // One slice's message ids on one channel's tree: each position's send up (NONE at the
    // root), the root's join of its children's, each position's sends down.
    struct SliceIds
    {
        std::vector<int64_t> up;
        int64_t root{NONE};
        std::vector<std::vector<int64_t>> down;
    };

    // Per rail (keyed by its first rank) and tree, the last pipelineSlots slices.
    typedef std::map<uint32_t, std::vector<std::deque<SliceIds>>> History;
    auto history = std::make_shared<History>();
    return [history](CollectiveSchedule& s,
                     const std::vector<uint32_t>& rail,
                     uint64_t bytes,
                     const CollectiveSplit& split,
                     const PerRank& entry) {
        const uint32_t p = rail.size();
        std::vector<std::vector<int64_t>> recv(p);
        if (p < 2 || bytes == 0)
        {
            return Exits(s, rail, recv, entry);
        }
        // Channel c's share goes over tree c mod 2.  A tree's channels move in step, and a
        // rank takes its messages at one rate whatever their channel (NCCL's per-head cap,
        // NcclEndpoint::NvlsTreeRailRate_gbyte_per_s), so each tree's channels travel as one
        // message per edge, on channel t of tree t: NCCL's trees have their own connections,
        // and a message of one tree must not wait behind the other's between the same two
        // ranks (a leaf's sends up, ready slices ahead, before an interior rank's send down
        // of an older slice).  The engine charges both trees to one sink per rank.
        const uint32_t channels = std::max<uint32_t>(split.numChannels, 1);
        const uint64_t slots = std::max<uint32_t>(split.pipelineSlots, 1);
        const std::vector<uint64_t> parts = SplitEven(bytes, channels, split.elementBytes);
        uint64_t treeBytes[2] = {0, 0};
        for (uint32_t c = 0; c < channels; ++c)
        {
            treeBytes[c % 2] += parts[c];
        }
        const std::vector<int32_t> trees[2] = {BinaryTreeParents(p), ComplementaryTreeParents(p)};
        auto& perTree = (*history)[rail.front()];
        perTree.resize(2);
        for (uint32_t t = 0; t < 2; ++t)
        {
            const std::vector<int32_t>& parent = trees[t];
            const TreeShape shape = ShapeOf(parent);
            const std::vector<uint32_t>& upOrder = shape.upOrder;
            const std::vector<std::vector<uint32_t>>& children = shape.children;
            const uint32_t root = shape.root;
            std::deque<SliceIds>& past = perTree[t];
            // A connection holds `slots` chunks: this slice's chunk goes to a peer once the
            // peer passed on its chunk of `slots` slices before (the oldest one kept).
            const SliceIds* old = past.size() >= slots ? &past.front() : nullptr;
            SliceIds now;
            now.up.assign(p, NONE);
            now.down.resize(p);
            if (treeBytes[t] == 0)
            {
                past.push_back(std::move(now));
                if (past.size() > slots)
                {
                    past.pop_front();
                }
                continue;
            }
            for (uint32_t r : upOrder)
            {
                std::vector<int64_t> deps{EntryOf(entry, r)};
                for (uint32_t child : children[r])
                {
                    deps.push_back(now.up[child]);
                }
                if (parent[r] < 0)
                {
                    now.root = s.AddJoin(rail[r], deps);
                    continue;
                }
                if (old)
                {
                    const auto up = static_cast<uint32_t>(parent[r]);
                    deps.push_back(up == root ? old->root : old->up[up]);
                }
                now.up[r] = s.AddMessage(rail[r], rail[parent[r]], treeBytes[t], t, deps);
                recv[parent[r]].push_back(now.up[r]);
            }
            std::vector<int64_t> have(p, NONE);
            have[root] = now.root;
            for (auto it = upOrder.rbegin(); it != upOrder.rend(); ++it)
            {
                for (uint32_t child : children[*it])
                {
                    std::vector<int64_t> deps{have[*it]};
                    if (old)
                    {
                        deps.insert(deps.end(), old->down[child].begin(), old->down[child].end());
                    }
                    have[child] = s.AddMessage(rail[*it], rail[child], treeBytes[t], t, deps);
                    now.down[*it].push_back(have[child]);
                    recv[child].push_back(have[child]);
                }
            }
            past.push_back(std::move(now));
            if (past.size() > slots)
            {
                past.pop_front();
            }
        }
        return Exits(s, rail, recv, entry);
    };
}

RailPhase
InSwitchRailAllReduce()
{
    return [](CollectiveSchedule& s,
              const std::vector<uint32_t>& rail,
              uint64_t bytes,
              const CollectiveSplit&,
              const PerRank& entry) {
        return s.AddInSwitch(InSwitchReductionPlane::Op::AllReduce,
                             rail,
                             bytes,
                             entry,
                             std::vector<uint64_t>(rail.size(), bytes),
                             true);
    };
}

PerRank
PipelinedHierarchicalAllReduce(CollectiveSchedule& s,
                               const std::vector<std::vector<uint32_t>>& domains,
                               uint64_t bytes,
                               const CollectiveSplit& split,
                               const DomainPhase& reduceScatter,
                               const DomainPhase& allGather,
                               uint32_t domainWindow,
                               const RailPhase& acrossDomains,
                               uint32_t railWindow)
{
    const uint32_t numDomains = domains.size();
    const uint32_t local = domains.front().size();
    const std::vector<RingPiece> pieces = SplitRing(bytes, local, split);
    const std::size_t perSlice = std::size_t(split.numChannels) * local;
    // A rank's send connection holds pipelineSlots chunks (NCCL_STEPS) and one slice puts
    // local - 1 chunks per channel on it, so a phase runs at most `window` slices ahead of
    // its own completion at that rank.  Without the window every slice's first hop would be
    // queued at once and the FIFO streams would finish the slices all together, at the end.
    const uint32_t window =
        std::max<uint32_t>(1, DivUp(split.pipelineSlots, std::max<uint32_t>(local - 1, 1)));
    // Per slice, per domain, per local position: the phases' joins.
    std::vector<std::vector<PerRank>> reduced;
    std::vector<std::vector<PerRank>> across;
    std::vector<std::vector<PerRank>> gathered;
    const uint32_t inDomain = domainWindow > 0 ? domainWindow : window;
    const uint32_t acrossWindow = railWindow > 0 ? railWindow : window;
    // Rank (d, i) starts slice k's phase once its input is there and it finished slice
    // k - w of the same phase (w: the phase's window).
    auto gate = [&](const std::vector<std::vector<PerRank>>& phase,
                    uint32_t d,
                    uint32_t i,
                    int64_t input) -> int64_t {
        const std::size_t k = phase.size();
        const uint32_t w = &phase == &across ? acrossWindow : inDomain;
        if (k < w)
        {
            return input;
        }
        const int64_t previous = phase[k - w][d][i];
        return input == NONE ? previous : int64_t(s.AddJoin(domains[d][i], {input, previous}));
    };
    for (std::size_t first = 0; first < pieces.size(); first += perSlice)
    {
        // One slice: a loop of the intra-domain ring, numChannels x local pieces.
        const std::vector<RingPiece> slice(pieces.begin() + first,
                                           pieces.begin() +
                                               std::min(first + perSlice, pieces.size()));
        std::vector<uint64_t> owned(local, 0);
        for (const RingPiece& piece : slice)
        {
            owned[piece.index] += piece.bytes;
        }
        std::vector<PerRank> rs(numDomains);
        for (uint32_t d = 0; d < numDomains; ++d)
        {
            PerRank entry(local);
            for (uint32_t i = 0; i < local; ++i)
            {
                entry[i] = gate(reduced, d, i, NONE);
            }
            rs[d] = reduceScatter(s, domains[d], slice, entry);
        }
        reduced.push_back(rs);
        // Only this slice's share at each rank gates its network phase and then its gather.
        std::vector<PerRank> net(numDomains, PerRank(local));
        for (uint32_t i = 0; i < local; ++i)
        {
            PerRank entry(numDomains);
            for (uint32_t d = 0; d < numDomains; ++d)
            {
                entry[d] = gate(across, d, i, rs[d][i]);
            }
            const PerRank out = acrossDomains(s, Rail(domains, i), owned[i], split, entry);
            for (uint32_t d = 0; d < numDomains; ++d)
            {
                net[d][i] = out[d];
            }
        }
        across.push_back(net);
        std::vector<PerRank> ag(numDomains);
        for (uint32_t d = 0; d < numDomains; ++d)
        {
            PerRank entry(local);
            for (uint32_t i = 0; i < local; ++i)
            {
                entry[i] = gate(gathered, d, i, net[d][i]);
            }
            ag[d] = allGather(s, domains[d], slice, entry);
        }
        gathered.push_back(ag);
    }
    PerRank exits;
    for (uint32_t d = 0; d < numDomains; ++d)
    {
        for (uint32_t i = 0; i < local; ++i)
        {
            std::vector<int64_t> deps;
            for (const auto& slice : gathered)
            {
                deps.push_back(slice[d][i]);
            }
            exits.push_back(s.AddJoin(domains[d][i], deps));
        }
    }
    return exits;
}

uint64_t
CollNetChainChunkBytes(uint64_t bytes, uint32_t channels, uint32_t depth)
{
    return HalvedChunkBytes(bytes,
                            std::max<uint32_t>(channels, 1),
                            std::max<uint32_t>(depth, 1),
                            256 * 1024,
                            64,
                            8);
}

PerRank
CollNetChainAllReduce(CollectiveSchedule& s,
                      const std::vector<std::vector<uint32_t>>& domains,
                      uint64_t bytes,
                      const CollectiveSplit& split,
                      uint64_t chunkBytes)
{
    const uint32_t numDomains = domains.size();
    const uint32_t local = domains.front().size();
    const uint32_t channels = std::max<uint32_t>(split.numChannels, 1);
    const uint64_t e = std::max<uint32_t>(split.elementBytes, 1);
    const uint64_t chunk = std::max(RoundUp(chunkBytes, e), e);
    const uint64_t slots = std::max<uint32_t>(split.pipelineSlots, 1);
    const std::vector<uint64_t> share = SplitEven(bytes, channels, split.elementBytes);
    // Received steps per rank, domain by domain.
    std::vector<std::vector<int64_t>> recv(numDomains * local);
    for (uint32_t c = 0; c < channels; ++c)
    {
        const uint32_t head = c % local;
        // Chain positions: head + 1, head + 2, ..., head (the top).
        std::vector<uint32_t> chain;
        for (uint32_t j = 1; j <= local; ++j)
        {
            chain.push_back((head + j) % local);
        }
        // Per chunk, per domain, per chain position: the message into that position going
        // up (index j: into chain[j]), and going down (index j: into chain[j]).
        std::vector<std::vector<std::vector<int64_t>>> upHist;
        std::vector<std::vector<std::vector<int64_t>>> downHist;
        std::vector<PerRank> netHist;
        for (uint64_t off = 0; off < share[c]; off += chunk)
        {
            const uint64_t n = std::min(chunk, share[c] - off);
            const std::size_t k = upHist.size();
            std::vector<std::vector<int64_t>> up(numDomains, std::vector<int64_t>(local, NONE));
            PerRank atHead(numDomains, NONE);
            for (uint32_t d = 0; d < numDomains; ++d)
            {
                int64_t prev = NONE;
                for (uint32_t j = 0; j + 1 < local; ++j)
                {
                    std::vector<int64_t> deps{prev};
                    if (k >= slots)
                    {
                        // The next position passed chunk k - slots on (up, or to the network).
                        deps.push_back(j + 2 < local ? upHist[k - slots][d][j + 2]
                                                     : netHist[k - slots][d]);
                    }
                    prev = s.AddMessage(domains[d][chain[j]], domains[d][chain[j + 1]], n, c, deps);
                    up[d][j + 1] = prev;
                    recv[d * local + chain[j + 1]].push_back(prev);
                }
                atHead[d] = prev;
            }
            std::vector<uint32_t> rail;
            for (uint32_t d = 0; d < numDomains; ++d)
            {
                rail.push_back(domains[d][head]);
            }
            const PerRank net = s.AddInSwitch(InSwitchReductionPlane::Op::AllReduce,
                                              rail,
                                              n,
                                              atHead,
                                              std::vector<uint64_t>(numDomains, n),
                                              true);
            std::vector<std::vector<int64_t>> down(numDomains, std::vector<int64_t>(local, NONE));
            for (uint32_t d = 0; d < numDomains; ++d)
            {
                recv[d * local + head].push_back(net[d]);
                int64_t prev = net[d];
                for (uint32_t j = local - 1; j > 0; --j)
                {
                    std::vector<int64_t> deps{prev};
                    if (k >= slots && j >= 2)
                    {
                        deps.push_back(downHist[k - slots][d][j - 2]);
                    }
                    prev = s.AddMessage(domains[d][chain[j]], domains[d][chain[j - 1]], n, c, deps);
                    down[d][j - 1] = prev;
                    recv[d * local + chain[j - 1]].push_back(prev);
                }
            }
            upHist.push_back(std::move(up));
            downHist.push_back(std::move(down));
            netHist.push_back(net);
        }
    }
    PerRank exits;
    for (uint32_t d = 0; d < numDomains; ++d)
    {
        for (uint32_t i = 0; i < local; ++i)
        {
            exits.push_back(s.AddJoin(domains[d][i], recv[d * local + i]));
        }
    }
    return exits;
}

namespace
{
// Bytes of the pieces first, first + 1, ..., first + count - 1 (mod p).
uint64_t
PieceSum(const std::vector<uint64_t>& piece, uint32_t first, uint32_t count)
{
    uint64_t sum = 0;
    for (uint32_t j = 0; j < count; ++j)
    {
        sum += piece[(first + j) % piece.size()];
    }
    return sum;
}

// The PAT steps over distances `dist` in order: rank i sends to i - d (allgather: the
// pieces i .. i + c - 1 it holds) or to i + d (reduce-scatter: the partial sums of pieces
// i + d .. i + d + c - 1 it passes on), c = min(d, p - d), each after its previous receipt.
PerRank
PatSteps(CollectiveSchedule& s,
         const std::vector<uint32_t>& ranks,
         uint64_t bytes,
         const CollectiveSplit& split,
         const PerRank& entry,
         bool gather)
{
    const uint32_t p = ranks.size();
    std::vector<std::vector<int64_t>> recv(p);
    if (p < 2)
    {
        return Exits(s, ranks, recv, entry);
    }
    const std::vector<uint64_t> piece = SplitEven(bytes, p, split.elementBytes);
    std::vector<uint32_t> dist;
    for (uint32_t d = 1; d < p; d *= 2)
    {
        dist.push_back(d);
    }
    if (!gather)
    {
        std::reverse(dist.begin(), dist.end());
    }
    std::vector<int64_t> last(p, NONE); // per rank: its latest receipt
    for (uint32_t i = 0; i < p; ++i)
    {
        last[i] = EntryOf(entry, i);
    }
    for (uint32_t d : dist)
    {
        const uint32_t c = std::min(d, p - d);
        std::vector<int64_t> got(p, NONE);
        for (uint32_t i = 0; i < p; ++i)
        {
            const uint32_t to = gather ? (i + p - d) % p : (i + d) % p;
            const uint64_t n = gather ? PieceSum(piece, i, c) : PieceSum(piece, (i + d) % p, c);
            got[to] = s.AddMessage(ranks[i], ranks[to], n, 0, {last[i]});
            recv[to].push_back(got[to]);
        }
        last = got;
    }
    return Exits(s, ranks, recv, entry);
}
} // namespace

PerRank
PatAllGather(CollectiveSchedule& s,
             const std::vector<uint32_t>& ranks,
             uint64_t bytes,
             const CollectiveSplit& split,
             const PerRank& entry)
{
    return PatSteps(s, ranks, bytes, split, entry, true);
}

PerRank
PatReduceScatter(CollectiveSchedule& s,
                 const std::vector<uint32_t>& ranks,
                 uint64_t bytes,
                 const CollectiveSplit& split,
                 const PerRank& entry)
{
    return PatSteps(s, ranks, bytes, split, entry, false);
}

} // namespace CollectiveBuild

} // namespace ns3
