/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef AI_FABRIC_RESULTS_RECORDS_H
#define AI_FABRIC_RESULTS_RECORDS_H

#include <cstdint>
#include <limits>
#include <string>

// The rows a scenario hands to ResultsDatabase; results-schema.cc maps each field to its column.

namespace ns3
{

/// One row of `nodes`. server and rank: -1 is stored as NULL.
struct NodeRecord
{
    int64_t nodeId{0};
    std::string name;
    std::string kind; //!< gpu, cpu, nvswitch, ib-switch, eth-switch
    int64_t server{-1};
    int64_t rank{-1}; //!< GPU rank; -1 (NULL) for every other kind
};

/// One row of `links`: one direction of one link, counters at the end of the run.
struct LinkRecord
{
    int64_t linkId{0};
    std::string plane; //!< nvlink, infiniband, ethernet
    int64_t srcNode{0};
    int64_t dstNode{0};
    int64_t rateBitPerS{0}; //!< data rate available to frames, bit/s
    int64_t txBytes{0};
    int64_t txPackets{0};
    int64_t busyNs{0};
    int64_t creditStallNs{0};
    int64_t peakQueueBytes{0};
    int64_t drops{0};
    // Version 5, lossless-Ethernet counters; -1 (NULL) on planes without PFC or ECN.
    int64_t pfcPauseNs{-1};       //!< time the receiver's PFC kept the sender paused
    int64_t pfcPauseFrames{-1};   //!< PFC frames (quanta > 0) the receiver sent to pause it
    int64_t ecnMarkedPackets{-1}; //!< packets the transmitter marked CE
};

/// One row of `link_samples`: a link's cumulative transmitted bytes at one instant.
struct LinkSampleRecord
{
    int64_t linkId{0};
    int64_t tNs{0};
    int64_t txBytes{0};
};

/// One row of `flows`. Fields documented as nullable store -1 as NULL.
struct FlowRecord
{
    int64_t flowId{0};
    std::string plane;
    int64_t srcNode{0};
    int64_t dstNode{0};
    int64_t srcRank{-1}; //!< nullable
    int64_t dstRank{-1}; //!< nullable
    int64_t bytes{0};
    int64_t packets{0};
    int64_t startNs{0};
    int64_t endNs{-1};       //!< nullable: flow never completed
    int64_t opId{-1};        //!< nullable: not part of a trace operation
    int64_t rxBytes{-1};     //!< nullable, extra column (FlowMonitor)
    int64_t lostPackets{-1}; //!< nullable, extra column (FlowMonitor)
    std::string fidelity{};  //!< "packet" or "flow" (GpuTransport); "" for FlowMonitor imports
};

/// One row of `collectives`; algbw/busbw (GB/s) are computed by ResultsDatabase::AddCollective.
struct CollectiveRecord
{
    int64_t collId{0};
    std::string
        kind; //!< allreduce, reducescatter, allgather, alltoall, broadcast, reduce, sendrecv
    std::string algorithm;
    std::string groupName;
    int64_t numRanks{0};
    int64_t bytes{0}; //!< per rank, as nccl-tests' "size"
    int64_t startNs{0};
    int64_t endNs{0};
    int64_t inPlace{0}; //!< 1: output buffer = input (nccl-tests in-place), 0: out-of-place
    /// Time per iteration of nccl-tests' timing loop the call stood for; end - start if none
    int64_t loopTimeNs{-1};
};

/// One row of `ops`: one trace operation of one rank.
struct OpRecord
{
    int64_t rank{0};
    int64_t opId{0};
    std::string label;
    std::string kind; //!< e.g. compute, collective, send, recv
    int64_t startNs{0};
    int64_t endNs{0};
};

/// One row of `bench_results` (scripts/bench).  NaN reals and negative integers are NULL.
struct BenchRecord
{
    std::string benchmark;
    std::string figure; //!< the headline figure as printed, e.g. "9.1x", "42.5 s"
    std::string target; //!< as printed, e.g. ">= 5x"; "" when none
    double ratioToBaseline{std::numeric_limits<double>::quiet_NaN()};
    int64_t pass{-1}; //!< 1 met, 0 missed, -1 (NULL) no target
    double wallSeconds{std::numeric_limits<double>::quiet_NaN()};
    double cpuSeconds{std::numeric_limits<double>::quiet_NaN()};
    int64_t events{-1};
    int64_t packetHops{-1};
    double eventsPerHop{std::numeric_limits<double>::quiet_NaN()};
    double packetHopsPerS{std::numeric_limits<double>::quiet_NaN()};
    int64_t peakRssBytes{-1};
    int64_t simNs{-1};
};

} // namespace ns3

#endif
