-- The 20 slowest flows of one run (completion time end_ns - start_ns).
-- Use: find the transfers that hold up a collective or an iteration, their
-- plane, endpoints and achieved rate; flows that never finished come first.
--   sqlite3 -header -column results.db < scenarios/queries/slowest-flows.sql
-- Run: the latest by default; for another, change the `sel` line to
--   WITH sel AS (SELECT 42 AS run_id)
-- Columns: fct_ns = completion time (NULL: not completed by the end of the
-- run); achieved_gbit_per_s = bytes x 8 / fct in Gb/s (bits, unlike busbw's GB/s).
WITH sel AS (SELECT max(run_id) AS run_id FROM runs)
SELECT f.flow_id,
       f.plane,
       f.src_node, f.dst_node, f.src_rank, f.dst_rank,
       f.bytes,
       f.start_ns,
       f.end_ns - f.start_ns AS fct_ns,
       round(f.bytes * 8.0 / nullif(f.end_ns - f.start_ns, 0), 3) AS achieved_gbit_per_s,
       f.op_id
FROM flows f JOIN sel ON f.run_id = sel.run_id
ORDER BY f.end_ns IS NOT NULL, fct_ns DESC
LIMIT 20;
