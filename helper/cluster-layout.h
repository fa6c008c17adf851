/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CLUSTER_LAYOUT_H
#define AI_FABRIC_CLUSTER_LAYOUT_H

#include "ns3/infiniband-topology.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Where a rank sits in a cluster, as arithmetic only (no node is built): ranks are
 * numbered server by server, servers NVLink domain by domain; a rank's InfiniBand rail is
 * its index in its server.  Also the split of the cluster over the processes of a
 * distributed run: whole NVLink domains per process, InfiniBand switches with the hosts
 * they serve.  ClusterConfig::GetLayout gives the layout of a configuration; ClusterHelper
 * answers its rank questions with it.
 */
class ClusterLayout
{
  public:
    /// \p serversPerDomain must divide \p servers (ClusterConfig::Validate checks it).
    ClusterLayout(uint32_t servers, uint32_t gpusPerServer, uint32_t serversPerDomain);

    uint32_t GetNRanks() const;
    uint32_t GetNServers() const;
    uint32_t GetGpusPerServer() const;
    uint32_t GetNDomains() const;
    uint32_t GetGpusPerDomain() const;

    /// Aborts on a rank out of range, as every method taking a rank does.
    void CheckRank(uint32_t rank) const;
    uint32_t GetServer(uint32_t rank) const;
    uint32_t GetLocalIndex(uint32_t rank) const; //!< index of the GPU in its server
    uint32_t GetRail(uint32_t rank) const;       //!< InfiniBand rail = local index
    uint32_t GetDomain(uint32_t rank) const;     //!< NVLink domain
    /// GPU id of the rank inside its NVLink domain (NvLinkGpu / NvSwitch route id).
    uint32_t GetDomainGpuId(uint32_t rank) const;
    /// Rank of GPU \p localIndex of server \p server.
    uint32_t GetRank(uint32_t server, uint32_t localIndex) const;
    /// Ranks of NVLink domain \p domain, by GPU id; aborts on a domain out of range.
    std::vector<uint32_t> GetDomainRanks(uint32_t domain) const;

    /// Rail-optimised leaves: leaf of the rank's HCA when each leaf of a rail serves
    /// \p hostsPerLeaf servers and there are \p rails rails (leaf = group x rails + rail) ...
    uint32_t GetIbLeaf(uint32_t rank, uint32_t hostsPerLeaf, uint32_t rails) const;
    /// ... and the leaf port (1-based) its cable takes.
    uint32_t GetIbLeafPort(uint32_t rank, uint32_t hostsPerLeaf) const;

    /**
     * Distributed runs: the process (node system id) of each NVLink domain when the cluster
     * is split over \p processes, "domain-blocks" (contiguous, balanced) or "round-robin".
     * "" or why it cannot be split (a domain is never split).
     */
    std::string PartitionDomains(uint32_t processes,
                                 const std::string& partition,
                                 std::vector<uint32_t>& systemOfDomain) const;
    /**
     * System id of each node of \p topology that is a switch (index = topology node; other
     * entries 0): the system of the domain of the first host (HCA of rank r at
     * hcaNodeOfRank[r]) it is cabled to, in link order; switches without hosts go
     * round-robin over the \p systems processes.
     */
    std::vector<uint32_t> GetIbSwitchSystemIds(const InfinibandTopology& topology,
                                               const std::vector<uint32_t>& hcaNodeOfRank,
                                               const std::vector<uint32_t>& systemOfDomain,
                                               uint32_t systems) const;

  private:
    uint32_t m_servers;
    uint32_t m_gpusPerServer;
    uint32_t m_serversPerDomain;
};

} // namespace ns3

#endif
