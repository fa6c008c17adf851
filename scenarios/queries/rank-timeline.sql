-- Per-rank timeline of the replay: every trace operation in start order.
-- Use: see what each rank did when, and how long it waited between operations
-- (gap_ns: idle time since the rank's previous operation ended).
--   sqlite3 -header -column results.db < scenarios/queries/rank-timeline.sql
-- Run: the latest by default; for another, change the `sel` line to
--   WITH sel AS (SELECT 42 AS run_id)
-- Add `WHERE rank = 0` before ORDER BY for one rank.
WITH sel AS (SELECT max(run_id) AS run_id FROM runs)
SELECT o.rank,
       o.op_id,
       o.kind,
       o.label,
       o.start_ns,
       o.end_ns,
       o.end_ns - o.start_ns AS duration_ns,
       o.start_ns - lag(o.end_ns) OVER (PARTITION BY o.rank ORDER BY o.start_ns, o.op_id) AS gap_ns
FROM ops o JOIN sel ON o.run_id = sel.run_id
ORDER BY o.rank, o.start_ns, o.op_id;
