/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/collective-bench.h"

#include "ns3/boolean.h"
#include "ns3/cluster-helper.h"
#include "ns3/collective-bandwidth.h"
#include "ns3/command-line.h"
#include "ns3/infiniband-switch.h"
#include "ns3/log.h"
#include "ns3/nvlink-cluster-plane.h"
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
                 "auto, ring, tree, halvingdoubling, direct, nvls, hierarchical, nvlstree",
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
    cmd.AddValue("inPlace",
                 "passes per size: both (out-of-place, then in-place, as nccl-tests), out, in",
                 inPlace);
    cmd.AddValue("gpusPerThread",
                 "GPUs one host thread drives, issuing their launches in turn (nccl-tests -g)",
                 gpusPerThread);
    cmd.AddValue("tunerTable",
                 "print the tuner's latency/bandwidth table for the group first, in NCCL's "
                 "layout (NCCL_DEBUG=INFO)",
                 tunerTable);
    cmd.AddValue("iters",
                 "iterations of the timing loop each row stands for (nccl-tests -n)",
                 iters);
}

std::string
CollectiveBenchParsePasses(const std::string& text, bool& outOfPlace, bool& inPlace)
{
    outOfPlace = text == "both" || text == "out";
    inPlace = text == "both" || text == "in";
    if (!outOfPlace && !inPlace)
    {
        return "--inPlace=" + text + " is not both, out or in";
    }
    return "";
}

