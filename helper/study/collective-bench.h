/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_COLLECTIVE_BENCH_H
#define AI_FABRIC_COLLECTIVE_BENCH_H

#include "ns3/cluster-config.h"
#include "ns3/collective-cost-model.h"
#include "ns3/collective-engine.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ns3
{

class CommandLine;
class ClusterHelper;

/**
 * What scenarios/collective-bench runs: nccl-tests' -b/-e/-f/-g/-r as
 * --minBytes/--maxBytes/--stepFactor/--ranks/--root (doc/collectives.md).
 * Sizes are strings so that nccl-tests' "8G" works: K, M, G are powers of 1024.
 */
struct CollectiveBenchOptions
{
    std::string collective{"allreduce"};
    std::string algorithm{"auto"};
    std::string ranks; //!< "" = every GPU; else "0-7", "0,2,4", "0-3,8-11" (ring order)
    std::string minBytes{"8"};
    std::string maxBytes{"128M"};
    uint64_t stepFactor{2};
    uint32_t root{0}; //!< broadcast / reduce
    std::string db;   //!< results database; "" = none
    std::string label{"collective-bench"};
    uint64_t seed{1};
    bool describe{false}; //!< print ClusterHelper::Describe() first
    /// NvLinkNetDevice Granularity (payload per simulated packet); 0 keeps the device's 4 KiB.
    /// Coarser packets cut the events of large runs (doc/nvlink.md has the accuracy cost).
    uint32_t nvlinkGranularityBytes{0};
    /// InfiniBand ICRC/VCRC values (InfinibandNetDevice ComputeCrcs).  Off: trailers of the
    /// same size, so the same timing; computing them was 60% of a 64-GPU ring's run time.
    bool ibCrcs{false};
    /// nccl-tests' two passes per size: "both" (out-of-place, then in-place), "out" or "in".
    std::string inPlace{"both"};
    /// nccl-tests -g: GPUs one host thread drives (their launches are issued one by one).
    uint32_t gpusPerThread{1};
    /// nccl-tests -n: iterations of the timing loop a row stands for.  One iteration is
    /// simulated; the loop's time per iteration follows from it and the host's launches
    /// (NcclEndpoint::LoopIterationTime).
    uint32_t iters{20};
    /// Print the endpoint's tuner table for the group before the rows, in NCCL's layout
    /// (what NCCL_DEBUG=INFO prints at init): CollectiveEngine::FormatTunerTable.
    bool tunerTable{false};

    /// Registers --collective, --algorithm, --ranks, --minBytes, --maxBytes, --stepFactor,
    /// --root, --db, --label, --seed, --describe, --nvlinkGranularity, --ibCrcs, --inPlace,
    /// --gpusPerThread, --iters, --tunerTable.
    /// This object must outlive cmd.Parse().
    void AddCommandLineArguments(CommandLine& cmd);
};

/// One pass of a size (out-of-place or in-place): what the engine ran and its figures.
struct CollectiveBenchPass
{
    bool ran{false};       //!< false: skipped by --inPlace, printed blank
    std::string algorithm; //!< the one that ran (auto resolved)
    std::string protocol;  //!< as the engine reports it (CollectiveResult::protocol)
    uint32_t channels{0};
    double time_us{0};
    double algbw_gbyte_per_s{0};
    double busbw_gbyte_per_s{0};
};

/// One printed row: nccl-tests' out-of-place and in-place columns of one size.
struct CollectiveBenchRow
{
    uint64_t sizeBytes{0};
    uint64_t count{0};        //!< nccl-tests' count (CollectiveBenchCount)
    std::string redop{"sum"}; //!< "none" for allgather, alltoall, broadcast (as nccl-tests)
    int64_t root{-1};         //!< -1 but for broadcast / reduce
    CollectiveBenchPass outOfPlace;
    CollectiveBenchPass inPlace;
};

/// --inPlace: which passes run.  "" or the error naming the flag.
std::string CollectiveBenchParsePasses(const std::string& text, bool& outOfPlace, bool& inPlace);
/// nccl-tests' count column for float elements: the buffer parameter of the call, i.e. size / 4,
/// but per rank (size / 4 / ranks) for allgather, reducescatter and alltoall.
uint64_t CollectiveBenchCount(CollectiveKind kind, uint64_t sizeBytes, uint32_t numRanks);

/// nccl-tests' size syntax: digits with an optional K, M or G (x1024^k).  "" or the error.
std::string CollectiveBenchParseSize(const std::string& text, uint64_t& bytes);
/// "0-7", "0,2,4-6": ranks in the order given.  "" or the error (syntax, empty range).
std::string CollectiveBenchParseRanks(const std::string& text, std::vector<uint32_t>& ranks);
/// min, min x f, ... up to max (nccl-tests -b -e -f); each size at least one element.
std::vector<uint64_t> CollectiveBenchSizes(uint64_t minBytes, uint64_t maxBytes, uint64_t factor);

/**
 * Everything that can be checked before the cluster is built: collective and algorithm
 * names and their pairing, sizes and step factor, the rank list against a cluster of
 * \p clusterRanks GPUs (range, repeats), the root.  Fills \p ranks and \p sizes.
 * "" or a message for the user.
 */
std::string CollectiveBenchValidate(const CollectiveBenchOptions& options,
                                    uint32_t clusterRanks,
                                    std::vector<uint32_t>& ranks,
                                    std::vector<uint64_t>& sizes);

/**
 * What only the built fabric can say (nvls needs NVSwitch gen3 over the whole group,
 * hierarchical equal NVLink domains...): the engine resolves every size.  "" or the
 * engine's message.
 */
std::string CollectiveBenchCheckFabric(const CollectiveBenchOptions& options,
                                       const std::vector<uint32_t>& ranks,
                                       const std::vector<uint64_t>& sizes,
                                       Ptr<CollectiveEngine> engine);

/**
 * Runs each size on \p engine, sequentially in the current simulation: per size the
 * out-of-place pass, then the in-place one (options.inPlace says which run), each call
 * starting when the previous one's last rank finished (the engine's done), so each is a fresh
 * collective on an idle fabric apart from credits still returning.  Each row is printed on
 * \p out as its size finishes.  Throws CollectiveError if a collective never finishes (the
 * event list ran dry).
 */
std::vector<CollectiveBenchRow> CollectiveBenchRun(const CollectiveBenchOptions& options,
                                                   const std::vector<uint32_t>& ranks,
                                                   const std::vector<uint64_t>& sizes,
                                                   Ptr<CollectiveEngine> engine,
                                                   std::ostream* out = nullptr);

/// nccl-tests' header lines (size count type redop root, then time algbw busbw #wrong of the
/// out-of-place and of the in-place pass), algorithm, protocol and channels appended.
std::string CollectiveBenchHeader();
/// One row in nccl-tests' layout (#wrong is N/A: no data is moved), the algorithm, protocol
/// and channels that ran appended ("a/b" when the two passes differ).
std::string CollectiveBenchFormatRow(const CollectiveBenchRow& row);
/// Mean busbw over every pass that ran, out-of-place and in-place alike (nccl-tests' "Avg bus
/// bandwidth").
double CollectiveBenchAverageBusBw(const std::vector<CollectiveBenchRow>& rows);
/// nccl-tests' footer: out-of-bounds values (0: none is checked) and the average busbw.
std::string CollectiveBenchFooter(const std::vector<CollectiveBenchRow>& rows);

/**
 * The whole scenario: validate, build the cluster of \p config, run, print the table on
 * \p out, write the run (params, nodes, links, collectives, flows) to options.db.  On bad
 * input (or a non-empty \p clusterError, ClusterConfig::ApplyCommandLine's): the message on
 * \p err, exit code 1, and only a `failed` run row.  \return the process exit code.  Call
 * with a fresh simulator; leaves Simulator::Destroy to the caller.
 */
/**
 * The alpha-beta reference of the cluster's NVLink plane as \p transport uses it: \p rank's
 * bundles to every NVSwitch as one link, GPU -> switch -> GPU (the analytical figures of
 * collective-bench's tests and of granularity-bench).
 */
CollectiveCostModel CollectiveBenchNvLinkModel(ClusterHelper& cluster,
                                               Ptr<GpuTransport> transport,
                                               uint32_t rank = 0);
/// The same for InfiniBand: \p src's HCA over the links the subnet manager routes to \p dst.
CollectiveCostModel CollectiveBenchIbModel(ClusterHelper& cluster,
                                           Ptr<GpuTransport> transport,
                                           uint32_t src,
                                           uint32_t dst);

int CollectiveBenchMain(const ClusterConfig& config,
                        const CollectiveBenchOptions& options,
                        std::ostream& out,
                        std::ostream& err,
                        const std::string& clusterError = "",
                        const std::string& clusterErrorField = "");

} // namespace ns3

#endif
