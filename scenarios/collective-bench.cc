/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A simulated nccl-tests: one collective per size on a built cluster, printed in
 * nccl-tests' layout and written to the results database.  all_reduce_perf -b 8 -e 8G -f 2
 * is
 *   collective-bench --collective=allreduce --minBytes=8 --maxBytes=8G --stepFactor=2
 * (-g / -r: --ranks / --root; each size out-of-place then in-place, --inPlace=out|in for one
 * pass; doc/collectives.md has the whole mapping), e.g.
 *   collective-bench --preset=dgx-h100 --servers=2 --minBytes=1M --maxBytes=256M --stepFactor=4
 */
#include "ns3/collective-bench.h"

#include "ns3/cluster-config.h"
#include "ns3/command-line.h"
#include "ns3/distributed-run.h"
#include "ns3/simulator.h"

#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    DistributedRun::Enable(&argc, &argv); // ns-3 MPI when started by mpirun (doc/cluster.md)
    ClusterConfig config;
    CollectiveBenchOptions options;
    CommandLine cmd(__FILE__);
    config.AddCommandLineArguments(cmd);
    options.AddCommandLineArguments(cmd);
    cmd.Parse(argc, argv);
    // Errors go to CollectiveBenchMain so that the database gets its failed run row.
    std::string field;
    const std::string clusterError = config.ApplyCommandLine(&field);
    const int rc = CollectiveBenchMain(config, options, std::cout, std::cerr, clusterError, field);
    Simulator::Destroy();
    return rc;
}
