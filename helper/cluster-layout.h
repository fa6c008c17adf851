/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CLUSTER_LAYOUT_H
#define AI_FABRIC_CLUSTER_LAYOUT_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Where every rank of a cluster sits: server, local index (= InfiniBand rail), NVLink domain
 * and GPU id inside it, and which process of a distributed run simulates each domain.  Pure
 * arithmetic on the cluster's shape, so that plane builders, the plane rules and tests share
 * one definition; nothing here creates simulation objects.
 *
 * Ranks are numbered server by server (rank = server x gpusPerServer + local index); a domain
 * is serversPerDomain consecutive servers, so its GPU ids are its ranks in order.
 */
class ClusterLayout
{
  public:
    enum class PartitionPolicy
    {
        DOMAIN_BLOCKS, //!< consecutive domains per process: neighbours share a leaf switch
        ROUND_ROBIN    //!< domain d on process d mod processes
    };

    ClusterLayout() = default;
    ClusterLayout(uint32_t servers, uint32_t gpusPerServer, uint32_t serversPerDomain);

    uint32_t GetNRanks() const;
    uint32_t GetNServers() const;
    uint32_t GetGpusPerServer() const;
    uint32_t GetServersPerDomain() const;
    uint32_t GetGpusPerDomain() const;
    uint32_t GetNDomains() const;

    /// Abort on a rank outside the cluster (a programming error, not an input error).
    void CheckRank(uint32_t rank) const;
    uint32_t GetServer(uint32_t rank) const;
    uint32_t GetLocalIndex(uint32_t rank) const;
    uint32_t GetRail(uint32_t rank) const; //!< InfiniBand rail = local GPU index
    uint32_t GetDomain(uint32_t rank) const;
    uint32_t GetGpuIdInDomain(uint32_t rank) const;
    bool SameDomain(uint32_t a, uint32_t b) const;
    /// Ranks of \p domain by GPU id.
    std::vector<uint32_t> GetDomainRanks(uint32_t domain) const;

    /// "domain-blocks" or "round-robin"; "" or why \p name is neither.
    static std::string ParsePartitionPolicy(const std::string& name, PartitionPolicy& policy);
    /**
     * Process (ns-3 system id) of every NVLink domain for a run over \p processes processes.
     * A domain is never split: its NVLink links have no lookahead.  "" or why it cannot be split
     * (then every domain is on process 0).
     */
    std::string Partition(uint32_t processes, PartitionPolicy policy);
    uint32_t GetNSystems() const;
    uint32_t GetDomainSystemId(uint32_t domain) const;
    uint32_t GetRankSystemId(uint32_t rank) const;

  private:
    uint32_t m_servers{0};
    uint32_t m_gpusPerServer{1};
    uint32_t m_serversPerDomain{1};
    uint32_t m_nSystems{1};
    std::vector<uint32_t> m_domainSystem;
};

} // namespace ns3

#endif
