/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_WORKLOAD_STUDY_H
#define AI_FABRIC_WORKLOAD_STUDY_H

#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/results-database.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/workload-replay.h"
#include "ns3/workload-trace.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

/// GPU-side link ends of one plane (NVLink bundles, HCA ports), transmit direction;
/// "ethernet" and "pcie": every direction of the front-end's Ethernet / PCIe links.
struct StudyPlaneStats
{
    uint32_t links{0};
    uint64_t txBytes{0};
    double busyUtil{0};    ///< sum of busy time / (links x simulated time)
    double peakUtil{0};    ///< busiest link over one sample interval (RunStudyCase with sampling)
    double maxBusyUtil{0}; ///< the busiest link's busy time / simulated time
};

/// A GPU message that arrived: its flow completion time (submission to receipt).
struct StudyMessage
{
    uint32_t srcRank{0};
    uint32_t dstRank{0};
    uint64_t bytes{0};
    std::string plane;
    int64_t completion_ns{0};
};

/// Outcome of one replay on a built cluster.
struct StudyResult
{
    bool complete{false};
    std::string stuckReport; ///< "" when complete
    std::vector<Time> iterations;
    uint64_t meanIterationNs{0};
    ReplayBreakdown breakdown; ///< mean over ranks
    /// "nvlink", "infiniband"; with load/checkpoint ops also "ethernet", "pcie"
    std::map<std::string, StudyPlaneStats> planes;
    uint64_t simEndNs{0};
    uint64_t endNs{0}; ///< the replay's last op end (front-end runs stop 100 us later)
    uint64_t messages{0};
    std::vector<StudyMessage> received; ///< every message, in order of arrival
    /// ClusterHelper::CheckConservation at the end (when the cluster's check is on); a
    /// violation makes the result incomplete, with the report in stuckReport.
    CreditLinkConservationReport conservation;
};

/**
 * \ingroup ai-fabric
 * When \p replay's trace has load or checkpoint ops: gives it the cluster's
 * FrontEndTransport (writing flows to \p db if set) and stops the simulation
 * 100 us after the replay is complete (TCP's timers, e.g. TIME_WAIT's 240 s,
 * would otherwise keep it running).  Call after SetTrace, before Start.
 * \return the transport, or null when the trace has no front-end ops.
 */
Ptr<FrontEndTransport> AttachFrontEnd(ClusterHelper& cluster,
                                      Ptr<WorkloadReplay> replay,
                                      Ptr<ResultsDatabase> db = nullptr);

/**
 * \ingroup ai-fabric
 * Replays \p trace on \p cluster (built here if not yet) until the simulation
 * ends: transport, collective engine with the cluster's domains, WorkloadReplay
 * with IterationMarker \p marker, and the cluster's FrontEndTransport when the
 * trace has load or checkpoint ops, then the cluster's conservation check (unless
 * switched off with SetCheckConservation).  With an open \p db (the caller's BeginRun
 * done) writes nodes, flows, collectives, ops and links rows; the caller ends
 * the run and calls Simulator::Destroy().  With \p recordMessages StudyResult::received
 * holds every message (some 70 bytes each: 3.6 GB for the 50 M messages of a 131,072-GPU
 * allreduce in aggregate); else it stays empty.
 */
StudyResult RunWorkloadStudy(ClusterHelper& cluster,
                             WorkloadTrace trace,
                             const std::string& marker,
                             Ptr<ResultsDatabase> db = nullptr,
                             bool recordMessages = false);

/// --sampleInterval and --linkSamples of the studies, for RunStudyCase's last two arguments.
void AddSamplingArguments(CommandLine& cmd, Time& sampleInterval, bool& linkSamples);

/**
 * \ingroup ai-fabric
 * One case of a study, whole: builds \p config's cluster (IB CRC values off: timing is the
 * same), replays \p trace with RunWorkloadStudy and resets the simulator and Names.  The
 * run row (through \p run: \p label, \p seed, \p params plus the seed, the sampling
 * interval and the cluster's fields) begins once the cluster is built and ends complete or
 * failed; a cluster that cannot be built throws InputError (ScenarioRun::Main reports it).
 * With \p sampleInterval > 0 a LinkSampler gives every plane's peakUtil (and, with
 * \p linkSamples, `link_samples` rows).  \p recordMessages: as RunWorkloadStudy's.
 */
StudyResult RunStudyCase(ScenarioRun& run,
                         const ClusterConfig& config,
                         WorkloadTrace trace,
                         const std::string& marker,
                         const std::string& label,
                         uint64_t seed,
                         RunParameters params,
                         Time sampleInterval = Time(0),
                         bool linkSamples = false,
                         std::function<void(const ClusterHelper&)> inspect = {},
                         bool recordMessages = false);

} // namespace ns3

#endif
