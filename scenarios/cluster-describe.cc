/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Builds a cluster from the shared cluster flags and prints it, e.g.
 *   cluster-describe --preset=dgx-h100 --servers=4
 *   cluster-describe --preset=gb200-nvl72 --servers=36 --ibRate_gbit_per_s=800 --db=cluster.db
 */
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/results-database.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/simulator.h"

#include <iostream>

using namespace ns3;

static int
ClusterDescribe(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    cluster.SetDescribeFlag(true);
    std::string db;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    cmd.AddValue("db", "results database to write the nodes and links rows to", db);
    cmd.Parse(argc, argv);
    run.SetDatabase(db);
    run.SetRun("describe", 1, RunParameters());
    cluster.ApplyCommandLine();
    cluster.Build();
    ScenarioRun::SetUpSimulation(cluster);
    if (cluster.GetDescribeFlag())
    {
        std::cout << cluster.Describe();
    }
    if (!db.empty())
    {
        RunParameters params;
        cluster.GetConfig().AddToRunParameters(params);
        params.AddGlobalValues();
        run.SetRun("describe", 1, params);
        run.BeginRun();
        cluster.WriteNodes(run.GetDatabase());
        cluster.WriteLinks(run.GetDatabase());
        run.EndRun(true, Simulator::Now());
    }
    return 0;
}

int
main(int argc, char* argv[])
{
    ScenarioRun run("cluster-describe");
    return run.Main([&]() { return ClusterDescribe(run, argc, argv); });
}
