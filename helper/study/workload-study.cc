/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/workload-study.h"

#include "ns3/boolean.h"
#include "ns3/collective-engine.h"
#include "ns3/infiniband-net-device.h"
#include "ns3/link-sampler.h"
#include "ns3/names.h"
#include "ns3/nvlink-net-device.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <algorithm>

namespace ns3
{

namespace
{

void
StopWhenComplete(WorkloadReplay* replay, uint32_t, uint32_t, const std::string&, Time)
{
    if (replay->IsComplete())
    {
        // After the credit planes' last flow-control updates (the conservation check
        // expects them home), long before any TCP timer.
        Simulator::Stop(MicroSeconds(100));
    }
}

void
RecordReceived(std::vector<StudyMessage>* out,
               GpuTransport* transport,
               uint64_t,
               uint32_t src,
               uint32_t dst,
               uint64_t bytes,
               uint32_t plane,
               Time duration)
{
    out->push_back(StudyMessage{src,
                                dst,
                                bytes,
                                transport->GetPlane(plane)->GetPlaneName(),
                                duration.GetNanoSeconds()});
}

} // namespace

Ptr<FrontEndTransport>
AttachFrontEnd(ClusterHelper& cluster, Ptr<WorkloadReplay> replay, Ptr<ResultsDatabase> db)
{
    if (!replay->GetTrace().HasFrontEndOps())
    {
        return nullptr;
    }
    Ptr<FrontEndTransport> frontEnd = cluster.InstallFrontEndTransport();
    replay->SetFrontEndTransport(frontEnd);
    if (db)
    {
        frontEnd->SetResultsDatabase(db);
    }
    // The replay owns its trace sinks: a raw pointer, no reference cycle.
    replay->TraceConnectWithoutContext("OpEnd",
                                       MakeBoundCallback(&StopWhenComplete, PeekPointer(replay)));
    return frontEnd;
}

StudyResult
RunWorkloadStudy(ClusterHelper& cluster,
                 WorkloadTrace trace,
                 const std::string& marker,
                 Ptr<ResultsDatabase> db,
                 bool recordMessages)
{
    if (!cluster.IsBuilt())
    {
        cluster.Build();
        ScenarioRun::SetUpSimulation(cluster);
    }
    if (db)
    {
        cluster.WriteNodes(db);
    }
    const uint32_t ranks = cluster.GetNRanks();
    Ptr<GpuTransport> transport = cluster.InstallTransport();
    Ptr<CollectiveEngine> engine = cluster.InstallCollectiveEngine(transport);
    Ptr<WorkloadReplay> replay = CreateObject<WorkloadReplay>();
    replay->SetAttribute("IterationMarker", StringValue(marker));
    replay->SetTrace(std::move(trace));
    replay->SetTransport(transport);
    replay->SetCollectiveEngine(engine);
    Ptr<FrontEndTransport> frontEnd = AttachFrontEnd(cluster, replay, db);
    if (db)
    {
        transport->SetResultsDatabase(db);
        engine->SetResultsDatabase(db);
        replay->SetResultsDatabase(db);
    }
    StudyResult r;
    // The transport owns its trace sinks: a raw pointer, no reference cycle.
    if (recordMessages)
    {
        transport->TraceConnectWithoutContext(
            "MessageReceived",
            MakeBoundCallback(&RecordReceived, &r.received, PeekPointer(transport)));
    }
    replay->Start();
    Simulator::Run();

    r.complete = replay->IsComplete();
    r.stuckReport = replay->GetStuckReport();
    r.simEndNs = Simulator::Now().GetNanoSeconds();
    r.endNs = replay->GetEndTime().GetNanoSeconds();
    r.messages = transport->GetMessagesCompleted();
    if (r.complete)
    {
        r.iterations = replay->GetIterationTimes();
        uint64_t sum = 0;
        for (const Time& t : r.iterations)
        {
            sum += t.GetNanoSeconds();
        }
        r.meanIterationNs = r.iterations.empty() ? 0 : sum / r.iterations.size();
        r.breakdown = replay->GetMeanBreakdown();
    }
    auto count = [&r](const std::string& plane, uint64_t txBytes, uint64_t busyNs) {
        StudyPlaneStats& s = r.planes[plane];
        ++s.links;
        s.txBytes += txBytes;
        s.busyUtil += busyNs; // summed here, divided below
        s.maxBusyUtil = std::max(s.maxBusyUtil, r.simEndNs ? double(busyNs) / r.simEndNs : 0.0);
    };
    // Busy figures of the GPU-side link ends of every credit plane.
    for (const auto& plane : cluster.GetPlaneBuilders())
    {
        for (uint32_t rank = 0; rank < ranks; ++rank)
        {
            for (const auto& c : plane->GetRankLinkCounters(rank))
            {
                count(plane->GetName(), c.txBytes, c.busyTime.GetNanoSeconds());
            }
        }
    }
    if (frontEnd)
    {
        for (const auto& link : cluster.GetFrontEndLinkStats())
        {
            count(link.pcie ? "pcie" : "ethernet", link.txBytes, link.busy_ns);
        }
    }
    for (auto& [plane, s] : r.planes)
    {
        s.busyUtil = r.simEndNs ? s.busyUtil / (double(s.links) * r.simEndNs) : 0.0;
    }
    if (cluster.GetCheckConservation())
    {
        // A stuck replay still has packets in the fabric: check the accounting, not idleness.
        r.conservation = cluster.CheckConservation(r.complete);
        if (!r.conservation.Ok())
        {
            r.complete = false;
            r.stuckReport += r.conservation.Describe();
        }
    }
    if (db)
    {
        cluster.WriteLinks(db);
    }
    return r;
}

void
AddSamplingArguments(CommandLine& cmd, Time& sampleInterval, bool& linkSamples)
{
    cmd.AddValue("sampleInterval",
                 "link utilisation sampling interval (peak utilisation per plane)",
                 sampleInterval);
    cmd.AddValue("linkSamples", "with --db: write every sample to link_samples", linkSamples);
}

StudyResult
RunStudyCase(ScenarioRun& run,
             const ClusterConfig& config,
             WorkloadTrace trace,
             const std::string& marker,
             const std::string& label,
             uint64_t seed,
             RunParameters params,
             Time sampleInterval,
             bool linkSamples,
             std::function<void(const ClusterHelper&)> inspect,
             bool recordMessages)
{
    params.Set("seed", seed);
    params.Set("sampleInterval_ns", sampleInterval.GetNanoSeconds());
    config.AddToRunParameters(params);
    run.SetRun(label, seed, params);
    StudyResult r;
    {
        ClusterHelper cluster(config);
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(false));
        const std::string error = cluster.TryBuild();
        if (!error.empty())
        {
            std::string field = "preset";
            config.Validate(&field); // names the flag when the configuration itself is refused
            throw InputError::Flag(field, label + ": " + error);
        }
        ScenarioRun::SetUpSimulation(cluster);
        run.BeginRun();
        Ptr<ResultsDatabase> db = run.GetDatabase();
        Ptr<LinkSampler> sampler;
        if (sampleInterval.IsStrictlyPositive())
        {
            sampler = cluster.InstallLinkSampler(linkSamples ? db : nullptr, sampleInterval);
        }
        r = RunWorkloadStudy(cluster, std::move(trace), marker, db, recordMessages);
        if (sampler)
        {
            for (auto& [plane, s] : r.planes)
            {
                s.peakUtil = sampler->GetPeakUtilisation(plane);
            }
        }
        run.EndRun(r.complete, NanoSeconds(r.simEndNs));
        if (inspect)
        {
            inspect(cluster); // the built cluster's counters, before it is destroyed
        }
    }
    Simulator::Destroy();
    Names::Clear();
    return r;
}

} // namespace ns3
