/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_SWITCH_REDUCTION_ENGINE_H
#define AI_FABRIC_SWITCH_REDUCTION_ENGINE_H

#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * The reduction-and-multicast engine of a switch that reduces in the fabric, shared by
 * the technologies: NvSwitch (NVLS, multimem) and InfinibandSwitch (SHARP aggregation).
 * The technology parses its own headers and rewrites the results; the engine keeps what
 * both have alike:
 *  - groups of members (GPU ids, LIDs: any id), registered once per switch;
 *  - per (group, chunk) the contributions held out of the forwarding path until every
 *    member's came (each still occupying its input buffer, so its upstream credits);
 *  - the engine's result rate per destination (EngineTail: a result ends no earlier than
 *    its engine, charged per chunk without events) and its latency (Emit: one event per
 *    chunk), the two limits that make in-switch reduction top out where hardware does.
 */
class SwitchReductionEngine
{
  public:
    /// A packet the switch received and holds: where it came from, when its tail is in.
    struct Held
    {
        Ptr<Packet> packet;
        uint32_t inPort{0};
        uint32_t vc{0};
        Time tail;
    };

    /// A result leaving the engine: back through the switch holding its contribution's
    /// input buffer (holdsInput), or as a copy that holds none.
    struct Result
    {
        Ptr<Packet> packet;
        uint32_t inPort{0};
        uint32_t vc{0};
        Time tail;
        bool holdsInput{true};
        /// Where to: the header's destination when negative, else this one
        /// (CreditSwitch::ForwardTo: one packet shared by several results).
        int64_t destination{-1};
    };

    /// The switch's forwarding of results, once their latency is over.
    typedef std::function<void(std::vector<Result>&)> EmitFunction;

    /// What Contribute did.
    enum class Outcome
    {
        Held,      //!< kept until the other members' contributions come
        Complete,  //!< the last one: \p all holds every member's, by member index
        Duplicate, //!< that member's contribution of the chunk is held already
    };

    struct Group
    {
        std::vector<uint32_t> members;
        std::vector<int32_t> memberIndex; //!< by member id, -1 = not a member
    };

    /// Empty, or why \p members cannot form group \p groupId (\p label names it in the
    /// message: "NVLS group", "SHARP group"): fewer than two, registered, a repeated id.
    std::string CheckGroup(const std::string& label,
                           uint32_t groupId,
                           const std::vector<uint32_t>& members) const;
    void RegisterGroup(uint32_t groupId, const std::vector<uint32_t>& members);
    /// Null when not registered.
    const Group* FindGroup(uint32_t groupId) const;
    /// Index of \p id in \p group, -1 if not a member.
    static int32_t MemberIndex(const Group& group, uint32_t id);

    /// Holds member \p member's contribution \p held of (\p groupId, \p chunk); on
    /// Complete, \p all gets every member's, by member index, and the chunk is free again.
    Outcome Contribute(uint32_t groupId,
                       uint32_t chunk,
                       uint32_t member,
                       Held held,
                       std::vector<Held>& all);

    /**
     * When the engine towards \p destination has delivered \p payloadBytes whose data is
     * in at \p dataTail, at \p rate_bit_per_s (0: unlimited, dataTail itself).  Results
     * towards one destination leave one after another at that rate.
     */
    Time EngineTail(uint32_t destination,
                    double rate_bit_per_s,
                    uint32_t payloadBytes,
                    Time dataTail);
    /// Forwards \p results through \p emitNow now, or \p latency later in one event (their
    /// tails move by the latency too).
    void Emit(std::vector<Result>&& results, Time latency, const EmitFunction& emitNow);

    /// Contributions held plus results waiting out the latency.
    uint64_t GetHeldPackets() const;
    uint64_t GetReducedChunks() const;
    /// Chunks with some but not all contributions held.
    uint32_t GetPendingChunks() const;
    void Clear();

  private:
    struct Slot
    {
        std::vector<Held> held; //!< index = member index
        uint32_t arrived{0};
    };

    struct GroupState
    {
        Group group;
        std::unordered_map<uint32_t, uint32_t> pending; //!< chunk -> slot
    };

    std::unordered_map<uint32_t, GroupState> m_groups;
    std::vector<Slot> m_slots; //!< reused, so a chunk allocates nothing once warm
    std::vector<uint32_t> m_freeSlots;
    std::vector<Time> m_engineFree; //!< by destination: the engine towards it is busy until
    uint32_t m_lastPayloadBytes{0}; //!< EngineTail's last (size, rate) and its duration
    double m_lastRate_bit_per_s{0};
    Time m_lastDuration;
    uint64_t m_held{0};     //!< contributions held
    uint64_t m_inEngine{0}; //!< results waiting out the latency
    uint64_t m_reducedChunks{0};
    uint32_t m_pendingChunks{0};
};

} // namespace ns3

#endif
