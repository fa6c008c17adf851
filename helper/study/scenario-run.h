/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_SCENARIO_RUN_H
#define AI_FABRIC_SCENARIO_RUN_H

#include "ns3/input-error.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/results-database.h"
#include "ns3/run-parameters.h"

#include <cstdint>
#include <functional>
#include <iostream>
#include <string>

namespace ns3
{

class ClusterHelper;

/**
 * \ingroup ai-fabric
 * The frame of a scenario's main(), so that bad input ends every scenario the same way:
 * "<scenario>: <message naming file:line and field, or the flag>" on stderr, exit status 1,
 * and, with a results database, a `failed` run row whose params carry `error`, `error_file`,
 * `error_line` and `error_field` — and no other row of that run (rows already written for it
 * are removed, ResultsDatabase::RejectRun).  An error found before the run began still gets
 * its `failed` row (label, seed and params from the last SetRun), so a sweep sees every point.
 *
 *   int main(int argc, char* argv[]) {
 *       ScenarioRun run("tp-pp-dp");
 *       ClusterHelper cluster;
 *       CommandLine cmd(__FILE__);
 *       cluster.AddCommandLineArguments(cmd);
 *       cmd.AddValue("db", "results database", db); ...
 *       cmd.Parse(argc, argv);
 *       run.SetDatabase(db);
 *       return run.Main([&]() {
 *           cluster.ApplyCommandLine();              // throws InputError naming the flag
 *           RunParameters params; ...                // every flag, the cluster config
 *           run.SetRun(label, seed, params);
 *           if (bad) throw InputError::Flag("tp", "must divide the GPUs");
 *           cluster.Build();                         // throws InputError
 *           ScenarioRun::SetUpSimulation(cluster);   // scheduler, random streams
 *           run.BeginRun();
 *           StudyResult r = RunWorkloadStudy(cluster, trace, marker, run.GetDatabase());
 *           run.EndRun(r.complete, NanoSeconds(r.simEndNs));
 *           return r.complete ? 0 : 2;
 *       });
 *   }
 *
 * Main() also closes the database (a run begun but not ended becomes `failed` with its rows,
 * as ResultsDatabase::Close does) and calls Simulator::Destroy().  A ResultsDatabaseError
 * (unwritable or foreign file) exits 1 with its message.
 */
class ScenarioRun
{
  public:
    explicit ScenarioRun(const std::string& scenario, std::ostream& err = std::cerr);
    ScenarioRun(const ScenarioRun&) = delete;
    ScenarioRun& operator=(const ScenarioRun&) = delete;
    ~ScenarioRun();

    /// Results database file; "" (default): none.  Opened when first needed.
    void SetDatabase(const std::string& path);
    /// The open database, or null without one.
    Ptr<ResultsDatabase> GetDatabase();
    /// Label, seed and params of the next BeginRun, and of the failed row of an error before it.
    void SetRun(const std::string& label, uint64_t seed, const RunParameters& params);
    /// Begins the run SetRun described (nothing without a database); returns its id or -1.
    int64_t BeginRun();
    /// Ends the current run `complete` or `failed` (with its rows); nothing without one.
    void EndRun(bool complete, Time simEnd);

    /// Runs \p body and returns its exit status, or 1 after Fail() for an InputError.
    int Main(const std::function<int()>& body);
    /// Reports \p error as described above; returns 1 (the exit status).
    int Fail(const InputError& error);

    /**
     * What every program does between building \p cluster and running the simulation:
     * switches the simulator to PriorityQueueScheduler unless the SchedulerType global names
     * another scheduler than ns-3's default (same event order, faster), and fixes the
     * cluster's random streams from 0 (ClusterHelper::AssignStreams), so that rows depend on
     * the seed and run number only.
     */
    static void SetUpSimulation(ClusterHelper& cluster);

  private:
    std::string m_scenario;
    std::ostream& m_err;
    std::string m_path;
    Ptr<ResultsDatabase> m_db;
    std::string m_label;
    uint64_t m_seed{1};
    RunParameters m_params;
};

} // namespace ns3

#endif
