/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_PROGRESS_REPORTER_H
#define AI_FABRIC_PROGRESS_REPORTER_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <chrono>
#include <cstdint>
#include <ostream>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * One status line on stderr for long simulations: simulated time, events per
 * wall-clock second, and with an expected end time percent done and ETA.
 *
 * Off unless stderr is a terminal (or Force is set), so sweeps and tests log
 * nothing.  Unlike ns-3's ShowProgress it ticks on the BackgroundTicker and
 * so needs no Simulator::Stop to end the run.  Like ShowProgress it adapts
 * its step of simulated time to print about once every WallInterval.
 */
class ProgressReporter : public Object
{
  public:
    static TypeId GetTypeId();
    ProgressReporter();
    ~ProgressReporter() override;

    /// Start reporting; \p expectedEnd > 0 enables percent and ETA.
    void Start(Time expectedEnd = Time(0));
    /// Print a final line and stop.
    void Stop();
    /// Stream to write to instead of std::cerr (tests).
    void SetStream(std::ostream* os);
    /// Lines printed so far.
    uint32_t GetReportCount() const;

  protected:
    void DoDispose() override;

  private:
    Time Tick();
    void Print(bool final);

    Time m_wallInterval;
    bool m_force;
    std::ostream* m_os;
    uint64_t m_handle;
    Time m_step;
    Time m_expectedEnd;
    Time m_simStart;
    std::chrono::steady_clock::time_point m_wallStart;
    std::chrono::steady_clock::time_point m_lastPrint;
    uint64_t m_lastEvents;
    uint32_t m_reports;
};

} // namespace ns3

#endif
