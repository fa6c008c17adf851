/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/flow-network.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowNetwork");

namespace
{
// Links within this relative margin of the fill level saturate together: rates of equal
// flows computed along different sums must not split into two levels by rounding.
constexpr double kLevelTolerance = 1e-9;
} // namespace

FlowNetwork::~FlowNetwork()
{
    Simulator::Cancel(m_recompute);
    for (Flow& f : m_flows)
    {
        Simulator::Cancel(f.drain);
    }
}

uint32_t
FlowNetwork::AddLink(double capacity_byte_per_s)
{
    NS_ABORT_MSG_UNLESS(capacity_byte_per_s > 0,
                        "FlowNetwork: link capacity " << capacity_byte_per_s << " B/s");
    m_links.emplace_back();
    m_links.back().capacity = capacity_byte_per_s;
    return static_cast<uint32_t>(m_links.size() - 1);
}

uint32_t
FlowNetwork::GetNLinks() const
{
    return static_cast<uint32_t>(m_links.size());
}

double
FlowNetwork::GetCapacity(uint32_t link) const
{
    return m_links.at(link).capacity;
}

uint32_t
FlowNetwork::Start(std::vector<Use> path,
                   double bytes,
                   double weight,
                   std::function<void()> drained)
{
    NS_ABORT_MSG_UNLESS(weight > 0, "FlowNetwork: flow weight " << weight);
    uint32_t id;
    if (m_free.empty())
    {
        id = static_cast<uint32_t>(m_flows.size());
        m_flows.emplace_back();
    }
    else
    {
        id = m_free.back();
        m_free.pop_back();
    }
    Flow& f = m_flows[id];
    f.path = std::move(path);
    f.remaining = std::max(0.0, bytes);
    f.rate = 0;
    f.weight = weight;
    f.bottleneck = kNoLink;
    f.updated = Simulator::Now();
    f.drained = std::move(drained);
    f.active = true;
    ++m_active;
    if (f.path.empty() || f.remaining <= 0)
    {
        f.drain = Simulator::ScheduleNow(&FlowNetwork::Drain, this, id);
        return id;
    }
    for (const Use& u : f.path)
    {
        NS_ABORT_MSG_IF(u.link >= m_links.size(), "FlowNetwork: no link " << u.link);
        m_links[u.link].flows.push_back(id);
    }
    Mark(f.path);
    return id;
}

double
FlowNetwork::GetRate(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    return f.active ? f.rate : 0;
}

double
FlowNetwork::GetLoad(uint32_t link) const
{
    double load = 0;
    for (uint32_t id : m_links.at(link).flows)
    {
        for (const Use& u : m_flows[id].path)
        {
            if (u.link == link)
            {
                load += m_flows[id].rate * u.share;
            }
        }
    }
    return load;
}

uint32_t
FlowNetwork::GetNActive() const
{
    return m_active;
}

uint64_t
FlowNetwork::GetRecomputations() const
{
    return m_recomputations;
}

uint64_t
FlowNetwork::GetFlowsRefilled() const
{
    return m_refilled;
}

void
FlowNetwork::Mark(const std::vector<Use>& path)
{
    for (const Use& u : path)
    {
        m_marked.push_back(u.link);
    }
    if (!m_recompute.IsRunning())
    {
        m_recompute = Simulator::ScheduleNow(&FlowNetwork::Recompute, this);
    }
}

void
FlowNetwork::Drain(uint32_t id)
{
    Flow& f = m_flows[id];
    NS_ASSERT(f.active);
    for (const Use& u : f.path)
    {
        auto& on = m_links[u.link].flows;
        auto it = std::find(on.begin(), on.end(), id);
        if (it != on.end())
        {
            *it = on.back();
            on.pop_back();
        }
    }
    if (!f.path.empty())
    {
        Mark(f.path);
    }
    std::function<void()> drained = std::move(f.drained);
    f.drained = nullptr;
    f.path.clear();
    f.active = false;
    f.rate = 0;
    --m_active;
    m_free.push_back(id);
    if (drained)
    {
        drained();
    }
}

void
FlowNetwork::SetLocalRefill(bool local)
{
    m_localRefill = local;
}

uint64_t
FlowNetwork::GetComponentFallbacks() const
{
    return m_fallbacks;
}

double
FlowNetwork::ShareOn(const Flow& f, uint32_t link) const
{
    for (const Use& u : f.path)
    {
        if (u.link == link)
        {
            return u.share;
        }
    }
    return 0;
}

void
FlowNetwork::Recompute()
{
    ++m_recomputations;
    std::vector<uint32_t> marked;
    marked.swap(m_marked);
    if (m_localRefill)
    {
        if (RefillRegion(marked))
        {
            return;
        }
        ++m_fallbacks;
    }
    RefillComponent(std::move(marked));
}

