/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_FLOW_MONITOR_IMPORTER_H
#define AI_FABRIC_FLOW_MONITOR_IMPORTER_H

#include "results-database.h"

#include "ns3/flow-monitor.h"
#include "ns3/ipv4-flow-classifier.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Turns ns-3 FlowMonitor statistics of the IP (front-end Ethernet) plane into
 * `flows` rows with plane "ethernet" of the database's current run.
 *
 * Nodes are found from the flow's IPv4 addresses over NodeList; ranks from
 * \p rankOfNode (node id -> GPU rank; absent means NULL).  flow_id is the
 * FlowMonitor id plus \p flowIdOffset, so that IP flows need not collide with
 * the fabric's own flow ids.  bytes/packets are what was sent; rx_bytes and
 * lost_packets what FlowMonitor saw arrive and declared lost; start_ns is the
 * first transmission and end_ns the last reception (NULL if nothing arrived).
 */
class FlowMonitorImporter
{
  public:
    /// \returns the number of rows added.
    static uint64_t Import(ResultsDatabase& db,
                           Ptr<FlowMonitor> monitor,
                           Ptr<Ipv4FlowClassifier> classifier,
                           const std::map<uint32_t, int64_t>& rankOfNode = {},
                           int64_t flowIdOffset = 0);
};

} // namespace ns3

#endif
