/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3/trace-native.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

// The format's reference example (doc/workload.md), verbatim.
const char* kIssueExample = R"(fabric-trace 1
ranks 16
group tp0 0-7            # a communicator: ranks as lists and ranges
group tp1 8-15
group dp0 0,8
# <ranks> <label> <op> [key=value ...]
0-15  fwd0   compute  time=1.5ms
0-7   ar0    allreduce group=tp0 bytes=64MiB after=fwd0
8-15  ar0    allreduce group=tp1 bytes=64MiB after=fwd0
0     act0   send  to=8  bytes=32MiB
8     act0   recv  from=0 bytes=32MiB
0-15  grad   allreduce group=dp0 bytes=1GiB stream=1 algorithm=ring
)";

std::string
ErrorOf(const std::string& text)
{
    try
    {
        NativeTraceParser::ParseString(text, "trace.txt");
    }
    catch (const WorkloadError& e)
    {
        return e.what();
    }
    return "no error";
}

const char* kHead = "fabric-trace 1\nranks 4\ngroup all 0-3\n";

} // namespace

// Every rank computes fwd0; tp collectives on 0-7/8-15; grad only on dp0's
// members 0 and 8 (rule: ranks outside the group skip it, with a warning).
TEST(WorkloadNative, IssueExampleParses)
{
    WorkloadTrace t = NativeTraceParser::ParseString(kIssueExample, "issue.trace");
    ASSERT_EQ(t.numRanks, 16u);
    ASSERT_EQ(t.groups.size(), 3u);
    // rank 0: fwd0, ar0, act0, grad; rank 1: fwd0, ar0; rank 8: fwd0, ar0, act0, grad
    EXPECT_EQ(t.ops[0].size(), 4u);
    EXPECT_EQ(t.ops[1].size(), 2u);
    EXPECT_EQ(t.ops[8].size(), 4u);
    EXPECT_EQ(t.ops[0][0].timeNs, 1500000u); // 1.5 ms
    EXPECT_EQ(t.ops[0][1].bytes, 64u << 20);
    // ar0 waits for fwd0 (same stream and after=: one dependency, deduplicated)
    EXPECT_EQ(t.ops[0][1].deps, std::vector<uint32_t>{0});
    // grad on stream 1 has no predecessor on its stream and no after=
    EXPECT_TRUE(t.ops[0][3].deps.empty());
    EXPECT_EQ(t.ops[0][3].algorithm, CollectiveAlgorithm::Ring);
    // collectives: ar0@tp0, ar0@tp1, grad@dp0
    ASSERT_EQ(t.collectives.size(), 3u);
    // numbered in order of first appearance scanning rank 0 first: ar0@tp0, grad, ar0@tp1
    EXPECT_EQ(t.collectives[0].members.size(), 8u);
    EXPECT_EQ(t.collectives[1].label, "grad");
    EXPECT_EQ(t.collectives[1].members.size(), 2u);
    EXPECT_EQ(t.ops[8][2].kind, WorkloadOpKind::Recv);
    EXPECT_EQ(t.ops[8][2].recvPeerOp, 2);
    EXPECT_EQ(t.ops[0][2].sendPeerOp, 2);
    EXPECT_EQ(t.warnings.size(), 1u);
}

// Canonical print is a fixed point of parse -> print.
TEST(WorkloadNative, RoundTripIsFixedPoint)
{
    WorkloadTrace t = NativeTraceParser::ParseString(kIssueExample, "issue.trace");
    std::string once = NativeTracePrinter::Print(t);
    std::string twice =
        NativeTracePrinter::Print(NativeTraceParser::ParseString(once, "printed.trace"));
    EXPECT_EQ(once, twice);
    EXPECT_NE(once.find("0-15 fwd0 compute time=1500us\n"), std::string::npos) << once;
    EXPECT_NE(once.find("0,8 grad allreduce bytes=1GiB group=dp0 stream=1 algorithm=ring\n"),
              std::string::npos)
        << once;
}

