/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "link-sampler.h"

#include "background-ticker.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("LinkSampler");
NS_OBJECT_ENSURE_REGISTERED(LinkSampler);

TypeId
LinkSampler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::LinkSampler")
                            .SetParent<Object>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<LinkSampler>()
                            .AddAttribute("Interval",
                                          "Simulated time between two samples of every link.",
                                          TimeValue(MicroSeconds(10)),
                                          MakeTimeAccessor(&LinkSampler::m_interval),
                                          MakeTimeChecker(NanoSeconds(1)));
    return tid;
}

LinkSampler::LinkSampler()
    : m_interval(MicroSeconds(10)),
      m_handle(0),
      m_samples(0),
      m_lastSample(-1)
{
}

LinkSampler::~LinkSampler()
{
    if (m_handle)
    {
        BackgroundTicker::Remove(m_handle);
    }
}

void
LinkSampler::DoDispose()
{
    if (m_handle)
    {
        BackgroundTicker::Remove(m_handle);
        m_handle = 0;
    }
    m_db = nullptr;
    m_links.clear();
    Object::DoDispose();
}

void
LinkSampler::AddLink(int64_t linkId, Counter txBytes, const std::string& plane, double rate_bps)
{
    m_links.push_back({linkId, txBytes, plane, rate_bps, 0, 0.0});
}

void
LinkSampler::Start(Ptr<ResultsDatabase> db)
{
    NS_LOG_FUNCTION(this << m_links.size() << m_interval);
    NS_ABORT_MSG_IF(db && db->GetRunId() < 0, "LinkSampler::Start needs a database in a run");
    m_db = db;
    if (!m_handle)
    {
        m_handle = BackgroundTicker::Add(Time(0), [this]() { return Sample(); });
    }
}

void
LinkSampler::Stop()
{
    if (m_handle)
    {
        BackgroundTicker::Remove(m_handle);
        m_handle = 0;
        Sample();
    }
}

Time
LinkSampler::Sample()
{
    const Time now = Simulator::Now();
    if (now == m_lastSample)
    {
        return m_interval;
    }
    const bool write = m_db && m_db->GetRunId() >= 0;
    const double dt_s = m_lastSample.IsStrictlyNegative() ? 0.0 : (now - m_lastSample).GetSeconds();
    m_lastSample = now;
    for (auto& link : m_links)
    {
        const uint64_t bytes = link.txBytes();
        if (dt_s > 0 && link.rate_bps > 0)
        {
            link.peakUtil =
                std::max(link.peakUtil, (bytes - link.lastBytes) * 8.0 / (link.rate_bps * dt_s));
        }
        link.lastBytes = bytes;
        if (write)
        {
            m_db->AddLinkSample(link.linkId, now.GetNanoSeconds(), static_cast<int64_t>(bytes));
            ++m_samples;
        }
    }
    return m_interval;
}

double
LinkSampler::GetPeakUtilisation(const std::string& plane) const
{
    double peak = 0.0;
    for (const auto& link : m_links)
    {
        if (link.plane == plane)
        {
            peak = std::max(peak, link.peakUtil);
        }
    }
    return peak;
}

uint64_t
LinkSampler::GetSampleCount() const
{
    return m_samples;
}

} // namespace ns3
