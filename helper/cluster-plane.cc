/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/cluster-plane.h"

#include "ns3/abort.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/credit-switch.h"
#include "ns3/data-rate.h"
#include "ns3/distributed-run.h"
#include "ns3/double.h"
#include "ns3/front-end-cluster-plane.h"
#include "ns3/infiniband-cluster-plane.h"
#include "ns3/link-flow-control.h"
#include "ns3/link-sampler.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/nvlink-cluster-plane.h"
#include "ns3/results-database.h"
#include "ns3/roce-cluster-plane.h"
#include "ns3/transport-plane.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ClusterPlane");

std::string
FormatDecimal(double v)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << v;
    std::string t = s.str();
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.')
    {
        t.pop_back();
    }
    return t;
}

std::string
FormatGbitAsGbyte(double gbit_per_s)
{
    return FormatDecimal(gbit_per_s / 8) + " GB/s";
}

void
ClusterNodes::AddNameGroup(const std::string& name)
{
    nameGroups.push_back(CreateObject<Object>());
    Names::Add(name, nameGroups.back());
}

std::string
ClusterPlaneBuilder::GetName() const
{
    return ClusterPlaneName(GetPlane());
}

bool
ClusterPlaneBuilder::SetAttribute(const std::string& /* target */,
                                  const std::string& /* name */,
                                  const AttributeValue& /* value */)
{
    return false;
}

std::string
ClusterPlaneBuilder::Prepare(const ClusterConfig& /* config */, const ClusterLayout& /* layout */)
{
    return "";
}

int64_t
ClusterPlaneBuilder::AssignStreams(int64_t /* stream */)
{
    return 0;
}

std::string
ClusterPlaneBuilder::DescribeSummary(const ClusterConfig& /* config */) const
{
    return "";
}

std::string
ClusterPlaneBuilder::DescribeDetails(const ClusterConfig& /* config */) const
{
    return "";
}

void
ClusterPlaneBuilder::SetDataRate(Ptr<CreditLinkNetDevice> dev, double data_bps)
{
    DataRateValue signalling;
    DoubleValue efficiency;
    dev->GetAttribute("DataRate", signalling);
    dev->GetAttribute("EncodingEfficiency", efficiency);
    const auto bps = static_cast<uint64_t>(std::llround(data_bps / efficiency.Get()));
    if (bps != signalling.Get().GetBitRate())
    {
        dev->SetAttribute("DataRate", DataRateValue(DataRate(bps)));
    }
}

Ptr<TransportPlane>
ClusterPlaneBuilder::MakeTransportPlane(const ClusterLayout& /* layout */) const
{
    return nullptr;
}

std::vector<Ptr<CreditLinkNetDevice>>
ClusterPlaneBuilder::GetRankLinkEnds(uint32_t /* rank */) const
{
    return {};
}

std::vector<CreditLinkNetDevice::Counters>
ClusterPlaneBuilder::GetRankLinkCounters(uint32_t rank) const
{
    std::vector<CreditLinkNetDevice::Counters> counters;
    for (const auto& dev : GetRankLinkEnds(rank))
    {
        counters.push_back(dev->GetCounters());
    }
    return counters;
}

const std::vector<Ptr<CreditLinkNetDevice>>&
ClusterPlaneBuilder::GetCreditLinkDevices() const
{
    static const std::vector<Ptr<CreditLinkNetDevice>> none;
    return none;
}

uint64_t
ClusterPlaneBuilder::GetNLinkDirections() const
{
    return GetCreditLinkDevices().size();
}

namespace
{

uint64_t
CreditTxBytes(Ptr<CreditLinkNetDevice> dev)
{
    return dev->GetCounters().txBytes;
}

// Rate available to frames: signalling rate x line-coding efficiency.
int64_t
FrameRate_bps(Ptr<CreditLinkNetDevice> dev)
{
    DataRateValue signalling;
    DoubleValue efficiency;
    dev->GetAttribute("DataRate", signalling);
    dev->GetAttribute("EncodingEfficiency", efficiency);
    return static_cast<int64_t>(signalling.Get().GetBitRate() * efficiency.Get());
}

} // namespace