// repeat 2 { repeat 3 { c } } gives c.<outer>.<inner>: c.0.0 .. c.1.2; after=
// resolves to the same iteration of the innermost block that writes the label.
TEST(WorkloadNative, RepeatLabels)
{
    std::string text = std::string(kHead) + R"(0-3 init compute time=1us
repeat 2 {
  repeat 3 {
    0-3 c compute time=10ns
    0-3 ar allreduce group=all bytes=1KiB after=c,init
  }
  0-3 s compute time=5ns after=c.0.2
}
repeat 2 start=5 {
  0 x send to=1 bytes=8B
  1 x recv from=0 bytes=8B
}
)";
    WorkloadTrace t = NativeTraceParser::ParseString(text, "rep.trace");
    // rank 0: init + 2 * (3 * 2 + 1) + 2 sends = 17
    ASSERT_EQ(t.ops[0].size(), 17u);
    EXPECT_EQ(t.ops[0][1].label, "c.0.0");
    EXPECT_EQ(t.ops[0][2].label, "ar.0.0");
    EXPECT_EQ(t.ops[0][2].after, (std::vector<std::string>{"c.0.0", "init"}));
    EXPECT_EQ(t.ops[0][6].label, "ar.0.2");
    EXPECT_EQ(t.ops[0][7].label, "s.0");
    EXPECT_EQ(t.ops[0][7].after, std::vector<std::string>{"c.0.2"}); // not in scope: literal
    EXPECT_EQ(t.ops[0][14].label, "s.1");
    EXPECT_EQ(t.ops[0][15].label, "x.5"); // start=5
    EXPECT_EQ(t.ops[1][16].label, "x.6");
    EXPECT_EQ(t.collectives.size(), 6u); // 2 * 3 allreduces
}

// shift D offsets the innermost repeat's number: a loop whose body holds
// micro-batch i+2's forward and micro-batch i's backward labels both by micro-batch.
TEST(WorkloadNative, ShiftBlocks)
{
    std::string text = std::string(kHead) + R"(repeat 2 start=2 {
  0 f compute time=1us
  shift -2 {
    0 b compute time=1us
    repeat 2 {
      0 bl compute time=1ns
    }
  }
}
)";
    WorkloadTrace t = NativeTraceParser::ParseString(text, "shift.trace");
    ASSERT_EQ(t.ops[0].size(), 8u);
    EXPECT_EQ(t.ops[0][0].label, "f.2");
    EXPECT_EQ(t.ops[0][1].label, "b.0");
    EXPECT_EQ(t.ops[0][3].label, "bl.0.1");
    EXPECT_EQ(t.ops[0][4].label, "f.3");
    EXPECT_EQ(t.ops[0][5].label, "b.1");
}

TEST(WorkloadNative, Units)
{
    uint64_t v = 0;
    EXPECT_TRUE(ParseBytes("64MiB", &v));
    EXPECT_EQ(v, 64ULL << 20);
    EXPECT_TRUE(ParseBytes("1.5KB", &v));
    EXPECT_EQ(v, 1500u);
    EXPECT_TRUE(ParseTimeNs("2s", &v));
    EXPECT_EQ(v, 2000000000u);
    EXPECT_TRUE(ParseTimeNs("0.5us", &v));
    EXPECT_EQ(v, 500u);
    EXPECT_FALSE(ParseBytes("64XB", &v));
    EXPECT_FALSE(ParseBytes("99999999999999999999GiB", &v)); // overflow
    EXPECT_FALSE(ParseTimeNs("20000000000s", &v));           // 2e19 ns > 2^64
    EXPECT_FALSE(ParseTimeNs(".s", &v));
    // 128-bit intermediate would wrap: 2^64 x 1e12 (fraction digits) x 2^30
    EXPECT_FALSE(ParseBytes("18446744073709551615.999999999999GiB", &v));
    EXPECT_TRUE(ParseBytes("0.000000000001GiB", &v)); // rounds to 0 B
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(FormatBytes(3ULL << 30), "3GiB");
    EXPECT_EQ(FormatBytes(2000000), "2MB");
    EXPECT_EQ(FormatTimeNs(1500000), "1500us");
    std::vector<uint32_t> r;
    std::string why;
    EXPECT_TRUE(ParseRankList("0-7,9,12-15", 16, &r, &why));
    EXPECT_EQ(r.size(), 13u);
    EXPECT_EQ(FormatRankList(r), "0-7,9,12-15");
    EXPECT_FALSE(ParseRankList("0-16", 16, &r, &why));
}

