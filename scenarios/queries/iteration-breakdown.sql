-- Iteration time breakdown per rank: compute vs exposed communication.
-- Use: how much of each rank's time communication adds on top of compute
-- (the part overlap did not hide) - the figure to shrink when tuning.
--   sqlite3 -header -column results.db < scenarios/queries/iteration-breakdown.sql
-- Run: the latest by default; for another, change the `sel` line to
--   WITH sel AS (SELECT 42 AS run_id)
-- Method: a rank's span (first start to last end) is cut at every op boundary;
-- each piece is compute if any op of kind 'compute' covers it, else exposed
-- communication if any other op covers it, else idle.  overlapped_comm_ns is
-- communication hidden under compute.  Ops of one rank may overlap (streams).
WITH sel AS (SELECT max(run_id) AS run_id FROM runs),
o AS (SELECT ops.* FROM ops JOIN sel ON ops.run_id = sel.run_id WHERE end_ns > start_ns),
bounds AS (SELECT rank, start_ns AS t FROM o UNION SELECT rank, end_ns FROM o),
seg AS (SELECT rank, t AS t0, lead(t) OVER (PARTITION BY rank ORDER BY t) AS t1 FROM bounds),
cls AS (
  SELECT s.rank,
         s.t1 - s.t0 AS dur,
         EXISTS (SELECT 1 FROM o WHERE o.rank = s.rank AND o.kind = 'compute'
                   AND o.start_ns <= s.t0 AND o.end_ns >= s.t1) AS comp,
         EXISTS (SELECT 1 FROM o WHERE o.rank = s.rank AND o.kind <> 'compute'
                   AND o.start_ns <= s.t0 AND o.end_ns >= s.t1) AS comm
  FROM seg s WHERE s.t1 IS NOT NULL
)
SELECT rank,
       sum(dur) AS span_ns,
       sum(dur * comp) AS compute_ns,
       sum(dur * (comm AND NOT comp)) AS exposed_comm_ns,
       sum(dur * (comm AND comp)) AS overlapped_comm_ns,
       sum(dur * (NOT comm AND NOT comp)) AS idle_ns,
       round(100.0 * sum(dur * (comm AND NOT comp)) / sum(dur), 2) AS exposed_comm_pct
FROM cls
GROUP BY rank
ORDER BY rank;
