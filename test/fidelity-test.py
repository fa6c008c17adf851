#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""scripts/fidelity against a made-up reference table (test/data/fidelity/): the simulate
line reaches collective-bench, the printed errors and summary are the arithmetic on the
database rows, outliers are left out, --max-bytes caps the run and --check judges the
targets. Runs collective-bench of AI_FABRIC_BUILD_DIR (default: build/)."""
import contextlib
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "fidelity")
BUILD = os.environ.get("AI_FABRIC_BUILD_DIR", os.path.join(ROOT, "build"))
REFERENCE = os.path.join(ROOT, "test", "data", "fidelity")
TABLE = "fake-allreduce-4gpu-ring"
# The published times of the made-up table (test/data/fidelity/fake-allreduce-4gpu-ring.csv).
PUBLISHED_TIME_US = {1024: 20.0, 2048: 100.0, 4096: 21.0, 8192: 22.0, 16384: 24.0, 32768: 26.0}
PUBLISHED_BUSBW = {1024: 0.08, 2048: 0.03, 4096: 0.29, 8192: 0.56, 16384: 1.02, 32768: 1.89}
# 2048 B at 100 us is > 1.5 x the median (23 us) of the rows up to 64 KiB: an outlier.
OUTLIER = 2048
CAP_BYTES = 16384
# Printed with one decimal: a printed error is within 0.05 of the exact one.
PRINT_TOLERANCE_PCT = 0.05


def load_script():
    loader = importlib.machinery.SourceFileLoader("fidelity", SCRIPT)
    spec = importlib.util.spec_from_loader("fidelity", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def run(args, env=None):
    return subprocess.run([sys.executable, SCRIPT, "--build", BUILD] + args,
                          capture_output=True, text=True, env=env)


@contextlib.contextmanager
def one_table(name, simulate, rows):
    """A reference folder holding one made-up table (its '# simulate:' line and the
    "size,time_us,," rows) and an output folder, both removed afterwards."""
    ref = tempfile.mkdtemp(prefix="fidelity-ref-")
    out = tempfile.mkdtemp(prefix="fidelity-out-")
    try:
        with open(os.path.join(ref, f"{name}.csv"), "w") as f:
            f.write("# source: made-up figures, for the test\n"
                    f"# simulate: {simulate}\n"
                    "size_bytes,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s\n")
            f.writelines(rows)
        yield ref, out
    finally:
        shutil.rmtree(ref, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


def printed_rows(stdout, table):
    """size -> the whitespace-split fields of the table's per-size lines."""
    rows, inside = {}, False
    for line in stdout.splitlines():
        if line.startswith("== "):
            inside = line.startswith(f"== {table}:")
        elif inside and re.match(r"^\s*\d+\s", line):
            fields = line.split()
            rows[int(fields[0])] = fields
    return rows


def summary_line(stdout, table):
    return next(l for l in stdout.splitlines() if l.startswith(f"summary {table}:"))


class FidelityScriptTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(os.path.join(BUILD, "bin", "collective-bench"), os.X_OK):
            raise unittest.SkipTest(f"no collective-bench in {BUILD}/bin (build first)")
        cls.out = tempfile.mkdtemp(prefix="fidelity-test-")
        cls.proc = run(["--reference", REFERENCE, "--out", cls.out,
                        "--max-bytes", f"{CAP_BYTES // 1024}K"])
        db = sqlite3.connect(os.path.join(cls.out, "fidelity.db"))
        columns = {r[1] for r in db.execute("PRAGMA table_info(collectives)")}
        cls.busbw = "busbw_gbps" if "busbw_gbps" in columns else "busbw_gbyte_per_s"
        # What nccl-tests prints is its timing loop's time per iteration (loop_time_ns); busbw
        # scales with it.
        cls.sim = {b: (loop / 1e3, bw * dt / loop, algo, n)
                   for b, dt, loop, bw, algo, n in db.execute(
                       f"SELECT bytes, end_ns - start_ns, loop_time_ns, {cls.busbw}, algorithm, "
                       "num_ranks FROM collectives")}
        cls.collective_us = {b: dt / 1e3 for b, dt in db.execute(
            "SELECT bytes, end_ns - start_ns FROM collectives")}
        db.close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def test_runs_the_table_system_capped(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        # --ranks=0-3 and --algorithm=ring of the '# simulate:' line reached the bench.
        self.assertEqual({(algo, n) for _, _, algo, n in self.sim.values()}, {("ring", 4)})
        # Every table size up to the cap was simulated, none above it.
        self.assertEqual(sorted(self.sim), [1024, 2048, 4096, 8192, 16384])
        self.assertTrue(os.path.getsize(os.path.join(self.out, f"fidelity-{TABLE}.png")) > 0)

    def test_times_the_loop_of_the_simulate_line(self):
        # gpusPerThread=4 iters=50 of the '# simulate:' line: one thread issuing four GPUs'
        # launches at NcclEndpoint's HostLaunchTime (5.3 us) binds the loop, 4 x 5.3 us plus
        # the collective's own time / 50 per iteration (NcclEndpoint::LoopIterationTime),
        # to 1 ns.
        for size, (loop_us, _, _, _) in self.sim.items():
            collective = self.collective_us[size]
            expected = max(collective + 4 * 5.3 / 50, 4 * 5.3 + collective / 50)
            self.assertAlmostEqual(loop_us, expected, delta=0.001)

    def test_printed_errors_are_the_database_arithmetic(self):
        rows = printed_rows(self.proc.stdout, TABLE)
        self.assertNotIn(32768, rows)  # above --max-bytes: not printed
        for size in (4096, 16384):
            t_sim, bw_sim, _, _ = self.sim[size]
            fields = rows[size]
            # size, published time, busbw, simulated time, busbw, time error, busbw error
            self.assertAlmostEqual(float(fields[1]), PUBLISHED_TIME_US[size], places=2)
            self.assertAlmostEqual(float(fields[3]), t_sim, delta=0.005)
            time_err = 100.0 * (t_sim - PUBLISHED_TIME_US[size]) / PUBLISHED_TIME_US[size]
            busbw_err = 100.0 * (bw_sim - PUBLISHED_BUSBW[size]) / PUBLISHED_BUSBW[size]
            self.assertAlmostEqual(float(fields[5]), time_err, delta=PRINT_TOLERANCE_PCT)
            self.assertAlmostEqual(float(fields[6]), busbw_err, delta=PRINT_TOLERANCE_PCT)
        self.assertEqual(rows[OUTLIER][-1], "outlier")
        self.assertNotEqual(rows[4096][-1], "outlier")

    def test_summary_leaves_the_outlier_out(self):
        line = summary_line(self.proc.stdout, TABLE)
        # all simulated sizes are < 1 MiB: the time statistics, without the outlier
        errs = [abs(100.0 * (self.sim[s][0] - t) / t) for s, t in PUBLISHED_TIME_US.items()
                if s in self.sim and s != OUTLIER]
        m = re.search(r"\|time error\| < 1 MiB: median ([\d.]+) % worst ([\d.]+) % \((\d+) sizes\)",
                      line)
        self.assertIsNotNone(m, line)
        self.assertAlmostEqual(float(m.group(1)), statistics.median(errs),
                               delta=PRINT_TOLERANCE_PCT)
        self.assertAlmostEqual(float(m.group(2)), max(errs), delta=PRINT_TOLERANCE_PCT)
        self.assertEqual(int(m.group(3)), len(errs))
        self.assertIn("1 outlier(s) left out", line)
        self.assertIn("1 size(s) not simulated", line)
        self.assertIn("|busbw error| >= 1 MiB: no sizes", line)

    def check_status(self, time_scale):
        """--check on a table whose published times are the simulated ones x time_scale."""
        with one_table("scaled", "preset=dgx-h100 servers=1 ranks=0-3 collective=allreduce "
                       "algorithm=ring gpusPerThread=4 iters=50",
                       [f"{size},{self.sim[size][0] * time_scale:.4f},,\n"
                        for size in (1024, 4096)]) as (ref, out):
            proc = run(["--reference", ref, "--out", out, "--check"])
            return proc.returncode, summary_line(proc.stdout, "scaled")

    def test_check_judges_the_time_target(self):
        # published 1.25 x simulated: error -20 %, inside the 30 % time target
        status, line = self.check_status(1.25)
        self.assertEqual(status, 0, line)
        self.assertIn("time < 64 KiB within 30 %: met", line)
        # published 0.5 x simulated: error +100 %
        status, line = self.check_status(0.5)
        self.assertEqual(status, 1, line)
        self.assertIn("time < 64 KiB within 30 %: missed (worst 100.0 %)", line)

    def test_tuner_tables_are_compared_entry_by_entry(self):
        # A made-up tuner reference: two entries as the model's tuner gives them on 4 GPUs of
        # a dgx-h100 (NCCL 2.29.2 printed these), one not; --tables picks it alone.
        ref = tempfile.mkdtemp(prefix="fidelity-ref-")
        out = tempfile.mkdtemp(prefix="fidelity-out-")
        try:
            os.makedirs(os.path.join(ref, "tuner"))
            path = os.path.join(ref, "tuner", "made-up.csv")
            with open(path, "w") as f:
                f.write("# source: made-up figures, for the test\n"
                        "# simulate: preset=dgx-h100 servers=1 ranks=0-3\n"
                        "function,algorithm,protocol,latency_us,bandwidth_gbyte_per_s\n"
                        "AllGather,Ring,Simple,18.6,480.0\n"
                        "AllReduce,NVLS,Simple,25.0,160.0\n"
                        "AllReduce,Ring,LL,10.2,99.0\n")
            proc = run(["--reference", ref, "--out", out, "--tables", "tuner-*"])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            lines = {tuple(l.split()[:3]): l for l in proc.stdout.splitlines()
                     if l.startswith("   ")}
            self.assertNotIn("differs", lines[("AllGather", "Ring", "Simple")])
            self.assertNotIn("differs", lines[("AllReduce", "NVLS", "Simple")])
            self.assertTrue(lines[("AllReduce", "Ring", "LL")].endswith("differs"))
            self.assertIn("94.0", lines[("AllReduce", "Ring", "LL")])  # the model's bandwidth
            self.assertIn("2 of 3 entries", summary_line(proc.stdout, "tuner-made-up"))
            # A row without a number: refused, naming the file and the row.
            with open(path, "a") as f:
                f.write("AllReduce,Tree,LL,ten,43.6\n")
            proc = run(["--reference", ref, "--out", out, "--tables", "tuner-*"])
            self.assertEqual(proc.returncode, 2)
            self.assertRegex(proc.stderr, r"made-up\.csv: data row 4")
        finally:
            shutil.rmtree(ref, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)

    def test_simulate_keys_are_collective_bench_flags(self):
        # ncclVersion passes to collective-bench as --ncclVersion; a key it has no flag for
        # is refused naming the file.
        fidelity = load_script()
        ref = tempfile.mkdtemp(prefix="fidelity-ref-")
        try:
            def table(simulate):
                path = os.path.join(ref, "t.csv")
                with open(path, "w") as f:
                    f.write(f"# simulate: {simulate}\n"
                            "size_bytes,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s\n"
                            "1024,20.0,,\n")
                return fidelity.Table(path)
            t = table("preset=dgx-h100 servers=2 collective=allreduce ncclVersion=2.26.2")
            self.assertEqual(t.simulate["ncclVersion"], "2.26.2")
            with self.assertRaisesRegex(ValueError, "t.csv.*'nccl=2.26.2'"):
                table("preset=dgx-h100 servers=2 collective=allreduce nccl=2.26.2")
        finally:
            shutil.rmtree(ref, ignore_errors=True)

    def test_nccl_items_are_the_benchs_environment(self):
        # An NCCL_* item of the '# simulate:' line reaches collective-bench as its environment
        # variable (recorded in the run's params); one of the caller's environment does not.
        with one_table("env", "preset=dgx-h100 servers=1 ranks=0-3 collective=allreduce "
                       "NCCL_MIN_CTAS=24", ["1024,20.0,,\n"]) as (ref, out):
            proc = run(["--reference", ref, "--out", out],
                       env=dict(os.environ, NCCL_MAX_NCHANNELS="2"))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("NCCL_MIN_CTAS=24 collective-bench", proc.stdout)
            db = sqlite3.connect(os.path.join(out, "fidelity.db"))
            params = [json.loads(p) for (p,) in db.execute("SELECT params FROM runs")]
            db.close()
            self.assertEqual(len(params), 1)
            self.assertEqual(params[0].get("cluster.NCCL_MIN_CTAS"), "24")
            self.assertNotIn("cluster.NCCL_MAX_NCHANNELS", params[0])

    def test_runs_the_out_of_place_pass_only(self):
        # The published columns are out-of-place: the sweep does not run the in-place pass.
        db = sqlite3.connect(os.path.join(self.out, "fidelity.db"))
        passes = dict(db.execute("SELECT in_place, count(*) FROM collectives GROUP BY in_place"))
        db.close()
        self.assertEqual(passes, {0: len(self.sim)})

    def test_ignores_in_place_rows(self):
        # A database written with both passes: an in-place row of another duration per size
        # changes no simulated figure.
        fidelity = load_script()
        db = os.path.join(self.out, "both-passes.db")
        shutil.copy(os.path.join(self.out, "fidelity.db"), db)
        con = sqlite3.connect(db)
        con.execute("""INSERT INTO collectives SELECT run_id, coll_id + 100, kind, algorithm,
                       group_name, num_ranks, bytes, start_ns, end_ns + 1000,
                       algbw_gbyte_per_s / 2, busbw_gbyte_per_s / 2, 1, loop_time_ns + 1000
                       FROM collectives""")
        con.commit()
        con.close()
        rows = fidelity.simulated_rows(db, "fidelity-0")
        self.assertEqual({b: (t, bw) for b, (t, bw, _) in rows.items()},
                         {b: (t, bw) for b, (t, bw, _, _) in self.sim.items()})

    def test_reads_both_busbw_column_names(self):
        fidelity = load_script()
        db = os.path.join(self.out, "renamed.db")
        shutil.copy(os.path.join(self.out, "fidelity.db"), db)
        con = sqlite3.connect(db)
        other = "busbw_gbyte_per_s" if self.busbw == "busbw_gbps" else "busbw_gbps"
        con.execute(f"ALTER TABLE collectives RENAME COLUMN {self.busbw} TO {other}")
        con.commit()
        con.close()
        label = "fidelity-0"
        rows = fidelity.simulated_rows(db, label)
        self.assertEqual({b: (t, bw) for b, (t, bw, _) in rows.items()},
                         {b: (t, bw) for b, (t, bw, _, _) in self.sim.items()})

    def test_rounded_sizes_match_the_doubling_sweep(self):
        # nccl-tests rounds each size down to whole elements per rank: a sweep over many ranks
        # leaves the doubling by a few hundred bytes.  Such a row is the sweep's size within
        # SIZE_TOLERANCE (1e-4); a size further off is not simulated.
        fidelity = load_script()
        self.assertEqual(fidelity.SIZE_TOLERANCE, 1e-4)
        sim = {1048576: (10.0, 1.0, "ring"), 4194304: (30.0, 2.0, "ring")}
        self.assertEqual(fidelity.simulated_at(sim, 1048576), (10.0, 1.0, "ring"))
        # 4194304 - 192: 4.6e-5 of it.
        self.assertEqual(fidelity.simulated_at(sim, 4194304 - 192), (30.0, 2.0, "ring"))
        # 1048576 - 1024: 9.8e-4 of it.
        self.assertEqual(fidelity.simulated_at(sim, 1048576 - 1024), (None, None, None))
        self.assertEqual(fidelity.simulated_at({}, 1048576), (None, None, None))

    def test_host_cpu_is_a_simulate_key(self):
        # hostCpu=amd of a '# simulate:' line reaches collective-bench as --hostCpu (recorded
        # in the run's params).
        with one_table("cpu", "preset=dgx-h100 servers=1 ranks=0-3 collective=allreduce "
                       "hostCpu=amd", ["1024,20.0,,\n"]) as (ref, out):
            proc = run(["--reference", ref, "--out", out])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("--hostCpu=amd", proc.stdout)
            db = sqlite3.connect(os.path.join(out, "fidelity.db"))
            params = [json.loads(p) for (p,) in db.execute("SELECT params FROM runs")]
            db.close()
            self.assertEqual([p.get("cluster.hostCpu") for p in params], ["amd"])


if __name__ == "__main__":
    unittest.main()