// Each error names file:line and the field (or column) and what was expected.
TEST(WorkloadNative, ErrorsNameLineAndField)
{
    const std::string h = kHead; // lines 1-3
    EXPECT_EQ(ErrorOf(h + "0-3 a allreduce group=all bytes=64XB\n"),
              "trace.txt:4: field 'bytes': expected a size like 64MiB (B, KiB, MiB, GiB, KB, "
              "MB, GB), got '64XB'");
    EXPECT_EQ(ErrorOf(h + "0 a compute time=3parsecs\n"),
              "trace.txt:4: field 'time': expected a duration like 1.5ms (ns, us, ms, s), got "
              "'3parsecs'");
    EXPECT_EQ(ErrorOf(h + "0-4 a compute time=1us\n"),
              "trace.txt:4: field 'ranks': rank 4 out of range: the trace has 4 ranks");
    EXPECT_EQ(ErrorOf(h + "0-3 a allreduce group=tp9 bytes=1B\n"),
              "trace.txt:4: field 'group': unknown group 'tp9'");
    EXPECT_EQ(ErrorOf(h + "0 a compute time=1us\n0 b compute time=1us after=zz\n"),
              "trace.txt:5: field 'after': unknown label 'zz' on rank 0");
    EXPECT_EQ(ErrorOf(h + "0 a compute time=1us\n0-1 a compute time=1us\n"),
              "trace.txt:5: field 'label': duplicate label 'a' on rank 0 (first used at line 4)");
    EXPECT_EQ(ErrorOf(h + "1 r recv from=0 bytes=1KiB\n"),
              "trace.txt:4: field 'from': recv 'r' on rank 1 has no matching send with this "
              "label on rank 0");
    EXPECT_EQ(ErrorOf(h + "0 s send to=1 bytes=1KiB\n"),
              "trace.txt:4: field 'to': send 's' from rank 0 to rank 1 is never received");
    EXPECT_EQ(ErrorOf(h + "0-2 ar allreduce group=all bytes=1KiB\n"),
              "trace.txt:4: field 'label': allreduce 'ar' on group 'all': member rank 3 never "
              "reaches it");
    EXPECT_EQ(ErrorOf(h + "0 a compute time=1us after=b\n0 b compute time=1us\n"),
              "trace.txt:4: field 'after': dependency cycle: 2 ops can never start, e.g. rank 0 "
              "'a' (line 4), rank 0 'b' (line 5)");
    // Cross-rank deadlock: each rank's recv precedes the send the other waits for.
    EXPECT_NE(ErrorOf(h + "0 b recv from=1 bytes=1B\n1 a recv from=0 bytes=1B\n"
                          "0 a send to=1 bytes=1B\n1 b send to=0 bytes=1B\n")
                  .find("dependency cycle"),
              std::string::npos);
    EXPECT_EQ(ErrorOf(h + "0 a frobnicate\n"),
              "trace.txt:4: field 'op': expected compute, send, recv, sendrecv, allreduce, "
              "allgather, reducescatter, alltoall, broadcast, reduce, load or checkpoint, got "
              "'frobnicate'");
    EXPECT_EQ(ErrorOf(h + "0 a compute time=1us colour=red\n"),
              "trace.txt:4: field 'colour': unknown key; expected time, bytes, group, to, from, "
              "after, stream, algorithm or root");
    EXPECT_EQ(ErrorOf(h + "0 a compute\n"),
              "trace.txt:4: field 'time': missing: compute needs time=DURATION");
    EXPECT_EQ(ErrorOf(h + "0 a compute time=1us junk\n"),
              "trace.txt:4: column 22: expected key=value, got 'junk'");
    EXPECT_EQ(ErrorOf(h + "repeat 2 {\n0 a compute time=1us\n"),
              "trace.txt:4: field 'repeat': block is never closed with '}'");
    EXPECT_EQ(ErrorOf("ranks 4\n"), "trace.txt:1: column 1: expected the header 'fabric-trace 1'");
    EXPECT_EQ(ErrorOf(h + "1 r recv from=0 bytes=1KiB\n0 r send to=1 bytes=2KiB\n"),
              "trace.txt:4: field 'bytes': recv 'r' on rank 1 expects 1024 bytes but the send "
              "at line 5 has 2048");
}

// The exception carries the parts for a failed run row.
TEST(WorkloadNative, ErrorParts)
{
    try
    {
        NativeTraceParser::ParseString(std::string(kHead) + "0 a send to=1 bytes=1ZB\n", "x.tr");
        FAIL() << "no error";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(e.GetFile(), "x.tr");
        EXPECT_EQ(e.GetLine(), 4u);
        EXPECT_EQ(e.GetField(), "bytes");
    }
}

