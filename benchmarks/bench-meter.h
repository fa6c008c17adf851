/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What every simulation benchmark reports, measured the same way (scripts/bench reads these
 * counter names): wall and CPU seconds, scheduler events, packet-hops (data packets sent on
 * any credit link: NVLink, InfiniBand, generic), peak resident memory.
 */
#ifndef AI_FABRIC_BENCH_METER_H
#define AI_FABRIC_BENCH_METER_H

#include "ns3/credit-link-net-device.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <sys/resource.h>

namespace ns3
{
namespace bench
{

/// Process high-water mark of resident memory (getrusage; Linux reports KiB).
inline double
PeakRssBytes()
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

inline double
ProcessCpuSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

/// Data packets transmitted by every credit-link device of every node so far.
inline uint64_t
CreditLinkPacketHops()
{
    uint64_t hops = 0;
    for (auto node = NodeList::Begin(); node != NodeList::End(); ++node)
    {
        for (uint32_t i = 0; i < (*node)->GetNDevices(); ++i)
        {
            if (auto dev = DynamicCast<CreditLinkNetDevice>((*node)->GetDevice(i)))
            {
                hops += dev->GetCounters().txPackets;
            }
        }
    }
    return hops;
}

/// Wall, CPU and events between Start() and Stop() (call both around Simulator::Run()).
class RunMeter
{
  public:
    void Start()
    {
        m_events = Simulator::GetEventCount();
        m_cpu = ProcessCpuSeconds();
        m_wall = std::chrono::steady_clock::now();
    }

    void Stop()
    {
        m_wallSeconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - m_wall).count();
        m_cpuSeconds += ProcessCpuSeconds() - m_cpu;
        m_totalEvents += Simulator::GetEventCount() - m_events;
        m_totalHops += CreditLinkPacketHops();
    }

    /// wall_s, cpu_s, events, packet_hops, events_per_hop, wall_ns_per_hop, cpu_ns_per_hop,
    /// peak_rss_bytes (all runs of the benchmark summed; peak over the process).
    void Report(benchmark::State& state) const
    {
        state.counters["wall_s"] = m_wallSeconds;
        state.counters["cpu_s"] = m_cpuSeconds;
        state.counters["events"] = static_cast<double>(m_totalEvents);
        state.counters["packet_hops"] = static_cast<double>(m_totalHops);
        if (m_totalHops > 0)
        {
            const double hops = static_cast<double>(m_totalHops);
            state.counters["events_per_hop"] = static_cast<double>(m_totalEvents) / hops;
            state.counters["wall_ns_per_hop"] = m_wallSeconds * 1e9 / hops;
            state.counters["cpu_ns_per_hop"] = m_cpuSeconds * 1e9 / hops;
        }
        state.counters["peak_rss_bytes"] = PeakRssBytes();
    }

  private:
    std::chrono::steady_clock::time_point m_wall;
    double m_cpu{0};
    uint64_t m_events{0};
    double m_wallSeconds{0};
    double m_cpuSeconds{0};
    uint64_t m_totalEvents{0};
    uint64_t m_totalHops{0};
};

} // namespace bench
} // namespace ns3

#endif
