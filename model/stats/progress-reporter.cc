/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "progress-reporter.h"

#include "background-ticker.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <unistd.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ProgressReporter");
NS_OBJECT_ENSURE_REGISTERED(ProgressReporter);

TypeId
ProgressReporter::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ProgressReporter")
                            .SetParent<Object>()
                            .SetGroupName("AiFabric")
                            .AddConstructor<ProgressReporter>()
                            .AddAttribute("WallInterval",
                                          "Wall-clock time between two status lines.",
                                          TimeValue(Seconds(1)),
                                          MakeTimeAccessor(&ProgressReporter::m_wallInterval),
                                          MakeTimeChecker(MilliSeconds(1)))
                            .AddAttribute("Force",
                                          "Report even when stderr is not a terminal.",
                                          BooleanValue(false),
                                          MakeBooleanAccessor(&ProgressReporter::m_force),
                                          MakeBooleanChecker());
    return tid;
}

ProgressReporter::ProgressReporter()
    : m_wallInterval(Seconds(1)),
      m_force(false),
      m_os(&std::cerr),
      m_handle(0),
      m_step(MicroSeconds(1)),
      m_lastEvents(0),
      m_reports(0)
{
}

ProgressReporter::~ProgressReporter()
{
    if (m_handle)
    {
        BackgroundTicker::Remove(m_handle);
    }
}

void
ProgressReporter::DoDispose()
{
    Stop();
    Object::DoDispose();
}

void
ProgressReporter::SetStream(std::ostream* os)
{
    m_os = os;
}

uint32_t
ProgressReporter::GetReportCount() const
{
    return m_reports;
}

void
ProgressReporter::Start(Time expectedEnd)
{
    if (m_handle || !(m_force || isatty(STDERR_FILENO)))
    {
        return;
    }
    m_expectedEnd = expectedEnd;
    m_simStart = Simulator::Now();
    m_wallStart = m_lastPrint = std::chrono::steady_clock::now();
    m_lastEvents = Simulator::GetEventCount();
    m_handle = BackgroundTicker::Add(m_step, [this]() { return Tick(); });
}

void
ProgressReporter::Stop()
{
    if (m_handle)
    {
        BackgroundTicker::Remove(m_handle);
        m_handle = 0;
        Print(true);
    }
}

Time
ProgressReporter::Tick()
{
    const auto now = std::chrono::steady_clock::now();
    const double sinceSeconds = std::chrono::duration<double>(now - m_lastPrint).count();
    const double wanted = m_wallInterval.GetSeconds();
    if (sinceSeconds < wanted)
    {
        // Too soon: look again after twice as much simulated time.
        m_step = m_step * 2;
        return m_step;
    }
    Print(false);
    // Aim the next look at one WallInterval from now, bounded against jitter.
    const double scale = std::max(0.25, std::min(4.0, wanted / sinceSeconds));
    m_step = std::max(NanoSeconds(1),
                      Time::FromDouble(m_step.GetDouble() * scale, Time::GetResolution()));
    return m_step;
}

void
ProgressReporter::Print(bool final)
{
    const auto now = std::chrono::steady_clock::now();
    const double wallSeconds = std::chrono::duration<double>(now - m_lastPrint).count();
    const double totalWall = std::chrono::duration<double>(now - m_wallStart).count();
    const uint64_t events = Simulator::GetEventCount();
    const double eventsPerSecond =
        wallSeconds > 0 ? static_cast<double>(events - m_lastEvents) / wallSeconds : 0.0;
    m_lastPrint = now;
    m_lastEvents = events;
    const Time sim = Simulator::Now();

    std::ostringstream line;
    line << "\r[ai-fabric] sim " << std::fixed << std::setprecision(6) << sim.GetSeconds()
         << " s | " << std::setprecision(2) << eventsPerSecond / 1e6 << " M events/s";
    if (m_expectedEnd > m_simStart && sim > m_simStart)
    {
        const double done =
            (sim - m_simStart).GetDouble() / (m_expectedEnd - m_simStart).GetDouble();
        const double etaSeconds = done < 1.0 ? totalWall * (1.0 - done) / done : 0.0;
        const auto eta = static_cast<int64_t>(etaSeconds);
        char buf[32];
        std::snprintf(buf,
                      sizeof buf,
                      "%02lld:%02lld:%02lld",
                      static_cast<long long>(eta / 3600),
                      static_cast<long long>(eta / 60 % 60),
                      static_cast<long long>(eta % 60));
        line << " | " << std::setprecision(1) << 100.0 * std::min(done, 1.0) << " % | ETA " << buf;
    }
    line << "   ";
    if (final)
    {
        line << "\n";
    }
    *m_os << line.str() << std::flush;
    ++m_reports;
}

} // namespace ns3
