/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * InfiniBand traffic on a cluster, runnable alone or split over MPI processes
 * (ns-3 built with --enable-mpi, scripts/check-mpi):
 *   mpi-incast --servers=4 --db=incast.db
 *   mpirun -np 4 mpi-incast --servers=4 --ibDelay=100 --db=incast.db   # incast.db.rank0..3
 * --pattern=incast: every GPU on rails 0..rails-1 of the other NVLink domains
 * sends --bytes to rank 0 at once; the sink's HCA link is the bottleneck, so
 * back-pressure (credits) reaches the senders, across process boundaries when
 * split.  --pattern=shift: every GPU on those rails sends to the GPU of the same
 * local index in the next domain (one step of a rail-aligned ring), which
 * spreads the work over all processes (the speed-up case).
 * Each flow is a `flows` row written by its receiver's process; each process
 * writes the `links` rows it transmits on and its `nodes`.  Exits 1 when a
 * flow did not deliver all its bytes (a lossless link loses nothing).
 */
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/distributed-run.h"
#include "ns3/infiniband-transport-plane.h"
#include "ns3/results-database.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/simulator.h"

#include <chrono>
#include <iostream>
#include <map>

using namespace ns3;

namespace
{

struct Flow
{
    uint32_t dst{0};
    uint64_t packets{0};
    uint64_t sent{0};           //!< packets injected (sender's process)
    uint64_t deliveredBytes{0}; //!< at the sink (sink's process)
    Time end;
};

} // namespace

