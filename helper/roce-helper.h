/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_ROCE_HELPER_H
#define AI_FABRIC_ROCE_HELPER_H

#include "ns3/credit-link-helper.h"
#include "ns3/roce-net-device.h"
#include "ns3/roce-switch.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Builds RoCEv2 fabrics on the link layer, as CreditLinkHelper builds credit links:
 * RoceNetDevice ports (preamble and inter-frame gap as OverheadBytes), RoceSwitch cores,
 * PFC (or lossy Ethernet) on every port, one congestion-control object per NIC.
 * Connect links; AddHost names a NIC's host index (its IPv4 address); PopulateRoutes
 * gives every switch all its shortest-path ports to every host (the ECMP groups).
 */
class RoceHelper
{
  public:
    RoceHelper();

    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    void SetChannelAttribute(std::string name, const AttributeValue& value);
    void SetSwitchAttribute(std::string name, const AttributeValue& value);
    void SetWatchdogAttribute(std::string name, const AttributeValue& value);
    /// PFC on (lossless, the default) or off (lossy Ethernet: drops at overflow).
    void SetPfc(bool lossless);
    void SetFlowControlAttribute(std::string name, const AttributeValue& value);
    /// Congestion control TypeId name of the NICs (e.g. "ns3::RoceDcqcn"); "" = none.
    void SetCongestionControl(std::string type);
    void SetCongestionControlAttribute(std::string name, const AttributeValue& value);
    /// Switches installed from now on get a RoceSharedBuffer of \p sizeBytes with dynamic
    /// thresholds (\p alpha) for all their ingress queues; 0 = a static buffer per queue.
    void SetSharedBuffer(uint64_t sizeBytes, double alpha);

    Ptr<RoceSwitch> InstallSwitch(Ptr<Node> node);
    /// A link: [0] on \p a, [1] on \p b.
    NetDeviceContainer Connect(Ptr<Node> a, Ptr<Node> b);
    /// \p nic (a host's port) is host \p host of the fabric; gives it its congestion control.
    void AddHost(Ptr<RoceNetDevice> nic, uint32_t host);
    /// ECMP groups of every switch of \p switches towards every host added.
    void PopulateRoutes(const NodeContainer& switches);
    Ptr<CreditLinkWatchdog> GetWatchdog();
    /// Ethernet pcap (link type 1, DLT_EN10MB) of every device of \p devices:
    /// PREFIX-<node>-<ifindex>.pcap with the data frames it sends (TxBegin) and receives
    /// (Rx), without FCS, and the PFC frames it sends as MAC control frames (opcode
    /// 0x0101, one priority enabled).  tshark decodes UDP 4791 as RoCEv2 (InfiniBand BTH).
    void EnablePcap(const std::string& prefix, const NetDeviceContainer& devices);
    const std::vector<Ptr<RoceNetDevice>>& GetHosts() const;

  private:
    CreditLinkHelper m_link;
    ObjectFactory m_ccFactory;
    bool m_hasCc{false};
    ObjectFactory m_pfcFactory; //!< the PFC attributes, for shared-buffer switch ports
    uint64_t m_sharedBytes{0};
    double m_alpha{1.0};
    std::vector<Ptr<RoceNetDevice>> m_hosts; //!< by host index
};

} // namespace ns3

#endif
