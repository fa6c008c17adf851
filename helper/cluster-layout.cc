/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/cluster-layout.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ClusterLayout");

ClusterLayout::ClusterLayout(uint32_t servers, uint32_t gpusPerServer, uint32_t serversPerDomain)
    : m_servers(servers),
      m_gpusPerServer(gpusPerServer),
      m_serversPerDomain(serversPerDomain)
{
    NS_LOG_FUNCTION(this << servers << gpusPerServer << serversPerDomain);
    // ClusterConfig::Validate refuses these shapes with a message naming the flag; a layout
    // of an unvalidated configuration only has to stay arithmetic (no division by zero).
    m_gpusPerServer = std::max<uint32_t>(gpusPerServer, 1);
    m_serversPerDomain = std::max<uint32_t>(serversPerDomain, 1);
    m_domainSystem.assign(GetNDomains(), 0);
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
ClusterLayout::GetServersPerDomain() const
{
    return m_serversPerDomain;
}

uint32_t
ClusterLayout::GetGpusPerDomain() const
{
    return m_serversPerDomain * m_gpusPerServer;
}

uint32_t
ClusterLayout::GetNDomains() const
{
    return m_servers / m_serversPerDomain;
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
ClusterLayout::GetGpuIdInDomain(uint32_t rank) const
{
    CheckRank(rank);
    return rank % GetGpusPerDomain();
}

bool
ClusterLayout::SameDomain(uint32_t a, uint32_t b) const
{
    return GetDomain(a) == GetDomain(b);
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

std::string
ClusterLayout::ParsePartitionPolicy(const std::string& name, PartitionPolicy& policy)
{
    if (name == "domain-blocks")
    {
        policy = PartitionPolicy::DOMAIN_BLOCKS;
        return "";
    }
    if (name == "round-robin")
    {
        policy = PartitionPolicy::ROUND_ROBIN;
        return "";
    }
    return "unknown partition '" + name + "'; valid: domain-blocks, round-robin";
}

std::string
ClusterLayout::Partition(uint32_t processes, PartitionPolicy policy)
{
    NS_LOG_FUNCTION(this << processes << static_cast<int>(policy));
    const uint32_t domains = GetNDomains();
    m_domainSystem.assign(domains, 0);
    m_nSystems = processes;
    if (processes == 0 || processes > domains)
    {
        return std::to_string(processes) + " processes for " + std::to_string(domains) +
               " NVLink domain(s): a domain is never split, use 1 to " + std::to_string(domains) +
               " processes";
    }
    for (uint32_t d = 0; d < domains; ++d)
    {
        m_domainSystem[d] = policy == PartitionPolicy::ROUND_ROBIN
                                ? d % processes
                                : static_cast<uint32_t>(uint64_t{d} * processes / domains);
        NS_LOG_LOGIC("domain " << d << " on process " << m_domainSystem[d]);
    }
    return "";
}

uint32_t
ClusterLayout::GetNSystems() const
{
    return m_nSystems;
}

uint32_t
ClusterLayout::GetDomainSystemId(uint32_t domain) const
{
    NS_ABORT_MSG_UNLESS(domain < m_domainSystem.size(), "cluster: no NVLink domain " << domain);
    return m_domainSystem[domain];
}

uint32_t
ClusterLayout::GetRankSystemId(uint32_t rank) const
{
    return GetDomainSystemId(GetDomain(rank));
}

} // namespace ns3
