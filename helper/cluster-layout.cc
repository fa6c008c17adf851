/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/cluster-layout.h"

#include "ns3/abort.h"

#include <utility>

namespace ns3
{

ClusterLayout::ClusterLayout(uint32_t servers, uint32_t gpusPerServer, uint32_t serversPerDomain)
    : m_servers(servers),
      m_gpusPerServer(gpusPerServer),
      m_serversPerDomain(serversPerDomain)
{
}

uint32_t
ClusterLayout::GetNRanks() const
{
    return m_servers * m_gpusPerServer;
}

uint32_t
ClusterLayout::GetNServers() const
{
    return m_servers;
}

uint32_t
ClusterLayout::GetGpusPerServer() const
{
    return m_gpusPerServer;
}

uint32_t
ClusterLayout::GetNDomains() const
{
    return m_serversPerDomain == 0 ? 0 : m_servers / m_serversPerDomain;
}

uint32_t
ClusterLayout::GetGpusPerDomain() const
{
    return m_serversPerDomain * m_gpusPerServer;
}

void
ClusterLayout::CheckRank(uint32_t rank) const
{
    NS_ABORT_MSG_IF(rank >= GetNRanks(),
                    "cluster: rank " << rank << " out of range (" << GetNRanks() << " ranks)");
}

uint32_t
ClusterLayout::GetServer(uint32_t rank) const
{
    CheckRank(rank);
    return rank / m_gpusPerServer;
}

uint32_t
ClusterLayout::GetLocalIndex(uint32_t rank) const
{
    CheckRank(rank);
    return rank % m_gpusPerServer;
}

uint32_t
ClusterLayout::GetRail(uint32_t rank) const
{
    return GetLocalIndex(rank);
}

uint32_t
ClusterLayout::GetDomain(uint32_t rank) const
{
    return GetServer(rank) / m_serversPerDomain;
}

uint32_t
ClusterLayout::GetDomainGpuId(uint32_t rank) const
{
    CheckRank(rank);
    return rank % GetGpusPerDomain();
}

uint32_t
ClusterLayout::GetRank(uint32_t server, uint32_t localIndex) const
{
    NS_ABORT_MSG_IF(server >= m_servers || localIndex >= m_gpusPerServer,
                    "cluster: no GPU " << localIndex << " on server " << server);
    return server * m_gpusPerServer + localIndex;
}

std::vector<uint32_t>
ClusterLayout::GetDomainRanks(uint32_t domain) const
{
    NS_ABORT_MSG_UNLESS(domain < GetNDomains(), "cluster: no NVLink domain " << domain);
    std::vector<uint32_t> ranks(GetGpusPerDomain());
    for (uint32_t g = 0; g < ranks.size(); ++g)
    {
        ranks[g] = domain * GetGpusPerDomain() + g;
    }
    return ranks;
}

uint32_t
ClusterLayout::GetIbLeaf(uint32_t rank, uint32_t hostsPerLeaf, uint32_t rails) const
{
    return (GetServer(rank) / hostsPerLeaf) * rails + GetRail(rank);
}

uint32_t
ClusterLayout::GetIbLeafPort(uint32_t rank, uint32_t hostsPerLeaf) const
{
    return GetServer(rank) % hostsPerLeaf + 1;
}

std::string
ClusterLayout::PartitionDomains(uint32_t processes,
                                const std::string& partition,
                                std::vector<uint32_t>& systemOfDomain) const
{
    const uint32_t domains = GetNDomains();
    systemOfDomain.assign(domains, 0);
    if (processes == 0 || processes > domains)
    {
        return std::to_string(processes) + " processes for " + std::to_string(domains) +
               " NVLink domain(s): a domain is never split, use 1 to " + std::to_string(domains) +
               " processes";
    }
    for (uint32_t d = 0; d < domains; ++d)
    {
        systemOfDomain[d] = partition == "round-robin"
                                ? d % processes
                                : static_cast<uint32_t>(uint64_t{d} * processes / domains);
    }
    return "";
}

std::vector<uint32_t>
ClusterLayout::GetIbSwitchSystemIds(const InfinibandTopology& topology,
                                    const std::vector<uint32_t>& hcaNodeOfRank,
                                    const std::vector<uint32_t>& systemOfDomain,
                                    uint32_t systems) const
{
    const InfinibandTopology& t = topology;
    std::vector<int64_t> system(t.GetNNodes(), -1);
    std::vector<int64_t> rankOfHca(t.GetNNodes(), -1);
    for (uint32_t r = 0; r < hcaNodeOfRank.size(); ++r)
    {
        rankOfHca[hcaNodeOfRank[r]] = r;
    }
    for (const auto& link : t.GetLinks())
    {
        for (auto [host, sw] :
             {std::pair{link.nodeA, link.nodeB}, std::pair{link.nodeB, link.nodeA}})
        {
            if (rankOfHca[host] >= 0 && t.IsSwitch(sw) && system[sw] < 0)
            {
                system[sw] = systemOfDomain[GetDomain(static_cast<uint32_t>(rankOfHca[host]))];
            }
        }
    }
    std::vector<uint32_t> out(t.GetNNodes(), 0);
    uint32_t next = 0;
    for (uint32_t sw : t.GetSwitches())
    {
        out[sw] = system[sw] >= 0 ? static_cast<uint32_t>(system[sw]) : next++ % systems;
    }
    return out;
}

} // namespace ns3
