/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_TRACE_GOAL_H
#define AI_FABRIC_TRACE_GOAL_H

#include "ns3/workload-trace.h"

#include <string>

namespace ns3
{

/**
 * \ingroup ai-fabric
 * Importer of GOAL schedules (LogGOPSim / Schedgen / ATLAHS text form, doc/workload.md):
 *   num_ranks N
 *   rank R { lX: send 8b to 1 tag 0 cpu 0 nic 0 | recv 8b from -1 tag -1 | calc 100 cpu 1;
 *            lY requires lX; lZ irequires lX }
 * The trace is a LogGOPS schedule (WorkloadTrace::logGops): the replay runs its ops on CPU
 * and NIC streams and matches receives by source and tag at run time.  Ranks without
 * wildcard receives are also paired here (k-th send from s to d with tag t, k-th receive on
 * d for (s, t)), so that a message nobody receives is refused before the run.
 */
class GoalScheduleImporter
{
  public:
    static WorkloadTrace ImportFile(const std::string& path);
    static WorkloadTrace ImportString(const std::string& text, const std::string& sourceName);
};

} // namespace ns3

#endif
