-- Per-plane traffic and utilisation of one run.
-- Use: which fabric plane (nvlink, infiniband, ethernet) carried how much, how
-- busy it was on average, and how close its busiest link came to line rate.
--   sqlite3 -header -column results.db < scenarios/queries/plane-traffic.sql
-- Run: the latest by default; for another, change the `sel` line to
--   WITH sel AS (SELECT 42 AS run_id)
-- Columns: links = link directions; tx_bytes total; mean_util = bytes sent /
-- (rate x sim_end) over all directions; busy_util = busy_ns / sim_end_ns;
-- peak_util = highest utilisation of any one direction over one sample
-- interval of link_samples (NULL without samples); credit_stall_ns, drops summed.
WITH sel AS (SELECT max(run_id) AS run_id FROM runs),
run AS (SELECT runs.run_id, nullif(sim_end_ns, 0) AS sim_end_ns FROM runs JOIN sel USING (run_id)),
steps AS (
  SELECT l.plane,
         (s.tx_bytes - lag(s.tx_bytes) OVER w) * 8.0
           / (l.rate_bit_per_s * (s.t_ns - lag(s.t_ns) OVER w) * 1e-9) AS util
  FROM link_samples s
  JOIN links l ON l.run_id = s.run_id AND l.link_id = s.link_id
  JOIN sel ON s.run_id = sel.run_id
  WINDOW w AS (PARTITION BY s.link_id ORDER BY s.t_ns)
),
peak AS (SELECT plane, max(util) AS peak_util FROM steps GROUP BY plane)
SELECT l.plane,
       count(*) AS links,
       sum(l.tx_bytes) AS tx_bytes,
       round(sum(l.tx_bytes) * 8.0 / sum(l.rate_bit_per_s * run.sim_end_ns * 1e-9), 4) AS mean_util,
       round(sum(l.busy_ns) * 1.0 / (count(*) * run.sim_end_ns), 4) AS busy_util,
       round(peak.peak_util, 4) AS peak_util,
       sum(l.credit_stall_ns) AS credit_stall_ns,
       sum(l.drops) AS drops
FROM links l
JOIN run ON l.run_id = run.run_id
LEFT JOIN peak ON peak.plane = l.plane
GROUP BY l.plane
ORDER BY tx_bytes DESC;
