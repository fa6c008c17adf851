/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "credit-link-conservation.h"

#include "credit-link-channel.h"
#include "credit-switch.h"
#include "link-flow-control.h"

#include "ns3/node.h"

#include <sstream>

namespace ns3
{

std::string
CreditLinkViolation::ToString() const
{
    std::ostringstream os;
    os << plane << " " << where;
    if (vc >= 0)
    {
        os << " vc " << vc;
    }
    os << ": " << problem;
    return os.str();
}

bool
CreditLinkConservationReport::Ok() const
{
    return violations.empty();
}

std::string
CreditLinkConservationReport::Describe() const
{
    std::ostringstream os;
    if (Ok())
    {
        os << "conservation OK:";
        for (const auto& [name, p] : planes)
        {
            os << " " << name << " " << p.links << " links, " << p.vcs << " VCs, " << p.sentBytes
               << " B sent = received;";
        }
        os << "\n";
    }
    else
    {
        os << "conservation violated (" << violations.size() << "):\n";
        for (const auto& v : violations)
        {
            os << "  " << v.ToString() << "\n";
        }
    }
    for (const auto& n : notes)
    {
        os << "  note: " << n << "\n";
    }
    return os.str();
}

void
CreditLinkConservation::Add(const std::string& plane, Ptr<CreditLinkNetDevice> device)
{
    for (Ptr<CreditLinkNetDevice> d : {device, device->GetPeer()})
    {
        if (d && m_known.insert(PeekPointer(d)).second)
        {
            m_devices.emplace_back(plane, d);
        }
    }
}

void
CreditLinkConservation::Add(const std::string& plane,
                            const std::vector<Ptr<CreditLinkNetDevice>>& devices)
{
    for (const auto& d : devices)
    {
        Add(plane, d);
    }
}

void
CreditLinkConservation::Add(const std::string& plane, const NodeContainer& nodes)
{
    for (auto it = nodes.Begin(); it != nodes.End(); ++it)
    {
        for (uint32_t i = 0; i < (*it)->GetNDevices(); ++i)
        {
            if (auto d = DynamicCast<CreditLinkNetDevice>((*it)->GetDevice(i)))
            {
                Add(plane, d);
            }
        }
    }
}

CreditLinkConservationReport
CreditLinkConservation::Check(bool expectIdle) const
{
    CreditLinkConservationReport report;
    std::vector<std::pair<std::string, Ptr<CreditSwitch>>> switches;
    std::set<const CreditSwitch*> seen;
    for (const auto& [plane, d] : m_devices)
    {
        report.planes[plane];
        if (!d->GetPeer())
        {
            continue; // not cabled: nothing to conserve
        }
        CheckDirection(plane, d, expectIdle, report);
        if (Ptr<CreditSwitch> sw = d->GetSwitch(); sw && seen.insert(PeekPointer(sw)).second)
        {
            switches.emplace_back(plane, sw);
        }
    }
    for (const auto& [plane, sw] : switches)
    {
        CheckSwitch(plane, sw, expectIdle, report);
    }
    return report;
}

void
CreditLinkConservation::CheckDirection(const std::string& plane,
                                       Ptr<CreditLinkNetDevice> from,
                                       bool expectIdle,
                                       CreditLinkConservationReport& report) const
{
    const Ptr<CreditLinkNetDevice> to = from->GetPeer();
    const auto channel = DynamicCast<CreditLinkChannel>(from->GetChannel());
    const std::string where = "link " + from->GetLinkName();
    auto violation = [&](int32_t vc, const std::string& problem) {
        report.violations.push_back(CreditLinkViolation{plane, where, vc, problem});
    };
    const uint32_t vcs = from->GetNumVcs();
    uint64_t wirePackets = 0;
    uint64_t wireBytes = 0;
    std::vector<uint64_t> wireDataCredits(vcs, 0);
    for (const auto& f : channel->GetFramesInFlight(PeekPointer(from)))
    {
        if (f.packet)
        {
            wirePackets++;
            wireBytes += f.packet->GetSize();
            wireDataCredits.at(f.vc) += from->CreditsFor(f.packet->GetSize());
        }
    }
    std::vector<uint64_t> wireCreditsBack(vcs, 0);
    for (const auto& f : channel->GetFramesInFlight(PeekPointer(to)))
    {
        if (!f.packet)
        {
            wireCreditsBack.at(f.vc) += f.credits;
        }
    }

    const CreditLinkNetDevice::Counters& tx = from->GetCounters();
    const CreditLinkNetDevice::Counters& rx = to->GetCounters();
    CreditLinkConservationReport::Plane& p = report.planes[plane];
    p.links += PeekPointer(from) < PeekPointer(to) ? 1 : 0; // each link once
    p.vcs += vcs;
    p.sentBytes += tx.txBytes;
    p.receivedBytes += rx.rxBytes;
    p.inFlightBytes += wireBytes;
    if (tx.txPackets != rx.rxPackets + wirePackets || tx.txBytes != rx.rxBytes + wireBytes)
    {
        std::ostringstream os;
        os << "sent " << tx.txPackets << " packets (" << tx.txBytes << " B), received "
           << rx.rxPackets << " (" << rx.rxBytes << " B), on the wire " << wirePackets << " ("
           << wireBytes << " B): "
           << static_cast<int64_t>(tx.txBytes) - static_cast<int64_t>(rx.rxBytes + wireBytes)
           << " B unaccounted";
        violation(-1, os.str());
    }
    if (expectIdle && wirePackets != 0)
    {
        violation(-1,
                  std::to_string(wirePackets) + " packets (" + std::to_string(wireBytes) +
                      " B) still on the wire");
    }
    if (const uint64_t discards = to->GetReceiveDiscards(); discards != 0)
    {
        p.drops += discards;
        violation(-1,
                  std::to_string(discards) + " packets discarded by the receiver " +
                      to->GetLinkName() + " (not addressed to it)");
    }
    if (const Ptr<LinkFlowControl> fc = to->GetFlowControl())
    {
        CheckFlowControlDirection(plane, from, fc, expectIdle, report);
        return;
    }
    for (uint32_t vc = 0; vc < vcs; ++vc)
    {
        const uint64_t initial = from->GetInitialCredits(vc);
        const uint64_t held = from->GetCredits(vc);
        const uint64_t accounted = held + wireCreditsBack[vc] + wireDataCredits[vc] +
                                   to->GetReceiveOccupancy(vc) + to->GetPendingCreditReturn(vc);
        if (accounted != initial)
        {
            std::ostringstream os;
            os << "credits: has " << held << " of " << initial << ", " << wireCreditsBack[vc]
               << " returning on the wire, " << wireDataCredits[vc] << " in data on the wire, "
               << to->GetReceiveOccupancy(vc) << " in the receive buffer, "
               << to->GetPendingCreditReturn(vc) << " to be returned: "
               << static_cast<int64_t>(initial) - static_cast<int64_t>(accounted)
               << " credits lost";
            violation(static_cast<int32_t>(vc), os.str());
        }
        else if (expectIdle && held != initial)
        {
            violation(static_cast<int32_t>(vc),
                      "credits not back at their initial value: has " + std::to_string(held) +
                          " of " + std::to_string(initial));
        }
        if (expectIdle && !from->GetSwitch() && from->GetQueueBytes(vc) != 0)
        {
            violation(static_cast<int32_t>(vc),
                      std::to_string(from->GetQueueBytes(vc)) + " B still queued");
        }
    }
}

void
CreditLinkConservation::CheckFlowControlDirection(const std::string& plane,
                                                  Ptr<CreditLinkNetDevice> from,
                                                  Ptr<LinkFlowControl> fc,
                                                  bool expectIdle,
                                                  CreditLinkConservationReport& report)
{
    // No credits to balance: the receiver's buffer and its drops are the discipline's.
    const Ptr<CreditLinkNetDevice> to = from->GetPeer();
    const std::string where = "link " + from->GetLinkName();
    if (const uint64_t drops = fc->GetDroppedPackets(); drops != 0)
    {
        report.planes[plane].drops += drops;
        const std::string what = std::to_string(drops) + " packets (" +
                                 std::to_string(fc->GetDroppedBytes()) +
                                 " B) dropped at the ingress of " + to->GetLinkName();
        if (fc->IsLossless())
        {
            report.violations.push_back(
                CreditLinkViolation{plane,
                                    where,
                                    -1,
                                    what + ": a lossless (PFC) queue overflowed its headroom"});
        }
        else
        {
            report.notes.push_back(plane + " " + where + ": " + what + " (lossy)");
        }
    }
    for (uint32_t vc = 0; vc < from->GetNumVcs(); ++vc)
    {
        if (expectIdle && fc->GetOccupancyBytes(vc) != 0)
        {
            report.violations.push_back(
                CreditLinkViolation{plane,
                                    where,
                                    static_cast<int32_t>(vc),
                                    std::to_string(fc->GetOccupancyBytes(vc)) +
                                        " B still held in the receiver's ingress queue"});
        }
        if (expectIdle && !from->GetSwitch() && from->GetQueueBytes(vc) != 0)
        {
            report.violations.push_back(
                CreditLinkViolation{plane,
                                    where,
                                    static_cast<int32_t>(vc),
                                    std::to_string(from->GetQueueBytes(vc)) + " B still queued"});
        }
    }
}

void
CreditLinkConservation::CheckSwitch(const std::string& plane,
                                    Ptr<CreditSwitch> sw,
                                    bool expectIdle,
                                    CreditLinkConservationReport& report)
{
    const uint32_t ports = sw->GetNPorts();
    const Ptr<Node> node = ports ? sw->GetPort(0)->GetNode() : nullptr;
    const std::string where = "switch n" + std::to_string(node ? node->GetId() : 0);
    auto violation = [&](const std::string& w, const std::string& problem) {
        report.violations.push_back(CreditLinkViolation{plane, w, -1, problem});
    };
    uint64_t received = 0;
    uint64_t sent = 0;
    uint64_t ingressDropped = 0;
    for (uint32_t i = 0; i < ports; ++i)
    {
        const Ptr<CreditLinkNetDevice> port = sw->GetPort(i);
        received += port->GetCounters().rxPackets;
        sent += port->GetCounters().txPackets;
        if (const Ptr<LinkFlowControl> fc = port->GetFlowControl())
        {
            ingressDropped += fc->GetDroppedPackets(); // reported with the link
        }
        if (const uint64_t dropped = sw->GetDroppedPackets(i); dropped != 0)
        {
            // Name the link by its sending end: the packets came from there.
            const Ptr<CreditLinkNetDevice> peer = port->GetPeer();
            report.planes[plane].drops += dropped;
            violation("link " + (peer ? peer->GetLinkName() : port->GetLinkName()),
                      std::to_string(dropped) + " packets dropped at the switch input (first: " +
                          sw->GetFirstDropReason() + ")");
        }
    }
    const uint64_t buffered = sw->GetBufferedPackets();
    const uint64_t held = sw->GetHeldPackets();
    const uint64_t dropped = sw->GetDroppedPackets() + ingressDropped;
    const int64_t absorbed = sw->GetNetAbsorbedPackets();
    if (static_cast<int64_t>(received) !=
        static_cast<int64_t>(sent + buffered + held + dropped) + absorbed)
    {
        std::ostringstream os;
        os << "received " << received << " packets, sent " << sent << ", buffered " << buffered
           << ", held " << held << ", dropped " << dropped << ", absorbed " << absorbed << ": "
           << static_cast<int64_t>(received) -
                  static_cast<int64_t>(sent + buffered + held + dropped) - absorbed
           << " unaccounted";
        violation(where, os.str());
    }
    if (expectIdle && buffered != 0)
    {
        violation(where, std::to_string(buffered) + " packets still buffered");
    }
    if (expectIdle && held != 0)
    {
        violation(where, std::to_string(held) + " packets still held (incomplete NVLS chunks)");
    }
}

} // namespace ns3