static int
MpiIncast(ScenarioRun& run, int argc, char* argv[])
{
    ClusterHelper cluster;
    uint64_t bytes = 4 * 1024 * 1024;
    uint32_t rails = 2;
    std::string db;
    std::string label = "incast";
    std::string pattern = "incast";
    uint32_t staggerNs = 0;
    CommandLine cmd(__FILE__);
    cluster.AddCommandLineArguments(cmd);
    cmd.AddValue("pattern", "incast (to rank 0) or shift (to the next domain)", pattern);
    cmd.AddValue("bytes", "bytes each sender sends", bytes);
    cmd.AddValue("stagger",
                 "ns between the starts of consecutive senders (0: all at once)",
                 staggerNs);
    cmd.AddValue("rails", "senders: GPUs of local index < rails in the other domains", rails);
    cmd.AddValue("db", "results database (per process: DB.rankK, see scripts/merge-db)", db);
    cmd.AddValue("label", "run label in the results database", label);
    cmd.Parse(argc, argv);
    run.SetDatabase(db); // DB.rankK in a distributed run
    run.SetRun(label, 1, RunParameters());
    cluster.ApplyCommandLine();
    const auto wallStart = std::chrono::steady_clock::now();
    cluster.Build();
    ScenarioRun::SetUpSimulation(cluster);

    Ptr<InfinibandTransportPlane> ib = CreateObject<InfinibandTransportPlane>();
    for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
    {
        ib->AddRank(r, cluster.GetHcaDevice(r));
    }
    const uint32_t payload = ib->GetMaxPayloadBytes();
    std::map<uint32_t, Flow> flows; // by sender rank
    if (pattern != "incast" && pattern != "shift")
    {
        throw InputError::Flag("pattern", "unknown '" + pattern + "'; valid: incast, shift");
    }
    const uint32_t domainGpus = cluster.GetConfig().GetGpusPerDomain();
    for (uint32_t r = 0; r < cluster.GetNRanks(); ++r)
    {
        const bool sender = r % domainGpus < rails &&
                            (pattern == "shift" || cluster.GetDomain(r) != cluster.GetDomain(0));
        if (sender)
        {
            const uint32_t dst = pattern == "incast" ? 0 : (r + domainGpus) % cluster.GetNRanks();
            flows[r].dst = dst;
            flows[r].packets = (bytes + payload - 1) / payload;
        }
    }
    if (flows.empty() || cluster.GetConfig().GetNDomains() < 2)
    {
        throw InputError::Flag(cluster.GetConfig().GetNDomains() < 2 ? "servers" : "rails",
                               "no senders (need 2+ NVLink domains, rails >= 1)");
    }

    // Each sender injects until its HCA refuses, then waits for TxReady (back-pressure).
    auto pump = [&](uint32_t src) {
        Flow& f = flows.at(src);
        while (f.sent < f.packets)
        {
            const uint64_t left = bytes - f.sent * payload;
            const uint32_t size = static_cast<uint32_t>(std::min<uint64_t>(payload, left));
            TransportTag tag;
            tag.messageId = src;
            tag.sequence = static_cast<uint32_t>(f.sent);
            if (!ib->Inject(src, f.dst, size, tag))
            {
                return;
            }
            ++f.sent;
        }
    };
    ib->SetTxReadyCallback(Callback<void, uint32_t>(pump));
    ib->SetDeliverCallback(Callback<void, uint32_t, uint32_t, uint32_t, TransportTag>(
        [&](uint32_t src, uint32_t, uint32_t size, TransportTag) {
            Flow& f = flows.at(src);
            f.deliveredBytes += size;
            if (f.deliveredBytes == bytes)
            {
                f.end = Simulator::Now();
            }
        }));
    uint32_t index = 0;
    for (auto& [src, f] : flows)
    {
        const Time start = NanoSeconds(uint64_t{staggerNs} * index++);
        if (DistributedRun::IsLocal(cluster.GetGpuNode(src)))
        {
            Simulator::ScheduleWithContext(cluster.GetGpuNode(src)->GetId(),
                                           start,
                                           [&pump, src = src]() { pump(src); });
        }
    }
    Simulator::Run();

    // Receivers' processes report their flows.
    auto here = [&](const Flow& f) { return DistributedRun::IsLocal(cluster.GetGpuNode(f.dst)); };
    bool lossless = true;
    if (DistributedRun::GetRank() == 0)
    {
        std::cout << pattern << ": " << flows.size() << " flows of " << bytes << " B, "
                  << DistributedRun::GetSize() << " process(es)\n";
    }
    for (const auto& [src, f] : flows)
    {
        if (here(f))
        {
            std::cout << "flow " << src << " -> " << f.dst << " delivered " << f.deliveredBytes
                      << " B, done at " << (f.deliveredBytes == bytes ? f.end.GetNanoSeconds() : -1)
                      << " ns\n";
            lossless = lossless && f.deliveredBytes == bytes;
        }
    }
    if (!db.empty())
    {
        RunParameters params;
        cluster.GetConfig().AddToRunParameters(params);
        params.Set("bytes", bytes);
        params.Set("rails", rails);
        params.Set("pattern", pattern);
        params.Set("stagger", staggerNs);
        run.SetRun(label, 1, params);
        run.BeginRun();
        Ptr<ResultsDatabase> results = run.GetDatabase();
        cluster.WriteNodes(results);
        cluster.WriteLinks(results);
        for (const auto& [src, f] : flows)
        {
            if (!here(f))
            {
                continue;
            }
            FlowRecord row;
            row.flowId = src;
            row.plane = "infiniband";
            row.srcNode = cluster.GetGpuNode(src)->GetId();
            row.dstNode = cluster.GetGpuNode(f.dst)->GetId();
            row.srcRank = src;
            row.dstRank = f.dst;
            row.bytes = static_cast<int64_t>(bytes);
            row.packets = static_cast<int64_t>(f.packets);
            row.startNs =
                static_cast<int64_t>(staggerNs) * std::distance(flows.begin(), flows.find(src));
            row.endNs = f.deliveredBytes == bytes ? f.end.GetNanoSeconds() : -1;
            results->AddFlow(row);
        }
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
        results->EndRun(lossless ? "complete" : "failed", Simulator::Now(), wall);
    }
    if (!lossless)
    {
        std::cerr << "mpi-incast: a flow did not deliver all its bytes\n";
        return 1;
    }
    return 0;
}

int
main(int argc, char* argv[])
{
    DistributedRun::Enable(&argc, &argv);
    int status = 0;
    {
        ScenarioRun run("mpi-incast");
        status = run.Main([&]() { return MpiIncast(run, argc, argv); });
    }
    DistributedRun::Disable();
    return status;
}
