#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""scripts/export-trace on a real run: mapping-study (2 servers, link samples) of
AI_FABRIC_BUILD_DIR (default: build/) writes a database, the script exports run 1, and the
Chrome trace-event JSON is checked against the rows: one slice per ops row with its exact
times, processes per server, tracks whose slices never overlap, one flow arrow per message
between ranks bound inside slices at both ends, link utilisation counters equal to the
arithmetic on link_samples."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "export-trace")
BUILD = os.environ.get("AI_FABRIC_BUILD_DIR", os.path.join(ROOT, "build"))
STUDY = [os.path.join(BUILD, "bin", "mapping-study"), "--servers=2", "--layers=2",
         "--hidden=1024", "--seq=256", "--microBatch=1", "--iterations=1",
         "--linkSamples=true", "--sampleInterval=20us"]
# Timestamps are written as ns / 1000 in doubles: reading them back x 1000 and rounding
# gives the ns exactly (times here are far below 2^53 ns).
UTILISATION_REL_TOLERANCE = 1e-12  # the same formula in the same double arithmetic


class ExportTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.db = os.path.join(cls.tmp.name, "runs.db")
        subprocess.run(STUDY + ["--db=" + cls.db], check=True, capture_output=True)
        cls.out = os.path.join(cls.tmp.name, "run1.json")
        done = subprocess.run([sys.executable, SCRIPT, cls.db, "--run", "1", "--out", cls.out],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        cls.stderr = done.stderr
        with open(cls.out) as f:
            cls.trace = json.load(f)
        cls.events = cls.trace["traceEvents"]
        cls.sql = sqlite3.connect(cls.db)

    @classmethod
    def tearDownClass(cls):
        cls.sql.close()
        cls.tmp.cleanup()

    def of(self, ph):
        return [e for e in self.events if e["ph"] == ph]

    def test_structure(self):
        self.assertEqual(self.trace["displayTimeUnit"], "ns")
        self.assertEqual(self.trace["otherData"]["run_id"], 1)
        names = {e["pid"]: e["args"]["name"] for e in self.of("M") if e["name"] == "process_name"}
        servers = [s for (s,) in self.sql.execute(
            "SELECT DISTINCT server FROM nodes WHERE run_id = 1 AND rank IS NOT NULL")]
        self.assertEqual(sorted(servers), [0, 1])
        for s in servers:
            self.assertEqual(names[s + 1], f"server {s}")
        threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in self.of("M")
                   if e["name"] == "thread_name"}
        server_of = dict(self.sql.execute(
            "SELECT rank, server FROM nodes WHERE run_id = 1 AND rank IS NOT NULL"))
        for e in self.of("X"):
            rank = e["args"]["rank"]
            self.assertEqual(e["pid"], server_of[rank] + 1, "a rank's slices in its server")
            category = "compute" if e["cat"] == "compute" else "comm"
            self.assertTrue(threads[(e["pid"], e["tid"])].startswith(f"rank {rank} {category}"))

    def test_slices_are_the_ops_rows(self):
        rows = {op_id: (rank, label, kind, start, end) for rank, op_id, label, kind, start, end in
                self.sql.execute("SELECT rank, op_id, label, kind, start_ns, end_ns FROM ops "
                                 "WHERE run_id = 1")}
        slices = self.of("X")
        self.assertEqual(len(slices), len(rows))
        self.assertGreater(len(rows), 100)
        seen = set()
        for e in slices:
            op_id = e["args"]["op_id"]
            seen.add(op_id)
            rank, label, kind, start, end = rows[op_id]
            self.assertEqual((e["name"], e["cat"], e["args"]["rank"]), (label, kind, rank))
            self.assertEqual(round(e["ts"] * 1000), start)
            self.assertEqual(round((e["ts"] + e["dur"]) * 1000), end)
            self.assertEqual((e["args"]["start_ns"], e["args"]["end_ns"]), (start, end))
        self.assertEqual(seen, set(rows))

    def test_tracks_never_overlap(self):
        per_track = defaultdict(list)
        for e in self.of("X"):
            per_track[(e["pid"], e["tid"])].append((e["args"]["start_ns"], e["args"]["end_ns"]))
        for spans in per_track.values():
            spans.sort()
            for (_, end), (start, _) in zip(spans, spans[1:]):
                self.assertLessEqual(end, start)

    def test_flow_arrows(self):
        expected = self.sql.execute(
            "SELECT COUNT(*) FROM flows WHERE run_id = 1 AND src_rank IS NOT NULL AND "
            "dst_rank IS NOT NULL AND end_ns IS NOT NULL AND src_rank != dst_rank").fetchone()[0]
        self.assertGreater(expected, 0)
        starts = {e["id"]: e for e in self.of("s")}
        ends = {e["id"]: e for e in self.of("f")}
        self.assertEqual(len(starts), expected, self.stderr)
        self.assertEqual(set(starts), set(ends))
        spans = defaultdict(list)
        for e in self.of("X"):
            spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
        flows = {f: (s, d, t0, t1) for f, s, d, t0, t1 in self.sql.execute(
            "SELECT flow_id, src_rank, dst_rank, start_ns, end_ns FROM flows WHERE run_id = 1")}
        for fid, s in starts.items():
            f = ends[fid]
            self.assertEqual(f["bp"], "e")
            self.assertLessEqual(s["ts"], f["ts"])
            for e in (s, f):  # bound: inside a slice of its track
                self.assertTrue(any(a <= e["ts"] <= b for a, b in spans[(e["pid"], e["tid"])]))
            src, dst, t0, t1 = flows[fid]
            self.assertEqual(self.rank_of_track(s), src)
            self.assertEqual(self.rank_of_track(f), dst)

    def rank_of_track(self, e):
        return e["tid"] // 1000

    def test_counters_are_link_utilisation(self):
        samples = self.sql.execute(
            "SELECT s.link_id, s.t_ns, s.tx_bytes, l.rate_bit_per_s FROM link_samples s JOIN "
            "links l USING (run_id, link_id) WHERE run_id = 1 ORDER BY s.link_id, s.t_ns").fetchall()
        by_link = defaultdict(list)
        for link, t, tx, rate in samples:
            by_link[link].append((t, tx, rate))
        counters = defaultdict(list)
        for e in self.of("C"):
            link = int(e["name"].rsplit("(link ", 1)[1].rstrip(")"))
            counters[link].append((round(e["ts"] * 1000), e["args"]["utilisation"]))
        self.assertEqual(set(counters), {k for k, v in by_link.items() if len(v) > 1})
        busy = 0
        for link, rows in by_link.items():
            expected = [(t0, (tx1 - tx0) * 8 / (rate * (t1 - t0) * 1e-9))
                        for (t0, tx0, rate), (t1, tx1, _) in zip(rows, rows[1:])]
            got = counters.get(link, [])
            self.assertEqual([t for t, _ in got], [t for t, _ in expected])
            for (_, u), (_, v) in zip(got, expected):
                self.assertAlmostEqual(u, v, delta=abs(v) * UTILISATION_REL_TOLERANCE)
                self.assertGreaterEqual(u, 0.0)
                busy += u > 0
        self.assertGreater(busy, 0)

    def test_missing_run_is_refused(self):
        done = subprocess.run([sys.executable, SCRIPT, self.db, "--run", "99", "--out",
                               os.path.join(self.tmp.name, "x.json")],
                              capture_output=True, text=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("no run 99", done.stderr)


if __name__ == "__main__":
    unittest.main()
