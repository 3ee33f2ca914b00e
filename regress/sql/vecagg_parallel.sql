-- Parallel VecAgg: Finalize Vec Aggregate over Gather over Partial Vec
-- Aggregate over Parallel Vec Seq Scan. Every query must give what a serial
-- PostgreSQL plan gives; par_same(q) (helpers.sql) runs q with vexec off and
-- no workers, then in force mode with parallel plans made cheap, and shows
-- the vexec nodes (VecAggPartial/VecAggFinalize: the parallel plan). Uses
-- vecagg's vexec_plan_lines.
\set SHOW_CONTEXT never
SET search_path = public;

CREATE TABLE vp (id int, k int, s smallint, b bigint, n numeric(12,2), f float8, d date, t text COLLATE "C",
                 u text, bo bool);
INSERT INTO vp SELECT g,
  CASE WHEN g % 101 = 0 THEN NULL ELSE g % 37 END,
  CASE WHEN g % 11 = 0 THEN NULL ELSE g % 3000 - 1500 END,
  CASE WHEN g % 13 = 0 THEN NULL WHEN g = 77 THEN 9223372036854775807 ELSE g::bigint * 1000003 END,
  CASE WHEN g % 7 = 0 THEN NULL ELSE (g % 100000) / 100.0 END,
  CASE WHEN g % 19 = 0 THEN NULL ELSE g % 1000 - 500 END,
  date '2000-01-01' + g % 5000,
  CASE WHEN g % 29 = 0 THEN NULL ELSE 'w' || (g % 997) END,
  'U' || (g % 89),
  CASE g % 3 WHEN 0 THEN NULL WHEN 1 THEN true ELSE false END
FROM generate_series(1, 60000) g;
ANALYZE vp;

-- The plan shape.
SET vexec.mode = force;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF, VERBOSE) SELECT k, count(*), sum(n * 2) FROM vp WHERE id > 10 GROUP BY k HAVING count(*) > 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*), sum(b) FROM vp;
-- count(DISTINCT) has no partial state: the serial VecAgg stays.
EXPLAIN (VEXEC, COSTS OFF) SELECT k, count(DISTINCT u) FROM vp GROUP BY k;
RESET ALL;
SET search_path = public;

-- Every combinable transition, grouped and plain, NULL keys and values.
SELECT par_same($$SELECT k, count(*), count(n), sum(s), sum(id), sum(b), avg(s), avg(b) FROM vp GROUP BY k$$);
SELECT par_same($$SELECT count(*), count(t), sum(s), sum(b), avg(id), min(id), max(b) FROM vp$$);
SELECT par_same($$SELECT k, sum(n), avg(n), sum(n * 3 - 1), min(n), max(n) FROM vp GROUP BY k$$);
SELECT par_same($$SELECT k, min(t), max(t), min(u), max(u COLLATE "en_US"), min(d), max(d) FROM vp GROUP BY k$$);
SELECT par_same($$SELECT k, sum(f), min(f), max(f), bool_and(bo), bool_or(bo), every(bo) FROM vp GROUP BY k$$);
SELECT par_same($$SELECT k, round(avg(f)::numeric, 6), round(var_samp(f)::numeric, 4), round(stddev_pop(f)::numeric, 6) FROM vp GROUP BY k$$);
-- FILTER, HAVING, expressions over aggregates and keys, text keys.
SELECT par_same($$SELECT u, count(*) FILTER (WHERE bo), sum(n) FILTER (WHERE s > 0), sum(id) + 1 FROM vp GROUP BY u HAVING count(*) > 600$$);
SELECT par_same($$SELECT k + 1, t, count(*) FROM vp WHERE id < 5000 GROUP BY k, t$$);
-- Empty input: no group for GROUP BY, one row for a plain aggregate.
SELECT par_same($$SELECT k, count(*) FROM vp WHERE id < 0 GROUP BY k$$);
SELECT par_same($$SELECT count(*), sum(n), min(t), avg(id) FROM vp WHERE id < 0$$);
-- Errors: int8 sum past its range widens to numeric; an error in an argument.
SELECT par_same($$SELECT sum(b), avg(b) FROM vp$$);
SELECT par_same($$SELECT k, sum(100 / (id % 5000)) FROM vp GROUP BY k$$);
-- A key under a nondeterministic collation ('W1' and 'w1' one group),
-- regrouped by the Finalize through its sort keys.
CREATE COLLATION vp_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT par_same($$SELECT upper(x), count(*), sum(id) FROM (SELECT (CASE WHEN id % 2 = 0 THEN upper(t) ELSE t END) COLLATE vp_ci AS x, id FROM vp) s GROUP BY x$$);
DROP COLLATION vp_ci;
-- Both halves spill at 64kB: many groups in each participant and in the finalize.
SET work_mem = '64kB';
SET vexec.mode = force;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT vecagg_spilled($$SELECT t, count(*), max(id), sum(n) FROM vp GROUP BY t$$) AS spilled;
SELECT line FROM vexec_plan_lines($$SELECT t, count(*), max(id), sum(n) FROM vp GROUP BY t$$) line
WHERE line LIKE '%Vec Aggregate%';
RESET ALL;
SET search_path = public;
SET work_mem = '64kB';
SELECT par_same($$SELECT t, count(*), max(id), sum(n) FROM vp GROUP BY t$$);
RESET work_mem;
-- array_agg of whole rows (anonymous records): its internal state would be
-- serialized with record_send and read back with record_recv, which cannot
-- read an anonymous record; PostgreSQL aggregates it without partial
-- states, and so does vexec (it used to fail in force mode).
SELECT par_same($$SELECT array_dims(array_agg(s)) FROM (SELECT id, k FROM vp) s$$);
DROP TABLE vp;
