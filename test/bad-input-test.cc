/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Bad input, tried systematically: every case runs a real scenario program as a
 * subprocess on a results database that already holds a complete run, and checks a clean exit
 * with status 1, a message naming the place (file:line and field, or the flag), and a database
 * that holds nothing of the refused run but its `failed` run row, the earlier run intact.
 * One table of cases and the one check they share: its length is the number of cases.
 */
#include "scratch-dir.h"

#include "ns3/results-database.h"
#include "ns3/scenario-run.h"
#include "ns3/workload-trace.h"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <limits.h>
#include <sqlite3.h>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

const char* const kRowTables[] = {"nodes", "links", "link_samples", "flows", "collectives", "ops"};

struct BadInput
{
    std::string name;    ///< test name suffix
    std::string program; ///< scenario binary
    std::string args;    ///< space-separated; {file} is the input file written for the case
    std::string content; ///< input file text (written to {file}) unless sample is set
    std::string sample;  ///< file under sampleDir to derive the input from
    std::function<std::string(const std::string&)> derive; ///< sample text -> bad input
    std::vector<std::string> expect;                       ///< each must appear in stderr
    std::string field; ///< expected error_field of the failed row ("": any)
    /// The public samples kept beside the checkout, or the fixtures of test/data/workloads.
    std::string sampleDir = AI_FABRIC_SOURCE_DIR "/../shared/samples/workloads/";
};

// GoogleTest prints a parameter it cannot format as a byte dump; the program and
// arguments are what a reader of a failure needs.
void
PrintTo(const BadInput& c, std::ostream* os)
{
    *os << c.program << " " << c.args;
}

std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string
Dir(const std::string& path)
{
    return path.substr(0, path.rfind('/'));
}

// Scenario programs live next to the test executable (build/bin) in the standalone build.
std::string
ProgramDir()
{
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return n > 0 ? Dir(std::string(buf, n)) : ".";
}

// First column of the first row as text ("" for no row).
std::string
Query(sqlite3* db, const std::string& sql)
{
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    {
        ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
        return "";
    }
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW)
    {
        const unsigned char* t = sqlite3_column_text(stmt, 0);
        out = t ? reinterpret_cast<const char*>(t) : "NULL";
    }
    sqlite3_finalize(stmt);
    return out;
}

