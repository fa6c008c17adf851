/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RAIL_CLUSTER_PLANE_H
#define AI_FABRIC_RAIL_CLUSTER_PLANE_H

#include "ns3/cluster-plane.h"
#include "ns3/credit-link-net-device.h"
#include "ns3/results-database.h"

#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * What the scale-out planes share: one NIC per rank (\p Nic, a CreditLinkNetDevice) into a
 * rail-optimised fabric of switch nodes, a \p Transport plane (with AddRank(rank, nic)) over
 * the NICs, and the rows, counts and descriptions that follow from that alone. InfiniBand and
 * RoCE differ in how they build and route the fabric, not in this.
 */
template <class Nic, class Transport>
class RailClusterPlane : public ClusterPlaneBuilder
{
  public:
    Ptr<TransportPlane> MakeTransportPlane(const ClusterLayout& layout) const override
    {
        Ptr<Transport> plane = CreateObject<Transport>();
        for (uint32_t r = 0; r < layout.GetNRanks(); ++r)
        {
            plane->AddRank(r, m_nic[r]);
        }
        return plane;
    }

    void CountNodes(std::map<std::string, uint32_t>& counts) const override
    {
        counts[m_switchKind] += m_switches.GetN();
    }

    void WriteNodes(Ptr<ResultsDatabase> db, const ClusterConfig& /* config */) const override
    {
        for (uint32_t i = 0; i < m_switches.GetN(); ++i)
        {
            WriteNodeRow(db, m_switches.Get(i), m_switchKind, -1, -1);
        }
    }

    std::vector<Ptr<CreditLinkNetDevice>> GetRankLinkEnds(uint32_t rank) const override
    {
        if (rank >= m_nic.size() || !m_nic[rank])
        {
            return {};
        }
        return {m_nic[rank]};
    }

    const std::vector<Ptr<CreditLinkNetDevice>>& GetCreditLinkDevices() const override
    {
        return m_devices;
    }

    std::string DescribePerGpu(const ClusterConfig& c) const override
    {
        std::ostringstream o;
        o << "  " << std::left << std::setw(12) << GetName()
          << FormatGbitAsGbyte(GetPerGpu_gbit_per_s(c)) << "  (1 " << m_nicWord << " x "
          << FormatDecimal(c.ibRate_gbit_per_s) << " Gb/s)\n";
        return o.str();
    }

    std::string DescribeBisection(const ClusterConfig& c) const override
    {
        std::ostringstream o;
        o << "  " << std::left << std::setw(12) << GetName()
          << FormatGbitAsGbyte(GetBisection_gbit_per_s(c)) << "  (oversubscription "
          << FormatDecimal(c.oversubscription) << ":1)\n";
        return o.str();
    }

    NodeContainer GetSwitchNodes() const
    {
        return m_switches;
    }

  protected:
    /// \p switchKind names the switches' node rows ("ib-switch"); \p nicWord the NIC in
    /// descriptions ("HCA").
    RailClusterPlane(std::string switchKind, std::string nicWord)
        : m_switchKind(std::move(switchKind)),
          m_nicWord(std::move(nicWord))
    {
    }

    std::vector<Ptr<Nic>> m_nic;                     //!< rank -> NIC
    std::vector<Ptr<CreditLinkNetDevice>> m_devices; //!< every port (both ends)
    NodeContainer m_switches;

  private:
    std::string m_switchKind;
    std::string m_nicWord;
};

} // namespace ns3

#endif