void
FlowNetwork::RefillComponent(std::vector<uint32_t> marked)
{
    const Time now = Simulator::Now();
    ++m_visit;
    m_componentLinks.clear();
    m_componentFlows.clear();
    // The connected component of the marked links: links -> their flows -> those flows' links.
    std::vector<uint32_t> stack;
    stack.swap(marked);
    while (!stack.empty())
    {
        const uint32_t l = stack.back();
        stack.pop_back();
        Link& link = m_links[l];
        if (link.visit == m_visit)
        {
            continue;
        }
        link.visit = m_visit;
        m_componentLinks.push_back(l);
        for (uint32_t id : link.flows)
        {
            Flow& f = m_flows[id];
            if (f.visit == m_visit)
            {
                continue;
            }
            f.visit = m_visit;
            m_componentFlows.push_back(id);
            for (const Use& u : f.path)
            {
                if (m_links[u.link].visit != m_visit)
                {
                    stack.push_back(u.link);
                }
            }
        }
    }
    m_refilled += m_componentFlows.size();

    // Bytes moved at the old rates up to now, then progressive filling.
    for (uint32_t id : m_componentFlows)
    {
        Flow& f = m_flows[id];
        f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.updated).GetSeconds());
        f.updated = now;
    }
    for (uint32_t l : m_componentLinks)
    {
        m_links[l].residual = m_links[l].capacity;
    }
    m_before.clear();
    m_before.reserve(m_componentFlows.size());
    for (uint32_t id : m_componentFlows)
    {
        m_before.push_back(m_flows[id].rate);
    }
    Fill(m_componentFlows, m_componentLinks);
    Reschedule(m_componentFlows, m_before);
    NS_LOG_LOGIC("recomputed " << m_componentFlows.size() << " flows on " << m_componentLinks.size()
                               << " links; " << m_active << " flows active");
}

void
FlowNetwork::JoinRegion(uint32_t id)
{
    Flow& f = m_flows[id];
    f.visit = m_region;
    m_componentFlows.push_back(id);
    m_before.push_back(f.rate);
}

bool
FlowNetwork::RefillRegion(const std::vector<uint32_t>& marked)
{
    // Rounds before the whole component is cheaper than growing the set again.
    constexpr uint32_t kMaxRounds = 8;
    const Time now = Simulator::Now();
    // The set starts with the new flows and those a marked link held back: a flow held back
    // elsewhere keeps its bottleneck unless the check below finds it lost.
    const uint64_t markedStamp = ++m_visit;
    for (uint32_t l : marked)
    {
        m_links[l].visit = markedStamp;
    }
    m_region = ++m_visit;
    m_componentFlows.clear();
    m_before.clear();
    for (uint32_t l : marked)
    {
        for (uint32_t id : m_links[l].flows)
        {
            const Flow& f = m_flows[id];
            if (f.visit != m_region &&
                (f.bottleneck == kNoLink || m_links[f.bottleneck].visit == markedStamp))
            {
                JoinRegion(id);
            }
        }
    }
    if (m_componentFlows.empty())
    {
        return true; // drains on links that held no flow back
    }
    for (uint32_t round = 0;; ++round)
    {
        // The set's links, with what the flows held at their rates leave of each.
        ++m_visit;
        m_componentLinks.clear();
        for (uint32_t id : m_componentFlows)
        {
            for (const Use& u : m_flows[id].path)
            {
                Link& link = m_links[u.link];
                if (link.visit != m_visit)
                {
                    link.visit = m_visit;
                    m_componentLinks.push_back(u.link);
                }
            }
        }
        for (uint32_t l : m_componentLinks)
        {
            Link& link = m_links[l];
            link.residual = link.capacity;
            for (uint32_t id : link.flows)
            {
                Flow& f = m_flows[id];
                if (f.visit != m_region)
                {
                    link.residual -= f.rate * ShareOn(f, l);
                    f.frozen = true; // held: the fill leaves it alone
                }
            }
        }
        m_fillLinks = m_componentLinks;
        Fill(m_componentFlows, m_fillLinks);
        if (CheckBottlenecks())
        {
            break;
        }
        if (round + 1 == kMaxRounds)
        {
            for (std::size_t i = 0; i < m_componentFlows.size(); ++i)
            {
                m_flows[m_componentFlows[i]].rate = m_before[i];
            }
            NS_LOG_LOGIC("local refill of " << m_componentFlows.size()
                                            << " flows gives up for the component");
            return false;
        }
    }
    m_refilled += m_componentFlows.size();
    for (std::size_t i = 0; i < m_componentFlows.size(); ++i)
    {
        Flow& f = m_flows[m_componentFlows[i]];
        f.remaining = std::max(0.0, f.remaining - m_before[i] * (now - f.updated).GetSeconds());
        f.updated = now;
    }
    Reschedule(m_componentFlows, m_before);
    NS_LOG_LOGIC("refilled " << m_componentFlows.size() << " flows locally on "
                             << m_componentLinks.size() << " links; " << m_active
                             << " flows active");
    return true;
}

