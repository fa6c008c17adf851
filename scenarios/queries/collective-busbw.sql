-- Collective bus bandwidth by kind, algorithm and size, as nccl-tests prints it.
-- Use: compare algorithms and sizes; busbw near the bottleneck link's rate
-- means the collective uses the fabric fully (nccl-tests doc/PERFORMANCE.md).
--   sqlite3 -header -column results.db < scenarios/queries/collective-busbw.sql
-- Run: the latest by default; for another, change the `sel` line to
--   WITH sel AS (SELECT 42 AS run_id)
-- For a sweep (one run per size), use instead:
--   WITH sel AS (SELECT run_id FROM runs WHERE status = 'complete')
-- Columns: bytes per rank; time_ns mean duration; algbw/busbw in GB/s
-- (1e9 bytes/s), mean and minimum over the calls of that size.
WITH sel AS (SELECT max(run_id) AS run_id FROM runs)
SELECT c.kind,
       c.algorithm,
       c.num_ranks,
       c.bytes,
       count(*) AS calls,
       round(avg(c.end_ns - c.start_ns)) AS time_ns,
       round(avg(c.algbw_gbyte_per_s), 3) AS algbw_gbyte_per_s,
       round(avg(c.busbw_gbyte_per_s), 3) AS busbw_gbyte_per_s,
       round(min(c.busbw_gbyte_per_s), 3) AS min_busbw_gbyte_per_s
FROM collectives c JOIN sel ON c.run_id = sel.run_id
GROUP BY c.kind, c.algorithm, c.num_ranks, c.bytes
ORDER BY c.kind, c.algorithm, c.num_ranks, c.bytes;
