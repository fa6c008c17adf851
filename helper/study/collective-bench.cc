/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/collective-bench.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/command-line.h"
#include "ns3/infiniband-switch.h"
#include "ns3/log.h"
#include "ns3/nvswitch-core.h"
#include "ns3/progress-reporter.h"
#include "ns3/results-database.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/run-parameters.h"
#include "ns3/scenario-run.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveBench");

namespace
{
// Digits only, no sign, no overflow.
bool
ParseUnsigned(const std::string& text, uint64_t& value)
{
    if (text.empty() || text.size() > 19)
    {
        return false;
    }
    value = 0;
    for (char c : text)
    {
        if (!std::isdigit(static_cast<unsigned char>(c)))
        {
            return false;
        }
        value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    return true;
}
} // namespace

void
CollectiveBenchOptions::AddCommandLineArguments(CommandLine& cmd)
{
    cmd.AddValue("collective",
                 "allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv",
                 collective);
    cmd.AddValue("algorithm",
                 "auto, ring, tree, halvingdoubling, direct, nvls, hierarchical",
                 algorithm);
    cmd.AddValue("ranks", "group in ring order, e.g. 0-7 or 0,8,16 (default: every GPU)", ranks);
    cmd.AddValue("minBytes", "smallest size (nccl-tests -b; K/M/G suffixes)", minBytes);
    cmd.AddValue("maxBytes", "largest size (nccl-tests -e; K/M/G suffixes)", maxBytes);
    cmd.AddValue("stepFactor", "size multiplier between rows (nccl-tests -f)", stepFactor);
    cmd.AddValue("root", "root rank of broadcast / reduce (nccl-tests -r)", root);
    cmd.AddValue("db", "results database to append the run to", db);
    cmd.AddValue("label", "label of the run in the results database", label);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("describe", "print the built cluster first", describe);
    cmd.AddValue("nvlinkGranularity",
                 "NVLink payload bytes per simulated packet (0: the device default, 4096)",
                 nvlinkGranularityBytes);
    cmd.AddValue("ibCrcs",
                 "compute InfiniBand ICRC/VCRC values (same wire bytes either way; slower)",
                 ibCrcs);
}

std::string
CollectiveBenchParseSize(const std::string& text, uint64_t& bytes)
{
    std::string digits = text;
    uint64_t scale = 1;
    if (!digits.empty())
    {
        switch (std::toupper(static_cast<unsigned char>(digits.back())))
        {
        case 'K':
            scale = 1ULL << 10;
            break;
        case 'M':
            scale = 1ULL << 20;
            break;
        case 'G':
            scale = 1ULL << 30;
            break;
        default:
            break;
        }
        if (scale != 1)
        {
            digits.pop_back();
        }
    }
    uint64_t value = 0;
    if (!ParseUnsigned(digits, value) || value > std::numeric_limits<uint64_t>::max() / scale)
    {
        return "size \"" + text + "\" is not a byte count (digits with an optional K, M or G)";
    }
    bytes = value * scale;
    return "";
}

std::string
CollectiveBenchParseRanks(const std::string& text, std::vector<uint32_t>& ranks)
{
    ranks.clear();
    std::size_t pos = 0;
    while (pos <= text.size())
    {
        const std::size_t comma = std::min(text.find(',', pos), text.size());
        const std::string item = text.substr(pos, comma - pos);
        const std::size_t dash = item.find('-');
        uint64_t first = 0;
        uint64_t last = 0;
        const bool ok = dash == std::string::npos
                            ? ParseUnsigned(item, first) && (last = first, true)
                            : ParseUnsigned(item.substr(0, dash), first) &&
                                  ParseUnsigned(item.substr(dash + 1), last);
        if (!ok || last > std::numeric_limits<uint32_t>::max())
        {
            return "rank list \"" + text + "\": \"" + item +
                   "\" is not a rank or a range a-b (e.g. 0-7 or 0,2,4-6)";
        }
        if (first > last)
        {
            return "rank list \"" + text + "\": empty range " + item;
        }
        for (uint64_t r = first; r <= last; ++r)
        {
            ranks.push_back(static_cast<uint32_t>(r));
        }
        pos = comma + 1;
    }
    return "";
}

std::vector<uint64_t>
CollectiveBenchSizes(uint64_t minBytes, uint64_t maxBytes, uint64_t factor)
{
    std::vector<uint64_t> sizes;
    for (uint64_t s = minBytes; s <= maxBytes && s > 0; s *= factor)
    {
        sizes.push_back(s);
        if (s > maxBytes / factor)
        {
            break;
        }
    }
    return sizes;
}

std::string
CollectiveBenchValidate(const CollectiveBenchOptions& o,
                        uint32_t clusterRanks,
                        std::vector<uint32_t>& ranks,
                        std::vector<uint64_t>& sizes)
{
    CollectiveKind kind;
    if (!ParseCollectiveKind(o.collective, &kind))
    {
        return "unknown collective \"" + o.collective + "\" (valid: " + CollectiveKindNames() + ")";
    }
    CollectiveAlgorithm algorithm;
    if (!ParseCollectiveAlgorithm(o.algorithm, &algorithm))
    {
        return "unknown algorithm \"" + o.algorithm + "\" (valid: " + CollectiveAlgorithmNames() +
               ")";
    }
    uint64_t minBytes = 0;
    uint64_t maxBytes = 0;
    std::string e = CollectiveBenchParseSize(o.minBytes, minBytes);
    if (e.empty())
    {
        e = CollectiveBenchParseSize(o.maxBytes, maxBytes);
    }
    if (!e.empty())
    {
        return e;
    }
    if (minBytes == 0)
    {
        return "--minBytes must be at least 1";
    }
    if (minBytes > maxBytes)
    {
        return "--minBytes=" + std::to_string(minBytes) +
               " is larger than --maxBytes=" + std::to_string(maxBytes);
    }
    if (o.stepFactor < 2)
    {
        return "--stepFactor must be at least 2 (got " + std::to_string(o.stepFactor) + ")";
    }
    if (o.ranks.empty())
    {
        ranks.clear();
        for (uint32_t r = 0; r < clusterRanks; ++r)
        {
            ranks.push_back(r);
        }
    }
    else
    {
        e = CollectiveBenchParseRanks(o.ranks, ranks);
        if (!e.empty())
        {
            return e;
        }
    }
    std::set<uint32_t> seen;
    for (uint32_t r : ranks)
    {
        if (r >= clusterRanks)
        {
            return "rank " + std::to_string(r) + " of --ranks=" + o.ranks +
                   " is outside the cluster (ranks 0-" + std::to_string(clusterRanks - 1) + ")";
        }
        if (!seen.insert(r).second)
        {
            return "rank " + std::to_string(r) + " appears twice in --ranks=" + o.ranks;
        }
    }
    if (CollectiveHasRoot(kind) && !seen.count(o.root))
    {
        return "--root=" + std::to_string(o.root) + " is not in the group";
    }
    sizes = CollectiveBenchSizes(minBytes, maxBytes, o.stepFactor);
    return "";
}

std::string
CollectiveBenchCheckFabric(const CollectiveBenchOptions& o,
                           const std::vector<uint32_t>& ranks,
                           const std::vector<uint64_t>& sizes,
                           Ptr<CollectiveEngine> engine)
{
    CollectiveSpec spec;
    spec.kind = o.collective;
    spec.algorithm = o.algorithm;
    spec.ranks = ranks;
    spec.root = o.root;
    // Reachability depends on the pairs a schedule uses, not on its size once every piece
    // is non-empty: build one schedule per resolved algorithm, the largest up to 64 MiB.
    std::map<std::string, uint64_t> probe;
    try
    {
        for (uint64_t bytes : sizes)
        {
            spec.bytes = bytes;
            const std::string algorithm = engine->ResolveAlgorithm(spec);
            auto it = probe.find(algorithm);
            if (it == probe.end() || bytes <= (64ULL << 20))
            {
                probe[algorithm] = bytes;
            }
        }
        for (const auto& [algorithm, bytes] : probe)
        {
            if (algorithm != "nvls")
            {
                spec.bytes = bytes;
                spec.algorithm = algorithm;
                engine->BuildSchedule(spec);
            }
        }
    }
    catch (const CollectiveError& e)
    {
        return e.what();
    }
    return "";
}

std::vector<CollectiveBenchRow>
CollectiveBenchRun(const CollectiveBenchOptions& o,
                   const std::vector<uint32_t>& ranks,
                   const std::vector<uint64_t>& sizes,
                   Ptr<CollectiveEngine> engine,
                   std::ostream* out)
{
    const std::string kind = CollectiveEngine::Canonical(o.collective);
    CollectiveKind parsedKind = CollectiveKind::AllReduce;
    ParseCollectiveKind(kind, &parsedKind); // CollectiveBenchValidate refused anything else
    const bool hasRoot = CollectiveHasRoot(parsedKind);
    std::vector<CollectiveBenchRow> rows;
    for (uint64_t bytes : sizes)
    {
        CollectiveSpec spec;
        spec.kind = kind;
        spec.algorithm = o.algorithm;
        spec.ranks = ranks;
        spec.bytes = bytes;
        spec.root = o.root;
        bool done = false;
        CollectiveResult result;
        engine->Start(spec,
                      CollectiveEngine::DoneCallback([&done, &result](const CollectiveResult& r) {
                          result = r;
                          done = true;
                          // Periodic events (watchdogs, progress) would keep Run going.  Stop
                          // after the events already due now, so the next size starts after
                          // them however this event was ordered among them (a distributed run
                          // learns of the end through a notification inserted later).
                          Simulator::Stop(Time(0));
                      }));
        if (!done)
        {
            Simulator::Run();
        }
        if (!done)
        {
            throw CollectiveError(kind + " of " + std::to_string(bytes) +
                                  " B did not finish: the simulation ran out of events");
        }
        CollectiveBenchRow row;
        row.sizeBytes = bytes;
        row.count = bytes / 4;
        row.root = hasRoot ? static_cast<int64_t>(o.root) : -1;
        row.algorithm = result.algorithm;
        row.time_us = (result.end - result.start).GetSeconds() * 1e6;
        row.algbw_gbyte_per_s = result.algbw_gbyte_per_s;
        row.busbw_gbyte_per_s = result.busbw_gbyte_per_s;
        NS_LOG_INFO(bytes << " B " << row.algorithm << " " << row.time_us << " us");
        rows.push_back(row);
        if (out)
        {
            *out << CollectiveBenchFormatRow(row) << std::flush;
        }
    }
    return rows;
}

std::string
CollectiveBenchHeader()
{
    char line[256];
    std::string out;
    std::snprintf(line,
                  sizeof(line),
                  "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %s\n",
                  "size",
                  "count",
                  "type",
                  "redop",
                  "root",
                  "time",
                  "algbw",
                  "busbw",
                  "algo");
    out += line;
    std::snprintf(line,
                  sizeof(line),
                  "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s\n",
                  "(B)",
                  "(elements)",
                  "",
                  "",
                  "",
                  "(us)",
                  "(GB/s)",
                  "(GB/s)");
    out += line;
    return out;
}

std::string
CollectiveBenchFormatRow(const CollectiveBenchRow& row)
{
    // nccl-tests' precision: time with 2, 1 or 0 decimals as it grows.
    char time[32];
    const char* timeFormat =
        row.time_us >= 10000.0 ? "%7.0f" : (row.time_us >= 100.0 ? "%7.1f" : "%7.2f");
    std::snprintf(time, sizeof(time), timeFormat, row.time_us);
    char line[256];
    std::snprintf(line,
                  sizeof(line),
                  "%12llu  %12llu  %8s  %6s  %6lld  %7s  %6.2f  %6.2f  %s\n",
                  static_cast<unsigned long long>(row.sizeBytes),
                  static_cast<unsigned long long>(row.count),
                  "float",
                  "sum",
                  static_cast<long long>(row.root),
                  time,
                  row.algbw_gbyte_per_s,
                  row.busbw_gbyte_per_s,
                  row.algorithm.c_str());
    return line;
}

double
CollectiveBenchAverageBusBw(const std::vector<CollectiveBenchRow>& rows)
{
    double sum = 0;
    for (const auto& r : rows)
    {
        sum += r.busbw_gbyte_per_s;
    }
    return rows.empty() ? 0.0 : sum / rows.size();
}

int
CollectiveBenchMain(const ClusterConfig& config,
                    const CollectiveBenchOptions& o,
                    std::ostream& out,
                    std::ostream& err,
                    const std::string& clusterError,
                    const std::string& clusterErrorField)
{
    RngSeedManager::SetSeed(static_cast<uint32_t>(std::max<uint64_t>(o.seed, 1)));
    RunParameters params;
    config.AddToRunParameters(params);
    params.Set("collective", o.collective);
    params.Set("algorithm", o.algorithm);
    params.Set("ranks", o.ranks.empty() ? std::string("all") : o.ranks);
    params.Set("minBytes", o.minBytes);
    params.Set("maxBytes", o.maxBytes);
    params.Set("stepFactor", o.stepFactor);
    params.Set("root", o.root);
    params.Set("seed", o.seed);
    params.Set("nvlinkGranularity", o.nvlinkGranularityBytes);
    params.Set("ibCrcs", o.ibCrcs);
    params.AddGlobalValues();

    ScenarioRun run("collective-bench", err);
    run.SetDatabase(o.db);
    run.SetRun(o.label, o.seed, params);
    return run.Main([&]() {
        // Every refusal below is bad input: flags that do not fit the cluster or each other.
        auto check =
            [](const std::string& from, const std::string& message, const std::string& field = "") {
                if (!message.empty())
                {
                    throw InputError(from, 0, field, message);
                }
            };
        check("command line", clusterError, clusterErrorField);
        std::string field;
        const std::string invalid = config.Validate(&field);
        check("command line", invalid, field);
        std::vector<uint32_t> ranks;
        std::vector<uint64_t> sizes;
        check("command line", CollectiveBenchValidate(o, config.GetNRanks(), ranks, sizes));

        ClusterHelper cluster(config);
        if (o.nvlinkGranularityBytes > 0)
        {
            cluster.SetNvLinkDeviceAttribute("Granularity",
                                             UintegerValue(o.nvlinkGranularityBytes));
        }
        cluster.SetIbDeviceAttribute("ComputeCrcs", BooleanValue(o.ibCrcs));
        check("cluster", cluster.TryBuild());
        ScenarioRun::SetUpSimulation(cluster);
        Ptr<GpuTransport> transport = cluster.InstallTransport("world");
        Ptr<CollectiveEngine> engine = cluster.InstallCollectiveEngine(transport);
        check("command line", CollectiveBenchCheckFabric(o, ranks, sizes, engine));
        run.BeginRun();
        Ptr<ResultsDatabase> db = run.GetDatabase();
        if (db)
        {
            transport->SetResultsDatabase(db);
            engine->SetResultsDatabase(db);
        }

        if (o.describe)
        {
            out << cluster.Describe();
        }
        out << "# collective-bench: " << CollectiveEngine::Canonical(o.collective) << ", algorithm "
            << CollectiveEngine::Canonical(o.algorithm) << ", " << ranks.size() << " of "
            << cluster.GetNRanks() << " GPUs (" << config.preset << " x " << config.servers
            << "), one simulated iteration per size, sizes run one after the other\n"
            << "#\n"
            << CollectiveBenchHeader();
        out.flush();

        Ptr<ProgressReporter> progress = CreateObject<ProgressReporter>();
        progress->Start();
        std::vector<CollectiveBenchRow> rows;
        try
        {
            rows = CollectiveBenchRun(o, ranks, sizes, engine, &out);
        }
        catch (const CollectiveError& x)
        {
            progress->Stop();
            check("command line", x.what());
        }
        progress->Stop();
        char avg[64];
        std::snprintf(avg, sizeof(avg), "%g", CollectiveBenchAverageBusBw(rows));
        out << "# Avg bus bandwidth    : " << avg << " \n#\n";

        if (db)
        {
            cluster.WriteNodes(db);
            cluster.WriteLinks(db);
        }
        run.EndRun(true, Simulator::Now());
        return 0;
    });
}

namespace
{

Ptr<TransportPlane>
PlaneNamed(Ptr<GpuTransport> transport, const std::string& name)
{
    for (uint32_t i = 0; i < transport->GetNPlanes(); ++i)
    {
        if (transport->GetPlane(i)->GetPlaneName() == name)
        {
            return transport->GetPlane(i);
        }
    }
    NS_ABORT_MSG("collective-bench: the transport has no " << name << " plane");
    return nullptr;
}

} // namespace

CollectiveCostModel
CollectiveBenchNvLinkModel(ClusterHelper& cluster, Ptr<GpuTransport> transport, uint32_t rank)
{
    const auto devices = cluster.GetNvLinkDevices(rank);
    NS_ABORT_MSG_IF(devices.empty(), "collective-bench: rank " << rank << " has no NVLink");
    uint64_t bps = 0;
    for (const auto& d : devices)
    {
        bps += d->GetClock().GetSignallingRate().GetBitRate();
    }
    TimeValue cable;
    devices.front()->GetChannel()->GetAttribute("Delay", cable);
    TimeValue sw;
    const Ptr<NvSwitch> nvSwitch = cluster.GetNvLinkHelper(cluster.GetDomain(rank)).GetSwitch(0);
    nvSwitch->GetAttribute("TraversalLatency", sw);
    Ptr<TransportPlane> plane = PlaneNamed(transport, "nvlink");
    return CollectiveCostModel::FromLink(DataRate(bps),
                                         devices.front()->GetClock().GetEncodingEfficiency(),
                                         plane->GetMaxPayloadBytes(),
                                         plane->GetPacketOverheadBytes(),
                                         plane->GetSoftwareLatency(),
                                         2,
                                         cable.Get(),
                                         sw.Get(),
                                         nvSwitch->GetCutThroughBytes());
}

CollectiveCostModel
CollectiveBenchIbModel(ClusterHelper& cluster,
                       Ptr<GpuTransport> transport,
                       uint32_t src,
                       uint32_t dst)
{
    Ptr<InfinibandNetDevice> hca = cluster.GetHcaDevice(src);
    std::vector<InfinibandDirectedLink> path;
    const std::string error = cluster.GetSubnetManager()->TracePath(cluster.GetHcaTopologyNode(src),
                                                                    1,
                                                                    cluster.GetHcaLid(dst),
                                                                    path);
    NS_ABORT_MSG_UNLESS(error.empty(), "collective-bench: " << error);
    TimeValue cable;
    hca->GetChannel()->GetAttribute("Delay", cable);
    TimeValue sw;
    const Ptr<InfinibandSwitch> ibSwitch =
        cluster.GetIbSwitchNodes().Get(0)->GetObject<InfinibandSwitch>();
    ibSwitch->GetAttribute("PortToPortLatency", sw);
    Ptr<TransportPlane> plane = PlaneNamed(transport, "infiniband");
    return CollectiveCostModel::FromLink(hca->GetClock().GetSignallingRate(),
                                         hca->GetClock().GetEncodingEfficiency(),
                                         plane->GetMaxPayloadBytes(),
                                         plane->GetPacketOverheadBytes(),
                                         plane->GetSoftwareLatency(),
                                         path.size(),
                                         cable.Get(),
                                         sw.Get(),
                                         ibSwitch->GetCutThroughBytes());
}

} // namespace ns3
