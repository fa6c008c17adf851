/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Chakra execution traces: the importer on the hand-built files of test/data/workloads/chakra
 * (make-fixtures.py spells the protobuf wire format out with the public schema's field
 * numbers), the malformed ones refused with file, record and field, and the round trip
 * generator -> ChakraTraceWriter -> ChakraTraceImporter giving the same trace and the same
 * replay rows as the native file.
 */
#include "scratch-dir.h"

#include "ns3/trace-chakra.h"
#include "ns3/trace-native.h"
#include "ns3/trace-transformer-gen.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <limits.h>
#include <sqlite3.h>
#include <sstream>
#include <unistd.h>

using namespace ns3;

namespace
{

const std::string kData = AI_FABRIC_SOURCE_DIR "/test/data/workloads/chakra/";
constexpr uint32_t kOwnStream = 1u << 24; // streams of ops without a "stream" attribute

using K = WorkloadOpKind;

void
ExpectSameTrace(const WorkloadTrace& a, const WorkloadTrace& b)
{
    ASSERT_EQ(a.numRanks, b.numRanks);
    ASSERT_EQ(a.groups.size(), b.groups.size());
    for (size_t g = 0; g < a.groups.size(); ++g)
    {
        EXPECT_EQ(a.groups[g].name, b.groups[g].name);
        EXPECT_EQ(a.groups[g].ranks, b.groups[g].ranks);
        EXPECT_EQ(a.groups[g].kind, b.groups[g].kind) << a.groups[g].name;
    }
    for (uint32_t r = 0; r < a.numRanks; ++r)
    {
        ASSERT_EQ(a.ops[r].size(), b.ops[r].size()) << "rank " << r;
        for (size_t i = 0; i < a.ops[r].size(); ++i)
        {
            const WorkloadOpRef x = a.ops[r][i];
            const WorkloadOpRef y = b.ops[r][i];
            SCOPED_TRACE("rank " + std::to_string(r) + " op " + x.label);
            EXPECT_EQ(x.label, y.label);
            EXPECT_EQ(x.kind, y.kind);
            EXPECT_EQ(x.timeNs, y.timeNs);
            EXPECT_EQ(x.bytes, y.bytes);
            EXPECT_EQ(x.stream, y.stream);
            EXPECT_EQ(x.group, y.group);
            EXPECT_EQ(x.to, y.to);
            EXPECT_EQ(x.from, y.from);
            EXPECT_EQ(x.root, y.root);
            EXPECT_EQ(x.storage, y.storage);
            EXPECT_EQ(x.algorithm, y.algorithm);
            EXPECT_EQ(x.deps, y.deps);
            EXPECT_EQ(x.collective, y.collective);
            EXPECT_EQ(x.sendPeerOp, y.sendPeerOp);
            EXPECT_EQ(x.recvPeerOp, y.recvPeerOp);
        }
    }
    ASSERT_EQ(a.collectives.size(), b.collectives.size());
    for (size_t c = 0; c < a.collectives.size(); ++c)
    {
        EXPECT_EQ(a.collectives[c].label, b.collectives[c].label);
        EXPECT_EQ(a.collectives[c].members, b.collectives[c].members);
    }
}

WorkloadTrace
RoundTrip(const WorkloadTrace& t)
{
    const auto streams = ChakraTraceWriter::Serialize(t);
    return ChakraTraceImporter::ImportStreams(streams, {}, "roundtrip");
}

std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The four ranks of astrasim.*.et, op by op as doc/workload.md's rules give them: durations
// in microseconds x 1000, 0 as 1 ns; the METADATA_NODE skipped (allreduce waits for what it
// waited for: fwd); no pg_name = every rank; pg_name "10"/"11" = the ranks that use it;
// the send and the receive have different names, so their label is p2p.<src>.<dst>.<tag>.<k>.
TEST(WorkloadChakra, AstraSimStyleFixture)
{
    const WorkloadTrace t = ChakraTraceImporter::ImportFiles(kData + "astrasim");
    ASSERT_EQ(t.numRanks, 4u);
    ASSERT_EQ(t.groups.size(), 3u);
    EXPECT_EQ(t.groups[0].name, "world");
    EXPECT_EQ(t.groups[0].ranks, (std::vector<uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(t.groups[1].name, "10");
    EXPECT_EQ(t.groups[1].ranks, (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(t.groups[2].name, "11");
    EXPECT_EQ(t.groups[2].ranks, (std::vector<uint32_t>{2, 3}));
    ASSERT_EQ(t.collectives.size(), 3u); // world allreduce, two TP allgathers
    for (uint32_t r = 0; r < 4; ++r)
    {
        SCOPED_TRACE("rank " + std::to_string(r));
        const auto& ops = t.ops[r];
        ASSERT_EQ(ops.size(), 7u); // 8 nodes, the METADATA_NODE skipped
        const std::string p2p =
            r % 2 == 0 ? "p2p." + std::to_string(r) + "." + std::to_string(r + 1) + ".7.0"
                       : "p2p." + std::to_string(r - 1) + "." + std::to_string(r) + ".7.0";
        const std::vector<std::string> labels =
            {"fwd", "allreduce", "tp_allgather", "bwd", p2p, "opt", "tail"};
        for (size_t i = 0; i < ops.size(); ++i)
        {
            EXPECT_EQ(ops[i].label, labels[i]);
            EXPECT_EQ(ops[i].stream, kOwnStream + i); // only dependencies order them
        }
        EXPECT_EQ(ops[0].kind, K::Compute);
        EXPECT_EQ(ops[0].timeNs, 10000u); // 10 us
        EXPECT_EQ(ops[1].kind, K::AllReduce);
        EXPECT_EQ(ops[1].bytes, 1048576u);
        EXPECT_EQ(ops[1].group, 0);
        EXPECT_EQ(ops[1].deps, (std::vector<uint32_t>{0})); // through the METADATA_NODE
        EXPECT_EQ(ops[2].kind, K::AllGather);
        EXPECT_EQ(ops[2].bytes, 65536u);
        EXPECT_EQ(ops[2].group, r < 2 ? 1 : 2);
        EXPECT_EQ(ops[3].timeNs, 1u); // duration 0: ASTRA-sim's 1 ns
        EXPECT_EQ(ops[3].deps, (std::vector<uint32_t>{1, 2}));
        EXPECT_EQ(ops[4].kind, r % 2 == 0 ? K::Send : K::Recv);
        EXPECT_EQ(ops[4].bytes, 4096u);
        EXPECT_EQ(r % 2 == 0 ? ops[4].to : ops[4].from, static_cast<int32_t>(r ^ 1));
        EXPECT_EQ(ops[5].timeNs, 2000u);
        EXPECT_EQ(ops[5].deps, (std::vector<uint32_t>{6})); // "opt" waits for the later "tail"
        EXPECT_EQ(ops[6].timeNs, 3000u);
        EXPECT_EQ(ops[6].deps, (std::vector<uint32_t>{4}));
    }
}

// ASTRA-sim's communicator-group file names the same groups the importer inferred; a
// pg_name missing from it is refused.
TEST(WorkloadChakra, CommGroupFile)
{
    std::vector<std::string> streams;
    for (uint32_t r = 0; r < 4; ++r)
    {
        streams.push_back(ReadFile(ChakraFileName(kData + "astrasim", r)));
    }
    const WorkloadTrace inferred = ChakraTraceImporter::ImportStreams(streams, {}, "astrasim");
    const WorkloadTrace given =
        ChakraTraceImporter::ImportStreams(streams,
                                           {},
                                           "astrasim",
                                           R"({"10": [0, 1], "11": [2, 3]})");
    // The file lists its groups first, so group indices differ; names and calls do not.
    ASSERT_EQ(given.groups.size(), 3u);
    EXPECT_EQ(given.groups[0].name, "10");
    EXPECT_EQ(given.groups[2].name, "world");
    ASSERT_EQ(inferred.collectives.size(), given.collectives.size());
    for (uint32_t r = 0; r < 4; ++r)
    {
        ASSERT_EQ(inferred.ops[r].size(), given.ops[r].size());
        for (size_t i = 0; i < inferred.ops[r].size(); ++i)
        {
            const auto& x = inferred.ops[r][i];
            const auto& y = given.ops[r][i];
            EXPECT_EQ(x.label, y.label);
            EXPECT_EQ(x.deps, y.deps);
            EXPECT_EQ(x.group < 0 ? "" : inferred.groups[x.group].name,
                      y.group < 0 ? "" : given.groups[y.group].name);
        }
    }
    try
    {
        ChakraTraceImporter::ImportStreams(streams, {"a.0.et", "a.1.et"}, "a", R"({"10": [0, 1]})");
        FAIL() << "pg_name 11 is not in the group file";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(e.GetFile(), "a.2.et"); // the first rank that uses it
        EXPECT_EQ(e.GetField(), "pg_name");
        EXPECT_NE(std::string(e.what()).find("record 4: communicator '11'"), std::string::npos)
            << e.what();
    }
}

struct Malformed
{
    std::string prefix;
    std::string file; ///< the rank file the error names
    std::string field;
    std::string detail; ///< must appear in the message
};

TEST(WorkloadChakra, MalformedFixtures)
{
    const std::vector<Malformed> cases = {
        {"bad-truncated", "1", "length", "record 2: the record says"},
        {"bad-no-size", "0", "comm_size", "record 2: a COMM_COLL_NODE needs comm_size"},
        {"bad-gather", "0", "comm_type", "record 2: collective type 3 (GATHER/SCATTER)"},
        {"bad-dep", "0", "data_deps", "record 2: node 1 depends on node 42"},
        {"bad-dup-id", "0", "id", "record 2: node id 0 also at record 1"},
        {"bad-unmatched-send", "0", "comm_dst", "record 3: 1 sends from rank 0 to rank 1"},
        {"bad-coll-count", "1", "pg_name", "1 collectives here but 2 in"},
        {"bad-involved-dim", "0", "involved_dim", "record 2: a subset of ASTRA-sim's"},
        {"bad-size-type", "0", "comm_size", "record 2: expected an integer value"},
        {"bad-empty", "0", "", "record 0: empty file"},
        {"bad-pg-utf8", "0", "pg_name", "record 2: not UTF-8 text"},
    };
    for (const auto& c : cases)
    {
        SCOPED_TRACE(c.prefix);
        try
        {
            ChakraTraceImporter::ImportFiles(kData + c.prefix);
            ADD_FAILURE() << "accepted";
        }
        catch (const WorkloadError& e)
        {
            EXPECT_EQ(e.GetFile(), kData + c.prefix + "." + c.file + ".et");
            EXPECT_EQ(e.GetField(), c.field);
            EXPECT_NE(std::string(e.what()).find(c.detail), std::string::npos) << e.what();
        }
    }
    try
    {
        ChakraTraceImporter::ImportFiles(kData + "no-such-job");
        ADD_FAILURE() << "accepted a missing trace";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(e.GetFile(), kData + "no-such-job.0.et");
    }
}

// The writer's files of a generated job (trace-gen --format=chakra, kept in test/data) read
// back as the native file of the same job, and the writer still writes those bytes.
TEST(WorkloadChakra, WriterFixtureMatchesNativeFile)
{
    const std::string prefix = kData + "gen-tp2-pp2-dp2";
    const WorkloadTrace native = NativeTraceParser::ParseFile(prefix + ".trace");
    const WorkloadTrace chakra = ChakraTraceImporter::ImportFiles(prefix);
    ExpectSameTrace(native, chakra);
    const auto streams = ChakraTraceWriter::Serialize(native);
    ASSERT_EQ(streams.size(), 8u);
    for (uint32_t r = 0; r < 8; ++r)
    {
        EXPECT_EQ(streams[r], ReadFile(ChakraFileName(prefix, r))) << "rank " << r;
    }
    EXPECT_EQ(ChakraTraceWriter::CommGroupsJson(native), ReadFile(prefix + ".comm-groups.json"));
}

// Generated jobs with every kind of op the generator writes (TP, sequence parallel, ZeRO,
// MoE all-to-all on EP groups, pipeline send/recv, DP buckets on stream 1, load and
// checkpoint) and a hand-written trace with what the generator never writes (roots,
// algorithms, forward after=, storage nodes, explicit streams) come back unchanged.
TEST(WorkloadChakra, RoundTripKeepsTheTrace)
{
    TransformerTraceConfig c;
    c.layers = 2;
    c.hidden = 1024;
    c.seq = 256;
    c.vocab = 1000;
    c.microBatch = 1;
    c.globalBatch = 8;
    c.tp = 2;
    c.pp = 2;
    c.dp = 2;
    c.experts = 4;
    c.ep = 2;
    c.zero = 1;
    c.sequenceParallel = true;
    c.loadBytes = 1 << 20;
    c.checkpointBytes = 1 << 20;
    const WorkloadTrace gen =
        NativeTraceParser::ParseString(TransformerTraceGenerator(c).Generate(), "gen");
    ExpectSameTrace(gen, RoundTrip(gen));

    const std::string text = "fabric-trace 1\n"
                             "ranks 4\n"
                             "group all 0-3\n"
                             "group pair 1,3 kind=dp\n"
                             "0-3 in load bytes=1MiB from=storage1\n"
                             "0-3 c compute time=1234ns after=b\n"
                             "0-3 b broadcast group=all bytes=4KiB root=2 algorithm=tree stream=3\n"
                             "1,3 r reduce group=pair bytes=8KiB root=3 stream=5\n"
                             "0 s send to=2 bytes=100 stream=2\n"
                             "2 s recv from=0 bytes=100 stream=2\n"
                             "0-3 ck checkpoint bytes=2MiB to=storage0 stream=7\n";
    const WorkloadTrace hand = NativeTraceParser::ParseString(text, "hand");
    ExpectSameTrace(hand, RoundTrip(hand));
}

TEST(WorkloadChakra, WriterRefusesSendRecv)
{
    const WorkloadTrace t = NativeTraceParser::ParseString("fabric-trace 1\nranks 3\n"
                                                           "0 x send to=1 bytes=8\n"
                                                           "1 x sendrecv to=2 from=0 bytes=8\n"
                                                           "2 x recv from=1 bytes=8\n",
                                                           "sr");
    try
    {
        ChakraTraceWriter::Serialize(t);
        FAIL() << "sendrecv written";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(e.GetField(), "op");
        EXPECT_NE(std::string(e.what()).find("sendrecv 'x'"), std::string::npos) << e.what();
    }
}

std::string
ProgramDir()
{
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    const std::string self = n > 0 ? std::string(buf, n) : "./x";
    return self.substr(0, self.rfind('/'));
}

/// Every row of \p table, columns joined, in rowid order (run_id is 1 in both files).
std::vector<std::string>
Rows(const std::string& db, const std::string& table)
{
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << db;
    sqlite3_stmt* st = nullptr;
    std::vector<std::string> rows;
    if (sqlite3_prepare_v2(h,
                           ("SELECT * FROM " + table + " ORDER BY rowid").c_str(),
                           -1,
                           &st,
                           nullptr) == SQLITE_OK)
    {
        while (sqlite3_step(st) == SQLITE_ROW)
        {
            std::string row;
            for (int k = 0; k < sqlite3_column_count(st); ++k)
            {
                const auto* v = sqlite3_column_text(st, k);
                row += (v ? reinterpret_cast<const char*>(v) : "NULL") + std::string("|");
            }
            rows.push_back(row);
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return rows;
}

// generate -> write -> read -> replay: cluster-replay gives the same rows for the native
// file and for its Chakra files.
TEST(WorkloadChakra, RoundTripGivesTheSameRows)
{
    const std::string bin = ProgramDir() + "/cluster-replay";
    if (access(bin.c_str(), X_OK) != 0)
    {
        GTEST_SKIP() << "no " << bin << " (in-tree build)";
    }
    const test_util::ScratchDir scratch("chakra");
    const std::string& dir = scratch.Path();
    const std::string prefix = kData + "gen-tp2-pp2-dp2";
    const std::string common = " --servers=1 --seed=3 >/dev/null 2>&1";
    ASSERT_EQ(
        std::system(
            (bin + " --trace=" + prefix + ".trace --db=" + dir + "/native.db" + common).c_str()),
        0);
    ASSERT_EQ(std::system((bin + " --trace=" + prefix + " --format=chakra --db=" + dir +
                           "/chakra.db" + common)
                              .c_str()),
              0);
    for (const char* table : {"nodes", "links", "link_samples", "flows", "collectives", "ops"})
    {
        const auto native = Rows(dir + "/native.db", table);
        EXPECT_EQ(native, Rows(dir + "/chakra.db", table)) << table;
        if (std::string(table) == "ops")
        {
            EXPECT_EQ(native.size(), 192u); // every op of the 8 ranks
        }
    }
}

} // namespace
