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

    void AddLink(int64_t linkId, Counter txBytes);
    /// Sample now and then every Interval into \p db (which must be in a run).
    void Start(Ptr<ResultsDatabase> db);
    /// Take a final sample and stop.
    void Stop();
    /// Samples written so far.
    uint64_t GetSampleCount() const;

  protected:
    void DoDispose() override;

  private:
    Time Sample();

    struct Link
    {
        int64_t linkId;
        Counter txBytes;
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
