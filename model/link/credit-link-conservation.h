/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_CREDIT_LINK_CONSERVATION_H
#define AI_FABRIC_CREDIT_LINK_CONSERVATION_H

#include "ns3/credit-link-net-device.h"
#include "ns3/node-container.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

class CreditSwitch;
class LinkFlowControl;

/// One broken rule: where (plane, link or switch, VC or -1) and what.
struct CreditLinkViolation
{
    std::string plane;
    std::string where; //!< "link n4/1-n5/2" or "switch n5"
    int32_t vc{-1};    //!< -1: the whole link or switch
    std::string problem;

    std::string ToString() const;
};

/// Outcome of CreditLinkConservation::Check.
struct CreditLinkConservationReport
{
    struct Plane
    {
        uint32_t links{0};
        uint32_t vcs{0};
        uint64_t sentBytes{0}; //!< data bytes sent over every direction of every link
        uint64_t receivedBytes{0};
        uint64_t inFlightBytes{0};
        uint64_t drops{0}; //!< switch drops and receiver discards
    };

    std::map<std::string, Plane> planes;
    std::vector<CreditLinkViolation> violations;
    std::vector<std::string> notes; //!< informational lines (e.g. lossy Ethernet drops)

    bool Ok() const;
    /// "conservation OK: ..." or one line per violation.
    std::string Describe() const;
};

/**
 * \ingroup ai-fabric
 * End-of-run (or any-time) accounting check of credit-based links.  For each
 * direction of each link: data sent = received + on the wire; per VC, credits
 * held + credit updates on the wire + credits of data on the wire + the
 * receiver's occupied buffer + released but unreturned buffer = the initial
 * credits.  Per switch: received = sent + buffered + held + dropped; every
 * switch drop and receiver discard is a violation (the links are lossless).
 * With \p expectIdle (a completed run) nothing may remain queued, on the wire,
 * buffered or held, and every VC's credits must be back at their initial value.
 * Reads counters only; costs nothing during the run.
 */
class CreditLinkConservation
{
  public:
    /// \p device's link (both ends) belongs to \p plane; switches are found through the ports.
    void Add(const std::string& plane, Ptr<CreditLinkNetDevice> device);
    void Add(const std::string& plane, const std::vector<Ptr<CreditLinkNetDevice>>& devices);
    /// Every CreditLinkNetDevice on \p nodes.
    void Add(const std::string& plane, const NodeContainer& nodes);

    CreditLinkConservationReport Check(bool expectIdle = true) const;

  private:
    void CheckDirection(const std::string& plane,
                        Ptr<CreditLinkNetDevice> from,
                        bool expectIdle,
                        CreditLinkConservationReport& report) const;
    static void CheckFlowControlDirection(const std::string& plane,
                                          Ptr<CreditLinkNetDevice> from,
                                          Ptr<LinkFlowControl> fc,
                                          bool expectIdle,
                                          CreditLinkConservationReport& report);
    static void CheckSwitch(const std::string& plane,
                            Ptr<CreditSwitch> sw,
                            bool expectIdle,
                            CreditLinkConservationReport& report);

    std::vector<std::pair<std::string, Ptr<CreditLinkNetDevice>>> m_devices;
    std::set<const CreditLinkNetDevice*> m_known;
};

} // namespace ns3

#endif
