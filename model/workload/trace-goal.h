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
 * Importer of GOAL schedules (LogGOPSim / Schedgen text form):
 *   num_ranks N
 *   rank R { lX: send 8b to 1 tag 0 | recv 8b from 1 tag 0 | calc 100; lY requires lX }
 * Sends and receives match per (source, destination, tag) in program order,
 * as MPI does; each op runs on its own stream so only "requires" orders ops.
 */
class GoalScheduleImporter
{
  public:
    static WorkloadTrace ImportFile(const std::string& path);
    static WorkloadTrace ImportString(const std::string& text, const std::string& sourceName);
};

} // namespace ns3

#endif