// kind= on a group line sets its parallelism kind; without it (traces written before the
// key existed) the kind follows the name prefix; the print omits it when it equals that.
TEST(WorkloadNative, GroupKind)
{
    const std::string text = "fabric-trace 1\nranks 8\n"
                             "group tp0 0-3\n"
                             "group dp0 0,4\n"
                             "group xdp0 1,5\n"
                             "group world 0-7\n"
                             "group experts 0-7 kind=ep\n"
                             "group tp1 4-7 kind=dp\n"
                             "group stage 0-7 kind=pp\n"
                             "group misc 0-7 kind=other\n";
    const WorkloadTrace t = NativeTraceParser::ParseString(text, "kind.trace");
    ASSERT_EQ(t.groups.size(), 8u);
    EXPECT_EQ(t.groups[0].kind, ParallelismKind::Tp);    // default from "tp"
    EXPECT_EQ(t.groups[1].kind, ParallelismKind::Dp);    // default from "dp"
    EXPECT_EQ(t.groups[2].kind, ParallelismKind::Dp);    // default from "xdp"
    EXPECT_EQ(t.groups[3].kind, ParallelismKind::Other); // default for any other name
    EXPECT_EQ(t.groups[4].kind, ParallelismKind::Ep);
    EXPECT_EQ(t.groups[5].kind, ParallelismKind::Dp); // explicit beats the name
    EXPECT_EQ(t.groups[6].kind, ParallelismKind::Pp);
    EXPECT_EQ(t.groups[7].kind, ParallelismKind::Other);
    const std::string printed = NativeTracePrinter::Print(t);
    EXPECT_NE(printed.find("group tp0 0-3\n"), std::string::npos) << printed;
    EXPECT_NE(printed.find("group experts 0-7 kind=ep\n"), std::string::npos) << printed;
    EXPECT_NE(printed.find("group tp1 4-7 kind=dp\n"), std::string::npos) << printed;
    EXPECT_NE(printed.find("group misc 0-7\n"), std::string::npos) << printed;
    const WorkloadTrace again = NativeTraceParser::ParseString(printed, "printed.trace");
    for (std::size_t g = 0; g < t.groups.size(); ++g)
    {
        EXPECT_EQ(again.groups[g].kind, t.groups[g].kind) << t.groups[g].name;
    }
}

TEST(WorkloadNative, GroupKindRefused)
{
    const std::string h = "fabric-trace 1\nranks 4\n";
    EXPECT_EQ(ErrorOf(h + "group g 0-3 kind=xp\n"),
              "trace.txt:3: field 'kind': unknown parallelism kind 'xp'; expected tp, pp, dp, "
              "ep or other");
    EXPECT_EQ(ErrorOf(h + "group g 0-3 kind=front-end\n"),
              "trace.txt:3: field 'kind': unknown parallelism kind 'front-end'; expected tp, pp, "
              "dp, ep or other");
    EXPECT_EQ(ErrorOf(h + "group g 0-3 type=tp\n"),
              "trace.txt:3: field 'type': unknown key; a group line takes kind=");
    EXPECT_EQ(ErrorOf(h + "group g 0-3 tp\n"), "trace.txt:3: column 13: expected kind=K, got 'tp'");
    try
    {
        NativeTraceParser::ParseString(h + "group g 0-3 kind=TP\n", "k.trace");
        ADD_FAILURE() << "kind=TP accepted";
    }
    catch (const WorkloadError& e)
    {
        EXPECT_EQ(e.GetFile(), "k.trace");
        EXPECT_EQ(e.GetLine(), 3u);
        EXPECT_EQ(e.GetField(), "kind");
    }
}

// An algorithm= the collectives layer does not know is refused at parse time.
TEST(WorkloadNative, UnknownAlgorithmRefused)
{
    EXPECT_EQ(
        ErrorOf(std::string(kHead) + "0-3 a allreduce group=all bytes=1KiB algorithm=fast\n"),
        "trace.txt:4: field 'algorithm': unknown algorithm 'fast'; expected auto, ring, tree, "
        "halvingdoubling, direct, hierarchical, nvls, nvlstree, collnetdirect, collnetchain, pat");
    const WorkloadTrace t = NativeTraceParser::ParseString(
        std::string(kHead) + "0-3 a allreduce group=all bytes=1KiB algorithm=HD\n",
        "hd.trace");
    EXPECT_EQ(t.ops[0][0].algorithm, CollectiveAlgorithm::HalvingDoubling);
}