void
ClusterPlaneBuilder::WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const
{
    const std::string plane = GetName();
    for (const auto& dev : GetCreditLinkDevices())
    {
        const CreditLinkNetDevice::Counters& k = dev->GetCounters();
        LinkRecord row;
        row.linkId = id++;
        // Each process writes the directions it transmits on (the same ids in every process).
        if (!DistributedRun::IsLocal(dev->GetNode()))
        {
            continue;
        }
        row.plane = plane;
        row.srcNode = dev->GetNode()->GetId();
        row.dstNode = dev->GetPeer()->GetNode()->GetId();
        row.rateBitPerS = FrameRate_bps(dev);
        row.txBytes = static_cast<int64_t>(k.txBytes);
        row.txPackets = static_cast<int64_t>(k.txPackets);
        row.busyNs = k.busyTime.GetNanoSeconds();
        row.creditStallNs = k.creditStallTime.GetNanoSeconds();
        row.peakQueueBytes = static_cast<int64_t>(k.peakQueueBytes);
        // Credits never drop; only a switch without a route (LFT hole) or an HCA given
        // another LID's packet discards what this direction delivered.
        const Ptr<CreditLinkNetDevice> peer = dev->GetPeer();
        uint64_t drops = peer->GetReceiveDiscards();
        if (const Ptr<CreditSwitch> sw = peer->GetSwitch())
        {
            drops += sw->GetDroppedPackets(sw->GetPortIndex(peer));
        }
        if (const Ptr<LinkFlowControl> fc = peer->GetFlowControl())
        {
            drops += fc->GetDroppedPackets(); // lossy Ethernet: ingress overflow
        }
        row.drops = static_cast<int64_t>(drops);
        AddLinkCounters(dev, row);
        db->AddLink(row);
    }
}

void
ClusterPlaneBuilder::AddLinkCounters(Ptr<CreditLinkNetDevice>, LinkRecord&) const
{
}

void
ClusterPlaneBuilder::AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const
{
    const std::string plane = GetName();
    for (const auto& dev : GetCreditLinkDevices())
    {
        const int64_t linkId = id++;
        if (DistributedRun::IsLocal(dev->GetNode()))
        {
            sampler->AddLink(linkId,
                             MakeBoundCallback(&CreditTxBytes, dev),
                             plane,
                             static_cast<double>(FrameRate_bps(dev)));
        }
    }
}

void
ClusterPlaneBuilder::AddToConservation(CreditLinkConservation& check, uint32_t& remote) const
{
    const std::string plane = GetName();
    for (const auto& d : GetCreditLinkDevices())
    {
        // In a distributed run only links with both ends in this process are visible.
        if (DistributedRun::IsLocal(d->GetNode()) &&
            DistributedRun::IsLocal(d->GetPeer()->GetNode()))
        {
            check.Add(plane, d);
        }
        else
        {
            ++remote;
        }
    }
}

void
ClusterPlaneBuilder::AddConservationNotes(CreditLinkConservationReport& /* report */) const
{
}

void
ClusterPlaneBuilder::WriteNodeRow(Ptr<ResultsDatabase> db,
                                  Ptr<Node> node,
                                  const std::string& kind,
                                  int64_t server,
                                  int64_t rank)
{
    if (!DistributedRun::IsLocal(node))
    {
        return; // another process writes it
    }
    NodeRecord row;
    row.nodeId = node->GetId();
    // Full name ("server3/gpu5"), not the leaf of the name tree ("gpu5").
    const std::string path = Names::FindPath(node);
    const std::string prefix = "/Names/";
    row.name = path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
    row.kind = kind;
    row.server = server;
    row.rank = rank;
    db->AddNode(row);
}