// Runs \p program with \p args (no shell), stdout and stderr to files; a hang is killed
// after 120 s (SIGALRM), which the caller sees as a signal, not an exit status.
pid_t
StartProgram(const std::string& program,
             const std::vector<std::string>& args,
             const std::string& errPath)
{
    const pid_t pid = fork();
    if (pid == 0)
    {
        const int out = open("/dev/null", O_WRONLY);
        const int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out, 1);
        dup2(err, 2);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(program.c_str()));
        for (const auto& a : args)
        {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        alarm(120);
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

int
RunProgram(const std::string& program,
           const std::vector<std::string>& args,
           const std::string& errPath)
{
    const pid_t pid = StartProgram(program, args, errPath);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

// The earlier run: complete, one row in every table.
void
WriteEarlierRun(const std::string& path)
{
    Ptr<ResultsDatabase> db = CreateObject<ResultsDatabase>();
    db->Open(path);
    db->BeginRun("earlier", "test", 1, "{}");
    db->AddNode({0, "gpu0", "gpu", 0, 0});
    db->AddLink({0, "nvlink", 0, 1, 100, 10, 1, 5, 0, 10, 0});
    db->AddLinkSample(0, 10, 10);
    db->AddFlow({0, "nvlink", 0, 1, 0, 1, 10, 1, 0, 5, -1, -1, -1});
    db->AddCollective({0, "allreduce", "ring", "tp0", 2, 10, 0, 5});
    db->AddOp({0, 0, "a", "compute", 0, 5});
    db->EndRun("complete", NanoSeconds(5));
    db->Close();
}

void
ExpectEarlierRunIntact(sqlite3* db)
{
    EXPECT_EQ(Query(db, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(Query(db, "SELECT status FROM runs WHERE run_id=1"), "complete");
    for (const char* table : kRowTables)
    {
        EXPECT_EQ(Query(db, std::string("SELECT count(*) FROM ") + table + " WHERE run_id=1"), "1")
            << table;
    }
}

class BadInputTest : public ::testing::TestWithParam<BadInput>
{
  protected:
    void SetUp() override
    {
        m_dir = m_scratch.Path();
        m_db = m_dir + "/runs.db";
        WriteEarlierRun(m_db);
    }

    const test_util::ScratchDir m_scratch{"bad-input"};
    std::string m_dir;
    std::string m_db;
};

TEST_P(BadInputTest, FailsCleanlyWithOnlyAFailedRunRow)
{
    const BadInput& c = GetParam();
    const std::string program = ProgramDir() + "/" + c.program;
    if (access(program.c_str(), X_OK) != 0)
    {
        // The standalone build puts the scenarios beside ai-fabric-test; ns-3's test runner
        // (in-tree) does not, and runs this case in the standalone CI stage instead.
        ASSERT_NE(ProgramDir().substr(ProgramDir().size() - 4), "/bin") << program << " missing";
        GTEST_SKIP() << program << " is not beside the test executable";
    }
    std::string input = c.content;
    std::string file = m_dir + "/" + c.name + ".txt";
    if (!c.sample.empty())
    {
        const std::string path = c.sampleDir + c.sample;
        if (access(path.c_str(), R_OK) != 0)
        {
            GTEST_SKIP() << "sample " << path << " absent";
        }
        input = c.derive(ReadFile(path));
        file = m_dir + "/" + c.sample;
    }
    {
        std::ofstream f(file, std::ios::binary);
        f << input;
    }
    std::vector<std::string> args;
    std::istringstream words(c.args);
    for (std::string w; words >> w;)
    {
        const auto at = w.find("{file}");
        if (at != std::string::npos)
        {
            w.replace(at, 6, file);
        }
        args.push_back(w);
    }
    args.push_back("--db=" + m_db);

    const std::string errPath = m_dir + "/stderr.txt";
    const int status = RunProgram(program, args, errPath);
    const std::string err = ReadFile(errPath);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << err;
    EXPECT_EQ(WEXITSTATUS(status), 1) << err;
    for (const auto& e : c.expect)
    {
        EXPECT_NE(err.find(e), std::string::npos) << "'" << e << "' not in: " << err;
    }
    std::cout << "  " << c.program << ": " << err.substr(0, err.find('\n')) << "\n";

    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(m_db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    ExpectEarlierRunIntact(db);
    EXPECT_EQ(Query(db, "SELECT count(*) FROM runs"), "2");
    EXPECT_EQ(Query(db, "SELECT status FROM runs WHERE run_id=2"), "failed");
    EXPECT_EQ(Query(db, "SELECT scenario FROM runs WHERE run_id=2"), c.program);
    const std::string error =
        Query(db, "SELECT json_extract(params, '$.error') FROM runs WHERE run_id=2");
    EXPECT_NE(err.find(error), std::string::npos) << "row error '" << error << "'";
    if (!c.field.empty())
    {
        EXPECT_EQ(
            Query(db, "SELECT json_extract(params, '$.error_field') FROM runs WHERE run_id=2"),
            c.field);
    }
    for (const char* table : kRowTables)
    {
        EXPECT_EQ(Query(db, std::string("SELECT count(*) FROM ") + table + " WHERE run_id=2"), "0")
            << table;
    }
    sqlite3_close_v2(db);
}

// An input error found after the run began (rows already flushed and buffered) still leaves
// only the failed run row, with the error in its params; the earlier run keeps its rows.
TEST(ScenarioRunTest, InputErrorAfterBeginRunRemovesTheRunsRows)
{
    const test_util::ScratchDir scratch("scenario-run");
    const std::string& dir = scratch.Path();
    const std::string path = dir + "/runs.db";
    WriteEarlierRun(path);
    std::ostringstream err;
    int status = 0;
    {
        ScenarioRun run("unit", err);
        run.SetDatabase(path);
        status = run.Main([&]() {
            RunParameters params;
            params.Set("x", 1);
            run.SetRun("late-error", 3, params);
            run.BeginRun();
            Ptr<ResultsDatabase> db = run.GetDatabase();
            db->AddNode({0, "gpu0", "gpu", 0, 0});
            db->Flush();                             // on disk
            db->AddOp({0, 0, "a", "compute", 0, 5}); // still buffered
            throw WorkloadError("job.trace", 7, "bytes", "expected a size");
            return 0;
        });
    }
    EXPECT_EQ(status, 1);
    EXPECT_EQ(err.str(), "unit: job.trace:7: field 'bytes': expected a size\n");
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    ExpectEarlierRunIntact(db);
    EXPECT_EQ(Query(db, "SELECT status || ' ' || seed FROM runs WHERE run_id=2"), "failed 3");
    EXPECT_EQ(Query(db,
                    "SELECT json_extract(params, '$.x') || ' ' || json_extract(params, "
                    "'$.error_file') || ':' || json_extract(params, '$.error_line') || ' ' || "
                    "json_extract(params, '$.error_field') FROM runs WHERE run_id=2"),
              "1 job.trace:7 bytes");
    for (const char* table : kRowTables)
    {
        EXPECT_EQ(Query(db, std::string("SELECT count(*) FROM ") + table + " WHERE run_id=2"), "0")
            << table;
    }
    sqlite3_close_v2(db);
}

// kill -9 of a scenario mid-run (database under faults): the file stays sound, the
// earlier run is intact and the killed run is left `running`, never `complete`.
TEST(ScenarioFaults, KillNineMidRunLeavesSoundDatabase)
{
    const std::string program = ProgramDir() + "/cluster-replay";
    if (access(program.c_str(), X_OK) != 0)
    {
        ASSERT_NE(ProgramDir().substr(ProgramDir().size() - 4), "/bin") << program << " missing";
        GTEST_SKIP() << program << " is not beside the test executable";
    }
    const test_util::ScratchDir scratch("kill");
    const std::string& dir = scratch.Path();
    const std::string path = dir + "/runs.db";
    WriteEarlierRun(path);
    {
        // Far more replay than the test waits for: it is killed long before the end.
        std::ofstream f(dir + "/long.trace");
        f << "fabric-trace 1\nranks 8\ngroup all 0-7\nrepeat 20000 {\n0-7 c compute time=1us\n"
             "0-7 a allreduce group=all bytes=64MiB\n}\n";
    }
    const pid_t pid = StartProgram(
        program,
        {"--servers=1", "--trace=" + dir + "/long.trace", "--db=" + path, "--label=killed"},
        dir + "/stderr.txt");
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    // Kill 200 ms after the run row appears (the replay is then simulating and writing).
    bool running = false;
    for (int i = 0; i < 6000 && !running; ++i)
    {
        usleep(10000);
        running = Query(db, "SELECT status FROM runs WHERE label='killed'") == "running";
    }
    ASSERT_TRUE(running) << ReadFile(dir + "/stderr.txt");
    usleep(200000);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    ExpectEarlierRunIntact(db);
    EXPECT_EQ(Query(db, "SELECT status FROM runs WHERE label='killed'"), "running");
    EXPECT_EQ(Query(db, "SELECT count(*) FROM runs"), "2");
    sqlite3_close_v2(db);
}

// Two sweeps of cluster-replay writing to one database at the same time: every run
// complete with the same rows as the others, nothing lost, the earlier run intact.
TEST(ScenarioFaults, TwoConcurrentSweepsLoseNoRow)
{
    const std::string program = ProgramDir() + "/cluster-replay";
    if (access(program.c_str(), X_OK) != 0)
    {
        ASSERT_NE(ProgramDir().substr(ProgramDir().size() - 4), "/bin") << program << " missing";
        GTEST_SKIP() << program << " is not beside the test executable";
    }
    const test_util::ScratchDir scratch("sweeps");
    const std::string& dir = scratch.Path();
    const std::string path = dir + "/runs.db";
    WriteEarlierRun(path);
    {
        std::ofstream f(dir + "/small.trace");
        f << "fabric-trace 1\nranks 2\ngroup all 0-1\nrepeat 4 {\n0-1 c compute time=1us\n"
             "0-1 a allreduce group=all bytes=1MiB\n0 p send to=1 bytes=64KiB\n"
             "1 p recv from=0 bytes=64KiB\n}\n";
    }
    const int runsPerSweep = 4;
    pid_t sweeps[2];
    for (int s = 0; s < 2; ++s)
    {
        sweeps[s] = fork();
        ASSERT_GE(sweeps[s], 0);
        if (sweeps[s] == 0)
        {
            int failures = 0;
            for (int i = 0; i < runsPerSweep; ++i)
            {
                const int status =
                    RunProgram(program,
                               {"--servers=1",
                                "--gpusPerServer=2",
                                "--trace=" + dir + "/small.trace",
                                "--db=" + path,
                                "--label=sweep" + std::to_string(s) + "-" + std::to_string(i)},
                               dir + "/stderr" + std::to_string(s) + ".txt");
                failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            }
            _exit(failures);
        }
    }
    for (pid_t pid : sweeps)
    {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << ReadFile(dir + "/stderr0.txt") << ReadFile(dir + "/stderr1.txt");
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    ExpectEarlierRunIntact(db);
    EXPECT_EQ(
        Query(db, "SELECT count(*) FROM runs WHERE label LIKE 'sweep%' AND status='complete'"),
        std::to_string(2 * runsPerSweep));
    for (const char* table : {"nodes", "links", "flows", "collectives", "ops"})
    {
        // Every run has rows, and the same number as every other run of the same job.
        const std::string perRun =
            std::string("SELECT count(*) AS n FROM ") + table +
            " t JOIN runs r USING(run_id) WHERE r.label LIKE 'sweep%' GROUP BY "
            "run_id";
        EXPECT_EQ(Query(db, "SELECT count(DISTINCT n) FROM (" + perRun + ")"), "1") << table;
        EXPECT_EQ(Query(db, "SELECT count(*) FROM (" + perRun + ")"),
                  std::to_string(2 * runsPerSweep))
            << table;
        EXPECT_NE(Query(db, "SELECT min(n) FROM (" + perRun + ")"), "0") << table;
    }
    sqlite3_close_v2(db);
}

const std::string kHead = "fabric-trace 1\nranks 4\ngroup all 0-3\ngroup pair 0,1\n";
const std::string kReplay = "--servers=1 --trace={file}";

// A native trace case: the header above plus \p body; the message must name line and field.
BadInput
Native(const std::string& name,
       const std::string& body,
       uint32_t line,
       const std::string& field,
       const std::string& detail = "")
{
    BadInput c{name, "cluster-replay", kReplay, kHead + body, "", nullptr, {}, field};
    c.expect.push_back(name + ".txt:" + std::to_string(line) + ":");
    if (!field.empty())
    {
        c.expect.push_back("field '" + field + "'");
    }
    if (!detail.empty())
    {
        c.expect.push_back(detail);
    }
    return c;
}

// A whole-file case (native without the header, GOAL, SimAI written inline).
BadInput
File(const std::string& name,
     const std::string& format,
     const std::string& content,
     const std::string& where,
     const std::string& field)
{
    BadInput c{name,
               "cluster-replay",
               kReplay + " --format=" + format,
               content,
               "",
               nullptr,
               {name + ".txt:" + where},
               field};
    if (!field.empty())
    {
        c.expect.push_back("field '" + field + "'");
    }
    return c;
}

// A public SimAI / ASTRA-sim sample made invalid by \p derive.
BadInput
Sample(const std::string& name,
       const std::string& sample,
       std::function<std::string(const std::string&)> derive,
       const std::string& where,
       const std::string& field)
{
    BadInput c{name,
               "cluster-replay",
               kReplay + " --format=simai",
               "",
               sample,
               std::move(derive),
               {sample + ":" + where},
               field};
    if (!field.empty())
    {
        c.expect.push_back("field '" + field + "'");
    }
    return c;
}

// A fixture of test/data/workloads made invalid by \p derive: runs on a fresh clone.
BadInput
Fixture(const std::string& name,
        const std::string& fixture,
        std::function<std::string(const std::string&)> derive,
        const std::string& where,
        const std::string& field)
{
    BadInput c = Sample(name, fixture, std::move(derive), where, field);
    c.sampleDir = AI_FABRIC_SOURCE_DIR "/test/data/workloads/";
    return c;
}

// A refused flag: the message names it.
BadInput
Flag(const std::string& name,
     const std::string& program,
     const std::string& args,
     const std::string& flag,
     const std::string& field = "")
{
    return {name, program, args, kHead, "", nullptr, {flag}, field};
}

// Lines of \p text; line n (1-based) replaced by \p with ("" drops it).
std::string
ReplaceLine(const std::string& text, uint32_t n, const std::string& with)
{
    std::istringstream in(text);
    std::ostringstream out;
    uint32_t i = 0;
    for (std::string l; std::getline(in, l);)
    {
        if (++i == n)
        {
            if (!with.empty())
            {
                out << with << "\n";
            }
            continue;
        }
        out << l << "\n";
    }
    return out.str();
}

// Field \p col (0-based, tab or space separated) of line \p n replaced by \p value.
std::string
ReplaceField(const std::string& text, uint32_t n, uint32_t col, const std::string& value)
{
    std::istringstream in(text);
    std::string line;
    for (uint32_t i = 0; i < n; ++i)
    {
        std::getline(in, line);
    }
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;)
    {
        w.push_back(x);
    }
    w.at(col) = value;
    std::string joined;
    for (const auto& x : w)
    {
        joined += (joined.empty() ? "" : "\t") + x;
    }
    return ReplaceLine(text, n, joined);
}

const std::string kGoalHead = "num_ranks 2\n";

std::vector<BadInput>
Cases()
{
    const std::string ar = "0-3 ar allreduce group=all bytes=1MiB\n";
    std::vector<BadInput> c = {
        // Native format: header and declarations.
        File("empty_file", "native", "", " empty trace", ""),
        File("wrong_magic", "native", "fabric-trace 2\nranks 2\n", "1:", ""),
        File("no_ranks_line", "native", "fabric-trace 1\ngroup g 0-1\n", "2:", ""),
        File("zero_ranks", "native", "fabric-trace 1\nranks 0\n", "2:", "ranks"),
        File("negative_ranks", "native", "fabric-trace 1\nranks -4\n", "2:", "ranks"),
        File("huge_ranks", "native", "fabric-trace 1\nranks 99999999999999999999\n", "2:", "ranks"),
        File(
            "binary_junk",
            "native",
            std::string("fabric-trace 1\nranks 2\n\x7f\x45\x4c\x46\x02\x01\x01\x00\xff\xfe\x00\x01",
                        36),
            "3:",
            ""),
        File("binary_header", "native", std::string("\x00\x01\x02\xff\xfe", 5), "1:", ""),
        Native("group_rank_out_of_range", "group big 0-7\n", 5, "ranks"),
        Native("group_duplicate", "group all 0-1\n", 5, "group"),
        Native("group_bad_list", "group g 0-\n", 5, "ranks"),
        // compute
        Native("compute_no_time", "0 c compute\n", 5, "time"),
        Native("compute_bad_unit", "0 c compute time=1.5xs\n", 5, "time"),
        Native("compute_negative_time", "0 c compute time=-1ms\n", 5, "time"),
        Native("compute_huge_time", "0 c compute time=99999999999999999999s\n", 5, "time"),
        // send / recv / sendrecv
        Native("send_no_to", "0 s send bytes=1MiB\n1 s recv from=0 bytes=1MiB\n", 5, "to"),
        Native("send_to_out_of_range", "0 s send to=9 bytes=1MiB\n", 5, "to"),
        Native("send_negative_bytes",
               "0 s send to=1 bytes=-5\n1 s recv from=0 bytes=5\n",
               5,
               "bytes"),
        Native("send_huge_bytes",
               "0 s send to=1 bytes=99999999999GiB\n1 s recv from=0 bytes=1\n",
               5,
               "bytes"),
        Native("recv_without_send", "1 r recv from=0 bytes=1MiB\n", 5, "from"),
        Native("send_recv_size_mismatch",
               "0 s send to=1 bytes=1MiB\n1 s recv from=0 bytes=2MiB\n",
               6,
               "bytes"),
        Native("sendrecv_no_from", "0 x sendrecv to=1 bytes=1KiB\n", 5, "from"),
        // collectives
        Native("allreduce_no_group", "0-3 ar allreduce bytes=1MiB\n", 5, "group"),
        Native("allreduce_unknown_group", "0-3 ar allreduce group=tp9 bytes=1MiB\n", 5, "group"),
        Native("allreduce_bad_bytes", "0-3 ar allreduce group=all bytes=64XB\n", 5, "bytes"),
        Native("allreduce_root_key", "0-3 ar allreduce group=all bytes=1MiB root=0\n", 5, "root"),
        Native("broadcast_root_outside_group",
               "0-3 b broadcast group=pair bytes=1MiB root=3\n",
               5,
               "root"),
        Native("allgather_member_missing", "0-2 ag allgather group=all bytes=1MiB\n", 5, "label"),
        Native("reducescatter_bytes_differ",
               "0-1 rs reducescatter group=all bytes=1MiB\n2-3 rs reducescatter group=all "
               "bytes=2MiB\n",
               6,
               "bytes"),
        Native("alltoall_no_overlap", "2-3 a2a alltoall group=pair bytes=1MiB\n", 5, "group"),
        Native("reduce_unknown_key", "0-1 r reduce group=pair bytes=1MiB foo=1\n", 5, "foo"),
        // op, label, ranks, streams
        Native("unknown_op", "0-3 x allscatter group=all bytes=1MiB\n", 5, "op"),
        Native("bad_label", "0 9abc compute time=1us\n", 5, "label"),
        Native("duplicate_label", "0 a compute time=1us\n0 a compute time=1us\n", 6, "label"),
        Native("op_ranks_out_of_range", "0-9 c compute time=1us\n", 5, "ranks"),
        Native("bad_stream", "0 c compute time=1us stream=abc\n", 5, "stream"),
        Native("not_key_value", "0 c compute time=1us junk\n", 5, ""),
        // dependencies
        Native("after_unknown_label", "0 c compute time=1us after=zz\n", 5, "after", "'zz'"),
        Native("after_cycle",
               "0 a compute time=1us after=b\n0 b compute time=1us after=a stream=1\n",
               5,
               "after",
               "cycle"),
        Native("cross_rank_deadlock",
               "0 x recv from=1 bytes=1KiB\n0 y send to=1 bytes=1KiB\n"
               "1 y recv from=0 bytes=1KiB\n1 x send to=0 bytes=1KiB\n",
               5,
               "",
               "cycle"),
        // blocks and truncation
        Native("repeat_unterminated", "repeat 2 {\n0 c compute time=1us\n", 5, "repeat"),
        Native("truncated_op", "0-3 ar allreduce group=", 5, "group"),
        Native("repeat_op_limit", "repeat 99999999 {\n" + ar + "}\n", 6, ""),
        Native("shift_negative", "repeat 2 {\nshift -5 {\n0 c compute time=1us\n}\n}\n", 6, ""),
        // The trace does not fit the cluster.
        {"more_ranks_than_gpus",
         "cluster-replay",
         "--servers=1 --gpusPerServer=2 --trace={file}",
         kHead + ar,
         "",
         nullptr,
         {"more_ranks_than_gpus.txt", "field 'ranks'", "needs 4 ranks"},
         "ranks"},
        // GOAL schedules.
        File("goal_no_num_ranks", "goal", "rank 0 {\nl1: calc 100\n}\n", "1:", ""),
        File("goal_send_out_of_range",
             "goal",
             kGoalHead + "rank 0 {\nl1: send 8b to 5 tag 0\n}\n",
             "3:",
             ""),
        File("goal_requires_unknown",
             "goal",
             kGoalHead + "rank 0 {\nl1: calc 100\nl1 requires l9\n}\n",
             "4:",
             ""),
        File("goal_recv_without_send",
             "goal",
             kGoalHead + "rank 0 {\nl1: recv 8b from 1 tag 0\n}\nrank 1 {\n}\n",
             "3:",
             ""),
        File("goal_unterminated", "goal", kGoalHead + "rank 0 {\nl1: calc 100\n", "", ""),
        File("goal_bad_size", "goal", kGoalHead + "rank 0 {\nl1: send 8q to 1\n}\n", "3:", ""),
        // SimAI / ASTRA-sim: inline and derived from the public samples.
        File("simai_garbage_header", "simai", "NOT_A_TYPE foo\n1\n", "1:", ""),
        File("simai_bad_count", "simai", "DATA\nmany\n", "2:", ""),
        Sample(
            "simai_rows_missing",
            "astrasim1_inputs_workload_Resnet50_DataParallel.txt",
            [](const std::string& t) { return ReplaceLine(t, 5, ""); },
            "",
            ""),
        Sample(
            "simai_unknown_collective",
            "astrasim1_inputs_workload_Transformer_HybridParallel.txt",
            [](const std::string& t) { return ReplaceField(t, 4, 3, "ALLSCATTER"); },
            "4:",
            ""),
        Sample(
            "simai_bad_compute",
            "aicb_workload_simAI_micro_test_all_reduce.txt",
            [](const std::string& t) { return ReplaceField(t, 3, 2, "12x"); },
            "3:",
            ""),
        Sample(
            "simai_negative_bytes",
            "aicb_workload_simAI_micro_test_all_reduce.txt",
            [](const std::string& t) { return ReplaceField(t, 3, 10, "-4096"); },
            "3:",
            ""),
        Sample(
            "simai_truncated_row",
            "SimAI_example_microAllReduce.txt",
            [](const std::string& t) { return t.substr(0, t.size() / 2); },
            "",
            ""),
        // The same, derived from the fixtures.
        Fixture(
            "simai_fixture_rows_missing",
            "astrasim-data.txt",
            [](const std::string& t) { return ReplaceLine(t, 4, ""); },
            "4:",
            "layers"),
        Fixture(
            "simai_fixture_unknown_collective",
            "astrasim-hybrid-transformer.txt",
            [](const std::string& t) { return ReplaceField(t, 3, 3, "ALLSCATTER"); },
            "3:",
            "fwd comm type"),
        Fixture(
            "simai_fixture_bad_compute",
            "aicb-micro.txt",
            [](const std::string& t) { return ReplaceField(t, 3, 2, "12x"); },
            "3:",
            "fwd compute"),
        Fixture(
            "simai_fixture_negative_bytes",
            "aicb-micro.txt",
            [](const std::string& t) { return ReplaceField(t, 3, 10, "-4096"); },
            "3:",
            "wg bytes"),
        Fixture(
            "simai_fixture_truncated_row",
            "aicb-megatron-tp2.txt",
            // half of the file ends in the first column of row 2 (line 4)
            [](const std::string& t) { return t.substr(0, t.size() / 2); },
            "4:",
            "reserved"),
        // Cluster flags: zero, negative, too large, unknown presets, invalid choices.
        Flag("flag_servers_zero", "cluster-replay", kReplay + " --servers=0", "servers", "servers"),
        Flag("flag_servers_negative",
             "cluster-replay",
             kReplay + " --servers=-3",
             "--servers=-3",
             "servers"),
        Flag("flag_servers_too_large",
             "cluster-replay",
             kReplay + " --servers=200000",
             "servers",
             "servers"),
        Flag("flag_gpus_zero",
             "cluster-replay",
             kReplay + " --gpusPerServer=0",
             "gpusPerServer",
             "gpusPerServer"),
        Flag("flag_gpus_too_large",
             "cluster-replay",
             kReplay + " --gpusPerServer=100000",
             "gpusPerServer",
             "gpusPerServer"),
        Flag("flag_unknown_preset",
             "cluster-replay",
             kReplay + " --preset=dgx-z900",
             "preset",
             "preset"),
        // --ibRate is the deprecated alias of --ibRate_gbit_per_s: refused under the new name.
        Flag("flag_ib_rate_zero",
             "cluster-replay",
             kReplay + " --ibRate=0",
             "ibRate_gbit_per_s",
             "ibRate_gbit_per_s"),
        Flag("flag_ib_rate_negative",
             "cluster-replay",
             kReplay + " --ibRate_gbit_per_s=-400",
             "ibRate_gbit_per_s",
             "ibRate_gbit_per_s"),
        Flag("flag_nvlink_gen_unknown",
             "cluster-replay",
             kReplay + " --nvlinkGen=9",
             "NVLink generation",
             "nvlinkGen"),
        Flag("flag_eth_fabric_unknown",
             "cluster-replay",
             kReplay + " --ethFabric=mesh",
             "fabric",
             "ethFabric"),
        Flag("flag_scale_out_unknown",
             "cluster-replay",
             kReplay + " --scaleOut=ethernet",
             "scaleOut",
             "scaleOut"),
        Flag("flag_ecmp_unknown", "cluster-replay", kReplay + " --ecmp=random", "ecmp", "ecmp"),
        Flag("flag_pfc_junk", "cluster-replay", kReplay + " --pfc=maybe", "pfc", "pfc"),
        Flag("flag_format_unknown",
             "cluster-replay",
             kReplay + " --format=xml",
             "format",
             "format"),
        Flag("flag_no_trace", "cluster-replay", "--servers=1", "--trace", "trace"),
        Flag("flag_trace_missing",
             "cluster-replay",
             "--servers=1 --trace=/nonexistent.trace",
             "/nonexistent.trace"),
        Flag("dp_scaling_servers_zero", "dp-scaling", "--servers=1,0", "servers", "servers"),
        Flag("dp_scaling_servers_junk", "dp-scaling", "--servers=two", "servers", "servers"),
        Flag("mapping_study_servers_zero", "mapping-study", "--servers=0", "servers", "servers"),
        Flag("describe_unknown_preset", "cluster-describe", "--preset=tpu-v5", "preset", "preset"),
        Flag("tp_pp_dp_pp_not_dividing", "tp-pp-dp", "--pp=3", "pp", "pp"),
        Flag("tp_pp_dp_servers_zero", "tp-pp-dp", "--servers=0", "servers", "servers"),
        Flag("plane_sizing_threshold", "plane-sizing", "--threshold=2", "threshold", "threshold"),
        Flag("plane_sizing_unknown_plane", "plane-sizing", "--planes=pcie9", "planes", "planes"),
        Flag("plane_sizing_factor_negative", "plane-sizing", "--factors=-1", "factors", "factors"),
        Flag("mpi_incast_pattern",
             "mpi-incast",
             "--servers=2 --pattern=ring",
             "pattern",
             "pattern"),
        Flag("mpi_incast_one_domain", "mpi-incast", "--servers=1", "servers", "servers"),
        Flag("mpi_incast_no_rails", "mpi-incast", "--servers=2 --rails=0", "rails", "rails"),
        Flag("moe_alltoall_ep", "moe-alltoall", "--ep=3", "ep", "ep"),
        Flag("moe_alltoall_layers_zero", "moe-alltoall", "--layers=0", "layers", "layers"),
        Flag("frontend_interference_iterations",
             "frontend-interference",
             "--iterations=1",
             "iterations",
             "iterations"),
        Flag("frontend_interference_scales",
             "frontend-interference",
             "--ethScales=0.5,x",
             "ethScales",
             "ethScales"),
        Flag("frontend_interference_servers_zero",
             "frontend-interference",
             "--servers=0",
             "servers",
             "servers"),
        Flag("collective_bench_ranks", "collective-bench", "--servers=1 --ranks=0-99", "--ranks"),
        Flag("collective_bench_sizes",
             "collective-bench",
             "--servers=1 --minBytes=2M --maxBytes=1M",
             "--maxBytes"),
        Flag("collective_bench_in_place",
             "collective-bench",
             "--servers=1 --inPlace=sideways",
             "--inPlace=sideways"),
    };
    return c;
}

INSTANTIATE_TEST_SUITE_P(Reliability,
                         BadInputTest,
                         ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BadInput>& info) {
                             return info.param.name;
                         });

} // namespace
