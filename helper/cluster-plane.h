/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CLUSTER_PLANE_H
#define AI_FABRIC_CLUSTER_PLANE_H

#include "ns3/cluster-config.h"
#include "ns3/cluster-layout.h"
#include "ns3/credit-link-conservation.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/node-container.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace ns3
{

class LinkSampler;
class ResultsDatabase;
struct LinkRecord;
class TransportPlane;

/// The nodes every plane attaches to, created by ClusterHelper before the planes are built.
struct ClusterNodes
{
    NodeContainer gpus; //!< in rank order
    NodeContainer cpus; //!< one per server
    /// Parents of hierarchical ns-3 names: "server3/gpu5" needs an object named "server3".
    std::vector<Ptr<Object>> nameGroups;

    /// A plain Object registered as the ns-3 name \p name, parent of names below it.
    void AddNameGroup(const std::string& name);
};

/// Which rank pairs a plane connects.
enum class ClusterPlaneReach
{
    SAME_DOMAIN, //!< ranks of one NVLink domain
    ANY_PAIR     //!< every pair of the cluster's ranks
};

/**
 * \ingroup ai-fabric
 * One network of the cluster behind the interface ClusterHelper composes: it builds its
 * devices, installs its GpuTransport plane, lists its links for the results database, the
 * conservation check and link sampling, describes itself and scales its bandwidth for plane
 * sizing.  Adding a network is a new builder plus a row in the plane rules
 * (doc/architecture.md, "Adding a plane"); ClusterHelper has no code per plane.
 */
class ClusterPlaneBuilder
{
  public:
    virtual ~ClusterPlaneBuilder() = default;

    virtual ClusterPlane GetPlane() const = 0;
    /// Name of the plane in rows and messages (ClusterPlaneName).
    std::string GetName() const;
    virtual ClusterPlaneReach GetReach() const = 0;

    /// Attribute of a device type the builder creates ("device", "switch", "channel",
    /// "subnet-manager"); false when it has no such type, so the caller can say so.
    virtual bool SetAttribute(const std::string& target,
                              const std::string& name,
                              const AttributeValue& value);

    /// Before any node exists: pure-data steps that can refuse the configuration (routing).
    /// "" or why the plane cannot be built; a refusal leaves nothing built.
    virtual std::string Prepare(const ClusterConfig& config, const ClusterLayout& layout);
    /// Creates the plane's switch nodes, devices and links; "" or why not.
    virtual std::string Build(const ClusterConfig& config,
                              const ClusterLayout& layout,
                              ClusterNodes& nodes) = 0;
    /// Fixed random-number streams from \p stream on; the number used.
    virtual int64_t AssignStreams(int64_t stream);

    /// The GpuTransport plane over the built devices; null when the plane carries no GPU
    /// transport traffic (the front-end has its own FrontEndTransport) or has no devices
    /// (1-GPU NVLink domains).
    virtual Ptr<TransportPlane> MakeTransportPlane(const ClusterLayout& layout) const;

    /// Nodes it created, by kind of the `nodes` table ("nvswitch", "ib-switch", "eth-switch").
    virtual void CountNodes(std::map<std::string, uint32_t>& counts) const = 0;
    /// One `nodes` row per node it created.
    virtual void WriteNodes(Ptr<ResultsDatabase> db, const ClusterConfig& config) const = 0;
    /// One `links` row per direction of its links, ids from \p id on (advanced past them).
    /// The default writes GetCreditLinkDevices().
    virtual void WriteLinks(Ptr<ResultsDatabase> db, int64_t& id) const;
    /// Plane-specific counters of the direction \p dev transmits on, for the default
    /// WriteLinks (PFC and ECN columns of lossless Ethernet); the default leaves them NULL.
    virtual void AddLinkCounters(Ptr<CreditLinkNetDevice> dev, LinkRecord& row) const;
    /// Its link directions on \p sampler, with the ids WriteLinks gives.
    virtual void AddToSampler(Ptr<LinkSampler> sampler, int64_t& id) const;
    /// Its credit-link devices on \p check; link ends it cannot see in this process (another
    /// process of a distributed run simulates them) are counted in \p remote.
    virtual void AddToConservation(CreditLinkConservation& check, uint32_t& remote) const;
    /// Notes for the report of a lossy plane (drops are reported, not violations).
    virtual void AddConservationNotes(CreditLinkConservationReport& report) const;
    /// The link ends on \p rank's GPU (its NVLink bundles, its HCA); empty for planes of other
    /// link types.  Per-plane busy figures of the studies count these.
    virtual std::vector<Ptr<CreditLinkNetDevice>> GetRankLinkEnds(uint32_t rank) const;
    /// The counters of those link ends; the default reads GetRankLinkEnds (a plane built
    /// without devices gives its link ends' zero counters).
    virtual std::vector<CreditLinkNetDevice::Counters> GetRankLinkCounters(uint32_t rank) const;
    /// Both ends of every credit link (empty for planes of other link types).
    virtual const std::vector<Ptr<CreditLinkNetDevice>>& GetCreditLinkDevices() const;
    /// The `links` rows WriteLinks gives, the ids the plane takes: by default
    /// GetCreditLinkDevices' size.
    virtual uint64_t GetNLinkDirections() const;

    /// Describe's first line: "2 NVLink domain(s) of 8 GPUs"; "" for none.
    virtual std::string DescribeSummary(const ClusterConfig& config) const;
    /// "nvlink 32 GPU-switch bundles of 4-5 links" for Describe's links line.
    virtual std::string DescribeLinks(const ClusterConfig& config) const = 0;
    /// Describe's lines after the links line ("front-end: routed ToR ...\n"); "" for none.
    virtual std::string DescribeDetails(const ClusterConfig& config) const;
    /// Describe's lines of per-GPU bandwidth, each "  name  figure  (how)\n".
    virtual std::string DescribePerGpu(const ClusterConfig& config) const = 0;
    /// Describe's line of bisection bandwidth.
    virtual std::string DescribeBisection(const ClusterConfig& config) const = 0;
    /// Bisection bandwidth per direction in Gb/s (NVLink: per domain).
    virtual double GetBisection_gbit_per_s(const ClusterConfig& config) const = 0;

    /// Per-GPU data rate of the plane in Gb/s, as the 36 : 4 : 1 comparison counts it.
    virtual double GetPerGpu_gbit_per_s(const ClusterConfig& config) const = 0;
    /// Multiplies the plane's link rates in \p config by \p factor (plane sizing).
    virtual void ScaleBandwidth(ClusterConfig& config, double factor) const = 0;

  protected:
    /// Data rate \p data_bps on \p dev, keeping its line coding (signalling = data /
    /// encoding efficiency); nothing when the device already runs at it.
    static void SetDataRate(Ptr<CreditLinkNetDevice> dev, double data_bps);

  public:
    /// A `nodes` row (its full ns-3 name), if this process simulates the node.
    static void WriteNodeRow(Ptr<ResultsDatabase> db,
                             Ptr<Node> node,
                             const std::string& kind,
                             int64_t server,
                             int64_t rank);
};

/// Two decimals at most, trailing zeros dropped: "36", "12.5", "63.02", "32400".
std::string FormatDecimal(double v);
/// A rate given in Gb/s, printed in GB/s: "50 GB/s" for 400.
std::string FormatGbitAsGbyte(double gbit_per_s);

/// Every plane builder, in build order (node ids and link ids follow it): front-end,
/// NVLink, InfiniBand.
std::vector<std::unique_ptr<ClusterPlaneBuilder>> MakeClusterPlaneBuilders();
/// The builders of a cluster whose scale-out plane is \p scaleOut (InfiniBand or RoCE: one
/// of them), in build order.
std::vector<std::unique_ptr<ClusterPlaneBuilder>> MakeClusterPlaneBuilders(ClusterPlane scaleOut);
/// A builder of \p plane, for questions that need no built cluster (rates, scaling).
const ClusterPlaneBuilder& GetClusterPlaneBuilder(ClusterPlane plane);

/**
 * Which plane carries GPU traffic between two ranks: the first row of an ordered table whose
 * plane reaches the pair (ClusterPlaneBuilder::GetReach) and has a transport plane.  The
 * default table is NVLink inside a domain, InfiniBand between domains.  A group may be forced
 * onto one plane; a forced plane that cannot carry the pair is an error for TrySelect and no
 * plane (-1) for the transport's selector, whose fallback is then its first plane that reaches
 * the pair: ClusterHelper gives the transport the catch-all row's plane first.
 */
class ClusterPlaneRules
{
  public:
    struct Row
    {
        ClusterPlane plane;
        ClusterPlaneReach reach;
    };

    /// NVLink inside a domain, InfiniBand for every pair.
    static std::vector<Row> DefaultRows();
    /// NVLink inside a domain, \p scaleOut for every pair.
    static std::vector<Row> DefaultRows(ClusterPlane scaleOut);

    ClusterPlaneRules() = default;
    ClusterPlaneRules(const ClusterLayout& layout, std::vector<Row> rows);

    void SetLayout(const ClusterLayout& layout);
    /// Rows whose plane has no transport plane are skipped by Select.
    void SetAvailable(const std::map<ClusterPlane, int32_t>& planeIndex);
    void Force(const std::string& group, ClusterPlane plane);
    void ClearForced();

    /// "" and \p plane, or why the pair has no plane (range, same rank, forced plane).
    std::string TrySelect(uint32_t src,
                          uint32_t dst,
                          ClusterPlane& plane,
                          const std::string& group) const;

    /// \p group's rule with its planes' transport indices: (reach, index) candidates in order.
    struct Resolved
    {
        ClusterLayout layout;
        std::vector<std::pair<ClusterPlaneReach, int32_t>> candidates;

        /// Transport plane index for the pair, -1 for none (range, same rank, out of reach).
        int32_t Select(uint32_t src, uint32_t dst) const;
    };

    Resolved Resolve(const std::string& group) const;
    /// Transport plane index for the pair under \p group's rule, -1 for none.
    int32_t SelectIndex(uint32_t src, uint32_t dst, const std::string& group) const;
    const std::vector<Row>& GetRows() const;
    /// Plane of the last row that reaches every pair.
    ClusterPlane GetCatchAll() const;
    /// Copy of the rules for one group's traffic, as a GpuTransport plane selector.
    Callback<int32_t, uint32_t, uint32_t> MakeSelector(const std::string& group) const;

  private:
    bool Reaches(ClusterPlaneReach reach, uint32_t src, uint32_t dst) const;
    ClusterPlaneReach ReachOf(ClusterPlane plane) const;

    ClusterLayout m_layout;
    std::vector<Row> m_rows;
    std::map<ClusterPlane, int32_t> m_index;
    std::map<std::string, ClusterPlane> m_forced;
};

} // namespace ns3

#endif
