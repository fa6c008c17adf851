/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-monitor-importer.h"

#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node-list.h"
#include "ns3/node.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowMonitorImporter");

namespace
{

std::map<Ipv4Address, uint32_t>
NodeOfAddress()
{
    std::map<Ipv4Address, uint32_t> nodeOf;
    for (auto it = NodeList::Begin(); it != NodeList::End(); ++it)
    {
        Ptr<Ipv4> ipv4 = (*it)->GetObject<Ipv4>();
        if (!ipv4)
        {
            continue;
        }
        for (uint32_t i = 0; i < ipv4->GetNInterfaces(); ++i)
        {
            for (uint32_t a = 0; a < ipv4->GetNAddresses(i); ++a)
            {
                nodeOf.emplace(ipv4->GetAddress(i, a).GetLocal(), (*it)->GetId());
            }
        }
    }
    return nodeOf;
}

} // namespace

uint64_t
FlowMonitorImporter::Import(ResultsDatabase& db,
                            Ptr<FlowMonitor> monitor,
                            Ptr<Ipv4FlowClassifier> classifier,
                            const std::map<uint32_t, int64_t>& rankOfNode,
                            int64_t flowIdOffset)
{
    NS_LOG_FUNCTION(&db << monitor << classifier);
    monitor->CheckForLostPackets();
    const auto nodeOf = NodeOfAddress();
    auto lookupNode = [&nodeOf](Ipv4Address addr) -> int64_t {
        auto it = nodeOf.find(addr);
        return it == nodeOf.end() ? -1 : it->second;
    };
    auto lookupRank = [&rankOfNode](int64_t node) -> int64_t {
        auto it = node < 0 ? rankOfNode.end() : rankOfNode.find(static_cast<uint32_t>(node));
        return it == rankOfNode.end() ? -1 : it->second;
    };
    uint64_t rows = 0;
    for (const auto& [flowId, stats] : monitor->GetFlowStats())
    {
        const Ipv4FlowClassifier::FiveTuple t = classifier->FindFlow(flowId);
        FlowRecord row;
        row.flowId = flowIdOffset + flowId;
        row.plane = "ethernet";
        row.srcNode = lookupNode(t.sourceAddress);
        row.dstNode = lookupNode(t.destinationAddress);
        row.srcRank = lookupRank(row.srcNode);
        row.dstRank = lookupRank(row.dstNode);
        row.bytes = static_cast<int64_t>(stats.txBytes);
        row.packets = stats.txPackets;
        row.startNs = stats.timeFirstTxPacket.GetNanoSeconds();
        row.endNs = stats.rxPackets ? stats.timeLastRxPacket.GetNanoSeconds() : -1;
        row.rxBytes = static_cast<int64_t>(stats.rxBytes);
        row.lostPackets = stats.lostPackets;
        db.AddFlow(row);
        ++rows;
    }
    return rows;
}

} // namespace ns3
