/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
// Where each rank's time went (compute, communication per parallelism kind and plane,
// waiting), the iterations, and the ops rows.

#include "ns3/log.h"
#include "ns3/results-database.h"
#include "ns3/simulator.h"
#include "ns3/workload-replay.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadReplayAccounting");

void
WorkloadReplay::WriteOpRow(uint32_t rank, uint32_t index, int64_t endNs) const
{
    if (!m_db)
    {
        return;
    }
    const WorkloadOpRef op = m_trace.ops[rank][index];
    OpRecord row;
    row.rank = rank;
    row.opId = static_cast<int64_t>(GetOpId(rank, index));
    row.label = op.label;
    row.kind = WorkloadOpKindName(op.kind);
    row.startNs = m_ranks[rank].ops[index].startNs;
    row.endNs = endNs;
    m_db->AddOp(row);
}

void
WorkloadReplay::Account(uint32_t rank)
{
    RankState& rs = m_ranks[rank];
    const int64_t now = Simulator::Now().GetNanoSeconds();
    const uint64_t dt = static_cast<uint64_t>(now - rs.lastChangeNs);
    rs.lastChangeNs = now;
    if (dt == 0)
    {
        return;
    }
    ReplayBreakdown& b = rs.breakdown;
    const bool computing = rs.computeRunning > 0;
    if (computing)
    {
        b.computeNs += dt;
    }
    bool moving = false;
    for (std::size_t p = 0; p < rs.planeActive.size(); ++p)
    {
        if (rs.planeActive[p] > 0)
        {
            moving = true;
            rs.planeNs[p] += dt;
            if (!computing)
            {
                rs.planeExposedNs[p] += dt;
            }
        }
    }
    if (rs.commRunningAny > 0)
    {
        const bool waiting = !computing && !moving;
        b.commNs += dt;
        if (!computing)
        {
            b.exposedCommNs += dt;
        }
        if (waiting)
        {
            b.waitingNs += dt;
        }
        for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
        {
            if (rs.commRunning[k] > 0)
            {
                b.commByKindNs[k] += dt;
                if (!computing)
                {
                    b.exposedByKindNs[k] += dt;
                }
                if (waiting)
                {
                    b.waitingByKindNs[k] += dt;
                }
            }
        }
    }
}

void
WorkloadReplay::MessageSent(uint64_t, uint32_t src, uint32_t dst, uint64_t, uint32_t plane)
{
    PlaneChange(src, dst, plane, +1);
}

void
WorkloadReplay::MessageReceived(uint64_t,
                                uint32_t src,
                                uint32_t dst,
                                uint64_t,
                                uint32_t plane,
                                Time)
{
    PlaneChange(src, dst, plane, -1);
}

void
WorkloadReplay::PlaneChange(uint32_t src, uint32_t dst, uint32_t plane, int delta)
{
    if (plane >= m_planeNameOfIndex.size())
    {
        return;
    }
    const uint32_t p = m_planeNameOfIndex[plane];
    for (uint32_t r : {src, dst})
    {
        if (r < m_ranks.size() && m_local[r])
        {
            Account(r);
            m_ranks[r].planeActive[p] += delta;
        }
    }
}

void
WorkloadReplay::InSwitchChange(uint32_t c, int delta)
{
    const int32_t p = m_collectives[c].inSwitchPlane;
    if (p < 0)
    {
        return;
    }
    for (const auto& member : m_trace.collectives[c].members)
    {
        if (m_local[member.first])
        {
            Account(member.first);
            m_ranks[member.first].planeActive[p] += delta;
        }
    }
}

std::vector<Time>
WorkloadReplay::GetIterationTimes() const
{
    std::vector<Time> out;
    if (m_marker.empty())
    {
        if (IsComplete())
        {
            out.push_back(NanoSeconds(m_endNs - m_startNs));
        }
        return out;
    }
    std::vector<int64_t> ends;
    for (std::size_t m = 0; m < m_markerLabels.size(); ++m)
    {
        if (m_markerRemaining[m] == 0)
        {
            ends.push_back(m_markerEndNs[m]);
        }
    }
    std::sort(ends.begin(), ends.end());
    int64_t previous = m_startNs;
    for (int64_t e : ends)
    {
        out.push_back(NanoSeconds(e - previous));
        previous = e;
    }
    return out;
}

std::vector<std::string>
WorkloadReplay::GetIterationMarkers() const
{
    std::vector<std::pair<int64_t, std::string>> done;
    for (std::size_t m = 0; m < m_markerLabels.size(); ++m)
    {
        if (m_markerRemaining[m] == 0)
        {
            done.emplace_back(m_markerEndNs[m], m_markerLabels[m]);
        }
    }
    std::sort(done.begin(), done.end());
    std::vector<std::string> out;
    for (auto& d : done)
    {
        out.push_back(std::move(d.second));
    }
    return out;
}

ReplayBreakdown
WorkloadReplay::GetBreakdown(uint32_t rank) const
{
    const RankState& rs = m_ranks.at(rank);
    ReplayBreakdown b = rs.breakdown;
    for (std::size_t p = 0; p < m_planeNames.size(); ++p)
    {
        b.commByPlaneNs[m_planeNames[p]] += rs.planeNs[p];
        b.exposedByPlaneNs[m_planeNames[p]] += rs.planeExposedNs[p];
    }
    return b;
}

ReplayBreakdown
WorkloadReplay::GetMeanBreakdown() const
{
    ReplayBreakdown sum;
    uint64_t n = 0;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        if (m_ranks[r].ops.empty() || !m_local[r])
        {
            continue;
        }
        ++n;
        const ReplayBreakdown b = GetBreakdown(r);
        sum.computeNs += b.computeNs;
        sum.commNs += b.commNs;
        sum.exposedCommNs += b.exposedCommNs;
        sum.waitingNs += b.waitingNs;
        for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
        {
            sum.commByKindNs[k] += b.commByKindNs[k];
            sum.exposedByKindNs[k] += b.exposedByKindNs[k];
            sum.waitingByKindNs[k] += b.waitingByKindNs[k];
        }
        for (const auto& [name, ns] : b.commByPlaneNs)
        {
            sum.commByPlaneNs[name] += ns;
        }
        for (const auto& [name, ns] : b.exposedByPlaneNs)
        {
            sum.exposedByPlaneNs[name] += ns;
        }
    }
    if (n == 0)
    {
        return sum;
    }
    auto div = [n](uint64_t v) { return (v + n / 2) / n; };
    sum.computeNs = div(sum.computeNs);
    sum.commNs = div(sum.commNs);
    sum.exposedCommNs = div(sum.exposedCommNs);
    sum.waitingNs = div(sum.waitingNs);
    for (std::size_t k = 0; k < kNumParallelismKinds; ++k)
    {
        sum.commByKindNs[k] = div(sum.commByKindNs[k]);
        sum.exposedByKindNs[k] = div(sum.exposedByKindNs[k]);
        sum.waitingByKindNs[k] = div(sum.waitingByKindNs[k]);
    }
    for (auto& [name, ns] : sum.commByPlaneNs)
    {
        ns = div(ns);
    }
    for (auto& [name, ns] : sum.exposedByPlaneNs)
    {
        ns = div(ns);
    }
    return sum;
}

} // namespace ns3
