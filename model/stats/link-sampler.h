/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_LINK_SAMPLER_H
#define AI_FABRIC_LINK_SAMPLER_H

#include "results-database.h"

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Samples the cumulative tx byte counter of every registered link direction
 * every Interval of simulated time into `link_samples` of the current run.
 *
 * Ticks on the BackgroundTicker, so it stops by itself when nothing but
 * observers is left to simulate; a last sample is taken at that point.
 */
class LinkSampler : public Object
{
  public:
    /// Returns the link direction's cumulative transmitted bytes.
    using Counter = Callback<uint64_t>;

    static TypeId GetTypeId();
    LinkSampler();
    ~LinkSampler() override;

    /// \p rate_bps > 0 also tracks the link's peak utilisation, reported per \p plane.
    void AddLink(int64_t linkId,
                 Counter txBytes,
                 const std::string& plane = "",
                 double rate_bps = 0.0);
    /// Sample now and then every Interval into \p db (which must be in a run); with a null
    /// \p db only the peaks are tracked.
    void Start(Ptr<ResultsDatabase> db);
    /// Take a final sample and stop.
    void Stop();
    /// Samples written so far.
    uint64_t GetSampleCount() const;
    /// Highest utilisation of one link of \p plane over one interval: tx bytes x 8 / (rate x
    /// interval).  Bytes count when a frame starts, so a saturated link can read slightly
    /// above 1.  0 for a plane without links with a rate.
    double GetPeakUtilisation(const std::string& plane) const;

  protected:
    void DoDispose() override;

  private:
    Time Sample();

    struct Link
    {
        int64_t linkId;
        Counter txBytes;
        std::string plane;
        double rate_bps;
        uint64_t lastBytes;
        double peakUtil;
    };

    Time m_interval;
    std::vector<Link> m_links;
    Ptr<ResultsDatabase> m_db;
    uint64_t m_handle;
    uint64_t m_samples;
    Time m_lastSample;
};

} // namespace ns3

#endif