std::vector<std::unique_ptr<ClusterPlaneBuilder>>
MakeClusterPlaneBuilders()
{
    // Build order = node-id and link-id order: the front-end's switches follow the servers,
    // then the NVSwitches, then the InfiniBand switches.
    std::vector<std::unique_ptr<ClusterPlaneBuilder>> builders;
    builders.push_back(std::make_unique<FrontEndClusterPlane>());
    builders.push_back(std::make_unique<NvLinkClusterPlane>());
    builders.push_back(std::make_unique<InfinibandClusterPlane>());
    builders.push_back(std::make_unique<RoceClusterPlane>());
    return builders;
}

std::vector<std::unique_ptr<ClusterPlaneBuilder>>
MakeClusterPlaneBuilders(ClusterPlane scaleOut)
{
    std::vector<std::unique_ptr<ClusterPlaneBuilder>> builders;
    for (auto& b : MakeClusterPlaneBuilders())
    {
        const bool other =
            (b->GetPlane() == ClusterPlane::INFINIBAND || b->GetPlane() == ClusterPlane::ROCE) &&
            b->GetPlane() != scaleOut;
        if (!other)
        {
            builders.push_back(std::move(b));
        }
    }
    return builders;
}

const ClusterPlaneBuilder&
GetClusterPlaneBuilder(ClusterPlane plane)
{
    static const std::vector<std::unique_ptr<ClusterPlaneBuilder>> prototypes =
        MakeClusterPlaneBuilders();
    for (const auto& b : prototypes)
    {
        if (b->GetPlane() == plane)
        {
            return *b;
        }
    }
    NS_ABORT_MSG("cluster: no builder for plane " << static_cast<int>(plane));
}

std::vector<ClusterPlaneRules::Row>
ClusterPlaneRules::DefaultRows()
{
    // NVLink wherever it reaches (inside a domain), the scale-out fabric for every other pair.
    return {{ClusterPlane::NVLINK, ClusterPlaneReach::SAME_DOMAIN},
            {ClusterPlane::INFINIBAND, ClusterPlaneReach::ANY_PAIR}};
}

std::vector<ClusterPlaneRules::Row>
ClusterPlaneRules::DefaultRows(ClusterPlane scaleOut)
{
    return {{ClusterPlane::NVLINK, ClusterPlaneReach::SAME_DOMAIN},
            {scaleOut, ClusterPlaneReach::ANY_PAIR}};
}

ClusterPlaneRules::ClusterPlaneRules(const ClusterLayout& layout, std::vector<Row> rows)
    : m_layout(layout),
      m_rows(std::move(rows))
{
}

void
ClusterPlaneRules::SetLayout(const ClusterLayout& layout)
{
    m_layout = layout;
}

void
ClusterPlaneRules::SetAvailable(const std::map<ClusterPlane, int32_t>& planeIndex)
{
    m_index = planeIndex;
}

void
ClusterPlaneRules::Force(const std::string& group, ClusterPlane plane)
{
    NS_LOG_FUNCTION(this << group << ClusterPlaneName(plane));
    m_forced[group] = plane;
}

void
ClusterPlaneRules::ClearForced()
{
    m_forced.clear();
}

ClusterPlaneReach
ClusterPlaneRules::ReachOf(ClusterPlane plane) const
{
    for (const Row& row : m_rows)
    {
        if (row.plane == plane)
        {
            return row.reach;
        }
    }
    return GetClusterPlaneBuilder(plane).GetReach();
}

namespace
{

bool
ReachesPair(const ClusterLayout& layout, ClusterPlaneReach reach, uint32_t src, uint32_t dst)
{
    return reach == ClusterPlaneReach::ANY_PAIR || layout.SameDomain(src, dst);
}

} // namespace

bool
ClusterPlaneRules::Reaches(ClusterPlaneReach reach, uint32_t src, uint32_t dst) const
{
    return ReachesPair(m_layout, reach, src, dst);
}

