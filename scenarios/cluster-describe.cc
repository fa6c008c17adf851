/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Builds a cluster from the shared cluster flags and prints it, e.g.
 *   cluster-describe --preset=dgx-h100 --servers=4
 *   cluster-describe --preset=gb200-nvl72 --servers=36 --ibRate=800 --db=cluster.db
 */
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/results-database.h"
#include "ns3/run-parameters.h"
#include "ns3/simulator.h"

#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    ClusterHelper cluster;
    cluster.SetDescribeFlag(true);
    std::string db;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    cmd.AddValue("db", "results database to write the nodes and links rows to", db);
    cmd.Parse(argc, argv);
    cluster.ApplyCommandLine();
    cluster.Build();
    if (cluster.GetDescribeFlag())
    {
        std::cout << cluster.Describe();
    }
    if (!db.empty())
    {
        Ptr<ResultsDatabase> results = CreateObject<ResultsDatabase>();
        results->Open(db);
        RunParameters params;
        cluster.GetConfig().AddToRunParameters(params);
        params.AddGlobalValues();
        results->BeginRun("describe", "cluster-describe", 1, params.ToJson());
        cluster.WriteNodes(results);
        cluster.WriteLinks(results);
        results->EndRun("complete", Simulator::Now());
        results->Close();
    }
    Simulator::Destroy();
    return 0;
}
