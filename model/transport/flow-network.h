/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_FLOW_NETWORK_H
#define AI_FABRIC_FLOW_NETWORK_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Fluid flows on capacitated links, sharing them weighted max-min fairly (progressive
 * filling: every unfrozen flow's rate grows in proportion to its weight until a link it
 * crosses is full, then the flows of that link keep their rate).  A flow may cross a link
 * with a share below 1: a sprayed flow puts that fraction of its rate on each parallel link.
 *
 * Rates change only when a flow starts or drains.  Those events mark the flow's links, and
 * one recomputation at the end of the instant (scheduled for now, after the events already
 * due at this time) refills only the connected component of flows and links reachable from
 * the marked links: flows elsewhere keep their rates and their drain events.
 *
 * With the local refill (on by default) the recomputation starts smaller: it refills the
 * new flows and those a marked link held back, every other flow held at its rate, then
 * checks that each flow on the refilled flows' links still has a bottleneck (a full link
 * on which no flow has a higher rate per weight), and grows the refilled set by the flows
 * that lost theirs until all have one.  A max-min fair allocation is the one where every flow has a
 * bottleneck, so the rates are the component's; a ring across a fat tree, one component of
 * thousands of flows, then refills a few flows per start or drain instead of all of them.
 */
class FlowNetwork
{
  public:
    /// A flow's use of a link: \p share of its rate goes over link \p link.
    struct Use
    {
        uint32_t link{0};
        double share{1.0};
    };

    FlowNetwork() = default;
    ~FlowNetwork();
    FlowNetwork(const FlowNetwork&) = delete;
    FlowNetwork& operator=(const FlowNetwork&) = delete;

    /// \return the link's index.  \p capacity_byte_per_s > 0.
    uint32_t AddLink(double capacity_byte_per_s);
    uint32_t GetNLinks() const;
    double GetCapacity(uint32_t link) const;

    /**
     * Starts a flow of \p bytes over \p path with max-min weight \p weight (> 0); \p drained
     * runs when its last byte has left (the flow is gone by then).  \return its handle,
     * valid until then.  A flow with an empty path or no bytes drains in this instant.
     */
    uint32_t Start(std::vector<Use> path,
                   double bytes,
                   double weight,
                   std::function<void()> drained);
    /// Current rate of a running flow, bytes/s (0 until the instant's recomputation).
    double GetRate(uint32_t flow) const;
    /// Sum of the running flows' rates times their shares on \p link, bytes/s.
    double GetLoad(uint32_t link) const;
    uint32_t GetNActive() const;
    /// Recomputations run, and the flows they refilled in all (the incremental work).
    uint64_t GetRecomputations() const;
    uint64_t GetFlowsRefilled() const;
    /// Local refills (class comment; default on); off: every recomputation refills the
    /// whole connected component.
    void SetLocalRefill(bool local);
    /// Local refills that fell back to the whole component (the set grew too often).
    uint64_t GetComponentFallbacks() const;

  private:
    struct Link
    {
        double capacity{0};
        std::vector<uint32_t> flows;
        uint64_t visit{0};
        double residual{0};
        double demand{0};
    };

    static constexpr uint32_t kNoLink = 0xffffffff;

    struct Flow
    {
        std::vector<Use> path;
        double remaining{0};
        double rate{0};
        double weight{1};
        Time updated;
        EventId drain;
        std::function<void()> drained;
        uint64_t visit{0};
        uint32_t bottleneck{kNoLink}; //!< the link that froze it in the last fill
        bool active{false};
        bool frozen{false};
    };

    void Mark(const std::vector<Use>& path);
    void Recompute();
    /// The whole connected component of \p marked links.
    void RefillComponent(std::vector<uint32_t> marked);
    /// The local refill; false (every rate as before) when it gave up for the component.
    bool RefillRegion(const std::vector<uint32_t>& marked);
    /// Adds \p id to the local refill's set (stamp m_visit), keeping its rate as before.
    void JoinRegion(uint32_t id);
    /// \return whether every flow on the set's links has a bottleneck; if not, the flows
    /// that lost theirs (or outrank a set flow on its bottleneck) joined the set.
    bool CheckBottlenecks();
    /// Progressive filling of \p flows over \p links (their residuals set): rates,
    /// bottlenecks.  Drops links without demand from \p links.
    void Fill(const std::vector<uint32_t>& flows, std::vector<uint32_t>& links);
    /// Drain events of \p flows whose rate differs from \p before.
    void Reschedule(const std::vector<uint32_t>& flows, const std::vector<double>& before);
    double ShareOn(const Flow& f, uint32_t link) const;
    void Drain(uint32_t flow);

    std::vector<Link> m_links;
    std::vector<Flow> m_flows;
    std::vector<uint32_t> m_free;
    std::vector<uint32_t> m_marked;
    EventId m_recompute;
    uint64_t m_visit{0};
    uint32_t m_active{0};
    uint64_t m_recomputations{0};
    uint64_t m_refilled{0};
    bool m_localRefill{true};
    uint64_t m_fallbacks{0};
    // Scratch of Recompute, kept to avoid reallocation.
    std::vector<uint32_t> m_componentLinks;
    std::vector<uint32_t> m_componentFlows;
    std::vector<double> m_before;
    std::vector<uint32_t> m_fillLinks;
    uint64_t m_region{0}; //!< the local refill's stamp: Flow::visit of the flows in its set
};

} // namespace ns3

#endif