std::string
ClusterPlaneRules::TrySelect(uint32_t src,
                             uint32_t dst,
                             ClusterPlane& plane,
                             const std::string& group) const
{
    std::ostringstream why;
    const uint32_t n = m_layout.GetNRanks();
    if (src >= n || dst >= n)
    {
        why << "rank " << std::max(src, dst) << " out of range (" << n << " ranks)";
        return why.str();
    }
    if (src == dst)
    {
        why << "rank " << src << " to itself uses no plane";
        return why.str();
    }
    auto forced = m_forced.find(group);
    if (forced != m_forced.end())
    {
        if (!Reaches(ReachOf(forced->second), src, dst))
        {
            why << "group '" << group << "' is forced onto " << ClusterPlaneName(forced->second)
                << " but ranks " << src << " and " << dst << " are in NVLink domains "
                << m_layout.GetDomain(src) << " and " << m_layout.GetDomain(dst);
            return why.str();
        }
        plane = forced->second;
        return "";
    }
    for (const Row& row : m_rows)
    {
        if (Reaches(row.reach, src, dst))
        {
            plane = row.plane;
            return "";
        }
    }
    why << "no plane rule covers ranks " << src << " and " << dst;
    return why.str();
}

ClusterPlaneRules::Resolved
ClusterPlaneRules::Resolve(const std::string& group) const
{
    Resolved r;
    r.layout = m_layout;
    auto indexOf = [this](ClusterPlane plane) {
        auto it = m_index.find(plane);
        return it == m_index.end() ? -1 : it->second;
    };
    auto forced = m_forced.find(group);
    if (forced != m_forced.end())
    {
        // A forced plane out of reach or without a GPU transport leaves the pair to the
        // transport's fallback (-1): its first plane that reaches the pair, the catch-all row's.
        r.candidates.emplace_back(ReachOf(forced->second), indexOf(forced->second));
        return r;
    }
    for (const Row& row : m_rows)
    {
        if (indexOf(row.plane) >= 0)
        {
            r.candidates.emplace_back(row.reach, indexOf(row.plane));
        }
    }
    return r;
}

int32_t
ClusterPlaneRules::Resolved::Select(uint32_t src, uint32_t dst) const
{
    const uint32_t n = layout.GetNRanks();
    if (src >= n || dst >= n || src == dst)
    {
        return -1;
    }
    for (const auto& [reach, index] : candidates)
    {
        if (ReachesPair(layout, reach, src, dst))
        {
            return index;
        }
    }
    return -1;
}

int32_t
ClusterPlaneRules::SelectIndex(uint32_t src, uint32_t dst, const std::string& group) const
{
    return Resolve(group).Select(src, dst);
}

const std::vector<ClusterPlaneRules::Row>&
ClusterPlaneRules::GetRows() const
{
    return m_rows;
}

ClusterPlane
ClusterPlaneRules::GetCatchAll() const
{
    for (auto row = m_rows.rbegin(); row != m_rows.rend(); ++row)
    {
        if (row->reach == ClusterPlaneReach::ANY_PAIR)
        {
            return row->plane;
        }
    }
    NS_ABORT_MSG("cluster: the plane rules have no row for every pair");
}

namespace
{

// One group's rule, resolved once (forced plane, indices), owned by the transport's callback:
// a message's plane is then a reach test per candidate, no lookup by name.
class GroupPlaneSelector : public SimpleRefCount<GroupPlaneSelector>
{
  public:
    explicit GroupPlaneSelector(ClusterPlaneRules::Resolved resolved)
        : m_resolved(std::move(resolved))
    {
    }

    int32_t Select(uint32_t src, uint32_t dst)
    {
        return m_resolved.Select(src, dst);
    }

  private:
    ClusterPlaneRules::Resolved m_resolved;
};

} // namespace

Callback<int32_t, uint32_t, uint32_t>
ClusterPlaneRules::MakeSelector(const std::string& group) const
{
    return MakeCallback(&GroupPlaneSelector::Select, Create<GroupPlaneSelector>(Resolve(group)));
}

} // namespace ns3