uint64_t
CollectiveBenchCount(CollectiveKind kind, uint64_t sizeBytes, uint32_t numRanks)
{
    const uint64_t elements = sizeBytes / 4;
    const bool perRank = kind == CollectiveKind::AllGather ||
                         kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::AllToAll;
    return perRank && numRanks > 0 ? elements / numRanks : elements;
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
    if (o.iters < 1)
    {
        return "--iters must be at least 1";
    }
    bool outOfPlace = false;
    bool inPlace = false;
    e = CollectiveBenchParsePasses(o.inPlace, outOfPlace, inPlace);
    if (!e.empty())
    {
        return e;
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
    if (o.gpusPerThread < 1 || o.gpusPerThread > ranks.size())
    {
        return "--gpusPerThread=" + std::to_string(o.gpusPerThread) + " is not 1 to the " +
               std::to_string(ranks.size()) + " GPUs of the group";
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

namespace
{

// One collective on \p engine, run to its end in the current simulation.
CollectiveResult
RunOne(Ptr<CollectiveEngine> engine, const CollectiveSpec& spec)
{
    bool done = false;
    CollectiveResult result;
    engine->Start(spec, CollectiveEngine::DoneCallback([&done, &result](const CollectiveResult& r) {
                      result = r;
                      done = true;
                      // Periodic events (watchdogs, progress) would keep Run going.  Stop
                      // after the events already due now, so the next call starts after
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
        throw CollectiveError(spec.kind + " of " + std::to_string(spec.bytes) +
                              " B did not finish: the simulation ran out of events");
    }
    return result;
}

CollectiveBenchPass
PassOf(const CollectiveResult& result)
{
    CollectiveBenchPass pass;
    pass.ran = true;
    pass.algorithm = result.algorithm;
    pass.protocol = result.protocol;
    pass.channels = result.channels;
    // What nccl-tests prints: the time per iteration of its loop, the figures from it.
    const int64_t loopNs = result.loopTime.GetNanoSeconds();
    pass.time_us = result.loopTime.GetSeconds() * 1e6;
    pass.algbw_gbyte_per_s = CollectiveAlgBw_gbyte_per_s(result.bytes, loopNs);
    pass.busbw_gbyte_per_s =
        CollectiveBusBw_gbyte_per_s(result.kind, result.numRanks, result.bytes, loopNs);
    return pass;
}

} // namespace

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
    bool runOutOfPlace = true;
    bool runInPlace = true;
    CollectiveBenchParsePasses(o.inPlace, runOutOfPlace, runInPlace); // likewise
    const bool hasRoot = CollectiveHasRoot(parsedKind);
    const bool reduces = parsedKind == CollectiveKind::AllReduce ||
                         parsedKind == CollectiveKind::ReduceScatter ||
                         parsedKind == CollectiveKind::Reduce ||
                         parsedKind == CollectiveKind::SendRecv; // nccl-tests passes -o to these
    std::vector<CollectiveBenchRow> rows;
    for (uint64_t bytes : sizes)
    {
        CollectiveSpec spec;
        spec.kind = kind;
        spec.algorithm = o.algorithm;
        spec.ranks = ranks;
        spec.bytes = bytes;
        spec.root = o.root;
        spec.loopGpusPerThread = o.gpusPerThread;
        spec.loopIterations = o.iters;
        CollectiveBenchRow row;
        row.sizeBytes = bytes;
        row.count = CollectiveBenchCount(parsedKind, bytes, ranks.size());
        row.redop = reduces ? "sum" : "none";
        row.root = hasRoot ? static_cast<int64_t>(o.root) : -1;
        if (runOutOfPlace)
        {
            spec.inPlace = false;
            row.outOfPlace = PassOf(RunOne(engine, spec));
        }
        if (runInPlace)
        {
            spec.inPlace = true;
            row.inPlace = PassOf(RunOne(engine, spec));
        }
        NS_LOG_INFO(bytes << " B " << row.outOfPlace.time_us << " us out-of-place, "
                          << row.inPlace.time_us << " us in-place");
        rows.push_back(row);
        if (out)
        {
            *out << CollectiveBenchFormatRow(row) << std::flush;
        }
    }
    return rows;
}

namespace
{

// nccl-tests' number format: the most decimals (2, 1, 0) that fit \p width, else exponent.
std::string
Figure(double value, int width)
{
    char text[32];
    for (int decimals = 2; decimals >= 0; --decimals)
    {
        if (std::snprintf(text, sizeof(text), "%*.*f", width, decimals, value) <= width)
        {
            return text;
        }
    }
    std::snprintf(text, sizeof(text), width >= 7 ? "%*.1e" : "%*.0e", width, value);
    return text;
}

// One pass's "time algbw busbw #wrong", or blanks of that width for a pass that did not run.
std::string
PassColumns(const CollectiveBenchPass& pass)
{
    if (!pass.ran)
    {
        return std::string(32, ' ');
    }
    return "  " + Figure(pass.time_us, 7) + "  " + Figure(pass.algbw_gbyte_per_s, 6) + "  " +
           Figure(pass.busbw_gbyte_per_s, 6) + "    N/A";
}

// What the passes that ran say about one property: "ring", or "ring/tree" when they differ.
std::string
RanWith(const CollectiveBenchRow& row, const std::string CollectiveBenchPass::*property)
{
    if (!row.outOfPlace.ran || !row.inPlace.ran)
    {
        return row.outOfPlace.ran ? row.outOfPlace.*property : row.inPlace.*property;
    }
    const std::string& a = row.outOfPlace.*property;
    const std::string& b = row.inPlace.*property;
    return a == b ? a : a + "/" + b;
}

} // namespace

std::string
CollectiveBenchHeader()
{
    // nccl-tests' widths: # size(10) count(12) type(8) redop(6) root(6), then per pass
    // time(7) algbw(6) busbw(6) #wrong(6); a row's pass is one character narrower ("    N/A"),
    // so the appended columns start two characters earlier here to line up with the rows.
    char line[320];
    std::string out = "#\n";
    std::snprintf(line,
                  sizeof(line),
                  "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
                  "in-place\n",
                  "",
                  "",
                  "",
                  "",
                  "");
    out += line;
    std::snprintf(line,
                  sizeof(line),
                  "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s%12s  %8s  "
                  "%8s\n",
                  "size",
                  "count",
                  "type",
                  "redop",
                  "root",
                  "time",
                  "algbw",
                  "busbw",
                  "#wrong",
                  "time",
                  "algbw",
                  "busbw",
                  "#wrong",
                  "algorithm",
                  "protocol",
                  "channels");
    out += line;
    std::snprintf(line,
                  sizeof(line),
                  "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
                  "(B)",
                  "(elements)",
                  "",
                  "",
                  "",
                  "(us)",
                  "(GB/s)",
                  "(GB/s)",
                  "",
                  "(us)",
                  "(GB/s)",
                  "(GB/s)",
                  "");
    out += line;
    return out;
}

std::string
CollectiveBenchFormatRow(const CollectiveBenchRow& row)
{
    const CollectiveBenchPass& ran = row.outOfPlace.ran ? row.outOfPlace : row.inPlace;
    std::string channels = std::to_string(ran.channels);
    if (row.outOfPlace.ran && row.inPlace.ran && row.outOfPlace.channels != row.inPlace.channels)
    {
        channels += "/" + std::to_string(row.inPlace.channels);
    }
    char head[128];
    std::snprintf(head,
                  sizeof(head),
                  "%12llu  %12llu  %8s  %6s  %6lld",
                  static_cast<unsigned long long>(row.sizeBytes),
                  static_cast<unsigned long long>(row.count),
                  "float",
                  row.redop.c_str(),
                  static_cast<long long>(row.root));
    char tail[128];
    std::snprintf(tail,
                  sizeof(tail),
                  "  %12s  %8s  %8s\n",
                  RanWith(row, &CollectiveBenchPass::algorithm).c_str(),
                  RanWith(row, &CollectiveBenchPass::protocol).c_str(),
                  channels.c_str());
    return head + PassColumns(row.outOfPlace) + PassColumns(row.inPlace) + tail;
}

double
CollectiveBenchAverageBusBw(const std::vector<CollectiveBenchRow>& rows)
{
    double sum = 0;
    uint64_t passes = 0;
    for (const auto& r : rows)
    {
        for (const CollectiveBenchPass* p : {&r.outOfPlace, &r.inPlace})
        {
            if (p->ran)
            {
                sum += p->busbw_gbyte_per_s;
                ++passes;
            }
        }
    }
    return passes == 0 ? 0.0 : sum / passes;
}

std::string
CollectiveBenchFooter(const std::vector<CollectiveBenchRow>& rows)
{
    // No data is moved, so no value can be out of bounds: nccl-tests' "0 OK".
    char line[128];
    std::string out;
    std::snprintf(line, sizeof(line), "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
    out += line;
    std::snprintf(line,
                  sizeof(line),
                  "# %-20s : %g \n",
                  "Avg bus bandwidth",
                  CollectiveBenchAverageBusBw(rows));
    out += line;
    return out + "#\n";
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
    params.Set("inPlace", o.inPlace);
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
            << "), one simulated iteration per pass, sizes run one after the other\n"
            << "# minBytes " << sizes.front() << " maxBytes " << sizes.back()
            << " step: " << o.stepFactor << "(factor) warmup iters: 0 iters: " << o.iters
            << " (one simulated) gpus per thread: " << o.gpusPerThread
            << " validation: 0 in-place: " << o.inPlace << "\n";
        if (o.tunerTable)
        {
            const std::string table = engine->FormatTunerTable(ranks, "# ");
            out << (table.empty() ? "# tuner: none (the ideal endpoint: the links alone)\n"
                                  : "# tuner (latency us / bandwidth GB/s):\n" + table)
                << "#\n";
        }
        out << CollectiveBenchHeader();
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
        out << CollectiveBenchFooter(rows);

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
    Ptr<TransportPlane> nvlink = PlaneNamed(transport, "nvlink");
    if (cluster.GetNvLinkPlane().IsDescribedOnly())
    {
        // A flow-level plane without devices: the same figures from its domain's description.
        const NvLinkFlowDomain d =
            cluster.GetNvLinkPlane().GetFlowDomain(cluster.GetConfig(), cluster.GetDomain(rank));
        uint64_t bps = 0;
        for (uint32_t links : d.GetBundleLinks(cluster.GetNvLinkGpuId(rank)))
        {
            bps += d.GetSignalling_bps(links);
        }
        return CollectiveCostModel::FromLink(DataRate(bps),
                                             d.encodingEfficiency,
                                             nvlink->GetMaxPayloadBytes(),
                                             nvlink->GetPacketOverheadBytes(),
                                             nvlink->GetSoftwareLatency(),
                                             2,
                                             d.propagation,
                                             d.traversal,
                                             d.cutThroughBytes);
    }
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
    return CollectiveCostModel::FromLink(DataRate(bps),
                                         devices.front()->GetClock().GetEncodingEfficiency(),
                                         nvlink->GetMaxPayloadBytes(),
                                         nvlink->GetPacketOverheadBytes(),
                                         nvlink->GetSoftwareLatency(),
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
    std::vector<InfinibandDirectedLink> path;
    const std::string error = cluster.GetSubnetManager()->TracePath(cluster.GetHcaTopologyNode(src),
                                                                    1,
                                                                    cluster.GetHcaLid(dst),
                                                                    path);
    NS_ABORT_MSG_UNLESS(error.empty(), "collective-bench: " << error);
    Ptr<TransportPlane> plane = PlaneNamed(transport, "infiniband");
    if (cluster.GetInfinibandPlane().IsDescribedOnly())
    {
        // A flow-level plane without devices: the same figures from its description.
        const InfinibandFlowFabric& f = cluster.GetInfinibandPlane().GetFlowFabric();
        return CollectiveCostModel::FromLink(DataRate(f.signalling_bps),
                                             f.encodingEfficiency,
                                             plane->GetMaxPayloadBytes(),
                                             plane->GetPacketOverheadBytes(),
                                             plane->GetSoftwareLatency(),
                                             path.size(),
                                             f.propagation,
                                             f.traversal,
                                             f.cutThroughBytes);
    }
    Ptr<InfinibandNetDevice> hca = cluster.GetHcaDevice(src);
    TimeValue cable;
    hca->GetChannel()->GetAttribute("Delay", cable);
    TimeValue sw;
    const Ptr<InfinibandSwitch> ibSwitch =
        cluster.GetIbSwitchNodes().Get(0)->GetObject<InfinibandSwitch>();
    ibSwitch->GetAttribute("PortToPortLatency", sw);
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