bool
FlowNetwork::CheckBottlenecks()
{
    // Equal rates computed along different sums differ in the last digits, not more.
    constexpr double kTie = 1e-12;
    bool complete = true;
    for (uint32_t l : m_componentLinks)
    {
        const Link& link = m_links[l];
        double load = 0;
        double setMax = 0;                                        // rate per weight
        double heldMin = std::numeric_limits<double>::infinity(); // of set flows it froze
        for (uint32_t id : link.flows)
        {
            const Flow& f = m_flows[id];
            load += f.rate * ShareOn(f, l);
            if (f.visit == m_region)
            {
                setMax = std::max(setMax, f.rate / f.weight);
                if (f.bottleneck == l)
                {
                    heldMin = std::min(heldMin, f.rate / f.weight);
                }
            }
        }
        const bool full = load >= link.capacity * (1 - kTie);
        for (std::size_t i = 0; i < link.flows.size(); ++i)
        {
            const uint32_t id = link.flows[i];
            const Flow& f = m_flows[id];
            if (f.visit == m_region)
            {
                continue;
            }
            const double level = f.rate / f.weight;
            // Its bottleneck here is gone (not full, or a set flow now ranks higher), or
            // it ranks higher than a set flow this link holds back: not max-min fair.
            const bool lost = f.bottleneck == l && (!full || level < setMax * (1 - kTie));
            if (lost || level > heldMin * (1 + kTie))
            {
                JoinRegion(id);
                complete = false;
            }
        }
    }
    return complete;
}

void
FlowNetwork::Fill(const std::vector<uint32_t>& flows, std::vector<uint32_t>& links)
{
    for (uint32_t l : links)
    {
        m_links[l].demand = 0;
    }
    for (uint32_t id : flows)
    {
        Flow& f = m_flows[id];
        f.frozen = false;
        for (const Use& u : f.path)
        {
            m_links[u.link].demand += u.share * f.weight;
        }
    }
    std::size_t unfrozen = flows.size();
    while (unfrozen > 0)
    {
        // Links without unfrozen demand never set a level again: drop them from the scan
        // (same links in the same order otherwise; a large component has many levels).
        links.erase(std::remove_if(links.begin(),
                                   links.end(),
                                   [this](uint32_t l) { return m_links[l].demand <= 0; }),
                    links.end());
        double level = std::numeric_limits<double>::infinity();
        for (uint32_t l : links)
        {
            const Link& link = m_links[l];
            if (link.demand > 0)
            {
                level = std::min(level, std::max(0.0, link.residual) / link.demand);
            }
        }
        NS_ABORT_MSG_IF(std::isinf(level), "FlowNetwork: unfrozen flows on no link");
        const double limit = level * (1 + kLevelTolerance);
        for (uint32_t l : links)
        {
            Link& link = m_links[l];
            if (link.demand <= 0 || std::max(0.0, link.residual) / link.demand > limit)
            {
                continue;
            }
            for (uint32_t id : link.flows)
            {
                Flow& f = m_flows[id];
                if (f.frozen)
                {
                    continue;
                }
                f.frozen = true;
                --unfrozen;
                f.rate = level * f.weight;
                f.bottleneck = l;
                for (const Use& u : f.path)
                {
                    Link& on = m_links[u.link];
                    on.residual -= f.rate * u.share;
                    on.demand -= u.share * f.weight;
                }
            }
            link.demand = 0;
        }
    }
}

void
FlowNetwork::Reschedule(const std::vector<uint32_t>& flows, const std::vector<double>& before)
{
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        const uint32_t id = flows[i];
        Flow& f = m_flows[id];
        // A flow with a rate before has its drain pending (Drain takes it off its links
        // before any recompute sees it): the test saves a look into the event per flow.
        if (f.rate == before[i] && before[i] > 0)
        {
            continue;
        }
        Simulator::Cancel(f.drain);
        NS_ABORT_MSG_UNLESS(f.rate > 0, "FlowNetwork: a flow got no rate");
        // Whole nanoseconds, rounded up: the flow is never drained before its last byte.
        const double ns = std::ceil(f.remaining / f.rate * 1e9);
        f.drain = Simulator::Schedule(NanoSeconds(static_cast<int64_t>(ns)),
                                      &FlowNetwork::Drain,
                                      this,
                                      id);
    }
}

} // namespace ns3
