/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_INFINIBAND_TOPOLOGY_H
#define AI_FABRIC_INFINIBAND_TOPOLOGY_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Abstract InfiniBand subnet: HCAs and switches with numbered physical ports
 * (1..N, as in IBA; switch port 0 is the management port) and cables between
 * ports.  It is what the subnet manager routes; a helper fills it from ns-3
 * nodes and devices, or the builders below create common fabrics.
 */
class InfinibandTopology
{
  public:
    enum class NodeKind
    {
        HCA,
        SWITCH
    };

    static constexpr uint32_t MAX_PORTS = 254; //!< IBA: port numbers fit 8 bits, 255 reserved

    struct Node
    {
        NodeKind kind;
        std::string name;
        uint32_t numPorts;
        std::vector<int64_t> linkOfPort; //!< indexed by port number; -1 = unconnected
    };

    struct Link
    {
        uint32_t nodeA;
        uint32_t portA;
        uint32_t nodeB;
        uint32_t portB;
    };

    uint32_t AddHca(const std::string& name, uint32_t numPorts = 1);
    uint32_t AddSwitch(const std::string& name, uint32_t numPorts);
    /// Returns an empty string or why the cable cannot be added.
    std::string TryConnect(uint32_t nodeA, uint32_t portA, uint32_t nodeB, uint32_t portB);
    /// As TryConnect, aborting on error.
    void Connect(uint32_t nodeA, uint32_t portA, uint32_t nodeB, uint32_t portB);

    uint32_t GetNNodes() const;
    const Node& GetNode(uint32_t node) const;
    const std::vector<Link>& GetLinks() const;
    bool IsSwitch(uint32_t node) const;
    /// Peer of (node, port); false if the port is unconnected.
    bool GetPeer(uint32_t node, uint32_t port, uint32_t& peerNode, uint32_t& peerPort) const;
    std::vector<uint32_t> GetHcas() const;
    std::vector<uint32_t> GetSwitches() const;
    /// "h3 (node 7)"
    std::string Describe(uint32_t node) const;

    // Builders.  Hosts are named h0.., switches by role; hosts are added in
    // leaf order, so with the subnet manager's LID order host i gets LID i+1.

    /// Ring of \p numSwitches switches (port 1 to the next, port 2 to the
    /// previous), each with \p hostsPerSwitch hosts on ports 3...
    static InfinibandTopology Ring(uint32_t numSwitches, uint32_t hostsPerSwitch = 1);

    /**
     * k-ary n-tree (Petrini & Vanneschi, 1997): k^n hosts, n levels of
     * k^(n-1) switches with k down ports (1..k) and k up ports (k+1..2k).
     * Switch <w, l> up port i goes to switch <w with digit l set to i, l+1>.
     */
    static InfinibandTopology KaryNTree(uint32_t k, uint32_t n);

    /**
     * Folded-Clos fat tree of \p switchRadix-port switches for \p numHosts
     * hosts, leaf down:up ports = \p oversubscription : 1.  One switch if the
     * hosts fit; else 2 tiers (leaf/spine) if the leaves fit the spine radix;
     * else 3 tiers (pods of radix/2 leaves and up aggregation switches, cores
     * in up groups of radix/2).  Returns an error if even 3 tiers do not fit.
     */
    static std::string TryFatTree(uint32_t switchRadix,
                                  uint32_t numHosts,
                                  double oversubscription,
                                  InfinibandTopology& topology);
    static InfinibandTopology FatTree(uint32_t switchRadix,
                                      uint32_t numHosts,
                                      double oversubscription = 1.0);
    /// Tiers of switches the last FatTree/KaryNTree built (0 for others).
    uint32_t GetTiers() const;

  private:
    std::vector<Node> m_nodes;
    std::vector<Link> m_links;
    uint32_t m_tiers = 0;
};

} // namespace ns3

#endif
